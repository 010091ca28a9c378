/* SPDX-License-Identifier: MIT */
/*
** The analytic estimate of a plan and the lower bound on any plan.
**
** Iteration time (AMP's Eq. 4-5, extended):
**
**   T = steady + fill + allreduce + update
**   steady    = the largest per-iteration load of one resource less one
**               micro-batch's share: a device, sum over the stage
**               replicas it holds of (gas_s - 1) x compute (the
**               straggler replica is its own resource); a directed
**               channel, its transfers x (n - 1) / n
**   fill      = the longest path of one micro-batch through the stage
**               graph: every stage's straggler compute, and on every
**               edge its forward activation and its backward gradient
**   allreduce = the slowest stage's gradient allreduce (ring in the
**               plan's replica order, or hierarchical, cost_model.c)
**   update    = the slowest device's optimizer steps
**
** Balanced stages without communication give (gas + S - 1)(f + b), the
** closed form of GPipe and 1F1B.  The simulator is the reference; this
** estimate ranks candidates fast.
**
** Memory of a device: sum over the stage replicas it holds of
** parameters x the optimizer's factor + in-flight x kept activations +
** 2 (in + out) boundary buffers, plus, with recomputation, one
** micro-batch's full activations (the largest of its stages), plus the
** reserve.  For a device with one stage this is exactly the simulator's
** peak; with several it is an upper bound.
**
** Lower bound (pp_lower_bound): the larger of (1) the work over the
** cluster's capacity, from LP duality: with r_vt the time of operator v
** on type t and R_t = sum_v r_vt, any plan needs at least
** N tp sum_v min_t (r_vt / R_t) / sum_t (n_t / R_t), which is N tp R / n
** on a homogeneous cluster; (2) one micro-batch's longest path through
** the operator graph, each operator on its fastest type.
**
** Complexity: O(replicas x tp + stage edges x lcm(R_a, R_b) x tp).
*/
#include "cost/cost.h"
#include "cost/cost_eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct pp_eval {
  struct ppi_arena arena;
  pp_eval_summary sum;
  int32_t S, ndev;
  pp_schedule sched;
  pp_stage_cost *st;
  pp_device_memory *mem;
  char *plan_src, *model_name, *cluster_name;
  char **dev_name;
  int32_t tp, micro_batch;
  int64_t global_batch;
  int recompute;
  pp_cost_kind kind;
  pp_optimizer opt;
  pp_precision precision; /* the run's: the model's dtype for PREC_MODEL */
  pp_engine engine;
  int32_t zero;
  double period_ms;
  struct ppi_amp_terms amp;
};

