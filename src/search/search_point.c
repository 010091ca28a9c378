/* SPDX-License-Identifier: MIT */
/*
** One point of the planner's enumeration (docs/PLANNER.md, "Per
** point"): (1) a lower bound (pp_lower_bound at the point's tp,
** micro-batch size and recomputation) prunes the point when it exceeds
** the K-th best time found; (2) the chain is partitioned by the
** strategies that apply, from a table: short chains (at most
** SHORT_CHAIN partitions) by trying every partition under the estimate
** itself; longer ones exactly under AMP's objective with the allreduce
** term AMP leaves out, each stage on the slowest device of its group
** (mixed types: fast stages get more layers), memory-aware under the
** schedule's in-flight counts (1F1B* uses 1F1B's, which are never
** lower); and an operator DAG on one device type also at the operator
** level (Parmesan phase 1), the better kept; (3) each plan is checked and
** priced (pp_evaluate, search_price.c); a plan that does not fit in
** memory is never kept; (4) a point where memory binds is recorded for
** MadPipe's pass (search_madpipe.c).
**
** Objective: the point's plan of least estimate that fits.
** Invariant: a point is pruned only when its bound exceeds the K-th
** kept estimate (the round's start, or the thread's own finds since), so
** it could not have entered the list.
** Complexity: O(partition + estimate) per point; the partition is AMP's
** label DP (O(L^2 S) labels in practice), the estimate linear in the
** plan's devices and stages.
** Source: docs/PLANNER.md, "Per point".
*/
#include "search/search.h"

#include "cost/cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* TUNING: chains with at most this many partitions into pp runs are
** partitioned by pricing every one with the estimate (exact under it);
** 2,000 estimates cost about one label DP (docs/PLANNER.md). */
#define SHORT_CHAIN 2000
/* TUNING: and at most SHORT_CHAIN_WORK / devices of them: an estimate
** costs time linear in the plan's devices, the label DP does not, so on
** large points fewer partitions are worth pricing one by one (2,000 up
** to 64 devices, 250 at 512; OPT-30 on 512 mixed GPUs, bench_plan
** --sailor: 4.2 -> 1.5 CPU-s, the same plan; docs/PLANNER.md "Per
** point"). */
#define SHORT_CHAIN_WORK (SHORT_CHAIN * 64)

/* What every strategy sees of the point. */
struct part_bound;

struct at_point {
  const struct point *pt;
  const struct dset *set;
  double arbw, linkbw; /* the slowest ring link, the slowest stage link */
  int64_t gas;
  bool short_chain;      /* at most SHORT_CHAIN partitions: try them all */
  struct part_bound *pb; /* the point's bounds, built once (point_time,
                            point_mem) and freed with the point */
};

static pp_status from_partition(struct worker *w, const struct point *pt,
                                pp_partition *part, const int32_t *devs,
                                struct cand *best, bool *have)
{
  pp_plan *pl = NULL;
  pp_status rc;
  pp_part_summary ps;
  pp_partition_summary(part, &ps);
  if (ps.nstage != pt->pp) { /* not this point's shape */
    pp_partition_destroy(part);
    return PP_OK;
  }
  ppi_partition_ops(part, pt->pp, w->opbuf, w->off);
  rc = ppi_search_build_plan(&w->ctx, w->sp, pt, w->opbuf, w->off, devs, &pl);
  if (rc) {
    pp_partition_destroy(part);
    return rc;
  }
  return ppi_search_offer(w, pt, pl, part, best, have);
}

static double binom_capped(int32_t n, int32_t k, double cap)
{
  double x = 1;
  int32_t i;
  if (k < 0 || k > n)
    return 0;
  for (i = 1; i <= k && x <= cap; i++)
    x = x * (n - k + i) / i;
  return x;
}

/* The partition pa asks for, made the point's plan and offered; a
** partition the point's problem does not admit skips it. */
static pp_status partition_and_offer(struct worker *w, const struct at_point *a,
                                     const pp_part_params *pa,
                                     struct cand *best, bool *have)
{
  pp_partition *part = NULL;
  pp_status rc = pp_partition_chain(&w->ctx, w->sp->m, pa, &part);
  if (rc == PP_OK)
    rc = from_partition(w, a->pt, part, a->set->dev, best, have);
  else if (ppi_search_skippable(rc)) {
    pp_ctx_clear_error(&w->ctx);
    rc = PP_OK;
  }
  return rc;
}

/* ---- the strategies ------------------------------------------------------ */

static bool is_short(const struct worker *w, const struct at_point *a)
{
  (void)w;
  return a->short_chain;
}

