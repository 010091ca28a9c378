/* SPDX-License-Identifier: MIT */
/*
** pp_partition_chain: the parameters checked, the chain built
** (part_chain.c), and the method table: each (objective, method) pair to
** what partitions for it, like export_to.c's table of engines.
**   - a chain kernel (part_minmax.c, part_amp.c, part_amp_original.c,
**     part_baseline.c) fills first[0..S], and the chain flow below makes
**     the partition of it: stage s on position s, priced by the
**     objective's stage times;
**   - a periodic kernel (part_madpipe.c: MadPipe, PipeDream + 1F1B*)
**     goes through the periodic flow (part_flow_periodic.c);
**   - min-max optimal on an operator DAG (not a chain) on one device
**     type goes through the DAG flow (part_flow_dag.c) instead of its
**     chain kernel.
** A pair without a row is refused: the madpipe objective prices periods
** of its own schedules, which only MadPipe and PipeDream + 1F1B* make.
**
** Objective: the one the parameters name, by the method they name.
** Invariant: every call ends with a filled partition or an error with a
** message, *out NULL; a chain kernel that finds nothing that fits the
** memory limits hands over the closest partition (min-max of memory /
** limit), reported with fits = 0.
** Complexity: the chain's O(L x profiles) plus the kernel's or flow's.
** Source: docs/PARTITION.md, "Objectives and methods".
*/
#include "part/partition.h"

#include <math.h>
#include <string.h>

/* A chain kernel: first[0..S] of j's chain, mem when some position has
** a memory limit; it records in j->pt's summary what it knows (exact,
** labels). */
typedef pp_status (*chain_kernel)(const struct ppi_part_job *j, bool mem,
                                  int32_t *first, double *obj);

struct part_method {
  pp_part_objective objective;
  pp_part_method method;
  chain_kernel chain;           /* the chain flow with this kernel, or */
  ppi_periodic_kernel periodic; /* the periodic flow with this one */
  bool dag;                     /* the DAG flow first, where dag_applies() */
};

/* The operator DAG flow partitions a model that is not a chain on
** identical positions, without the chain's per-layer knobs. */
static bool dag_applies(const pp_model *m, const pp_part_params *p)
{
  return !p->devices && !p->layer_level && p->tp == 1 && !p->stage_tp &&
         !p->recompute && !pp_model_is_chain(m);
}

/* ---- chain kernels ------------------------------------------------------ */

/* An exact kernel's result, or the closest partition when nothing fits. */
static pp_status exact_or_closest(const struct ppi_part_job *j, pp_status rc,
                                  int32_t *first, double *obj)
{
  j->pt->sum.exact = rc == PP_OK;
  if (rc == PP_EINPUT) /* nothing fits: the closest */
    rc = ppi_part_minmem(j->ctx, j->c, first, obj);
  return rc;
}

static pp_status minmax_optimal(const struct ppi_part_job *j, bool mem,
                                int32_t *first, double *obj)
{
  return exact_or_closest(j, ppi_part_minmax(j->ctx, j->c, mem, first, obj),
                          first, obj);
}

static pp_status amp_optimal(const struct ppi_part_job *j, bool mem,
                             int32_t *first, double *obj)
{
  (void)mem; /* the AMP DP checks the positions' limits itself */
  return exact_or_closest(
      j, ppi_part_amp(j->ctx, j->c, first, obj, &j->pt->sum.work), first, obj);
}

static pp_status uniform_layers(const struct ppi_part_job *j, bool mem,
                                int32_t *first, double *obj)
{
  (void)mem;
  (void)obj;
  ppi_part_uniform_layers(j->c->L, j->c->S, first);
  return PP_OK;
}

static pp_status uniform_params(const struct ppi_part_job *j, bool mem,
                                int32_t *first, double *obj)
{
  (void)mem;
  (void)obj;
  return ppi_part_uniform_params(j->ctx, j->c->pp, j->c->L, j->c->S, first);
}

/* PipeDream's DP is the min-max DP without memory: exact for the min-max
** objective only when no limit applies. */
static pp_status pipedream(const struct ppi_part_job *j, bool mem,
                           int32_t *first, double *obj)
{
  pp_status rc = ppi_part_minmax(j->ctx, j->c, 0, first, obj);
  j->pt->sum.exact = rc == PP_OK && j->p->objective == PP_OBJ_MINMAX && !mem;
  return rc;
}

