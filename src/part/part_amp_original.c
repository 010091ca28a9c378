/* SPDX-License-Identifier: MIT */
/*
** AMP's layer-assignment DP as its public code runs it (pipe_ast, [AMP]
** 3.5), written from data/amp/COST_MODEL.md 3.1 (no code copied: the
** repository has no licence).  It is a baseline and a reference for the
** speed of part_amp.c, so its quirks are kept:
**
**   - "possible" is the sorted set of 0 and every contiguous segment sum
**     of the per-layer costs e (the candidate maxima, the paper's
**     tolerance m);
**   - trace[i][j][m]: layers 0..i in j+1 stages, with the running maximum
**     at least possible[m]; base (B-1) max(0, S(0..i) - possible[m]);
**     step over cuts c in [j-1, i-1] with seg = S(c+1..i):
**       cand = trace[c][j-1][idx(max(seg, possible[m]))]
**              + (B-1) max(0, seg - possible[m]) + cc[c][j-1]
**     a cut is taken when cand < best, and then best = cand - cc[c][j-1]:
**     the kept value, without its transfer term, is both what is stored
**     and what the next cuts are compared with;
**   - the answer is trace[L-1][k-1][0].
**
** What it optimises is therefore (B - 1) x the largest stage, roughly: a
** later cut must beat the kept one by more than its own transfer, so
** early cuts win near-ties (on 21 of AMP's 135 trials with B > 1 the
** largest stage is above the optimum), p2p never accumulates and the
** allreduce is absent (data/amp/COST_MODEL.md 3.1 and 6, item 4).  Given
** AMP's inputs it returns AMP's partition on all 135
** (tests/test_cost_amp.c).  AMP's driver replaces it by a uniform split
** when B = 1; here the DP runs as it is, and the caller that wants AMP's
** driver (pp_partition_chain with amp_inputs: ppi_amp_dp_inputs,
** ppi_amp_uniform) does that split.
**
** Complexity: O(k L^2 P) time and O(k L P) memory, P <= L(L+1)/2 + 1
** distinct segment sums: O(k L^4).  Refused (PP_ELIMIT) beyond 2^26
** table entries.
*/
#include "part/part.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Segment sums are always formed the same way, left to right, so that a
** value and its entry in "possible" are the same double. */
static double seg_sum(const double *e, int32_t a, int32_t b)
{
  double s = 0;
  int32_t l;
  for (l = a; l <= b; l++)
    s += e[l];
  return s;
}