/* What try_all's bound needs of the point: per profile (a device type
** of the set at one of the point's tp degrees: type x ND + the degree's
** index), the prefix sums over the chain view's layers of forward +
** backward (+ the recomputed forward) at the point's micro-batch, as the
** estimate looks them up, its calibration's factor and fixed cost per
** micro-batch; per stage, the profiles its devices have. */
struct part_bound {
  int32_t T, S;      /* T: profiles (types x ND) */
  double *pre;       /* [T][L + 1] */
  double *fpre;      /* [T][L + 1] the forward's alone */
  double *fac;       /* [T] */
  double *step;      /* [T] */
  unsigned char *on; /* [S][T]: stage s has a device of profile t */
  size_t bytes;
  /* memory (mem_init; mpre NULL: none): per stage, what any plan's
  ** device of it holds at least, state per parameter x the parameters of
  ** its layers + one micro-batch's saved activations, against the least
  ** capacity among its devices */
  double *mpre; /* [S][2][L + 1]: parameters (tied members left out),
                   saved bytes at the run's precision */
  double *spp;  /* [S] state bytes per parameter, the least ZeRO stage's */
  double *cap;  /* [S] */
  size_t mbytes;
  bool time_done, mem_done; /* point_time, point_mem ran */
};

static void bound_free(pp_ctx *ctx, struct part_bound *b)
{
  if (b->pre)
    ppi_free(ctx, b->pre, b->bytes);
  if (b->mpre)
    ppi_free(ctx, b->mpre, b->mbytes);
  memset(b, 0, sizeof *b);
}

/* The memory part of b (a chain view, no calibration, whose slack could
** be below the engine's).  Every device of a plan's stage s holds its
** state (engine.c: linear in the parameters, the least over the ZeRO
** stages the search offers), its in-flight activations (at least one
** micro-batch's saved bytes, or with recomputation the re-forward's), and
** buffers, transients, slack and the reserve, none negative
** (cost_eval.c, memory), so a partition with a stage beyond that is
** never kept: try_all prices it only when nothing of the point was
** priced yet (the closest point's report). */
static pp_status mem_init(struct worker *w, const struct at_point *a,
                          struct part_bound *b)
{
  const struct space *sp = w->sp;
  const pp_search_params *p = sp->p;
  const pp_model *m = sp->m;
  const struct point *pt = a->pt;
  int32_t L = sp->L, S = pt->pp, s, l, z;
  pp_precision prec =
      p->precision == PP_PREC_MODEL ? pp_model_dtype(m) : p->precision;
  unsigned mask = ppi_search_zero_mask(p, pt->pp);
  double best = INFINITY;
  if (sp->dag || p->calibration || !mask)
    return PP_OK;
  b->mbytes = (size_t)S * (2 * (size_t)(L + 1) + 2) * sizeof(double);
  if (!(b->mpre = ppi_calloc(&w->ctx, 1, b->mbytes)))
    return PP_ENOMEM;
  b->spp = b->mpre + (size_t)S * 2 * (L + 1);
  b->cap = b->spp + S;
  for (z = 0; z < 4; z++)
    if (mask >> z & 1) {
      double x;
      if (p->engine == PP_ENGINE_GENERIC) {
        x = pp_precision_bytes(prec) * pp_optimizer_factor(p->optimizer);
      } else {
        struct ppi_engine_mem em;
        ppi_engine_state(p->engine, prec, z, pt->dp, 1.0, &em);
        x = em.state;
      }
      best = x < best ? x : best;
    }
  for (s = 0; s < S; s++) {
    int32_t tp = ppi_pt_tp(sp, pt, s), r, q;
    int64_t o = ppi_pt_off(sp, pt, s);
    double *np = b->mpre + (size_t)s * 2 * (L + 1), *sv = np + L + 1;
    double pb = pp_precision_bytes(prec);
    b->spp[s] = best;
    b->cap[s] = INFINITY;
    for (r = 0; r < pt->dp; r++)
      for (q = 0; q < tp; q++) {
        double c = (double)pp_cluster_type_memory(
            sp->c, pp_cluster_device_type(
                       sp->c, a->set->dev[o + (int64_t)r * tp + q]));
        b->cap[s] = c < b->cap[s] ? c : b->cap[s];
      }
    b->cap[s] -= (double)p->reserve_bytes;
    if (s > 0 && tp == ppi_pt_tp(sp, pt, s - 1)) { /* the same sizes */
      memcpy(np, np - 2 * (L + 1), 2 * (size_t)(L + 1) * sizeof *np);
      continue;
    }
    if (!ppi_size_prefix(&w->ctx, sp, tp, pt->mbs, np, sv)) {
      ppi_free(&w->ctx, b->mpre, b->mbytes); /* no memory bound */
      b->mpre = NULL;
      return PP_OK;
    }
    for (l = 0; l <= L; l++) /* parameters, from bytes */
      np[l] /= pb;
  }
  return PP_OK;
}

