/* SPDX-License-Identifier: MIT */
/*
** Pricing the parts of a plan (docs/DESIGN.md, "Units and the cost model";
** docs/COST_MODEL.md).
**
** Objective: for every stage replica, the time of one micro-batch's
** forward, backward, recomputation and optimizer step on its devices
** (the slowest tensor-parallel rank sets the pace, since the ranks of a
** group run every layer in lockstep); for every stage, its parameter,
** activation and boundary bytes per rank; the stage graph; the gradient
** allreduce of every stage.
**
** Choices the papers leave open, and why:
** - A tensor leaves its operator once per destination stage, however
**   many operators of that stage read it (what an engine sends); the
**   stage graph edge carries the largest of those edges' bytes.
** - With tensor parallelism every rank sends 1/tp of a boundary tensor
**   to the same rank of the next stage (Megatron's scatter/gather of
**   pipeline tensors), so p2p runs on tp links at once.
** - A tied group of parameters (an embedding shared by the first and the
**   last stage) counts once in a stage that holds any of its operators;
**   DeepSpeed and Megatron all-reduce its gradient between the copies
**   (tied_sync), the other engines do not.
** - Activations and boundary tensors scale linearly with the micro-batch
**   size from the model's reference size (pp_model_op_sizes).
**
** Complexity: O(R x tp x ops-per-stage x lookups) for the times (cached
** per stage and device type), O(edges log edges) for the stage graph,
** O(R) per allreduce.
*/
#include "cost/cost.h"
#include "cost/cost_eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void pp_cost_params_init(pp_cost_params *p)
{
  if (!p)
    return;
  memset(p, 0, sizeof *p);
  p->kind = PP_COST_PARPLAN;
  p->allreduce = PP_AR_AUTO;
  p->network = PP_NET_CHANNELS;
  p->record = 1;
}

static const char *const kind_names[] = {"parplan", "amp"};
static const char *const allreduce_names[] = {"auto", "ring", "hier"};
static const char *const network_names[] = {"channels", "links"};

const char *pp_cost_kind_name(pp_cost_kind k)
{
  return ppi_enum_name(kind_names, PPI_COUNT(kind_names), (int)k);
}

const char *pp_allreduce_name(pp_allreduce a)
{
  return ppi_enum_name(allreduce_names, PPI_COUNT(allreduce_names), (int)a);
}

const char *pp_sim_network_name(pp_sim_network n)
{
  return ppi_enum_name(network_names, PPI_COUNT(network_names), (int)n);
}

const pp_calib_entry *ppi_cost_calib(const struct ppi_cost *k, int32_t type)
{
  return k->cp.calibration
             ? pp_calibration_find(k->cp.calibration, k->c->type_name[type],
                                   k->engine, k->prec)
             : NULL;
}

/* TUNING: the spreads of an uncalibrated prediction, relative standard
** deviations: time 0.12, the root mean square of the relative errors on
** the larger of bench_fidelity's two uncalibrated sets (AMP's 47 runs
** under their settings, 11% under on average); memory 0.025, so that
** two spreads are the planner's default margin of 5%
** (PPI_SEARCH_MEMORY_MARGIN), on a model whose error on the one measured
** set is 0.8% on average, 2.9% at worst (docs/COST_MODEL.md, "Fidelity"). */
#define DEFAULT_TIME_SPREAD 0.12
#define DEFAULT_MEMORY_SPREAD 0.025

double ppi_cost_memory_spread(const struct ppi_cost *k, int32_t d, double live,
                              double total, int *calibrated)
{
  const pp_calib_entry *ce = ppi_cost_calib(k, k->c->dev_type[d]);
  double a, b, c;
  *calibrated = ce && ce->memory_runs > 0 && total > 0;
  if (!*calibrated)
    return DEFAULT_MEMORY_SPREAD;
  /* the residuals' spread and the fitted slack's and runtime's */
  a = isnan(ce->memory_rel_sd) ? 0 : ce->memory_rel_sd;
  b = isnan(ce->slack_sd) ? 0 : ce->slack_sd * live / total;
  c = isnan(ce->runtime_sd) ? 0 : ce->runtime_sd / total;
  return sqrt(a * a + b * b + c * c);
}

double ppi_cost_time_spread(const struct ppi_cost *k, double iter_ms,
                            double comm_ms, int *calibrated)
{
  int32_t s, r, t;
  double worst = 0, steps = 0, comp;
  *calibrated = 1;
  if (k->cp.kind == PP_COST_AMP) { /* AMP's conventions take no calibration */
    *calibrated = 0;
    return DEFAULT_TIME_SPREAD;
  }
  /* the critical path's micro-batch steps (the fixed cost's weight) and
  ** the compute's share of the iteration (the scale's and the
  ** exponent's); transfers and reductions: the network share's */
  for (s = 0; s < k->S; s++)
    if ((double)k->gas[s] > steps)
      steps = (double)k->gas[s];
  steps += k->S - 1;
  comm_ms = iter_ms > 0 && comm_ms > 0 ? comm_ms / iter_ms : 0;
  comp = 1 - (comm_ms < 1 ? comm_ms : 1);
  for (s = 0; s < k->S; s++)
    for (r = 0; r < ppi_cost_nrep(k, s); r++)
      for (t = 0; t < ppi_cost_tp(k, s); t++) {
        const pp_calib_entry *ce =
            ppi_cost_calib(k, k->c->dev_type[ppi_cost_dev(k, s, r, t)]);
        double x = DEFAULT_TIME_SPREAD;
        if (ce && ce->time_runs > 0) {
          /* the delta method on the iteration's parts: the residuals,
          ** then each fitted parameter's spread times the share of the
          ** iteration it scales (first order; the parameters' posterior
          ** correlations are left out) */
          double a = isnan(ce->time_rel_sd) ? 0 : ce->time_rel_sd;
          double b = ce->compute_scale > 0 && !isnan(ce->compute_sd)
                         ? comp * ce->compute_sd / ce->compute_scale
                         : 0;
          double c = !isnan(ce->step_ms) && ce->step_sd > 0 && iter_ms > 0
                         ? ce->step_sd * steps / iter_ms
                         : 0;
          double n = ce->net_scale > 0 && ce->net_sd > 0
                         ? comm_ms * ce->net_sd / ce->net_scale
                         : 0;
          double g = !isnan(ce->mbs_exponent) && ce->mbs_sd > 0
                         ? comp * ce->mbs_sd *
                               fabs(log((double)k->p->p.micro_batch /
                                        k->m->micro_batch))
                         : 0;
          double h = !isnan(ce->tp_exponent) && ce->tp_sd > 0
                         ? comp * ce->tp_sd * log((double)ppi_cost_tp(k, s))
                         : 0;
          /* the transfers' share, at most, for the links inside nodes */
          double w = ce->intra_scale > 0 && ce->intra_sd > 0
                         ? comm_ms * ce->intra_sd / ce->intra_scale
                         : 0;
          x = sqrt(a * a + b * b + c * c + n * n + g * g + h * h + w * w);
        } else {
          *calibrated = 0;
        }
        if (x > worst)
          worst = x;
      }
  if (!*calibrated) /* one type without a calibration: the default */
    worst = worst > DEFAULT_TIME_SPREAD ? worst : DEFAULT_TIME_SPREAD;
  return worst;
}

double ppi_cost_net_share(const struct ppi_cost *k, int32_t i, int32_t j)
{
  const pp_calib_entry *ce;
  if (!k->cp.calibration || i == j ||
      !(ce = ppi_cost_calib(k, k->c->dev_type[i])))
    return 1;
  if (k->c->dev_node[i] != k->c->dev_node[j])
    return isnan(ce->net_scale) ? 1 : ce->net_scale;
  return isnan(ce->intra_scale) ? 1 : ce->intra_scale;
}

double ppi_cost_bw(const struct ppi_cost *k, int32_t i, int32_t j)
{
  return pp_cluster_bandwidth(k->c, i, j) * ppi_cost_net_share(k, i, j);
}

double ppi_cost_comm(const struct ppi_cost *k, int32_t i, int32_t j,
                     double bytes)
{
  if (i == j || !(bytes > 0))
    return 0;
  return k->c->latency_us / 1000.0 + bytes / (ppi_cost_bw(k, i, j) * 1e6);
}

double ppi_cost_edge_ms(const struct ppi_cost *k, const struct ppi_sedge *e,
                        int32_t ra, int32_t rb)
{
  double worst = 0, per = ppi_cost_pair_bytes(k, e->a, e->b, e->bytes);
  int32_t t, n = ppi_cost_npair(k, e->a, e->b), ta = ppi_cost_tp(k, e->a),
             tb = ppi_cost_tp(k, e->b);
  for (t = 0; t < n; t++) {
    double x = ppi_cost_comm(k, ppi_cost_dev(k, e->a, ra, t % ta),
                             ppi_cost_dev(k, e->b, rb, t % tb), per);
    if (x > worst)
      worst = x;
  }
  return worst * ppi_cost_pair_fan(k, e->a, e->b);
}

