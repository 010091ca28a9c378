/* SPDX-License-Identifier: MIT */
/*
** Pairwise bandwidth of a link graph.
**
** Widest (the default): B(i,j) is the largest bottleneck over all paths
** from i to j.  Every widest path lies in a maximum spanning tree (the
** cut property), so we build one with Kruskal (O(L log L)), widest link
** first: the link that joins two components is the bottleneck of every
** pair of devices across them, so each of the D^2 entries is written
** exactly once, row by row, when its pair's components meet (the
** "Kruskal reconstruction tree" view).  O(L log L + D^2): a merge lists
** its two sides' devices only when both have some, so the listing costs
** no more than the pairs it writes.  It replaced a walk of the tree from
** every device (O(D * V)), which gave the same matrix; with it
** `parplan plan` on 16,384 devices (hier:2048x8) took 6.2-7.2 s, with
** this 3.8-4.0 s (docs/PLANNER.md).  Switches are ordinary vertices.
**
** Hops: for direct networks (mesh, torus) where devices relay, B(i,j)
** is the widest bottleneck among the paths with fewest links, divided
** by that number of links (store-and-forward).  A BFS per device finds
** hop counts, and a relaxation over the BFS layers keeps the best
** bottleneck: O(D * (V + L)).  When all links have one bandwidth the
** bottleneck is that bandwidth and the BFS only counts hops.
**
** Invariant of the output: symmetric, positive off the diagonal, 0 on
** it, or PP_EINPUT naming a device that device 0 cannot reach.
**
** The paths themselves (which NIC a transfer takes, for link sharing)
** are routed pair by pair in cluster_paths.c.
*/
#include "cluster/cluster.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct route_run {
  pp_ctx *ctx;
  int32_t ndev, nvert, nlink;
  const int32_t *a, *b;
  const double *w;
  int32_t *off, *adj; /* CSR over vertices: neighbour vertex */
  double *adjw;       /* and link bandwidth */
  size_t nadj;        /* entries of adj and adjw */
};

static int32_t uf_find(int32_t *p, int32_t x)
{
  while (p[x] != x) {
    p[x] = p[p[x]];
    x = p[x];
  }
  return x;
}

struct wl {
  double w;
  int32_t l;
};

/* Widest first; equal widths by link index, so ties break the same way
** on every platform. */
static int cmp_desc(const void *x, const void *y)
{
  const struct wl *a = x, *b = y;
  if (a->w != b->w)
    return a->w > b->w ? -1 : 1;
  return (a->l > b->l) - (a->l < b->l);
}

/* Build a CSR adjacency over the chosen links (keep[l] != 0). */
static pp_status build_adj(struct route_run *r, const uint8_t *keep)
{
  int32_t l, v, n = 0;
  int32_t *fill;
  for (l = 0; l < r->nlink; l++)
    if (keep[l])
      n += 2;
  r->nadj = (size_t)n;
  r->off = ppi_calloc(r->ctx, (size_t)r->nvert + 1, sizeof(int32_t));
  r->adj = ppi_calloc(r->ctx, (size_t)n, sizeof(int32_t));
  r->adjw = ppi_calloc(r->ctx, (size_t)n, sizeof(double));
  fill = ppi_calloc(r->ctx, (size_t)r->nvert, sizeof(int32_t));
  if (!r->off || !r->adj || !r->adjw || !fill) {
    ppi_free(r->ctx, fill, (size_t)r->nvert * sizeof(int32_t));
    return r->ctx->err;
  }
  for (l = 0; l < r->nlink; l++)
    if (keep[l]) {
      r->off[r->a[l] + 1]++;
      r->off[r->b[l] + 1]++;
    }
  for (v = 0; v < r->nvert; v++)
    r->off[v + 1] += r->off[v];
  for (l = 0; l < r->nlink; l++)
    if (keep[l]) {
      int32_t x = r->a[l], y = r->b[l];
      r->adj[r->off[x] + fill[x]] = y;
      r->adjw[r->off[x] + fill[x]++] = r->w[l];
      r->adj[r->off[y] + fill[y]] = x;
      r->adjw[r->off[y] + fill[y]++] = r->w[l];
    }
  ppi_free(r->ctx, fill, (size_t)r->nvert * sizeof(int32_t));
  return PP_OK;
}

