/* SPDX-License-Identifier: MIT */
/*
** The partition object: parameters, the chain the kernels see
** (part_chain.c prices it), dispatch to the kernels (part_minmax.c,
** part_amp.c, part_amp_original.c, part_baseline.c, part_madpipe.c), and
** the result: stages as original operators, their costs and memory, the
** stage graph, a lower bound.
**
** "Nothing fits" is a result: when no partition fits the memory limits,
** the one whose worst stage comes closest (the min-max of memory / limit)
** is returned with fits = 0, so the user learns which stage needs how
** much against how much.
*/
#include "cost/cost.h"
#include "map/map.h"
#include "part/part.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const obj_names[] = {"minmax", "amp", "madpipe"};

static const char *const meth_names[] = {"optimal",        "uniform-layers",
                                         "uniform-params", "pipedream",
                                         "pipedream-star", "amp-original"};

const char *pp_part_objective_name(pp_part_objective o)
{
  return (unsigned)o < 3 ? obj_names[o] : NULL;
}

pp_status pp_part_objective_parse(const char *name, pp_part_objective *out)
{
  int i;
  for (i = 0; name && i < 3; i++)
    if (!strcmp(name, obj_names[i])) {
      *out = (pp_part_objective)i;
      return PP_OK;
    }
  return PP_EINVAL;
}

const char *pp_part_method_name(pp_part_method m)
{
  return (unsigned)m < 6 ? meth_names[m] : NULL;
}

pp_status pp_part_method_parse(const char *name, pp_part_method *out)
{
  int i;
  for (i = 0; name && i < 6; i++)
    if (!strcmp(name, meth_names[i])) {
      *out = (pp_part_method)i;
      return PP_OK;
    }
  return PP_EINVAL;
}

void pp_part_params_init(pp_part_params *p)
{
  if (!p)
    return;
  memset(p, 0, sizeof *p);
  p->objective = PP_OBJ_MINMAX;
  p->method = PP_PART_OPTIMAL;
  p->replicas = 1;
  p->tp = 1;
  /* TUNING: the defaults (docs/PARTITION.md): a 10 GB/s flat network,
  ** MadPipe's 10 bisection iterations, a minute and 20,000 branch-and-bound
  ** nodes for its ILP, 1,000 refinement steps (refinement strictly
  ** lowers its potential each step, so the cap only bounds the time); set
  ** with the partitioners (ffad48c, 46c8c19), no sweep recorded */
  p->bandwidth_gbps = 10;
  p->gas = 1;
  p->schedule = PP_SCHED_1F1B;
  p->optimizer = PP_OPT_ADAM_MIXED;
  p->iterations = 10;
  p->time_limit_s = 60;
  p->max_nodes = 20000;
  p->flat_device = -1;
  p->alpha = 1;
  p->refine_steps = 1000;
}

/* ---- the result ------------------------------------------------------- */

struct pp_partition {
  struct ppi_arena arena;
  pp_part_summary sum;
  int32_t S;
  pp_part_stage *st;
  int32_t *op_off, *ops;
  char *model_name, *model_source;
  double *sg_compute, *sg_param; /* stage graph: speed-1 compute, params */
  int32_t ne;
  struct ppi_sedge *e;
  int32_t *dev; /* positions' devices, or NULL */
  char **dev_name;
  double bandwidth_gbps, latency_us;
  int32_t replicas, micro_batch;
  int64_t gas;
  pp_schedule schedule;
  pp_optimizer optimizer;
  unsigned est;
  double *sig; /* MadPipe's pattern, 4 offsets per stage, or NULL */
};

int ppi_partition_pattern(const pp_partition *pt, int32_t s, double sig[4])
{
  if (!pt || !pt->sig || s < 0 || s >= pt->S)
    return 0;
  memcpy(sig, pt->sig + 4 * (size_t)s, 4 * sizeof *sig);
  return 1;
}

/* What the writers (part_write.c) see. */
#include "part/part_view.h"

const struct ppi_part_view *ppi_part_view(const pp_partition *pt,
                                          struct ppi_part_view *v)
{
  v->sum = &pt->sum;
  v->S = pt->S;
  v->st = pt->st;
  v->op_off = pt->op_off;
  v->ops = pt->ops;
  v->model_name = pt->model_name;
  v->sg_compute = pt->sg_compute;
  v->sg_param = pt->sg_param;
  v->ne = pt->ne;
  v->e = pt->e;
  v->dev = pt->dev;
  v->dev_name = (const char *const *)pt->dev_name;
  v->bandwidth_gbps = pt->bandwidth_gbps;
  v->latency_us = pt->latency_us;
  v->replicas = pt->replicas;
  v->micro_batch = pt->micro_batch;
  v->gas = pt->gas;
  v->schedule = pt->schedule;
  v->optimizer = pt->optimizer;
  v->est = pt->est;
  return v;
}

void pp_partition_destroy(pp_partition *pt)
{
  struct ppi_alloc a;
  if (!pt)
    return;
  a = pt->arena.a;
  ppi_arena_free(&pt->arena);
  ppi_raw_free(a, pt, sizeof *pt);
}

pp_status pp_partition_summary(const pp_partition *pt, pp_part_summary *out)
{
  if (!pt || !out)
    return PP_EINVAL;
  *out = pt->sum;
  return PP_OK;
}

pp_status pp_partition_stage(const pp_partition *pt, int32_t s,
                             pp_part_stage *out)
{
  if (!pt || !out || s < 0 || s >= pt->S)
    return PP_EINVAL;
  *out = pt->st[s];
  return PP_OK;
}