static int cmp_sedge(const void *x, const void *y)
{
  const struct ppi_sedge *a = x, *b = y;
  if (a->a != b->a)
    return a->a < b->a ? -1 : 1;
  if (a->b != b->b)
    return a->b < b->b ? -1 : 1;
  return 0;
}

/* The tensor-parallel allreduces an operator needs in each of its
** forward and backward passes when its time at the plan's tp was not
** measured (a measured profile has them inside): Megatron's transformer
** block has two in each direction (the attention's and the MLP's
** RowParallelLinear reduce their outputs forward; the ColumnParallel-
** Linear inputs' gradients are reduced backward), an operator with
** parameters split over the group one, an operator without parameters
** none (docs/COST_MODEL.md, "Tensor parallelism").  Under an engine only:
** "generic" prices tensor parallelism as it always did. */
static int tp_allreduces(const struct pp_model *m, int32_t v)
{
  const char *kind = m->op_kind[v];
  if (kind && (strcmp(kind, "transformer_layer") == 0 ||
               strcmp(kind, "transformer") == 0))
    return 2;
  return m->param[v] > 0 ? 1 : 0;
}

/* Stage times per device type: a stage's operators timed on type t;
** out[4] and out[5]: the bytes and the count of the tensor-parallel
** allreduces of one pass that the times do not include. */
static pp_status stage_times(struct ppi_cost *k, int32_t s,
                             const pp_type_key *key, double out[6])
{
  int32_t n, i;
  const int32_t *ops = pp_plan_stage_ops(k->p, s, &n);
  pp_status rc;
  double step =
      ppi_engine_step_bytes(k->engine, k->prec, k->zero, ppi_cost_nrep(k, s));
  double pass = ppi_engine_reduce_pass_bytes(k->engine, k->prec, k->zero,
                                             ppi_cost_nrep(k, s));
  /* memory-bound passes at the roofline's share of the bandwidth */
  double bw = key->mem_gbps * PPI_MEM_EFFICIENCY * 1e6;
  out[0] = out[1] = out[2] = out[3] = out[4] = out[5] = 0;
  for (i = 0; i < n; i++) {
    pp_op_time t;
    int nar;
    if ((rc = pp_model_op_time(k->m, ops[i], key, ppi_cost_tp(k, s),
                               k->p->p.micro_batch, &t)))
      return rc;
    out[0] += t.fwd_ms;
    out[1] += t.bwd_ms;
    out[3] += t.update_ms > 0 ? t.update_ms : 0;
    k->est |= t.est;
    if (bw > 0 && k->m->param[ops[i]] > 0 &&
        ((!(t.update_ms > 0) && step > 0) || pass > 0)) {
      /* the step where not profiled, and the reduction's passes: both
      ** memory-bound (docs/COST_MODEL.md, "Optimizer step") */
      pp_op_sizes z;
      if ((rc = pp_model_op_sizes(k->m, ops[i], ppi_cost_tp(k, s),
                                  k->p->p.micro_batch, &z)))
        return rc;
      out[3] += z.param_bytes / pp_precision_bytes(k->m->dtype) *
                ((t.update_ms > 0 ? 0 : step) + pass) / bw;
    }
    if (ppi_cost_tp(k, s) > 1 && k->engine != PP_ENGINE_GENERIC &&
        (t.est & (PP_EST_TP | PP_EST_FLOPS)) &&
        (nar = tp_allreduces(k->m, ops[i])) > 0) {
      pp_op_sizes z; /* the whole tensor: every rank ends with all of it */
      if ((rc = pp_model_op_sizes(k->m, ops[i], 1, k->p->p.micro_batch, &z)))
        return rc;
      if (z.out_bytes > 0) { /* no tensor, no collective */
        out[4] += nar * z.out_bytes * k->ratio;
        out[5] += nar;
      }
    }
  }
  out[2] = k->p->p.recompute ? out[0] : 0;
  return PP_OK;
}

/* count ring collectives over n ranks at their slowest hop, bmin GB/s,
** moving bytes in all: passes passes (an allreduce is 2, a
** reduce-scatter or an all-gather 1) of (n - 1) / n of the bytes and
** n - 1 latencies each. */
static double ring_ms(const struct ppi_cost *k, int32_t n, double bmin,
                      double bytes, double passes, double count)
{
  if (n < 2 || bytes <= 0)
    return 0;
  return passes * (n - 1) / n * bytes / (bmin * 1e6) +
         passes * (n - 1) * count * k->c->latency_us / 1000;
}

/* The slowest link of the ring over replica r of stage s's tp ranks. */
static double tp_ring_bw(const struct ppi_cost *k, int32_t s, int32_t r)
{
  int32_t t, tp = ppi_cost_tp(k, s);
  double bmin = INFINITY;
  for (t = 0; t < tp; t++) {
    double bw = ppi_cost_bw(k, ppi_cost_dev(k, s, r, t),
                            ppi_cost_dev(k, s, r, (t + 1) % tp));
    if (bw < bmin)
      bmin = bw;
  }
  return bmin;
}

/* One pass's tensor-parallel allreduces of replica q of stage s: bytes
** and count in rings over its tp ranks at the slowest ring link. */
static double tp_comm_ms(const struct ppi_cost *k, int32_t s, int32_t r,
                         double bytes, double count)
{
  return count > 0 ? ring_ms(k, ppi_cost_tp(k, s), tp_ring_bw(k, s, r), bytes,
                             2, count)
                   : 0;
}

/* One reduce-scatter or all-gather of bytes (per rank, whole) over the
** replicas of stage s: a ring per tp rank at the slowest ring link. */
static double dp_ring_ms(const struct ppi_cost *k, int32_t s, double bytes)
{
  int32_t R = ppi_cost_nrep(k, s), r, t;
  double bmin = INFINITY;
  for (t = 0; t < ppi_cost_tp(k, s) && R > 1; t++)
    for (r = 0; r < R; r++) {
      double bw = ppi_cost_bw(k, ppi_cost_dev(k, s, r, t),
                              ppi_cost_dev(k, s, (r + 1) % R, t));
      if (bw < bmin)
        bmin = bw;
    }
  return ring_ms(k, R, bmin, bytes, 1, 1);
}

/* The collectives ZeRO adds to every micro-batch of stage s: stage 2
** reduce-scatters the gradients in each backward (its partitioned
** gradients cannot accumulate whole); stage 3 and FSDP also all-gather
** the parameters before the forward and again before the backward
** (reshard after forward).  The engines prefetch them behind compute
** (DeepSpeed's overlap_comm, on for stage 3, zero/config.py:351-353;
** FSDP2's prefetching), so they cost only what compute does not hide. */
static void zero_collectives(const struct ppi_cost *k, int32_t s, double *ag,
                             double *rs, double *first, double *last)
{
  double w = pp_precision_bytes(k->prec), n = k->nparam[s];
  double g = ppi_engine_grad_bytes(k->engine, k->prec);
  *ag = *rs = *first = *last = 0;
  if (k->engine == PP_ENGINE_GENERIC || k->zero < 2)
    return;
  *rs = dp_ring_ms(k, s, n * g);
  /* nothing hides the last module's reduce-scatter, nor (stage 3) the
  ** first module's gather; the largest operator stands for a module */
  *last = dp_ring_ms(k, s, k->opmax[s] * g);
  if (k->zero >= 3) {
    *ag = dp_ring_ms(k, s, n * w);
    *first = dp_ring_ms(k, s, k->opmax[s] * w);
  }
}

