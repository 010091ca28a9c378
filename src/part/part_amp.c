/* SPDX-License-Identifier: MIT */
/*
** AMP's pipeline objective solved exactly ([AMP] Eq. 5-8), with the
** data-parallel allreduce AMP's own DP leaves out as an optional term.
**
** Objective: over partitions of the chain into exactly S contiguous
** stages, stage s on position s (a device of the given sequence),
**   F = (gas - 1) max_s t_s + sum_s t_s + sum_{s < S-1} e_s [+ max_s a_s]
** with t_s the stage's work on its position's type (fwd + bwd), e_s one
** transfer of the tensor after its last layer to position s+1, and a_s
** its gradient allreduce over the R replicas (part.h, ppi_ch_ar).  A
** stage must fit its position's memory limit when one is set.
**
** Method: a label-setting DP.  A label at (s, j) is a partial partition of
** layers 0..j into stages 0..s, summarised by (m, sigma, r): its largest
** t, its sum of t + e, its largest a.  F of a completion is monotone in
** each, so a label dominated in all three can be dropped; the
** non-dominated labels (the Pareto front) at (s, j) are exact.  Bounds
** prune what dominance keeps: a label whose F with the cheapest
** completion (the remaining layers each on the fastest remaining
** position, spread evenly for the max term) cannot beat the best known
** F is dropped, and the scan over a stage's first layer stops once gas
** times its work alone does.  The best known F starts from the exact
** min-max partition (part_minmax.c) priced with F.
**
** AMP's published DP (O(k L^4), 2-17 s per call at L = 30 in Python)
** enumerates the candidate maxima instead; data/amp/README.md shows its
** partitions up to 2 % off its own full cost because the allreduce never
** enters the choice (part_amp_original.c reproduces it).  Here the
** fronts are small (a few labels per state on real profiles), so a call
** at L = 30 takes microseconds.
**
** Complexity: O(S L w K) for w layers per stage window and K labels per
** front (K <= the number of distinct maxima, in practice a handful);
** O(S L K) memory.  Ties: the first label in (m, sigma, r, i) order, so
** the result is deterministic.
*/
#include "part/part.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct label {
  double m, sig, r;
  int64_t prev; /* label at (s-1, i-1), or -1 */
  int32_t i;    /* first layer of the last stage */
};

struct amp_run {
  pp_ctx *ctx;
  const struct ppi_chain *c;
  struct ppi_vec pool; /* struct label */
  int64_t *off;        /* [S*L + 1]: labels of (s, j) in pool */
  double *minw;        /* [S][L+1]: suffix sums of the cheapest remaining */
  double best;         /* best known F */
};

static double F(const struct ppi_chain *c, double m, double sig, double r)
{
  return (double)(c->gas - 1) * m + sig + r;
}

static int cmp_label(const void *x, const void *y)
{
  const struct label *a = x, *b = y;
  if (a->m != b->m)
    return a->m < b->m ? -1 : 1;
  if (a->sig != b->sig)
    return a->sig < b->sig ? -1 : 1;
  if (a->r != b->r)
    return a->r < b->r ? -1 : 1;
  return a->i > b->i ? -1 : a->i < b->i;
}

/* Keep the non-dominated labels of cand[0:n] (sorted), in place. */
static int64_t front(struct label *cand, int64_t n, int three)
{
  int64_t k = 0, a, b;
  double sig_best = INFINITY;
  if (n == 0)
    return 0; /* cand may be NULL */
  qsort(cand, (size_t)n, sizeof *cand, cmp_label);
  for (a = 0; a < n; a++) {
    bool dom = false;
    if (!three) {
      if (cand[a].sig >= sig_best)
        continue;
      sig_best = cand[a].sig;
      cand[k++] = cand[a];
      continue;
    }
    for (b = 0; b < k && !dom; b++)
      dom = cand[b].m <= cand[a].m && cand[b].sig <= cand[a].sig &&
            cand[b].r <= cand[a].r;
    if (!dom)
      cand[k++] = cand[a];
  }
  return k;
}

/* minw[s][j]: the least work layers j..L-1 can cost on positions s..S-1
** (each layer on the cheapest of them). */
static pp_status cheapest(struct amp_run *a)
{
  const struct ppi_chain *c = a->c;
  int32_t L = c->L, S = c->S, s, j, q;
  a->minw = ppi_alloc(a->ctx, (size_t)S * (L + 1) * sizeof *a->minw);
  if (!a->minw)
    return PP_ENOMEM;
  for (s = 0; s < S; s++) {
    double *row = a->minw + (size_t)s * (L + 1);
    row[L] = 0;
    for (j = L - 1; j >= 0; j--) {
      double w = INFINITY;
      for (q = s; q < S; q++) {
        const double *wp = c->wp + (size_t)c->prof[q] * (L + 1);
        if (wp[j + 1] - wp[j] < w)
          w = wp[j + 1] - wp[j];
      }
      row[j] = row[j + 1] + w;
    }
  }
  return PP_OK;
}

