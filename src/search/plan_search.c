/* SPDX-License-Identifier: MIT */
/*
** The planner: AMP's strategy search ([AMP] 3) over every parallel
** dimension, on top of the partitioners, the mapper, the cost model and
** the simulator.
**
** Objective: the plan of least iteration time (the simulator's, among
** the K plans of least analytic time) that fits in every device's
** memory, over the points of the space (search_space.c).
**
** pp_plan_search runs five phases over one struct search_run:
**   1. the space and its points, the most promising first, and the
**      threads' state (open_space);
**   2. the enumeration (enumerate): each point is pruned by its bound
**      or partitioned, planned and priced (search_point.c), in rounds
**      over the threads;
**   3. MadPipe where memory binds (madpipe_pass, search_madpipe.c);
**   4. the kept plans, the enumeration's best K and MadPipe's, placed by
**      the exact mapper and simulated (place_and_simulate,
**      search_kept.c): the K best by simulated time stay;
**   5. the result and its summary (make_result, search_result.c).
**
** Invariant: the kept list holds the K best fitting points seen, by
** (estimate, enumeration index); a point is pruned only when its bound
** exceeds the K-th kept estimate, so it could not have entered the list.
** Determinism: points go in rounds of ROUND, whatever the thread count,
** split among the threads; each thread prunes against the list as it
** stood at the round's start, and the lists are merged in index order
** after every round: the result depends neither on timing nor on the
** thread count (unless the time limit stops the search, which the
** summary says).  Threads share no
** mutable state: each has its own context (allocator hook shared).
**
** Complexity: O(points x (partition + estimate)); the partition is
** AMP's label DP (O(L^2 S) labels in practice), the estimate linear in
** the plan's devices and stages.
** Source: docs/PLANNER.md.
*/
#include "search/search.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* TUNING: points per round, whatever the thread count: every thread
** prunes against the list of the round's start only, so which points are
** evaluated, every count and every plan are the same at 1, 2, 4 or 8
** threads (issue 22: 8 points per thread per round, with each thread
** pruning by its own finds too, evaluated 180 points of a space at 4
** threads and 192 at 8).  16 is the old round at the default 2 threads;
** short rounds prune as a single thread would, long ones share the
** merge. */
#define ROUND 16
/* TUNING: MadPipe points per round of its pass, whatever the thread
** count (the pass stops after the round where enough fit): 4, the
** default number of MadPipe plans wanted. */
#define MADPIPE_ROUND 4

/* ---- parameters --------------------------------------------------------- */

void pp_search_params_init(pp_search_params *p)
{
  if (!p)
    return;
  memset(p, 0, sizeof *p);
  /* TUNING: the defaults of parplan plan (docs/PLANNER.md): 5 plans
  ** simulated, a minute, a second of exact mapping each, 4 MadPipe plans
  ** (298aa13, 2766d50; no sweep recorded) */
  p->top_k = 5;
  p->time_limit_s = 60;
  p->threads = 2;
  p->optimizer = PP_OPT_ADAM_MIXED;
  p->allreduce = PP_AR_AUTO;
  p->schedules =
      1u << PP_SCHED_GPIPE | 1u << PP_SCHED_1F1B | 1u << PP_SCHED_1F1B_STAR;
  p->recompute = -1;
  p->subsets = 1;
  p->map_time_s = 1;
  p->map_nodes = PPI_PLAN_MAP_NODES;
  p->simulate = 1;
  p->madpipe = 4;
  p->precision = PP_PREC_MODEL;
  p->engine = PP_ENGINE_GENERIC;
  p->zero = 0;
  p->memory_margin = PPI_SEARCH_MEMORY_MARGIN;
}

