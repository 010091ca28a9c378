/* SPDX-License-Identifier: MIT */
/*
** Min-max partition of a layer chain ([PipeDream]; [Parmesan] Eq. 3),
** exact, on a homogeneous flattened network or on a fixed sequence of
** devices of different speeds and pairwise bandwidths (chains-on-chains
** with the processors in a fixed order, polynomial: [Pinar08]), with an
** optional memory limit per position.
**
** Objective: minimise max_s t(s), t(s) = (work of its layers on position
** s + the transfer in from s-1 + the transfer out to s+1) / R, over the
** partitions into exactly S non-empty contiguous stages whose memory
** (part.h, ppi_ch_mem) fits every position's limit.
**
** Recurrence: f[s][j] = min over i of max(f[s-1][i-1], t(s, i..j)), the
** best first s+1 stages ending at layer j.  Invariant: f[s][j] is exact
** for every j once row s is done; INFINITY marks no feasible prefix.
** The scan over i goes from j down and stops once the work alone (a
** lower bound of t, since transfers are >= 0, and one that only grows as
** i falls) reaches the best value found, so a row costs O(L x w), w the
** layers of an optimal-sized stage, not O(L^2).
**
** The same recurrence with the memory / limit ratio as the stage cost
** gives the partition that comes closest to fitting (ppi_part_minmem),
** which is what a user is told about when nothing fits; with the larger
** of a stage's work and the load of the link before it (a forward and a
** backward transfer), it gives the contiguous allocation of least period
** in the model of [MadPipe] (ppi_part_period: PipeDream's partition in
** MadPipe's comparison).
**
** Among optimal partitions, a second pass of the same recurrence picks
** the one with the least sum of squared stage times (balance(); skipped
** on very long chains, below).
**
** Complexity: the min-max rows start each scan where the prefix's
** suffix minimum crosses the stage's work bound (dp_row), so a row costs
** O(L (log L + k)), k the starts between the two bounds (a handful on
** real chains); O(S L w) worst case, w the layers of a stage.  The
** balance pass is O(S L w).  O(S L) memory for the back-pointers.  Remaining
*ties go to the shorter last stage (largest
** i), so the result is deterministic.
*/
#include "part/part.h"

#include <math.h>
#include <string.h>

enum { COST_TIME, COST_MEM, COST_PERIOD };

static double stage_cost(const struct ppi_chain *c, int kind, int32_t s,
                         int32_t i, int32_t j)
{
  if (kind == COST_TIME)
    return ppi_ch_minmax(c, s, i, j);
  if (kind == COST_PERIOD) { /* its processor, or the link before it */
    double u = ppi_ch_work(c, s, i, j) / c->R;
    double l = i > 0 ? 2 * ppi_ch_comm(c, s - 1, i - 1) : 0;
    return u > l ? u : l;
  }
  return ppi_ch_mem(c, s, i, j) / c->mem[s];
}

/* A lower bound of stage_cost(s, i', j) for every i' <= i: it only grows
** as the stage grows to the left. */
static double grow_bound(const struct ppi_chain *c, int kind, int32_t s,
                         int32_t i, int32_t j)
{
  if (kind == COST_TIME || kind == COST_PERIOD)
    return ppi_ch_work(c, s, i, j) / c->R;
  /* with recomputation the kept inputs need not grow: count the rest */
  return (c->fac * (ppi_ch_pp(c, s)[j + 1] - ppi_ch_pp(c, s)[i]) +
          (c->recompute ? 1 : c->nf[s]) *
              (ppi_ch_sp(c, s)[j + 1] - ppi_ch_sp(c, s)[i])) /
         c->mem[s];
}

/* Among the partitions whose stages all take at most T, the one with the
** least sum of squared stage times: the optimum stays, and the stages
** off the critical one are balanced instead of left to chance (a
** one-layer first stage is as "optimal" as any, but not what a user
** wants).  Same recurrence and scan; f and from are overwritten. */
static void balance(const struct ppi_chain *c, int mem, double T, double *f,
                    int32_t *from)
{
  int32_t L = c->L, S = c->S, s, i, j;
  double lim = T * (1 + PPI_REL_ROUNDING);
  for (s = 0; s < S; s++)
    for (j = s; j <= L - S + s; j++) {
      double best = INFINITY;
      int32_t arg = -1;
      for (i = s ? j : 0; i >= s; i--) {
        double prev = s ? f[(size_t)(s - 1) * L + i - 1] : 0, t, x;
        if (ppi_ch_work(c, s, i, j) / c->R > lim)
          break;
        if (!isfinite(prev))
          continue;
        if (mem && ppi_ch_mem(c, s, i, j) > c->mem[s])
          continue;
        t = ppi_ch_minmax(c, s, i, j);
        if (t > lim)
          continue;
        x = prev + t * t;
        if (x < best) {
          best = x;
          arg = i;
        }
      }
      f[(size_t)s * L + j] = best;
      from[(size_t)s * L + j] = arg;
    }
}

/* Candidate i for stage s ending at j: max(f[s-1][i-1], cost); kept when
** it beats (*best, *arg), ties going to the larger i. */
static void try_start(const struct ppi_chain *c, int kind, int mem,
                      const double *prow, int32_t s, int32_t i, int32_t j,
                      double *best, int32_t *arg)
{
  double prev = s ? prow[i - 1] : 0, t;
  if (prev > *best || (prev == *best && i < *arg))
    return;
  if (mem && ppi_ch_mem(c, s, i, j) > c->mem[s])
    return;
  t = stage_cost(c, kind, s, i, j);
  if (t < prev)
    t = prev;
  if (t < *best || (t == *best && i > *arg)) {
    *best = t;
    *arg = i;
  }
}

