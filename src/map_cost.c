/* SPDX-License-Identifier: MIT */
/*
** The objectives of device mapping (paper 001 Eq. 6-7; DESIGN.md) and
** their lower bounds (Eq. 8-9), on plain arrays.
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
** stages bounds every mapping.
**
** Complexity: O(n deg) per value, O(S D (deg + D log D)) for the bounds.
*/
#include "map.h"

#include <math.h>
#include <string.h>

double ppi_map_value(const struct ppi_map *q, const int32_t *p, double *t)
{
  int32_t S = q->S, R = q->R, s, r, k;
  double worst = 0;
  for (s = 0; s < S; s++) {
    double ring = 0;
    if (q->obj != MAP_P2P && R > 1)
      for (r = 0; r < R; r++) {
        double x = ppi_map_pair(q, s, p[r * S + s], p[((r + 1) % R) * S + s]);
        ring = x > ring ? x : ring;
      }
    for (r = 0; r < R; r++) {
      int32_t v = r * S + s, d = p[v];
      double c = q->cu[(size_t)s * q->D + d] + ring;
      if (q->obj != MAP_AR)
        for (k = q->adj_off[s]; k < q->adj_off[s + 1]; k++)
          c += ppi_map_comm(q, d, p[r * S + q->adj_s[k]], q->adj_m[k]);
      if (t)
        t[v] = c;
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

double ppi_map_lower_bound(const struct ppi_map *q)
{
  int32_t s, d, k, i, j;
  double best = 0, m[256];
  for (s = 0; s < q->S; s++) {
    double low = INFINITY;
    int32_t deg = q->adj_off[s + 1] - q->adj_off[s];
    if (deg > 256)
      deg = 256; /* fewer terms: still a bound */
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
      low = x < low ? x : low;
    }
    best = low > best ? low : best;
  }
  return best;
}
