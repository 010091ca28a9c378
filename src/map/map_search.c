/* SPDX-License-Identifier: MIT */
/*
** The exact device mapping search ([Parmesan] 5.1, Algorithm 1 with the
** inner backtracking of Algorithm 2; docs/ALGORITHMS.md 1.3).
**
** Objective: the least max over stage replicas of c(s, p) (map_cost.c)
** over injective maps of the S x R stage replicas to the D devices
** (D >= S R: the search also chooses which devices stay idle).
**
** Outer level: bisection on a target t between a lower bound (Eq. 8/9
** and the group bound of map_bound.c)
** and the best mapping known (the least of the baselines and, when the
** bound is not met yet, of map_parts.c); each round
** searches `threads' targets spread over the interval in parallel
** threads (no shared mutable state: each owns its search; the context's
** allocator is used before they start and after they end), keeps the
** lowest target found feasible (its mapping's value becomes the upper
** end) and the highest proved infeasible (the lower end).  A round gets a
** tenth of the time limit: a target it cannot settle proves nothing, but
** the next round's targets are spread above it (towards the incumbent,
** where feasible targets are settled fast and improve the mapping),
** while the proved lower end stays where it was.  A last search just
** below the incumbent's value, given all the time left, proves it
** optimal.  A search past the time limit proves nothing: the result then
** carries the best mapping and the best proved lower bound, and
** `optimal' is false.
**
** Inner level: depth-first assignment in a fixed order - replica by
** replica, each in breadth-first order of the stage graph, when
** point-to-point traffic dominates (a stage's neighbours are placed soon
** after it); stage by stage, replicas in ring order, for the allreduce -
** with, at every placement, exact checks that are valid because every
** term is >= 0:
**   - partial sums: a placed replica's compute plus its transfers to
**     placed neighbours, plus the least its unplaced neighbours can cost
**     (their bytes, largest first, over the device's bandwidths, largest
**     first), must not exceed t; the new replica and its placed
**     neighbours are checked;
**   - the allreduce: the largest compute among a stage's placed replicas
**     plus its slowest placed ring pair (or the least the next pair can
**     cost through the new device's best link) must not exceed t;
**   - symmetry: devices that are twins (same speed, same bandwidth to every
**     other device) are interchangeable, so only the lowest free one of a
**     class is tried; without twins, the replicas are interchangeable
**     (point-to-point: any permutation; the allreduce: the ring's
**     rotations and reflections), so the replicas' first devices are kept
**     in order.
** Candidates are tried cheapest first.  Exactness: a check prunes only
** partial mappings none of whose completions reaches t, and symmetry
** removes only mappings that have an image of the same value kept.
**
** The cover rule (p2p, every device used, no twins), on the even threads
** (the odd ones keep the order above: a portfolio of two exact
** searches): replica r holds the lowest device left free by replicas 0 ..
** r-1, so each replica starts by choosing which stage sits there, then
** places its other stages in breadth-first order from that stage.  Valid:
** the replicas are interchangeable under p2p, so sort any mapping's
** replicas by their lowest device; with every device used, the lowest
** device free after the first r replicas belongs to some later replica,
** whose lowest device it then is, and no later replica's lowest device is
** lower, so it is replica r's.  Like covering the first empty cell in
** tiling, this packs replicas without holes (the 4 x 2 tiles of a mesh).
**
** Greedy probes before the bisection (p2p and full, replica by replica):
** at targets rising from the lower bound, each replica's first
** completion is kept and never revisited; a probe that places all of them
** only lowers the upper end.  The search also stops, optimal, when the
** incumbent's value meets the proved lower bound (relative 1e-12, the
** rounding of the same terms summed in another order).
**
** Complexity: exponential in the worst case (the problem is NP-complete,
** Theorem 6.1); O(D (deg + R)) per search node.
*/
#include "map/map.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* TUNING: the search reads the clock once every CLOCK_EVERY nodes (a
** power of two): reading it at every node would cost more than the node,
** and a deadline is then overrun by a few thousand nodes at most. */
#define CLOCK_EVERY 4096
/* TUNING: a device's fast partners, for the greedy probes' value order,
** are the devices within 3/4 of its best bandwidth: NVLink against PCIe,
** a block against the network (6184c5c; no sweep recorded). */
#define FAST_PARTNER 0.75
/* TUNING: the greedy probes take a twentieth of the time limit in all,
** shared by their targets, placed at these fractions of the way from the
** lower bound to the incumbent (close to the bound first, where a
** success improves most); 6184c5c, no sweep recorded. */
#define PROBE_DIV 20
static const double probe_at[] = {0.001, 0.005, 0.02, 0.05, 0.1, 0.2, 0.4};
#define NPROBE ((int)(sizeof probe_at / sizeof probe_at[0]))
/* TUNING: a bisection round gets a tenth of the time limit (the last one
** all that is left): a target it cannot settle moves the next round's
** up, towards the incumbent, where feasible targets settle fast
** (0618c49). */
#define ROUND_DIV 10
/* TUNING: the interval counts as closed when its ends are within this
** relative gap: targets closer than that settle nothing useful. */
#define CLOSED 1e-9
/* TUNING: the allreduce bisection lists its achievable values up to this
** many (16 MiB of doubles); beyond it, it bisects on reals. */
#define MAX_AR_VALUES ((size_t)1 << 21)

