/* SPDX-License-Identifier: MIT */
/*
** Scotch's static mapping as a baseline (libscotch, Pellegrini): the
** stage-replica graph is mapped onto the device graph by Scotch's
** default mapping strategy, as a user of Scotch would do it.
**
**   - the device graph: the complete graph of the devices, an edge's
**     weight the relative cost of sending over it (the largest bandwidth
**     over its bandwidth, rounded, at least 1); its architecture is built
**     with SCOTCH_archBuild2 (decomposition-defined, multilevel);
**   - the stage-replica graph: a vertex per stage replica of weight 1 (one
**     per device), an edge per stage-graph edge within a replica weighted
**     by its bytes, and for the allreduce objectives an edge per ring pair
**     weighted by the allreduce's bytes (scaled to at most 2^20);
**   - Scotch balances load, so two stage replicas may share a device; such
**     a collision is repaired by moving the later one to the free device
**     with the best bandwidth to the crowded one.
** Scotch runs in a context of its own with one thread and its generator
** seeded with 1 (map_scotch.h), so the same inputs give the same mapping
** (with Scotch's default threads they did not).  Scotch reports errors through
** SCOTCH_errorPrint, which an application supplies: ours stays silent
** (the library never prints), and failures are told by return codes.
**
** Complexity: Scotch's (near-linear in the graphs' edges: D^2 for the
** complete device graph) plus O(n D) for the repair.
*/
#include "map/map.h"
#include "map/map_scotch.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

/* Exported (the library hides its symbols): libscotch calls these. */
#pragma GCC visibility push(default)
void SCOTCH_errorPrint(const char *const fmt, ...)
{
  (void)fmt;
}
void SCOTCH_errorPrintW(const char *const fmt, ...)
{
  (void)fmt;
}
#pragma GCC visibility pop

int ppi_scotch_open(struct ppi_scotch *s)
{
  memset(s, 0, sizeof *s);
  if (SCOTCH_contextInit(&s->c))
    return 1;
  s->c_ok = true;
  if (SCOTCH_contextRandomClone(&s->c) ||
      SCOTCH_contextOptionSetNum(&s->c, SCOTCH_OPTIONNUMDETERMINISTIC, 1) ||
      SCOTCH_contextOptionSetNum(&s->c, SCOTCH_OPTIONNUMRANDOMFIXEDSEED, 1) ||
      SCOTCH_contextThreadSpawn(&s->c, 1, NULL))
    return 1;
  SCOTCH_contextRandomSeed(&s->c, 1);
  SCOTCH_contextRandomReset(&s->c);
  return 0;
}

SCOTCH_Graph *ppi_scotch_bind(struct ppi_scotch *s, SCOTCH_Graph *g)
{
  SCOTCH_Graph *cg;
  if (!s->c_ok || s->ng == 2)
    return NULL;
  cg = &s->g[s->ng];
  if (SCOTCH_graphInit(cg))
    return NULL;
  s->ng++;
  return SCOTCH_contextBindGraph(&s->c, g, cg) ? NULL : cg;
}

void ppi_scotch_close(struct ppi_scotch *s)
{
  while (s->ng > 0)
    SCOTCH_graphExit(&s->g[--s->ng]);
  if (s->c_ok)
    SCOTCH_contextExit(&s->c);
  s->c_ok = false;
}

