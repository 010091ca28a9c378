/* SPDX-License-Identifier: MIT */
/*
** The planner's pieces (docs/PLANNER.md), shared among its files:
**   search_space.c    the space: device sets and the points, best first;
**   search_price.c    a candidate plan: built in rank order, priced,
**                     offered to a point's best; the kept lists;
**   search_point.c    one point of the enumeration: pruned by its bound,
**                     or partitioned by the strategies that apply;
**   search_madpipe.c  MadPipe on the points where memory binds;
**   search_kept.c     the kept plans placed by the mapper and simulated;
**   search_result.c   the result object (pp_search);
**   plan_search.c     pp_plan_search: the threads and the phases.
** compare_random.c, the comparison's random search, uses the space and
** the pricing too.
**
** Invariant: a worker is touched by its own thread only while a round
** runs; between rounds plan_search.c merges what the workers found.
** Source: docs/PLANNER.md.
*/
#ifndef PP_SEARCH_H
#define PP_SEARCH_H

#include "cost/cost_eval.h"
#include "search/plan_search.h"

/* A set of devices the points use, in rank order. */
struct dset {
  int32_t n;
  int32_t *dev; /* in rank order */
  bool mixed;   /* more than one device type */
};

struct point {
  int32_t set, tp, pp, dp, mbs; /* tp: the smallest stage's */
  int32_t tpv; /* -1: every stage at tp; else the space's per-stage
                  degrees (tpv_at) */
  int8_t sched, rec;
  double lb;
  double mlb;  /* recorded for MadPipe: the bound of its best contiguous
                  partition (search_point.c), at least lb; else lb */
  int64_t idx; /* enumeration order: the tie-break */
};

/* A plan found for a point, with its figures. */
struct cand {
  struct point pt;
  pp_plan *plan;
  pp_partition *part; /* for the mapper (NULL for tried-all partitions) */
  double est, sim, bubble, peak;
  double spread; /* the estimate's relative spread */
  int mapped, madpipe, calibrated;
  int64_t order; /* within its point: the partition's lexicographic
                    rank + 1 (try_all), else 0; breaks exact ties */
};

struct space {
  const pp_model *m;
  const pp_cluster *c;
  const pp_search_params *p;
  pp_model *view; /* the chain view */
  int32_t L;      /* its layers */
  bool dag;       /* an operator DAG (not a chain) */
  double *speed;  /* [D] relative to the model's reference type */
  struct dset *sets;
  int32_t nset, setcap;
  /* per-stage degrees of the points whose device types have their own:
  ** entry i at tpv_pool[tpv_first[i]]: pp degrees, then pp + 1 offsets
  ** of the stages' first devices in the set's order */
  struct ppi_vec tpv_first; /* int32 */
  struct ppi_vec tpv_pool;  /* int32 */
  /* the fill bounds' reduction term (search_space.c, ar_rate): ms per
  ** byte a ring of R replicas moves at least, x 2 (R - 1) / R; 0: none */
  double ar_ms_per_byte;
};

/* The most distinct degrees a point's stages take (search_space.c's
** TPV_MAX_BLOCKS, or one). */
#define TPV_DEGREES 4

/* Stage s's tp degree at point pt, its per-stage degrees (NULL: one
** degree), and the offset of its first device in the set's order. */
static inline const int32_t *ppi_pt_stp(const struct space *sp,
                                        const struct point *pt)
{
  return pt->tpv < 0
             ? NULL
             : &PPI_VEC_AT(&sp->tpv_pool, int32_t,
                           PPI_VEC_AT(&sp->tpv_first, int32_t, pt->tpv));
}
static inline int32_t ppi_pt_tp(const struct space *sp, const struct point *pt,
                                int32_t s)
{
  return pt->tpv < 0 ? pt->tp : ppi_pt_stp(sp, pt)[s];
}
static inline int64_t ppi_pt_off(const struct space *sp, const struct point *pt,
                                 int32_t s)
{
  return pt->tpv < 0 ? (int64_t)s * pt->dp * pt->tp
                     : ppi_pt_stp(sp, pt)[pt->pp + s];
}

