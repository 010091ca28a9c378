/* SPDX-License-Identifier: MIT */
/*
** MadPipe's result checked by simulation (docs/PARTITION.md, "MadPipe",
** its confirmation).  A periodic result, MadPipe's or
** PipeDream + 1F1B*'s (part_madpipe.c), runs in the simulator: P
** identical devices on a flat network at the partition's bandwidth and
** latency, the stages on their processors with the schedule's in-flight
** counts (and MadPipe's pattern when it has one), many micro-batches.
** The measured period goes to the summary's sim_period_ms, the peak
** memory share and fit to sim_peak_share and sim_fits.
**
** Objective: what the schedule really achieves, not what the allocation
** promises: the steady-state period is the time between the last
** backwards of consecutive micro-batches in the middle of the run (away
** from the fill and the drain), and the peak memory is the simulator's.
** Invariant: the cluster, plan and simulation built here are freed on
** every path; only pt's summary changes.
** Complexity: one simulation of G = max(16 N, 96) micro-batches over N
** stages, O(G N) events, plus a scan of them.
** Source: docs/PARTITION.md, "MadPipe" (Confirmation).
*/
#include "part/partition.h"

#include <math.h>
#include <stdio.h>

pp_status ppi_part_verify(pp_ctx *ctx, struct pp_partition *pt,
                          const pp_model *m, const struct ppi_madpipe *r,
                          const pp_part_params *p, double mem_bytes)
{
  pp_cluster_builder *cb = NULL;
  pp_cluster *cl = NULL;
  pp_plan_builder *pb = NULL;
  pp_plan *plan = NULL;
  pp_sim *sim = NULL;
  pp_plan_params pp;
  pp_cost_params cp;
  pp_device_type_desc td;
  const char *ref = pp_model_reference_type(m);
  int32_t P = r->P, N = r->N, s, d;
  /* TUNING: the confirmation simulates 16 micro-batches per stage, at
  ** least 96, so that the middle half of the run is steady state past the
  ** fill and before the drain (25d7df7) */
  int64_t G = 16 * (int64_t)N > 96 ? 16 * (int64_t)N : 96, i, n;
  double *bend = NULL, *bw = NULL;
  pp_status rc;

  if ((rc = pp_cluster_builder_create(ctx, "madpipe", "flat network", &cb)))
    return rc;
  pp_device_type_desc_init(&td);
  td.name = ref ? ref : "gpu";
  td.speed = 1;
  if (p->flat_device >= 0 && p->cluster && /* that device's type */
      (rc = pp_cluster_type(p->cluster,
                            pp_cluster_device_type(p->cluster, p->flat_device),
                            &td)))
    goto done;
  td.memory_gib = isfinite(mem_bytes) ? mem_bytes / 1073741824.0 : 1e9;
  if ((rc = pp_cluster_builder_add_type(cb, &td)))
    goto done;
  for (d = 0; d < P; d++) {
    pp_device_desc dd;
    char name[32];
    pp_device_desc_init(&dd);
    snprintf(name, sizeof name, "p%d", (int)d);
    dd.name = name;
    dd.type = td.name;
    dd.node = d;
    if ((rc = pp_cluster_builder_add_device(cb, &dd, NULL)))
      goto done;
  }
  if (P > 1) {
    if (!(bw = ppi_calloc(ctx, (size_t)P * P, sizeof *bw))) {
      rc = PP_ENOMEM;
      goto done;
    }
    for (i = 0; i < (int64_t)P * P; i++)
      bw[i] = p->bandwidth_gbps;
    if ((rc = pp_cluster_builder_set_bandwidth(cb, bw, P)))
      goto done;
  }
  if (p->latency_us > 0 &&
      (rc = pp_cluster_builder_set_latency(cb, p->latency_us)))
    goto done;
  rc = pp_cluster_builder_finish(cb, &cl);
  cb = NULL;
  if (rc)
    goto done;
  pp_plan_params_init(&pp);
  pp.micro_batch = pt->micro_batch;
  pp.global_batch = G * pt->micro_batch;
  pp.schedule = PP_SCHED_1F1B_STAR;
  pp.optimizer = p->optimizer;
  pp.period_ms = r->period;
  if ((rc = pp_plan_builder_create(ctx, &pp, "madpipe schedule", &pb)))
    goto done;
  for (s = 0; s < N; s++) {
    int32_t id, k;
    const int32_t *ops = pp_partition_stage_ops(pt, s, &k);
    if ((rc = pp_plan_builder_add_stage(pb, ops, k, &id)) ||
        (rc = pp_plan_builder_add_replica(pb, id, &r->proc[s])) ||
        (rc = pp_plan_builder_set_in_flight(pb, id, r->inflight[s])) ||
        (r->sig && (rc = pp_plan_builder_set_pattern(pb, id, r->sig + 4 * s))))
      goto done;
  }
  rc = pp_plan_builder_finish(pb, &plan);
  pb = NULL;
  if (rc)
    goto done;
  pp_cost_params_init(&cp);
  cp.reserve_bytes = p->reserve_bytes;
  if ((rc = pp_simulate(ctx, plan, m, cl, &cp, &sim)))
    goto done;
  if (!(bend = ppi_calloc(ctx, (size_t)G, sizeof *bend))) {
    rc = PP_ENOMEM;
    goto done;
  }
  n = pp_sim_nevent(sim);
  {
    double ub0 = 0;
    for (i = 0; i < n; i++) {
      pp_sim_event e;
      pp_sim_event_get(sim, i, &e);
      if (e.kind == PP_TASK_BWD && e.stage == 0 && e.micro_batch >= 0 &&
          e.micro_batch < G) {
        bend[e.micro_batch] = e.end_ms;
        ub0 = e.end_ms - e.start_ms;
      }
    }
    if (r->sig) {
      /* With the pattern, the simulator runs every device's operations in
      ** its order as soon as they can: micro-batch j's last backward must
      ** end by its pattern time j T + sigma_B0 + u_B0 for the period to
      ** hold forever.  The measured period is the least T' for which it
      ** does: max over j of (end_j - sigma_B0 - u_B0) / j.  (A mean over a
      ** window would overstate it while the run spends the lead it takes
      ** at the start.) */
      double base = r->sig[1] + ub0, worst = 0;
      int64_t last = G - 1, live = N;
      for (s = 0; s < N; s++)
        live += r->inflight[s];
      /* the last micro-batches drain the pipeline, an end a periodic
      ** pattern does not describe: leave them out */
      if (last - live > G / 2)
        last -= live;
      for (i = 1; i <= last; i++) {
        double x = (bend[i] - base) / (double)i;
        worst = x > worst ? x : worst;
      }
      pt->sum.sim_period_ms = worst;
    } else {
      /* a schedule without a pattern: the steady state in the middle of
      ** the run, away from the fill and the drain */
      pt->sum.sim_period_ms = (bend[3 * G / 4] - bend[G / 4]) / (double)(G / 2);
    }
  }
  pt->sum.sim_fits = 1;
  for (d = 0; d < P; d++) {
    pp_sim_device sd;
    pp_sim_device_get(sim, d, &sd);
    if (!sd.used)
      continue;
    if (sd.peak_memory_bytes > mem_bytes)
      pt->sum.sim_fits = 0;
    if (sd.peak_memory_bytes / mem_bytes > pt->sum.sim_peak_share)
      pt->sum.sim_peak_share = sd.peak_memory_bytes / mem_bytes;
  }
done:
  ppi_free(ctx, bend, (size_t)G * sizeof *bend);
  ppi_free(ctx, bw, (size_t)P * P * sizeof *bw);
  pp_sim_destroy(sim);
  pp_plan_destroy(plan);
  pp_plan_builder_destroy(pb);
  pp_cluster_destroy(cl);
  pp_cluster_builder_destroy(cb);
  return rc;
}