/* Whether S stages can take the L layers in contiguous runs, stage s on
** [a, e) only where fits(arg, s, a, e): a condition that holds less as e
** grows and no less as a grows.  The ends reachable after each stage, a
** stage from a taking layers up to the last that fits (binary search), as
** a difference array; stages differ, so a greedy split would not do.
** reach: scratch of 2 (L + 2).  O(S L log L). */
typedef bool (*stage_fits_fn)(const void *arg, int32_t s, int32_t a, int32_t e);
static bool reach_sweep(int32_t S, int32_t L, stage_fits_fn fits,
                        const void *arg, int32_t *reach)
{
  int32_t *next = reach + L + 2, s, a;
  if (S > L)
    return false;
  memset(reach, 0, (size_t)(L + 2) * sizeof *reach);
  reach[0] = 1;
  for (s = 0; s < S; s++) {
    int32_t hmax = L - (S - 1 - s), run = 0;
    bool got = false;
    memset(next, 0, (size_t)(L + 2) * sizeof *next);
    for (a = 0; a < L; a++) {
      int32_t lo = a + 1, hi = hmax, mid;
      if (!reach[a] || lo > hi || !fits(arg, s, a, lo))
        continue;
      while (lo < hi) {
        mid = lo + (hi - lo + 1) / 2;
        if (fits(arg, s, a, mid))
          lo = mid;
        else
          hi = mid - 1;
      }
      next[a + 1]++;
      next[lo + 1]--;
    }
    for (a = 0; a <= L; a++) {
      run += next[a];
      reach[a] = run > 0;
      got = got || reach[a];
    }
    if (!got)
      return false;
  }
  return reach[L] != 0;
}

/* The least memory of stage s's devices holding layers [a, e). */
static double mem_need(const struct part_bound *b, int32_t s, int32_t a,
                       int32_t e, int32_t L)
{
  const double *np = b->mpre + (size_t)s * 2 * (L + 1), *sv = np + L + 1;
  return b->spp[s] * (np[e] - np[a]) + (sv[e] - sv[a]);
}

struct mem_arg {
  const struct part_bound *b;
  int32_t L;
};

static bool mem_fits(const void *arg, int32_t s, int32_t a, int32_t e)
{
  const struct mem_arg *x = arg;
  return mem_need(x->b, s, a, e, x->L) <= x->b->cap[s];
}

/* Whether some contiguous partition into b->S stages may fit under the
** memory part of b (the need grows with a stage's end and does not with
** its start). */
static pp_status mem_feasible(pp_ctx *ctx, const struct part_bound *b,
                              int32_t L, bool *out)
{
  struct mem_arg x = {b, L};
  int32_t *reach;
  *out = true;
  if (!b->mpre || b->S > L)
    return PP_OK;
  if (!(reach = ppi_alloc(ctx, 2 * (size_t)(L + 2) * sizeof *reach)))
    return PP_ENOMEM;
  *out = reach_sweep(b->S, L, mem_fits, &x, reach);
  ppi_free(ctx, reach, 2 * (size_t)(L + 2) * sizeof *reach);
  return PP_OK;
}

/* Whether partition f may fit: no stage beyond its least memory. */
static bool mem_may_fit(const struct part_bound *b, const int32_t *f, int32_t L)
{
  int32_t s;
  if (!b->mpre)
    return true;
  for (s = 0; s < b->S; s++)
    if (mem_need(b, s, f[s], f[s + 1], L) > b->cap[s])
      return false;
  return true;
}