struct cand {
  double key;
  int32_t free, d; /* free: d's free fast partners (greedy: fewest first) */
};

struct srch {
  const struct ppi_map *q;
  double t, deadline;
  const int32_t *order;           /* variables in assignment order */
  const int32_t *near_off, *near; /* each device's fast partners */
  int32_t *first_of;       /* [R] the first variable of each copy (symmetry) */
  int32_t *p;              /* [n] device or -1 */
  uint8_t *used;           /* [D] */
  int32_t *cused;          /* [D] devices used per class (lowest device) */
  double *part;            /* [n] compute + transfers to placed neighbours */
  double *maxcu, *maxpair; /* [S] */
  struct cand *cands;      /* [n * D] a level's candidates */
  int32_t *tried;          /* [n * D] twin classes tried, by level stamp */
  int32_t *best;           /* [n] the mapping found */
  int64_t nodes, node_limit; /* node_limit 0: none */
  int result;  /* 1 found, 0 none, -1 timed out, -2 gave up (greedy), -3 its
                  nodes spent */
  bool greedy; /* commit to each replica's first completion */
  /* the cover rule (every device used, p2p, no twins): replica r holds
  ** the lowest device free when it starts; root[r] the stage put there,
  ** the replica's other stages in breadth-first order from it */
  bool cover;
  const int32_t *bfs_from; /* [S * S] */
  int32_t *root;           /* [R] */
};

/* The least the unplaced neighbours of variable v (stage s, replica r)
** on device d can add. */
static double rest_bound(const struct srch *x, int32_t v, int32_t d)
{
  const struct ppi_map *q = x->q;
  int32_t S = q->S, s = v % S, r = v / S, k, i = 0;
  const double *bw = q->bw_sorted + (size_t)d * (q->D - 1);
  double lb = 0;
  /* adjacency is sorted by bytes, largest first */
  for (k = q->adj_off[s]; k < q->adj_off[s + 1] && i < q->D - 1; k++)
    if (x->p[r * S + q->adj_s[k]] < 0) {
      if (q->adj_m[k] > 0)
        lb += q->lat + q->adj_m[k] / (bw[i] * 1e6);
      i++;
    }
  return lb;
}

static int cmp_cand(const void *a, const void *b)
{
  const struct cand *x = a, *y = b;
  if (x->key != y->key)
    return x->key < y->key ? -1 : 1;
  if (x->free != y->free)
    return x->free < y->free ? -1 : 1;
  return (x->d > y->d) - (x->d < y->d);
}

/* The ring lower bound of stage s once v = (s, r) sits on d: the slowest
** placed pair, or the least an unplaced pair next to v can cost. */
static double ring_with(const struct srch *x, int32_t s, int32_t r, int32_t d,
                        double *newpair)
{
  const struct ppi_map *q = x->q;
  int32_t S = q->S, R = q->R, prv = (r + R - 1) % R, nxt = (r + 1) % R;
  double ring = x->maxpair[s], np = x->maxpair[s];
  if (R < 2 || q->P[s] <= 0) {
    *newpair = 0;
    return 0;
  }
  if (x->p[prv * S + s] >= 0) {
    double y = ppi_map_pair(q, s, x->p[prv * S + s], d);
    np = y > np ? y : np;
  }
  if (x->p[nxt * S + s] >= 0) {
    double y = ppi_map_pair(q, s, d, x->p[nxt * S + s]);
    np = y > np ? y : np;
  }
  ring = np;
  if (x->p[prv * S + s] < 0 || x->p[nxt * S + s] < 0) {
    const double *bw = q->bw_sorted + (size_t)d * (q->D - 1);
    double y =
        2.0 * (R - 1) / R * q->P[s] / (bw[0] * 1e6) + 2.0 * (R - 1) * q->lat;
    ring = y > ring ? y : ring;
  }
  *newpair = np;
  return ring;
}