static pp_status replica_times(pp_ctx *ctx, struct ppi_cost *k)
{
  int32_t nt = k->c->ntype, s, r, t;
  double *cache;
  uint8_t *have;
  pp_status rc = PP_OK;

  if (!PPI_NEW(ctx, cache, (size_t)nt * 6) || !PPI_NEW(ctx, have, nt)) {
    ppi_free(ctx, cache, (size_t)nt * 6 * sizeof *cache);
    return PP_ENOMEM;
  }
  for (s = 0; s < k->S && !rc; s++) {
    double zag, zrs, zfirst, zlast;
    zero_collectives(k, s, &zag, &zrs, &zfirst, &zlast);
    memset(have, 0, (size_t)nt);
    for (r = 0; r < ppi_cost_nrep(k, s) && !rc; r++) {
      int32_t q = k->p->rep_off[s] + r;
      for (t = 0; t < ppi_cost_tp(k, s) && !rc; t++) {
        int32_t d = ppi_cost_dev(k, s, r, t), ty = k->c->dev_type[d];
        double *x = cache + (size_t)ty * 6, cm, f, b, rcm;
        if (!have[ty]) {
          pp_type_key key = pp_model_type_key(k->m, k->c, d);
          const pp_calib_entry *ce = ppi_cost_calib(k, ty);
          key.precision = k->prec;
          if ((rc = stage_times(k, s, &key, x)))
            break;
          /* a calibration scales the compute measured on this type and
          ** adds its fixed cost per micro-batch (docs/COST_MODEL.md,
          ** "Calibration") */
          if (ce && (!isnan(ce->compute_scale) || !isnan(ce->mbs_exponent) ||
                     !isnan(ce->tp_exponent))) {
            double sc = ppi_calib_compute_factor(
                ce, k->p->p.micro_batch, k->m->micro_batch, ppi_cost_tp(k, s));
            x[0] *= sc;
            x[1] *= sc;
            x[2] *= sc;
          }
          if (ce && !isnan(ce->step_ms))
            x[0] += ce->step_ms;
          have[ty] = 1;
        }
        cm = tp_comm_ms(k, s, r, x[4], x[5]);
        f = x[0] + cm;
        b = x[1] + cm;
        rcm = x[2] > 0 ? x[2] + cm : 0;
        if (zag > 0 || zrs > 0) { /* ZeRO-2/3: prefetched collectives */
          f = (f > zag ? f : zag) + zfirst;
          b = (b > zag + zrs ? b : zag + zrs) + zlast;
          if (rcm > 0)
            rcm = (rcm > zag ? rcm : zag) + zfirst;
        }
        if (f + b + rcm > k->comp[q]) {
          k->f[q] = f;
          k->b[q] = b;
          k->rc[q] = rcm;
          k->comp[q] = f + b + rcm;
        }
        if (x[3] > k->u[q])
          k->u[q] = x[3];
      }
    }
  }
  ppi_free(ctx, cache, (size_t)nt * 6 * sizeof *cache);
  ppi_free(ctx, have, (size_t)nt);
  return rc;
}

static pp_status stage_sizes(pp_ctx *ctx, struct ppi_cost *k)
{
  const struct pp_model *m = k->m;
  int32_t s, i, n, v;
  uint8_t *seen;
  pp_status rc = PP_OK;

  if (!PPI_NEW(ctx, seen, m->nop))
    return PP_ENOMEM;
  for (s = 0; s < k->S && !rc; s++) {
    const int32_t *ops = pp_plan_stage_ops(k->p, s, &n);
    for (i = 0; i < n && !rc; i++) {
      pp_op_sizes z;
      int32_t root;
      v = ops[i];
      if ((rc = pp_model_op_sizes(m, v, ppi_cost_tp(k, s), k->p->p.micro_batch,
                                  &z)))
        break;
      k->est |= z.est;
      k->saved[s] += z.saved_bytes;
      if (z.param_bytes > k->opmax[s])
        k->opmax[s] = z.param_bytes;
      root = m->tied[v] >= 0 ? m->tied[v] : v;
      if (!seen[root]) {
        pp_op_sizes zr;
        seen[root] = 1;
        if (root != v && (rc = pp_model_op_sizes(m, root, ppi_cost_tp(k, s),
                                                 k->p->p.micro_batch, &zr)))
          break;
        k->param[s] += root == v ? z.param_bytes : zr.param_bytes;
      }
    }
    for (i = 0; i < n; i++) { /* clear for the next stage */
      v = ops[i];
      seen[m->tied[v] >= 0 ? m->tied[v] : v] = 0;
    }
    k->nparam[s] = k->param[s] / pp_precision_bytes(m->dtype);
    k->opmax[s] /= pp_precision_bytes(m->dtype);
    k->param[s] *= k->ratio;
    k->saved[s] *= k->ratio;
  }
  ppi_free(ctx, seen, (size_t)m->nop);
  return rc;
}

pp_status ppi_stage_edges(pp_ctx *ctx, const struct pp_model *m,
                          const int32_t *stage_of, double scale,
                          struct ppi_sedge **out, int32_t *nout)
{
  struct ppi_sedge *tmp;
  int32_t e, n = 0, i, j;

  if (!PPI_NEW(ctx, tmp, m->nedge))
    return PP_ENOMEM;
  for (e = 0; e < m->nedge; e++) {
    int32_t a = stage_of[m->esrc[e]], b = stage_of[m->edst[e]];
    if (a != b) {
      /* key (a, b) but per source operator: encode the source in a */
      tmp[n].a = m->esrc[e];
      tmp[n].b = b;
      tmp[n].bytes = (double)m->ebytes[e] * scale;
      n++;
    }
  }
  qsort(tmp, (size_t)n, sizeof *tmp, cmp_sedge);
  /* one tensor per (source operator, destination stage) */
  for (i = 0, j = 0; i < n; i++) {
    if (j > 0 && tmp[j - 1].a == tmp[i].a && tmp[j - 1].b == tmp[i].b) {
      if (tmp[i].bytes > tmp[j - 1].bytes)
        tmp[j - 1].bytes = tmp[i].bytes;
      continue;
    }
    tmp[j++] = tmp[i];
  }
  n = j;
  for (i = 0; i < n; i++)
    tmp[i].a = stage_of[tmp[i].a];
  qsort(tmp, (size_t)n, sizeof *tmp, cmp_sedge);
  for (i = 0, j = 0; i < n; i++) {
    if (j > 0 && tmp[j - 1].a == tmp[i].a && tmp[j - 1].b == tmp[i].b) {
      tmp[j - 1].bytes += tmp[i].bytes;
      continue;
    }
    tmp[j++] = tmp[i];
  }
  *out = tmp;
  *nout = j;
  return PP_OK;
}

void ppi_stage_edges_free(pp_ctx *ctx, const struct pp_model *m,
                          struct ppi_sedge *e)
{
  if (e)
    ppi_free(ctx, e, ((size_t)m->nedge > 0 ? (size_t)m->nedge : 1) * sizeof *e);
}

/* The stage graph of the plan. */
static pp_status stage_graph(pp_ctx *ctx, struct ppi_cost *k)
{
  double scale = (double)k->p->p.micro_batch / k->m->micro_batch * k->ratio;
  int32_t i;
  pp_status rc;

  if ((rc = ppi_stage_edges(ctx, k->m, k->stage_of, scale, &k->e, &k->ne)))
    return rc;
  for (i = 0; i < k->ne; i++) {
    k->xout[k->e[i].a] += ppi_cost_p2p_bytes(k, k->e[i].a, k->e[i].bytes);
    k->xin[k->e[i].b] += ppi_cost_p2p_bytes(k, k->e[i].b, k->e[i].bytes);
  }
  return PP_OK;
}

/* What stage s reduces after its last backward, as the bytes of an
** allreduce of the same cost: ZeRO-1 reduce-scatters the gradients and
** all-gathers the updated parameters (an allreduce's volume); ZeRO-2
** reduced its gradients in every backward and only all-gathers the
** parameters (half an allreduce of the weight bytes); ZeRO-3 keeps them
** sharded for the next forward's gather (nothing).  "generic": the
** parameter bytes. */
static double grad_bytes(const struct ppi_cost *k, int32_t s)
{
  if (k->engine == PP_ENGINE_GENERIC)
    return k->param[s];
  if (k->zero == 2)
    return k->nparam[s] * pp_precision_bytes(k->prec) / 2;
  if (k->zero >= 3)
    return 0;
  return k->nparam[s] * ppi_engine_grad_bytes(k->engine, k->prec);
}

/* The share of stage s's reduction that its last backward does not
** hide, for engines that overlap them (engine.c): the reduction starts
** bucket by bucket as gradients become ready, so all but the last
** bucket can hide behind the backward of the last micro-batch. */
static double exposed_share(const struct ppi_cost *k, int32_t s, double ar)
{
  double b = 0, G = grad_bytes(k, s), last, x;
  int32_t r;
  if (!k->rules->overlap || ar <= 0 || G <= 0)
    return 1;
  for (r = 0; r < ppi_cost_nrep(k, s); r++)
    if (k->b[k->p->rep_off[s] + r] > b)
      b = k->b[k->p->rep_off[s] + r];
  last = k->rules->bucket_bytes / G;
  if (last > 1)
    last = 1;
  x = (ar - b) / ar;
  return x > last ? x : last;
}