/* Fills b, or leaves b->pre NULL (no pruning) where a time cannot be
** looked up: the estimate then reports it. */
static pp_status bound_init(struct worker *w, const struct at_point *a,
                            struct part_bound *b)
{
  const struct space *sp = w->sp;
  const pp_cluster *c = sp->c;
  const struct point *pt = a->pt;
  int32_t NT = pp_cluster_ntype(c), L = sp->L, t, s, r, q, n, j;
  int32_t deg[TPV_DEGREES], ND = 0, T;
  size_t npre;
  char *mem;
  b->pre = NULL; /* no bound until it is built */
  /* the point's degrees */
  for (s = 0; s < pt->pp; s++) {
    int32_t x = ppi_pt_tp(sp, pt, s);
    for (j = 0; j < ND && deg[j] != x; j++)
      ;
    if (j == ND) {
      if (ND == TPV_DEGREES)
        return PP_OK; /* no bound: every partition priced */
      deg[ND++] = x;
    }
  }
  T = NT * ND;
  npre = (size_t)T * (size_t)(L + 1);
  b->T = T;
  b->S = pt->pp;
  b->bytes = 2 * npre * sizeof(double) + 2 * (size_t)T * sizeof(double) +
             (size_t)pt->pp * (size_t)T;
  if (!(mem = ppi_calloc(&w->ctx, 1, b->bytes)))
    return PP_ENOMEM;
  b->pre = (double *)(void *)mem;
  b->fpre = b->pre + npre;
  b->fac = b->fpre + npre;
  b->step = b->fac + T;
  b->on = (unsigned char *)(b->step + T);
  for (s = 0; s < pt->pp; s++) {
    int32_t tp = ppi_pt_tp(sp, pt, s);
    int64_t o = ppi_pt_off(sp, pt, s);
    for (j = 0; deg[j] != tp; j++)
      ;
    for (r = 0; r < pt->dp; r++)
      for (q = 0; q < tp; q++)
        b->on[(size_t)s * T +
              (size_t)pp_cluster_device_type(
                  c, a->set->dev[o + (int64_t)r * tp + q]) *
                  ND +
              j] = 1;
  }
  for (t = 0; t < T; t++) {
    int32_t d = -1;
    for (s = 0; s < pt->pp && d < 0; s++)
      if (b->on[(size_t)s * T + t])
        for (n = 0; n < a->set->n && d < 0; n++)
          if (pp_cluster_device_type(c, a->set->dev[n]) == t / ND)
            d = a->set->dev[n];
    if (d >= 0 && !ppi_layer_prefix(&w->ctx, sp, d, deg[t % ND], pt->mbs,
                                    pt->rec, b->pre + (size_t)t * (L + 1),
                                    b->fpre + (size_t)t * (L + 1), &b->fac[t],
                                    &b->step[t])) {
      ppi_free(&w->ctx, b->pre, b->bytes);
      b->pre = NULL;
      return PP_OK;
    }
  }
  return PP_OK;
}

/* The point's time part of its bounds (bound_init), built on first use;
** b->pre stays NULL where a time cannot be looked up. */
static pp_status point_time(struct worker *w, const struct at_point *a)
{
  struct part_bound *b = a->pb;
  if (b->time_done)
    return PP_OK;
  b->time_done = true;
  b->S = a->pt->pp;
  return bound_init(w, a, b);
}

/* Its memory part (mem_init), likewise; b->mpre NULL: none. */
static pp_status point_mem(struct worker *w, const struct at_point *a)
{
  struct part_bound *b = a->pb;
  if (b->mem_done)
    return PP_OK;
  b->mem_done = true;
  b->S = a->pt->pp;
  return mem_init(w, a, b);
}

/* A lower bound on the estimate of the partition f: each stage's compute
** w_s (its slowest type's layers, scaled and with the fixed cost as the
** estimate prices them, cost_model.c) is at most its straggler's
** compute, so the steady state is at least (gas - 1) max w_s and the
** fill, one micro-batch through the chain of stages, at least the sum
** (cost_eval.c); transfers, collectives, the reduction and the step only
** add. */
static double bound_of(const struct part_bound *b, const int32_t *f, int32_t L,
                       int64_t gas)
{
  double sum = 0, mx = 0;
  int32_t s, t;
  for (s = 0; s < b->S; s++) {
    double ws = 0;
    for (t = 0; t < b->T; t++)
      if (b->on[(size_t)s * b->T + t]) {
        const double *pr = b->pre + (size_t)t * (L + 1);
        double x = b->fac[t] * (pr[f[s + 1]] - pr[f[s]]) + b->step[t];
        if (x > ws)
          ws = x;
      }
    sum += ws;
    if (ws > mx)
      mx = ws;
  }
  return (double)(gas - 1) * mx + sum;
}

/* The least bound_of over every partition into S contiguous runs, on a
** set of one device type (type t): the sum of the w_s is then fixed, so
** the least largest stage decides, the min-max DP over prefix sums
** (O(S L^2)).  MadPipe's plans of the point are contiguous partitions
** into S stages as well, so none is priced below it (its steady load on
** a device of several stages is larger still). */
static double bound_minmax(pp_ctx *ctx, const struct part_bound *b, int32_t t,
                           int32_t L, int64_t gas)
{
  const double *pr = b->pre + (size_t)t * (L + 1);
  int32_t S = b->S, s, i, j;
  double *cur, *nxt, best;
  if (S > L || !(cur = ppi_alloc(ctx, 2 * (size_t)(L + 1) * sizeof *cur)))
    return 0;
  nxt = cur + L + 1;
  /* cur[i]: the least largest stage over the first i layers in s runs */
  for (i = 0; i <= L; i++)
    cur[i] = i ? b->fac[t] * pr[i] + b->step[t] : INFINITY;
  for (s = 2; s <= S; s++) {
    for (i = 0; i <= L; i++) {
      nxt[i] = INFINITY;
      for (j = s - 1; j < i; j++) {
        double w = b->fac[t] * (pr[i] - pr[j]) + b->step[t];
        double x = cur[j] > w ? cur[j] : w;
        if (x < nxt[i])
          nxt[i] = x;
      }
    }
    memcpy(cur, nxt, (size_t)(L + 1) * sizeof *cur);
  }
  best = (double)(gas - 1) * cur[L] + b->fac[t] * pr[L] + S * b->step[t];
  ppi_free(ctx, cur, 2 * (size_t)(L + 1) * sizeof *cur);
  return best;
}

