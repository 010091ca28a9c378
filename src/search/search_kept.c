/* SPDX-License-Identifier: MIT */
/*
** The kept plans, after the enumeration and MadPipe's pass: placed by
** the exact mapper (pp_map; tp = 1, up to PPI_PLAN_MAP_MAX_DEVICES devices,
** map_time_s each; a placement is kept only when it fits and the
** estimate improves) and simulated; the K best by simulated time are the
** result, so MadPipe never displaces a plan that simulates better.
** Without the simulator, each plan's bubble comes from the estimate.
**
** Objective: the K plans of least simulated time among the kept ones.
** Invariant: the simulator's peak memory is the truth: a plan it finds
** too big (past capacity less the search's margin) is dropped, whatever
** the estimate said.  Ties in simulated time go to the plan of least
** memory share, then to the earlier point in the enumeration.
** Complexity: per kept plan, one mapping (bounded by map_time_s) and one
** simulation; at most 2 K plans.
** Source: docs/PLANNER.md, "Per point"; docs/MAPPING.md.
*/
#include "search/search.h"
#include "sim/sim.h"

#include <stdlib.h>
#include <string.h>

static int cmp_final(const void *x, const void *y)
{
  const struct cand *a = x, *b = y;
  double ka = a->sim > 0 ? a->sim : a->est, kb = b->sim > 0 ? b->sim : b->est;
  if (ka != kb)
    return ka < kb ? -1 : 1;
  if (a->peak != b->peak) /* equal times: the least memory share */
    return a->peak < b->peak ? -1 : 1;
  return (a->pt.idx > b->pt.idx) - (a->pt.idx < b->pt.idx);
}

/* Place a kept plan by the exact mapper; keep the placement when it
** fits and the estimate improves. */
static pp_status remap(pp_ctx *ctx, const struct space *sp, struct cand *x,
                       int32_t *opbuf, int32_t *off, double limit_s, bool *cut)
{
  const pp_search_params *p = sp->p;
  pp_stage_graph *g = NULL;
  pp_mapping *mp = NULL;
  pp_map_params mpp;
  pp_plan *pl = NULL;
  pp_plan_params q, qb;
  int32_t S = x->pt.pp, R = x->pt.dp, s, r, *devs;
  struct ppi_price y;
  pp_status rc;

  if (!x->part || x->pt.tp != 1 || x->pt.tpv >= 0 || p->map_time_s <= 0 ||
      pp_cluster_ndev(sp->c) > PPI_PLAN_MAP_MAX_DEVICES || S * R < 2)
    return PP_OK;
  if (!(devs = ppi_alloc(ctx, (size_t)S * R * sizeof *devs)))
    return PP_ENOMEM;
  if ((rc = pp_partition_stage_graph(ctx, x->part, &g)))
    goto done;
  pp_map_params_init(&mpp);
  mpp.replicas = R;
  mpp.time_limit_s = limit_s;
  mpp.stop = p->stop;
  /* a budget of nodes, on one thread: the same placement on every
  ** machine and at every thread count; the time limit only caps it
  ** (map_nodes 0: the time alone, on the search's threads) */
  mpp.max_nodes = p->map_nodes;
  mpp.threads = p->map_nodes > 0                   ? 1
                : p->threads < PPI_MAX_MAP_THREADS ? p->threads
                                                   : PPI_MAX_MAP_THREADS;
  if ((rc = pp_map(ctx, g, sp->c, &mpp, &mp)))
    goto done;
  { /* a mapping its time limit cut depends on the machine's speed */
    pp_map_summary ms;
    if (pp_mapping_summary(mp, &ms) == PP_OK && ms.timed_out)
      *cut = true;
  }
  ppi_partition_ops(x->part, S, opbuf, off);
  for (s = 0; s < S; s++)
    for (r = 0; r < R; r++)
      devs[(size_t)s * R + r] = pp_mapping_device(mp, s, r);
  if ((rc = ppi_search_build_plan(ctx, sp, &x->pt, opbuf, off, devs, &pl)))
    goto done;
  pp_plan_get_params(x->plan, &q); /* the ZeRO stage chosen for it */
  if (pp_plan_get_params(pl, &qb), qb.zero != q.zero) {
    pp_plan *at = NULL;
    rc = ppi_plan_with_params(ctx, pl, &q, &at);
    pp_plan_destroy(pl);
    pl = at;
    if (rc)
      goto done;
  }
  if ((rc = ppi_search_price(ctx, sp, pl, NULL, &y)))
    goto done;
  if (y.fits && y.est < x->est) {
    pp_plan_destroy(x->plan);
    x->plan = pl;
    pl = NULL;
    x->est = y.est;
    x->peak = y.share;
    x->mapped = 1;
  }
done:
  pp_plan_destroy(pl);
  pp_mapping_destroy(mp);
  pp_stage_graph_destroy(g);
  ppi_free(ctx, devs, (size_t)S * R * sizeof *devs);
  return rc;
}

