/* SPDX-License-Identifier: MIT */
/*
** MadPipe ([MadPipe] 4.2-4.3) and its baseline, PipeDream + 1F1B* (5.1).
**
** Model ([MadPipe] 3): identical processors with memory M on a flat
** network; layer l has work U_l = fwd + bwd, parameters W_l, saved
** activations abar_l and output a_l; a cut after l loads the link
** between the two processors with C(l) = 2 comm(a_l) (activation forward,
** gradient back).  A processor holding layers k..l with g activations in
** flight needs M(k, l, g) = f W + g abar + 2 (a_{k-1} + a_l) (+ reserve),
** f the optimizer's bytes per parameter byte (3 for the paper's 2BW).
** The period of an allocation is the load of its most loaded resource.
**
** Phase 1 (4.2): the allocation.  P - 1 normal processors hold one
** contiguous stage each, one special processor any number of stages.
** The paper's DP T(l, p, t_P, m_P, V) walks the chain from its end: the
** last stage k..l of the first l layers goes to a normal processor (if
** M(k, l, g) <= M, g = ceil((V + U(k,l)) / That)) or to the special one
** (t_P += U(k,l), m_P += M(k, l, g - 1), the optimistic count of 4.2.1),
** and V' = (V (+) U(k,l)) (+) C(k-1) carries 1F1B*'s group arithmetic to
** the layer before.
**
** Why not the paper's discretised tables: they round t_P, m_P and V to
** 101, 11 and 51 values, and Algorithm 1 bisects on That around a DP that
** returns a period.  We bisect on the target T itself with That = T (the
** fixed point Algorithm 1 looks for: the least T with DP(T) <= T, DP
** being non-increasing in That, 4.2.3) and answer "is there an
** allocation of period <= T?" with a label-setting DP on exact values:
** a label at (l, p) is a reachable (t_P, m_P, V); each of the three only
** hurts when larger ((+) is monotone in x), so dominated labels are
** dropped and the front is exact - finer than any grid.  Stage loads
** above T end the scan over k (U(k,l) grows as k falls).
**
** Phase 2 (4.3): the schedule.  sched_ilp.c solves the paper's ILP
** (docs/ALGORITHMS.md 2.1: the allocation fixed) with CBC for
** the least period >= the allocation's at which a periodic pattern fits
** memory, and its live counts n_s become the in-flight counts; the
** simulator then runs them (part_verify.c) and reports period and memory.
**
** PipeDream + 1F1B*: PipeDream's contiguous allocation of least period
** (part_minmax.c, ppi_part_period), scheduled by 1F1B* at the least
** period T >= its load at which every processor fits: 1F1B*'s groups
** change only at sums of consecutive resource loads, so the candidates
** are those sums, tried in increasing order - exact.
**
** Complexity: phase 1 is O(K L P w F) for K bisection steps, w layers per
** stage window and F labels per front (small on real profiles: 10-100);
** PipeDream + 1F1B* is O(S L w + P^3).
*/
#include "cost/cost.h"
#include "part/part.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* TUNING: the slack of ceilings of time ratios, so that a ratio off an
** integer by rounding is not counted one group higher. */
#define EPS 1e-9

static double ceil_t(double x, double T)
{
  double q = ceil(x / T - EPS);
  return q > 0 ? q : 0;
}

/* [MadPipe]'s x (+) y: continue x's group when y fits in it, else start
** the next group. */
static double oplus(double x, double y, double T)
{
  double a = ceil_t(x, T);
  return a == ceil_t(x + y, T) ? x + y : T * a + y;
}

/* The link load of the cut after layer l. */
static double link(const struct ppi_chain *c, int32_t l)
{
  return 2 * ppi_ch_comm(c, 0, l);
}