static pp_status check_params(pp_ctx *ctx, const pp_search_params *p)
{
  if (p->global_batch < 1 || p->global_batch > PPI_MAX_GLOBAL_BATCH)
    return ppi_fail(ctx, PP_EINPUT,
                    "plan: global batch %lld; it must be at least 1",
                    (long long)p->global_batch);
  if (p->top_k < 1 || p->top_k > 1000)
    return ppi_fail(ctx, PP_EINPUT, "plan: top %d; 1 to 1000", (int)p->top_k);
  if (!(p->time_limit_s > 0) || !isfinite(p->time_limit_s))
    return ppi_fail(ctx, PP_EINPUT, "plan: the time limit must be positive");
  if (p->threads < 1 || p->threads > PPI_MAX_THREADS)
    return ppi_fail(ctx, PP_EINPUT, "plan: %d threads; 1 to %d",
                    (int)p->threads, PPI_MAX_THREADS);
  if (!pp_optimizer_name(p->optimizer))
    return ppi_fail(ctx, PP_EINVAL, "plan: unknown optimizer %d",
                    (int)p->optimizer);
  if (!pp_precision_name(p->precision))
    return ppi_fail(ctx, PP_EINVAL, "plan: unknown precision %d",
                    (int)p->precision);
  if (!pp_engine_name(p->engine))
    return ppi_fail(ctx, PP_EINVAL, "plan: unknown engine %d", (int)p->engine);
  if (p->zero < -1 || p->zero > 3)
    return ppi_fail(ctx, PP_EINPUT,
                    "plan: ZeRO stage %d; 0 to 3, or -1 for the best the "
                    "engine runs",
                    (int)p->zero);
  if (!(p->memory_margin >= 0 && p->memory_margin < 1))
    return ppi_fail(ctx, PP_EINPUT,
                    "plan: memory margin %g; a fraction of capacity in "
                    "[0, 1)",
                    p->memory_margin);
  if (p->reserve_bytes < 0)
    return ppi_fail(ctx, PP_EINPUT, "plan: negative reserve");
  if ((p->schedules & 7u) == 0 || (p->schedules & ~7u))
    return ppi_fail(ctx, PP_EINPUT, "plan: no schedule to try (mask %u)",
                    p->schedules);
  if (p->recompute < -1 || p->recompute > 1)
    return ppi_fail(ctx, PP_EINPUT, "plan: recompute must be -1, 0 or 1");
  if (p->max_tp < 0 || p->max_micro_batch < 0)
    return ppi_fail(ctx, PP_EINPUT,
                    "plan: tensor-parallel and micro-batch limits must be "
                    ">= 0");
  if (p->map_nodes < 0)
    return ppi_fail(ctx, PP_EINVAL,
                    "plan: map_nodes %lld (a budget of nodes, 0 for none)",
                    (long long)p->map_nodes);
  if (!(p->map_time_s >= 0) || !isfinite(p->map_time_s))
    return ppi_fail(ctx, PP_EINPUT, "plan: the mapping time must be >= 0");
  if (p->madpipe < 0 || p->madpipe > 1000)
    return ppi_fail(ctx, PP_EINPUT, "plan: madpipe runs %d; 0 to 1000",
                    (int)p->madpipe);
  return PP_OK;
}

/* ---- the threads -------------------------------------------------------- */

static void worker_free(pp_ctx *ctx, struct worker *w, int32_t nop, int32_t S)
{
  int32_t i;
  for (i = 0; i < w->nkept; i++)
    ppi_cand_free(&w->kept[i]);
  ppi_free(ctx, w->kept, (size_t)w->K * sizeof *w->kept);
  ppi_free(ctx, w->opbuf, (size_t)nop * sizeof *w->opbuf);
  ppi_free(ctx, w->off, (size_t)(S + 1) * sizeof *w->off);
  ppi_free(ctx, w->reps, (size_t)S * sizeof *w->reps);
  ppi_free(ctx, w->first, (size_t)(S + 1) * sizeof *w->first);
  ppi_share_cache_free(ctx, w->share);
  ppi_vec_free(ctx, &w->bound);
}

static pp_status run_worker(pp_ctx *ctx, void *arg)
{
  struct worker *w = arg;
  int64_t i;
  (void)ctx; /* w->ctx, where the point functions find it */
  for (i = w->from; i < w->to && !w->rc; i += w->step) {
    if (ppi_stopped(&w->stop)) {
      w->timed_out = true;
      break;
    }
    w->rc = w->madpipe_pass ? ppi_madpipe_point(w, &w->pts[i])
                            : ppi_eval_point(w, &w->pts[i]);
  }
  return w->rc;
}