/* The hierarchical grouping of stage s's replicas for tp rank t: by
** node in order of first appearance, idx[a * PPI_HIER_MAX_PER_NODE + j]
** the j-th replica on the a-th node; applies (1) when there are >= 2
** nodes, each with the same number kk >= 2 of the stage's replicas. */
static int hier_group(const struct ppi_cost *k, int32_t s, int32_t t,
                      int32_t *nn_out, int32_t *kk_out, int32_t *idx)
{
  int32_t R = ppi_cost_nrep(k, s), r, nn = 0, a, kk;
  int32_t nodes[PPI_HIER_MAX_NODES], cnt[PPI_HIER_MAX_NODES];
  if (R < 4)
    return 0;
  for (r = 0; r < R; r++) {
    int32_t node = k->c->dev_node[ppi_cost_dev(k, s, r, t)];
    for (a = 0; a < nn && nodes[a] != node; a++)
      ;
    if (a == nn) {
      if (nn == PPI_HIER_MAX_NODES)
        return 0;
      nodes[nn] = node;
      cnt[nn++] = 0;
    }
    if (cnt[a] == PPI_HIER_MAX_PER_NODE)
      return 0;
    idx[a * PPI_HIER_MAX_PER_NODE + cnt[a]++] = r;
  }
  if (nn < 2)
    return 0;
  kk = cnt[0];
  for (a = 1; a < nn; a++)
    if (cnt[a] != kk)
      return 0;
  if (kk < 2)
    return 0;
  *nn_out = nn;
  *kk_out = kk;
  return 1;
}

/* The hops of stage s's reduction, kind 0: the ring in replica order
** (per tp rank, wrap-around included); kinds 1 and 2, when the
** hierarchical reduction applies to every tp rank: its rings inside the
** nodes and across them.  Returns whether the hierarchical applies. */
typedef void (*hop_fn)(void *arg, int kind, int32_t i, int32_t j);
static int visit_hops(const struct ppi_cost *k, int32_t s, hop_fn fn, void *arg)
{
  int32_t R = ppi_cost_nrep(k, s), r, t, nn, kk, a, j;
  int32_t idx[PPI_HIER_MAX_NODES * PPI_HIER_MAX_PER_NODE];
  int hier = 1;
  if (R <= 1)
    return 0;
  for (t = 0; t < ppi_cost_tp(k, s); t++)
    for (r = 0; r < R; r++)
      fn(arg, 0, ppi_cost_dev(k, s, r, t), ppi_cost_dev(k, s, (r + 1) % R, t));
  for (t = 0; t < ppi_cost_tp(k, s) && hier; t++)
    hier = hier_group(k, s, t, &nn, &kk, idx);
  for (t = 0; t < ppi_cost_tp(k, s) && hier; t++) {
    hier_group(k, s, t, &nn, &kk, idx);
    for (a = 0; a < nn; a++)
      for (j = 0; j < kk; j++) {
        int32_t x = idx[a * PPI_HIER_MAX_PER_NODE + j];
        fn(arg, 1, ppi_cost_dev(k, s, x, t),
           ppi_cost_dev(k, s, idx[a * PPI_HIER_MAX_PER_NODE + (j + 1) % kk],
                        t));
        fn(arg, 2, ppi_cost_dev(k, s, x, t),
           ppi_cost_dev(k, s, idx[((a + 1) % nn) * PPI_HIER_MAX_PER_NODE + j],
                        t));
      }
  }
  return hier;
}

/* Shared links: how many of the reductions' concurrent hops of each
** kind cross each directed link resource (all stages reduce at once). */
struct share {
  const struct ppi_cost *k;
  pp_ctx *ctx;
  struct ppi_routes *rt; /* NULL: no link graph */
  int32_t *cnt[3];       /* [2 x links] per kind */
  int shared;            /* hop_min: divide by cnt (else pairwise) */
  double bmin[3];
  pp_status rc;
};

/* The path of (i, j), not copied (ppi_route_ref): *p until the next. */
static int32_t hop_path(struct share *x, int32_t i, int32_t j,
                        const int32_t **p)
{
  int32_t n = 0;
  *p = NULL;
  if (!x->rc)
    x->rc = ppi_route_ref(x->ctx, x->rt, i, j, p, &n);
  return x->rc ? 0 : n;
}

static void hop_count(void *arg, int kind, int32_t i, int32_t j)
{
  struct share *x = arg;
  const int32_t *p;
  int32_t n = hop_path(x, i, j, &p), h;
  for (h = 0; h < n; h++)
    x->cnt[kind][p[h]]++;
}

static void hop_min(void *arg, int kind, int32_t i, int32_t j)
{
  struct share *x = arg;
  double bw = INFINITY;
  if (x->rt && x->shared) {
    const int32_t *p;
    int32_t n = hop_path(x, i, j, &p), h;
    for (h = 0; h < n; h++) {
      double g = ppi_route_gbps(x->rt, p[h]) / x->cnt[kind][p[h]];
      if (g < bw)
        bw = g;
    }
  }
  if (!(bw < INFINITY))
    bw = pp_cluster_bandwidth(x->k->c, i, j);
  bw *= ppi_cost_net_share(x->k, i, j); /* what a calibration delivers */
  if (bw < x->bmin[kind])
    x->bmin[kind] = bw;
}

/* The slowest hop of each kind of stage s's reduction, with the links
** shared (x->cnt) or not (the pairwise bandwidths). */
static int slowest_hops(struct share *x, int32_t s, int shared, double b[3])
{
  int hier;
  x->shared = shared;
  x->bmin[0] = x->bmin[1] = x->bmin[2] = INFINITY;
  hier = visit_hops(x->k, s, hop_min, x);
  b[0] = x->bmin[0];
  b[1] = x->bmin[1];
  b[2] = x->bmin[2];
  return hier;
}

/* The hierarchical: reduce-scatter in a ring inside every node,
** allreduce of 1/kk of the bytes in kk rings across the nodes (the j-th
** replica of every node), all-gather inside the node. */
static double hier_time(const struct ppi_cost *k, int32_t s, double bin,
                        double bx)
{
  int32_t R = ppi_cost_nrep(k, s), nn, kk,
          idx[PPI_HIER_MAX_NODES * PPI_HIER_MAX_PER_NODE];
  double P = grad_bytes(k, s);
  if (!hier_group(k, s, 0, &nn, &kk, idx))
    return -1;
  kk = R / nn;
  return ring_ms(k, kk, bin, P, 2, 1) + ring_ms(k, nn, bx, P / kk, 2, 1);
}

/* Per stage: the state, transient and kept bytes of one rank under the
** plan's engine (engine.c); "generic" keeps the engine-free formula,
** the parameter bytes times the optimizer's factor. */
static void engine_memory(struct ppi_cost *k)
{
  int32_t s, last = -1;
  double fac = pp_optimizer_factor(k->p->p.optimizer);
  if (k->m->nop > 0)
    last = k->m->topo[k->m->nop - 1];
  for (s = 0; s < k->S; s++) {
    struct ppi_engine_mem em;
    if (k->engine == PP_ENGINE_GENERIC) {
      k->state[s] = k->param[s] * fac;
      continue;
    }
    ppi_engine_state(k->engine, k->prec, k->zero, ppi_cost_nrep(k, s),
                     k->nparam[s], &em);
    k->state[s] = em.state;
    k->transient[s] = em.step > em.reduce ? em.step : em.reduce;
    /* the model's output (logits) of the previous micro-batch */
    if (k->rules->keeps && last >= 0 && k->stage_of[last] == s) {
      pp_op_sizes z;
      if (pp_model_op_sizes(k->m, last, ppi_cost_tp(k, s), k->p->p.micro_batch,
                            &z) == PP_OK)
        k->keep[s] = z.out_bytes * k->ratio;
    }
  }
}

double ppi_cost_device_memory(const struct ppi_cost *k, int32_t d, double state,
                              double buffers, double live, double trans,
                              pp_device_memory *x)
{
  double peak, over;
  const pp_calib_entry *ce = ppi_cost_calib(k, k->c->dev_type[d]);
  x->model_bytes = state;
  x->activation_bytes = live;
  x->buffer_bytes = buffers;
  /* the step and the reduction run once the activations are freed:
  ** only what they need beyond the activation peak raises it */
  over = trans - live;
  x->transient_bytes = over > 0 ? over : 0;
  peak = state + live + buffers + x->transient_bytes;
  x->slack_bytes =
      peak * (ce && !isnan(ce->slack) ? ce->slack : k->rules->slack);
  x->runtime_bytes = ce && !isnan(ce->runtime_bytes)
                         ? ce->runtime_bytes
                         : ppi_engine_runtime_bytes(
                               k->engine, k->c->type_name[k->c->dev_type[d]]);
  x->total_bytes = peak + x->slack_bytes + x->runtime_bytes + x->reserve_bytes;
  x->spread =
      ppi_cost_memory_spread(k, d, peak, x->total_bytes, &x->calibrated);
  return x->total_bytes;
}

/* The cache of the slowest hops (cost_eval.h): an entry's key is
** everything slowest_hops reads besides the cluster's fixed routes; its
** value, per stage, the slowest hop of each kind unshared (b0) and
** shared (b1) and whether the hierarchical applies.  The planner's
** points of one layout (set, tp, pp, dp) differ in micro-batch,
** schedule and recomputation and come in the order of their bounds, so
** the cache keeps SHARE_ENTRIES layouts, replaced in turn. */
/* TUNING: 64 layouts, more than the device sets x tp x pp of a search
** usually prices (the rest are pruned); an entry holds O(devices). */
#define SHARE_ENTRIES 64

