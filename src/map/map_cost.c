/* SPDX-License-Identifier: MIT */
/*
** The objectives of device mapping ([Parmesan] Eq. 6-7; docs/DESIGN.md,
** "Units and the cost model") and their lower bounds (Eq. 8-9), on plain
** arrays.
**
**   p2p:       c(s, p) = c_u(s, p(s)) + sum over the stage-graph edges at s
**              of comm(M, B(p(s), p(s'))) to the same replica's s'
**   allreduce: c(s, p) = c_u(s, p(s)) + max over the ring pairs (i, i+1
**              mod R) of stage s of 2 P(s) / (R B) + 2 lat
**   full:      c_u + p2p + allreduce
** with c_u the stage's compute divided by the device type's speed; the
** objective is the largest c over all stage replicas.
**
** Bounds: for every stage, the least over devices d of its compute on d
** plus, for p2p, its edges' bytes (largest first) over d's bandwidths to
** other devices (largest first: the rearrangement inequality), and for
** the allreduce, the ring through d's best link (R = 2) or second-best
** (R >= 3: a ring uses two links of every member).  The largest over the
** stages bounds every mapping (Eq. 8/9).  Tighter: replicas need distinct
** devices, so the least t at which every stage's R replicas can go to
** distinct devices whose bound is <= t (a bipartite b-matching, bisected
** over the S D per-device bounds) also bounds every mapping; it counts,
** say, that a mesh's rim devices, with fewer links, must be used when the
** mapping uses every device.
**
** Complexity: O(n deg) per value; O(S D (deg + D log D)) for the
** per-device bounds and O(n S D log(S D)) for the matching.
*/
#include "map/map.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double ppi_map_ring(const struct ppi_map *q, const int32_t *p, int32_t s)
{
  int32_t S = q->S, R = q->R, r;
  double ring = 0;
  if (q->obj != MAP_P2P && R > 1)
    for (r = 0; r < R; r++) {
      double x = ppi_map_pair(q, s, p[r * S + s], p[((r + 1) % R) * S + s]);
      ring = x > ring ? x : ring;
    }
  return ring;
}

double ppi_map_time(const struct ppi_map *q, const int32_t *p, int32_t v,
                    double ring)
{
  int32_t S = q->S, s = v % S, r = v / S, d = p[v], k;
  double c = q->cu[(size_t)s * q->D + d] + ring;
  if (q->obj != MAP_AR)
    for (k = q->adj_off[s]; k < q->adj_off[s + 1]; k++)
      c += ppi_map_comm(q, d, p[r * S + q->adj_s[k]], q->adj_m[k]);
  return c;
}

double ppi_map_value(const struct ppi_map *q, const int32_t *p, double *t)
{
  int32_t S = q->S, R = q->R, s, r;
  double worst = 0;
  for (s = 0; s < S; s++) {
    double ring = ppi_map_ring(q, p, s);
    for (r = 0; r < R; r++) {
      double c = ppi_map_time(q, p, r * S + s, ring);
      if (t)
        t[r * S + s] = c;
      worst = c > worst ? c : worst;
    }
  }
  return worst;
}

/* The least p2p a stage with neighbour bytes m[0:k] (largest first) can
** pay from device d. */
static double p2p_bound(const struct ppi_map *q, int32_t d, const double *m,
                        int32_t k)
{
  const double *bw = q->bw_sorted + (size_t)d * (q->D - 1);
  double x = 0;
  int32_t i;
  for (i = 0; i < k && i < q->D - 1; i++)
    x += m[i] > 0 ? q->lat + m[i] / (bw[i] * 1e6) : 0;
  return x;
}

/* lb[s D + d]: the least stage s can cost on device d (Eq. 8/9 terms). */
static void device_bounds(const struct ppi_map *q, double *lb)
{
  int32_t s, d, k, i, j;
  /* TUNING: at most 256 of a stage's neighbours count (a stack buffer;
  ** fewer terms still give a bound, and stage graphs have a handful) */
  double m[256];
  for (s = 0; s < q->S; s++) {
    int32_t deg = q->adj_off[s + 1] - q->adj_off[s];
    if (deg > 256)
      deg = 256;
    for (k = 0; k < deg; k++)
      m[k] = q->adj_m[q->adj_off[s] + k];
    for (i = 1; i < deg; i++) /* largest first */
      for (j = i; j > 0 && m[j] > m[j - 1]; j--) {
        double tmp = m[j];
        m[j] = m[j - 1];
        m[j - 1] = tmp;
      }
    for (d = 0; d < q->D; d++) {
      double x = q->cu[(size_t)s * q->D + d];
      if (q->obj != MAP_AR)
        x += p2p_bound(q, d, m, deg);
      if (q->obj != MAP_P2P && q->R > 1 && q->P[s] > 0 && q->D > 1) {
        const double *bw = q->bw_sorted + (size_t)d * (q->D - 1);
        double b = q->R >= 3 && q->D > 2 ? bw[1] : bw[0];
        x += 2.0 * (q->R - 1) / q->R * q->P[s] / (b * 1e6) +
             2.0 * (q->R - 1) * q->lat;
      }
      lb[(size_t)s * q->D + d] = x;
    }
  }
}

