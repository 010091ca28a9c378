/* SPDX-License-Identifier: MIT */
/*
** Routes of transfers over a cluster's physical links, for the
** simulator's link-sharing mode and the estimate's shared links: the
** path a transfer from device i to device j takes, as directed link
** resources (link l traversed from its end a to its end b is resource
** 2l, from b to a is 2l+1).
**
** Widest routing (the default).  Objective: among all paths from i to
** j, the widest (its bottleneck is B(i,j), the bandwidth matrix of
** cluster_route.c); among those the fewest links; among those the
** lexicographically smallest sequence of link indices read from i.  The
** path is a function of (cluster, i, j) alone, so the estimate and the
** simulator, one thread or eight, agree; and it keeps every parallel
** NIC of a rail-optimised node (GPU k of node A reaches GPU k of node B
** through its own NIC and B's: the direct path is the shortest).
** Method: a bidirectional breadth-first search over the links at least
** B(i,j) wide, one whole layer at a time from the side whose frontier
** has fewer links.  Invariant: before a layer is expanded no vertex is
** reached from both sides, so the shortest length h exceeds ki + kj
** (the two depths); the first layer that meets gives h = ki + kj, and
** every vertex at position p of a shortest path has its exact distance
** on the i side (p <= ki) or the j side (p >= ki).  The i side's
** vertices on a shortest path are marked back from the meeting layer,
** then the path is walked from i taking at each vertex the lowest link
** to a vertex on a shortest path one step further, scanning whichever
** is smaller: the vertex's links or the next layer's.  A spine switch
** joined to every GPU is met, never expanded, on a two-level fabric.
** Complexity: O(links within min-depth reach of the two ends) per
** route, O(degree of the ends) on hierarchical clusters; no per-source
** table, so 16,384 GPUs route as fast as 16 (a Dijkstra tree per
** source, the earlier design, took O((V + L) log L) per source and
** 92% of a 8,192-GPU plan).  Scratch: seven arrays of V entries per
** ppi_routes, reset by a generation stamp, not cleared.  Each routed
** pair's path is kept in the cluster (up to 5,790 GPUs and 128 MiB of
** paths, PPI_ROUTE_CACHE_MAX), shared by every evaluation and thread:
** every evaluation routes its reductions' hops again, O(hops) per route
** once kept.
** Exact: tests/test_cluster_route.c compares it with every simple path
** of small random graphs.
**
** Hop routing (mesh, torus): the widest of the shortest paths (BFS,
** then the widest parent at each depth), a tree of parent links per
** source device built on first use, or read from the cluster's table
** (built with the cluster when it fits PPI_ROUTE_CACHE_MAX entries).
** Complexity: O(V + L) per source, O(hops) per route.
*/
#include "cluster/cluster.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static pp_status source_tree(pp_ctx *ctx, struct ppi_routes *rt, int32_t s);

/* Every source device's hop-routing paths into c->route_tree (its
** arena), once per cluster, under its lock, when they fit
** PPI_ROUTE_CACHE_MAX entries: the estimate prices shared links on
** every evaluation and would otherwise route again each time.  The
** table is the cluster's cache, not its value, so it is filled through
** a const cluster. */
static pp_status fill_table(pp_ctx *ctx, struct ppi_routes *rt,
                            struct pp_cluster *c)
{
  size_t nv = (size_t)rt->nvert;
  int32_t s, *all;
  pp_status rc = PP_OK;
  if ((double)c->ndev * (double)nv > PPI_ROUTE_CACHE_MAX) {
    c->route_state = 2;
    return PP_OK;
  }
  if (!(all = ppi_arena_alloc(&c->arena, ctx, (size_t)c->ndev * nv,
                              sizeof *all))) {
    pp_ctx_clear_error(ctx); /* a cache: routing goes on without it */
    c->route_state = 2;
    return PP_OK;
  }
  for (s = 0; s < c->ndev && !rc; s++)
    if (!(rc = source_tree(ctx, rt, s))) {
      memcpy(all + (size_t)s * nv, rt->tree[s], nv * sizeof *all);
      ppi_free(ctx, rt->tree[s], nv * sizeof *all);
      rt->tree[s] = NULL;
    }
  if (!rc) {
    c->route_tree = all;
    c->route_state = 1;
  }
  return rc;
}