/* What one thread evaluates points with, and what it found. */
struct worker {
  struct pp_ctx ctx; /* its copy (ppi_fanout) */
  const struct space *sp;
  const struct point *pts;
  int64_t from, to, step; /* points from, from + step, ... below to */
  double bar;             /* the K-th kept estimate at the round's start */
  struct ppi_stop stop;   /* the search's time limit and stop flag */
  struct cand *kept;      /* [K] its finds this round, best first */
  int32_t nkept, K;
  int32_t *opbuf, *off, *reps, *first;
  int64_t pruned, evaluated, fitting, madpipe, madpipe_fit;
  int64_t mem_pruned; /* of pruned: by the memory bound (mem_feasible) */
  double lbmin;       /* the least bound of the points it visited that
                         may hold a plan (their own, mixed_fill_bound's) */
  bool mem_all;       /* price every point (no memory bound): the second
                         pass when the first priced none */
  int64_t offers, part_pruned;   /* partitions priced and bounded out */
  int64_t offer_order;           /* the next offer's cand.order */
  struct ppi_share_cache *share; /* the last layout's reduction hops */
  struct ppi_vec bound; /* points where memory binds (MadPipe's pass) */
  bool madpipe_pass;    /* run MadPipe on pts, not the enumeration */
  bool offer_madpipe;   /* ppi_search_offer: the plan is MadPipe's */
  double mp_cap;        /* MadPipe's pass: the best estimate kept */
  bool timed_out;
  pp_status rc;
  /* the closest point that does not fit */
  double close_share;
  int64_t close_idx;
  int32_t close_dev;
  double close_need, close_cap;
};

/* Partitions the point's problem does not admit (more stages than the
** model allows, a limit) skip the point; anything else is an error. */
static inline bool ppi_search_skippable(pp_status rc)
{
  return rc == PP_EINPUT || rc == PP_ELIMIT;
}

/* ---- search_space.c ---- */

/* The space of sp (sp->m, c, p set): the chain view, speeds, device sets
** and the points (struct point) in pts, the most promising first;
** *space_lb the least bound.  On failure the caller still calls
** ppi_space_close. */
PP_INTERNAL pp_status ppi_space_open(pp_ctx *ctx, struct space *sp,
                                     struct ppi_vec *pts, double *space_lb);
PP_INTERNAL void ppi_space_close(pp_ctx *ctx, struct space *sp,
                                 struct ppi_vec *pts);
/* qsort's order of points: lowest bound first, then enumeration order. */
PP_INTERNAL int ppi_point_cmp(const void *x, const void *y);

/* ---- search_price.c ---- */

PP_INTERNAL void ppi_cand_free(struct cand *x);
/* Insert x (owned) into the sorted list l[0:*n] of at most K, best
** (estimate, then enumeration index) first. */
PP_INTERNAL void ppi_cand_keep(struct cand *l, int32_t *n, int32_t K,
                               struct cand *x);
PP_INTERNAL struct ppi_shape ppi_shape_of(const struct space *sp,
                                          const struct point *pt);
/* The operators of the chain view's layers first[0..S] as stages:
** stage s holds ops[off[s]:off[s+1]]. */
PP_INTERNAL void ppi_chain_ops(const pp_model *view, const int32_t *first,
                               int32_t S, int32_t *ops, int32_t *off);
/* The plan of point pt: stage s holds ops[off[s]:off[s+1]], on devs in
** rank order. */
PP_INTERNAL pp_status ppi_search_build_plan(pp_ctx *ctx, const struct space *sp,
                                            const struct point *pt,
                                            const int32_t *ops,
                                            const int32_t *off,
                                            const int32_t *devs, pp_plan **out);
/* How every plan of the search is priced (the summary reports it). */
PP_INTERNAL void ppi_search_cost_params(const struct space *sp,
                                        pp_cost_params *cp);
/* A plan's price: its estimate, whether it fits within the memory
** margin, and its worst device (highest share), what that needs and has. */
struct ppi_price {
  double est, share, need, cap;
  double spread; /* the estimate's relative spread (pp_eval_summary) */
  int calibrated;
  bool fits;
  int32_t worst;
};
/* What the planner's bounds need of one device type (device dev's) at
** (tp, mbs, rec): into pre[0..L] the prefix sums over the chain view's
** layers of forward + backward (+ the recomputed forward) as the estimate
** and the simulator look them up (into fpre, when not NULL, the
** forward's alone), into *fac and *step the calibration's
** compute factor and fixed cost per micro-batch (1 and 0 without one).
** Returns false, its error cleared, when a time cannot be looked up (no
** bound then; the pricing reports it). */
PP_INTERNAL bool ppi_layer_prefix(pp_ctx *ctx, const struct space *sp,
                                  int32_t dev, int32_t tp, int32_t mbs, int rec,
                                  double *pre, double *fpre, double *fac,
                                  double *step);
/* The reduction term of the fill bounds at dp replicas: ms per parameter
** byte of stage 0 (0: none, or one replica). */
static inline double ppi_ar_rate(const struct space *sp, int32_t dp)
{
  return dp > 1 ? 2.0 * (dp - 1) / dp * sp->ar_ms_per_byte : 0;
}