/* The fill bound of a point on several device types (search_space.c's
** fill_bound is the one-type case): stage j of any plan of the point is
** busy m w_j, w_j its slowest device type's work (fac x its layers + the
** fixed cost), and its first forward and its last micro-batch's backward
** pass every earlier stage, at least the cheapest type's forward and
** backward of each earlier layer and j fixed costs, so an iteration takes
** at least g_j(a, b) = P[a] + j step_min + m w_j(a, b) for a stage on
** layers [a, b), estimated or simulated.  g_j grows with b and does not
** with a (P grows by at most what the least of w_j's types loses, m >=
** 1), so the ends reachable after each stage, a stage from a taking
** layers while g_j stays within the target, decide it (types differ per
** stage: a greedy split would not), and bisection finds the least
** target.  With a reduction (ar > 0, fill_bound's term) the earlier
** work splits into its forwards F and backwards B, and a stage's term is
** F + j step_min + m w_j + max(B, ar x its parameter bytes, par[j] at its
** degree).  O(60 S L log L); 0 when a time was not found. */
struct fill_arg {
  const struct part_bound *b;
  const double *F, *B; /* [L + 1] */
  double smin, ar, T;  /* T: the target reach_sweep tests */
  const double *const *par;
  int32_t L;
  int64_t m;
};

static double g_stage(const struct fill_arg *x, int32_t j, int32_t a, int32_t e)
{
  const struct part_bound *b = x->b;
  double w = 0, r = x->ar > 0 ? x->ar * (x->par[j][e] - x->par[j][a]) : 0;
  int32_t t;
  for (t = 0; t < b->T; t++)
    if (b->on[(size_t)j * b->T + t]) {
      const double *pr = b->pre + (size_t)t * (x->L + 1);
      double y = b->fac[t] * (pr[e] - pr[a]) + b->step[t];
      w = y > w ? y : w;
    }
  return x->F[a] + j * x->smin + (double)x->m * w + (r > x->B[a] ? r : x->B[a]);
}

static bool fill_fits(const void *arg, int32_t s, int32_t a, int32_t e)
{
  const struct fill_arg *x = arg;
  return g_stage(x, s, a, e) <= x->T;
}

/* Each stage's parameter bytes prefix at its degree (ppi_size_prefix),
** for the reduction term: par[s] points into buf, one array per degree
** (at most TPV_DEGREES); par NULL when not wanted or not found. */
struct stage_par {
  double **par; /* [S] */
  double *buf;  /* [TPV_DEGREES][2 (L + 1)] */
  int32_t S;
};

static void stage_par_free(struct worker *w, struct stage_par *q)
{
  int32_t L = w->sp->L;
  if (q->par)
    ppi_free(&w->ctx, q->par, (size_t)q->S * sizeof *q->par);
  if (q->buf)
    ppi_free(&w->ctx, q->buf,
             TPV_DEGREES * 2 * ((size_t)L + 1) * sizeof *q->buf);
  memset(q, 0, sizeof *q);
}

static pp_status stage_par_init(struct worker *w, const struct point *pt,
                                bool want, struct stage_par *q)
{
  const struct space *sp = w->sp;
  int32_t L = sp->L, s, j, deg[TPV_DEGREES], nd = 0;
  memset(q, 0, sizeof *q);
  if (!want)
    return PP_OK;
  q->S = pt->pp;
  if (!(q->par = ppi_alloc(&w->ctx, (size_t)q->S * sizeof *q->par)) ||
      !(q->buf = ppi_alloc(&w->ctx, TPV_DEGREES * 2 * ((size_t)L + 1) *
                                        sizeof *q->buf))) {
    stage_par_free(w, q);
    return PP_ENOMEM;
  }
  for (s = 0; s < pt->pp; s++) {
    int32_t tp = ppi_pt_tp(sp, pt, s);
    double *x;
    for (j = 0; j < nd && deg[j] != tp; j++)
      ;
    x = q->buf + (size_t)j * 2 * (L + 1);
    if (j == nd) {
      if (nd == TPV_DEGREES ||
          !ppi_size_prefix(&w->ctx, sp, tp, pt->mbs, x, x + L + 1)) {
        stage_par_free(w, q); /* no reduction term */
        return PP_OK;
      }
      deg[nd++] = tp;
    }
    q->par[s] = x;
  }
  return PP_OK;
}