/* The pair index of the routed paths' cache (cluster.h, pair_path),
** once per cluster, under its lock: every pair unknown. */
static pp_status pair_index(pp_ctx *ctx, struct pp_cluster *c)
{
  size_t np = (size_t)c->ndev * (size_t)c->ndev, k;
  c->pair_state = 1;
  if ((double)np > PPI_ROUTE_CACHE_MAX)
    return PP_OK; /* too large: every route computed on use */
  if (!(c->pair_path =
            ppi_arena_alloc(&c->arena, ctx, np, sizeof *c->pair_path))) {
    pp_ctx_clear_error(ctx); /* a cache: routing goes on without it */
    return PP_OK;
  }
  for (k = 0; k < np; k++)
    atomic_init(&c->pair_path[k], -1);
  return PP_OK;
}

/* Keep the path of (i, j) in the cluster's pool, unless the pool is full
** or another thread kept it first. */
static void pair_keep(pp_ctx *ctx, struct pp_cluster *c, int32_t i, int32_t j,
                      const int32_t *res, int32_t n)
{
  size_t k = (size_t)i * (size_t)c->ndev + (size_t)j;
  int64_t at, chunk;
  pthread_mutex_lock(&c->route_lock);
  at = c->path_used;
  chunk = at / PPI_PATH_CHUNK;
  if (atomic_load_explicit(&c->pair_path[k], memory_order_relaxed) >= 0 ||
      n + 1 > PPI_PATH_CHUNK)
    goto out;
  if (at % PPI_PATH_CHUNK + n + 1 > PPI_PATH_CHUNK) { /* the next chunk */
    chunk++;
    at = chunk * PPI_PATH_CHUNK;
  }
  if (chunk >= PPI_PATH_CHUNKS)
    goto out; /* full */
  if (!c->path_pool[chunk] &&
      !(c->path_pool[chunk] =
            ppi_arena_alloc(&c->arena, ctx, PPI_PATH_CHUNK, sizeof(int32_t)))) {
    pp_ctx_clear_error(ctx); /* a cache: routing goes on without it */
    goto out;
  }
  c->path_pool[chunk][at % PPI_PATH_CHUNK] = n;
  memcpy(c->path_pool[chunk] + at % PPI_PATH_CHUNK + 1, res,
         (size_t)n * sizeof *res);
  c->path_used = at + n + 1;
  atomic_store_explicit(&c->pair_path[k], (int32_t)at, memory_order_release);
out:
  pthread_mutex_unlock(&c->route_lock);
}