struct share_entry {
  int valid;
  const struct pp_cluster *c;
  const pp_calibration *cal;
  pp_engine engine;
  pp_precision prec;
  int32_t S, ndev;  /* ndev: devices in the key */
  int32_t *rep;     /* [2 S] replicas and tp degree per stage */
  uint8_t *reduces; /* [S] grad_bytes > 0 */
  int32_t *dev;     /* [ndev] in stage, replica, rank order */
  double *b0, *b1;  /* [3 S] */
  uint8_t *hier;    /* [S] */
};

/* The lower bounds of the plans priced (cost_eval.c): one per degrees,
** micro-batch, recomputation and run settings, which the planner's
** partitions of one point share.  TUNING: 16, past the (tp, micro-batch,
** recomputation) triples one worker meets in a row. */
#define LB_ENTRIES 16
struct lb_entry {
  int valid;
  const struct pp_model *m;
  const struct pp_cluster *c;
  const pp_calibration *cal;
  pp_cost_kind kind;
  pp_precision prec;
  int64_t gbs;
  int32_t mbs, rec, ntp;
  int32_t tps[PPI_MAX_TP_DEGREES];
  double lb;
};

struct ppi_share_cache {
  struct share_entry e[SHARE_ENTRIES];
  int32_t next; /* the entry replaced next */
  struct lb_entry lbe[LB_ENTRIES];
  int32_t lb_next;
};

static bool lb_same(const struct lb_entry *x, const struct ppi_cost *k,
                    const int32_t *tps, int32_t ntp)
{
  return x->valid && x->m == k->m && x->c == k->c &&
         x->cal == k->cp.calibration && x->kind == k->cp.kind &&
         x->prec == k->prec && x->gbs == k->p->p.global_batch &&
         x->mbs == k->p->p.micro_batch && x->rec == k->p->p.recompute &&
         x->ntp == ntp && !memcmp(x->tps, tps, (size_t)ntp * sizeof *tps);
}

bool ppi_share_lb_get(const struct ppi_cost *k, const int32_t *tps, int32_t ntp,
                      double *lb)
{
  int32_t i;
  if (!k->cache || ntp > PPI_MAX_TP_DEGREES)
    return false;
  for (i = 0; i < LB_ENTRIES; i++)
    if (lb_same(&k->cache->lbe[i], k, tps, ntp)) {
      *lb = k->cache->lbe[i].lb;
      return true;
    }
  return false;
}

void ppi_share_lb_put(const struct ppi_cost *k, const int32_t *tps, int32_t ntp,
                      double lb)
{
  struct lb_entry *x;
  if (!k->cache || ntp > PPI_MAX_TP_DEGREES)
    return;
  x = &k->cache->lbe[k->cache->lb_next];
  k->cache->lb_next = (k->cache->lb_next + 1) % LB_ENTRIES;
  x->valid = 1;
  x->m = k->m;
  x->c = k->c;
  x->cal = k->cp.calibration;
  x->kind = k->cp.kind;
  x->prec = k->prec;
  x->gbs = k->p->p.global_batch;
  x->mbs = k->p->p.micro_batch;
  x->rec = k->p->p.recompute;
  x->ntp = ntp;
  memcpy(x->tps, tps, (size_t)ntp * sizeof *tps);
  x->lb = lb;
}

struct ppi_share_cache *ppi_share_cache_new(pp_ctx *ctx)
{
  return ppi_calloc(ctx, 1, sizeof(struct ppi_share_cache));
}

static void share_entry_clear(pp_ctx *ctx, struct share_entry *x)
{
  size_t S = (size_t)x->S;
  if (x->valid) {
    ppi_free(ctx, x->rep, 2 * S * sizeof *x->rep);
    ppi_free(ctx, x->reduces, S * sizeof *x->reduces);
    ppi_free(ctx, x->b0, 3 * S * sizeof *x->b0);
    ppi_free(ctx, x->b1, 3 * S * sizeof *x->b1);
    ppi_free(ctx, x->hier, S * sizeof *x->hier);
    ppi_free(ctx, x->dev, (size_t)x->ndev * sizeof *x->dev);
  }
  memset(x, 0, sizeof *x);
}

void ppi_share_cache_free(pp_ctx *ctx, struct ppi_share_cache *x)
{
  int32_t i;
  if (!x)
    return;
  for (i = 0; i < SHARE_ENTRIES; i++)
    share_entry_clear(ctx, &x->e[i]);
  ppi_free(ctx, x, sizeof *x);
}

static int32_t key_devices(const struct ppi_cost *k)
{
  return k->p->dev_off[k->nrep];
}

/* The entry holding k's layout, or NULL. */
static const struct share_entry *share_cache_find(const struct ppi_cost *k)
{
  int32_t j, s, r, t, i;
  if (!k->cache)
    return NULL;
  for (j = 0; j < SHARE_ENTRIES; j++) {
    const struct share_entry *x = &k->cache->e[j];
    bool same = x->valid && x->c == k->c && x->cal == k->cp.calibration &&
                x->engine == k->engine && x->prec == k->prec && x->S == k->S &&
                x->ndev == key_devices(k);
    for (s = 0, i = 0; same && s < k->S; s++) {
      same = x->rep[2 * s] == ppi_cost_nrep(k, s) &&
             x->rep[2 * s + 1] == ppi_cost_tp(k, s) &&
             x->reduces[s] == (grad_bytes(k, s) > 0);
      for (r = 0; same && r < ppi_cost_nrep(k, s); r++)
        for (t = 0; same && t < ppi_cost_tp(k, s); t++)
          same = x->dev[i++] == ppi_cost_dev(k, s, r, t);
    }
    if (same)
      return x;
  }
  return NULL;
}

/* Keep k's layout and its hops (b0, b1: [3 S]; hier: [S]) in the next
** entry; a failed allocation leaves it empty, which only costs time. */
static void share_cache_put(pp_ctx *ctx, const struct ppi_cost *k,
                            const double *b0, const double *b1,
                            const uint8_t *hier)
{
  struct share_entry *x;
  int32_t s, r, t, i = 0, nd = key_devices(k);
  size_t S = (size_t)k->S;
  if (!k->cache || nd < 1 || S < 1)
    return;
  x = &k->cache->e[k->cache->next];
  k->cache->next = (k->cache->next + 1) % SHARE_ENTRIES;
  share_entry_clear(ctx, x);
  x->rep = ppi_alloc(ctx, 2 * S * sizeof *x->rep);
  x->reduces = ppi_alloc(ctx, S * sizeof *x->reduces);
  x->b0 = ppi_alloc(ctx, 3 * S * sizeof *x->b0);
  x->b1 = ppi_alloc(ctx, 3 * S * sizeof *x->b1);
  x->hier = ppi_alloc(ctx, S * sizeof *x->hier);
  x->dev = ppi_alloc(ctx, (size_t)nd * sizeof *x->dev);
  x->S = k->S;
  x->ndev = nd;
  x->valid = 1; /* so that clear frees what came */
  if (!x->rep || !x->reduces || !x->b0 || !x->b1 || !x->hier || !x->dev) {
    share_entry_clear(ctx, x);
    pp_ctx_clear_error(ctx); /* the evaluation does not need the cache */
    return;
  }
  x->c = k->c;
  x->cal = k->cp.calibration;
  x->engine = k->engine;
  x->prec = k->prec;
  for (s = 0; s < k->S; s++) {
    x->rep[2 * s] = ppi_cost_nrep(k, s);
    x->rep[2 * s + 1] = ppi_cost_tp(k, s);
    x->reduces[s] = grad_bytes(k, s) > 0;
    x->hier[s] = hier[s];
    memcpy(x->b0 + 3 * s, b0 + 3 * s, 3 * sizeof *b0);
    memcpy(x->b1 + 3 * s, b1 + 3 * s, 3 * sizeof *b1);
    for (r = 0; r < ppi_cost_nrep(k, s); r++)
      for (t = 0; t < ppi_cost_tp(k, s); t++)
        x->dev[i++] = ppi_cost_dev(k, s, r, t);
  }
}

