/* SPDX-License-Identifier: MIT */
/*
** The group bound of device mapping ([Parmesan] 5.1, a tightening of Eq.
** 8/9; docs/ALGORITHMS.md 1.3): a lower bound that knows a replica's
** stages cannot all sit where the links are fast.
**
** Objective bounded: the least max over stage replicas of c(s, p)
** (map_cost.c) under the p2p and full objectives.
**
** A partition of the devices into groups (the blocks of a clustered
** machine; the two colours of a mesh or an even torus, whose fast links
** all join the two colours) defines, for every device d, its bandwidths
** to the other devices of its group, in[d], and to the devices of the
** other groups, out[d], each highest first.  For stage s with neighbour
** bytes m_1 >= m_2 >= ... and a set X of neighbours marked "same group",
**   T(s, X) = min over d of  c_u(s, d) + ring(s, d)
**             + sum over the neighbours in X, in order, of comm(m, in[d]_i)
**             + sum over the others, in order, of comm(m, out[d]_j)
** (+infinity on d when X has more neighbours than in[d] has entries, or
** the others more than out[d]), with ring(s, d) the allreduce bound of
** map_cost.c under the full objective, 0 under p2p.  A labelling gives
** every stage a label (abstract group: labels 0, 1, ... in order of first
** use, at most G labels, at most the largest group's size stages per
** label); its value is the max over the stages s of T(s, X(s)) with X(s)
** the neighbours of the same label.
**
** Claim: the least value over labellings (the relaxed optimum) is <= the
** optimum of the mapping problem.  Proof: take an optimal mapping p and
** its replica 0.  Label each stage by the group of its device, labels
** renamed in order of first use: at most G labels, and a label holds no
** more stages than its group has devices (p is injective).  For stage s on
** device d = p(s), its neighbours of the same label are on distinct
** devices of d's group other than d, so their bandwidths are distinct
** entries of in[d]; by the rearrangement inequality (bytes largest first
** against bandwidths largest first, every term lat + m / B decreasing in
** B) their transfers cost at least the in-sum of T; likewise the others
** against out[d]; the allreduce term is at least ring(s, d) (map_cost.c);
** all terms are >= 0.  So c(s, p) >= T(s, X(s)) for every s, the
** labelling's value is <= the value of replica 0 <= the value of p.
** Any partition gives a valid bound; the groups only decide how tight.
**
** The relaxed optimum is one of the finitely many T values, found by
** bisection over them; each step is a depth-first labelling in
** breadth-first stage order (labels in first-use order, so no labelling
** is tried twice up to renaming), pruned by the least T(s, .) consistent
** with the neighbours labelled so far (kept per stage as a base-3 code:
** unknown, same, other; tables of 3^deg entries).  A step that runs out
** of its node budget proves nothing: the bound returned is the lowest T
** value not proved infeasible, so it stays valid, only weaker.
**
** Groups are found from the bandwidth matrix alone: (a) single linkage,
** bandwidths highest first, at every level where the components are
** equal in size (at least 2, at least 2 of them) and the next bandwidth
** is at most 2/3 of the last one joined; (b) the two colours of the graph
** of the fastest links, when it is bipartite.
**
** Complexity: O(D^2 log D) to find the groups; per partition O(S 2^deg D
** deg + S 3^deg) for the tables (deg <= 8; a stage with more neighbours
** keeps its Eq. 8 bound) and at most `budget' labelling nodes per step,
** O(log(S 2^deg)) steps.
*/
#include "map/map.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* TUNING: a stage with more than MAXDEG neighbours gets Eq. 8's constant
** term instead of tables of 3^deg entries (6561 at 8: the tables stay
** small per stage); NPART partitions are tried, the largest bound kept
** (blocks at up to three levels, and a mesh's colours).  387d41b. */
enum { MAXDEG = 8, NPART = 4 };

/* A few buffers from the context's allocator, freed together. */
struct bufs {
  struct ppi_alloc a;
  void *p[16];
  size_t n[16];
  int k;
  bool fail;
};

static void *take(struct bufs *b, size_t n)
{
  void *p;
  if (b->fail || b->k == 16 || !(p = ppi_raw_alloc(b->a, n ? n : 1))) {
    b->fail = true;
    return NULL;
  }
  memset(p, 0, n ? n : 1);
  b->p[b->k] = p;
  b->n[b->k++] = n ? n : 1;
  return p;
}

static void drop(struct bufs *b)
{
  while (b->k > 0) {
    b->k--;
    ppi_raw_free(b->a, b->p[b->k], b->n[b->k]);
  }
}

struct lab {
  const struct ppi_map *q;
  int32_t G, cap, S;
  const int32_t *ord; /* stages in breadth-first order */
  const int32_t *rev; /* [2 ne]: position of s in adj of adj_s[k] */
  const double *M;    /* [S * 3^MAXDEG]: least T given a code */
  const int32_t *pw3; /* [MAXDEG + 1] */
  int32_t *label;     /* [S] or -1 */
  int32_t *code;      /* [S] */
  int32_t *count;     /* [G] stages per label */
  double t;
  int64_t nodes, budget;
};

static const size_t NCODE = 6561; /* 3^MAXDEG */

static double mval(const struct lab *x, int32_t s)
{
  return x->M[(size_t)s * NCODE + x->code[s]];
}

/* Set u's label to l (or clear it, l = -1) and update the codes of u and
** its labelled neighbours. */
static void set_label(struct lab *x, int32_t u, int32_t l)
{
  const struct ppi_map *q = x->q;
  int32_t k, a = q->adj_off[u];
  int32_t deg = q->adj_off[u + 1] - a;
  if (deg > MAXDEG)
    deg = 0; /* such a stage keeps code 0 and its constant */
  x->label[u] = l;
  x->code[u] = 0;
  for (k = q->adj_off[u]; k < q->adj_off[u + 1]; k++) {
    int32_t w = q->adj_s[k], j = x->rev[k];
    int32_t dw = q->adj_off[w + 1] - q->adj_off[w];
    if (x->label[w] < 0)
      continue;
    if (l >= 0 && deg > 0)
      x->code[u] += x->pw3[k - a] * (x->label[w] == l ? 1 : 2);
    if (dw <= MAXDEG) { /* w's digit for u */
      int32_t digit = (x->code[w] / x->pw3[j]) % 3;
      x->code[w] -= digit * x->pw3[j];
      if (l >= 0)
        x->code[w] += x->pw3[j] * (x->label[w] == l ? 1 : 2);
    }
  }
}

/* 1: a labelling of value <= t exists; 0: none; -1: out of budget. */
static int label_dfs(struct lab *x, int32_t k, int32_t used)
{
  const struct ppi_map *q = x->q;
  int32_t u, l, j, top;
  if (k == x->S)
    return 1;
  if (++x->nodes > x->budget)
    return -1;
  u = x->ord[k];
  top = used < x->G ? used + 1 : x->G;
  for (l = 0; l < top; l++) {
    bool ok;
    int res;
    if (x->count[l] >= x->cap)
      continue;
    set_label(x, u, l);
    ok = mval(x, u) <= x->t;
    for (j = q->adj_off[u]; ok && j < q->adj_off[u + 1]; j++)
      if (x->label[q->adj_s[j]] >= 0)
        ok = mval(x, q->adj_s[j]) <= x->t;
    if (ok) {
      x->count[l]++;
      res = label_dfs(x, k + 1, l == used ? used + 1 : used);
      x->count[l]--;
    } else {
      res = 0;
    }
    set_label(x, u, -1);
    if (res)
      return res;
  }
  return 0;
}

/* The allreduce bound of stage s on device d (as map_cost.c). */
static double ring_lb(const struct ppi_map *q, int32_t s, int32_t d)
{
  const double *bw = q->bw_sorted + (size_t)d * (q->D - 1);
  double b;
  if (q->obj != MAP_FULL || q->R < 2 || q->P[s] <= 0 || q->D < 2)
    return 0;
  b = q->R >= 3 && q->D > 2 ? bw[1] : bw[0];
  return 2.0 * (q->R - 1) / q->R * q->P[s] / (b * 1e6) +
         2.0 * (q->R - 1) * q->lat;
}

double ppi_map_group_bound(const pp_ctx *ctx, const struct ppi_map *q,
                           const int32_t *grp, int64_t budget)
{
  struct bufs b = {.a = ppi_ctx_alloc(ctx)};
  int32_t S = q->S, D = q->D, G = 0, cap = 0, K = 0, s, d, k, i;
  int32_t *gsize, *ord, *rev, *seen, pw3[MAXDEG + 1];
  double *in, *out, *M, *T, *vals, *row, best = 0;
  size_t nv = 0;
  struct lab x;

  if (q->obj == MAP_AR || D < 2 || S < 2)
    return 0;
  for (d = 0; d < D; d++)
    G = grp[d] + 1 > G ? grp[d] + 1 : G;
  for (s = 0; s < S; s++) {
    int32_t deg = q->adj_off[s + 1] - q->adj_off[s];
    if (deg <= MAXDEG && deg > K)
      K = deg;
  }
  pw3[0] = 1;
  for (i = 1; i <= MAXDEG; i++)
    pw3[i] = 3 * pw3[i - 1];
  gsize = take(&b, (size_t)G * sizeof *gsize);
  in = take(&b, (size_t)D * (K + 1) * sizeof *in);
  out = take(&b, (size_t)D * (K + 1) * sizeof *out);
  row = take(&b, (size_t)D * sizeof *row);
  M = take(&b, (size_t)S * NCODE * sizeof *M);
  T = take(&b, ((size_t)1 << MAXDEG) * sizeof *T);
  vals = take(&b, (size_t)S * (((size_t)1 << MAXDEG) + 1) * sizeof *vals);
  ord = take(&b, (size_t)S * sizeof *ord);
  seen = take(&b, (size_t)S * sizeof *seen);
  rev = take(&b, (size_t)(q->adj_off[S] + 1) * sizeof *rev);
  memset(&x, 0, sizeof x);
  x.label = take(&b, (size_t)S * sizeof *x.label);
  x.code = take(&b, (size_t)S * sizeof *x.code);
  x.count = take(&b, (size_t)(G + 1) * sizeof *x.count);
  if (b.fail)
    goto done;
  for (d = 0; d < D; d++)
    gsize[grp[d]]++;
  for (i = 0; i < G; i++)
    cap = gsize[i] > cap ? gsize[i] : cap;
  /* in[d], out[d]: the K best bandwidths inside and outside d's group
  ** (0 where there are fewer) */
  for (d = 0; d < D; d++) {
    int32_t n = 0, side;
    for (side = 0; side < 2; side++) {
      double *dst = (side ? out : in) + (size_t)d * (K + 1);
      n = 0;
      for (i = 0; i < D; i++)
        if (i != d && (grp[i] == grp[d]) == !side)
          row[n++] = q->B[(size_t)d * D + i];
      qsort(row, (size_t)n, sizeof *row, ppi_cmp_double_desc);
      for (i = 0; i <= K; i++)
        dst[i] = i < n ? row[i] : 0;
    }
  }
  /* M[s][code]: the least T(s, X) over the X consistent with the code */
  for (s = 0; s < S; s++) {
    int32_t a = q->adj_off[s], deg = q->adj_off[s + 1] - a, mask, c, nm;
    double *Ms = M + (size_t)s * NCODE;
    if (deg > MAXDEG) { /* Eq. 8 with every bandwidth: a constant */
      double low = INFINITY;
      for (d = 0; d < D; d++) {
        const double *bw = q->bw_sorted + (size_t)d * (D - 1);
        double y = q->cu[(size_t)s * D + d] + ring_lb(q, s, d);
        for (k = 0; k < deg && k < D - 1; k++)
          y += q->adj_m[a + k] > 0 ? q->lat + q->adj_m[a + k] / (bw[k] * 1e6)
                                   : 0;
        low = y < low ? y : low;
      }
      Ms[0] = low;
      vals[nv++] = low;
      continue;
    }
    nm = 1 << deg; /* deg <= MAXDEG here: no shift past the int */
    for (mask = 0; mask < nm; mask++) {
      double low = INFINITY;
      for (d = 0; d < D; d++) {
        const double *bi = in + (size_t)d * (K + 1);
        const double *bo = out + (size_t)d * (K + 1);
        double y = q->cu[(size_t)s * D + d] + ring_lb(q, s, d);
        int32_t ni = 0, no = 0;
        for (k = 0; k < deg && y < low; k++) {
          double bw = (mask >> k) & 1 ? bi[ni++] : bo[no++];
          if (bw <= 0) { /* more neighbours than devices on that side */
            y = INFINITY;
            break;
          }
          y += q->adj_m[a + k] > 0 ? q->lat + q->adj_m[a + k] / (bw * 1e6) : 0;
        }
        low = y < low ? y : low;
      }
      T[mask] = low;
      if (isfinite(low))
        vals[nv++] = low;
    }
    /* codes from high to low: a code's first unknown digit splits it
    ** into two codes above it */
    for (c = pw3[deg] - 1; c >= 0; c--) {
      int32_t j, m = 0;
      for (j = 0; j < deg && (c / pw3[j]) % 3 != 0; j++)
        if ((c / pw3[j]) % 3 == 1)
          m |= 1 << j;
      if (j == deg)
        Ms[c] = T[m];
      else
        Ms[c] = fmin(Ms[c + pw3[j]], Ms[c + 2 * pw3[j]]);
    }
  }
  /* rev: the position of s in the adjacency of each neighbour */
  for (s = 0; s < S; s++)
    for (k = q->adj_off[s]; k < q->adj_off[s + 1]; k++) {
      int32_t w = q->adj_s[k], j;
      rev[k] = 0;
      for (j = q->adj_off[w]; j < q->adj_off[w + 1]; j++)
        if (q->adj_s[j] == s) {
          rev[k] = j - q->adj_off[w];
          break;
        }
    }
  /* breadth-first order from each unseen stage */
  {
    int32_t head = 0, tail = 0;
    for (s = 0; s < S; s++) {
      if (seen[s])
        continue;
      seen[s] = 1;
      ord[tail++] = s;
      while (head < tail) {
        int32_t u = ord[head++];
        for (k = q->adj_off[u]; k < q->adj_off[u + 1]; k++)
          if (!seen[q->adj_s[k]]) {
            seen[q->adj_s[k]] = 1;
            ord[tail++] = q->adj_s[k];
          }
      }
    }
  }
  qsort(vals, nv, sizeof *vals, ppi_cmp_double);
  {
    size_t j = 0, lo, hi;
    double floor0 = 0;
    for (s = 0; s < S; s++)
      floor0 = M[(size_t)s * NCODE] > floor0 ? M[(size_t)s * NCODE] : floor0;
    for (i = 0; i < (int32_t)nv; i++) /* unique, and >= every stage's least */
      if (vals[i] >= floor0 && (!j || vals[i] != vals[j - 1]))
        vals[j++] = vals[i];
    nv = j;
    if (nv == 0) /* cannot happen when a mapping exists */
      goto done;
    x.q = q;
    x.G = G;
    x.cap = cap;
    x.S = S;
    x.ord = ord;
    x.rev = rev;
    x.M = M;
    x.pw3 = pw3;
    x.budget = budget;
    lo = 0;
    hi = nv - 1;
    /* every j < lo proved infeasible; the relaxed optimum is in vals */
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      int res;
      for (s = 0; s < S; s++) {
        x.label[s] = -1;
        x.code[s] = 0;
      }
      memset(x.count, 0, (size_t)(G + 1) * sizeof *x.count);
      x.t = vals[mid];
      x.nodes = 0;
      res = label_dfs(&x, 0, 0);
      if (res == 0)
        lo = mid + 1;
      else
        hi = mid;
    }
    best = vals[lo];
  }
done:
  drop(&b);
  return best;
}