/* May v go to d at target t?  *key gets its cost (for ordering). */
static bool admissible(struct srch *x, int32_t v, int32_t d, double *key)
{
  const struct ppi_map *q = x->q;
  int32_t S = q->S, s = v % S, r = v / S, k, rr;
  double c = q->cu[(size_t)s * q->D + d], ring = 0, np = 0, t = x->t;
  if (q->obj != MAP_P2P)
    ring = ring_with(x, s, r, d, &np);
  if (q->obj != MAP_AR)
    for (k = q->adj_off[s]; k < q->adj_off[s + 1]; k++) {
      int32_t u = r * S + q->adj_s[k];
      if (x->p[u] >= 0)
        c += ppi_map_comm(q, d, x->p[u], q->adj_m[k]);
    }
  *key = c;
  if (q->obj == MAP_AR) {
    double mc = x->maxcu[s] > c ? x->maxcu[s] : c;
    return mc + ring <= t;
  }
  if (c + rest_bound(x, v, d) + ring > t)
    return false;
  /* the placed neighbours, now with this transfer and one fewer unknown */
  for (k = q->adj_off[s]; k < q->adj_off[s + 1]; k++) {
    int32_t u = r * S + q->adj_s[k];
    if (x->p[u] >= 0) {
      double y = x->part[u] + ppi_map_comm(q, d, x->p[u], q->adj_m[k]);
      /* v counts as placed for u's bound: temporarily */
      x->p[v] = d;
      y += rest_bound(x, u, x->p[u]);
      x->p[v] = -1;
      if (q->obj == MAP_FULL)
        y += x->maxpair[q->adj_s[k]];
      if (y > t)
        return false;
    }
  }
  if (q->obj == MAP_FULL && np > x->maxpair[s])
    for (rr = 0; rr < q->R; rr++) { /* a slower ring: every replica of s */
      int32_t u = rr * S + s;
      if (u != v && x->p[u] >= 0 &&
          x->part[u] + rest_bound(x, u, x->p[u]) + np > t)
        return false;
    }
  return true;
}

static void place(struct srch *x, int32_t v, int32_t d, double *save)
{
  const struct ppi_map *q = x->q;
  int32_t S = q->S, s = v % S, r = v / S, k;
  double np = 0, c = q->cu[(size_t)s * q->D + d];
  save[0] = x->maxcu[s];
  save[1] = x->maxpair[s];
  if (q->obj != MAP_P2P)
    ring_with(x, s, r, d, &np);
  if (q->obj != MAP_AR)
    for (k = q->adj_off[s]; k < q->adj_off[s + 1]; k++) {
      int32_t u = r * S + q->adj_s[k];
      if (x->p[u] >= 0) {
        double y = ppi_map_comm(q, d, x->p[u], q->adj_m[k]);
        c += y;
        x->part[u] += y;
      }
    }
  x->part[v] = c;
  x->p[v] = d;
  x->used[d] = 1;
  x->cused[q->twin[d]]++;
  if (q->cu[(size_t)s * q->D + d] > x->maxcu[s])
    x->maxcu[s] = q->cu[(size_t)s * q->D + d];
  if (np > x->maxpair[s])
    x->maxpair[s] = np;
}

static void unplace(struct srch *x, int32_t v, const double *save)
{
  const struct ppi_map *q = x->q;
  int32_t S = q->S, s = v % S, r = v / S, k, d = x->p[v];
  x->p[v] = -1;
  x->used[d] = 0;
  x->cused[q->twin[d]]--;
  if (q->obj != MAP_AR)
    for (k = q->adj_off[s]; k < q->adj_off[s + 1]; k++) {
      int32_t u = r * S + q->adj_s[k];
      if (x->p[u] >= 0)
        x->part[u] -= ppi_map_comm(q, d, x->p[u], q->adj_m[k]);
    }
  x->maxcu[s] = save[0];
  x->maxpair[s] = save[1];
}

/* The least device the symmetry rules allow for v, or -1 for none. */
static int32_t floor_of(const struct srch *x, int32_t v)
{
  const struct ppi_map *q = x->q;
  int32_t R = q->R, r, c;
  if (q->twins || R < 2)
    return -1;
  for (r = 1; r < R; r++)
    if (x->first_of[r] == v) {
      if (q->obj == MAP_P2P) /* copies in order of their first devices */
        return x->p[x->first_of[r - 1]];
      /* rings: copy 0 first, and copy 1 before copy R-1 */
      c = x->p[x->first_of[0]];
      if (r == R - 1 && R >= 3 && x->p[x->first_of[1]] > c)
        c = x->p[x->first_of[1]];
      return c;
    }
  return -1;
}

static int dfs(struct srch *x, int32_t k);

/* The cover rule's first level of replica r (variables k .. k+S-1): each
** stage, cheapest first, on the lowest free device. */
static int cover_root(struct srch *x, int32_t k, int32_t r)
{
  const struct ppi_map *q = x->q;
  int32_t S = q->S, f = 0, s, nc = 0, i;
  struct cand *cd = x->cands + (size_t)k * q->D;
  while (x->used[f])
    f++;
  for (s = 0; s < S; s++) {
    double key;
    if (admissible(x, r * S + s, f, &key)) {
      cd[nc].key = key;
      cd[nc].free = 0;
      cd[nc++].d = s; /* here: the stage */
    }
  }
  qsort(cd, (size_t)nc, sizeof *cd, cmp_cand);
  for (i = 0; i < nc; i++) {
    double save[2];
    int res;
    x->root[r] = cd[i].d;
    place(x, r * S + cd[i].d, f, save);
    res = dfs(x, k + 1);
    unplace(x, r * S + cd[i].d, save);
    if (res)
      return res;
  }
  return 0;
}