/* Every stage's gradient reduction: ring or hierarchical (the faster
** under --allreduce auto), with the links its concurrent hops share on
** a cluster with a link graph under an engine (every stage reduces at
** once, each tp rank its own rings): a hop gets its narrowest link's
** bandwidth over the hops of its kind crossing that link ("generic"
** keeps the pairwise bandwidths it always had).  k->ar_slow keeps, per
** stage and kind, how much slower the shared hops are than the
** pairwise bandwidths, for the simulator's channel mode. */
static pp_status allreduce(pp_ctx *ctx, struct ppi_cost *k)
{
  struct ppi_routes rt;
  struct share x;
  int32_t s, q, nres = 2 * k->c->nlink;
  pp_status rc = PP_OK;
  const struct share_entry *hit = share_cache_find(k);
  double *hb0 = NULL, *hb1 = NULL;
  uint8_t *hh = NULL;

  memset(&x, 0, sizeof x);
  memset(&rt, 0, sizeof rt);
  x.k = k;
  x.ctx = ctx;
  if (k->cache && !hit) { /* what the cache will keep */
    hb0 = ppi_alloc(ctx, 3 * (size_t)k->S * sizeof *hb0);
    hb1 = ppi_alloc(ctx, 3 * (size_t)k->S * sizeof *hb1);
    hh = ppi_alloc(ctx, (size_t)k->S * sizeof *hh);
    if (!hb0 || !hb1 || !hh)
      rc = PP_ENOMEM;
  }
  /* "generic" prices as before engines were modelled: pairwise */
  if (!rc && !hit && k->c->has_links && k->c->nlink > 0 &&
      k->engine != PP_ENGINE_GENERIC) {
    if ((rc = ppi_routes_init(ctx, &rt, k->c)))
      return rc;
    x.rt = &rt;
    for (q = 0; q < 3; q++)
      x.cnt[q] = ppi_calloc(ctx, (size_t)nres, sizeof *x.cnt[q]);
    if (!x.cnt[0] || !x.cnt[1] || !x.cnt[2])
      rc = PP_ENOMEM;
    for (s = 0; s < k->S && !rc; s++)
      if (grad_bytes(k, s) > 0) {
        visit_hops(k, s, hop_count, &x);
        rc = x.rc;
      }
  }
  for (s = 0; s < k->S && !rc; s++) {
    double b0[3], b1[3], ring, hier = -1, xs;
    int h;
    if (hit) {
      memcpy(b0, hit->b0 + 3 * s, sizeof b0);
      memcpy(b1, hit->b1 + 3 * s, sizeof b1);
      h = hit->hier[s];
    } else {
      h = slowest_hops(&x, s, 0, b0);
      slowest_hops(&x, s, 1, b1);
      if ((rc = x.rc))
        break;
      if (hb0) {
        memcpy(hb0 + 3 * s, b0, sizeof b0);
        memcpy(hb1 + 3 * s, b1, sizeof b1);
        hh[s] = (uint8_t)h;
      }
    }
    for (q = 0; q < 3; q++)
      k->ar_slow[3 * s + q] = b1[q] < INFINITY && b1[q] > 0 ? b0[q] / b1[q] : 1;
    ring = ring_ms(k, ppi_cost_nrep(k, s), b1[0], grad_bytes(k, s), 2, 1);
    if (h && k->cp.allreduce != PP_AR_RING && grad_bytes(k, s) > 0)
      hier = hier_time(k, s, b1[1], b1[2]);
    if (hier >= 0 && (k->cp.allreduce == PP_AR_HIER || hier < ring)) {
      k->ar_ms[s] = hier;
      k->ar_hier[s] = 1;
    } else {
      k->ar_ms[s] = ring;
      k->ar_hier[s] = 0;
    }
    /* what the simulator reduces after the drain: the exposed share */
    xs = exposed_share(k, s, k->ar_ms[s]);
    k->ar_ms[s] *= xs;
    k->gbytes[s] = grad_bytes(k, s) * xs;
  }
  if (x.rt) {
    for (q = 0; q < 3; q++)
      ppi_free(ctx, x.cnt[q], (size_t)nres * sizeof *x.cnt[q]);
    ppi_routes_free(ctx, &rt);
  }
  if (!rc && hb0)
    share_cache_put(ctx, k, hb0, hb1, hh);
  ppi_free(ctx, hb0, 3 * (size_t)k->S * sizeof *hb0);
  ppi_free(ctx, hb1, 3 * (size_t)k->S * sizeof *hb1);
  ppi_free(ctx, hh, (size_t)k->S * sizeof *hh);
  return rc;
}

/* The engine's reduction of a tied group's gradients between the stages
** holding its copies (the word embedding of the first and the last
** stage): DeepSpeed's ReduceTiedGrads, issued before ReduceGrads and
** OptimizerStep (runtime/pipe/schedule.py:239-241 @ 38327e0), all-reduces
** weight.grad, fp32 _hp_grad under bf16 (runtime/pipe/engine.py:287-291);
** Megatron all-reduces the embedding's main_grad over its embedding
** group (core/distributed/finalize_model_grads.py:259 @ d98e8a6).  Each
** (replica, tp rank) reduces over its own ring of those stages, all at
** once; on a cluster with a link graph the rings that leave a node share
** its link out (as the gradient reduction's hops, "Shared links").  It
** runs after the drain, before the step, so its time joins the step of
** every replica of those stages.  Stages of different tp degrees: T,
** their largest, rings, ring t through rank t mod tp of each stage, each
** moving the largest shard (the smallest degree's).
** O(groups x S x R x tp). */
static pp_status tied_sync(pp_ctx *ctx, struct ppi_cost *k)
{
  const struct pp_model *m = k->m;
  double elem;
  int32_t g, v, s, n, r, t, i, R = 0, T, tmin, *st, *cnt;
  uint8_t *in;
  pp_status rc = PP_OK;

  if (k->engine == PP_ENGINE_DEEPSPEED)
    elem = k->prec == PP_PREC_FP16 ? 2 : 4;
  else if (k->engine == PP_ENGINE_MEGATRON)
    elem = ppi_engine_grad_bytes(k->engine, k->prec);
  else
    return PP_OK;
  if (k->S < 2)
    return PP_OK;
  st = ppi_alloc(ctx, (size_t)k->S * sizeof *st);
  in = ppi_calloc(ctx, (size_t)k->S, sizeof *in);
  cnt =
      ppi_calloc(ctx, (size_t)(k->c->nnode > 0 ? k->c->nnode : 1), sizeof *cnt);
  if (!st || !in || !cnt) {
    rc = PP_ENOMEM;
    goto done;
  }
  for (g = 0; g < m->nop; g++) {
    pp_op_sizes z;
    double bytes, worst = 0;
    if (m->tied[g] >= 0)
      continue;
    memset(in, 0, (size_t)k->S);
    for (v = 0, n = 0; v < m->nop; v++)
      if ((v == g || m->tied[v] == g) && !in[k->stage_of[v]]) {
        in[k->stage_of[v]] = 1;
        n++;
      }
    if (n < 2)
      continue;
    R = 0;
    T = 0;
    tmin = PP_MAX_DEVICES;
    for (s = 0, n = 0; s < k->S; s++)
      if (in[s]) {
        st[n++] = s;
        if (ppi_cost_nrep(k, s) > R)
          R = ppi_cost_nrep(k, s);
        if (ppi_cost_tp(k, s) > T)
          T = ppi_cost_tp(k, s);
        if (ppi_cost_tp(k, s) < tmin)
          tmin = ppi_cost_tp(k, s);
      }
    if ((rc = pp_model_op_sizes(m, g, tmin, k->p->p.micro_batch, &z)))
      goto done;
    bytes = z.param_bytes / pp_precision_bytes(m->dtype) * elem;
    memset(cnt, 0, (size_t)(k->c->nnode > 0 ? k->c->nnode : 1) * sizeof *cnt);
    for (r = 0; r < R && k->c->has_links; r++)
      for (t = 0; t < T; t++)
        for (i = 0; i < n; i++) {
          int32_t a = ppi_cost_dev(k, st[i], r % ppi_cost_nrep(k, st[i]),
                                   t % ppi_cost_tp(k, st[i]));
          int32_t b = ppi_cost_dev(k, st[(i + 1) % n],
                                   r % ppi_cost_nrep(k, st[(i + 1) % n]),
                                   t % ppi_cost_tp(k, st[(i + 1) % n]));
          if (k->c->dev_node[a] != k->c->dev_node[b])
            cnt[k->c->dev_node[a]]++;
        }
    for (r = 0; r < R; r++)
      for (t = 0; t < T; t++) {
        double bmin = INFINITY, x;
        for (i = 0; i < n; i++) {
          int32_t a = ppi_cost_dev(k, st[i], r % ppi_cost_nrep(k, st[i]),
                                   t % ppi_cost_tp(k, st[i]));
          int32_t b = ppi_cost_dev(k, st[(i + 1) % n],
                                   r % ppi_cost_nrep(k, st[(i + 1) % n]),
                                   t % ppi_cost_tp(k, st[(i + 1) % n]));
          double bw = ppi_cost_bw(k, a, b);
          if (k->c->has_links && k->c->dev_node[a] != k->c->dev_node[b] &&
              cnt[k->c->dev_node[a]] > 1)
            bw /= cnt[k->c->dev_node[a]];
          if (bw < bmin)
            bmin = bw;
        }
        x = ring_ms(k, n, bmin, bytes, 2, 1);
        if (x > worst)
          worst = x;
      }
    for (i = 0; i < n; i++)
      for (r = 0; r < ppi_cost_nrep(k, st[i]); r++)
        k->u[k->p->rep_off[st[i]] + r] += worst;
  }
done:
  ppi_free(ctx, st, (size_t)k->S * sizeof *st);
  ppi_free(ctx, in, (size_t)k->S * sizeof *in);
  ppi_free(ctx, cnt, (size_t)(k->c->nnode > 0 ? k->c->nnode : 1) * sizeof *cnt);
  return rc;
}

