/* SPDX-License-Identifier: MIT */
/*
** A candidate plan of the planner and its price: the plan of a point's
** partition in Megatron's rank order (ppi_plan_of, shared with the
** comparison), checked and priced by the analytic estimate (pp_evaluate
** with the search's cost parameters), and offered to the point's best;
** the sorted lists of kept candidates; the network a point sees (each
** stage at the pace of its slowest device, the slowest links).
**
** Objective: the estimate of a plan that fits; a plan that does not fit
** in memory is never kept, but the one that came closest is remembered
** (its worst device, need and capacity) for the "nothing fits" answer.
** Invariant: a kept list holds at most K candidates sorted by
** (estimate, enumeration index), so merges do not depend on timing.
** Complexity: a plan and its estimate are linear in the plan's devices
** and stages; keep is O(K).
** Source: docs/PLANNER.md, "Per point".
*/
#include "search/search.h"

#include <math.h>
#include <string.h>

void ppi_cand_free(struct cand *x)
{
  pp_plan_destroy(x->plan);
  pp_partition_destroy(x->part);
  x->plan = NULL;
  x->part = NULL;
}

/* Least estimate; at equal estimates the least memory share, then the
** earlier point (docs/PLANNER.md, "Run settings"). */
static bool better(const struct cand *a, const struct cand *b)
{
  if (a->est != b->est)
    return a->est < b->est;
  if (a->peak != b->peak)
    return a->peak < b->peak;
  return a->pt.idx < b->pt.idx;
}

void ppi_cand_keep(struct cand *l, int32_t *n, int32_t K, struct cand *x)
{
  int32_t i;
  if (*n == K) {
    if (!better(x, &l[K - 1])) {
      ppi_cand_free(x);
      return;
    }
    ppi_cand_free(&l[K - 1]);
    (*n)--;
  }
  for (i = *n; i > 0 && better(x, &l[i - 1]); i--)
    l[i] = l[i - 1];
  l[i] = *x;
  (*n)++;
}

unsigned ppi_search_zero_mask(const pp_search_params *p, int32_t pp)
{
  unsigned runs = ppi_engine_zero_mask(p->engine, pp);
  if (p->zero >= 0)
    return runs & (1u << p->zero);
  return p->engine == PP_ENGINE_GENERIC ? 1u : runs;
}

void ppi_search_plan_params(const pp_search_params *p, int32_t zero,
                            pp_plan_params *pl)
{
  pp_plan_params_init(pl);
  pl->global_batch = p->global_batch;
  pl->optimizer = p->optimizer;
  pl->precision = p->precision;
  pl->engine = p->engine;
  pl->zero = zero;
}

/* The share of a device's capacity a plan must leave free: the
** calibration's interval where it measured the type's memory (the
** prediction's upper end, two spreads, must fit), else the search's
** margin (docs/PLANNER.md, "Run settings", Memory margin). */
static double device_margin(double margin, double spread, int calibrated)
{
  return calibrated ? 1 - 1 / (1 + 2 * spread) : margin;
}

bool ppi_eval_fits(const pp_eval *e, const pp_cluster *c, double margin)
{
  pp_eval_summary es;
  int32_t d;
  if (pp_eval_get_summary(e, &es) != PP_OK || !es.fits)
    return false;
  for (d = 0; d < pp_cluster_ndev(c); d++) {
    pp_device_memory dm;
    if (pp_eval_device(e, d, &dm) == PP_OK && dm.used &&
        dm.total_bytes >
            (double)dm.capacity_bytes *
                (1 - device_margin(margin, dm.spread, dm.calibrated)))
      return false;
  }
  return true;
}