static int dfs(struct srch *x, int32_t k)
{
  const struct ppi_map *q = x->q;
  int32_t v, d, nc = 0, i, low, D = q->D;
  struct cand *cd;
  int32_t *tried;
  if (k == q->n) {
    memcpy(x->best, x->p, (size_t)q->n * sizeof *x->p);
    return 1;
  }
  if (x->node_limit > 0 && x->nodes >= x->node_limit)
    return -3;
  if ((++x->nodes & (CLOCK_EVERY - 1)) == 0 &&
      (ppi_now_s() > x->deadline || ppi_stopped(&q->stop)))
    return -1;
  cd = x->cands + (size_t)k * D;
  tried = x->tried + (size_t)k * D;
  if (x->cover) {
    int32_t S = q->S, r = k / S, j = k % S;
    if (j == 0) /* the replica's root: some stage on the lowest free */
      return cover_root(x, k, r);
    v = r * S + x->bfs_from[(size_t)x->root[r] * S + j];
    low = -1;
  } else {
    v = x->order[k];
    low = floor_of(x, v);
  }
  for (d = 0; d < D; d++)
    tried[d] = 0;
  for (d = low + 1; d < D; d++) {
    double key;
    if (x->used[d])
      continue;
    if (q->twins) { /* the lowest free twin of a class only */
      int32_t c = q->twin[d], j;
      if (tried[c])
        continue;
      tried[c] = 1;
      /* and of unused classes that swap as a whole, the lowest only */
      if (x->cused[c] == 0) {
        for (j = q->swap_off[c]; j < q->swap_off[c + 1]; j++)
          if (x->cused[q->swap[j]] == 0)
            break;
        if (j < q->swap_off[c + 1])
          continue;
      }
    }
    if (admissible(x, v, d, &key)) {
      int32_t j, f = 0;
      if (x->greedy)
        for (j = x->near_off[d]; j < x->near_off[d + 1]; j++)
          f += !x->used[x->near[j]];
      cd[nc].key = key;
      cd[nc].free = f;
      cd[nc++].d = d;
    }
  }
  qsort(cd, (size_t)nc, sizeof *cd, cmp_cand);
  for (i = 0; i < nc; i++) {
    double save[2];
    int res;
    place(x, v, cd[i].d, save);
    res = dfs(x, k + 1);
    unplace(x, v, save);
    if (res)
      return res;
    /* greedy: replica v's copy was complete and the later ones failed */
    if (x->greedy && (k + 1) % q->S == 0)
      return -2;
  }
  return 0;
}

/* ---- the outer level ---------------------------------------------------- */

/* A target's search; the context copy is ppi_fanout's (a search does not
** fail). */
struct job {
  pp_ctx ctx;
  struct srch x;
};

/* Search j's target from an empty mapping. */
static void search(struct job *j)
{
  int32_t i;
  for (i = 0; i < j->x.q->n; i++)
    j->x.p[i] = -1;
  memset(j->x.used, 0, (size_t)j->x.q->D);
  memset(j->x.cused, 0, (size_t)j->x.q->D * sizeof *j->x.cused);
  for (i = 0; i < j->x.q->S; i++)
    j->x.maxcu[i] = j->x.maxpair[i] = 0;
  j->x.nodes = 0;
  j->x.result = dfs(&j->x, 0);
}

static pp_status run_job(pp_ctx *ctx, void *arg)
{
  (void)ctx;
  search(arg);
  return PP_OK;
}

/* bfs_from[s S ..]: the stages in breadth-first order from s, then from
** each unseen stage (the cover rule's orders). */
/* The stages in breadth-first order from s0, then from each stage not
** yet reached, in index order after s0 (seen: S bytes of scratch). */
static void bfs_order(const struct ppi_map *q, int32_t s0, int32_t *bfs,
                      uint8_t *seen)
{
  int32_t S = q->S, head = 0, tail = 0, s, k;
  memset(seen, 0, (size_t)S);
  for (s = s0; tail < S; s = (s + 1) % S) {
    if (seen[s])
      continue;
    seen[s] = 1;
    bfs[tail++] = s;
    while (head < tail) {
      int32_t u = bfs[head++];
      for (k = q->adj_off[u]; k < q->adj_off[u + 1]; k++)
        if (!seen[q->adj_s[k]]) {
          seen[q->adj_s[k]] = 1;
          bfs[tail++] = q->adj_s[k];
        }
    }
  }
}

static void make_bfs_from(const struct ppi_map *q, int32_t *bfs_from,
                          uint8_t *seen)
{
  int32_t s0;
  for (s0 = 0; s0 < q->S; s0++)
    bfs_order(q, s0, bfs_from + (size_t)s0 * q->S, seen);
}

/* Whether the assignment order is stage by stage (make_order). */
static bool stage_major_of(const struct ppi_map *q)
{
  double ar = 0, pp = 0;
  int32_t s, k;
  if (q->obj != MAP_FULL)
    return q->obj == MAP_AR;
  for (s = 0; s < q->S; s++)
    ar += q->P[s];
  for (k = 0; k < q->ne; k++)
    pp += 2 * q->em[k];
  return q->R > 1 && ar > pp;
}