pp_status ppi_routes_init(pp_ctx *ctx, struct ppi_routes *rt,
                          const struct pp_cluster *c)
{
  int32_t nv = c->ndev + c->nswitch, l, v, *deg = NULL, s;
  size_t n = (size_t)nv + 1;
  pp_status rc = PP_OK;

  memset(rt, 0, sizeof *rt);
  rt->c = c;
  rt->nvert = nv;
  if (!c->has_links)
    return PP_OK;
  rt->off = ppi_calloc(ctx, n, sizeof *rt->off);
  rt->adj = ppi_calloc(ctx, 2 * (size_t)c->nlink + 1, sizeof *rt->adj);
  deg = ppi_calloc(ctx, n, sizeof *deg);
  if (!rt->off || !rt->adj || !deg) {
    rc = PP_ENOMEM;
    goto done;
  }
  /* links by vertex, each vertex's in link-index order */
  for (l = 0; l < c->nlink; l++) {
    rt->off[c->link_a[l] + 1]++;
    rt->off[c->link_b[l] + 1]++;
  }
  for (v = 0; v < nv; v++)
    rt->off[v + 1] += rt->off[v];
  for (l = 0; l < c->nlink; l++) {
    rt->adj[rt->off[c->link_a[l]] + deg[c->link_a[l]]++] = l;
    rt->adj[rt->off[c->link_b[l]] + deg[c->link_b[l]]++] = l;
  }
  if (!(rt->path = ppi_calloc(ctx, n, sizeof *rt->path))) {
    rc = PP_ENOMEM;
    goto done;
  }
  if (c->routing == PP_ROUTE_WIDEST) {
    for (s = 0; s < 2; s++) {
      rt->seen[s] = ppi_calloc(ctx, n, sizeof *rt->seen[s]);
      rt->dist[s] = ppi_calloc(ctx, n, sizeof *rt->dist[s]);
      rt->queue[s] = ppi_calloc(ctx, n, sizeof *rt->queue[s]);
      rt->layer[s] = ppi_calloc(ctx, n + 1, sizeof *rt->layer[s]);
      if (!rt->seen[s] || !rt->dist[s] || !rt->queue[s] || !rt->layer[s])
        rc = PP_ENOMEM;
    }
    if (!(rt->good = ppi_calloc(ctx, n, sizeof *rt->good)))
      rc = PP_ENOMEM;
    if (!rc) {
      struct pp_cluster *mc = (struct pp_cluster *)c;
      pthread_mutex_lock(&mc->route_lock);
      if (!mc->pair_state)
        rc = pair_index(ctx, mc);
      pthread_mutex_unlock(&mc->route_lock);
    }
    goto done;
  }
  if (!(rt->tree = ppi_calloc(ctx, (size_t)c->ndev, sizeof *rt->tree))) {
    rc = PP_ENOMEM;
    goto done;
  }
  {
    struct pp_cluster *mc = (struct pp_cluster *)c;
    pthread_mutex_lock(&mc->route_lock);
    if (mc->route_state == 0)
      rc = fill_table(ctx, rt, mc);
    rt->table = mc->route_tree;
    pthread_mutex_unlock(&mc->route_lock);
  }
done:
  ppi_free(ctx, deg, n * sizeof *deg);
  if (rc)
    ppi_routes_free(ctx, rt);
  return rc;
}

/* The hop-routing parent-link tree of source device s: tree[s][v] is
** the directed resource entering v on the path from s (-1 for s). */
static pp_status source_tree(pp_ctx *ctx, struct ppi_routes *rt, int32_t s)
{
  const struct pp_cluster *c = rt->c;
  int32_t nv = rt->nvert, *t, *dist = NULL, *queue = NULL, head = 0, tail = 0;
  double *width = NULL;
  int32_t v, k;

  if (!(t = ppi_alloc(ctx, (size_t)nv * sizeof *t)) ||
      !(dist = ppi_alloc(ctx, (size_t)nv * sizeof *dist)) ||
      !(queue = ppi_alloc(ctx, (size_t)nv * sizeof *queue)) ||
      !(width = ppi_alloc(ctx, (size_t)nv * sizeof *width))) {
    ppi_free(ctx, t, (size_t)nv * sizeof *t);
    ppi_free(ctx, dist, (size_t)nv * sizeof *dist);
    ppi_free(ctx, queue, (size_t)nv * sizeof *queue);
    return PP_ENOMEM;
  }
  for (v = 0; v < nv; v++) {
    t[v] = -1;
    dist[v] = -1;
    width[v] = 0;
  }
  dist[s] = 0;
  width[s] = INFINITY;
  queue[tail++] = s;
  while (head < tail) {
    int32_t x = queue[head++];
    for (k = rt->off[x]; k < rt->off[x + 1]; k++) {
      int32_t l = rt->adj[k],
              y = c->link_a[l] == x ? c->link_b[l] : c->link_a[l];
      double w = fmin(width[x], c->link_gbps[l] * c->link_count[l]);
      int32_t res = 2 * l + (c->link_a[l] == x ? 0 : 1);
      if (dist[y] < 0) {
        dist[y] = dist[x] + 1;
        width[y] = w;
        t[y] = res;
        queue[tail++] = y;
      } else if (dist[y] == dist[x] + 1 && w > width[y]) {
        width[y] = w; /* a wider path of the same length */
        t[y] = res;
      }
    }
  }
  ppi_free(ctx, dist, (size_t)nv * sizeof *dist);
  ppi_free(ctx, queue, (size_t)nv * sizeof *queue);
  ppi_free(ctx, width, (size_t)nv * sizeof *width);
  rt->tree[s] = t;
  return PP_OK;
}