bool ppi_sim_fits(const pp_sim *s, const pp_cluster *c, double margin)
{
  pp_sim_summary ss;
  int32_t d;
  if (pp_sim_get_summary(s, &ss) != PP_OK || !ss.fits)
    return false;
  for (d = 0; d < pp_cluster_ndev(c); d++) {
    pp_sim_device sd;
    if (pp_sim_device_get(s, d, &sd) == PP_OK && sd.used &&
        sd.peak_memory_bytes >
            (double)sd.capacity_bytes *
                (1 - device_margin(margin, sd.spread, sd.calibrated)))
      return false;
  }
  return true;
}

pp_status ppi_plan_of(pp_ctx *ctx, const pp_search_params *p, int32_t zero,
                      const struct ppi_shape *sh, const int32_t *ops,
                      const int32_t *off, const int32_t *devs, pp_plan **out)
{
  pp_plan_params pl;
  pp_plan_builder *b;
  int32_t s, r;
  size_t o = 0;
  pp_status rc;
  ppi_search_plan_params(p, zero, &pl);
  pl.micro_batch = sh->mbs;
  pl.tp = sh->stp ? sh->stp[0] : sh->tp;
  pl.schedule = sh->sched;
  pl.recompute = sh->rec;
  if ((rc = pp_plan_builder_create(ctx, &pl, "parplan plan", &b)))
    return rc;
  for (s = 0; s < sh->pp; s++) {
    int32_t id, tp = sh->stp ? sh->stp[s] : sh->tp;
    if ((rc = pp_plan_builder_add_stage(b, ops + off[s], off[s + 1] - off[s],
                                        &id)) ||
        (sh->stp && (rc = pp_plan_builder_set_stage_tp(b, id, tp))))
      goto fail;
    for (r = 0; r < sh->dp; r++)
      if ((rc = pp_plan_builder_add_replica(b, id, devs + o + (size_t)r * tp)))
        goto fail;
    o += (size_t)sh->dp * tp;
  }
  return pp_plan_builder_finish(b, out);
fail:
  pp_plan_builder_destroy(b);
  return rc;
}

void ppi_partition_ops(const pp_partition *part, int32_t S, int32_t *ops,
                       int32_t *off)
{
  int32_t s, n, k = 0;
  for (s = 0; s < S; s++) {
    const int32_t *o = pp_partition_stage_ops(part, s, &n);
    off[s] = k;
    memcpy(ops + k, o, (size_t)n * sizeof *o);
    k += n;
  }
  off[S] = k;
}

void ppi_chain_ops(const pp_model *view, const int32_t *first, int32_t S,
                   int32_t *ops, int32_t *off)
{
  int32_t s, i, k = 0;
  for (s = 0; s < S; s++) {
    off[s] = k;
    for (i = first[s]; i < first[s + 1]; i++) {
      int32_t n;
      const int32_t *mem = pp_model_layer_members(view, i, &n);
      memcpy(ops + k, mem, (size_t)n * sizeof *mem);
      k += n;
    }
  }
  off[S] = k;
}

struct ppi_shape ppi_shape_of(const struct space *sp, const struct point *pt)
{
  struct ppi_shape sh;
  sh.pp = pt->pp;
  sh.dp = pt->dp;
  sh.tp = pt->tp;
  sh.stp = ppi_pt_stp(sp, pt);
  sh.mbs = pt->mbs;
  sh.sched = (pp_schedule)pt->sched;
  sh.rec = pt->rec;
  return sh;
}

pp_status ppi_search_build_plan(pp_ctx *ctx, const struct space *sp,
                                const struct point *pt, const int32_t *ops,
                                const int32_t *off, const int32_t *devs,
                                pp_plan **out)
{
  struct ppi_shape sh = ppi_shape_of(sp, pt);
  unsigned mask = ppi_search_zero_mask(sp->p, pt->pp);
  int32_t z = 0;
  while (z < 4 && !((mask >> z) & 1u)) /* the least: offer tries the rest */
    z++;
  if (z == 4)
    return ppi_fail(ctx, PP_EINPUT,
                    "plan: engine %s runs no ZeRO stage asked for with %d "
                    "pipeline stages",
                    pp_engine_name(sp->p->engine), (int)pt->pp);
  return ppi_plan_of(ctx, sp->p, z, &sh, ops, off, devs, out);
}