/* amp-original on the chain: each layer's cost the mean of its work
** over the positions, the cut costs the chain's transfers (our bytes,
** latency, replica 0's links). */
static pp_status amp_original_chain(pp_ctx *ctx, struct ppi_arena *tmp,
                                    const struct ppi_chain *c, int32_t *first)
{
  int32_t S = c->S, l, q;
  double *e = ppi_arena_alloc(tmp, ctx, (size_t)c->L, sizeof *e);
  double *cc =
      ppi_arena_alloc(tmp, ctx, (size_t)c->L * (S > 1 ? S - 1 : 1), sizeof *cc);
  if (!e || !cc)
    return PP_ENOMEM;
  for (l = 0; l < c->L; l++) {
    for (q = 0; q < S; q++)
      e[l] += ppi_ch_work(c, q, l, l) / S;
    for (q = 0; q + 1 < S; q++)
      cc[(size_t)l * (S - 1) + q] = ppi_ch_comm(c, q, l);
  }
  return ppi_part_amp_original(ctx, e, cc, c->L, S, c->gas, first);
}

/* amp-original on the inputs AMP's driver builds (ppi_amp_dp_inputs),
** so that on AMP's own models and clusters the partition is AMP's. */
static pp_status amp_original_inputs(pp_ctx *ctx, struct ppi_arena *tmp,
                                     const pp_model *v, const pp_part_params *p,
                                     const struct ppi_chain *c, int32_t mbs,
                                     int32_t *first)
{
  struct ppi_amp_dp in;
  int32_t S = c->S, *wf = ppi_arena_alloc(tmp, ctx, (size_t)S + 1, sizeof *wf);
  pp_status rc;
  if (!wf)
    return PP_ENOMEM;
  if ((rc = ppi_amp_dp_inputs(ctx, tmp, v, p->cluster, p->devices, S,
                              p->replicas, p->tp, mbs, &in)))
    return rc;
  /* AMP's driver skips its DP for one micro-batch */
  if (c->gas > 1) {
    if ((rc = ppi_part_amp_original(ctx, in.e, in.cc, in.L, S, c->gas, wf)))
      return rc;
  } else {
    ppi_amp_uniform(&in, S, wf);
  }
  ppi_amp_dp_layers(&in, S, c->L, wf, first);
  return PP_OK;
}

static pp_status amp_original(const struct ppi_part_job *j, bool mem,
                              int32_t *first, double *obj)
{
  (void)mem;
  (void)obj;
  return j->p->amp_inputs ? amp_original_inputs(j->ctx, j->tmp, j->v, j->p,
                                                j->c, j->mbs, first)
                          : amp_original_chain(j->ctx, j->tmp, j->c, first);
}

/* ---- periodic kernels (the periodic flow runs them) ---------------------- */

static pp_status madpipe(const struct ppi_part_job *j, struct ppi_madpipe *r)
{
  const pp_part_params *p = j->p;
  struct ppi_stop st;
  st.deadline = ppi_now_s() + p->time_limit_s;
  st.flag = p->stop;
  return ppi_part_madpipe(j->ctx, j->tmp, j->c, p->stages, p->iterations, &st,
                          p->max_nodes, p->period_cap_ms, p->madpipe_phase1, r);
}

static pp_status pipedream_star(const struct ppi_part_job *j,
                                struct ppi_madpipe *r)
{
  return ppi_part_pipedream_star(j->ctx, j->tmp, j->c, j->p->stages, r);
}

/* ---- the table ----------------------------------------------------------- */

static const struct part_method methods[] = {
    {PP_OBJ_MINMAX, PP_PART_OPTIMAL, minmax_optimal, NULL, true},
    {PP_OBJ_MINMAX, PP_PART_UNIFORM_LAYERS, uniform_layers, NULL, false},
    {PP_OBJ_MINMAX, PP_PART_UNIFORM_PARAMS, uniform_params, NULL, false},
    {PP_OBJ_MINMAX, PP_PART_PIPEDREAM, pipedream, NULL, false},
    {PP_OBJ_MINMAX, PP_PART_PIPEDREAM_STAR, NULL, pipedream_star, false},
    {PP_OBJ_MINMAX, PP_PART_AMP_ORIGINAL, amp_original, NULL, false},
    {PP_OBJ_AMP, PP_PART_OPTIMAL, amp_optimal, NULL, false},
    {PP_OBJ_AMP, PP_PART_UNIFORM_LAYERS, uniform_layers, NULL, false},
    {PP_OBJ_AMP, PP_PART_UNIFORM_PARAMS, uniform_params, NULL, false},
    {PP_OBJ_AMP, PP_PART_PIPEDREAM, pipedream, NULL, false},
    {PP_OBJ_AMP, PP_PART_PIPEDREAM_STAR, NULL, pipedream_star, false},
    {PP_OBJ_AMP, PP_PART_AMP_ORIGINAL, amp_original, NULL, false},
    {PP_OBJ_MADPIPE, PP_PART_OPTIMAL, NULL, madpipe, false},
    {PP_OBJ_MADPIPE, PP_PART_PIPEDREAM_STAR, NULL, pipedream_star, false},
};