static pp_status mixed_fill_bound(pp_ctx *ctx, const struct part_bound *b,
                                  int32_t L, int64_t m, double ar,
                                  const double *const *par, double *out)
{
  int32_t S = b->S, t, l, j, it;
  double *P, lo = 0, hi = 0;
  int32_t *reach;
  unsigned char *any;
  struct fill_arg x;
  *out = 0;
  if (!b->pre || S > L || m < 1)
    return PP_OK;
  if (!(P = ppi_alloc(ctx, 2 * (size_t)(L + 1) * sizeof *P)))
    return PP_ENOMEM;
  if (!(reach = ppi_alloc(ctx, 2 * (size_t)(L + 2) * sizeof *reach)) ||
      !(any = ppi_calloc(ctx, (size_t)b->T, 1))) {
    if (reach)
      ppi_free(ctx, reach, 2 * (size_t)(L + 2) * sizeof *reach);
    ppi_free(ctx, P, 2 * (size_t)(L + 1) * sizeof *P);
    return PP_ENOMEM;
  }
  /* the cheapest forwards, then backwards, of the earlier layers */
  x.b = b;
  x.F = P;
  x.B = P + L + 1;
  x.smin = INFINITY;
  x.ar = ar;
  x.par = par;
  x.L = L;
  x.m = m;
  for (j = 0; j < S; j++)
    for (t = 0; t < b->T; t++)
      any[t] |= b->on[(size_t)j * b->T + t];
  P[0] = P[L + 1] = 0;
  for (l = 0; l < L; l++) {
    double f = INFINITY, bw = INFINITY;
    for (t = 0; t < b->T; t++)
      if (any[t]) {
        const double *pr = b->pre + (size_t)t * (L + 1);
        const double *fp = b->fpre + (size_t)t * (L + 1);
        double y = b->fac[t] * (fp[l + 1] - fp[l]);
        double z = b->fac[t] * ((pr[l + 1] - pr[l]) - (fp[l + 1] - fp[l]));
        f = y < f ? y : f;
        bw = z < bw ? z : bw;
      }
    P[l + 1] = P[l] + f;
    P[L + 1 + l + 1] = P[L + 1 + l] + bw;
  }
  for (t = 0; t < b->T; t++)
    if (any[t] && b->step[t] < x.smin)
      x.smin = b->step[t];
  /* any partition is within hi: every stage's work at most the whole */
  for (j = 0; j < S; j++) {
    double y = g_stage(&x, j, 0, L) + x.F[L] + x.B[L];
    hi = y > hi ? y : hi;
  }
  for (it = 0; it < 60; it++) {
    x.T = (lo + hi) / 2;
    if (reach_sweep(S, L, fill_fits, &x, reach))
      hi = x.T;
    else
      lo = x.T;
  }
  *out = lo;
  ppi_free(ctx, any, (size_t)b->T);
  ppi_free(ctx, reach, 2 * (size_t)(L + 2) * sizeof *reach);
  ppi_free(ctx, P, 2 * (size_t)(L + 1) * sizeof *P);
  return PP_OK;
}

/* A partition of try_all: its bound and its rank in lexicographic
** order of the cuts. */
struct tried {
  double lb;
  int64_t rank;
};

static int tried_cmp(const void *x, const void *y)
{
  const struct tried *a = x, *b = y;
  if (a->lb != b->lb)
    return a->lb < b->lb ? -1 : 1;
  return (a->rank > b->rank) - (a->rank < b->rank);
}