/* The link resource between stages s and s+1. */
static double link_load(const struct ppi_cost *k, int32_t s)
{
  int32_t i, Ra = ppi_cost_nrep(k, s), Rb = ppi_cost_nrep(k, s + 1), r;
  int32_t R = Ra > Rb ? Ra : Rb;
  double worst = 0;
  for (i = 0; i < k->ne; i++) {
    const struct ppi_sedge *e = &k->e[i];
    if (e->a != s || e->b != s + 1)
      continue;
    for (r = 0; r < R; r++) {
      double x = k->xf ? k->xf[i] + k->xb[i]
                       : 2 * ppi_cost_edge_ms(k, e, r % Ra, r % Rb);
      if (x > worst)
        worst = x;
    }
  }
  return worst / R;
}

/* The transfers of stage-graph edge i under a blocking engine, one way
** each, for every (replica, tp rank) pair at once: into xf[i] the
** forward's (the activation, 1/tp of it when the engine partitions, and
** the model's pipe extra bytes from every rank; one latency per tensor
** sent), into xb[i] the backward's, the slowest pair's.  On a cluster
** with a link graph the pairs share the links they cross (lock step:
** every replica and rank of a stage sends at once), as the reductions'
** hops do ("Shared links"); else the pairwise bandwidths. */
static pp_status edge_transfers(pp_ctx *ctx, struct ppi_cost *k, int32_t i,
                                struct ppi_routes *rt, int32_t *cnt)
{
  const struct ppi_sedge *e = &k->e[i];
  int32_t ta = ppi_cost_tp(k, e->a), tb = ppi_cost_tp(k, e->b);
  int32_t np = ta > tb ? ta : tb, fan = (np + ta - 1) / ta;
  int part = k->rules->partitioned && np > 1;
  double extra = pp_model_pipe_extra(k->m); /* as sent, not converted */
  double act = part ? e->bytes / np : e->bytes;
  double nf = 1 + part + (extra > 0), nb = 1 + part, lat = k->c->latency_us;
  int32_t Ra = ppi_cost_nrep(k, e->a), Rb = ppi_cost_nrep(k, e->b);
  int32_t R = Ra > Rb ? Ra : Rb, r, t, h, n, pass;

  if (!part) /* each receiving rank gets the whole tensor */
    np = tb;
  if ((np + tb - 1) / tb > fan)
    fan = (np + tb - 1) / tb;
  pp_status rc = PP_OK;

  k->xf[i] = k->xb[i] = 0;
  /* pass 0 counts the pairs on each link, pass 1 prices them */
  for (pass = rt ? 0 : 1; pass < 2; pass++)
    for (r = 0; r < R; r++)
      for (t = 0; t < np; t++) {
        int32_t a = ppi_cost_dev(k, e->a, r % Ra, t % ta);
        int32_t b = ppi_cost_dev(k, e->b, r % Rb, t % tb);
        double bw = INFINITY;
        const int32_t *buf = NULL;
        if (a == b)
          continue;
        n = 0;
        if (rt && (rc = ppi_route_ref(ctx, rt, a, b, &buf, &n)))
          return rc;
        for (h = 0; h < n; h++) {
          if (pass == 0) {
            cnt[buf[h]]++;
          } else {
            double g = ppi_route_gbps(rt, buf[h]) / cnt[buf[h]];
            if (g < bw)
              bw = g;
          }
        }
        if (pass == 0)
          continue;
        if (bw < INFINITY)
          bw *= ppi_cost_net_share(k, a, b);
        else
          bw = ppi_cost_bw(k, a, b);
        /* a rank in fan pairs runs them one after the other */
        if (fan * (nf * lat / 1000 + (act + extra) / (bw * 1e6)) > k->xf[i])
          k->xf[i] = fan * (nf * lat / 1000 + (act + extra) / (bw * 1e6));
        if (fan * (nb * lat / 1000 + act / (bw * 1e6)) > k->xb[i])
          k->xb[i] = fan * (nb * lat / 1000 + act / (bw * 1e6));
      }
  if (rt)
    for (r = 0; r < R; r++)
      for (t = 0; t < np; t++) {
        int32_t a = ppi_cost_dev(k, e->a, r % Ra, t % ta);
        int32_t b = ppi_cost_dev(k, e->b, r % Rb, t % tb);
        const int32_t *buf = NULL;
        n = 0;
        if (a != b && !(rc = ppi_route_ref(ctx, rt, a, b, &buf, &n)))
          for (h = 0; h < n; h++)
            cnt[buf[h]] = 0;
      }
  return rc;
}

/* Blocking point-to-point (DeepSpeed): a stage's forward waits for its
** activations to arrive and to leave, its backward for the gradients
** likewise, so each replica's forward and backward take those transfers
** (edge_transfers: the slowest replica pair of each edge); the
** transfers themselves then take no time of their own (the estimate's
** fill path and channels, the simulator's sends).  With tp > 1 DeepSpeed
** partitions what it sends (pipe_partitioned and grad_partitioned,
** default true: runtime/config.py:467-468, pipe/engine.py:144-145 @
** 38327e0): the receiving stage all-gathers the activation over its tp
** ranks before its forward (engine.py:718-729), the sending stage its
** output and the partitioned gradient before its backward
** (engine.py:824-847), each a ring all-gather of the whole tensor. */
static pp_status blocking_p2p(pp_ctx *ctx, struct ppi_cost *k)
{
  struct ppi_routes rt;
  int32_t i, r, s, *cnt = NULL, nres = 2 * k->c->nlink;
  int links = k->c->has_links && k->c->nlink > 0;
  pp_status rc = PP_OK;

  if (!k->ne)
    return PP_OK;
  if (!PPI_NEW(ctx, k->xf, k->ne) || !PPI_NEW(ctx, k->xb, k->ne))
    return PP_ENOMEM;
  memset(&rt, 0, sizeof rt);
  if (links) {
    if ((rc = ppi_routes_init(ctx, &rt, k->c)))
      return rc;
    if (!(cnt = ppi_calloc(ctx, (size_t)nres, sizeof *cnt)))
      rc = PP_ENOMEM;
  }
  for (i = 0; i < k->ne && !rc; i++)
    rc = edge_transfers(ctx, k, i, links ? &rt : NULL, cnt);
  for (i = 0; i < k->ne && !rc; i++) {
    const struct ppi_sedge *e = &k->e[i];
    for (s = 0; s < 2; s++) {
      int32_t st = s ? e->b : e->a, tst = ppi_cost_tp(k, st);
      int part = k->rules->partitioned && tst > 1;
      for (r = 0; r < ppi_cost_nrep(k, st); r++) {
        int32_t q = k->p->rep_off[st] + r;
        /* the receiver gathers the activation, the sender its output
        ** and the gradient */
        double g = part ? (s ? 1 : 2) * ring_ms(k, tst, tp_ring_bw(k, st, r),
                                                e->bytes, 1, 1)
                        : 0;
        k->f[q] += k->xf[i] + (s ? g : 0);
        k->b[q] += k->xb[i] + (s ? 0 : g);
        k->comp[q] += k->xf[i] + k->xb[i] + g;
      }
    }
  }
  if (links) {
    ppi_free(ctx, cnt, (size_t)(nres > 0 ? nres : 1) * sizeof *cnt);
    ppi_routes_free(ctx, &rt);
  }
  return rc;
}

/* Replica counts that differ per stage: the kernel raises the in-flight
** counts until the orders provably cannot block (sched.c). */
static pp_status feedable(pp_ctx *ctx, struct ppi_cost *k)
{
  int32_t i, s, *nrep = ppi_alloc(ctx, (size_t)k->S * sizeof *nrep);
  int32_t *ends =
      ppi_alloc(ctx, 2 * (size_t)(k->ne ? k->ne : 1) * sizeof *ends);
  pp_status rc = PP_ENOMEM;
  if (nrep && ends) {
    for (s = 0; s < k->S; s++)
      nrep[s] = ppi_cost_nrep(k, s);
    for (i = 0; i < k->ne; i++) {
      ends[i] = k->e[i].a;
      ends[k->ne + i] = k->e[i].b;
    }
    rc = ppi_sched_feedable(ctx, k->S, nrep, k->gas, k->ne, ends, ends + k->ne,
                            k->inflight);
  }
  ppi_free(ctx, nrep, (size_t)k->S * sizeof *nrep);
  ppi_free(ctx, ends, 2 * (size_t)(k->ne ? k->ne : 1) * sizeof *ends);
  return rc;
}

