/* SPDX-License-Identifier: MIT */
/*
** The mappings users get today, scored with the same objective
** ([Parmesan] Table 2's baselines; [AMP] 6.3):
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
** Complexity: O(n) (CS, Megatron); O(N n deg) (random); O(N (R deg + S))
** (annealing: a move recomputes only the ring pairs, stage replicas and
** stages' slowest replicas it changes, then the largest over the stages;
** under the allreduce alone, O(N (R + S)): a stage's slowest is its
** largest compute plus its ring term).
*/
#include "map/map.h"

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

/* Annealing's state: the mapping, each stage replica's time, each ring
** pair's allreduce term, each stage's allreduce term (the largest of its
** pairs) and its slowest replica, updated where a move changes them (the
** same functions as ppi_map_value, so the same numbers: a step costs
** O(R + deg R + S), not the O(n R) of pricing the mapping again). */
struct anneal {
  const struct ppi_map *q;
  int32_t *cur, *owner;    /* [D] */
  double *t, *ring, *pair; /* [n], [S], [n]: pair r of stage s at r S + s */
  double *smax;            /* [S] its slowest replica */
  uint32_t *seen, stamp;   /* [n] */
  uint32_t *sseen;         /* [S] */
  int32_t *tv;             /* [n] touched stage replicas */
  double *tt;              /* [n] their times before the move */
  int32_t *sv;             /* [S] touched stages */
  double *so;              /* [S] their slowest before the move */
  int32_t pv[4];           /* touched pairs */
  double po[4];            /* their terms before the move */
  double ring_old[2];
  int32_t nt, ns, np;
  bool rings; /* the objective has the allreduce */
};

static void touch_stage(struct anneal *z, int32_t s)
{
  if (z->sseen[s] == z->stamp)
    return;
  z->sseen[s] = z->stamp;
  z->sv[z->ns] = s;
  z->so[z->ns++] = z->smax[s];
}

static void touch(struct anneal *z, int32_t v)
{
  if (z->seen[v] == z->stamp)
    return;
  z->seen[v] = z->stamp;
  z->tv[z->nt] = v;
  z->tt[z->nt++] = z->t[v];
  touch_stage(z, v % z->q->S);
}

/* Pair r of stage s (r S + s: replicas r and r + 1 mod R) again. */
static void repair(struct anneal *z, int32_t v)
{
  const struct ppi_map *q = z->q;
  int32_t S = q->S, s = v % S, r = v / S;
  z->pv[z->np] = v;
  z->po[z->np++] = z->pair[v];
  z->pair[v] = ppi_map_pair(q, s, z->cur[v], z->cur[((r + 1) % q->R) * S + s]);
}

/* The allreduce term of stage s from its pairs (ppi_map_ring's max). */
static double ring_of(const struct anneal *z, int32_t s)
{
  int32_t S = z->q->S, r;
  double ring = 0;
  for (r = 0; r < z->q->R; r++) {
    double x = z->pair[r * S + s];
    ring = x > ring ? x : ring;
  }
  return ring;
}

/* Stage s's slowest replica.  Under the allreduce alone a replica's time
** is its compute plus the stage's ring term, and rounding x + ring is
** monotone in x, so the slowest is the largest compute plus the term:
** the replicas' times need not be kept (ppi_map_time's sum, the same
** number). */
static double slowest(const struct anneal *z, int32_t s)
{
  const struct ppi_map *q = z->q;
  int32_t S = q->S, r;
  double w = 0;
  if (q->obj == MAP_AR) {
    for (r = 0; r < q->R; r++) {
      double c = q->cu[(size_t)s * q->D + z->cur[r * S + s]];
      w = c > w ? c : w;
    }
    return w + z->ring[s];
  }
  for (r = 0; r < q->R; r++)
    w = z->t[r * S + s] > w ? z->t[r * S + s] : w;
  return w;
}

/* Stage replicas a and b (b < 0: none) have moved: recompute what they
** touch; returns the new objective. */
static double moved(struct anneal *z, int32_t a, int32_t b)
{
  const struct ppi_map *q = z->q;
  int32_t S = q->S, R = q->R, i, k, r, x[2] = {a, b};
  double worst = 0;
  if (++z->stamp == 0) { /* wrapped: forget every mark */
    memset(z->seen, 0, (size_t)q->n * sizeof *z->seen);
    memset(z->sseen, 0, (size_t)S * sizeof *z->sseen);
    z->stamp = 1;
  }
  z->nt = z->ns = z->np = 0;
  for (i = 0; i < 2 && x[i] >= 0; i++) {
    int32_t s = x[i] % S, base = x[i] - s, rr = x[i] / S;
    z->ring_old[i] = z->ring[s];
    if (z->rings) { /* the ring: its two pairs, then every replica */
      repair(z, ((rr + R - 1) % R) * S + s);
      repair(z, x[i]);
      z->ring[s] = ring_of(z, s);
      if (q->obj == MAP_AR) { /* the stage alone: slowest() */
        touch_stage(z, s);
        continue;
      }
      for (r = 0; r < R; r++)
        touch(z, r * S + s);
    }
    touch(z, x[i]);
    if (q->obj != MAP_AR)
      for (k = q->adj_off[s]; k < q->adj_off[s + 1]; k++)
        touch(z, base + q->adj_s[k]);
  }
  for (i = 0; i < z->nt; i++)
    z->t[z->tv[i]] = ppi_map_time(q, z->cur, z->tv[i], z->ring[z->tv[i] % S]);
  for (i = 0; i < z->ns; i++)
    z->smax[z->sv[i]] = slowest(z, z->sv[i]);
  for (i = 0; i < S; i++)
    worst = z->smax[i] > worst ? z->smax[i] : worst;
  return worst;
}