static const struct part_method *find_method(pp_part_objective o,
                                             pp_part_method m)
{
  size_t i;
  for (i = 0; i < sizeof methods / sizeof methods[0]; i++)
    if (methods[i].objective == o && methods[i].method == m)
      return &methods[i];
  return NULL;
}

/* ---- parameters ---------------------------------------------------------- */

static pp_status check_params(pp_ctx *ctx, const pp_model *m, int32_t L,
                              const pp_part_params *p,
                              const struct part_method *me)
{
  int32_t s, P = p->stages;
  if (!pp_part_objective_name(p->objective) || !pp_part_method_name(p->method))
    return ppi_fail(ctx, PP_EINVAL, "partition: unknown objective or method");
  if (P < 1)
    return ppi_fail(ctx, PP_EINPUT, "partition: %d stages; at least 1", (int)P);
  if (p->objective != PP_OBJ_MADPIPE && P > L &&
      !(me && me->dag && dag_applies(m, p) && P <= pp_model_nop(m)))
    return ppi_fail(ctx, PP_EINPUT,
                    "partition: %d stages for the %d layers of model '%s' "
                    "(its chain view); at most one stage per layer",
                    (int)P, (int)L, pp_model_name(m));
  if (p->replicas < 1 || p->replicas > PP_MAX_DEVICES)
    return ppi_fail(ctx, PP_EINPUT, "partition: %d replicas; 1 to %d",
                    (int)p->replicas, PP_MAX_DEVICES);
  if (p->tp < 1 || p->tp > PPI_MAX_TP)
    return ppi_fail(ctx, PP_EINPUT,
                    "partition: tensor-parallel degree %d; 1 to %d", (int)p->tp,
                    PPI_MAX_TP);
  if (p->stage_tp) {
    int32_t q;
    if (p->objective == PP_OBJ_MADPIPE || p->method == PP_PART_AMP_ORIGINAL ||
        p->amp_inputs)
      return ppi_fail(ctx, PP_EINPUT,
                      "partition: per-stage tp degrees are for the chain "
                      "partitioners, not madpipe or amp-original");
    for (q = 0; q < P; q++)
      if (p->stage_tp[q] < 1 || p->stage_tp[q] > PPI_MAX_TP)
        return ppi_fail(ctx, PP_EINPUT,
                        "partition: stage %d's tensor-parallel degree %d; 1 "
                        "to %d",
                        (int)q, (int)p->stage_tp[q], PPI_MAX_TP);
  }
  if (p->recompute && p->objective == PP_OBJ_MADPIPE)
    return ppi_fail(ctx, PP_EINPUT,
                    "partition: madpipe's schedules keep every activation; "
                    "it does not model recomputation");
  if (!(p->bandwidth_gbps > 0) || !isfinite(p->bandwidth_gbps))
    return ppi_fail(ctx, PP_EINPUT,
                    "partition: bandwidth %g GB/s must be positive and finite",
                    p->bandwidth_gbps);
  if (!(p->latency_us >= 0) || !isfinite(p->latency_us))
    return ppi_fail(ctx, PP_EINPUT,
                    "partition: latency %g us must be >= 0 and finite",
                    p->latency_us);
  if (!(p->allreduce_gbps >= 0) || !isfinite(p->allreduce_gbps))
    return ppi_fail(ctx, PP_EINPUT,
                    "partition: allreduce bandwidth %g GB/s must be >= 0",
                    p->allreduce_gbps);
  if (p->gas < 1 || p->gas > PPI_MAX_GLOBAL_BATCH)
    return ppi_fail(ctx, PP_EINPUT,
                    "partition: %lld micro-batches per replica; at least 1",
                    (long long)p->gas);
  if (p->micro_batch < 0)
    return ppi_fail(ctx, PP_EINPUT, "partition: micro-batch size %d",
                    (int)p->micro_batch);
  if (!(p->memory_bytes >= 0) || !isfinite(p->memory_bytes))
    return ppi_fail(ctx, PP_EINPUT,
                    "partition: memory limit %g bytes must be >= 0 and finite",
                    p->memory_bytes);
  if (p->reserve_bytes < 0)
    return ppi_fail(ctx, PP_EINPUT, "partition: negative reserve");
  if (!pp_optimizer_name(p->optimizer))
    return ppi_fail(ctx, PP_EINVAL, "partition: unknown optimizer %d",
                    (int)p->optimizer);
  if (p->objective != PP_OBJ_MADPIPE && p->schedule != PP_SCHED_GPIPE &&
      p->schedule != PP_SCHED_1F1B)
    return ppi_fail(ctx, PP_EINPUT,
                    "partition: the %s objective prices memory with gpipe "
                    "or 1f1b in-flight counts; 1f1b-star is madpipe's",
                    pp_part_objective_name(p->objective));
  if (p->amp_inputs && (p->method != PP_PART_AMP_ORIGINAL || !p->cluster))
    return ppi_fail(ctx, PP_EINPUT,
                    "partition: AMP's inputs are for the amp-original "
                    "method on a cluster");
  if ((p->devices || p->flat_device >= 0) && !p->cluster)
    return ppi_fail(ctx, PP_EINVAL, "partition: devices without a cluster");
  if (p->flat_device < -1 ||
      (p->flat_device >= 0 && p->flat_device >= pp_cluster_ndev(p->cluster)))
    return ppi_fail(ctx, PP_EINVAL,
                    "partition: flat_device %d out of range: cluster '%s' "
                    "has %d devices",
                    (int)p->flat_device, pp_cluster_name(p->cluster),
                    (int)pp_cluster_ndev(p->cluster));
  if (p->devices)
    for (s = 0; s < P; s++)
      if (p->devices[s] < 0 || p->devices[s] >= pp_cluster_ndev(p->cluster))
        return ppi_fail(ctx, PP_EINPUT,
                        "partition: device index %d (position %d) is out of "
                        "range: cluster '%s' has %d devices",
                        (int)p->devices[s], (int)s, pp_cluster_name(p->cluster),
                        (int)pp_cluster_ndev(p->cluster));
  if (p->iterations < 1 || p->iterations > PPI_MAX_MADPIPE_ITERATIONS)
    return ppi_fail(ctx, PP_EINPUT, "partition: madpipe needs 1..%d iterations",
                    PPI_MAX_MADPIPE_ITERATIONS);
  if (p->clusters < 0 || !(p->alpha >= 0) || !isfinite(p->alpha) ||
      p->refine_steps < 0)
    return ppi_fail(ctx, PP_EINPUT,
                    "partition: clusters, alpha and refinement steps must be "
                    ">= 0 (alpha finite)");
  if (!(p->time_limit_s > 0))
    return ppi_fail(ctx, PP_EINPUT, "partition: time limit must be positive");
  if (!(p->period_cap_ms >= 0)) /* NaN too; infinity means none */
    return ppi_fail(ctx, PP_EINPUT,
                    "partition: the period cap must be >= 0 (0: none)");
  if (p->madpipe_phase1 < 0 || p->madpipe_phase1 > 2)
    return ppi_fail(ctx, PP_EINPUT,
                    "partition: madpipe_phase1 %d; 0 (both phases), 1 or 2 "
                    "(phase 1 alone, optimistic or pessimistic count)",
                    (int)p->madpipe_phase1);
  return PP_OK;
}