static int64_t gcd64(int64_t a, int64_t b)
{
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* The replica pairs micro-batches use on stage edge e: m mod Ra, m mod Rb
** for m < min(lcm, nmb); each pair carries nmb / lcm micro-batches. */
static int64_t pair_period(const struct ppi_cost *k, const struct ppi_sedge *e)
{
  int64_t Ra = ppi_cost_nrep(k, e->a), Rb = ppi_cost_nrep(k, e->b);
  int64_t L = Ra / gcd64(Ra, Rb) * Rb;
  return L < k->nmb ? L : k->nmb;
}

/* The slowest replica pair's transfer of edge e, one way (under a
** blocking engine the mean of blocking_p2p's two ways). */
static double edge_worst(const struct ppi_cost *k, const struct ppi_sedge *e)
{
  int64_t L = pair_period(k, e), m;
  int32_t Ra = ppi_cost_nrep(k, e->a), Rb = ppi_cost_nrep(k, e->b);
  double w = 0;
  if (k->xf)
    return (k->xf[e - k->e] + k->xb[e - k->e]) / 2;
  for (m = 0; m < L; m++) {
    double x = ppi_cost_edge_ms(k, e, (int32_t)(m % Ra), (int32_t)(m % Rb));
    if (x > w)
      w = x;
  }
  return w;
}

/* Channel loads: total transfer time per directed device pair. */
struct chan {
  double load;
  int64_t n;
};

static pp_status channel_steady(pp_ctx *ctx, const struct ppi_cost *k,
                                double *steady)
{
  struct ppi_i64map map;
  struct ppi_vec ch;
  int32_t i, t, dir;
  int64_t m;
  pp_status rc = PP_OK;

  ppi_i64map_init(&map);
  ppi_vec_init(&ch, sizeof(struct chan));
  *steady = 0;
  for (i = 0; i < k->ne && !rc; i++) {
    const struct ppi_sedge *e = &k->e[i];
    int64_t L = pair_period(k, e), per = k->nmb / L;
    int32_t Ra = ppi_cost_nrep(k, e->a), Rb = ppi_cost_nrep(k, e->b);
    int32_t np = ppi_cost_npair(k, e->a, e->b), ta = ppi_cost_tp(k, e->a),
            tb = ppi_cost_tp(k, e->b);
    double pb = ppi_cost_pair_bytes(k, e->a, e->b, e->bytes);
    for (m = 0; m < L && !rc; m++)
      for (t = 0; t < np && !rc; t++)
        for (dir = 0; dir < 2 && !rc; dir++) {
          int32_t x = ppi_cost_dev(k, e->a, (int32_t)(m % Ra), t % ta);
          int32_t y = ppi_cost_dev(k, e->b, (int32_t)(m % Rb), t % tb);
          int32_t from = dir ? y : x, to = dir ? x : y, id;
          int64_t key = (int64_t)from * k->ndev + to;
          double ms = ppi_cost_comm(k, from, to, pb);
          if (from == to || ms <= 0)
            continue;
          if ((id = ppi_i64map_get(&map, key)) < 0) {
            struct chan z = {0, 0};
            id = (int32_t)ch.n;
            if ((rc = ppi_vec_push(ctx, &ch, &z)) ||
                (rc = ppi_i64map_put(ctx, &map, key, id)))
              break;
          }
          PPI_VEC_AT(&ch, struct chan, id).load += ms * (double)per;
          PPI_VEC_AT(&ch, struct chan, id).n += per;
        }
  }
  for (i = 0; i < (int32_t)ch.n; i++) {
    struct chan z = PPI_VEC_AT(&ch, struct chan, i);
    double s = z.load * (double)(z.n - 1) / (double)z.n;
    if (s > *steady)
      *steady = s;
  }
  ppi_i64map_free(ctx, &map);
  ppi_vec_free(ctx, &ch);
  return rc;
}

static pp_status analytic(pp_ctx *ctx, const struct ppi_cost *k,
                          pp_eval_summary *sum, double *dev_upd)
{
  int32_t S = k->S, s, r, i, d;
  double *L, *dload, *donce, ch = 0, best = 0;
  int32_t *dstage;
  pp_status rc;

  L = ppi_calloc(ctx, (size_t)S, sizeof *L);
  dload = ppi_calloc(ctx, (size_t)k->ndev, sizeof *dload);
  donce = ppi_calloc(ctx, (size_t)k->ndev, sizeof *donce);
  dstage = ppi_calloc(ctx, (size_t)k->ndev, sizeof *dstage);
  if (!L || !dload || !donce || !dstage) {
    rc = PP_ENOMEM;
    goto done;
  }
  /* fill: longest path, stages in plan order are topological */
  for (s = 0; s < S; s++) {
    double t = 0;
    for (r = 0; r < ppi_cost_nrep(k, s); r++)
      if (k->comp[k->p->rep_off[s] + r] > t)
        t = k->comp[k->p->rep_off[s] + r];
    L[s] += t;
  }
  {
    /* edges are sorted by source stage: relax in order */
    double *start = ppi_calloc(ctx, (size_t)S, sizeof *start);
    if (!start) {
      rc = PP_ENOMEM;
      goto done;
    }
    for (s = 0; s < S; s++) {
      double fin = start[s] + L[s];
      for (i = 0; i < k->ne; i++)
        if (k->e[i].a == s) {
          /* blocking transfers are inside the stages' compute */
          double x =
              fin + (k->rules->blocking ? 0 : 2 * edge_worst(k, &k->e[i]));
          if (x > start[k->e[i].b])
            start[k->e[i].b] = x;
        }
      if (fin > sum->fill_ms)
        sum->fill_ms = fin;
    }
    /* p2p: every stage-graph edge once each way (on a chain, the
    ** transfers of the fill path) */
    for (i = 0; i < k->ne; i++)
      sum->p2p_ms += 2 * edge_worst(k, &k->e[i]);
    ppi_free(ctx, start, (size_t)S * sizeof *start);
  }
  /* steady: devices */
  for (d = 0; d < k->ndev; d++)
    dstage[d] = -1;
  for (s = 0; s < S; s++)
    for (r = 0; r < ppi_cost_nrep(k, s); r++) {
      int32_t q = k->p->rep_off[s] + r, t;
      for (t = 0; t < ppi_cost_tp(k, s); t++) {
        d = ppi_cost_dev(k, s, r, t);
        dload[d] += (double)(k->gas[s] - 1) * k->comp[q];
        dev_upd[d] += k->u[q];
        if (dstage[d] < 0)
          dstage[d] = s;
      }
    }
  sum->bottleneck = -1;
  for (d = 0; d < k->ndev; d++)
    if (dload[d] > best) {
      best = dload[d];
      sum->bottleneck = dstage[d];
    }
  if (!k->rules->blocking && (rc = channel_steady(ctx, k, &ch)))
    goto done;
  if (ch > best) {
    best = ch;
    sum->bottleneck = -1;
  }
  sum->steady_ms = best;
  for (s = 0; s < S; s++)
    if (k->ar_ms[s] > sum->allreduce_ms)
      sum->allreduce_ms = k->ar_ms[s];
  for (d = 0; d < k->ndev; d++)
    if (dev_upd[d] > sum->update_ms)
      sum->update_ms = dev_upd[d];
  sum->iteration_ms =
      sum->steady_ms + sum->fill_ms + sum->allreduce_ms + sum->update_ms;
  rc = PP_OK;
done:
  ppi_free(ctx, L, (size_t)S * sizeof *L);
  ppi_free(ctx, dload, (size_t)k->ndev * sizeof *dload);
  ppi_free(ctx, donce, (size_t)k->ndev * sizeof *donce);
  ppi_free(ctx, dstage, (size_t)k->ndev * sizeof *dstage);
  return rc;
}

/* Memory of every device (see the header comment). */
static void memory(const struct ppi_cost *k, pp_device_memory *mem,
                   pp_eval_summary *sum)
{
  double worst = -1;
  int32_t s, r, t, d;
  for (d = 0; d < k->ndev; d++) {
    memset(&mem[d], 0, sizeof mem[d]);
    mem[d].capacity_bytes = pp_cluster_type_memory(k->c, k->c->dev_type[d]);
  }
  /* model_bytes: state; activation_bytes: in-flight; buffer_bytes:
  ** buffers and kept outputs; transient_bytes and reserve_bytes hold
  ** the largest transient and recomputation peak until the totals */
  for (s = 0; s < k->S; s++)
    for (r = 0; r < ppi_cost_nrep(k, s); r++)
      for (t = 0; t < ppi_cost_tp(k, s); t++) {
        pp_device_memory *x = &mem[ppi_cost_dev(k, s, r, t)];
        x->used = 1;
        x->model_bytes += k->state[s];
        x->activation_bytes += (double)k->inflight[s] * k->act[s];
        x->buffer_bytes += 2 * (k->xin[s] + k->xout[s]) + k->keep[s];
        /* the recomputed activations of one backward at a time */
        if (k->peak_extra[s] > x->reserve_bytes)
          x->reserve_bytes = k->peak_extra[s];
        if (k->transient[s] > x->transient_bytes)
          x->transient_bytes = k->transient[s];
      }
  sum->fits = 1;
  sum->worst_device = -1;
  sum->margin_bytes = INFINITY;
  for (d = 0; d < k->ndev; d++) {
    pp_device_memory *x = &mem[d];
    double share, room;
    if (!x->used)
      continue;
    x->activation_bytes += x->reserve_bytes;
    x->reserve_bytes = (double)k->cp.reserve_bytes;
    ppi_cost_device_memory(k, d, x->model_bytes, x->buffer_bytes,
                           x->activation_bytes, x->transient_bytes, x);
    if (x->total_bytes > (double)x->capacity_bytes)
      sum->fits = 0;
    share = x->total_bytes / (double)x->capacity_bytes;
    room = (double)x->capacity_bytes - x->total_bytes;
    if (room < sum->margin_bytes)
      sum->margin_bytes = room;
    if (share > worst) {
      worst = share;
      sum->worst_device = d;
    }
  }
  if (sum->worst_device < 0)
    sum->margin_bytes = 0;
}

static pp_status lower_bound_k(pp_ctx *ctx, const pp_model *m,
                               const pp_cluster *c, int64_t gbs,
                               const int32_t *tps, int32_t ntp,
                               const int32_t *type_tp, int32_t mbs,
                               int recompute, pp_precision prec, double *out)
{
  int32_t nt = c->ntype, t, v, i;
  int32_t *rep, *cnt;
  double *r, *Rt, *best, *path, lb1 = 0, lb2 = 0, denom = 0;
  int64_t N = gbs / mbs;
  pp_status rc = PP_OK;

  rep = ppi_calloc(ctx, (size_t)nt, sizeof *rep);
  cnt = ppi_calloc(ctx, (size_t)nt, sizeof *cnt);
  Rt = ppi_calloc(ctx, (size_t)nt, sizeof *Rt);
  r = ppi_calloc(ctx, (size_t)nt * m->nop, sizeof *r);
  best = ppi_calloc(ctx, (size_t)m->nop, sizeof *best);
  path = ppi_calloc(ctx, (size_t)m->nop, sizeof *path);
  if (!rep || !cnt || !Rt || !r || !best || !path) {
    rc = PP_ENOMEM;
    goto done;
  }
  for (i = 0; i < c->ndev; i++) {
    if (!cnt[c->dev_type[i]])
      rep[c->dev_type[i]] = i;
    cnt[c->dev_type[i]]++;
  }
  for (v = 0; v < m->nop; v++)
    best[v] = INFINITY;
  for (t = 0; t < nt; t++) {
    pp_type_key key;
    if (!cnt[t])
      continue;
    key = pp_model_type_key(m, c, rep[t]);
    key.precision = prec;
    for (v = 0; v < m->nop; v++) {
      /* stages of several tp degrees: each operator at the degree of
      ** least device time (tp x its time), and the critical path at its
      ** fastest */
      double dt = INFINITY;
      int32_t j, one = type_tp && type_tp[t] > 0;
      for (j = 0; j < (one ? 1 : ntp); j++) {
        int32_t tp = one ? type_tp[t] : tps[j];
        pp_op_time x;
        double y;
        if ((rc = pp_model_op_time(m, v, &key, tp, mbs, &x)))
          goto done;
        y = x.fwd_ms + x.bwd_ms + (recompute ? x.fwd_ms : 0);
        if (y * tp < dt)
          dt = y * tp;
        if (y < best[v])
          best[v] = y;
      }
      r[(size_t)t * m->nop + v] = dt;
      Rt[t] += dt;
    }
  }
  for (t = 0; t < nt; t++)
    if (cnt[t] && Rt[t] > 0)
      denom += cnt[t] / Rt[t];
  if (denom > 0) {
    double s = 0;
    for (v = 0; v < m->nop; v++) {
      double mn = INFINITY;
      for (t = 0; t < nt; t++)
        if (cnt[t] && Rt[t] > 0) {
          double y = r[(size_t)t * m->nop + v] / Rt[t];
          if (y < mn)
            mn = y;
        }
      s += mn;
    }
    lb1 = (double)N * s / denom;
  }
  for (i = 0; i < m->nop; i++) {
    int32_t a, n;
    const int32_t *in;
    v = m->topo[i];
    path[v] = 0;
    pp_model_op_edges(m, v, 1, &in, &n);
    for (a = 0; a < n; a++)
      if (path[m->esrc[in[a]]] > path[v])
        path[v] = path[m->esrc[in[a]]];
    path[v] += best[v];
    if (path[v] > lb2)
      lb2 = path[v];
  }
  *out = lb1 > lb2 ? lb1 : lb2;
done:
  ppi_free(ctx, rep, (size_t)nt * sizeof *rep);
  ppi_free(ctx, cnt, (size_t)nt * sizeof *cnt);
  ppi_free(ctx, Rt, (size_t)nt * sizeof *Rt);
  ppi_free(ctx, r, (size_t)nt * m->nop * sizeof *r);
  ppi_free(ctx, best, (size_t)m->nop * sizeof *best);
  ppi_free(ctx, path, (size_t)m->nop * sizeof *path);
  return rc;
}

pp_status ppi_lower_bound_tps(pp_ctx *ctx, const pp_model *m,
                              const pp_cluster *c, int64_t gbs,
                              const int32_t *tps, int32_t ntp,
                              const int32_t *type_tp, int32_t mbs,
                              int recompute, pp_precision prec, double *out_ms)
{
  return lower_bound_k(ctx, m, c, gbs, tps, ntp, type_tp, mbs, recompute, prec,
                       out_ms);
}

pp_status pp_lower_bound(pp_ctx *ctx, const pp_model *m, const pp_cluster *c,
                         int64_t gbs, int32_t tp, int32_t mbs, int recompute,
                         double *out_ms)
{
  if (!ctx || !m || !c || !out_ms)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_lower_bound: NULL argument")
               : PP_EINVAL;
  if (gbs <= 0 || mbs <= 0 || tp <= 0 || gbs % mbs)
    return ppi_fail(ctx, PP_EINVAL,
                    "pp_lower_bound: global batch %lld, micro-batch %d, tp %d "
                    "(positive, and the micro-batch must divide the batch)",
                    (long long)gbs, (int)mbs, (int)tp);
  return lower_bound_k(ctx, m, c, gbs, &tp, 1, NULL, mbs, recompute,
                       PP_PREC_MODEL, out_ms);
}

static pp_status fill_eval(pp_ctx *ctx, struct pp_eval *e,
                           const struct ppi_cost *k)
{
  int32_t s, r, d;
  double *upd;
  pp_status rc;

  e->S = k->S;
  e->ndev = k->ndev;
  e->sched = k->p->p.schedule;
  e->tp = pp_plan_uniform_tp(k->p); /* 0: the stages differ */
  e->micro_batch = k->p->p.micro_batch;
  e->global_batch = k->p->p.global_batch;
  e->recompute = k->p->p.recompute;
  e->kind = k->cp.kind;
  e->opt = k->p->p.optimizer;
  e->precision = k->prec;
  e->engine = k->engine;
  e->zero = k->zero;
  e->period_ms = k->period_ms;
  if (!(e->st = ppi_arena_alloc(&e->arena, ctx, (size_t)k->S, sizeof *e->st)) ||
      !(e->mem =
            ppi_arena_alloc(&e->arena, ctx, (size_t)k->ndev, sizeof *e->mem)) ||
      !(e->dev_name = ppi_arena_alloc(&e->arena, ctx, (size_t)k->ndev,
                                      sizeof *e->dev_name)) ||
      !(e->plan_src = ppi_arena_strdup(&e->arena, ctx, k->p->source)) ||
      !(e->model_name = ppi_arena_strdup(&e->arena, ctx, k->m->name)) ||
      !(e->cluster_name = ppi_arena_strdup(&e->arena, ctx, k->c->name)))
    return PP_ENOMEM;
  for (d = 0; d < k->ndev; d++)
    if (!(e->dev_name[d] = ppi_arena_strdup(&e->arena, ctx, k->c->dev_name[d])))
      return PP_ENOMEM;
  for (s = 0; s < k->S; s++) {
    pp_stage_cost *x = &e->st[s];
    int32_t i;
    x->straggler = 0;
    x->tp = ppi_cost_tp(k, s);
    for (r = 0; r < ppi_cost_nrep(k, s); r++) {
      int32_t q = k->p->rep_off[s] + r;
      if (k->comp[q] > x->compute_ms || r == 0) {
        x->compute_ms = k->comp[q];
        x->fwd_ms = k->f[q];
        x->bwd_ms = k->b[q];
        x->recompute_ms = k->rc[q];
        x->update_ms = k->u[q];
        x->straggler = r;
      }
    }
    /* activations leave for later stages; gradients come back */
    for (i = 0; i < k->ne; i++)
      if (k->e[i].a == s) {
        double w = edge_worst(k, &k->e[i]);
        x->send_ms += k->xf ? k->xf[i] : w;
        x->recv_ms += k->xb ? k->xb[i] : w;
      }
    x->allreduce_ms = k->ar_ms[s];
    x->hierarchical = k->ar_hier[s];
    x->param_bytes = k->param[s];
    x->micro_batches = k->gas[s];
    x->in_flight = k->inflight[s];
    x->group = k->group[s];
  }
  if (!(upd = ppi_calloc(ctx, (size_t)k->ndev, sizeof *upd)))
    return PP_ENOMEM;
  rc = analytic(ctx, k, &e->sum, upd);
  ppi_free(ctx, upd, (size_t)k->ndev * sizeof *upd);
  if (rc)
    return rc;
  memory(k, e->mem, &e->sum);
  e->sum.est = k->est;
  e->sum.time_spread = ppi_cost_time_spread(k, e->sum.iteration_ms,
                                            e->sum.p2p_ms + e->sum.allreduce_ms,
                                            &e->sum.calibrated);
  if (k->cp.kind == PP_COST_AMP) {
    if ((rc = ppi_cost_amp(ctx, k, &e->amp)))
      return rc;
    e->sum.iteration_ms = e->amp.pipe_ms + e->amp.dp_ms;
    e->sum.steady_ms = e->amp.pipe_ms - e->amp.sum_stage_ms - e->amp.p2p_ms;
    e->sum.fill_ms = e->amp.sum_stage_ms + e->amp.p2p_ms;
    e->sum.p2p_ms = e->amp.p2p_ms;
    e->sum.allreduce_ms = e->amp.dp_ms;
    e->sum.update_ms = 0;
  }
  e->sum.throughput = e->sum.iteration_ms > 0 ? (double)k->p->p.global_batch /
                                                    (e->sum.iteration_ms / 1000)
                                              : INFINITY;
  {
    /* the plan's degrees, each once */
    int32_t tps[PPI_MAX_TP_DEGREES] = {0}, ntp = 0, s2, j, over = 0;
    double sp = INFINITY;
    for (s2 = 0; s2 < k->S; s2++) {
      for (j = 0; j < ntp && tps[j] != ppi_cost_tp(k, s2); j++)
        ;
      if (j == ntp && ntp < PPI_MAX_TP_DEGREES)
        tps[ntp++] = ppi_cost_tp(k, s2);
      else if (j == ntp)
        over = 1;
    }
    if (!over && ppi_share_lb_get(k, tps, ntp, &e->sum.lower_bound_ms))
      return rc;
    rc = lower_bound_k(ctx, k->m, k->c, k->p->p.global_batch, tps, ntp, NULL,
                       k->p->p.micro_batch, k->p->p.recompute, k->prec,
                       &e->sum.lower_bound_ms);
    if (over)
      e->sum.lower_bound_ms = 0;
    /* under a calibration, the bound shrinks with what it can speed up
    ** (the search's bounds alike, search_space.c), at the degree it
    ** speeds up most */
    for (j = 0; j < ntp; j++) {
      double x = ppi_calib_speedup(k->cp.calibration, k->p->p.micro_batch,
                                   k->m->micro_batch, tps[j]);
      if (x < sp)
        sp = x;
    }
    if (k->cp.kind != PP_COST_AMP)
      e->sum.lower_bound_ms *= sp;
    if (!rc && !over)
      ppi_share_lb_put(k, tps, ntp, e->sum.lower_bound_ms);
  }
  return rc;
}

pp_status pp_evaluate(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                      const pp_cluster *c, const pp_cost_params *cp,
                      pp_eval **out)
{
  return ppi_evaluate_cached(ctx, p, m, c, cp, NULL, out);
}

pp_status ppi_evaluate_cached(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                              const pp_cluster *c, const pp_cost_params *cp,
                              struct ppi_share_cache *cache, pp_eval **out)
{
  struct ppi_cost k;
  struct pp_eval *e;
  pp_status rc;

  if (!ctx || !p || !m || !c || !out)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_evaluate: NULL argument")
               : PP_EINVAL;
  *out = NULL;
  if ((rc = pp_plan_check(ctx, p, m, c)) ||
      (rc = ppi_cost_init_cached(ctx, &k, p, m, c, cp, cache)))
    return rc;
  if (!(e = ppi_calloc(ctx, 1, sizeof *e))) {
    ppi_cost_free(ctx, &k);
    return PP_ENOMEM;
  }
  ppi_arena_init(&e->arena, ppi_ctx_alloc(ctx));
  rc = fill_eval(ctx, e, &k);
  ppi_cost_free(ctx, &k);
  if (rc) {
    pp_eval_destroy(e);
    return rc;
  }
  *out = e;
  return PP_OK;
}

void pp_eval_destroy(pp_eval *e)
{
  if (e)
    ppi_arena_free_owner(&e->arena, e, sizeof *e);
}

pp_status pp_eval_get_summary(const pp_eval *e, pp_eval_summary *out)
{
  if (!e || !out)
    return PP_EINVAL;
  *out = e->sum;
  return PP_OK;
}

pp_status pp_eval_stage(const pp_eval *e, int32_t s, pp_stage_cost *out)
{
  if (!e || !out || s < 0 || s >= e->S)
    return PP_EINVAL;
  *out = e->st[s];
  return PP_OK;
}

pp_status pp_eval_device(const pp_eval *e, int32_t d, pp_device_memory *out)
{
  if (!e || !out || d < 0 || d >= e->ndev)
    return PP_EINVAL;
  *out = e->mem[d];
  return PP_OK;
}

pp_status pp_eval_stage_order(const pp_eval *e, int32_t s, pp_sched_op *buf,
                              int64_t cap, int64_t *n)
{
  if (!e || s < 0 || s >= e->S || (cap > 0 && !buf) || !n)
    return PP_EINVAL;
  *n = 2 * e->st[s].micro_batches;
  ppi_sched_order(e->sched, e->st[s].micro_batches, e->st[s].in_flight, buf,
                  cap);
  return PP_OK;
}

/* For eval_write.c. */
const struct ppi_eval_view *ppi_eval_view(const pp_eval *e,
                                          struct ppi_eval_view *v)
{
  v->S = e->S;
  v->ndev = e->ndev;
  v->sched = e->sched;
  v->st = e->st;
  v->mem = e->mem;
  v->plan_src = e->plan_src;
  v->model_name = e->model_name;
  v->cluster_name = e->cluster_name;
  v->dev_name = (const char *const *)e->dev_name;
  v->tp = e->tp;
  v->micro_batch = e->micro_batch;
  v->global_batch = e->global_batch;
  v->recompute = e->recompute;
  v->kind = e->kind;
  v->opt = e->opt;
  v->precision = e->precision;
  v->engine = e->engine;
  v->zero = e->zero;
  v->period_ms = e->period_ms;
  v->sum = &e->sum;
  return v;
}