/* Copy a component's devices (its member list) into out; their count. */
static int32_t members(const int32_t *head, const int32_t *next, int32_t c,
                       int32_t *out)
{
  int32_t n = 0, d;
  for (d = head[c]; d >= 0; d = next[d])
    out[n++] = d;
  return n;
}

static pp_status widest(struct route_run *r, double *bw)
{
  pp_ctx *ctx = r->ctx;
  size_t D = (size_t)r->ndev;
  struct wl *order = ppi_calloc(ctx, (size_t)r->nlink, sizeof *order);
  int32_t *parent = ppi_calloc(ctx, (size_t)r->nvert, sizeof(int32_t));
  int32_t *head = ppi_calloc(ctx, (size_t)r->nvert, sizeof(int32_t));
  int32_t *tail = ppi_calloc(ctx, (size_t)r->nvert, sizeof(int32_t));
  int32_t *next = ppi_calloc(ctx, D, sizeof(int32_t));
  int32_t *la = ppi_calloc(ctx, D, sizeof(int32_t));
  int32_t *lb = ppi_calloc(ctx, D, sizeof(int32_t));
  int32_t l, v;
  size_t i, j;
  pp_status rc = PP_OK;

  if (!order || !parent || !head || !tail || !next || !la || !lb) {
    rc = ctx->err;
    goto done;
  }
  for (l = 0; l < r->nlink; l++) {
    order[l].w = r->w[l];
    order[l].l = l;
  }
  qsort(order, (size_t)r->nlink, sizeof *order, cmp_desc);
  for (v = 0; v < r->nvert; v++) {
    parent[v] = v;
    head[v] = tail[v] = v < r->ndev ? v : -1;
  }
  for (i = 0; i < D; i++) {
    next[i] = -1;
    bw[i * D + i] = 0;
  }
  /* Kruskal, widest link first.  The link that joins components x and y
  ** is the narrowest on the spanning-tree path between any device of x
  ** and any of y (the paths inside each were built of links at least as
  ** wide), so it is their bottleneck: each pair is written once. */
  for (l = 0; l < r->nlink; l++) {
    int32_t k = order[l].l;
    int32_t x = uf_find(parent, r->a[k]), y = uf_find(parent, r->b[k]);
    int32_t na, nb, p, q;
    double w = r->w[k];
    if (x == y)
      continue;
    parent[x] = y;
    if (head[x] < 0) /* no device joins y's */
      continue;
    if (head[y] < 0) { /* y takes x's devices, no pair is new */
      head[y] = head[x];
      tail[y] = tail[x];
      continue;
    }
    na = members(head, next, x, la);
    nb = members(head, next, y, lb);
    for (p = 0; p < na; p++) {
      double *row = bw + (size_t)la[p] * D;
      for (q = 0; q < nb; q++)
        row[lb[q]] = w;
    }
    for (q = 0; q < nb; q++) {
      double *row = bw + (size_t)lb[q] * D;
      for (p = 0; p < na; p++)
        row[la[p]] = w;
    }
    next[tail[y]] = head[x];
    tail[y] = tail[x];
  }
  /* Devices the graph does not join to device 0: its row says -1 there,
  ** which ppi_route reports (the rest of the matrix is never read). */
  v = uf_find(parent, 0);
  for (j = 1; j < D; j++)
    if (uf_find(parent, (int32_t)j) != v)
      bw[j] = -1;
done:
  ppi_free(ctx, order, (size_t)r->nlink * sizeof *order);
  ppi_free(ctx, parent, (size_t)r->nvert * sizeof(int32_t));
  ppi_free(ctx, head, (size_t)r->nvert * sizeof(int32_t));
  ppi_free(ctx, tail, (size_t)r->nvert * sizeof(int32_t));
  ppi_free(ctx, next, D * sizeof(int32_t));
  ppi_free(ctx, la, D * sizeof(int32_t));
  ppi_free(ctx, lb, D * sizeof(int32_t));
  return rc;
}