pp_status ppi_map_scotch(pp_ctx *ctx, const struct ppi_map *q, int32_t *p)
{
  SCOTCH_Graph tg, sg, *ctg, *csg;
  SCOTCH_Arch arch;
  struct ppi_scotch sc;
  SCOTCH_Strat strat;
  int32_t D = q->D, n = q->n, S = q->S, R = q->R, i, j, s, r, k;
  SCOTCH_Num *tv = NULL, *te = NULL, *tl = NULL, *sv = NULL, *se = NULL,
             *sl = NULL, *part = NULL, ntg = 0;
  size_t nte = (size_t)D * (D - 1), nse = 0, cap;
  double bmax = 0, mmax = 0;
  uint8_t *used = NULL;
  pp_status rc = PP_OK;
  bool tg_ok = false, sg_ok = false, arch_ok = false, strat_ok = false;

  memset(&sc, 0, sizeof sc); /* closed in any case */
  if (D == 1 || n == 1) {    /* nothing for Scotch to decide */
    for (i = 0; i < n; i++)
      p[i] = i;
    return PP_OK;
  }
  for (i = 0; i < D * D; i++)
    bmax = q->B[i] > bmax ? q->B[i] : bmax;
  cap = 2 * (size_t)q->ne * R + 2 * (size_t)S * R;
  tv = ppi_alloc(ctx, ((size_t)D + 1) * sizeof *tv);
  te = ppi_alloc(ctx, (nte ? nte : 1) * sizeof *te);
  tl = ppi_alloc(ctx, (nte ? nte : 1) * sizeof *tl);
  sv = ppi_alloc(ctx, ((size_t)n + 1) * sizeof *sv);
  se = ppi_alloc(ctx, (cap ? cap : 1) * sizeof *se);
  sl = ppi_alloc(ctx, (cap ? cap : 1) * sizeof *sl);
  part = ppi_alloc(ctx, (size_t)n * sizeof *part);
  used = ppi_calloc(ctx, (size_t)D, 1);
  if (!tv || !te || !tl || !sv || !se || !sl || !part || !used) {
    rc = PP_ENOMEM;
    goto done;
  }
  /* the device graph */
  for (i = 0, k = 0; i < D; i++) {
    tv[i] = k;
    for (j = 0; j < D; j++)
      if (j != i) {
        double w = bmax / q->B[(size_t)i * D + j];
        te[k] = j;
        /* TUNING: Scotch's integer link costs: the slowdown against the
        ** fastest link, at least 1, at most a million (a pair a million
        ** times slower is as good as unconnected) */
        tl[k++] = (SCOTCH_Num)(w < 1e6 ? (w > 1 ? llround(w) : 1) : 1000000);
      }
  }
  tv[D] = k;
  ntg = k;
  /* the stage-replica graph: neighbours of v = (s, r) */
  for (s = 0; s < S; s++) {
    for (k = q->adj_off[s]; k < q->adj_off[s + 1]; k++)
      mmax = q->adj_m[k] > mmax ? q->adj_m[k] : mmax;
    mmax = q->P[s] > mmax ? q->P[s] : mmax;
  }
  if (!(mmax > 0))
    mmax = 1;
  /* TUNING: Scotch's integer edge weights: bytes scaled so the heaviest
  ** edge weighs 2^20, fine enough that no two stage edges that differ by
  ** more than a millionth tie, and +1 so none weighs 0 */
  for (i = 0; i < n; i++) {
    s = i % S;
    r = i / S;
    sv[i] = (SCOTCH_Num)nse;
    if (q->obj != MAP_AR)
      for (k = q->adj_off[s]; k < q->adj_off[s + 1]; k++) {
        se[nse] = r * S + q->adj_s[k];
        sl[nse++] = 1 + (SCOTCH_Num)(q->adj_m[k] / mmax * (1 << 20));
      }
    if (q->obj != MAP_P2P && R > 1) {
      int32_t nb[2] = {((r + 1) % R) * S + s, ((r + R - 1) % R) * S + s};
      for (k = 0; k < (R == 2 ? 1 : 2); k++) {
        se[nse] = nb[k];
        sl[nse++] = 1 + (SCOTCH_Num)(q->P[s] / mmax * (1 << 20));
      }
    }
  }
  sv[n] = (SCOTCH_Num)nse;
  if (SCOTCH_graphInit(&tg) || SCOTCH_graphInit(&sg)) {
    rc = ppi_fail(ctx, PP_EINTERNAL, "scotch: graph init failed");
    goto done;
  }
  tg_ok = sg_ok = true;
  if (SCOTCH_graphBuild(&tg, 0, D, tv, NULL, NULL, NULL, ntg, te, tl) ||
      SCOTCH_graphBuild(&sg, 0, n, sv, NULL, NULL, NULL, (SCOTCH_Num)nse, se,
                        sl)) {
    rc = ppi_fail(ctx, PP_EINTERNAL, "scotch: graph build failed");
    goto done;
  }
  if (SCOTCH_graphCheck(&tg) || SCOTCH_graphCheck(&sg)) {
    rc = ppi_fail(ctx, PP_EINTERNAL, "scotch: inconsistent graph");
    goto done;
  }
  if (ppi_scotch_open(&sc) || !(ctg = ppi_scotch_bind(&sc, &tg)) ||
      !(csg = ppi_scotch_bind(&sc, &sg))) {
    rc = ppi_fail(ctx, PP_EINTERNAL, "scotch: context failed");
    goto done;
  }
  if (SCOTCH_archInit(&arch)) {
    rc = ppi_fail(ctx, PP_EINTERNAL, "scotch: arch init failed");
    goto done;
  }
  arch_ok = true;
  if (SCOTCH_archBuild2(&arch, ctg, 0, NULL)) {
    rc = ppi_fail(ctx, PP_EINTERNAL, "scotch: architecture build failed");
    goto done;
  }
  if (SCOTCH_stratInit(&strat)) {
    rc = ppi_fail(ctx, PP_EINTERNAL, "scotch: strategy init failed");
    goto done;
  }
  strat_ok = true;
  if (SCOTCH_graphMap(csg, &arch, &strat, part)) {
    rc = ppi_fail(ctx, PP_EINTERNAL, "scotch: mapping failed");
    goto done;
  }
  /* repair collisions: later replicas move to the best free device */
  for (i = 0; i < n; i++) {
    int32_t d = part[i] >= 0 && part[i] < D ? (int32_t)part[i] : 0;
    if (used[d]) {
      int32_t best = -1;
      for (j = 0; j < D; j++)
        if (!used[j] &&
            (best < 0 || q->B[(size_t)d * D + j] > q->B[(size_t)d * D + best]))
          best = j;
      d = best;
    }
    used[d] = 1;
    p[i] = d;
  }
done:
  if (strat_ok)
    SCOTCH_stratExit(&strat);
  if (arch_ok)
    SCOTCH_archExit(&arch);
  ppi_scotch_close(&sc);
  if (sg_ok)
    SCOTCH_graphExit(&sg);
  if (tg_ok)
    SCOTCH_graphExit(&tg);
  ppi_free(ctx, tv, ((size_t)D + 1) * sizeof *tv);
  ppi_free(ctx, te, (nte ? nte : 1) * sizeof *te);
  ppi_free(ctx, tl, (nte ? nte : 1) * sizeof *tl);
  ppi_free(ctx, sv, ((size_t)n + 1) * sizeof *sv);
  ppi_free(ctx, se, (cap ? cap : 1) * sizeof *se);
  ppi_free(ctx, sl, (cap ? cap : 1) * sizeof *sl);
  ppi_free(ctx, part, (size_t)n * sizeof *part);
  ppi_free(ctx, used, (size_t)D);
  return rc;
}