static int32_t other_end(const struct pp_cluster *c, int32_t l, int32_t x)
{
  return c->link_a[l] == x ? c->link_b[l] : c->link_a[l];
}

static int32_t degree(const struct ppi_routes *rt, int32_t v)
{
  return rt->off[v + 1] - rt->off[v];
}

/* Links at the vertices of queue[from..to). */
static int64_t links_of(const struct ppi_routes *rt, const int32_t *q,
                        int32_t from, int32_t to)
{
  int64_t n = 0;
  for (; from < to; from++)
    n += degree(rt, q[from]);
  return n;
}

/* Is w, one link from a vertex at position q - 1 of a shortest path of
** h links, at position q of one?  Past the i side's last layer ki the
** j side knows its distance; before it, the marks of mark_back do. */
static bool on_path(const struct ppi_routes *rt, int32_t w, int32_t q,
                    int32_t h, int32_t ki)
{
  if (q >= ki)
    return rt->seen[1][w] == rt->gen && rt->dist[1][w] == h - q;
  return rt->good[w] == rt->gen && rt->dist[0][w] == q;
}

/* Mark the i side's vertices on a shortest path, layers ki - 1 to 1,
** each from the layer above: from whichever has fewer links. */
static void mark_back(struct ppi_routes *rt, double bmin, int32_t h, int32_t ki)
{
  const struct pp_cluster *c = rt->c;
  const int32_t *q = rt->queue[0], *lay = rt->layer[0];
  int32_t p, x, k;
  for (p = ki - 1; p >= 1; p--) {
    int64_t here = links_of(rt, q, lay[p], lay[p + 1]),
            above = links_of(rt, q, lay[p + 1], lay[p + 2]);
    if (here <= above) {
      for (x = lay[p]; x < lay[p + 1]; x++)
        for (k = rt->off[q[x]]; k < rt->off[q[x] + 1]; k++) {
          int32_t l = rt->adj[k];
          if (c->link_gbps[l] * c->link_count[l] >= bmin &&
              on_path(rt, other_end(c, l, q[x]), p + 1, h, ki)) {
            rt->good[q[x]] = rt->gen;
            break;
          }
        }
    } else {
      for (x = lay[p + 1]; x < lay[p + 2]; x++) {
        if (!on_path(rt, q[x], p + 1, h, ki))
          continue;
        for (k = rt->off[q[x]]; k < rt->off[q[x] + 1]; k++) {
          int32_t l = rt->adj[k], y = other_end(rt->c, l, q[x]);
          if (c->link_gbps[l] * c->link_count[l] >= bmin &&
              rt->seen[0][y] == rt->gen && rt->dist[0][y] == p)
            rt->good[y] = rt->gen;
        }
      }
    }
  }
}