const int32_t *pp_partition_stage_ops(const pp_partition *pt, int32_t s,
                                      int32_t *n)
{
  if (!pt || s < 0 || s >= pt->S) {
    if (n)
      *n = 0;
    return NULL;
  }
  if (n)
    *n = pt->op_off[s + 1] - pt->op_off[s];
  return pt->ops + pt->op_off[s];
}

/* ---- parameters ---------------------------------------------------------- */

static pp_status check_params(pp_ctx *ctx, const pp_model *m, int32_t L,
                              const pp_part_params *p)
{
  int32_t s, P = p->stages;
  if (!pp_part_objective_name(p->objective) || !pp_part_method_name(p->method))
    return ppi_fail(ctx, PP_EINVAL, "partition: unknown objective or method");
  if (P < 1)
    return ppi_fail(ctx, PP_EINPUT, "partition: %d stages; at least 1", (int)P);
  if (p->objective != PP_OBJ_MADPIPE && P > L &&
      !(p->objective == PP_OBJ_MINMAX && p->method == PP_PART_OPTIMAL &&
        !p->devices && !p->layer_level && p->tp == 1 && !p->recompute &&
        !pp_model_is_chain(m) && P <= pp_model_nop(m)))
    return ppi_fail(ctx, PP_EINPUT,
                    "partition: %d stages for the %d layers of model '%s' "
                    "(its chain view); at most one stage per layer",
                    (int)P, (int)L, pp_model_name(m));
  if (p->replicas < 1 || p->replicas > PP_MAX_DEVICES)
    return ppi_fail(ctx, PP_EINPUT, "partition: %d replicas; 1 to %d",
                    (int)p->replicas, PP_MAX_DEVICES);
  if (p->tp < 1 || p->tp > 1024)
    return ppi_fail(ctx, PP_EINPUT,
                    "partition: tensor-parallel degree %d; 1 to 1024",
                    (int)p->tp);
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
  if (p->iterations < 1 || p->iterations > 1000)
    return ppi_fail(ctx, PP_EINPUT,
                    "partition: madpipe needs 1..1000 "
                    "iterations");
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
  return PP_OK;
}

/* ---- the chain --------------------------------------------------------- */

/* Build the chain of view v (the chain view of the model) for the
** positions of p; arrays in ar. */
static pp_status build_chain(pp_ctx *ctx, struct ppi_arena *ar,
                             const pp_model *v, const pp_part_params *p,
                             int32_t npos, int32_t mbs, struct ppi_chain *c,
                             unsigned *est)
{
  int32_t L = pp_model_nop(v), s, l, q, *types;
  double scale = (double)mbs / pp_model_micro_batch(v);
  const pp_cluster *cl = p->cluster;
  pp_status rc;

  memset(c, 0, sizeof *c);
  c->L = L;
  c->S = npos;
  c->R = p->replicas;
  c->gas = p->gas;
  c->fac = pp_optimizer_factor(p->optimizer);
  c->reserve = (double)p->reserve_bytes;
  c->allreduce = p->allreduce;
  c->recompute = p->recompute;
  if (!PPI_ARENA_NEW(ar, ctx, c->prof, npos) ||
      !PPI_ARENA_NEW(ar, ctx, types, npos) ||
      !PPI_ARENA_NEW(ar, ctx, c->bw, npos) ||
      !PPI_ARENA_NEW(ar, ctx, c->mem, npos) ||
      !PPI_ARENA_NEW(ar, ctx, c->nf, npos) ||
      !PPI_ARENA_NEW(ar, ctx, c->ar_a, npos) ||
      !PPI_ARENA_NEW(ar, ctx, c->ar_b, npos) ||
      !PPI_ARENA_NEW(ar, ctx, c->pp, L + 1) ||
      !PPI_ARENA_NEW(ar, ctx, c->sp, L + 1) ||
      !PPI_ARENA_NEW(ar, ctx, c->cut, L))
    return PP_ENOMEM;
  /* profiles: one per distinct device type among the positions */
  for (s = 0; s < npos; s++) {
    int32_t t = p->devices ? pp_cluster_device_type(cl, p->devices[s])
                : p->flat_device >= 0
                    ? pp_cluster_device_type(cl, p->flat_device)
                    : -1;
    for (q = 0; q < c->nprof && types[q] != t; q++)
      ;
    if (q == c->nprof)
      types[c->nprof++] = t;
    c->prof[s] = q;
  }
  if (!PPI_ARENA_NEW(ar, ctx, c->wp, (size_t)c->nprof * (L + 1)) ||
      !PPI_ARENA_NEW(ar, ctx, c->fp, (size_t)c->nprof * (L + 1)))
    return PP_ENOMEM;
  for (q = 0; q < c->nprof; q++) {
    pp_type_key key = {NULL, 1, 0};
    double *w = c->wp + (size_t)q * (L + 1), *f = c->fp + (size_t)q * (L + 1);
    if (types[q] >= 0 && !p->devices) {
      key = pp_model_type_key(v, cl, p->flat_device);
    } else if (types[q] >= 0) {
      for (s = 0; pp_cluster_device_type(cl, p->devices[s]) != types[q]; s++)
        ;
      key = pp_model_type_key(v, cl, p->devices[s]);
    }
    for (l = 0; l < L; l++) {
      pp_op_time t;
      if ((rc = pp_model_op_time(v, l, &key, p->tp, mbs, &t)))
        return rc;
      *est |= t.est;
      w[l + 1] = w[l] + t.fwd_ms + t.bwd_ms + (p->recompute ? t.fwd_ms : 0);
      f[l + 1] = f[l] + t.fwd_ms;
    }
  }
  for (l = 0; l < L; l++) {
    pp_op_sizes z;
    const int32_t *oe;
    int32_t n, k;
    if ((rc = pp_model_op_sizes(v, l, p->tp, mbs, &z)))
      return rc;
    *est |= z.est;
    c->pp[l + 1] = c->pp[l] + z.param_bytes;
    c->sp[l + 1] = c->sp[l] + z.saved_bytes;
    pp_model_op_edges(v, l, 0, &oe, &n);
    for (k = 0; k < n; k++) {
      int32_t a, b;
      int64_t bytes;
      pp_model_edge(v, oe[k], &a, &b, &bytes);
      if (b == l + 1)
        c->cut[l] = (double)bytes * scale / p->tp; /* per rank */
    }
  }
  c->lat_ms =
      (cl && p->devices ? pp_cluster_latency(cl) : p->latency_us) / 1000;
  for (s = 0; s < npos; s++) {
    double lim = p->memory_bytes > 0 ? p->memory_bytes : INFINITY;
    int64_t R = p->replicas;
    double arbw = p->allreduce_gbps > 0 ? p->allreduce_gbps : p->bandwidth_gbps;
    if (p->devices) {
      double cap = (double)pp_cluster_type_memory(
          cl, pp_cluster_device_type(cl, p->devices[s]));
      lim = cap < lim ? cap : lim;
      c->bw[s] = s + 1 < npos ? pp_cluster_bandwidth(cl, p->devices[s],
                                                     p->devices[s + 1])
                              : p->bandwidth_gbps;
      if (!(c->bw[s] > 0))
        c->bw[s] = INFINITY; /* the same device twice: no transfer */
    } else {
      c->bw[s] = p->bandwidth_gbps;
      if (p->flat_device >= 0) {
        double cap = (double)pp_cluster_type_memory(
            cl, pp_cluster_device_type(cl, p->flat_device));
        lim = cap < lim ? cap : lim;
      }
    }
    c->mem[s] = lim;
    if (p->schedule == PP_SCHED_GPIPE)
      c->nf[s] = (double)p->gas;
    else
      c->nf[s] = (double)(npos - s < p->gas ? npos - s : p->gas);
    c->ar_a[s] = R > 1 ? 2.0 * (R - 1) / (R * arbw * 1e6) : 0;
    c->ar_b[s] = R > 1 ? 2.0 * (R - 1) * c->lat_ms : 0;
  }
  return PP_OK;
}