/* What the method needs beyond the parameters' own ranges, in the order
** a user meets the limits: the network MadPipe assumes, its chain
** length, then whether the objective has the method at all. */
static pp_status check_method(pp_ctx *ctx, const pp_model *m, int32_t L,
                              const pp_part_params *p,
                              const struct part_method *me)
{
  if ((p->objective == PP_OBJ_MADPIPE || p->method == PP_PART_PIPEDREAM_STAR) &&
      p->devices)
    return ppi_fail(ctx, PP_EINPUT,
                    "partition: madpipe and pipedream-star assume identical "
                    "processors on a flat network (MadPipe's model); give "
                    "--bandwidth and --memory-gb instead of --devices");
  if (p->objective == PP_OBJ_MADPIPE && L > PPI_MADPIPE_MAX_LAYERS)
    return ppi_fail(ctx, PP_ELIMIT,
                    "partition: MadPipe takes chains of at most %d layers; the "
                    "chain view of '%s' has %d (its DP and ILP grow with the "
                    "layers; MadPipe's paper used 40 to 80)",
                    PPI_MADPIPE_MAX_LAYERS, pp_model_name(m), (int)L);
  if (!me) /* only the madpipe objective lacks methods */
    return ppi_fail(ctx, PP_EINPUT,
                    "partition: the madpipe objective's methods are optimal "
                    "(MadPipe) and pipedream-star, not %s",
                    pp_part_method_name(p->method));
  return PP_OK;
}