/* Can every stage place its R replicas on distinct devices d with
** lb[s][d] <= t?  A bipartite b-matching by augmenting paths: BFS from s
** over devices to their owners; via[u] is the device through which stage u
** was reached, which u hands over when the path is flipped. */
static bool assignable(const struct ppi_map *q, const double *lb, double t,
                       int32_t *owner, int32_t *prev, int32_t *via,
                       int32_t *queue, uint8_t *seen, uint8_t *sseen)
{
  int32_t S = q->S, D = q->D, s, d, r;
  for (d = 0; d < D; d++)
    owner[d] = -1;
  for (s = 0; s < S; s++)
    for (r = 0; r < q->R; r++) {
      int32_t head = 0, tail = 0, found = -1;
      memset(seen, 0, (size_t)D);
      memset(sseen, 0, (size_t)S);
      queue[tail++] = s;
      sseen[s] = 1;
      while (head < tail && found < 0) {
        int32_t u = queue[head++];
        for (d = 0; d < D && found < 0; d++) {
          if (seen[d] || owner[d] == u || lb[(size_t)u * D + d] > t)
            continue;
          seen[d] = 1;
          prev[d] = u;
          if (owner[d] < 0)
            found = d;
          else if (!sseen[owner[d]] && owner[d] != s) {
            sseen[owner[d]] = 1;
            via[owner[d]] = d;
            queue[tail++] = owner[d];
          }
        }
      }
      if (found < 0)
        return false;
      for (d = found;;) { /* flip the path back to s */
        int32_t u = prev[d], next = u == s ? -1 : via[u];
        owner[d] = u;
        if (next < 0)
          break;
        d = next;
      }
    }
  return true;
}

double ppi_map_matching_bound(const pp_ctx *ctx, const struct ppi_map *q)
{
  struct ppi_alloc a = ppi_ctx_alloc(ctx);
  int32_t S = q->S, D = q->D, s, d;
  size_t SD = (size_t)S * D;
  size_t bytes = 2 * SD * sizeof(double) +
                 (3 * (size_t)D + 2 * (size_t)S) * sizeof(int32_t) + (size_t)D +
                 (size_t)S;
  double best = 0, *lb, *vals;
  char *buf = ppi_raw_alloc(a, bytes);
  int32_t *owner, *prev, *via, *queue;
  uint8_t *seen, *sseen;
  if (!buf)
    return 0; /* a bound nonetheless */
  lb = (double *)buf;
  vals = lb + SD;
  owner = (int32_t *)(vals + SD);
  prev = owner + D;
  via = prev + D;
  queue = via + S;
  seen = (uint8_t *)(queue + S + D);
  sseen = seen + D;
  device_bounds(q, lb);
  for (s = 0; s < S; s++) { /* Eq. 8/9: each stage on its best device */
    double low = INFINITY;
    for (d = 0; d < D; d++)
      low = lb[(size_t)s * D + d] < low ? lb[(size_t)s * D + d] : low;
    best = low > best ? low : best;
  }
  /* stronger: replicas need distinct devices, so the least t at which
  ** every stage's R replicas fit on devices whose bound is <= t (the rim
  ** of a mesh, where fewer links run, is used once every device is) */
  if (q->n > 1) {
    int32_t n = 0, lo = 0, hi;
    size_t k;
    for (k = 0; k < SD; k++)
      if (lb[k] >= best)
        vals[n++] = lb[k];
    qsort(vals, (size_t)n, sizeof *vals, ppi_cmp_double);
    hi = n - 1;
    if (n > 0 &&
        assignable(q, lb, vals[hi], owner, prev, via, queue, seen, sseen)) {
      while (lo < hi) {
        int32_t mid = (lo + hi) / 2;
        if (assignable(q, lb, vals[mid], owner, prev, via, queue, seen, sseen))
          hi = mid;
        else
          lo = mid + 1;
      }
      best = vals[lo] > best ? vals[lo] : best;
    }
  }
  ppi_raw_free(a, buf, bytes);
  return best;
}

double ppi_map_lower_bound(const pp_ctx *ctx, const struct ppi_map *q)
{
  double a = ppi_map_matching_bound(ctx, q);
  double b = ppi_map_group_bounds(ctx, q, MAP_GROUP_BUDGET);
  return a > b ? a : b;
}