static int32_t find(const double *v, int32_t n, double x)
{
  int32_t lo = 0, hi = n - 1;
  while (lo < hi) {
    int32_t mid = (lo + hi) / 2;
    if (v[mid] < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

pp_status ppi_part_amp_original(pp_ctx *ctx, const double *e, const double *cc,
                                int32_t L, int32_t k, int64_t B, int32_t *first)
{
  size_t nseg = (size_t)L * (L + 1) / 2 + 1, P = 0, cells = 0, at;
  double *poss = NULL, *val = NULL, *segv = NULL;
  int32_t *segi = NULL, *cut = NULL, i, j, a, b, m, c;
  pp_status rc = PP_OK;
  double Bm1 = (double)(B - 1);

  if (k < 1 || k > L)
    return ppi_fail(ctx, PP_EINVAL, "AMP's DP: %d stages for %d layers", (int)k,
                    (int)L);
  poss = ppi_alloc(ctx, nseg * sizeof *poss);
  segv = ppi_alloc(ctx, (size_t)L * L * sizeof *segv);
  segi = ppi_alloc(ctx, (size_t)L * L * sizeof *segi);
  if (!poss || !segv || !segi) {
    rc = PP_ENOMEM;
    goto done;
  }
  poss[P++] = 0;
  for (a = 0; a < L; a++)
    for (b = a; b < L; b++) {
      segv[(size_t)a * L + b] = seg_sum(e, a, b);
      poss[P++] = segv[(size_t)a * L + b];
    }
  qsort(poss, P, sizeof *poss, ppi_cmp_double);
  {
    size_t u = 1, x;
    for (x = 1; x < P; x++)
      if (poss[x] != poss[u - 1])
        poss[u++] = poss[x];
    P = u;
  }
  for (a = 0; a < L; a++)
    for (b = a; b < L; b++)
      segi[(size_t)a * L + b] = find(poss, (int32_t)P, segv[(size_t)a * L + b]);
  cells = (size_t)L * k * P;
  if (cells > PPI_AMP_MAX_ENTRIES) {
    rc = ppi_fail(ctx, PP_ELIMIT,
                  "AMP's DP: %d layers in %d stages need %zu table entries "
                  "(O(k L^4)); at most %zu",
                  (int)L, (int)k, cells, PPI_AMP_MAX_ENTRIES);
    goto done;
  }
  val = ppi_alloc(ctx, cells * sizeof *val);
  cut = ppi_alloc(ctx, cells * sizeof *cut);
  if (!val || !cut) {
    rc = PP_ENOMEM;
    goto done;
  }
#define AT(i, j, m) (((size_t)(i)*k + (j)) * P + (m))
  for (i = 0; i < L; i++)
    for (m = 0; m < (int32_t)P; m++) {
      double s = segv[i], x = s - poss[m];
      at = AT(i, 0, m);
      val[at] = Bm1 * (x > 0 ? x : 0);
      cut[at] = -1;
    }
  for (j = 1; j < k; j++)
    for (i = 0; i < L; i++)
      for (m = 0; m < (int32_t)P; m++) {
        double store = INFINITY;
        int32_t arg = -1;
        at = AT(i, j, m);
        for (c = j - 1; c <= i - 1; c++) {
          double seg = segv[(size_t)(c + 1) * L + i], x = seg - poss[m];
          int32_t mi = seg > poss[m] ? segi[(size_t)(c + 1) * L + i] : m;
          double pc = cc[(size_t)c * (k > 1 ? k - 1 : 1) + j - 1];
          double cand = val[AT(c, j - 1, mi)] + Bm1 * (x > 0 ? x : 0) + pc;
          /* AMP compares with the kept value, which has no transfer term:
          ** a later cut must beat it by more than its own transfer */
          if (cand < store) {
            store = cand - pc;
            arg = c;
          }
        }
        val[at] = store;
        cut[at] = arg;
      }
  /* follow the cuts back from trace[L-1][k-1][0] */
  first[k] = L;
  for (j = k - 1, i = L - 1, m = 0; j > 0; j--) {
    c = cut[AT(i, j, m)];
    if (c < 0) {
      rc = ppi_fail(ctx, PP_EINTERNAL, "AMP's DP: no cut at (%d, %d)", (int)i,
                    (int)j);
      goto done;
    }
    {
      double seg = segv[(size_t)(c + 1) * L + i];
      m = seg > poss[m] ? segi[(size_t)(c + 1) * L + i] : m;
    }
    first[j] = c + 1;
    i = c;
  }
  first[0] = 0;
#undef AT
done:
  ppi_free(ctx, poss, nseg * sizeof *poss);
  ppi_free(ctx, segv, (size_t)L * L * sizeof *segv);
  ppi_free(ctx, segi, (size_t)L * L * sizeof *segi);
  if (val)
    ppi_free(ctx, val, cells * sizeof *val);
  if (cut)
    ppi_free(ctx, cut, cells * sizeof *cut);
  return rc;
}

/* The DP chooses block boundaries; these map them back to layers, and
** give AMP's uniform split, its answer when the DP has no blocks to move
** (cost_amp.c builds the blocks; splitting them is partitioning). */
void ppi_amp_dp_layers(const struct ppi_amp_dp *in, int32_t k, int32_t nlayer,
                       const int32_t *wfirst, int32_t *first)
{
  int32_t p;
  first[0] = 0;
  for (p = 1; p < k; p++)
    first[p] = in->layer[wfirst[p] - 1] + 1;
  first[k] = nlayer;
}

void ppi_amp_uniform(const struct ppi_amp_dp *in, int32_t k, int32_t *wfirst)
{
  int32_t p;
  if (in->nblock < k || in->nblock + in->head > in->L) {
    ppi_part_uniform_layers(in->L, k, wfirst);
    return;
  }
  wfirst[0] = 0;
  for (p = 0; p < k; p++)
    wfirst[p + 1] =
        wfirst[p] + in->nblock / k + (p < in->nblock % k) + (p ? 0 : in->head);
}