/* The period of an allocation (first, proc) of N stages on P processors
** in [MadPipe]'s model: the most loaded processor or processor pair's
** link (every cut between two processors loads their link with a
** forward and a backward transfer). */
static double allocation_period(const struct ppi_chain *c, int32_t N, int32_t P,
                                const int32_t *first, const int32_t *proc,
                                double *scratch)
{
  double *load = scratch, *pair = scratch + P, worst = 0;
  int32_t s, i;
  memset(scratch, 0, (size_t)(P + P * P) * sizeof *scratch);
  for (s = 0; s < N; s++) {
    load[proc[s]] += ppi_ch_work(c, 0, first[s], first[s + 1] - 1);
    if (s + 1 < N && proc[s] != proc[s + 1]) {
      int32_t a = proc[s] < proc[s + 1] ? proc[s] : proc[s + 1];
      int32_t b = proc[s] ^ proc[s + 1] ^ a;
      pair[a * P + b] += link(c, first[s + 1] - 1);
    }
  }
  for (i = 0; i < P + P * P; i++)
    worst = scratch[i] > worst ? scratch[i] : worst;
  return worst;
}

/* ---- phase 1 ----------------------------------------------------------- */

struct mlabel {
  double tP, mP, V;
  double amax;     /* the largest abar among the special stages */
  int64_t parent;  /* pool index, -1 at the root */
  int32_t lo, hi;  /* the stage that made it: layers lo..hi */
  uint8_t special; /* that stage is on the special processor */
};

static int cmp_ml(const void *x, const void *y)
{
  const struct mlabel *a = x, *b = y;
  if (a->tP != b->tP)
    return a->tP < b->tP ? -1 : 1;
  if (a->mP != b->mP)
    return a->mP < b->mP ? -1 : 1;
  if (a->V != b->V)
    return a->V < b->V ? -1 : 1;
  if (a->amax != b->amax)
    return a->amax < b->amax ? -1 : 1;
  if (a->lo != b->lo)
    return a->lo > b->lo ? -1 : 1;
  return (a->parent > b->parent) - (a->parent < b->parent);
}

struct mrun {
  pp_ctx *ctx;
  const struct ppi_chain *c;
  int32_t P;
  double T, M;
  int pessimistic;        /* special stages keep g, not g - 1 (4.2.1's worst
                             case, Figure 5a) */
  struct ppi_vec *bucket; /* [(L+1) * P] candidate labels */
  struct ppi_vec pool;    /* kept labels */
  int64_t kept;
  bool truncated; /* a front was cut at PPI_MADPIPE_MAX_FRONT */
};

static pp_status put(struct mrun *r, int32_t l, int32_t p,
                     const struct mlabel *x)
{
  return ppi_vec_push(r->ctx, &r->bucket[(size_t)l * r->P + p], x);
}