static void unmoved(struct anneal *z, int32_t a, int32_t b)
{
  int32_t S = z->q->S, i;
  for (i = z->nt - 1; i >= 0; i--)
    z->t[z->tv[i]] = z->tt[i];
  for (i = z->ns - 1; i >= 0; i--)
    z->smax[z->sv[i]] = z->so[i];
  for (i = z->np - 1; i >= 0; i--) /* in reverse: a pair may be twice */
    z->pair[z->pv[i]] = z->po[i];
  if (b >= 0) /* in reverse: a and b may share a stage */
    z->ring[b % S] = z->ring_old[1];
  z->ring[a % S] = z->ring_old[0];
}

pp_status ppi_map_anneal(pp_ctx *ctx, const struct ppi_map *q, int64_t steps,
                         uint64_t seed, const int32_t *start, int32_t *p)
{
  struct ppi_rng g;
  struct ppi_arena ar;
  struct anneal z;
  int32_t D = q->D, n = q->n, S = q->S, i;
  double vcur, vbest, T0;
  int64_t k;
  memset(&z, 0, sizeof z);
  z.q = q;
  ppi_arena_init(&ar, ppi_ctx_alloc(ctx));
  if (!(z.cur = ppi_arena_alloc(&ar, ctx, (size_t)D, sizeof *z.cur)) ||
      !(z.owner = ppi_arena_alloc(&ar, ctx, (size_t)D, sizeof *z.owner)) ||
      !(z.t = ppi_arena_alloc(&ar, ctx, (size_t)n, sizeof *z.t)) ||
      !(z.ring = ppi_arena_alloc(&ar, ctx, (size_t)S, sizeof *z.ring)) ||
      !(z.pair = ppi_arena_alloc(&ar, ctx, (size_t)n, sizeof *z.pair)) ||
      !(z.smax = ppi_arena_alloc(&ar, ctx, (size_t)S, sizeof *z.smax)) ||
      !(z.sseen = ppi_arena_alloc(&ar, ctx, (size_t)S, sizeof *z.sseen)) ||
      !(z.sv = ppi_arena_alloc(&ar, ctx, (size_t)S, sizeof *z.sv)) ||
      !(z.so = ppi_arena_alloc(&ar, ctx, (size_t)S, sizeof *z.so)) ||
      !(z.seen = ppi_arena_alloc(&ar, ctx, (size_t)n, sizeof *z.seen)) ||
      !(z.tv = ppi_arena_alloc(&ar, ctx, (size_t)n, sizeof *z.tv)) ||
      !(z.tt = ppi_arena_alloc(&ar, ctx, (size_t)n, sizeof *z.tt))) {
    ppi_arena_free(&ar);
    return PP_ENOMEM;
  }
  ppi_rng_seed(&g, seed ^ 0x616e6e65616cull);
  for (i = 0; i < D; i++)
    z.owner[i] = -1;
  for (i = 0; i < n; i++) {
    z.cur[i] = start[i];
    z.owner[start[i]] = i;
  }
  if (p != start)
    memcpy(p, start, (size_t)n * sizeof *p);
  z.rings = q->obj != MAP_P2P && q->R > 1;
  for (i = 0; i < n; i++) {
    int32_t s = i % S, r = i / S;
    z.pair[i] =
        z.rings ? ppi_map_pair(q, s, z.cur[i], z.cur[((r + 1) % q->R) * S + s])
                : 0;
  }
  for (i = 0; i < S; i++)
    z.ring[i] = ppi_map_ring(q, z.cur, i);
  vcur = vbest = ppi_map_value(q, z.cur, z.t);
  for (i = 0; i < S; i++)
    z.smax[i] = slowest(&z, i);
  /* TUNING: the starting temperature, a tenth of the start's value,
  ** cooled linearly to 0: early moves may lose about that much (6e55043;
  ** no sweep recorded) */
  T0 = vcur / 10;
  for (k = 0; k < steps; k++) {
    double T = T0 * (1 - (double)k / steps), vnew;
    int32_t a = (int32_t)ppi_rng_below(&g, (uint64_t)n);
    int32_t dn = (int32_t)ppi_rng_below(&g, (uint64_t)D), da = z.cur[a];
    int32_t b = z.owner[dn];
    if (dn == da)
      continue;
    /* a moves to dn; whoever was there (if anyone) moves to a's device */
    z.cur[a] = dn;
    z.owner[dn] = a;
    z.owner[da] = b;
    if (b >= 0)
      z.cur[b] = da;
    vnew = moved(&z, a, b);
    if (vnew <= vcur || (T > 0 && ppi_rng_unit(&g) < exp(-(vnew - vcur) / T))) {
      vcur = vnew;
      if (vnew < vbest) {
        vbest = vnew;
        memcpy(p, z.cur, (size_t)n * sizeof *p);
      }
    } else { /* undo */
      unmoved(&z, a, b);
      z.cur[a] = da;
      z.owner[da] = a;
      z.owner[dn] = b;
      if (b >= 0)
        z.cur[b] = dn;
    }
  }
  ppi_arena_free(&ar);
  return PP_OK;
}
