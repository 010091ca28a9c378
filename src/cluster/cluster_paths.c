/* SPDX-License-Identifier: MIT */
/*
** Routes of transfers over a cluster's physical links, for the
** simulator's link-sharing mode and the estimate's shared links: the
** path a transfer from device i to device j takes, as directed link
** resources (link l traversed from its end a to its end b is resource
** 2l, from b to a is 2l+1).
**
** The paths are the ones whose bottleneck the bandwidth matrix reports
** (cluster_route.c): for widest-path routing, ppi_route_tree's widest
** path per pair over the whole link graph (ties to fewer links, then
** the lower link index), which keeps every parallel NIC of a
** rail-optimised node; and the widest of the shortest paths for hop
** routing (BFS, then the widest parent at each depth).  A tree of
** parent links is built per source device on first use, or read from
** the cluster's table (ppi_routes_cache, built with the cluster).
**
** Complexity: O((V + L) log L) per widest source, O(V + L) per hops
** source, O(hops) per route.
*/
#include "cluster/cluster.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static pp_status source_tree(pp_ctx *ctx, struct ppi_routes *rt, int32_t s);

/* Every source device's paths into c->route_tree (its arena), once per
** cluster, under its lock, when they fit PPI_ROUTE_CACHE_MAX entries:
** the estimate prices shared links on every evaluation and would
** otherwise route again each time.  The table is the cluster's cache,
** not its value, so it is filled through a const cluster. */
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
  if (!(all =
            ppi_arena_alloc(&c->arena, ctx, (size_t)c->ndev * nv, sizeof *all)))
    return ctx->err;
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

pp_status ppi_routes_init(pp_ctx *ctx, struct ppi_routes *rt,
                          const struct pp_cluster *c)
{
  int32_t nv = c->ndev + c->nswitch, l, v, *deg = NULL;
  pp_status rc = PP_OK;

  memset(rt, 0, sizeof *rt);
  rt->c = c;
  rt->nvert = nv;
  if (!c->has_links)
    return PP_OK;
  rt->off = ppi_calloc(ctx, (size_t)nv + 1, sizeof *rt->off);
  rt->adj = ppi_calloc(ctx, 2 * (size_t)c->nlink + 1, sizeof *rt->adj);
  rt->tree = ppi_calloc(ctx, (size_t)c->ndev, sizeof *rt->tree);
  deg = ppi_calloc(ctx, (size_t)nv + 1, sizeof *deg);
  if (!rt->off || !rt->adj || !rt->tree || !deg) {
    rc = PP_ENOMEM;
    goto done;
  }
  /* every link: widest routing takes ppi_route_tree's paths over the
  ** whole graph, and hop routing's BFS below walks them all */
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
  if (!rc) {
    struct pp_cluster *mc = (struct pp_cluster *)c;
    pthread_mutex_lock(&mc->route_lock);
    if (mc->route_state == 0)
      rc = fill_table(ctx, rt, mc);
    rt->table = mc->route_tree;
    pthread_mutex_unlock(&mc->route_lock);
  }
done:
  ppi_free(ctx, deg, ((size_t)nv + 1) * sizeof *deg);
  if (rc)
    ppi_routes_free(ctx, rt);
  return rc;
}

/* The parent-link tree of source device s: tree[s][v] is the directed
** resource entering v on the path from s (-1 for s). */
static pp_status source_tree(pp_ctx *ctx, struct ppi_routes *rt, int32_t s)
{
  const struct pp_cluster *c = rt->c;
  int32_t nv = rt->nvert, *t, *dist = NULL, *queue = NULL, head = 0, tail = 0;
  double *width = NULL;
  int32_t v, k;

  if (c->routing == PP_ROUTE_WIDEST) {
    if (!(t = ppi_alloc(ctx, (size_t)nv * sizeof *t)))
      return PP_ENOMEM;
    if (ppi_route_tree(ctx, c, s, t) != PP_OK) {
      ppi_free(ctx, t, (size_t)nv * sizeof *t);
      return PP_ENOMEM;
    }
    rt->tree[s] = t;
    return PP_OK;
  }
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
  int32_t d;
  if (!c)
    return;
  if (rt->tree)
    for (d = 0; d < c->ndev; d++)
      ppi_free(ctx, rt->tree[d], (size_t)rt->nvert * sizeof(int32_t));
  ppi_free(ctx, rt->tree, (size_t)c->ndev * sizeof *rt->tree);
  ppi_free(ctx, rt->off, ((size_t)rt->nvert + 1) * sizeof *rt->off);
  ppi_free(ctx, rt->adj, (2 * (size_t)c->nlink + 1) * sizeof *rt->adj);
  memset(rt, 0, sizeof *rt);
}