/* Is there an allocation of period <= T?  On success *term is the label
** whose stage starts at layer 0 (its parents give the rest), else -1. */
static pp_status feasible(struct mrun *r, double T, struct mlabel *term,
                          bool *ok)
{
  const struct ppi_chain *c = r->c;
  int32_t L = c->L, P = r->P, l, p, k;
  pp_status rc = PP_OK;
  struct mlabel root = {0, 0, 0, 0, -1, L, L, 0};

  *ok = false;
  r->T = T;
  r->pool.n = 0;
  for (l = 0; l < (L + 1) * P; l++)
    r->bucket[l].n = 0;
  if ((rc = put(r, L, P - 1, &root)))
    return rc;
  for (l = L; l >= 1 && !*ok; l--)
    for (p = P - 1; p >= 0 && !*ok; p--) {
      struct ppi_vec *b = &r->bucket[(size_t)l * P + p];
      struct mlabel *cand = b->data;
      int64_t n = (int64_t)b->n, a, q, kept = 0, base = (int64_t)r->pool.n;
      if (n == 0)
        continue;
      qsort(cand, (size_t)n, sizeof *cand, cmp_ml);
      for (a = 0; a < n && kept < PPI_MADPIPE_MAX_FRONT; a++) {
        bool dom = false;
        for (q = base; q < base + kept && !dom; q++) {
          const struct mlabel *y = &PPI_VEC_AT(&r->pool, struct mlabel, q);
          dom = y->tP <= cand[a].tP && y->mP <= cand[a].mP &&
                y->V <= cand[a].V && y->amax <= cand[a].amax;
        }
        if (dom)
          continue;
        if ((rc = ppi_vec_push(r->ctx, &r->pool, &cand[a])))
          return rc;
        kept++;
      }
      if (a < n)
        r->truncated = true;
      b->n = 0; /* its labels are in the pool now */
      r->kept += kept;
      for (q = base; q < base + kept && !*ok; q++) {
        struct mlabel x = PPI_VEC_AT(&r->pool, struct mlabel, q);
        for (k = l - 1; k >= 0; k--) {
          double U = ppi_ch_work(c, 0, k, l - 1), Cc, g, V2;
          struct mlabel y;
          if (U > T * (1 + EPS))
            break;
          Cc = k > 0 ? link(c, k - 1) : 0;
          if (Cc > T * (1 + EPS))
            continue;
          g = ceil_t(x.V + U, T);
          if (g < 1)
            g = 1;
          V2 = k > 0 ? oplus(oplus(x.V, U, T), Cc, T) : 0;
          y.parent = q;
          y.lo = k;
          y.hi = l - 1;
          /* a normal processor */
          if (p >= 1 && ppi_ch_mem_g(c, k, l - 1, g) <= r->M) {
            y.tP = x.tP;
            y.mP = x.mP;
            y.amax = x.amax;
            y.V = V2;
            y.special = 0;
            if (k == 0) {
              *term = y;
              *ok = true;
              break;
            }
            if ((rc = put(r, k, p - 1, &y)))
              return rc;
          }
          /* the special processor: every stage keeps g - 1 activations
          ** at all times and one of them a g-th at its peak (Figure 5b,
          ** the best case: a lower bound of any pattern's peak), or g
          ** each when pessimistic */
          {
            double ab = c->sp[l] - c->sp[k];
            y.tP = x.tP + U;
            y.mP = x.mP + ppi_ch_mem_g(c, k, l - 1, r->pessimistic ? g : g - 1);
            y.amax = r->pessimistic ? 0 : (ab > x.amax ? ab : x.amax);
          }
          if (y.tP <= T * (1 + EPS) && y.mP + y.amax <= r->M) {
            y.V = V2;
            y.special = 1;
            if (k == 0) {
              *term = y;
              *ok = true;
              break;
            }
            if ((rc = put(r, k, p, &y)))
              return rc;
          }
        }
      }
    }
  return PP_OK;
}

/* The stages of a feasible label chain, in chain order. */
static pp_status unwind(struct mrun *r, struct ppi_arena *ar,
                        const struct mlabel *term, struct ppi_madpipe *out)
{
  int32_t n = 0, s, normal = 0;
  const struct mlabel *x;
  for (x = term; x; x = x->parent >= 0
                            ? &PPI_VEC_AT(&r->pool, struct mlabel, x->parent)
                            : NULL)
    if (x->lo < r->c->L)
      n++;
  out->N = n;
  out->P = r->P;
  out->first = ppi_arena_alloc(ar, r->ctx, (size_t)n + 1, sizeof *out->first);
  out->proc = ppi_arena_alloc(ar, r->ctx, (size_t)n, sizeof *out->proc);
  out->inflight = ppi_arena_alloc(ar, r->ctx, (size_t)n, sizeof *out->inflight);
  out->special = ppi_arena_alloc(ar, r->ctx, (size_t)n, sizeof *out->special);
  if (!out->first || !out->proc || !out->inflight || !out->special)
    return PP_ENOMEM;
  for (s = 0, x = term; s < n;
       s++, x = &PPI_VEC_AT(&r->pool, struct mlabel, x->parent)) {
    out->first[s] = x->lo;
    out->special[s] = x->special;
    out->proc[s] = x->special ? r->P - 1 : normal++;
  }
  out->first[n] = r->c->L;
  return PP_OK;
}

/* 1F1B* in-flight counts of stages on distinct processors (each stage a
** resource, each cut between processors a link resource) at period T. */
static void star_counts(const struct ppi_chain *c, int32_t N,
                        const int32_t *first, const int32_t *proc, double T,
                        double *load, int32_t *grp, int32_t *inflight)
{
  int32_t s;
  for (s = 0; s < N; s++) {
    load[2 * s] = ppi_ch_work(c, 0, first[s], first[s + 1] - 1);
    if (s + 1 < N)
      load[2 * s + 1] = proc[s] != proc[s + 1] ? link(c, first[s + 1] - 1) : 0;
  }
  ppi_sched_groups(load, 2 * N - 1, T, grp);
  for (s = 0; s < N; s++) /* a periodic schedule: no cap by a batch */
    inflight[s] = grp[2 * s];
}