/* The widest route from i to j (the header's objective). */
static pp_status pair_route(pp_ctx *ctx, struct ppi_routes *rt, int32_t i,
                            int32_t j, int32_t *res, int32_t cap, int32_t *n)
{
  const struct pp_cluster *c = rt->c;
  double bmin = c->bw[(size_t)i * (size_t)c->ndev + (size_t)j];
  int32_t depth[2] = {0, 0}, len[2] = {1, 1}, h = -1, ki, p, u, k, x;
  uint32_t g;
  int s;

  if (++rt->gen == 0) { /* wrapped: forget every stamp */
    size_t nb = (size_t)rt->nvert * sizeof(uint32_t);
    memset(rt->seen[0], 0, nb);
    memset(rt->seen[1], 0, nb);
    memset(rt->good, 0, nb);
    rt->gen = 1;
  }
  g = rt->gen;
  for (s = 0; s < 2; s++) {
    int32_t e = s ? j : i;
    rt->seen[s][e] = g;
    rt->dist[s][e] = 0;
    rt->queue[s][0] = e;
    rt->layer[s][0] = 0;
    rt->layer[s][1] = 1;
  }
  /* one whole layer at a time until the two sides meet */
  while (h < 0) {
    int64_t cost[2];
    int32_t d;
    for (s = 0; s < 2; s++)
      cost[s] = len[s] > rt->layer[s][depth[s]]
                    ? links_of(rt, rt->queue[s], rt->layer[s][depth[s]], len[s])
                    : -1;
    if (cost[0] < 0 || cost[1] < 0)
      return ppi_fail(ctx, PP_EINTERNAL,
                      "route from device %d to %d: no path %g GB/s wide",
                      (int)i, (int)j, bmin);
    s = cost[1] < cost[0];
    d = depth[s] + 1;
    for (x = rt->layer[s][depth[s]]; x < rt->layer[s][depth[s] + 1]; x++) {
      int32_t v = rt->queue[s][x];
      for (k = rt->off[v]; k < rt->off[v + 1]; k++) {
        int32_t l = rt->adj[k], y = other_end(c, l, v);
        if (c->link_gbps[l] * c->link_count[l] < bmin || rt->seen[s][y] == g)
          continue;
        rt->seen[s][y] = g;
        rt->dist[s][y] = d;
        rt->queue[s][len[s]++] = y;
        if (rt->seen[!s][y] == g)
          h = 1; /* met: every meeting is ki + kj links long */
      }
    }
    depth[s] = d;
    rt->layer[s][d + 1] = len[s];
  }
  h = depth[0] + depth[1];
  ki = depth[0];
  if (h > cap)
    return ppi_fail(ctx, PP_EINTERNAL, "route from device %d to %d: too long",
                    (int)i, (int)j);
  mark_back(rt, bmin, h, ki);
  /* walk from i: the lowest link to the next position of a shortest
  ** path, from u's links or from the candidates' links, the fewer */
  for (u = i, p = 0; p < h; p++) {
    int32_t q = p + 1, best = -1, from, to;
    const int32_t *cand;
    if (q >= ki) {
      cand = rt->queue[1];
      from = rt->layer[1][h - q];
      to = rt->layer[1][h - q + 1];
    } else {
      cand = rt->queue[0];
      from = rt->layer[0][q];
      to = rt->layer[0][q + 1];
    }
    if (degree(rt, u) <= links_of(rt, cand, from, to)) {
      for (k = rt->off[u]; k < rt->off[u + 1] && best < 0; k++) {
        int32_t l = rt->adj[k];
        if (c->link_gbps[l] * c->link_count[l] >= bmin &&
            on_path(rt, other_end(c, l, u), q, h, ki))
          best = l; /* u's links are in index order */
      }
    } else {
      for (x = from; x < to; x++) {
        if (!on_path(rt, cand[x], q, h, ki))
          continue;
        for (k = rt->off[cand[x]]; k < rt->off[cand[x] + 1]; k++) {
          int32_t l = rt->adj[k];
          if (other_end(c, l, cand[x]) == u &&
              c->link_gbps[l] * c->link_count[l] >= bmin &&
              (best < 0 || l < best))
            best = l;
        }
      }
    }
    if (best < 0)
      return ppi_fail(ctx, PP_EINTERNAL,
                      "route from device %d to %d: lost at step %d", (int)i,
                      (int)j, (int)p);
    res[p] = 2 * best + (c->link_a[best] == u ? 0 : 1);
    u = other_end(c, best, u);
  }
  *n = h;
  return PP_OK;
}

/* The kept path of (i, j) under widest routing, [n, resources...], or
** NULL when it is not kept (yet). */
static const int32_t *kept_path(const struct pp_cluster *c, int32_t i,
                                int32_t j)
{
  int32_t at;
  if (c->routing != PP_ROUTE_WIDEST || !c->pair_path)
    return NULL;
  at = atomic_load_explicit(
      &c->pair_path[(size_t)i * (size_t)c->ndev + (size_t)j],
      memory_order_acquire);
  return at < 0 ? NULL
                : c->path_pool[at / PPI_PATH_CHUNK] + at % PPI_PATH_CHUNK;
}