/* One round: threads take points start, start + 1, ... below end in
** turn (MadPipe's pass when madpipe), then their finds are merged into
** kept in a fixed order. */
static pp_status run_round(pp_ctx *ctx, struct worker *ws, int32_t T,
                           const struct point *pts, int64_t start, int64_t end,
                           bool madpipe, struct cand *kept, int32_t *nkept,
                           struct cand *pool, bool *timed_out)
{
  int32_t i, npool = 0, K = ws[0].K;
  double bar = *nkept == K ? kept[K - 1].est : INFINITY;
  pp_status rc;
  for (i = 0; i < T; i++) {
    struct worker *w = &ws[i];
    w->pts = pts;
    w->madpipe_pass = madpipe;
    w->from = start + i;
    w->to = end;
    w->step = T;
    w->bar = bar;
    w->rc = PP_OK;
  }
  if ((rc = ppi_fanout(ctx, "plan", run_worker, ws, sizeof *ws,
                       offsetof(struct worker, ctx), T)))
    return rc;
  /* merge: the kept list and every thread's finds, best first */
  for (i = 0; i < *nkept; i++)
    pool[npool++] = kept[i];
  for (i = 0; i < T; i++) {
    int32_t j;
    struct worker *w = &ws[i];
    for (j = 0; j < w->nkept; j++)
      pool[npool++] = w->kept[j];
    w->nkept = 0;
    *timed_out = *timed_out || w->timed_out;
  }
  *nkept = 0;
  for (i = 0; i < npool; i++)
    ppi_cand_keep(kept, nkept, K, &pool[i]);
  return PP_OK;
}

/* ---- the phases ---------------------------------------------------------- */

/* One run of pp_plan_search: what its phases share. */
struct search_run {
  pp_ctx *ctx;
  const pp_search_params *p;
  struct space sp;
  struct ppi_vec pts;       /* the points, the most promising first */
  int64_t np;               /* how many */
  double space_lb;          /* the least bound of the space */
  int32_t T, K, nop, maxS;  /* threads, plans, operators, most stages */
  struct worker *ws;        /* [T] */
  struct cand *kept, *pool; /* [2 K] the best so far; [K (T + 1)] merges */
  int32_t nkept;
  struct cand *mkept; /* [K] MadPipe's best */
  int32_t nmkept;
  int32_t simulated;  /* kept plans the simulator ran */
  int by_estimate;    /* ranked by the estimate */
  struct point *bpts; /* [nbpts] the points MadPipe's pass tries */
  size_t nbpts;
  double t0;
  struct ppi_stop stop; /* the time limit, the caller's stop flag */
  bool timed_out;
};

/* Phase 1: the space and its points, the kept lists, each thread's
** buffers sized for the largest point. */
static pp_status open_space(struct search_run *r)
{
  pp_ctx *ctx = r->ctx;
  int32_t T = r->T, K = r->K, nop = r->nop, maxS = 1, i;
  int64_t start;
  pp_status rc;

  if ((rc = ppi_space_open(ctx, &r->sp, &r->pts, &r->space_lb)))
    return rc;
  r->np = (int64_t)r->pts.n;
  for (start = 0; start < r->np; start++) {
    const struct point *pt = &PPI_VEC_AT(&r->pts, struct point, start);
    maxS = pt->pp > maxS ? pt->pp : maxS;
  }
  r->maxS = maxS;
  if (!(r->ws = ppi_calloc(ctx, (size_t)T, sizeof *r->ws)) ||
      !(r->kept = ppi_calloc(ctx, 2 * (size_t)K, sizeof *r->kept)) ||
      !(r->mkept = ppi_calloc(ctx, (size_t)K, sizeof *r->mkept)) ||
      !(r->pool = ppi_calloc(ctx, (size_t)K * (T + 1), sizeof *r->pool)))
    return PP_ENOMEM;
  for (i = 0; i < T; i++) {
    struct worker *w = &r->ws[i];
    w->K = K;
    w->sp = &r->sp;
    w->pts = r->pts.data;
    w->stop = r->stop;
    if (!(w->kept = ppi_calloc(ctx, (size_t)K, sizeof *w->kept)) ||
        !(w->opbuf =
              ppi_alloc(ctx, (size_t)(nop > 0 ? nop : 1) * sizeof *w->opbuf)) ||
        !(w->off = ppi_alloc(ctx, (size_t)(maxS + 1) * sizeof *w->off)) ||
        !(w->reps = ppi_alloc(ctx, (size_t)maxS * sizeof *w->reps)) ||
        !(w->first = ppi_alloc(ctx, (size_t)(maxS + 1) * sizeof *w->first)) ||
        !(w->share = ppi_share_cache_new(ctx)))
      return PP_ENOMEM;
    w->close_share = INFINITY;
    w->close_idx = INT64_MAX;
    w->close_dev = -1;
    w->lbmin = INFINITY;
    ppi_vec_init(&w->bound, sizeof(struct point));
  }
  return PP_OK;
}