bool ppi_layer_prefix(pp_ctx *ctx, const struct space *sp, int32_t dev,
                      int32_t tp, int32_t mbs, int rec, double *pre,
                      double *fpre, double *fac, double *step)
{
  const pp_model *m = sp->m;
  const pp_search_params *p = sp->p;
  pp_precision prec =
      p->precision == PP_PREC_MODEL ? pp_model_dtype(m) : p->precision;
  const pp_calib_entry *ce =
      p->calibration ? pp_calibration_find(
                           p->calibration,
                           sp->c->type_name[pp_cluster_device_type(sp->c, dev)],
                           p->engine, prec)
                     : NULL;
  pp_type_key key = pp_model_type_key(m, sp->c, dev);
  int32_t l, n, i;
  key.precision = prec;
  *fac = ppi_calib_compute_factor(ce, mbs, pp_model_micro_batch(m), tp);
  *step = ce && !isnan(ce->step_ms) ? ce->step_ms : 0;
  pre[0] = 0;
  if (fpre)
    fpre[0] = 0;
  for (l = 0; l < sp->L; l++) {
    const int32_t *ops = pp_model_layer_members(sp->view, l, &n);
    double x = 0, f = 0;
    for (i = 0; i < n; i++) {
      pp_op_time ot;
      if (pp_model_op_time(m, ops[i], &key, tp, mbs, &ot)) {
        pp_ctx_clear_error(ctx);
        return false;
      }
      x += ot.fwd_ms + ot.bwd_ms + (rec ? ot.fwd_ms : 0);
      f += ot.fwd_ms;
    }
    pre[l + 1] = pre[l] + x;
    if (fpre)
      fpre[l + 1] = fpre[l] + f;
  }
  return true;
}

bool ppi_size_prefix(pp_ctx *ctx, const struct space *sp, int32_t tp,
                     int32_t mbs, double *par, double *sav)
{
  const pp_model *m = sp->m;
  const pp_search_params *p = sp->p;
  pp_precision prec =
      p->precision == PP_PREC_MODEL ? pp_model_dtype(m) : p->precision;
  double ratio =
      (double)pp_precision_bytes(prec) / pp_precision_bytes(pp_model_dtype(m));
  int32_t l, n, i;
  par[0] = sav[0] = 0;
  for (l = 0; l < sp->L; l++) {
    const int32_t *ops = pp_model_layer_members(sp->view, l, &n);
    double x = 0, y = 0;
    for (i = 0; i < n; i++) {
      pp_op_sizes zs;
      if (pp_model_op_sizes(m, ops[i], tp, mbs, &zs)) {
        pp_ctx_clear_error(ctx);
        return false;
      }
      if (m->tied[ops[i]] < 0)
        x += zs.param_bytes * ratio;
      y += zs.saved_bytes * ratio;
    }
    par[l + 1] = par[l] + x;
    sav[l + 1] = sav[l] + y;
  }
  return true;
}

void ppi_search_cost_params(const struct space *sp, pp_cost_params *cp)
{
  pp_cost_params_init(cp);
  cp->allreduce = sp->p->allreduce;
  cp->reserve_bytes = sp->p->reserve_bytes;
  cp->calibration = sp->p->calibration;
  cp->record = 0;
}