/* A share of a node budget, at least one node. */
static int64_t share(int64_t budget, int64_t parts)
{
  return budget / parts > 0 ? budget / parts : 1;
}

/* Greedy probes for a better incumbent (upper end only, so exactness is
** untouched): at targets rising from just above the lower bound, place
** the replicas one after the other, each at its first completion in the
** search's order, never revisiting a finished replica; the first probe
** that places them all gives a mapping of value <= its target.  A
** twentieth of the time limit in all. */
static void probe(const struct ppi_map *q, struct job *j, double lo, double *hi,
                  int32_t *p, struct ppi_map_search *out, double deadline)
{
  double t0 = ppi_now_s(), each = out->time_limit / PROBE_DIV / NPROBE;
  int i;
  if (q->R < 2 || !(lo > 0) || !(*hi > lo))
    return;
  for (i = 0; i < NPROBE; i++) {
    double t = lo + (*hi - lo) * probe_at[i], now = ppi_now_s();
    if (now > deadline || now - t0 > out->time_limit / PROBE_DIV ||
        ppi_stopped(&q->stop))
      break;
    j->x.t = t;
    j->x.greedy = true;
    j->x.deadline = now + each < deadline ? now + each : deadline;
    j->x.node_limit =
        out->max_nodes > 0 ? share(out->max_nodes, PROBE_DIV * NPROBE) : 0;
    search(j);
    j->x.greedy = false;
    j->x.node_limit = 0;
    out->nodes += j->x.nodes;
    if (j->x.result == 1) {
      double v = ppi_map_value(q, j->x.best, NULL);
      if (v < *hi) {
        *hi = v;
        memcpy(p, j->x.best, (size_t)q->n * sizeof *p);
      }
      break;
    }
  }
}

/* The assignment order and each copy's first variable. */
static pp_status make_order(pp_ctx *ctx, const struct ppi_map *q,
                            int32_t *order, int32_t *first_of)
{
  int32_t S = q->S, R = q->R, *bfs, r, k, n = 0;
  uint8_t *seen;
  bool stage_major = stage_major_of(q);
  bfs = ppi_alloc(ctx, (size_t)S * sizeof *bfs);
  seen = ppi_calloc(ctx, (size_t)S, sizeof *seen);
  if (!bfs || !seen) {
    ppi_free(ctx, bfs, (size_t)S * sizeof *bfs);
    ppi_free(ctx, seen, (size_t)S * sizeof *seen);
    return PP_ENOMEM;
  }
  bfs_order(q, 0, bfs, seen);
  if (stage_major) {
    for (k = 0; k < S; k++)
      for (r = 0; r < R; r++)
        order[n++] = r * S + bfs[k];
  } else {
    for (r = 0; r < R; r++)
      for (k = 0; k < S; k++)
        order[n++] = r * S + bfs[k];
  }
  for (r = 0; r < R; r++)
    first_of[r] = r * S + bfs[0];
  ppi_free(ctx, bfs, (size_t)S * sizeof *bfs);
  ppi_free(ctx, seen, (size_t)S * sizeof *seen);
  return PP_OK;
}

/* Each device's fast partners: the devices within 3/4 of its best
** bandwidth (near[near_off[d] : near_off[d+1]]), for the greedy probes'
** value ordering. */
static int32_t *make_near(pp_ctx *ctx, const struct ppi_map *q, int32_t *off,
                          size_t *bytes)
{
  int32_t D = q->D, d, e, n = 0, *near;
  for (d = 0; d < D; d++)
    for (e = 0; e < D; e++)
      n += e != d && D > 1 &&
           q->B[(size_t)d * D + e] >=
               FAST_PARTNER * q->bw_sorted[(size_t)d * (D - 1)];
  *bytes = (size_t)(n ? n : 1) * sizeof *near;
  if (!(near = ppi_alloc(ctx, *bytes)))
    return NULL;
  for (d = 0, n = 0; d < D; d++) {
    off[d] = n;
    for (e = 0; e < D; e++)
      if (e != d && D > 1 &&
          q->B[(size_t)d * D + e] >=
              FAST_PARTNER * q->bw_sorted[(size_t)d * (D - 1)])
        near[n++] = e;
  }
  off[D] = n;
  return near;
}