static pp_status simulate(pp_ctx *ctx, const struct space *sp, struct cand *x,
                          const struct ppi_stop *stop, bool *fits)
{
  pp_cost_params cp;
  pp_sim *sim;
  pp_sim_summary ss;
  int32_t d, used = 0;
  double bub = 0;
  pp_status rc;
  ppi_search_cost_params(sp, &cp);
  if ((rc = ppi_simulate_until(ctx, x->plan, sp->m, sp->c, &cp, stop, &sim)))
    return rc;
  pp_sim_get_summary(sim, &ss);
  x->sim = ss.iteration_ms;
  *fits = ppi_sim_fits(sim, sp->c, sp->p->memory_margin);
  for (d = 0; d < pp_cluster_ndev(sp->c); d++) {
    pp_sim_device sd;
    if (pp_sim_device_get(sim, d, &sd) == PP_OK && sd.used &&
        ss.iteration_ms > 0) {
      bub += sd.idle_ms / ss.iteration_ms;
      used++;
    }
  }
  x->bubble = used ? bub / used : 0;
  pp_sim_destroy(sim);
  return PP_OK;
}

/* The estimate's bubble: the share of the iteration a stage's devices
** do not compute, averaged over the stages. */
static pp_status est_bubble(pp_ctx *ctx, const struct space *sp, struct cand *x)
{
  pp_cost_params cp;
  pp_eval *e;
  pp_eval_summary es;
  int32_t s, S = pp_plan_nstage(x->plan);
  double idle = 0;
  pp_status rc;
  ppi_search_cost_params(sp, &cp);
  if ((rc = pp_evaluate(ctx, x->plan, sp->m, sp->c, &cp, &e)))
    return rc;
  pp_eval_get_summary(e, &es);
  for (s = 0; s < S; s++) {
    pp_stage_cost sc;
    pp_eval_stage(e, s, &sc);
    if (es.iteration_ms > 0)
      idle += 1 - (double)sc.micro_batches * sc.compute_ms / es.iteration_ms;
  }
  x->bubble = S ? idle / S : 0;
  pp_eval_destroy(e);
  return PP_OK;
}

/* When time runs out before every plan is simulated, all are ranked by
** the estimate (a simulated time and an estimate do not compare). */
static int cmp_est(const void *x, const void *y)
{
  const struct cand *a = x, *b = y;
  if (a->est != b->est)
    return a->est < b->est ? -1 : 1;
  if (a->peak != b->peak)
    return a->peak < b->peak ? -1 : 1;
  return (a->pt.idx > b->pt.idx) - (a->pt.idx < b->pt.idx);
}

pp_status ppi_kept_finish(pp_ctx *ctx, const struct space *sp,
                          struct cand *kept, int32_t *nkept, int32_t K,
                          int32_t *opbuf, int32_t *off,
                          const struct ppi_stop *stop, bool *cut,
                          int32_t *simulated, int *by_estimate)
{
  int32_t i, n = *nkept;
  bool all = true, limited = false;
  pp_status rc = PP_OK;
  *simulated = 0;
  *by_estimate = 1;
  /* the mappings: each at most map_time_s and its share of what is left
  ** (the time limit holds for the whole search) */
  for (i = 0; i < n && !rc; i++) {
    double left = ppi_stop_left(stop) / (n - i),
           lim = sp->p->map_time_s < left ? sp->p->map_time_s : left;
    if (sp->p->map_time_s > 0 && lim <= 0) {
      *cut = true;
      break;
    }
    rc = remap(ctx, sp, &kept[i], opbuf, off, lim, cut);
  }
  for (i = 0; i < *nkept && !rc; i++) {
    bool fits = true;
    if (sp->p->simulate && all) {
      rc = ppi_stopped(stop) ? PP_ECANCELED
                             : simulate(ctx, sp, &kept[i], stop, &fits);
      /* out of time, past the simulator's size limit, or out of memory
      ** (a 16,384-device plan): the search is kept, all by the estimate */
      if (rc == PP_ECANCELED || rc == PP_ELIMIT || rc == PP_ENOMEM) {
        *cut = *cut || rc == PP_ECANCELED;
        limited = rc != PP_ECANCELED;
        pp_ctx_clear_error(ctx);
        rc = PP_OK;
        all = false;
      }
    }
    if (!rc && (!sp->p->simulate || !all))
      rc = est_bubble(ctx, sp, &kept[i]);
    if (!rc && !fits) { /* the simulator's peak is the truth */
      ppi_cand_free(&kept[i]);
      kept[i] = kept[--*nkept];
      i--;
    }
  }
  if (rc)
    return rc;
  if (*nkept > 1)
    qsort(kept, (size_t)*nkept, sizeof *kept, all ? cmp_final : cmp_est);
  while (*nkept > K)
    ppi_cand_free(&kept[--*nkept]);
  for (i = 0; i < *nkept; i++)
    *simulated += kept[i].sim > 0;
  *by_estimate = limited ? 2 : !sp->p->simulate || !all;
  return PP_OK;
}