/* ---- phase 2 ------------------------------------------------------------ */

/* The ILP at period T: *st its status, n the counts. */
static pp_status ilp_at(pp_ctx *ctx, struct ppi_ilp_in *in, double T,
                        int32_t *n, double *sig, int *st)
{
  in->T = T;
  return ppi_ilp_pattern(ctx, in, n, sig, st);
}

/* The least period >= the allocation's at which the ILP finds a pattern
** that fits memory: from the phase-1 target up by 5 % steps until one
** is found (at the latency of one micro-batch through the chain every
** count is 1, so the search ends), then 6 bisection steps back down.
** With a period cap (the planner's), the walk stops past it. */
static pp_status phase2(pp_ctx *ctx, struct ppi_arena *ar,
                        const struct ppi_chain *c, const struct ppi_stop *stop,
                        int max_nodes, double period_cap,
                        struct ppi_madpipe *out)
{
  int32_t N = out->N, P = out->P, s, *n = NULL;
  double *uf, *ub, *cc, *abar, *room, M = c->mem[0], lat = 0, T, lo, hi;
  double *sig = ppi_arena_alloc(ar, ctx, 4 * (size_t)N, sizeof *sig);
  struct ppi_ilp_in in;
  int st = 0, it;
  pp_status rc = PP_OK;
  size_t sz = (size_t)(5 * N + P) * sizeof(double);
  double *buf = ppi_calloc(ctx, 1, sz);

  n = ppi_calloc(ctx, (size_t)N, sizeof *n);
  if (!buf || !n || !sig) {
    rc = PP_ENOMEM;
    goto done;
  }
  uf = buf;
  ub = uf + N;
  cc = ub + N;
  abar = cc + N;
  room = abar + N;
  for (s = 0; s < P; s++)
    room[s] = M - c->reserve;
  for (s = 0; s < N; s++) {
    int32_t i = out->first[s], j = out->first[s + 1] - 1;
    uf[s] = c->fp[j + 1] - c->fp[i];
    ub[s] = ppi_ch_work(c, 0, i, j) - uf[s];
    cc[s] = s + 1 < N && out->proc[s] != out->proc[s + 1] ? ppi_ch_comm(c, 0, j)
                                                          : 0;
    abar[s] = c->sp[j + 1] - c->sp[i];
    room[out->proc[s]] -= ppi_ch_mem_g(c, i, j, 0) - c->reserve;
    lat += uf[s] + ub[s] + 2 * cc[s];
  }
  for (s = 0; s < P; s++)
    if (room[s] < 0) { /* parameters and buffers alone overflow */
      out->fits = 0;
      goto done;
    }
  memset(&in, 0, sizeof in);
  in.N = N;
  in.P = P;
  in.proc = out->proc;
  in.uf = uf;
  in.ub = ub;
  in.c = cc;
  in.abar = abar;
  in.room = room;
  in.scale = 1e6;
  /* TUNING: each ILP's own limit, within the stop's: CBC's 60 s default
  ** of the library; the node limit binds first on the profiles tried
  ** (max_nodes), which keeps results deterministic */
  in.time_limit = 60;
  in.max_nodes = max_nodes;
  in.stop = stop;
  T = out->period;
  lo = T;
  for (;;) {
    if (ppi_stopped(stop) ||
        ((rc = ilp_at(ctx, &in, T, n, sig, &st)) == PP_OK && st == -2)) {
      out->cut = 1; /* no pattern yet: nothing to give */
      rc = ppi_fail(ctx, PP_ECANCELED,
                    "madpipe: stopped (the time limit, or an interrupt) "
                    "before phase 2 found a schedule that fits, at a period "
                    "of %.6g ms",
                    T);
      goto done;
    }
    if (rc)
      goto done;
    if (st > 0)
      break;
    lo = T;
    if (T >=
        lat * (1 - PPI_REL_ROUNDING)) { /* nothing fits even one at a time */
      out->fits = 0;
      goto done;
    }
    /* TUNING: the period rises 5% per try until a pattern fits, then the
    ** bisection below narrows it: fewer ILPs than bisecting from the
    ** latency, and a result within 5% before the bisection (ffad48c) */
    T = T * 1.05 < lat ? T * 1.05 : lat;
    if (period_cap > 0 && T > period_cap) { /* the caller's cap */
      rc = ppi_fail(ctx, PP_ELIMIT,
                    "madpipe: no pattern fits below the cap %.6g ms",
                    period_cap);
      goto done;
    }
  }
  hi = T;
  memcpy(out->inflight, n, (size_t)N * sizeof *n);
  out->ilp = st;
  if (!(out->sig = ppi_arena_alloc(ar, ctx, 4 * (size_t)N, sizeof *sig))) {
    rc = PP_ENOMEM;
    goto done;
  }
  memcpy(out->sig, sig, 4 * (size_t)N * sizeof *sig);
  /* TUNING: at most 6 bisection steps on the period, stopping at 0.01%:
  ** each is an ILP, and 6 halve the 5% step to under 0.1% (ffad48c) */
  for (it = 0; it < 6 && hi > lo * (1 + 1e-4); it++) {
    double mid = (lo + hi) / 2;
    if (ppi_stopped(stop)) { /* the best period found so far */
      out->cut = 1;
      break;
    }
    if ((rc = ilp_at(ctx, &in, mid, n, sig, &st)))
      goto done;
    out->cut = out->cut || st == -2 || (st == 2 && ppi_stopped(stop));
    if (st > 0) {
      hi = mid;
      memcpy(out->inflight, n, (size_t)N * sizeof *n);
      memcpy(out->sig, sig, 4 * (size_t)N * sizeof *sig);
      out->ilp = st;
    } else {
      lo = mid;
    }
  }
  out->period = hi;
  out->fits = 1;
done:
  ppi_free(ctx, buf, sz);
  ppi_free(ctx, n, (size_t)N * sizeof *n);
  return rc;
}