/* ---- finding groups ------------------------------------------------------ */

struct pair {
  double bw;
  int32_t a, b;
};

static int cmp_pair(const void *x, const void *y)
{
  const struct pair *a = x, *b = y;
  if (a->bw != b->bw)
    return a->bw > b->bw ? -1 : 1;
  if (a->a != b->a)
    return a->a < b->a ? -1 : 1;
  return (a->b > b->b) - (a->b < b->b);
}

static int32_t find(int32_t *par, int32_t v)
{
  while (par[v] != v) {
    par[v] = par[par[v]];
    v = par[v];
  }
  return v;
}

int32_t ppi_map_groups(const pp_ctx *ctx, const struct ppi_map *q, int32_t *grp,
                       int32_t max_parts)
{
  struct bufs b = {.a = ppi_ctx_alloc(ctx)};
  int32_t D = q->D, np = 0, i, j, ncomp = D, maxsz = 1;
  size_t npair = (size_t)D * (D - 1) / 2, k, m = 0;
  struct pair *pr;
  int32_t *par, *sz, *queue;
  if (D < 4 || max_parts < 1)
    return 0;
  pr = take(&b, npair * sizeof *pr);
  par = take(&b, (size_t)D * sizeof *par);
  sz = take(&b, (size_t)D * sizeof *sz);
  queue = take(&b, (size_t)D * sizeof *queue);
  if (b.fail)
    goto done;
  for (i = 0; i < D; i++)
    for (j = i + 1; j < D; j++) {
      pr[m].bw = q->B[(size_t)i * D + j];
      pr[m].a = i;
      pr[m++].b = j;
    }
  qsort(pr, npair, sizeof *pr, cmp_pair);
  /* (b) the colours of the fastest links' graph, when it is bipartite */
  {
    int32_t *col = grp + (size_t)np * D, head = 0, tail = 0, s;
    bool bip = true, any = false;
    double top = pr[0].bw;
    for (i = 0; i < D; i++)
      col[i] = -1;
    for (s = 0; s < D && bip; s++) {
      if (col[s] >= 0)
        continue;
      col[s] = 0;
      queue[tail++] = s;
      while (head < tail && bip) {
        int32_t u = queue[head++];
        for (j = 0; j < D; j++)
          if (j != u && q->B[(size_t)u * D + j] >= top) {
            any = true;
            if (col[j] < 0) {
              col[j] = 1 - col[u];
              queue[tail++] = j;
            } else if (col[j] == col[u]) {
              bip = false;
            }
          }
      }
    }
    /* every device on a fastest link, else the colours say little */
    for (i = 0; i < D && bip && any; i++) {
      for (j = 0; j < D && (j == i || q->B[(size_t)i * D + j] < top); j++)
        ;
      any = j < D;
    }
    if (bip && any)
      np++;
  }
  /* (a) single linkage: equal components at a marked drop in bandwidth */
  for (i = 0; i < D; i++) {
    par[i] = i;
    sz[i] = 1;
  }
  for (k = 0; k < npair && np < max_parts && ncomp > 1; k++) {
    int32_t x = find(par, pr[k].a), y = find(par, pr[k].b);
    if (x != y) {
      if (sz[x] < sz[y]) {
        int32_t t = x;
        x = y;
        y = t;
      }
      par[y] = x;
      sz[x] += sz[y];
      maxsz = sz[x] > maxsz ? sz[x] : maxsz;
      ncomp--;
    }
    /* TUNING: a level is a partition when the next bandwidth is at most
    ** 2/3 of the last one joined: a clear step between the blocks of a
    ** clustered machine (NVLink, PCIe, network differ by more) */
    if (k + 1 < npair && pr[k + 1].bw <= pr[k].bw * (2.0 / 3) && ncomp >= 2 &&
        maxsz >= 2 && (int64_t)maxsz * ncomp == D) {
      int32_t *g = grp + (size_t)np * D, n = 0;
      for (i = 0; i < D; i++)
        queue[i] = -1;
      for (i = 0; i < D; i++) {
        int32_t r = find(par, i);
        if (queue[r] < 0)
          queue[r] = n++;
        g[i] = queue[r];
      }
      np++;
    }
  }
done:
  drop(&b);
  return np;
}

double ppi_map_group_bounds(const pp_ctx *ctx, const struct ppi_map *q,
                            int64_t budget)
{
  struct ppi_alloc a = ppi_ctx_alloc(ctx);
  size_t bytes = (size_t)NPART * q->D * sizeof(int32_t);
  int32_t *grp, np, i;
  double best = 0;
  if (q->obj == MAP_AR || q->D < 4 || q->S < 2 || q->ne < 1)
    return 0;
  if (!(grp = ppi_raw_alloc(a, bytes)))
    return 0;
  np = ppi_map_groups(ctx, q, grp, NPART);
  for (i = 0; i < np; i++) {
    double y = ppi_map_group_bound(ctx, q, grp + (size_t)i * q->D, budget);
    best = y > best ? y : best;
  }
  ppi_raw_free(a, grp, bytes);
  return best;
}