/* ---- the chain flow ------------------------------------------------------ */

/* Stage s on position s: the kernel's first[], priced by the objective's
** stage times, with the objective's lower bound. */
static pp_status chain_flow(const struct ppi_part_job *j, chain_kernel kernel)
{
  struct pp_partition *pt = j->pt;
  const struct ppi_chain *c = j->c;
  const pp_part_params *p = j->p;
  int32_t S = c->S, s, *first;
  double obj = 0, t0;
  bool mem = false;
  pp_status rc;

  if (!(first = ppi_arena_alloc(j->tmp, j->ctx, (size_t)S + 1, sizeof *first)))
    return PP_ENOMEM;
  t0 = ppi_now_s();
  for (s = 0; s < S; s++)
    mem = mem || isfinite(c->mem[s]);
  rc = kernel(j, mem, first, &obj);
  pt->sum.seconds = ppi_now_s() - t0;
  if (rc || (rc = ppi_partition_fill_chain(j->ctx, pt, c, j->m, j->v, first, S,
                                           NULL, NULL, NULL)))
    return rc;
  pt->sum.nstage = S;
  pt->sum.objective_ms = p->objective == PP_OBJ_MINMAX
                             ? ppi_ch_minmax_of(c, first)
                             : ppi_ch_amp_of(c, first);
  for (s = 0; s < S; s++)
    pt->st[s].time_ms = p->objective == PP_OBJ_MINMAX
                            ? ppi_ch_minmax(c, s, first[s], first[s + 1] - 1)
                            : ppi_ch_work(c, s, first[s], first[s + 1] - 1);
  if (!pt->sum.fits)
    pt->sum.exact = 0;
  pt->sum.lower_bound_ms = ppi_ch_lower_bound(c, p->objective);
  return PP_OK;
}

static pp_status run_method(const struct ppi_part_job *j,
                            const struct part_method *me)
{
  if (me->periodic)
    return ppi_part_flow_periodic(j, me->periodic);
  if (me->dag && dag_applies(j->m, j->p)) {
    j->pt->sum.fits = 1; /* the DAG flow only ever clears it */
    return ppi_part_flow_dag(j);
  }
  return chain_flow(j, me->chain);
}

pp_status pp_partition_chain(pp_ctx *ctx, const pp_model *m,
                             const pp_part_params *p, pp_partition **out)
{
  struct pp_partition *pt = NULL;
  const struct part_method *me;
  struct ppi_arena tmp;
  struct ppi_chain c;
  pp_model *v = NULL;
  int32_t mbs;
  pp_status rc;

  if (!ctx || !m || !p || !out)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_partition_chain: NULL argument")
               : PP_EINVAL;
  *out = NULL;
  if ((rc = pp_model_chain_view(ctx, m, 0, &v)))
    return rc;
  ppi_arena_init(&tmp, ppi_ctx_alloc(ctx));
  me = find_method(p->objective, p->method);
  mbs = p->micro_batch > 0 ? p->micro_batch : pp_model_micro_batch(m);
  if (!(rc = check_params(ctx, m, pp_model_nop(v), p, me)) &&
      !(rc = check_method(ctx, m, pp_model_nop(v), p, me)) &&
      !(rc = ppi_partition_new(ctx, m, p, mbs, &pt)) &&
      !(rc = ppi_chain_build(ctx, &tmp, v, p, p->stages, mbs, &c, &pt->est))) {
    struct ppi_part_job j = {ctx, pt, m, v, p, &c, mbs, &tmp};
    pt->sum.nlayer = c.L;
    rc = run_method(&j, me);
  }
  if (rc == PP_OK) {
    *out = pt;
    pt = NULL;
  }
  pp_partition_destroy(pt);
  ppi_arena_free(&tmp);
  pp_model_destroy(v);
  return rc;
}