/* Every partition of the chain view into pp contiguous runs, priced by
** the estimate itself, the least bound (bound_of) first; once the bound
** exceeds the point's best so far, or the K-th kept estimate, the rest
** could not be kept and are not priced (the slack of 1e-9 keeps ties,
** which go to the lesser memory, then to the partition first in
** lexicographic order: ppi_search_offer, cand.order).  Without a bound
** (a time that cannot be looked up) every partition is priced, in
** lexicographic order. */
static pp_status try_all(struct worker *w, const struct at_point *a,
                         struct cand *best, bool *have)
{
  const struct space *sp = w->sp;
  const struct point *pt = a->pt;
  const int32_t *devs = a->set->dev;
  int32_t S = pt->pp, L = sp->L, s, i;
  int32_t *f = w->first; /* f[s]: first layer of stage s; f[S] = L */
  const struct part_bound *pb = a->pb;
  struct tried *t = NULL;
  int32_t *cuts = NULL;
  int64_t n = 0, cap = 0, k;
  pp_status rc;
  /* TUNING: the relative slack of the comparison, far above rounding
  ** (the bound and the estimate add the same times in other orders) */
  const double slack = 1 + 1e-9;
  int64_t priced = 0;
  if ((rc = point_time(w, a)) || (rc = point_mem(w, a)))
    return rc;
  cap = (int64_t)binom_capped(L - 1, S - 1, SHORT_CHAIN);
  if (cap < 1)
    cap = 1;
  if (!(t = ppi_alloc(&w->ctx, (size_t)cap * sizeof *t)) ||
      !(cuts =
            ppi_alloc(&w->ctx, (size_t)cap * (size_t)(S + 1) * sizeof *cuts))) {
    rc = PP_ENOMEM;
    goto done;
  }
  for (s = 0; s < S; s++)
    f[s] = s;
  f[S] = L;
  for (;;) {
    if (n == cap)
      break;
    memcpy(cuts + n * (S + 1), f, (size_t)(S + 1) * sizeof *f);
    t[n].lb = pb->pre ? bound_of(pb, f, L, a->gas) : 0;
    t[n].rank = n;
    n++;
    /* the next cut vector: the last movable cut moves right */
    for (s = S - 1; s >= 1 && f[s] == L - (S - s); s--)
      ;
    if (s < 1)
      break;
    f[s]++;
    for (i = s + 1; i < S; i++)
      f[i] = f[i - 1] + 1;
  }
  qsort(t, (size_t)n, sizeof *t, tried_cmp);
  for (k = 0; k < n && !rc; k++) {
    pp_plan *pl = NULL;
    double bar = *have && best->est < w->bar ? best->est : w->bar;
    if (t[k].lb > bar * slack) { /* sorted: the rest are above too */
      w->part_pruned += n - k;
      break;
    }
    memcpy(f, cuts + t[k].rank * (S + 1), (size_t)(S + 1) * sizeof *f);
    if (priced > 0 && !mem_may_fit(pb, f, L)) {
      w->part_pruned++;
      continue;
    }
    priced++;
    ppi_chain_ops(sp->view, f, S, w->opbuf, w->off);
    w->offer_order = t[k].rank + 1;
    if (!(rc = ppi_search_build_plan(&w->ctx, sp, pt, w->opbuf, w->off, devs,
                                     &pl)))
      rc = ppi_search_offer(w, pt, pl, NULL, best, have);
    w->offer_order = 0;
  }
done:
  if (cuts)
    ppi_free(&w->ctx, cuts, (size_t)cap * (size_t)(S + 1) * sizeof *cuts);
  if (t)
    ppi_free(&w->ctx, t, (size_t)cap * sizeof *t);
  return rc;
}

static bool is_long(const struct worker *w, const struct at_point *a)
{
  (void)w;
  return !a->short_chain;
}

/* AMP's objective, its allreduce term included, each stage on the
** slowest device of its group (w->reps). */
static pp_status amp_chain(struct worker *w, const struct at_point *a,
                           struct cand *best, bool *have)
{
  const struct point *pt = a->pt;
  pp_part_params pa;
  ppi_point_part_params(w->sp, pt, a->gas, a->linkbw, PP_OBJ_AMP, &pa);
  pa.tp = pt->tp;
  pa.stage_tp = ppi_pt_stp(w->sp, pt);
  pa.recompute = pt->rec;
  pa.cluster = w->sp->c;
  pa.devices = w->reps;
  pa.allreduce = pt->dp > 1;
  pa.allreduce_gbps = a->arbw;
  return partition_and_offer(w, a, &pa, best, have);
}

/* Parmesan's operator level needs an operator DAG on one device type,
** without the chain's per-layer knobs. */
static bool is_dag_one_type(const struct worker *w, const struct at_point *a)
{
  return !a->short_chain && w->sp->dag && !a->set->mixed && a->pt->tp == 1 &&
         a->pt->tpv < 0 && !a->pt->rec;
}

static pp_status operator_dag(struct worker *w, const struct at_point *a,
                              struct cand *best, bool *have)
{
  const pp_cluster *c = w->sp->c;
  pp_part_params pa;
  ppi_point_part_params(w->sp, a->pt, a->gas, a->linkbw, PP_OBJ_MINMAX, &pa);
  pa.latency_us = pp_cluster_latency(c);
  pa.memory_bytes = (double)pp_cluster_type_memory(
      c, pp_cluster_device_type(c, a->set->dev[0]));
  return partition_and_offer(w, a, &pa, best, have);
}