static pp_status job_alloc(pp_ctx *ctx, struct job *j, const struct ppi_map *q,
                           const int32_t *order, int32_t *first_of,
                           const int32_t *near_off, const int32_t *near)
{
  struct srch *x = &j->x;
  memset(j, 0, sizeof *j);
  x->q = q;
  x->order = order;
  x->first_of = first_of;
  x->near_off = near_off;
  x->near = near;
  x->root = ppi_alloc(ctx, (size_t)q->R * sizeof *x->root);
  if (!x->root)
    return PP_ENOMEM;
  x->p = ppi_alloc(ctx, (size_t)q->n * sizeof *x->p);
  x->used = ppi_alloc(ctx, (size_t)q->D);
  x->cused = ppi_alloc(ctx, (size_t)q->D * sizeof *x->cused);
  x->part = ppi_alloc(ctx, (size_t)q->n * sizeof *x->part);
  x->maxcu = ppi_alloc(ctx, (size_t)q->S * sizeof *x->maxcu);
  x->maxpair = ppi_alloc(ctx, (size_t)q->S * sizeof *x->maxpair);
  x->cands = ppi_alloc(ctx, (size_t)q->n * q->D * sizeof *x->cands);
  x->tried = ppi_alloc(ctx, (size_t)q->n * q->D * sizeof *x->tried);
  x->best = ppi_alloc(ctx, (size_t)q->n * sizeof *x->best);
  if (!x->p || !x->used || !x->cused || !x->part || !x->maxcu || !x->maxpair ||
      !x->cands || !x->tried || !x->best)
    return PP_ENOMEM;
  return PP_OK;
}

static void job_free(pp_ctx *ctx, struct job *j, const struct ppi_map *q)
{
  struct srch *x = &j->x;
  ppi_free(ctx, x->p, (size_t)q->n * sizeof *x->p);
  ppi_free(ctx, x->used, (size_t)q->D);
  ppi_free(ctx, x->cused, (size_t)q->D * sizeof *x->cused);
  ppi_free(ctx, x->part, (size_t)q->n * sizeof *x->part);
  ppi_free(ctx, x->maxcu, (size_t)q->S * sizeof *x->maxcu);
  ppi_free(ctx, x->maxpair, (size_t)q->S * sizeof *x->maxpair);
  ppi_free(ctx, x->cands, (size_t)q->n * q->D * sizeof *x->cands);
  ppi_free(ctx, x->tried, (size_t)q->n * q->D * sizeof *x->tried);
  ppi_free(ctx, x->best, (size_t)q->n * sizeof *x->best);
  ppi_free(ctx, x->root, (size_t)q->R * sizeof *x->root);
}

/* The allreduce objective's achievable values in (lo, hi): a replica's
** value is its compute on its device plus one ring pair's term of its
** stage, so every mapping's value is some cu(s, d) + pair(s, B) with B
** one of the bandwidths; sorted, without repeats.  *vals is NULL (and
** the caller bisects on reals) when there would be more than `cap'. */
static pp_status ar_values(pp_ctx *ctx, const struct ppi_map *q, double lo,
                           double hi, double **vals, int32_t *nv, size_t *bytes)
{
  const size_t cap = MAX_AR_VALUES;
  size_t DD = (size_t)q->D * q->D, nb = 0, ncu, k, n = 0, i, j;
  int32_t s, d;
  double *bw, *cu, *out;
  *vals = NULL;
  *nv = 0;
  *bytes = 0;
  if (!(bw = ppi_alloc(ctx, DD * sizeof *bw)))
    return PP_ENOMEM;
  if (!(cu = ppi_alloc(ctx, (size_t)q->D * sizeof *cu))) {
    ppi_free(ctx, bw, DD * sizeof *bw);
    return PP_ENOMEM;
  }
  for (k = 0; k < DD; k++)
    if (k / q->D != k % q->D)
      bw[nb++] = q->B[k];
  qsort(bw, nb, sizeof *bw, ppi_cmp_double);
  for (i = j = 0; i < nb; i++)
    if (!j || bw[i] != bw[j - 1])
      bw[j++] = bw[i];
  nb = j;
  /* count first, so the list is allocated once */
  for (s = 0; s < q->S; s++) {
    for (d = 0; d < q->D; d++)
      cu[d] = q->cu[(size_t)s * q->D + d];
    qsort(cu, (size_t)q->D, sizeof *cu, ppi_cmp_double);
    for (i = ncu = 0; i < (size_t)q->D; i++)
      if (!ncu || cu[i] != cu[ncu - 1])
        cu[ncu++] = cu[i];
    n += ncu * (q->R > 1 && q->P[s] > 0 ? nb : 1);
  }
  if (n > cap || !(out = ppi_alloc(ctx, n * sizeof *out))) {
    ppi_free(ctx, cu, (size_t)q->D * sizeof *cu);
    ppi_free(ctx, bw, DD * sizeof *bw);
    return n > cap ? PP_OK : PP_ENOMEM;
  }
  *bytes = n * sizeof *out;
  for (s = 0, n = 0; s < q->S; s++) {
    bool ring = q->R > 1 && q->P[s] > 0;
    for (d = 0; d < q->D; d++)
      cu[d] = q->cu[(size_t)s * q->D + d];
    qsort(cu, (size_t)q->D, sizeof *cu, ppi_cmp_double);
    for (i = ncu = 0; i < (size_t)q->D; i++)
      if (!ncu || cu[i] != cu[ncu - 1])
        cu[ncu++] = cu[i];
    for (i = 0; i < ncu; i++)
      for (j = 0; j < (ring ? nb : 1); j++) {
        /* the same expression as ppi_map_pair, so the same double */
        double v =
            cu[i] + (ring ? 2.0 * (q->R - 1) / q->R * q->P[s] / (bw[j] * 1e6) +
                                2.0 * (q->R - 1) * q->lat
                          : 0);
        if (v > lo && v < hi)
          out[n++] = v;
      }
  }
  qsort(out, n, sizeof *out, ppi_cmp_double);
  for (i = j = 0; i < n; i++)
    if (!j || out[i] != out[j - 1])
      out[j++] = out[i];
  *vals = out;
  *nv = (int32_t)j;
  ppi_free(ctx, cu, (size_t)q->D * sizeof *cu);
  ppi_free(ctx, bw, DD * sizeof *bw);
  return PP_OK;
}