/* Whether twin classes a < b (their lowest devices) swap as a whole: the
** permutation exchanging their members in order and fixing every other
** device keeps the objective (the compute of every stage and every
** bandwidth).  Twins have one row to third devices, so the
** representatives' rows decide, with the bandwidth inside each class and
** between the two both ways. */
static bool classes_swap(const struct ppi_map *q, int32_t a, int32_t b)
{
  int32_t D = q->D, S = q->S, k, a2 = -1, b2 = -1;
  if (q->csize[a] != q->csize[b])
    return false;
  for (k = 0; k < S; k++)
    if (q->cu[(size_t)k * D + a] != q->cu[(size_t)k * D + b])
      return false;
  for (k = 0; k < D; k++) {
    if (q->twin[k] == a || q->twin[k] == b) {
      if (q->twin[k] == a && k != a && a2 < 0)
        a2 = k;
      if (q->twin[k] == b && k != b && b2 < 0)
        b2 = k;
      continue;
    }
    if (q->B[(size_t)a * D + k] != q->B[(size_t)b * D + k] ||
        q->B[(size_t)k * D + a] != q->B[(size_t)k * D + b])
      return false;
  }
  if (q->B[(size_t)a * D + b] != q->B[(size_t)b * D + a])
    return false;
  return a2 < 0 || (q->B[(size_t)a * D + a2] == q->B[(size_t)b * D + b2] &&
                    q->B[(size_t)a2 * D + a] == q->B[(size_t)b2 * D + b]);
}

/* The tables derived from a problem: bandwidths sorted per device (the
** bounds read them), twins (devices the objective cannot tell apart) and
** classes of twins that swap as a whole (the nodes of a regular
** cluster). */
pp_status ppi_map_finish(pp_ctx *ctx, struct ppi_arena *ar, struct ppi_map *q)
{
  int32_t D = q->D, S = q->S, d, i, k, *grp;
  if (!PPI_ARENA_NEW(ar, ctx, q->bw_sorted, (size_t)D * (D > 1 ? D - 1 : 1)) ||
      !PPI_ARENA_NEW(ar, ctx, q->twin, D))
    return PP_ENOMEM;
  q->twins = false;
  for (d = 0; d < D; d++) {
    double *row = q->bw_sorted + (size_t)d * (D - 1);
    for (i = 0, k = 0; i < D; i++)
      if (i != d)
        row[k++] = q->B[(size_t)d * D + i];
    if (D > 1)
      qsort(row, (size_t)(D - 1), sizeof *row, ppi_cmp_double_desc);
  }
  /* twins: the same compute time of every stage (the same speed) and the
  ** same bandwidth to every third device - all the objective sees */
  for (d = 0; d < D; d++) {
    q->twin[d] = d;
    for (i = 0; i < d; i++) {
      bool same = q->twin[i] == i;
      int32_t j;
      for (k = 0; k < S && same; k++)
        same = q->cu[(size_t)k * D + d] == q->cu[(size_t)k * D + i];
      /* the third devices from i's neighbours on: in a node of several
      ** devices, the first differs unless d is in it (the answer is that
      ** of any order; this one finds "no" in O(1) on hierarchies) */
      for (j = 1; j < D && same; j++) {
        k = (i + j) % D;
        if (k != d)
          same = q->B[(size_t)d * D + k] == q->B[(size_t)i * D + k];
      }
      if (same) {
        q->twin[d] = i;
        q->twins = true;
        break;
      }
    }
  }
  if (!PPI_ARENA_NEW(ar, ctx, q->csize, D) ||
      !PPI_ARENA_NEW(ar, ctx, q->swap_off, (size_t)D + 1))
    return PP_ENOMEM;
  for (d = 0; d < D; d++)
    q->csize[q->twin[d]]++;
  /* Exchanges of classes compose: when a swaps with b and b with c, the
  ** exchange of a and c is (a b)(b c)(a b), which keeps the objective
  ** too.  So the classes fall into groups, and a class is compared with
  ** each group's first class only: O(C G D) for C classes in G groups,
  ** not O(C^2 D) (128 nodes of 4: 0.1 s a mapping, in the planner's
  ** remap of every kept plan).  Two passes: count, then fill; grp[c]:
  ** the first class of c's group. */
  if (!PPI_ARENA_NEW(ar, ctx, grp, D))
    return PP_ENOMEM;
  for (d = 0; d < D; d++) {
    grp[d] = -1;
    if (!q->twins || q->twin[d] != d)
      continue;
    for (i = 0; i < d && grp[d] < 0; i++)
      if (grp[i] == i && classes_swap(q, i, d))
        grp[d] = i;
    if (grp[d] < 0)
      grp[d] = d;
  }
  for (k = 0; k < 2; k++) {
    int32_t n = 0;
    for (d = 0; d < D; d++) {
      q->swap_off[d] = n;
      if (!q->twins || q->twin[d] != d)
        continue;
      for (i = 0; i < d; i++)
        if (q->twin[i] == i && grp[i] == grp[d]) {
          if (k)
            q->swap[n] = i;
          n++;
        }
    }
    q->swap_off[D] = n;
    if (!k && !PPI_ARENA_NEW(ar, ctx, q->swap, n > 0 ? (size_t)n : 1))
      return PP_ENOMEM;
  }
  return PP_OK;
}