/* Phase 1 in one memory mode, then phase 2 (not with phase1_only: the
** allocation with 1F1B*'s counts at its period, fits as phase 1 judged
** it). */
static pp_status attempt(struct mrun *r, struct ppi_arena *ar,
                         int32_t iterations, const struct ppi_stop *stop,
                         int max_nodes, double period_cap, bool phase1_only,
                         struct ppi_madpipe *out)
{
  pp_ctx *ctx = r->ctx;
  const struct ppi_chain *c = r->c;
  struct mlabel term;
  double lo, hi, tot = 0, big = 0, links = 0;
  int32_t l, it, P = r->P;
  bool ok = false;
  pp_status rc;

  memset(out, 0, sizeof *out);
  for (l = 0; l < c->L; l++) {
    double u = ppi_ch_work(c, 0, l, l);
    tot += u;
    big = u > big ? u : big;
    if (l + 1 < c->L)
      links += link(c, l);
  }
  lo = tot / P > big ? tot / P : big;
  hi = tot + links;
  if (!(hi > 0))
    hi = 1;
  /* feasible at all?  At a huge period every group holds one stage's
  ** activations: the least memory a 1F1B*-style pattern needs */
  if ((rc = feasible(r, hi, &term, &ok)))
    return rc;
  if (!ok) {
    if ((rc = feasible(r, hi * 1e6, &term, &ok)))
      return rc;
    if (!ok)
      return PP_EINPUT; /* nothing fits; the caller explains */
    hi *= 1e6;
  }
  /* TUNING: the caller's iterations (default 10), stopping early once the
  ** ends are within 1e-9: closer periods differ by rounding only */
  for (it = 0; it < iterations && hi > lo * (1 + 1e-9); it++) {
    double mid = (lo + hi) / 2;
    if (ppi_stopped(stop)) { /* the best target found so far */
      out->cut = 1;
      break;
    }
    if ((rc = feasible(r, mid, &term, &ok)))
      return rc;
    if (ok)
      hi = mid;
    else
      lo = mid;
  }
  /* rebuild the labels of the best target so that they unwind */
  if ((rc = feasible(r, hi, &term, &ok)))
    return rc;
  if (!ok)
    return ppi_fail(ctx, PP_EINTERNAL,
                    "madpipe: the target %g ms is no longer feasible", hi);
  out->dp_period = hi;
  out->labels = r->kept;
  if ((rc = unwind(r, ar, &term, out)))
    return rc;
  {
    size_t sz = (size_t)(P + P * P + 2 * out->N) * sizeof(double);
    double *scratch = ppi_calloc(ctx, 1, sz);
    int32_t *grp = ppi_calloc(ctx, (size_t)2 * out->N, sizeof *grp);
    if (!scratch || !grp) {
      ppi_free(ctx, scratch, sz);
      ppi_free(ctx, grp, (size_t)2 * out->N * sizeof *grp);
      return PP_ENOMEM;
    }
    out->alloc_period =
        allocation_period(c, out->N, P, out->first, out->proc, scratch);
    if (period_cap > 0 && (out->alloc_period > period_cap || hi > period_cap)) {
      /* phase 2 only raises the period: the caller's cap is out of reach */
      ppi_free(ctx, scratch, sz);
      ppi_free(ctx, grp, (size_t)2 * out->N * sizeof *grp);
      return ppi_fail(ctx, PP_ELIMIT,
                      "madpipe: the allocation's period %.6g ms exceeds the "
                      "cap %.6g ms",
                      out->alloc_period > hi ? out->alloc_period : hi,
                      period_cap);
    }
    out->period = out->alloc_period > hi ? out->alloc_period : hi;
    /* 1F1B*'s counts at the phase-1 target, until phase 2 does better */
    star_counts(c, out->N, out->first, out->proc, out->period,
                scratch + P + P * P, grp, out->inflight);
    ppi_free(ctx, scratch, sz);
    ppi_free(ctx, grp, (size_t)2 * out->N * sizeof *grp);
  }
  if (phase1_only) {
    out->fits = 1;
    return PP_OK;
  }
  return phase2(ctx, ar, c, stop, max_nodes, period_cap, out);
}