/* Counts the plan fixes (a periodic pattern's, pp_plan_builder_
** set_in_flight) replace the schedule's, capped at the micro-batches. */
static void fixed(struct ppi_cost *k)
{
  int32_t s;
  for (s = 0; s < k->S; s++)
    if (k->p->inflight[s] > 0)
      k->inflight[s] =
          (int32_t)(k->p->inflight[s] < k->gas[s] ? k->p->inflight[s]
                                                  : k->gas[s]);
}

/* In-flight counts and groups of every stage of k (k->inflight,
** k->group, k->period_ms), from its loads through sched.c's kernels;
** fails when a 1F1B* period is below the bottleneck. */
static pp_status plan_schedule(pp_ctx *ctx, struct ppi_cost *k)
{
  int32_t S = k->S, s, n = 2 * S - 1, i;
  double *load, T = 0, worst = 0;
  int32_t *grp, argworst = 0;
  pp_status rc = PP_OK;

  if (k->p->p.schedule != PP_SCHED_1F1B_STAR) {
    ppi_sched_counts(k->p->p.schedule, S, k->gas, k->inflight);
    for (s = 0; s < S; s++)
      k->group[s] = 0;
    fixed(k);
    return feedable(ctx, k);
  }
  load = ppi_calloc(ctx, (size_t)n, sizeof *load);
  grp = ppi_calloc(ctx, (size_t)n, sizeof *grp);
  if (!load || !grp) {
    rc = PP_ENOMEM;
    goto done;
  }
  for (s = 0; s < S; s++) {
    int32_t r, R = ppi_cost_nrep(k, s);
    for (r = 0; r < R; r++) {
      double x = k->comp[k->p->rep_off[s] + r] / R;
      if (x > load[2 * s])
        load[2 * s] = x;
    }
    if (s + 1 < S)
      load[2 * s + 1] = link_load(k, s);
  }
  for (i = 0; i < n; i++)
    if (load[i] > worst) {
      worst = load[i];
      argworst = i;
    }
  T = k->p->p.period_ms > 0 ? k->p->p.period_ms : worst;
  /* a period found under the profile's times, priced under a
  ** calibration that slows a stage: the slowest resource's period */
  if (k->cp.calibration && T < worst)
    T = worst;
  if (T < worst * (1 - PPI_REL_ROUNDING)) {
    rc = ppi_fail(ctx, PP_EINPUT,
                  "%s: the 1f1b-star period %.6g ms is shorter than the load "
                  "%.6g ms of %s %d; no periodic schedule is that fast",
                  k->p->source, T, worst,
                  argworst % 2 ? "the link after stage" : "stage",
                  (int)(argworst / 2));
    goto done;
  }
  if (T <= 0)
    T = 1; /* nothing to do anywhere: one group */
  ppi_sched_groups(load, n, T, grp);
  for (s = 0; s < S; s++) {
    k->group[s] = grp[2 * s];
    k->inflight[s] = (int32_t)(grp[2 * s] < k->gas[s] ? grp[2 * s] : k->gas[s]);
  }
  k->period_ms = T;
  fixed(k);
  rc = feedable(ctx, k);
done:
  ppi_free(ctx, load, (size_t)n * sizeof *load);
  ppi_free(ctx, grp, (size_t)n * sizeof *grp);
  return rc;
}

pp_status ppi_cost_init(pp_ctx *ctx, struct ppi_cost *k, const pp_plan *p,
                        const pp_model *m, const pp_cluster *c,
                        const pp_cost_params *cp)
{
  return ppi_cost_init_cached(ctx, k, p, m, c, cp, NULL);
}

pp_status ppi_cost_init_cached(pp_ctx *ctx, struct ppi_cost *k,
                               const pp_plan *p, const pp_model *m,
                               const pp_cluster *c, const pp_cost_params *cp,
                               struct ppi_share_cache *cache)
{
  int32_t s, i, n;
  pp_status rc;

  memset(k, 0, sizeof *k);
  k->cache = cache;
  k->p = p;
  k->m = m;
  k->c = c;
  if (cp)
    k->cp = *cp;
  else
    pp_cost_params_init(&k->cp);
  k->S = p->nstage;
  k->ndev = c->ndev;
  k->nrep = p->rep_off[p->nstage];
  k->nmb = p->p.global_batch / p->p.micro_batch;
  k->engine = p->p.engine;
  k->zero = p->p.zero;
  k->prec = p->p.precision == PP_PREC_MODEL ? m->dtype : p->p.precision;
  k->ratio = (double)pp_precision_bytes(k->prec) / pp_precision_bytes(m->dtype);
  k->rules = ppi_engine_rules(k->engine);
  if (!PPI_NEW(ctx, k->nparam, k->S) || !PPI_NEW(ctx, k->gbytes, k->S) ||
      !PPI_NEW(ctx, k->ar_slow, 3 * (size_t)k->S) ||
      !PPI_NEW(ctx, k->state, k->S) || !PPI_NEW(ctx, k->transient, k->S) ||
      !PPI_NEW(ctx, k->keep, k->S) || !PPI_NEW(ctx, k->opmax, k->S) ||
      !PPI_NEW(ctx, k->gas, k->S) || !PPI_NEW(ctx, k->stage_of, m->nop) ||
      !PPI_NEW(ctx, k->f, k->nrep) || !PPI_NEW(ctx, k->b, k->nrep) ||
      !PPI_NEW(ctx, k->rc, k->nrep) || !PPI_NEW(ctx, k->u, k->nrep) ||
      !PPI_NEW(ctx, k->comp, k->nrep) || !PPI_NEW(ctx, k->param, k->S) ||
      !PPI_NEW(ctx, k->saved, k->S) || !PPI_NEW(ctx, k->xin, k->S) ||
      !PPI_NEW(ctx, k->xout, k->S) || !PPI_NEW(ctx, k->act, k->S) ||
      !PPI_NEW(ctx, k->peak_extra, k->S) || !PPI_NEW(ctx, k->inflight, k->S) ||
      !PPI_NEW(ctx, k->group, k->S) || !PPI_NEW(ctx, k->ar_ms, k->S) ||
      !PPI_NEW(ctx, k->ar_hier, k->S)) {
    ppi_cost_free(ctx, k);
    return PP_ENOMEM;
  }
  for (s = 0; s < k->S; s++) {
    const int32_t *ops = pp_plan_stage_ops(p, s, &n);
    k->gas[s] = pp_plan_stage_micro_batches(p, s);
    for (i = 0; i < n; i++)
      k->stage_of[ops[i]] = s;
  }
  if ((rc = stage_sizes(ctx, k)) || (rc = replica_times(ctx, k)) ||
      (rc = stage_graph(ctx, k))) {
    ppi_cost_free(ctx, k);
    return rc;
  }
  if (k->rules->blocking && (rc = blocking_p2p(ctx, k))) {
    ppi_cost_free(ctx, k);
    return rc;
  }
  for (s = 0; s < k->S; s++) {
    k->act[s] = p->p.recompute ? k->xin[s] : k->saved[s];
    k->peak_extra[s] = p->p.recompute ? k->saved[s] : 0;
  }
  engine_memory(k);
  if ((rc = allreduce(ctx, k)) || (rc = tied_sync(ctx, k))) {
    ppi_cost_free(ctx, k);
    return rc;
  }
  if ((rc = plan_schedule(ctx, k))) {
    ppi_cost_free(ctx, k);
    return rc;
  }
  return PP_OK;
}

#define FREE(ptr, n)                                                           \
  ppi_free(ctx, (ptr), ((size_t)(n) > 0 ? (size_t)(n) : 1) * sizeof *(ptr))

void ppi_cost_free(pp_ctx *ctx, struct ppi_cost *k)
{
  int32_t S = k->S, R = k->nrep;
  FREE(k->gas, S);
  if (k->m)
    FREE(k->stage_of, k->m->nop);
  FREE(k->f, R);
  FREE(k->b, R);
  FREE(k->rc, R);
  FREE(k->u, R);
  FREE(k->comp, R);
  FREE(k->param, S);
  FREE(k->saved, S);
  FREE(k->xin, S);
  FREE(k->xout, S);
  FREE(k->act, S);
  FREE(k->peak_extra, S);
  FREE(k->inflight, S);
  FREE(k->group, S);
  FREE(k->ar_ms, S);
  FREE(k->ar_hier, S);
  FREE(k->nparam, S);
  FREE(k->gbytes, S);
  FREE(k->ar_slow, 3 * (size_t)S);
  FREE(k->state, S);
  FREE(k->transient, S);
  FREE(k->keep, S);
  FREE(k->opmax, S);
  FREE(k->xf, k->ne);
  FREE(k->xb, k->ne);
  if (k->m)
    ppi_stage_edges_free(ctx, k->m, k->e);
  memset(k, 0, sizeof *k);
}
