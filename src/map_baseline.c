/* SPDX-License-Identifier: MIT */
/*
** The mappings users get today, scored with the same objective
** (paper 001 Table 2's baselines; AMP 6.3):
**
**   - consecutive (CS): replica r's stages on devices r S .. r S + S - 1;
**   - Megatron's rank order: data-parallel ranks inside, then pipeline
**     stages (tensor parallelism, when present, is innermost and already
**     inside a stage here): stage s replica r on device s R + r;
**   - random: the best of N uniformly random injective mappings;
**   - simulated annealing: swap the devices of two stage replicas, or move
**     one to an idle device; accept a worse value with probability
**     exp(-delta / T), T falling linearly from a tenth of the start's
**     value to 0 over the steps (AMP 6.3 anneals its placements the same
**     way).
** All random choices come from a generator seeded from the context's
** seed, so the same seed gives the same mapping.
**
** Complexity: O(n) (CS, Megatron); O(N n deg) (random, annealing).
*/
#include "map.h"

#include <math.h>
#include <string.h>

void ppi_map_cs(const struct ppi_map *q, int32_t *p)
{
  int32_t v;
  for (v = 0; v < q->n; v++)
    p[v] = v; /* v = r S + s */
}

void ppi_map_megatron(const struct ppi_map *q, int32_t *p)
{
  int32_t s, r;
  for (s = 0; s < q->S; s++)
    for (r = 0; r < q->R; r++)
      p[r * q->S + s] = s * q->R + r;
}

/* A random injective mapping: the first n of a shuffled device list. */
static void shuffle(struct ppi_rng *g, int32_t *perm, int32_t D)
{
  int32_t i;
  for (i = 0; i < D; i++)
    perm[i] = i;
  for (i = D - 1; i > 0; i--) {
    int32_t j = (int32_t)ppi_rng_below(g, (uint64_t)i + 1), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
}

pp_status ppi_map_random(pp_ctx *ctx, const struct ppi_map *q, int64_t samples,
                         uint64_t seed, int32_t *p)
{
  struct ppi_rng g;
  int32_t *perm = ppi_alloc(ctx, (size_t)q->D * sizeof *perm);
  double best = INFINITY;
  int64_t k;
  if (!perm)
    return PP_ENOMEM;
  ppi_rng_seed(&g, seed ^ 0x6d6170ull);
  for (k = 0; k < samples; k++) {
    double v;
    shuffle(&g, perm, q->D);
    v = ppi_map_value(q, perm, NULL);
    if (v < best) {
      best = v;
      memcpy(p, perm, (size_t)q->n * sizeof *p);
    }
  }
  ppi_free(ctx, perm, (size_t)q->D * sizeof *perm);
  return PP_OK;
}

pp_status ppi_map_anneal(pp_ctx *ctx, const struct ppi_map *q, int64_t steps,
                         uint64_t seed, const int32_t *start, int32_t *p)
{
  struct ppi_rng g;
  int32_t D = q->D, n = q->n, *cur, *owner, i;
  double vcur, vbest, T0;
  int64_t k;
  cur = ppi_alloc(ctx, (size_t)D * sizeof *cur); /* [0:n] the mapping */
  owner = ppi_alloc(ctx, (size_t)D * sizeof *owner);
  if (!cur || !owner) {
    ppi_free(ctx, cur, (size_t)D * sizeof *cur);
    ppi_free(ctx, owner, (size_t)D * sizeof *owner);
    return PP_ENOMEM;
  }
  ppi_rng_seed(&g, seed ^ 0x616e6e65616cull);
  for (i = 0; i < D; i++)
    owner[i] = -1;
  for (i = 0; i < n; i++) {
    cur[i] = start[i];
    owner[start[i]] = i;
  }
  memcpy(p, start, (size_t)n * sizeof *p);
  vcur = vbest = ppi_map_value(q, cur, NULL);
  T0 = vcur / 10;
  for (k = 0; k < steps; k++) {
    double T = T0 * (1 - (double)k / steps), vnew;
    int32_t a = (int32_t)ppi_rng_below(&g, (uint64_t)n);
    int32_t dn = (int32_t)ppi_rng_below(&g, (uint64_t)D), da = cur[a];
    int32_t b = owner[dn];
    if (dn == da)
      continue;
    /* a moves to dn; whoever was there (if anyone) moves to a's device */
    cur[a] = dn;
    owner[dn] = a;
    owner[da] = b;
    if (b >= 0)
      cur[b] = da;
    vnew = ppi_map_value(q, cur, NULL);
    if (vnew <= vcur || (T > 0 && ppi_rng_unit(&g) < exp(-(vnew - vcur) / T))) {
      vcur = vnew;
      if (vnew < vbest) {
        vbest = vnew;
        memcpy(p, cur, (size_t)n * sizeof *p);
      }
    } else { /* undo */
      cur[a] = da;
      owner[da] = a;
      owner[dn] = b;
      if (b >= 0)
        cur[b] = dn;
    }
  }
  ppi_free(ctx, cur, (size_t)D * sizeof *cur);
  ppi_free(ctx, owner, (size_t)D * sizeof *owner);
  return PP_OK;
}