pp_status ppi_route_ref(pp_ctx *ctx, struct ppi_routes *rt, int32_t i,
                        int32_t j, const int32_t **path, int32_t *n)
{
  const int32_t *p = rt->c->has_links && i != j ? kept_path(rt->c, i, j) : NULL;
  if (p) {
    *path = p + 1;
    *n = p[0];
    return PP_OK;
  }
  *path = rt->path;
  return ppi_route_path(ctx, rt, i, j, rt->path, rt->nvert + 1, n);
}

pp_status ppi_route_path(pp_ctx *ctx, struct ppi_routes *rt, int32_t i,
                         int32_t j, int32_t *res, int32_t cap, int32_t *n)
{
  const struct pp_cluster *c = rt->c;
  int32_t v = j, k = 0, a, b;
  pp_status rc;

  const int32_t *tr;
  *n = 0;
  if (!c->has_links || i == j)
    return PP_OK;
  if (c->routing == PP_ROUTE_WIDEST) {
    const int32_t *p = kept_path(c, i, j);
    if (p) {
      if (p[0] > cap)
        return ppi_fail(ctx, PP_EINTERNAL,
                        "route from device %d to %d: too long", (int)i, (int)j);
      memcpy(res, p + 1, (size_t)p[0] * sizeof *res);
      *n = p[0];
      return PP_OK;
    }
    if ((rc = pair_route(ctx, rt, i, j, res, cap, n)))
      return rc;
    if (c->pair_path) /* the cluster's cache, filled through a const */
      pair_keep(ctx, (struct pp_cluster *)c, i, j, res, *n);
    return PP_OK;
  }
  if (rt->table)
    tr = rt->table + (size_t)i * rt->nvert;
  else {
    if (!rt->tree[i] && (rc = source_tree(ctx, rt, i)))
      return rc;
    tr = rt->tree[i];
  }
  while (v != i) {
    int32_t r = tr[v], l = r / 2;
    if (r < 0 || k >= cap)
      return ppi_fail(ctx, PP_EINTERNAL, "route from device %d to %d: %s",
                      (int)i, (int)j, r < 0 ? "no path" : "too long");
    res[k++] = r;
    v = r % 2 ? c->link_b[l] : c->link_a[l];
  }
  for (a = 0, b = k - 1; a < b; a++, b--) { /* source first */
    int32_t x = res[a];
    res[a] = res[b];
    res[b] = x;
  }
  *n = k;
  return PP_OK;
}

double ppi_route_gbps(const struct ppi_routes *rt, int32_t res)
{
  int32_t l = res / 2;
  return rt->c->link_gbps[l] * rt->c->link_count[l];
}

void ppi_routes_free(pp_ctx *ctx, struct ppi_routes *rt)
{
  const struct pp_cluster *c = rt->c;
  size_t n = (size_t)rt->nvert + 1;
  int32_t d;
  int s;
  if (!c)
    return;
  if (rt->tree)
    for (d = 0; d < c->ndev; d++)
      ppi_free(ctx, rt->tree[d], (size_t)rt->nvert * sizeof(int32_t));
  ppi_free(ctx, rt->tree, (size_t)c->ndev * sizeof *rt->tree);
  for (s = 0; s < 2; s++) {
    ppi_free(ctx, rt->seen[s], n * sizeof *rt->seen[s]);
    ppi_free(ctx, rt->dist[s], n * sizeof *rt->dist[s]);
    ppi_free(ctx, rt->queue[s], n * sizeof *rt->queue[s]);
    ppi_free(ctx, rt->layer[s], (n + 1) * sizeof *rt->layer[s]);
  }
  ppi_free(ctx, rt->good, n * sizeof *rt->good);
  ppi_free(ctx, rt->path, n * sizeof *rt->path);
  ppi_free(ctx, rt->off, n * sizeof *rt->off);
  ppi_free(ctx, rt->adj, (2 * (size_t)c->nlink + 1) * sizeof *rt->adj);
  memset(rt, 0, sizeof *rt);
}
