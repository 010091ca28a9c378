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
** the one with the least sum of squared stage times (balance()).
**
** Complexity: O(S L w) time (O(S L^2) worst case), O(S L) memory for the
** back-pointers.  Remaining ties go to the shorter last stage (largest
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
  return (c->fac * (c->pp[j + 1] - c->pp[i]) +
          (c->recompute ? 1 : c->nf[s]) * (c->sp[j + 1] - c->sp[i])) /
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

static pp_status dp(pp_ctx *ctx, const struct ppi_chain *c, int kind, int mem,
                    int32_t *first, double *obj)
{
  int32_t L = c->L, S = c->S, s, i, j;
  double *f = ppi_alloc(ctx, (size_t)S * L * sizeof *f);
  int32_t *from = ppi_alloc(ctx, (size_t)S * L * sizeof *from);
  pp_status rc = PP_OK;

  if (!f || !from) {
    rc = PP_ENOMEM;
    goto done;
  }
  for (i = 0; i < S * L; i++) {
    f[i] = INFINITY;
    from[i] = -1;
  }
  for (s = 0; s < S; s++) {
    /* stage s ends at j in [s, L - S + s] */
    for (j = s; j <= L - S + s; j++) {
      double best = INFINITY;
      int32_t arg = -1;
      /* the first stage starts at layer 0 */
      for (i = s ? j : 0; i >= s; i--) {
        double prev = s ? f[(size_t)(s - 1) * L + i - 1] : 0, t;
        if (grow_bound(c, kind, s, i, j) >= best)
          break;
        if (prev >= best)
          continue;
        if (mem && ppi_ch_mem(c, s, i, j) > c->mem[s])
          continue;
        t = stage_cost(c, kind, s, i, j);
        if (t < prev)
          t = prev;
        if (t < best) {
          best = t;
          arg = i;
        }
      }
      f[(size_t)s * L + j] = best;
      from[(size_t)s * L + j] = arg;
    }
  }
  if (!isfinite(f[(size_t)(S - 1) * L + L - 1])) {
    rc = PP_EINPUT;
    goto done;
  }
  *obj = f[(size_t)(S - 1) * L + L - 1];
  if (kind == COST_TIME)
    balance(c, mem, *obj, f, from);
  first[S] = L;
  for (s = S - 1, j = L - 1; s >= 0; s--) {
    first[s] = from[(size_t)s * L + j];
    j = first[s] - 1;
  }
done:
  ppi_free(ctx, f, (size_t)S * L * sizeof *f);
  ppi_free(ctx, from, (size_t)S * L * sizeof *from);
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