/* The first index of the sorted vals[0:n] above x (or, with eq, at or
** above x). */
static int32_t first_over(const double *vals, int32_t n, double x, bool eq)
{
  int32_t lo = 0, hi = n;
  while (lo < hi) {
    int32_t mid = lo + (hi - lo) / 2;
    if (vals[mid] < x || (!eq && vals[mid] == x))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}
#define above(v, n, x) first_over(v, n, x, false)
#define below(v, n, x) first_over(v, n, x, true)

pp_status ppi_map_exact(pp_ctx *ctx, const struct ppi_map *q,
                        const int32_t *start, int32_t *p,
                        struct ppi_map_search *out)
{
  int32_t T = out->threads < 1                     ? 1
              : out->threads > PPI_MAX_MAP_THREADS ? PPI_MAX_MAP_THREADS
                                                   : out->threads;
  int32_t *order = NULL, *first_of = NULL, i, *near_off = NULL, *near = NULL;
  int32_t *bfs_from = NULL;
  size_t nbytes = 0, SS = (size_t)q->S * q->S;
  struct job *jobs = NULL;
  double lo, hi, t0 = ppi_now_s(), deadline = t0 + out->time_limit, wlo;
  double *vals = NULL; /* the allreduce's achievable values (ar_values) */
  int32_t nv = 0;
  size_t vbytes = 0;
  bool done = false, proved = false, clock_cut = false;
  pp_status rc = PP_OK;

  out->nodes = 0;
  out->timed_out = false;
  if (p != start)
    memcpy(p, start, (size_t)q->n * sizeof *p);
  hi = ppi_map_value(q, p, NULL);
  lo = wlo = ppi_map_lower_bound(ctx, q);
  if (out->parts_s > 0 && !ppi_map_meets(hi, lo)) { /* map_parts.c */
    int32_t *alt = ppi_alloc(ctx, (size_t)q->n * sizeof *alt);
    bool found = false;
    double budget =
        out->parts_s < out->time_limit ? out->parts_s : out->time_limit;
    if (!alt || (rc = ppi_map_parts(ctx, q, budget, lo, T, ppi_map_exact, alt,
                                    &found))) {
      ppi_free(ctx, alt, (size_t)q->n * sizeof *alt);
      rc = alt ? rc : PP_ENOMEM;
      goto out;
    }
    if (found && ppi_map_value(q, alt, NULL) < hi) {
      memcpy(p, alt, (size_t)q->n * sizeof *p);
      hi = ppi_map_value(q, alt, NULL);
    }
    ppi_free(ctx, alt, (size_t)q->n * sizeof *alt);
  }
  order = ppi_alloc(ctx, (size_t)q->n * sizeof *order);
  first_of = ppi_alloc(ctx, (size_t)q->R * sizeof *first_of);
  jobs = ppi_calloc(ctx, (size_t)T, sizeof *jobs);
  if (!order || !first_of || !jobs) {
    rc = PP_ENOMEM;
    goto out;
  }
  if ((rc = make_order(ctx, q, order, first_of)))
    goto out;
  if (!(near_off = ppi_alloc(ctx, (size_t)(q->D + 1) * sizeof *near_off)) ||
      !(near = make_near(ctx, q, near_off, &nbytes))) {
    rc = PP_ENOMEM;
    goto out;
  }
  for (i = 0; i < T; i++)
    if ((rc = job_alloc(ctx, &jobs[i], q, order, first_of, near_off, near)))
      goto out;
  /* the cover rule: see the header */
  if (q->obj == MAP_P2P && q->D == q->n && !q->twins && q->R >= 2) {
    uint8_t *seen = ppi_alloc(ctx, (size_t)q->S);
    if (!seen || !(bfs_from = ppi_alloc(ctx, SS * sizeof *bfs_from))) {
      ppi_free(ctx, seen, (size_t)q->S);
      rc = PP_ENOMEM;
      goto out;
    }
    make_bfs_from(q, bfs_from, seen);
    ppi_free(ctx, seen, (size_t)q->S);
    for (i = 0; i < T; i++) { /* a portfolio: the other order on odd */
      jobs[i].x.cover = i % 2 == 0;
      jobs[i].x.bfs_from = bfs_from;
    }
  }
  if (q->obj == MAP_AR &&
      (rc = ar_values(ctx, q, lo * (1 - CLOSED), hi, &vals, &nv, &vbytes)))
    goto out;
  if (!vals && !stage_major_of(q))
    probe(q, &jobs[0], lo, &hi, p, out, deadline);
  while (!done) {
    int32_t k = T, ia = 0, ib = 0, from_i = 0;
    double target[PPI_MAX_MAP_THREADS], from = lo > wlo ? lo : wlo, slice;
    double t_now = ppi_now_s();
    bool proof, unknown = false;
    if (vals) { /* the achievable values still open: vals[ia:ib] */
      ia = proved ? above(vals, nv, lo) : 0;
      ib = below(vals, nv, hi);
      from_i = wlo > lo ? above(vals, nv, wlo) : ia;
      if (from_i < ia)
        from_i = ia;
      if (ia >= ib) { /* nothing achievable below the incumbent */
        lo = hi;
        done = true;
        break;
      }
      proof = from_i >= ib;
    } else {
      /* the incumbent meets the proved bound (up to the rounding of
      ** summing the same terms in another order): optimal */
      if (ppi_map_meets(hi, lo)) {
        lo = hi;
        done = true;
        break;
      }
      proof = hi <= lo * (1 + CLOSED) || hi - lo < 1e-12 ||
              from >= hi * (1 - CLOSED);
    }
    if (t_now > deadline || ppi_stopped(&q->stop)) {
      clock_cut = true;
      break;
    }
    if (out->max_nodes > 0 && out->nodes >= out->max_nodes)
      break; /* the budget is spent */
    slice = out->time_limit / ROUND_DIV;
    if (slice < deadline - t_now && deadline - t_now < 2 * slice)
      slice = deadline - t_now;
    if (proof) { /* prove the incumbent: nothing below it */
      k = 1;
      target[0] = vals ? vals[ib - 1] : hi * (1 - PPI_REL_ROUNDING);
      slice = deadline - t_now;
    } else if (vals) { /* the k-quantiles of the open values */
      int32_t m = ib - from_i;
      k = m < T ? m : T;
      for (i = 0; i < k; i++)
        target[i] = vals[from_i + (int32_t)((int64_t)m * (i + 1) / (k + 1))];
    } else {
      for (i = 0; i < k; i++)
        target[i] = from + (hi - from) * (i + 1) / (k + 1);
    }
    for (i = 0; i < k; i++) {
      jobs[i].x.t = target[i];
      jobs[i].x.deadline = t_now + slice < deadline ? t_now + slice : deadline;
      /* nodes as the clock's slices: a round's targets share a tenth of
      ** the budget, the proof all that is left */
      jobs[i].x.node_limit =
          out->max_nodes <= 0 ? 0
          : proof             ? out->max_nodes - out->nodes
                              : share(out->max_nodes, (int64_t)ROUND_DIV * k);
    }
    if ((rc = ppi_fanout(ctx, "map", run_job, jobs, sizeof *jobs,
                         offsetof(struct job, ctx), k)))
      goto out;
    for (i = 0; i < k; i++) {
      out->nodes += jobs[i].x.nodes;
      if (jobs[i].x.result == 1) {
        double v = ppi_map_value(q, jobs[i].x.best, NULL);
        if (v < hi) {
          hi = v;
          memcpy(p, jobs[i].x.best, (size_t)q->n * sizeof *p);
        }
      } else if (jobs[i].x.result == 0) {
        if (target[i] > lo)
          lo = target[i];
        proved = true; /* no mapping at or below lo */
      } else {
        unknown = true;
        clock_cut = clock_cut || jobs[i].x.result == -1;
        if (target[i] > wlo)
          wlo = target[i];
      }
    }
    if (proof && jobs[0].x.result == 0) {
      lo = hi;
      done = true;
    } else if (proof && jobs[0].x.result != 1) {
      break; /* the proof did not finish in time */
    }
    if (!unknown)
      wlo = lo;
  }
  out->timed_out = !done && (clock_cut || out->max_nodes <= 0);
out:
  out->value = hi;
  out->lower = lo < hi ? lo : hi;
  out->optimal = done;
  out->seconds = ppi_now_s() - t0;
  if (jobs)
    for (i = 0; i < T; i++)
      job_free(ctx, &jobs[i], q);
  ppi_free(ctx, jobs, (size_t)T * sizeof *jobs);
  ppi_free(ctx, order, (size_t)q->n * sizeof *order);
  ppi_free(ctx, first_of, (size_t)q->R * sizeof *first_of);
  ppi_free(ctx, near_off, (size_t)(q->D + 1) * sizeof *near_off);
  ppi_free(ctx, near, nbytes);
  ppi_free(ctx, bfs_from, SS * sizeof *bfs_from);
  ppi_free(ctx, vals, vbytes);
  return rc;
}