pp_status ppi_search_price(pp_ctx *ctx, const struct space *sp,
                           const pp_plan *pl, struct ppi_share_cache *share,
                           struct ppi_price *x)
{
  pp_cost_params cp;
  pp_eval *e;
  pp_eval_summary es;
  pp_device_memory dm;
  pp_status rc;
  ppi_search_cost_params(sp, &cp);
  if ((rc = ppi_evaluate_cached(ctx, pl, sp->m, sp->c, &cp, share, &e)))
    return rc;
  pp_eval_get_summary(e, &es);
  memset(x, 0, sizeof *x);
  x->est = es.iteration_ms;
  x->spread = es.time_spread;
  x->calibrated = es.calibrated;
  x->fits = ppi_eval_fits(e, sp->c, sp->p->memory_margin);
  x->worst = es.worst_device;
  if (es.worst_device >= 0 &&
      pp_eval_device(e, es.worst_device, &dm) == PP_OK &&
      dm.capacity_bytes > 0) {
    x->share = dm.total_bytes / (double)dm.capacity_bytes;
    x->need = dm.total_bytes;
    x->cap = (double)dm.capacity_bytes;
  }
  pp_eval_destroy(e);
  return PP_OK;
}

/* Whether a is the better price: fitting first, then the least estimate
** and the least memory share; of plans that do not fit, the closest. */
static bool cheaper(const struct ppi_price *a, const struct ppi_price *b)
{
  if (a->fits != b->fits)
    return a->fits;
  if (a->fits && a->est != b->est)
    return a->est < b->est;
  return a->share < b->share;
}

/* *pl, built at the least ZeRO stage the search tries at its depth,
** priced in *x; then the same plan at every higher such stage, kept in
** *pl and *x while the lower does not fit and it is cheaper: sharding
** only where memory asks for it, as practitioners use it (DDP, not FSDP,
** for a model whose replica fits).  Sharding's per-module hooks, gather
** buffers and copies are not priced, so a stage that fits anyway would
** win only by what the model leaves out. */
static pp_status best_zero(pp_ctx *ctx, const struct space *sp, pp_plan **pl,
                           struct ppi_share_cache *share, struct ppi_price *x)
{
  pp_plan_params q;
  unsigned mask;
  int32_t z;
  pp_status rc;
  if ((rc = ppi_search_price(ctx, sp, *pl, share, x)))
    return rc;
  pp_plan_get_params(*pl, &q);
  mask = ppi_search_zero_mask(sp->p, pp_plan_nstage(*pl)) & ~(1u << q.zero);
  for (z = 0; z < 4; z++) {
    pp_plan *alt = NULL;
    struct ppi_price y;
    if (!((mask >> z) & 1u))
      continue;
    if (x->fits) /* a higher stage only where the lower does not fit */
      break;
    q.zero = z;
    if ((rc = ppi_plan_with_params(ctx, *pl, &q, &alt)) ||
        (rc = ppi_search_price(ctx, sp, alt, share, &y))) {
      pp_plan_destroy(alt);
      return rc;
    }
    if (cheaper(&y, x)) {
      pp_plan_destroy(*pl);
      *pl = alt;
      *x = y;
    } else {
      pp_plan_destroy(alt);
    }
  }
  return PP_OK;
}

pp_status ppi_search_offer(struct worker *w, const struct point *pt,
                           pp_plan *pl, pp_partition *part, struct cand *best,
                           bool *have)
{
  struct ppi_price x;
  pp_status rc = best_zero(&w->ctx, w->sp, &pl, w->share, &x);
  w->offers++;
  if (rc) {
    pp_plan_destroy(pl);
    pp_partition_destroy(part);
    return rc;
  }
  if (!x.fits) {
    if (x.share < w->close_share ||
        (x.share == w->close_share && pt->idx < w->close_idx)) {
      w->close_share = x.share;
      w->close_idx = pt->idx;
      w->close_dev = x.worst;
      w->close_need = x.need;
      w->close_cap = x.cap;
    }
    pp_plan_destroy(pl);
    pp_partition_destroy(part);
    return PP_OK;
  }
  /* the least estimate, then the least memory, then (try_all) the
  ** partition first in lexicographic order, whatever order it came in */
  if (*have && !(x.est < best->est ||
                 (x.est == best->est &&
                  (x.share < best->peak ||
                   (x.share == best->peak && w->offer_order < best->order))))) {
    pp_plan_destroy(pl);
    pp_partition_destroy(part);
    return PP_OK;
  }
  if (*have)
    ppi_cand_free(best);
  memset(best, 0, sizeof *best);
  best->pt = *pt;
  best->plan = pl;
  best->part = part;
  best->est = x.est;
  best->spread = x.spread;
  best->calibrated = x.calibrated;
  best->peak = x.share;
  best->madpipe = w->offer_madpipe;
  best->order = w->offer_order;
  *have = true;
  return PP_OK;
}