/* ---- the result ------------------------------------------------------- */

/* Fill pt from a partition first[0..S] of chain c of view v of model m;
** proc/special per stage (NULL: stage s on position s). */
static pp_status fill(pp_ctx *ctx, struct pp_partition *pt,
                      const struct ppi_chain *c, const pp_model *m,
                      const pp_model *v, const int32_t *first, int32_t S,
                      const int32_t *proc, const uint8_t *special,
                      const int32_t *inflight)
{
  struct ppi_arena *ar = &pt->arena;
  int32_t s, l, k, n, nop = pp_model_nop(m), *stage_of;
  pp_status rc;

  pt->S = S;
  if (!PPI_ARENA_NEW(ar, ctx, pt->st, S) ||
      !PPI_ARENA_NEW(ar, ctx, pt->op_off, S + 1) ||
      !PPI_ARENA_NEW(ar, ctx, pt->ops, nop) ||
      !PPI_ARENA_NEW(ar, ctx, pt->sg_compute, S) ||
      !PPI_ARENA_NEW(ar, ctx, pt->sg_param, S) ||
      !(stage_of = ppi_calloc(ctx, (size_t)nop, sizeof *stage_of)))
    return PP_ENOMEM;
  for (s = 0, n = 0; s < S; s++) {
    pp_part_stage *x = &pt->st[s];
    int32_t i = first[s], j = first[s + 1] - 1, pos = proc ? proc[s] : s;
    pt->op_off[s] = n;
    for (l = i; l <= j; l++) {
      int32_t nm;
      const int32_t *mem = pp_model_layer_members(v, l, &nm);
      for (k = 0; k < nm; k++) {
        pt->ops[n++] = mem[k];
        stage_of[mem[k]] = s;
      }
    }
    x->first_layer = i;
    x->nlayer = j - i + 1;
    x->proc = pos;
    x->special = special ? special[s] : 0;
    x->compute_ms = ppi_ch_work(c, pos, i, j);
    x->comm_ms = (i > 0 ? ppi_ch_comm(c, proc ? pos : s - 1, i - 1) : 0) +
                 (j < c->L - 1 ? ppi_ch_comm(c, pos, j) : 0);
    x->param_bytes = c->pp[j + 1] - c->pp[i];
    x->in_flight = inflight ? inflight[s] : (int32_t)c->nf[pos];
    x->memory_bytes = ppi_ch_mem_g(c, i, j, x->in_flight);
    x->memory_limit_bytes = c->mem[pos];
  }
  pt->op_off[S] = n;
  /* the stage graph, at speed 1 */
  for (s = 0; s < S; s++) {
    pp_type_key key = {NULL, 1, 0};
    pt->sg_param[s] = pt->st[s].param_bytes;
    for (l = first[s]; l < first[s + 1]; l++) {
      pp_op_time t;
      if ((rc = pp_model_op_time(v, l, &key, 1, pt->micro_batch, &t))) {
        ppi_free(ctx, stage_of, (size_t)nop * sizeof *stage_of);
        return rc;
      }
      pt->sg_compute[s] += t.fwd_ms + t.bwd_ms;
    }
  }
  {
    struct ppi_sedge *e;
    rc = ppi_stage_edges(ctx, m, stage_of,
                         (double)pt->micro_batch / pp_model_micro_batch(m), &e,
                         &pt->ne);
    if (rc == PP_OK) {
      if (PPI_ARENA_NEW(ar, ctx, pt->e, pt->ne))
        memcpy(pt->e, e, (size_t)pt->ne * sizeof *e);
      else
        rc = PP_ENOMEM;
      ppi_stage_edges_free(ctx, m, e);
    }
  }
  ppi_free(ctx, stage_of, (size_t)nop * sizeof *stage_of);
  if (rc)
    return rc;
  /* memory: the worst share */
  pt->sum.fits = 1;
  pt->sum.worst_stage = 0;
  {
    double worst = -1;
    for (s = 0; s < S; s++) {
      double r = pt->st[s].memory_bytes / pt->st[s].memory_limit_bytes;
      if (r > 1)
        pt->sum.fits = 0;
      if (r > worst) {
        worst = r;
        pt->sum.worst_stage = s;
      }
    }
  }
  return PP_OK;
}