/* Phase 2: every point, ROUND per round split among the threads,
** reporting progress after each round. */
static pp_status enumerate(struct search_run *r)
{
  const pp_search_params *p = r->p;
  int32_t T = r->T;
  int64_t start, np = r->np;
  pp_status rc;

  for (start = 0; start < np && !r->timed_out; start += ROUND) {
    int64_t end = start + ROUND < np ? start + ROUND : np;
    if (ppi_stopped(&r->stop)) {
      r->timed_out = true;
      break;
    }
    if ((rc = run_round(r->ctx, r->ws, T, r->pts.data, start, end, false,
                        r->kept, &r->nkept, r->pool, &r->timed_out)))
      return rc;
    if (p->progress && p->progress(p->progress_ud, (double)end / np))
      return ppi_fail(r->ctx, PP_ECANCELED, "plan: stopped by the caller");
  }
  {
    /* the memory bound priced nothing: every point again without it, so
    ** that "nothing fits" names the closest plan priced (a pass only
    ** where nothing fits anyway) */
    int64_t evaluated = 0, mem = 0;
    int32_t i;
    for (i = 0; i < T; i++) {
      evaluated += r->ws[i].evaluated;
      mem += r->ws[i].mem_pruned;
    }
    if (r->nkept == 0 && evaluated == 0 && mem > 0 && !r->timed_out) {
      for (i = 0; i < T; i++) {
        struct worker *w = &r->ws[i];
        w->mem_all = true;
        w->pruned = w->evaluated = w->fitting = w->mem_pruned = 0;
        w->offers = w->part_pruned = 0;
        w->lbmin = INFINITY;
        w->bound.n = 0; /* MadPipe's points are recorded again */
      }
      return enumerate(r);
    }
  }
  return PP_OK;
}

/* Phase 3: MadPipe where memory binds, on the points whose bound still
** leaves them a chance, lowest bound first; MADPIPE_ROUND points per
** round until p->madpipe of them gave a plan that fits. */
static pp_status madpipe_pass(struct search_run *r)
{
  int32_t T = r->T, i;
  size_t nb, k;
  pp_status rc;

  if (r->timed_out || r->p->madpipe <= 0)
    return PP_OK;
  if ((rc = ppi_madpipe_points(r->ctx, r->ws, T, r->kept, r->nkept, r->K,
                               r->p->madpipe, &r->bpts, &r->nbpts, &nb)))
    return rc;
  for (i = 0; i < T; i++)
    r->ws[i].mp_cap = r->nkept ? r->kept[0].est : INFINITY;
  for (k = 0; k < nb && !r->timed_out; k += MADPIPE_ROUND) {
    int64_t fit = 0;
    size_t end = k + MADPIPE_ROUND < nb ? k + MADPIPE_ROUND : nb;
    if ((rc = run_round(r->ctx, r->ws, T, r->bpts, (int64_t)k, (int64_t)end,
                        true, r->mkept, &r->nmkept, r->pool, &r->timed_out)))
      return rc;
    for (i = 0; i < T; i++)
      fit += r->ws[i].madpipe_fit;
    if (fit >= r->p->madpipe)
      break;
  }
  return PP_OK;
}

/* Phase 4: MadPipe's plans join the kept ones: all are placed and
** simulated, the best K stay, so MadPipe never pushes out a plan that
** simulates better. */
static pp_status place_and_simulate(struct search_run *r)
{
  int32_t i;
  for (i = 0; i < r->nmkept; i++)
    r->kept[r->nkept++] = r->mkept[i];
  r->nmkept = 0;
  return ppi_kept_finish(r->ctx, &r->sp, r->kept, &r->nkept, r->K,
                         r->ws[0].opbuf, r->ws[0].off, &r->stop, &r->timed_out,
                         &r->simulated, &r->by_estimate);
}