pp_status ppi_part_madpipe(pp_ctx *ctx, struct ppi_arena *ar,
                           const struct ppi_chain *c, int32_t P,
                           int32_t iterations, const struct ppi_stop *stop,
                           int max_nodes, double period_cap, int phase1,
                           struct ppi_madpipe *out)
{
  struct mrun r;
  int32_t l;
  int64_t kept = 0;
  pp_status rc = PP_OK;

  memset(&r, 0, sizeof r);
  r.ctx = ctx;
  r.c = c;
  r.P = P;
  r.M = c->mem[0];
  ppi_vec_init(&r.pool, sizeof(struct mlabel));
  r.bucket = ppi_calloc(ctx, (size_t)(c->L + 1) * P, sizeof *r.bucket);
  if (!r.bucket)
    return PP_ENOMEM;
  for (l = 0; l < (c->L + 1) * P; l++)
    ppi_vec_init(&r.bucket[l], sizeof(struct mlabel));
  /* the paper's optimistic count for the special processor first; when
  ** phase 2 finds no pattern that fits, its pessimistic one (phase1:
  ** the one mode asked for, phase 1 alone) */
  for (r.pessimistic = phase1 ? phase1 - 1 : 0;
       r.pessimistic < (phase1 ? phase1 : 2); r.pessimistic++) {
    rc = attempt(&r, ar, iterations, stop, max_nodes, period_cap, phase1 > 0,
                 out);
    kept += r.kept;
    if (rc == PP_EINPUT || (rc == PP_OK && !out->fits))
      continue;
    break;
  }
  if (rc == PP_OK && !out->fits)
    rc = PP_EINPUT;
  out->labels = kept;
  for (l = 0; l < (c->L + 1) * P; l++)
    ppi_vec_free(ctx, &r.bucket[l]);
  ppi_free(ctx, r.bucket, (size_t)(c->L + 1) * P * sizeof *r.bucket);
  ppi_vec_free(ctx, &r.pool);
  return rc;
}