/* The lower bound of the objective for any partition into c->S stages. */
static double lower_bound(const struct ppi_chain *c, pp_part_objective o)
{
  double tot = 0, big = 0;
  int32_t l, q;
  for (l = 0; l < c->L; l++) {
    double w = INFINITY;
    for (q = 0; q < c->nprof; q++) {
      const double *wp = c->wp + (size_t)q * (c->L + 1);
      if (wp[l + 1] - wp[l] < w)
        w = wp[l + 1] - wp[l];
    }
    tot += w;
    big = w > big ? w : big;
  }
  {
    double mx = tot / c->S > big ? tot / c->S : big;
    if (o == PP_OBJ_AMP)
      return (double)(c->gas - 1) * mx + tot;
    return mx / (o == PP_OBJ_MINMAX ? c->R : 1);
  }
}

/* Run a periodic result in the simulator: P identical devices, the
** stages on their processors with the schedule's in-flight counts, many
** micro-batches; the steady-state period is the time between the last
** backwards of consecutive micro-batches in the middle of the run (away
** from the fill and the drain), and the peak memory is the simulator's. */
static pp_status simulate(pp_ctx *ctx, struct pp_partition *pt,
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

/* MadPipe and PipeDream + 1F1B* (part_madpipe.c): stages on P
** processors, a periodic schedule and its period. */
static pp_status periodic(pp_ctx *ctx, struct pp_partition *pt,
                          const struct ppi_chain *c, const pp_model *m,
                          const pp_model *v, const pp_part_params *p,
                          struct ppi_arena *tmp)
{
  struct ppi_madpipe r;
  int32_t P = p->stages, s;
  double t0 = ppi_now_s(), *load;
  pp_status rc;

  if (p->method == PP_PART_PIPEDREAM_STAR)
    rc = ppi_part_pipedream_star(ctx, tmp, c, P, &r);
  else
    rc = ppi_part_madpipe(ctx, tmp, c, P, p->iterations, p->time_limit_s,
                          p->max_nodes, p->period_cap_ms, &r);
  pt->sum.seconds = ppi_now_s() - t0;
  if (rc == PP_EINPUT) {
    /* nothing fits: PipeDream's partition with one activation each, the
    ** least any schedule keeps, names the stage that overflows */
    rc = ppi_part_pipedream_star(ctx, tmp, c, P, &r);
    if (rc == PP_OK)
      for (s = 0; s < r.N; s++)
        r.inflight[s] = 1;
    r.fits = 0;
  }
  if (rc)
    return rc;
  if ((rc =
           fill(ctx, pt, c, m, v, r.first, r.N, r.proc, r.special, r.inflight)))
    return rc;
  pt->sum.nstage = r.N;
  pt->sum.period_ms = r.period;
  if (r.sig && r.fits) {
    if (!(pt->sig = ppi_arena_alloc(&pt->arena, ctx, 4 * (size_t)r.N,
                                    sizeof *pt->sig)))
      return PP_ENOMEM;
    memcpy(pt->sig, r.sig, 4 * (size_t)r.N * sizeof *pt->sig);
  }
  pt->sum.objective_ms = r.period;
  pt->sum.work = r.labels;
  pt->sum.exact = 0; /* MadPipe is a heuristic ([MadPipe]) */
  for (s = 0; s < r.N; s++)
    pt->st[s].time_ms = pt->st[s].compute_ms;
  /* memory per processor: the special one holds several stages */
  if (!(load = ppi_arena_alloc(tmp, ctx, (size_t)P, sizeof *load)))
    return PP_ENOMEM;
  pt->sum.fits = r.fits;
  for (s = 0; s < r.N; s++)
    load[r.proc[s]] +=
        pt->st[s].memory_bytes - (load[r.proc[s]] > 0 ? c->reserve : 0);
  {
    double worst = -1;
    for (s = 0; s < r.N; s++) {
      double x = load[r.proc[s]] / c->mem[0];
      if (x > 1)
        pt->sum.fits = 0;
      if (x > worst) {
        worst = x;
        pt->sum.worst_stage = s;
      }
    }
  }
  pt->sum.lower_bound_ms = lower_bound(c, PP_OBJ_MADPIPE);
  if (pt->sum.fits)
    return simulate(ctx, pt, m, &r, p, c->mem[0]);
  return PP_OK;
}

/* ---- operator DAGs ------------------------------------------------------ */

/* Fill pt from an operator-level staging of model m. */
static pp_status fill_dag(pp_ctx *ctx, struct pp_partition *pt,
                          const struct ppi_dag *g, const pp_model *m,
                          const int32_t *stage_of, int32_t mbs)
{
  struct ppi_arena *ar = &pt->arena;
  int32_t S = g->S, n = g->n, s, i, e, *fill_at;
  const int32_t *topo = pp_model_topo_order(m);
  double *t, *mem;
  pp_status rc;

  pt->S = S;
  if (!PPI_ARENA_NEW(ar, ctx, pt->st, S) ||
      !PPI_ARENA_NEW(ar, ctx, pt->op_off, S + 1) ||
      !PPI_ARENA_NEW(ar, ctx, pt->ops, n) ||
      !PPI_ARENA_NEW(ar, ctx, pt->sg_compute, S) ||
      !PPI_ARENA_NEW(ar, ctx, pt->sg_param, S) ||
      !PPI_ARENA_NEW(ar, ctx, t, S) || !PPI_ARENA_NEW(ar, ctx, mem, S) ||
      !PPI_ARENA_NEW(ar, ctx, fill_at, S))
    return PP_ENOMEM;
  ppi_dag_eval(g, stage_of, t, mem);
  for (i = 0; i < n; i++)
    pt->op_off[stage_of[i] + 1]++;
  for (s = 0; s < S; s++)
    pt->op_off[s + 1] += pt->op_off[s];
  for (i = 0; i < n; i++) { /* each stage in topological order */
    int32_t v = topo[i], st = stage_of[v];
    pt->ops[pt->op_off[st] + fill_at[st]++] = v;
  }
  for (s = 0; s < S; s++) {
    pp_part_stage *x = &pt->st[s];
    x->first_layer = -1; /* operators, not layers */
    x->nlayer = pt->op_off[s + 1] - pt->op_off[s];
    x->proc = s;
    x->time_ms = t[s];
    x->memory_bytes = mem[s];
    x->memory_limit_bytes = g->mem[s];
    x->in_flight = (int32_t)g->nf[s];
  }
  for (i = 0; i < n; i++) {
    pp_part_stage *x = &pt->st[stage_of[i]];
    x->compute_ms += g->w[i];
    x->param_bytes += g->param[i];
  }
  for (e = 0; e < g->ne; e++) {
    int32_t a = stage_of[g->esrc[e]], b = stage_of[g->edst[e]];
    if (a != b) {
      pt->st[a].comm_ms += g->ec[e];
      pt->st[b].comm_ms += g->ec[e];
    }
  }
  for (s = 0; s < S; s++) {
    pt->sg_compute[s] = pt->st[s].compute_ms;
    pt->sg_param[s] = pt->st[s].param_bytes;
  }
  {
    struct ppi_sedge *se;
    rc = ppi_stage_edges(ctx, m, stage_of,
                         (double)mbs / pp_model_micro_batch(m), &se, &pt->ne);
    if (rc)
      return rc;
    if (PPI_ARENA_NEW(ar, ctx, pt->e, pt->ne))
      memcpy(pt->e, se, (size_t)pt->ne * sizeof *se);
    else
      rc = PP_ENOMEM;
    ppi_stage_edges_free(ctx, m, se);
    if (rc)
      return rc;
  }
  {
    double worst = -1;
    for (s = 0; s < S; s++) {
      double r = mem[s] / g->mem[s];
      if (r > 1)
        pt->sum.fits = 0;
      if (r > worst) {
        worst = r;
        pt->sum.worst_stage = s;
      }
    }
  }
  pt->sum.nstage = S;
  pt->sum.nlayer = n;
  {
    double tot = 0, big = 0;
    for (i = 0; i < n; i++) {
      tot += g->w[i];
      big = g->w[i] > big ? g->w[i] : big;
    }
    pt->sum.lower_bound_ms = (tot / S > big ? tot / S : big) / g->R;
  }
  if (!pt->sum.fits)
    pt->sum.exact = 0;
  return PP_OK;
}

/* The operator graph of m for the DP (nodes = operators). */
static pp_status build_dag(pp_ctx *ctx, struct ppi_arena *ar, const pp_model *m,
                           const pp_part_params *p, int32_t mbs,
                           const struct ppi_chain *c, struct ppi_dag *g,
                           unsigned *est)
{
  int32_t n = pp_model_nop(m), v, e;
  double scale = (double)mbs / pp_model_micro_batch(m);
  pp_type_key key = {NULL, 1, 0};
  pp_status rc;

  memset(g, 0, sizeof *g);
  g->n = n;
  g->ne = pp_model_nedge(m);
  g->S = p->stages;
  g->R = p->replicas;
  g->fac = c->fac;
  g->reserve = c->reserve;
  g->mem = c->mem;
  g->nf = c->nf;
  if (!(g->w = ppi_arena_alloc(ar, ctx, (size_t)n, sizeof *g->w)) ||
      !(g->param = ppi_arena_alloc(ar, ctx, (size_t)n, sizeof *g->param)) ||
      !(g->saved = ppi_arena_alloc(ar, ctx, (size_t)n, sizeof *g->saved)) ||
      !(g->esrc = ppi_arena_alloc(ar, ctx, (size_t)(g->ne ? g->ne : 1),
                                  sizeof *g->esrc)) ||
      !(g->edst = ppi_arena_alloc(ar, ctx, (size_t)(g->ne ? g->ne : 1),
                                  sizeof *g->edst)) ||
      !(g->ec = ppi_arena_alloc(ar, ctx, (size_t)(g->ne ? g->ne : 1),
                                sizeof *g->ec)) ||
      !(g->eb = ppi_arena_alloc(ar, ctx, (size_t)(g->ne ? g->ne : 1),
                                sizeof *g->eb)))
    return PP_ENOMEM;
  for (v = 0; v < n; v++) {
    pp_op_time t;
    pp_op_sizes z;
    if ((rc = pp_model_op_time(m, v, &key, 1, mbs, &t)) ||
        (rc = pp_model_op_sizes(m, v, 1, mbs, &z)))
      return rc;
    *est |= t.est | z.est;
    g->w[v] = t.fwd_ms + t.bwd_ms;
    g->param[v] = z.param_bytes;
    g->saved[v] = z.saved_bytes;
  }
  for (e = 0; e < g->ne; e++) {
    int64_t bytes;
    pp_model_edge(m, e, &g->esrc[e], &g->edst[e], &bytes);
    g->eb[e] = (double)bytes * scale;
    g->ec[e] = g->eb[e] > 0 ? c->lat_ms + g->eb[e] / (c->bw[0] * 1e6) : 0;
  }
  return ppi_dag_index(ctx, ar, g);
}

/* Cluster, DP, refine (Parmesan phase 1); fills pt. */
/* The layer-level partition (the chain view's exact min-max) as an
** operator staging, if it fits: a candidate the operator-level flow must
** beat, since every layer-level partition is a fronted staging. */
static pp_status layer_candidate(pp_ctx *ctx, struct ppi_arena *tmp,
                                 const struct ppi_chain *c, const pp_model *v,
                                 bool mem, int32_t *stage_of, bool *ok)
{
  int32_t *first, s, l, k, n;
  double obj;
  pp_status rc;
  *ok = false;
  if (c->S > c->L)
    return PP_OK;
  if (!(first = ppi_arena_alloc(tmp, ctx, (size_t)c->S + 1, sizeof *first)))
    return PP_ENOMEM;
  rc = ppi_part_minmax(ctx, c, mem, first, &obj);
  if (rc == PP_EINPUT)
    return PP_OK;
  if (rc)
    return rc;
  for (s = 0; s < c->S; s++)
    for (l = first[s]; l < first[s + 1]; l++) {
      const int32_t *mb = pp_model_layer_members(v, l, &n);
      for (k = 0; k < n; k++)
        stage_of[mb[k]] = s;
    }
  *ok = true;
  return PP_OK;
}

static pp_status dagflow(pp_ctx *ctx, struct pp_partition *pt,
                         const pp_model *m, const pp_model *view,
                         const pp_part_params *p, const struct ppi_chain *c,
                         int32_t mbs, struct ppi_arena *tmp)
{
  struct ppi_dag g, h;
  int32_t n = pp_model_nop(m), S = p->stages, K, k, v, s, *of, *hstage,
          *stage_of, moves = 0;
  double obj, t0 = ppi_now_s(), *scr;
  bool mem = false, done = false, clustered;
  pp_status rc;

  if ((rc = build_dag(ctx, tmp, m, p, mbs, c, &g, &pt->est)))
    return rc;
  for (s = 0; s < S; s++)
    mem = mem || isfinite(c->mem[s]);
  /* TUNING: clustering stops at 16 hyper-operators per stage, at least
  ** 256: few enough for the down-set DP, enough for each stage's boundary
  ** to move (46c8c19; docs/PARTITION.md) */
  K = p->clusters > 0 ? p->clusters : (16 * S > 256 ? 16 * S : 256);
  if (K < S)
    K = S;
  if (!(of = ppi_arena_alloc(tmp, ctx, (size_t)n, sizeof *of)) ||
      !(stage_of = ppi_arena_alloc(tmp, ctx, (size_t)n, sizeof *stage_of)) ||
      !(scr = ppi_arena_alloc(tmp, ctx, (size_t)S, sizeof *scr)))
    return PP_ENOMEM;
  clustered = !p->exact && n > K;
  if (clustered) {
    double nfmax = 0, lim = INFINITY;
    for (s = 0; s < S; s++) {
      nfmax = c->nf[s] > nfmax ? c->nf[s] : nfmax;
      lim = c->mem[s] < lim ? c->mem[s] : lim;
    }
    if ((rc = ppi_dag_cluster(ctx, &g, K, p->alpha, lim, nfmax, of, &k)) ||
        (rc = ppi_dag_contract(ctx, tmp, &g, of, k, &h)))
      return rc;
  } else {
    for (v = 0; v < n; v++)
      of[v] = v;
    h = g;
    k = n;
  }
  if (k < S)
    return ppi_fail(ctx, PP_EINPUT,
                    "partition: %d stages for %d operators of '%s'; at most "
                    "one stage per operator",
                    (int)S, (int)k, pp_model_name(m));
  if (!(hstage = ppi_arena_alloc(tmp, ctx, (size_t)k, sizeof *hstage)))
    return PP_ENOMEM;
  rc = ppi_dag_dp_ideals(ctx, &h,
                         p->exact ? PPI_DOWNSETS_EXACT : PPI_DOWNSETS_AUTO, mem,
                         hstage, &obj, &done);
  if (rc == PP_EINPUT && mem) { /* nothing fits: the best without limits */
    pt->sum.fits = 0;
    rc = ppi_dag_dp_ideals(ctx, &h,
                           p->exact ? PPI_DOWNSETS_EXACT : PPI_DOWNSETS_AUTO, 0,
                           hstage, &obj, &done);
    mem = false;
  }
  if (rc)
    return rc;
  if (!done) {
    int32_t *order;
    if (p->exact)
      return ppi_fail(ctx, PP_ELIMIT,
                      "partition: model '%s' has more than %lld fronted "
                      "subgraphs (down-sets); the exact DP is out of reach, "
                      "drop --exact for clustering and the DP over one "
                      "topological order",
                      pp_model_name(m), (long long)PPI_DOWNSETS_EXACT);
    if (!(order = ppi_arena_alloc(tmp, ctx, (size_t)k, sizeof *order)))
      return PP_ENOMEM;
    if ((rc = ppi_dag_order(ctx, &h, order)))
      return rc;
    rc = ppi_dag_dp_prefix(ctx, &h, order, mem, hstage, &obj);
    if (rc == PP_EINPUT && mem) {
      rc = ppi_dag_dp_prefix(ctx, &h, order, 0, hstage, &obj);
      mem = false;
    }
    if (rc)
      return rc;
  }
  for (v = 0; v < n; v++)
    stage_of[v] = hstage[of[v]];
  {
    /* the layer-level partition, when it is better and fits */
    int32_t *alt;
    bool ok;
    if (!(alt = ppi_arena_alloc(tmp, ctx, (size_t)n, sizeof *alt)))
      return PP_ENOMEM;
    if ((rc = layer_candidate(ctx, tmp, c, view, mem, alt, &ok)))
      return rc;
    if (ok) {
      double *ta, *ma;
      bool fits = true;
      if (!(ta = ppi_arena_alloc(tmp, ctx, (size_t)S, sizeof *ta)) ||
          !(ma = ppi_arena_alloc(tmp, ctx, (size_t)S, sizeof *ma)))
        return PP_ENOMEM;
      ppi_dag_eval(&g, alt, ta, ma);
      for (s = 0; s < S && mem; s++)
        fits = fits && ma[s] <= c->mem[s];
      pt->sum.dag_layer_ms = ppi_dag_objective(&g, alt, scr);
      if (fits && ppi_dag_objective(&g, alt, scr) <
                      ppi_dag_objective(&g, stage_of, scr)) {
        memcpy(stage_of, alt, (size_t)n * sizeof *alt);
        pt->sum.dag_layer_start = 1;
      }
    }
  }
  if (p->refine_steps > 0 &&
      (rc = ppi_dag_refine(ctx, &g, p->refine_steps, mem, stage_of, &moves)))
    return rc;
  pt->sum.seconds = ppi_now_s() - t0;
  pt->sum.dag_ops = n;
  pt->sum.dag_clusters = k;
  pt->sum.dag_moves = moves;
  pt->sum.dag_downsets = done;
  pt->sum.exact = done && !clustered;
  pt->sum.objective_ms = ppi_dag_objective(&g, stage_of, scr);
  return fill_dag(ctx, pt, &g, m, stage_of, mbs);
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

pp_status pp_partition_chain(pp_ctx *ctx, const pp_model *m,
                             const pp_part_params *p, pp_partition **out)
{
  struct pp_partition *pt = NULL;
  struct ppi_arena tmp;
  struct ppi_chain c;
  pp_model *v = NULL;
  int32_t *first = NULL, S, s, mbs;
  double obj = 0, t0;
  pp_status rc;

  if (!ctx || !m || !p || !out)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_partition_chain: NULL argument")
               : PP_EINVAL;
  *out = NULL;
  if ((rc = pp_model_chain_view(ctx, m, 0, &v)))
    return rc;
  ppi_arena_init(&tmp, ppi_ctx_alloc(ctx));
  if ((rc = check_params(ctx, m, pp_model_nop(v), p)))
    goto done;
  if ((p->objective == PP_OBJ_MADPIPE || p->method == PP_PART_PIPEDREAM_STAR) &&
      p->devices) {
    rc = ppi_fail(ctx, PP_EINPUT,
                  "partition: madpipe and pipedream-star assume identical "
                  "processors on a flat network (MadPipe's model); give "
                  "--bandwidth and --memory-gb instead of --devices");
    goto done;
  }
  if (p->objective == PP_OBJ_MADPIPE &&
      pp_model_nop(v) > PPI_MADPIPE_MAX_LAYERS) {
    rc = ppi_fail(ctx, PP_ELIMIT,
                  "partition: MadPipe takes chains of at most %d layers; the "
                  "chain view of '%s' has %d (its DP and ILP grow with the "
                  "layers; MadPipe's paper used 40 to 80)",
                  PPI_MADPIPE_MAX_LAYERS, pp_model_name(m),
                  (int)pp_model_nop(v));
    goto done;
  }
  if (p->objective == PP_OBJ_MADPIPE && p->method != PP_PART_OPTIMAL &&
      p->method != PP_PART_PIPEDREAM_STAR) {
    rc = ppi_fail(ctx, PP_EINPUT,
                  "partition: the madpipe objective's methods are optimal "
                  "(MadPipe) and pipedream-star, not %s",
                  pp_part_method_name(p->method));
    goto done;
  }
  mbs = p->micro_batch > 0 ? p->micro_batch : pp_model_micro_batch(m);
  S = p->stages;
  if (!(pt = ppi_calloc(ctx, 1, sizeof *pt))) {
    rc = PP_ENOMEM;
    goto done;
  }
  ppi_arena_init(&pt->arena, ppi_ctx_alloc(ctx));
  pt->micro_batch = mbs;
  pt->replicas = p->replicas;
  pt->gas = p->gas;
  pt->schedule = p->schedule;
  pt->optimizer = p->optimizer;
  pt->bandwidth_gbps = p->bandwidth_gbps;
  pt->latency_us = p->latency_us;
  if (!(pt->model_name = ppi_arena_strdup(&pt->arena, ctx, pp_model_name(m)))) {
    rc = PP_ENOMEM;
    goto done;
  }
  if (p->devices) {
    struct ppi_arena *ar = &pt->arena;
    if (!PPI_ARENA_NEW(ar, ctx, pt->dev, S) ||
        !PPI_ARENA_NEW(ar, ctx, pt->dev_name, S)) {
      rc = PP_ENOMEM;
      goto done;
    }
    for (s = 0; s < S; s++) {
      pp_device_desc d;
      pt->dev[s] = p->devices[s];
      pp_cluster_device(p->cluster, p->devices[s], &d);
      if (!(pt->dev_name[s] = ppi_arena_strdup(ar, ctx, d.name))) {
        rc = PP_ENOMEM;
        goto done;
      }
    }
    pt->latency_us = pp_cluster_latency(p->cluster);
  }
  if ((rc = build_chain(ctx, &tmp, v, p, S, mbs, &c, &pt->est)))
    goto done;
  if (!(first = ppi_arena_alloc(&tmp, ctx, (size_t)S + 1, sizeof *first))) {
    rc = PP_ENOMEM;
    goto done;
  }
  pt->sum.objective = p->objective;
  pt->sum.method = p->method;
  pt->sum.nproc = S;
  pt->sum.nlayer = c.L;
  if (p->objective == PP_OBJ_MADPIPE || p->method == PP_PART_PIPEDREAM_STAR) {
    rc = periodic(ctx, pt, &c, m, v, p, &tmp);
    goto periodic_done;
  }
  if (p->objective == PP_OBJ_MINMAX && p->method == PP_PART_OPTIMAL &&
      !p->devices && !p->layer_level && p->tp == 1 && !p->recompute &&
      !pp_model_is_chain(m)) {
    pt->sum.fits = 1;
    rc = dagflow(ctx, pt, m, v, p, &c, mbs, &tmp);
    goto periodic_done;
  }
  t0 = ppi_now_s();
  {
    bool mem = false;
    for (s = 0; s < S; s++)
      mem = mem || isfinite(c.mem[s]);
    switch (p->method) {
    case PP_PART_OPTIMAL:
      if (p->objective == PP_OBJ_MINMAX)
        rc = ppi_part_minmax(ctx, &c, mem, first, &obj);
      else
        rc = ppi_part_amp(ctx, &c, first, &obj, &pt->sum.work);
      pt->sum.exact = rc == PP_OK;
      if (rc == PP_EINPUT) /* nothing fits: the closest */
        rc = ppi_part_minmem(ctx, &c, first, &obj);
      break;
    case PP_PART_UNIFORM_LAYERS: ppi_part_uniform_layers(c.L, S, first); break;
    case PP_PART_UNIFORM_PARAMS:
      rc = ppi_part_uniform_params(ctx, c.pp, c.L, S, first);
      break;
    case PP_PART_PIPEDREAM:
      rc = ppi_part_minmax(ctx, &c, 0, first, &obj);
      pt->sum.exact = rc == PP_OK && p->objective == PP_OBJ_MINMAX && !mem;
      break;
    case PP_PART_AMP_ORIGINAL:
      rc = p->amp_inputs ? amp_original_inputs(ctx, &tmp, v, p, &c, mbs, first)
                         : amp_original_chain(ctx, &tmp, &c, first);
      break;
    default: rc = ppi_fail(ctx, PP_EINVAL, "partition: unknown method");
    }
  }
  pt->sum.seconds = ppi_now_s() - t0;
  if (rc)
    goto done;
  if ((rc = fill(ctx, pt, &c, m, v, first, S, NULL, NULL, NULL)))
    goto done;
  if (0) {
  periodic_done:
    if (rc)
      goto done;
    *out = pt;
    pt = NULL;
    goto done;
  }
  pt->sum.nstage = S;
  pt->sum.objective_ms = p->objective == PP_OBJ_MINMAX
                             ? ppi_ch_minmax_of(&c, first)
                             : ppi_ch_amp_of(&c, first);
  for (s = 0; s < S; s++)
    pt->st[s].time_ms = p->objective == PP_OBJ_MINMAX
                            ? ppi_ch_minmax(&c, s, first[s], first[s + 1] - 1)
                            : ppi_ch_work(&c, s, first[s], first[s + 1] - 1);
  if (!pt->sum.fits)
    pt->sum.exact = 0;
  pt->sum.lower_bound_ms = lower_bound(&c, p->objective);
  *out = pt;
  pt = NULL;
done:
  pp_partition_destroy(pt);
  ppi_arena_free(&tmp);
  pp_model_destroy(v);
  return rc;
}

pp_status pp_partition_stage_graph(pp_ctx *ctx, const pp_partition *pt,
                                   pp_stage_graph **out)
{
  struct pp_stage_graph *g;
  struct ppi_arena *ar;
  int32_t s, e;
  if (!ctx || !pt || !out)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_partition_stage_graph: NULL")
               : PP_EINVAL;
  *out = NULL;
  if (!(g = ppi_calloc(ctx, 1, sizeof *g)))
    return PP_ENOMEM;
  ppi_arena_init(&g->arena, ppi_ctx_alloc(ctx));
  ar = &g->arena;
  g->S = pt->S;
  g->ne = pt->ne;
  if (!(g->source = ppi_arena_strdup(ar, ctx, pt->model_name)) ||
      !PPI_ARENA_NEW(ar, ctx, g->name, g->S) ||
      !PPI_ARENA_NEW(ar, ctx, g->compute, g->S) ||
      !PPI_ARENA_NEW(ar, ctx, g->param, g->S) ||
      !PPI_ARENA_NEW(ar, ctx, g->from, g->ne) ||
      !PPI_ARENA_NEW(ar, ctx, g->to, g->ne) ||
      !PPI_ARENA_NEW(ar, ctx, g->bytes, g->ne)) {
    pp_stage_graph_destroy(g);
    return PP_ENOMEM;
  }
  for (s = 0; s < g->S; s++) {
    char buf[32];
    snprintf(buf, sizeof buf, "stage%d", (int)s);
    if (!(g->name[s] = ppi_arena_strdup(ar, ctx, buf))) {
      pp_stage_graph_destroy(g);
      return PP_ENOMEM;
    }
    g->compute[s] = pt->sg_compute[s];
    g->param[s] = pt->sg_param[s];
  }
  for (e = 0; e < g->ne; e++) {
    g->from[e] = pt->e[e].a;
    g->to[e] = pt->e[e].b;
    g->bytes[e] = pt->e[e].bytes;
  }
  *out = g;
  return PP_OK;
}