/* The sizes the planner's memory and reduction bounds need at (tp, mbs):
** into par[0..L] and sav[0..L] the prefix sums over the chain view's
** layers of the parameter bytes per tp rank (a tied group's members left
** out: a stage holds the group once, so the sums stay below it) and the
** saved activation bytes, both at the run's precision.  Returns false,
** its error cleared, when a size cannot be looked up. */
PP_INTERNAL bool ppi_size_prefix(pp_ctx *ctx, const struct space *sp,
                                 int32_t tp, int32_t mbs, double *par,
                                 double *sav);
/* share: the worker's cache of the reductions' hops (cost_eval.h), or
** NULL. */
PP_INTERNAL pp_status ppi_search_price(pp_ctx *ctx, const struct space *sp,
                                       const pp_plan *pl,
                                       struct ppi_share_cache *share,
                                       struct ppi_price *x);
/* A candidate plan of the point: keep it (and part, both owned) in *best
** when it fits and is better, else note how close it came. */
PP_INTERNAL pp_status ppi_search_offer(struct worker *w, const struct point *pt,
                                       pp_plan *pl, pp_partition *part,
                                       struct cand *best, bool *have);
/* The point's partitioning parameters for objective o: its shape and
** batch, the schedule's in-flight counts (1F1B* prices memory with
** 1F1B's, which are never lower), the search's optimizer and reserve,
** the slowest link between stages. */
PP_INTERNAL void ppi_point_part_params(const struct space *sp,
                                       const struct point *pt, int64_t gas,
                                       double linkbw, pp_part_objective o,
                                       pp_part_params *pa);
/* A point's evaluation ends: its best plan (have: one was found) joins
** the thread's kept list, or is dropped when rc is an error; rc. */
PP_INTERNAL pp_status ppi_search_keep_best(struct worker *w, pp_status rc,
                                           struct cand *best, bool have);
/* Each stage at the pace of its slowest device (w->reps); the slowest
** ring link of the replicas' first ranks; the slowest link between
** stages. */
PP_INTERNAL void ppi_point_net(struct worker *w, const struct point *pt,
                               double *arbw_out, double *linkbw_out);

/* ---- search_point.c ---- */

/* Point pt in the enumeration: pruned, or its best plan kept in w. */
PP_INTERNAL pp_status ppi_eval_point(struct worker *w, const struct point *pt);

/* ---- search_madpipe.c ---- */

/* Whether the point's best plan (have: one fits, peak its memory share)
** leaves MadPipe something to win: memory binds on a 1F1B* point on one
** device type. */
/* Whether MadPipe may run on the point at all (binds without its best
** plan's figures): the memory bound then does not apply to it. */
PP_INTERNAL bool ppi_madpipe_may(const struct space *sp,
                                 const struct point *pt);
PP_INTERNAL bool ppi_madpipe_binds(const struct space *sp,
                                   const struct point *pt, bool have,
                                   double peak);
/* The points the workers recorded where memory binds and whose bound
** still leaves them a chance against kept[0:nkept] of at most K, lowest
** bound first, at most MADPIPE_TRIES x runs of them: *nb of them in
** *bpts (allocated: *nbpts entries; NULL when none was recorded). */
PP_INTERNAL pp_status ppi_madpipe_points(pp_ctx *ctx, const struct worker *ws,
                                         int32_t T, const struct cand *kept,
                                         int32_t nkept, int32_t K, int32_t runs,
                                         struct point **bpts, size_t *nbpts,
                                         size_t *nb);
/* MadPipe's pass: the point's MadPipe plan, kept in w when it fits. */
PP_INTERNAL pp_status ppi_madpipe_point(struct worker *w,
                                        const struct point *pt);

/* ---- search_kept.c ---- */

/* Place the kept plans by the exact mapper where it improves them,
** simulate them (or price their bubble without the simulator), drop
** those the simulator's peak says do not fit, order the rest by
** simulated time and keep the best K.  opbuf and off are scratch. */
/* Phase 4 of the search: map and simulate the kept plans while stop
** allows (each mapping gets at most its share of the time left); when
** it stops first, *cut is set and every plan is ranked by its estimate.
** *simulated counts the result's plans simulated; *by_estimate says the
** ranking is the estimate's. */
PP_INTERNAL pp_status ppi_kept_finish(pp_ctx *ctx, const struct space *sp,
                                      struct cand *kept, int32_t *nkept,
                                      int32_t K, int32_t *opbuf, int32_t *off,
                                      const struct ppi_stop *stop, bool *cut,
                                      int32_t *simulated, int *by_estimate);

/* ---- search_result.c ---- */

/* The result of a search: sum (its nplans set here) and kept[0:n] of an
** array of cap entries, which it takes on success. */
PP_INTERNAL pp_status ppi_search_new(pp_ctx *ctx, const pp_search_params *p,
                                     const pp_search_summary *sum,
                                     struct cand *kept, int32_t n, int32_t cap,
                                     pp_search **out);

#endif