void ppi_point_part_params(const struct space *sp, const struct point *pt,
                           int64_t gas, double linkbw, pp_part_objective o,
                           pp_part_params *pa)
{
  const pp_search_params *p = sp->p;
  pp_part_params_init(pa);
  pa->objective = o;
  pa->stages = pt->pp;
  pa->replicas = pt->dp;
  pa->micro_batch = pt->mbs;
  pa->gas = gas;
  pa->schedule = pt->sched == PP_SCHED_GPIPE ? PP_SCHED_GPIPE : PP_SCHED_1F1B;
  pa->optimizer = p->optimizer;
  /* the memory margin as a reserve, on the smallest memory of the set, so
  ** that the partitioners aim below capacity x (1 - margin) as the
  ** pricing will ask */
  {
    const struct dset *set = &sp->sets[pt->set];
    double cap = INFINITY;
    int32_t k;
    for (k = 0; k < set->n; k++)
      cap = fmin(cap, (double)pp_cluster_type_memory(
                          sp->c, pp_cluster_device_type(sp->c, set->dev[k])));
    pa->reserve_bytes = p->reserve_bytes +
                        (isfinite(cap) ? (int64_t)(p->memory_margin * cap) : 0);
  }
  pa->bandwidth_gbps = linkbw;
}

pp_status ppi_search_keep_best(struct worker *w, pp_status rc,
                               struct cand *best, bool have)
{
  if (rc) {
    if (have)
      ppi_cand_free(best);
    return rc;
  }
  if (have) {
    w->fitting++;
    ppi_cand_keep(w->kept, &w->nkept, w->K, best);
  }
  return PP_OK;
}

static double speed_of(const struct space *sp, int32_t d)
{
  return sp->speed[d];
}

void ppi_point_net(struct worker *w, const struct point *pt, double *arbw_out,
                   double *linkbw_out)
{
  const struct space *sp = w->sp;
  const struct dset *set = &sp->sets[pt->set];
  const pp_cluster *c = sp->c;
  double arbw = INFINITY, linkbw = INFINITY;
  int32_t s, r, k;
  for (s = 0; s < pt->pp; s++) {
    int32_t tp = ppi_pt_tp(sp, pt, s);
    const int32_t *g = set->dev + ppi_pt_off(sp, pt, s);
    int32_t slow = g[0];
    for (k = 1; k < pt->dp * tp; k++)
      if (speed_of(sp, g[k]) < speed_of(sp, slow))
        slow = g[k];
    w->reps[s] = slow;
    for (r = 0; r < pt->dp && pt->dp > 1; r++) {
      double b = pp_cluster_bandwidth(c, g[(size_t)r * tp],
                                      g[(size_t)((r + 1) % pt->dp) * tp]);
      arbw = b < arbw ? b : arbw;
    }
    if (s + 1 < pt->pp) {
      double b = pp_cluster_bandwidth(c, g[0], g[pt->dp * tp]);
      linkbw = b < linkbw ? b : linkbw;
    }
  }
  if (!isfinite(arbw))
    arbw = 0;
  /* TUNING: one stage has no link between stages: the allreduce's
  ** bandwidth, or 100 GB/s, stands in (no transfer between stages uses
  ** it, so the value changes nothing) */
  if (!isfinite(linkbw))
    linkbw = arbw > 0 ? arbw : 100;
  *arbw_out = arbw;
  *linkbw_out = linkbw;
}