/* Phase 5: the summary (the threads' counts, and when nothing fits the
** closest point any thread saw) and the result, which takes the kept
** plans. */
static pp_status make_result(struct search_run *r, pp_search **out)
{
  pp_search_summary sum;
  struct worker close;
  int32_t i, n = r->nkept;
  pp_status rc;

  memset(&sum, 0, sizeof sum);
  memset(&close, 0, sizeof close);
  close.close_share = INFINITY;
  close.close_idx = INT64_MAX;
  close.close_dev = -1;
  for (i = 0; i < r->T; i++) {
    const struct worker *w = &r->ws[i];
    sum.pruned += w->pruned;
    sum.evaluated += w->evaluated;
    sum.fitting += w->fitting;
    sum.madpipe += w->madpipe;
    if (w->close_share < close.close_share ||
        (w->close_share == close.close_share && w->close_idx < close.close_idx))
      close = *w;
  }
  sum.points = r->np;
  ppi_search_cost_params(&r->sp, &sum.cost);
  sum.global_batch = r->p->global_batch;
  sum.lower_bound_ms = isfinite(r->space_lb) ? r->space_lb : 0;
  {
    /* every point visited: the least bound of those that may hold a plan
    ** (a point's bound may have risen when it was visited; one that
    ** cannot fit in memory bounds nothing) */
    double lb = INFINITY;
    for (i = 0; i < r->T; i++)
      lb = r->ws[i].lbmin < lb ? r->ws[i].lbmin : lb;
    if (!r->timed_out && n > 0 && isfinite(lb) && lb > sum.lower_bound_ms)
      sum.lower_bound_ms = lb;
  }
  sum.timed_out = r->timed_out;
  sum.interrupted = r->p->stop && *r->p->stop;
  sum.simulated = r->simulated;
  sum.by_estimate = r->by_estimate;
  sum.closest_device = n ? -1 : close.close_dev;
  sum.closest_need_bytes = n ? 0 : close.close_need;
  sum.closest_capacity_bytes = n ? 0 : close.close_cap;
  sum.seconds = ppi_now_s() - r->t0;
  if ((rc = ppi_search_new(r->ctx, r->p, &sum, r->kept, n, 2 * r->K, out)))
    return rc;
  r->kept = NULL; /* the result's now */
  r->nkept = 0;
  return PP_OK;
}

static void close_run(struct search_run *r)
{
  pp_ctx *ctx = r->ctx;
  int32_t i, T = r->T, K = r->K;
  if (r->ws)
    for (i = 0; i < T; i++)
      worker_free(ctx, &r->ws[i], r->nop > 0 ? r->nop : 1, r->maxS);
  ppi_free(ctx, r->ws, (size_t)T * sizeof *r->ws);
  if (r->kept) {
    for (i = 0; i < r->nkept; i++)
      ppi_cand_free(&r->kept[i]);
    ppi_free(ctx, r->kept, 2 * (size_t)K * sizeof *r->kept);
  }
  if (r->mkept) {
    for (i = 0; i < r->nmkept; i++)
      ppi_cand_free(&r->mkept[i]);
    ppi_free(ctx, r->mkept, (size_t)K * sizeof *r->mkept);
  }
  ppi_free(ctx, r->pool, (size_t)K * (T + 1) * sizeof *r->pool);
  ppi_free(ctx, r->bpts, r->nbpts * sizeof *r->bpts);
  ppi_space_close(ctx, &r->sp, &r->pts);
}

pp_status pp_plan_search(pp_ctx *ctx, const pp_model *m, const pp_cluster *c,
                         const pp_search_params *p, pp_search **out)
{
  struct search_run r;
  pp_status rc;

  if (!ctx)
    return PP_EINVAL;
  if (!m || !c || !p || !out)
    return ppi_fail(ctx, PP_EINVAL, "pp_plan_search: NULL argument");
  *out = NULL;
  if ((rc = check_params(ctx, p)))
    return rc;
  memset(&r, 0, sizeof r);
  r.ctx = ctx;
  r.p = p;
  r.sp.m = m;
  r.sp.c = c;
  r.sp.p = p;
  ppi_vec_init(&r.pts, sizeof(struct point));
  r.space_lb = INFINITY;
  r.t0 = ppi_now_s();
  r.stop.deadline = r.t0 + p->time_limit_s;
  r.stop.flag = p->stop;
  r.T = p->threads;
  r.K = p->top_k;
  r.nop = pp_model_nop(m);
  r.maxS = 1;
  if (!(rc = open_space(&r)) && !(rc = enumerate(&r)) &&
      !(rc = madpipe_pass(&r)) && !(rc = place_and_simulate(&r)))
    rc = make_result(&r, out);
  close_run(&r);
  return rc;
}