/* A lower bound on F for a label at (s, j). */
static double bound(const struct amp_run *a, int32_t s, int32_t j,
                    const struct label *l)
{
  const struct ppi_chain *c = a->c;
  int32_t S = c->S, L = c->L;
  double rest = 0, mrest = 0, m;
  if (s + 1 < S) {
    rest = a->minw[(size_t)(s + 1) * (L + 1) + j + 1];
    mrest = rest / (S - 1 - s);
  }
  m = l->m > mrest ? l->m : mrest;
  return F(c, m, l->sig + rest, l->r);
}

pp_status ppi_part_amp(pp_ctx *ctx, const struct ppi_chain *c, int32_t *first,
                       double *obj, int64_t *labels)
{
  struct amp_run a;
  int32_t L = c->L, S = c->S, s, i, j;
  int32_t *ub_first = NULL;
  struct ppi_vec cand;
  int64_t x, best_label = -1;
  bool mem = false;
  pp_status rc;

  memset(&a, 0, sizeof a);
  a.ctx = ctx;
  a.c = c;
  ppi_vec_init(&a.pool, sizeof(struct label));
  ppi_vec_init(&cand, sizeof(struct label));
  for (s = 0; s < S; s++)
    mem = mem || isfinite(c->mem[s]);
  a.off = ppi_calloc(ctx, (size_t)S * L + 1, sizeof *a.off);
  ub_first = ppi_alloc(ctx, (size_t)(S + 1) * sizeof *ub_first);
  if (!a.off || !ub_first) {
    rc = PP_ENOMEM;
    goto done;
  }
  if ((rc = cheapest(&a)))
    goto done;
  /* the upper bound: the min-max partition, priced with F */
  {
    double mm;
    rc = ppi_part_minmax(ctx, c, mem, ub_first, &mm);
    if (rc == PP_ENOMEM)
      goto done;
    if (rc == PP_EINPUT) /* nothing fits: the DP below finds none either */
      goto done;
    a.best = ppi_ch_amp_of(c, ub_first) * (1 + PPI_REL_ROUNDING);
  }
  for (s = 0; s < S; s++) {
    for (j = 0; j < L; j++) {
      size_t at = (size_t)s * L + j;
      int64_t n;
      cand.n = 0;
      if (j >= s && j <= L - S + s) {
        for (i = s ? j : 0; i >= s; i--) { /* stage 0 starts at 0 */
          double t, e, r;
          int64_t p0, p1, p;
          t = ppi_ch_work(c, s, i, j);
          if ((double)c->gas * t > a.best)
            break;
          if (mem && ppi_ch_mem(c, s, i, j) > c->mem[s])
            continue;
          e = j < L - 1 ? ppi_ch_comm(c, s, j) : 0;
          r = ppi_ch_ar(c, s, i, j);
          if (s == 0) {
            p0 = -1;
            p1 = 0;
          } else {
            size_t from = (size_t)(s - 1) * L + i - 1;
            p0 = a.off[from];
            p1 = a.off[from + 1];
          }
          for (p = p0; p < p1; p++) {
            struct label l;
            if (p >= 0) {
              const struct label *q = &PPI_VEC_AT(&a.pool, struct label, p);
              l.m = q->m > t ? q->m : t;
              l.sig = q->sig + t + e;
              l.r = q->r > r ? q->r : r;
            } else {
              l.m = t;
              l.sig = t + e;
              l.r = r;
            }
            l.prev = p;
            l.i = i;
            if (bound(&a, s, j, &l) > a.best)
              continue;
            if ((rc = ppi_vec_push(ctx, &cand, &l)))
              goto done;
          }
        }
      }
      n = front(cand.data, (int64_t)cand.n, c->allreduce);
      a.off[at] = (int64_t)a.pool.n;
      for (x = 0; x < n; x++)
        if ((rc = ppi_vec_push(ctx, &a.pool,
                               &PPI_VEC_AT(&cand, struct label, x))))
          goto done;
      if (s == S - 1 && j == L - 1) {
        double fbest = INFINITY;
        for (x = 0; x < n; x++) {
          const struct label *l = &PPI_VEC_AT(&cand, struct label, x);
          double f = F(c, l->m, l->sig, l->r);
          if (f < fbest) {
            fbest = f;
            best_label = a.off[at] + x;
          }
        }
      }
    }
  }
  a.off[(size_t)S * L] = (int64_t)a.pool.n;
  if (labels)
    *labels = (int64_t)a.pool.n;
  if (best_label < 0) { /* the upper bound was optimal */
    memcpy(first, ub_first, (size_t)(S + 1) * sizeof *first);
  } else {
    first[S] = L;
    for (s = S - 1, x = best_label; s >= 0; s--) {
      const struct label *l = &PPI_VEC_AT(&a.pool, struct label, x);
      first[s] = l->i;
      x = l->prev;
    }
  }
  *obj = ppi_ch_amp_of(c, first);
  rc = PP_OK;
done:
  ppi_free(ctx, a.off, ((size_t)S * L + 1) * sizeof *a.off);
  ppi_free(ctx, ub_first, (size_t)(S + 1) * sizeof *ub_first);
  if (a.minw)
    ppi_free(ctx, a.minw, (size_t)S * (L + 1) * sizeof *a.minw);
  ppi_vec_free(ctx, &a.pool);
  ppi_vec_free(ctx, &cand);
  return rc;
}