static pp_status hops(struct route_run *r, double *bw)
{
  pp_ctx *ctx = r->ctx;
  int32_t *dist = ppi_calloc(ctx, (size_t)r->nvert, sizeof(int32_t));
  int32_t *queue = ppi_calloc(ctx, (size_t)r->nvert, sizeof(int32_t));
  double *best = ppi_calloc(ctx, (size_t)r->nvert, sizeof(double));
  uint8_t *keep = ppi_calloc(ctx, (size_t)r->nlink, 1);
  int32_t l, v, s;
  pp_status rc = PP_OK;

  if (!dist || !queue || !best || !keep) {
    rc = ctx->err;
    goto done;
  }
  for (l = 0; l < r->nlink; l++)
    keep[l] = 1;
  if ((rc = build_adj(r, keep)) != PP_OK)
    goto done;
  /* Links of one bandwidth (meshes, tori): every path's bottleneck is
  ** that bandwidth, so the BFS needs no bottleneck bookkeeping. */
  for (l = 1; l < r->nlink && r->w[l] == r->w[0]; l++)
    ;
  if (r->nlink > 0 && l == r->nlink) {
    for (s = 0; s < r->ndev; s++) {
      int32_t head = 0, tail = 0;
      for (v = 0; v < r->nvert; v++)
        dist[v] = -1;
      dist[s] = 0;
      queue[tail++] = s;
      while (head < tail) {
        int32_t x = queue[head++], k;
        for (k = r->off[x]; k < r->off[x + 1]; k++)
          if (dist[r->adj[k]] < 0) {
            dist[r->adj[k]] = dist[x] + 1;
            queue[tail++] = r->adj[k];
          }
      }
      for (v = 0; v < r->ndev; v++)
        bw[(size_t)s * r->ndev + v] = v == s        ? 0
                                      : dist[v] < 0 ? -1
                                                    : r->w[0] / dist[v];
    }
    goto done;
  }
  for (s = 0; s < r->ndev; s++) {
    int32_t head = 0, tail = 0;
    for (v = 0; v < r->nvert; v++) {
      dist[v] = -1;
      best[v] = -1;
    }
    dist[s] = 0;
    best[s] = INFINITY;
    queue[tail++] = s;
    /* BFS in layers: a vertex's best is final once its layer is done,
    ** because every predecessor on a shortest path is one layer up. */
    while (head < tail) {
      int32_t x = queue[head++], k;
      for (k = r->off[x]; k < r->off[x + 1]; k++) {
        int32_t y = r->adj[k];
        double b = fmin(best[x], r->adjw[k]);
        if (dist[y] < 0) {
          dist[y] = dist[x] + 1;
          best[y] = b;
          queue[tail++] = y;
        } else if (dist[y] == dist[x] + 1 && b > best[y])
          best[y] = b;
      }
    }
    for (v = 0; v < r->ndev; v++)
      bw[(size_t)s * r->ndev + v] = v == s        ? 0
                                    : dist[v] < 0 ? -1
                                                  : best[v] / dist[v];
  }
done:
  ppi_free(ctx, dist, (size_t)r->nvert * sizeof(int32_t));
  ppi_free(ctx, queue, (size_t)r->nvert * sizeof(int32_t));
  ppi_free(ctx, best, (size_t)r->nvert * sizeof(double));
  ppi_free(ctx, keep, (size_t)r->nlink);
  return rc;
}

pp_status ppi_route(pp_ctx *ctx, int32_t ndev, int32_t nvert, int32_t nlink,
                    const int32_t *a, const int32_t *b, const double *gbps,
                    pp_routing rt, double *bw, int32_t *unreached)
{
  struct route_run r;
  int32_t v;
  pp_status rc;

  memset(&r, 0, sizeof r);
  r.ctx = ctx;
  r.ndev = ndev;
  r.nvert = nvert;
  r.nlink = nlink;
  r.a = a;
  r.b = b;
  r.w = gbps;
  rc = rt == PP_ROUTE_HOPS ? hops(&r, bw) : widest(&r, bw);
  if (rc == PP_OK)
    for (v = 1; v < ndev; v++)
      if (!(bw[v] > 0)) {
        *unreached = v;
        rc = PP_EINPUT;
        break;
      }
  ppi_free(ctx, r.off, ((size_t)nvert + 1) * sizeof(int32_t));
  ppi_free(ctx, r.adj, r.nadj * sizeof(int32_t));
  ppi_free(ctx, r.adjw, r.nadj * sizeof(double));
  return rc;
}