pp_status ppi_madpipe_feasible(pp_ctx *ctx, const struct ppi_chain *c,
                               int32_t P, double T, int pessimistic, int *ok)
{
  struct mrun r;
  struct mlabel term;
  bool b = false;
  int32_t l;
  pp_status rc;
  memset(&r, 0, sizeof r);
  r.ctx = ctx;
  r.c = c;
  r.P = P;
  r.M = c->mem[0];
  r.pessimistic = pessimistic;
  ppi_vec_init(&r.pool, sizeof(struct mlabel));
  if (!(r.bucket = ppi_calloc(ctx, (size_t)(c->L + 1) * P, sizeof *r.bucket)))
    return PP_ENOMEM;
  for (l = 0; l < (c->L + 1) * P; l++)
    ppi_vec_init(&r.bucket[l], sizeof(struct mlabel));
  rc = feasible(&r, T, &term, &b);
  *ok = b;
  for (l = 0; l < (c->L + 1) * P; l++)
    ppi_vec_free(ctx, &r.bucket[l]);
  ppi_free(ctx, r.bucket, (size_t)(c->L + 1) * P * sizeof *r.bucket);
  ppi_vec_free(ctx, &r.pool);
  return rc;
}

/* ---- PipeDream + 1F1B* --------------------------------------------------- */

pp_status ppi_part_pipedream_star(pp_ctx *ctx, struct ppi_arena *ar,
                                  const struct ppi_chain *c0, int32_t P0,
                                  struct ppi_madpipe *out)
{
  /* one stage per processor, as many as there are layers */
  struct ppi_chain cs = *c0, *c = &cs;
  int32_t P = P0 < c0->L ? P0 : c0->L, n = 2 * P - 1, s, a, b, nc = 0, *grp;
  double T0, *load, *cand;
  pp_status rc;

  cs.S = P;
  memset(out, 0, sizeof *out);
  out->N = P;
  out->P = P0;
  out->first = ppi_arena_alloc(ar, ctx, (size_t)P + 1, sizeof *out->first);
  out->proc = ppi_arena_alloc(ar, ctx, (size_t)P, sizeof *out->proc);
  out->inflight = ppi_arena_alloc(ar, ctx, (size_t)P, sizeof *out->inflight);
  out->special = ppi_arena_alloc(ar, ctx, (size_t)P, sizeof *out->special);
  load = ppi_arena_alloc(ar, ctx, (size_t)n, sizeof *load);
  grp = ppi_arena_alloc(ar, ctx, (size_t)n, sizeof *grp);
  cand = ppi_arena_alloc(ar, ctx, (size_t)n * n + 1, sizeof *cand);
  if (!out->first || !out->proc || !out->inflight || !out->special || !load ||
      !grp || !cand)
    return PP_ENOMEM;
  if ((rc = ppi_part_period(ctx, c, out->first, &T0)))
    return rc;
  for (s = 0; s < P; s++)
    out->proc[s] = s;
  out->alloc_period = T0;
  for (s = 0; s < P; s++) {
    load[2 * s] = ppi_ch_work(c, 0, out->first[s], out->first[s + 1] - 1);
    if (s + 1 < P)
      load[2 * s + 1] = link(c, out->first[s + 1] - 1);
  }
  /* candidate periods: T0 and every sum of consecutive loads above it */
  cand[nc++] = T0;
  for (a = 0; a < n; a++) {
    double sum = 0;
    for (b = a; b < n; b++) {
      sum += load[b];
      if (sum > T0)
        cand[nc++] = sum;
    }
  }
  qsort(cand, (size_t)nc, sizeof *cand, ppi_cmp_double);
  for (a = 0; a < nc; a++) {
    bool fit = true;
    if (a > 0 && cand[a] == cand[a - 1])
      continue;
    star_counts(c, P, out->first, out->proc, cand[a], load, grp, out->inflight);
    for (s = 0; s < P && fit; s++)
      fit = ppi_ch_mem_g(c, out->first[s], out->first[s + 1] - 1,
                         out->inflight[s]) <= c->mem[0];
    if (fit) {
      out->period = cand[a];
      out->fits = 1;
      return PP_OK;
    }
  }
  /* nothing fits: report the one-group counts, the least memory */
  out->period = cand[nc - 1];
  out->fits = 0;
  return PP_OK;
}