/* Every strategy that applies, in order, offers its plans to the point's
** best: the first error stops the point. */
static const struct strategy {
  bool (*applies)(const struct worker *w, const struct at_point *a);
  pp_status (*run)(struct worker *w, const struct at_point *a,
                   struct cand *best, bool *have);
} strategies[] = {
    {is_short, try_all},
    {is_long, amp_chain},
    {is_dag_one_type, operator_dag},
};

/* ---- the point ----------------------------------------------------------- */

pp_status ppi_eval_point(struct worker *w, const struct point *pt0)
{
  const struct space *sp = w->sp;
  struct point q0 = *pt0; /* its bound may rise (mixed_fill_bound) */
  const struct point *pt = &q0;
  struct at_point a;
  struct part_bound pb;
  struct cand best;
  bool have = false;
  double bar = w->bar; /* the round's start: not this thread's own finds,
                          which would make the counts depend on the
                          thread count (plan_search.c, ROUND) */
  size_t k;
  int64_t offers = w->offers, part_pruned = w->part_pruned;
  pp_status rc = PP_OK;

  if (pt->lb > bar) {
    w->pruned++;
    w->lbmin = pt->lb < w->lbmin ? pt->lb : w->lbmin;
    return PP_OK;
  }
  memset(&pb, 0, sizeof pb);
  memset(&best, 0, sizeof best);
  a.pt = pt;
  a.set = &sp->sets[pt->set];
  a.gas = sp->p->global_batch / pt->dp / pt->mbs;
  a.pb = &pb; /* built as needed, freed below */
  if (!w->mem_all && !ppi_madpipe_may(sp, pt)) {
    /* no partition can hold its stages' state and one micro-batch:
    ** pruned (MadPipe's points are not, its stages need not be
    ** contiguous on a device; plan_search.c prices every point again
    ** when this left none priced, for the closest point's report) */
    bool ok;
    if ((rc = point_mem(w, &a)) ||
        (rc = mem_feasible(&w->ctx, &pb, sp->L, &ok)))
      goto out;
    if (!ok) { /* no plan: nothing to bound either */
      w->pruned++;
      w->mem_pruned++;
      goto out;
    }
  }
  if (a.set->mixed) { /* the fill bound on several types */
    double fb = 0, ar = ppi_ar_rate(sp, pt->dp);
    struct stage_par sq;
    if ((rc = stage_par_init(w, pt, ar > 0, &sq)))
      goto out;
    if (!sq.par)
      ar = 0;
    if (!(rc = point_time(w, &a)))
      rc = mixed_fill_bound(&w->ctx, &pb, sp->L, a.gas, ar,
                            (const double *const *)sq.par, &fb);
    stage_par_free(w, &sq);
    if (rc)
      goto out;
    if (fb > q0.lb)
      q0.lb = q0.mlb = fb;
    if (q0.lb > bar) {
      w->pruned++;
      w->lbmin = q0.lb < w->lbmin ? q0.lb : w->lbmin;
      goto out;
    }
  }
  w->lbmin = q0.lb < w->lbmin ? q0.lb : w->lbmin;
  w->evaluated++;
  ppi_point_net(w, pt, &a.arbw, &a.linkbw);
  {
    int64_t ndev = (int64_t)ppi_pt_off(sp, pt, pt->pp);
    double lim = ndev > SHORT_CHAIN_WORK / SHORT_CHAIN
                     ? (double)(SHORT_CHAIN_WORK / ndev)
                     : SHORT_CHAIN;
    a.short_chain = binom_capped(sp->L - 1, pt->pp - 1, lim) <= lim;
  }
  for (k = 0; k < sizeof strategies / sizeof strategies[0] && rc == PP_OK; k++)
    if (strategies[k].applies(w, &a))
      rc = strategies[k].run(w, &a, &best, &have);
  if (rc == PP_OK && w->offers == offers && w->part_pruned > part_pruned) {
    /* every partition bounded out (try_all): the point is pruned */
    w->evaluated--;
    w->pruned++;
    goto out;
  }
  if (rc == PP_OK && ppi_madpipe_binds(sp, pt, have, best.peak)) {
    /* recorded with the bound of its best contiguous partition, which
    ** MadPipe's pass compares with the kept plans (one device type) */
    struct point q = *pt;
    q.mlb = q.lb;
    if (!(rc = point_time(w, &a)) && pb.pre) {
      double x = bound_minmax(&w->ctx, &pb,
                              pp_cluster_device_type(sp->c, a.set->dev[0]),
                              sp->L, a.gas);
      if (x > q.mlb)
        q.mlb = x;
    }
    if (rc == PP_OK)
      rc = ppi_vec_push(&w->ctx, &w->bound, &q);
  }
  rc = ppi_search_keep_best(w, rc, &best, have);
out:
  bound_free(&w->ctx, &pb);
  return rc;
}