/* Row s >= 1 of the recurrence.  For a fixed j the value at start i is
** max(f[s-1][i-1], cost(i..j)); sm[i], the least f[s-1][k-1] over k >=
** i, is nondecreasing in i and grow_bound(i) nonincreasing, so the scan
** starts where they cross (a binary search) and goes left until
** grow_bound >= best and right until sm > best: every start skipped is
** provably no better (on the left its cost, on the right its prefix), so
** the row is exact, and it costs O(L (log L + k)), k the starts whose
** bounds straddle the optimum, instead of O(L w) (issue 22: a
** 100,000-layer chain in 8 stages took 141 s). */
static void dp_row(const struct ppi_chain *c, int kind, int mem, int32_t s,
                   const double *prow, double *sm, double *frow, int32_t *arow)
{
  int32_t L = c->L, S = c->S, i, j, top = L - S + s;
  /* sm[i] = min f[s-1][k-1], k in [i, top] */
  sm[top] = prow[top - 1];
  for (i = top - 1; i >= s; i--)
    sm[i] = prow[i - 1] < sm[i + 1] ? prow[i - 1] : sm[i + 1];
  for (j = s; j <= top; j++) {
    double best = INFINITY;
    int32_t arg = -1, lo = s, hi = j + 1, cross;
    /* the least i in [s, j] with sm[i] >= grow_bound(i), else j + 1 */
    while (lo < hi) {
      int32_t mid = lo + (hi - lo) / 2;
      if (sm[mid] >= grow_bound(c, kind, s, mid, j))
        hi = mid;
      else
        lo = mid + 1;
    }
    cross = lo;
    for (i = cross <= j ? cross : j; i <= j; i++) { /* right */
      if (sm[i] > best)
        break;
      try_start(c, kind, mem, prow, s, i, j, &best, &arg);
    }
    for (i = (cross <= j ? cross : j + 1) - 1; i >= s; i--) { /* left */
      double g = grow_bound(c, kind, s, i, j);
      if (g > best || (g == best && i < arg))
        break;
      try_start(c, kind, mem, prow, s, i, j, &best, &arg);
    }
    frow[j] = best;
    arow[j] = arg;
  }
}

static pp_status dp(pp_ctx *ctx, const struct ppi_chain *c, int kind, int mem,
                    int32_t *first, double *obj)
{
  int32_t L = c->L, S = c->S, s, i, j;
  double *f = ppi_alloc(ctx, (size_t)S * L * sizeof *f);
  int32_t *from = ppi_alloc(ctx, (size_t)S * L * sizeof *from);
  double *sm = ppi_alloc(ctx, (size_t)L * sizeof *sm);
  pp_status rc = PP_OK;

  if (!f || !from || !sm) {
    rc = PP_ENOMEM;
    goto done;
  }
  for (i = 0; i < S * L; i++) {
    f[i] = INFINITY;
    from[i] = -1;
  }
  /* the first stage starts at layer 0 and ends at j in [0, L - S] */
  for (j = 0; j <= L - S; j++) {
    double best = INFINITY;
    int32_t arg = -1;
    try_start(c, kind, mem, NULL, 0, 0, j, &best, &arg);
    f[j] = best;
    from[j] = arg;
  }
  for (s = 1; s < S; s++)
    dp_row(c, kind, mem, s, f + (size_t)(s - 1) * L, sm, f + (size_t)s * L,
           from + (size_t)s * L);
  if (!isfinite(f[(size_t)(S - 1) * L + L - 1])) {
    rc = PP_EINPUT;
    goto done;
  }
  *obj = f[(size_t)(S - 1) * L + L - 1];
  /* TUNING: the balance pass scans every start whose stage fits the
  ** optimum, about L x L / S candidates; past 5e7 (0.1 to 0.5 s) it is
  ** skipped and the min-max optimum stands unbalanced: a 100,000-layer
  ** chain in 8 stages took 46 s with it, 0.8 s without (Release build,
  ** 2026-11-26).  Model chains of up to 7,000 layers in 1 stage, or
  ** 20,000 in 8, are balanced. */
  if (kind == COST_TIME && (double)L * L / S <= 5e7)
    balance(c, mem, *obj, f, from);
  first[S] = L;
  for (s = S - 1, j = L - 1; s >= 0; s--) {
    first[s] = from[(size_t)s * L + j];
    j = first[s] - 1;
  }
done:
  ppi_free(ctx, f, (size_t)S * L * sizeof *f);
  ppi_free(ctx, from, (size_t)S * L * sizeof *from);
  ppi_free(ctx, sm, (size_t)L * sizeof *sm);
  return rc;
}

pp_status ppi_part_minmax(pp_ctx *ctx, const struct ppi_chain *c, int mem,
                          int32_t *first, double *obj)
{
  return dp(ctx, c, COST_TIME, mem, first, obj);
}

pp_status ppi_part_minmem(pp_ctx *ctx, const struct ppi_chain *c,
                          int32_t *first, double *ratio)
{
  return dp(ctx, c, COST_MEM, 0, first, ratio);
}

pp_status ppi_part_period(pp_ctx *ctx, const struct ppi_chain *c,
                          int32_t *first, double *period)
{
  return dp(ctx, c, COST_PERIOD, 0, first, period);
}
