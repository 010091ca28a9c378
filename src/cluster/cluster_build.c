/* SPDX-License-Identifier: MIT */
/*
** The cluster builder: device types, devices, and either a pairwise
** bandwidth matrix or a link graph (devices plus switches) from which
** cluster_route.c derives the matrix.
**
** Invariants of a finished cluster: ndev >= 1; names unique among
** devices and switches; every device of a declared type; memory > 0,
** speed > 0; bw[i*ndev+j] == bw[j*ndev+i] > 0 and finite for i != j,
** and bw[i*ndev+i] == 0; a link graph connects every device.  Finishing
** costs O(ndev^2) for a matrix and O(ndev * (nvertex + nlink)) for a
** link graph.
*/
#include "cluster/cluster.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct type_rec {
  const char *name;
  double mem, speed, peak, peak32, membw, tf32;
};

struct dev_rec {
  const char *name, *host;
  int32_t type, node, local;
};

struct link_rec {
  int32_t a, b; /* namemap values: devices >= 0, switch s as -(s+2) */
  double gbps;
  int32_t count;
};

struct pp_cluster_builder {
  pp_ctx *ctx;
  struct pp_cluster *c;
  struct ppi_vec types, devs, switches, links;
  struct ppi_strmap typemap, names;
  double *bw; /* set_bandwidth's copy, in the cluster's arena */
  bool latency_set, routing_set, failed;
};

void pp_device_type_desc_init(pp_device_type_desc *d)
{
  if (!d)
    return;
  memset(d, 0, sizeof *d);
  d->speed = 1.0;
}

void pp_device_desc_init(pp_device_desc *d)
{
  if (!d)
    return;
  memset(d, 0, sizeof *d);
  d->local_gpu = -1;
}

static pp_status bfail(pp_cluster_builder *b, pp_status rc, const char *fmt,
                       ...) PP_PRINTF(3, 4);
static pp_status bfail(pp_cluster_builder *b, pp_status rc, const char *fmt,
                       ...)
{
  va_list ap;
  va_start(ap, fmt);
  ppi_vfail_at(b->ctx, rc, b->c->source, 0, 0, fmt, ap);
  va_end(ap);
  b->failed = true;
  return rc;
}

pp_status pp_cluster_builder_create(pp_ctx *ctx, const char *name,
                                    const char *source,
                                    pp_cluster_builder **out)
{
  pp_cluster_builder *b;
  struct pp_cluster *c;
  if (!ctx || !out)
    return PP_EINVAL;
  *out = NULL;
  b = ppi_calloc(ctx, 1, sizeof *b);
  if (!b)
    return ctx->err;
  c = ppi_calloc(ctx, 1, sizeof *c);
  if (!c) {
    ppi_free(ctx, b, sizeof *b);
    return ctx->err;
  }
  b->ctx = ctx;
  b->c = c;
  pthread_mutex_init(&c->route_lock, NULL);
  ppi_arena_init(&c->arena, ppi_ctx_alloc(ctx));
  c->name = ppi_arena_name(&c->arena, ctx, name && *name ? name : "cluster");
  c->source = ppi_arena_strdup(&c->arena, ctx, source ? source : "cluster");
  ppi_vec_init(&b->types, sizeof(struct type_rec));
  ppi_vec_init(&b->devs, sizeof(struct dev_rec));
  ppi_vec_init(&b->switches, sizeof(const char *));
  ppi_vec_init(&b->links, sizeof(struct link_rec));
  ppi_strmap_init(&b->typemap);
  ppi_strmap_init(&b->names);
  *out = b;
  if (!c->name || !c->source) {
    pp_cluster_builder_destroy(b);
    *out = NULL;
    return ctx->err;
  }
  return PP_OK;
}

void pp_cluster_builder_destroy(pp_cluster_builder *b)
{
  pp_ctx *ctx;
  if (!b)
    return;
  ctx = b->ctx;
  ppi_vec_free(ctx, &b->types);
  ppi_vec_free(ctx, &b->devs);
  ppi_vec_free(ctx, &b->switches);
  ppi_vec_free(ctx, &b->links);
  ppi_strmap_free(ctx, &b->typemap);
  ppi_strmap_free(ctx, &b->names);
  pp_cluster_destroy(b->c);
  ppi_free(ctx, b, sizeof *b);
}

#define NAME_WHY(s) ppi_name_problem(s)

pp_status pp_cluster_builder_add_type(pp_cluster_builder *b,
                                      const pp_device_type_desc *d)
{
  struct type_rec r;
  int32_t n, old;
  pp_status rc;
  if (!b || !d)
    return PP_EINVAL;
  n = (int32_t)b->types.n;
  if (NAME_WHY(d->name))
    return bfail(b, PP_EINPUT, "device type %d: name %s", (int)n,
                 NAME_WHY(d->name));
  if (isnan(d->memory_gib) || !(d->memory_gib > 0) || !isfinite(d->memory_gib))
    return bfail(b, PP_EINPUT,
                 "device type '%s': memory_gb must be a "
                 "positive number, not %g",
                 d->name, d->memory_gib);
  if (!(d->speed > 0) || !isfinite(d->speed))
    return bfail(b, PP_EINPUT,
                 "device type '%s': speed must be a positive "
                 "number, not %g",
                 d->name, d->speed);
  if (!(d->peak_tflops >= 0) || !isfinite(d->peak_tflops))
    return bfail(b, PP_EINPUT,
                 "device type '%s': peak_tflops must be a "
                 "non-negative number, not %g",
                 d->name, d->peak_tflops);
  {
    /* the optional figures, each a number in [0, 1e9] */
    const struct {
      const char *key;
      double v;
    } fig[] = {{"peak_fp32_tflops", d->peak_fp32_tflops},
               {"peak_tf32_tflops", d->peak_tf32_tflops},
               {"mem_gbps", d->mem_gbps}};
    size_t f;
    for (f = 0; f < sizeof fig / sizeof fig[0]; f++)
      if (!(fig[f].v >= 0) || !isfinite(fig[f].v) || fig[f].v > 1e9)
        return bfail(b, PP_EINPUT,
                     "device type '%s': %s must be a number in [0, 1e9], "
                     "not %g",
                     d->name, fig[f].key, fig[f].v);
  }
  /* Limits every reader shares, so anything built can be written and
  ** read back: 1 EiB of memory, a billion times V100, 1e9 TFLOP/s. */
  if (d->memory_gib > 1073741824.0 || d->speed > 1e9 || d->peak_tflops > 1e9)
    return bfail(b, PP_ELIMIT,
                 "device type '%s': memory_gb above 2^30, speed "
                 "or peak_tflops above 1e9",
                 d->name);
  if (b->types.n >= 65536)
    return bfail(b, PP_ELIMIT, "more than 65536 device types");
  r.name = ppi_arena_strdup(&b->c->arena, b->ctx, d->name);
  if (!r.name)
    return b->failed = true, b->ctx->err;
  r.mem = d->memory_gib;
  r.speed = d->speed;
  r.peak = d->peak_tflops;
  r.peak32 = d->peak_fp32_tflops;
  r.membw = d->mem_gbps;
  r.tf32 = d->peak_tf32_tflops;
  rc = ppi_strmap_put(b->ctx, &b->typemap, r.name, n, &old);
  if (rc == PP_EINVAL)
    return bfail(b, PP_EINPUT, "device type '%s' declared twice", d->name);
  if (rc == PP_OK)
    rc = ppi_vec_push(b->ctx, &b->types, &r);
  if (rc != PP_OK)
    b->failed = true;
  return rc;
}

/* Error text for a name already used by a device or a switch. */
static pp_status dup_name(pp_cluster_builder *b, const char *what,
                          const char *name, int32_t old)
{
  if (old >= 0)
    return bfail(b, PP_EINPUT, "%s '%s': name already used by device %d", what,
                 name, (int)old);
  return bfail(b, PP_EINPUT, "%s '%s': name already used by a switch", what,
               name);
}

pp_status pp_cluster_builder_add_device(pp_cluster_builder *b,
                                        const pp_device_desc *d, int32_t *id)
{
  struct dev_rec r;
  int32_t n, old = -1;
  pp_status rc;
  if (!b || !d)
    return PP_EINVAL;
  n = (int32_t)b->devs.n;
  if (id)
    *id = -1;
  if (b->devs.n >= PP_MAX_DEVICES)
    return bfail(b, PP_ELIMIT, "more than %d devices", PP_MAX_DEVICES);
  if (NAME_WHY(d->name))
    return bfail(b, PP_EINPUT, "device %d: name %s", (int)n, NAME_WHY(d->name));
  if (NAME_WHY(d->type))
    return bfail(b, PP_EINPUT, "device '%s' (index %d): device type %s",
                 d->name, (int)n, NAME_WHY(d->type));
  r.type = ppi_strmap_get(&b->typemap, d->type);
  if (r.type < 0)
    return bfail(b, PP_EINPUT,
                 "device '%s' (index %d): unknown device type "
                 "'%s'",
                 d->name, (int)n, d->type);
  if (d->node < 0)
    return bfail(b, PP_EINPUT,
                 "device '%s' (index %d): node must be a "
                 "non-negative integer, not %d",
                 d->name, (int)n, (int)d->node);
  if (d->local_gpu < -1)
    return bfail(b, PP_EINPUT,
                 "device '%s' (index %d): local_gpu must be a "
                 "non-negative integer, not %d",
                 d->name, (int)n, (int)d->local_gpu);
  if (d->host && NAME_WHY(d->host))
    return bfail(b, PP_EINPUT, "device '%s' (index %d): host name %s", d->name,
                 (int)n, NAME_WHY(d->host));
  r.name = ppi_arena_strdup(&b->c->arena, b->ctx, d->name);
  r.host = d->host ? ppi_arena_strdup(&b->c->arena, b->ctx, d->host) : NULL;
  if (!r.name || (d->host && !r.host))
    return b->failed = true, b->ctx->err;
  r.node = d->node;
  r.local = d->local_gpu;
  rc = ppi_strmap_put(b->ctx, &b->names, r.name, n, &old);
  if (rc == PP_EINVAL)
    return dup_name(b, "device", d->name, old);
  if (rc == PP_OK)
    rc = ppi_vec_push(b->ctx, &b->devs, &r);
  if (rc != PP_OK)
    return b->failed = true, rc;
  if (id)
    *id = n;
  return PP_OK;
}

pp_status pp_cluster_builder_add_switch(pp_cluster_builder *b, const char *name)
{
  const char *s;
  int32_t n, old = -1;
  pp_status rc;
  if (!b)
    return PP_EINVAL;
  n = (int32_t)b->switches.n;
  if (NAME_WHY(name))
    return bfail(b, PP_EINPUT, "switch %d: name %s", (int)n, NAME_WHY(name));
  if (b->switches.n >= PP_MAX_VERTICES)
    return bfail(b, PP_ELIMIT, "more than %d switches", PP_MAX_VERTICES);
  s = ppi_arena_strdup(&b->c->arena, b->ctx, name);
  if (!s)
    return b->failed = true, b->ctx->err;
  rc = ppi_strmap_put(b->ctx, &b->names, s, -(n + 2), &old);
  if (rc == PP_EINVAL)
    return dup_name(b, "switch", name, old);
  if (rc == PP_OK)
    rc = ppi_vec_push(b->ctx, &b->switches, &s);
  if (rc != PP_OK)
    b->failed = true;
  return rc;
}

pp_status pp_cluster_builder_add_link(pp_cluster_builder *b, const char *a,
                                      const char *c, double gbps, int32_t count)
{
  struct link_rec r;
  int32_t n;
  pp_status rc;
  if (!b || !a || !c)
    return PP_EINVAL;
  n = (int32_t)b->links.n;
  if (b->links.n >= (size_t)PP_MAX_VERTICES * 8)
    return bfail(b, PP_ELIMIT, "more than %d links", PP_MAX_VERTICES * 8);
  r.a = ppi_strmap_get(&b->names, a);
  r.b = ppi_strmap_get(&b->names, c);
  if (r.a == -1)
    return bfail(b, PP_EINPUT, "link %d: unknown device or switch '%s'", (int)n,
                 a);
  if (r.b == -1)
    return bfail(b, PP_EINPUT, "link %d: unknown device or switch '%s'", (int)n,
                 c);
  if (r.a == r.b)
    return bfail(b, PP_EINPUT, "link %d: joins '%s' to itself", (int)n, a);
  if (!(gbps > 0) || !isfinite(gbps))
    return bfail(b, PP_EINPUT,
                 "link %d ('%s' - '%s'): GBps must be a "
                 "positive number, not %g",
                 (int)n, a, c, gbps);
  if (count < 1)
    return bfail(b, PP_EINPUT,
                 "link %d ('%s' - '%s'): count must be a "
                 "positive integer, not %d",
                 (int)n, a, c, (int)count);
  if (!isfinite(gbps * count))
    return bfail(b, PP_ELIMIT,
                 "link %d ('%s' - '%s'): %g GB/s x %d links "
                 "overflows",
                 (int)n, a, c, gbps, (int)count);
  r.gbps = gbps;
  r.count = count;
  rc = ppi_vec_push(b->ctx, &b->links, &r);
  if (rc != PP_OK)
    b->failed = true;
  return rc;
}

pp_status pp_cluster_builder_set_routing(pp_cluster_builder *b, pp_routing r)
{
  if (!b || (r != PP_ROUTE_WIDEST && r != PP_ROUTE_HOPS))
    return PP_EINVAL;
  b->c->routing = r;
  b->routing_set = true;
  return PP_OK;
}

pp_status pp_cluster_builder_set_bandwidth(pp_cluster_builder *b,
                                           const double *gbps, int32_t n)
{
  size_t cells;
  if (!b || !gbps || n < 1)
    return PP_EINVAL;
  if ((size_t)n != b->devs.n)
    return bfail(b, PP_EINPUT,
                 "bandwidth_GBps has %d rows but there are %d "
                 "devices",
                 (int)n, (int)b->devs.n);
  if (b->bw)
    return bfail(b, PP_EINPUT, "bandwidth given twice");
  cells = (size_t)n * (size_t)n;
  /* Straight into the cluster's arena: a 16,384-device matrix is 2 GiB,
  ** so it is copied once and checked in place. */
  b->bw = ppi_arena_alloc(&b->c->arena, b->ctx, cells, sizeof(double));
  if (!b->bw)
    return b->failed = true, b->ctx->err;
  memcpy(b->bw, gbps, cells * sizeof(double));
  return PP_OK;
}

pp_status pp_cluster_builder_set_latency(pp_cluster_builder *b, double us)
{
  if (!b)
    return PP_EINVAL;
  if (us > 1e12 && isfinite(us))
    return bfail(b, PP_ELIMIT, "latency_us must be at most 1e12, not %g", us);
  if (!(us >= 0) || !isfinite(us))
    return bfail(b, PP_EINPUT,
                 "latency_us must be a non-negative number, "
                 "not %g",
                 us);
  b->c->latency_us = us;
  b->latency_set = true;
  return PP_OK;
}

/* ---- finish ----------------------------------------------------------- */

static int cmp_pair(const void *x, const void *y)
{
  const int64_t *a = x, *b = y;
  return *a < *b ? -1 : *a > *b;
}

static pp_status check_matrix(pp_cluster_builder *b)
{
  struct pp_cluster *c = b->c;
  int32_t n = c->ndev, i, j;
  for (i = 0; i < n; i++) {
    b->bw[(size_t)i * n + i] = 0; /* the diagonal is ignored */
    for (j = 0; j < n; j++) {
      double x = b->bw[(size_t)i * n + j], y = b->bw[(size_t)j * n + i];
      if (i == j)
        continue;
      if (isnan(x))
        return bfail(b, PP_EINPUT,
                     "bandwidth_GBps[%d][%d] (devices '%s' "
                     "and '%s') is NaN",
                     (int)i, (int)j, c->dev_name[i], c->dev_name[j]);
      if (!(x > 0) || !isfinite(x))
        return bfail(b, PP_EINPUT,
                     "bandwidth_GBps[%d][%d] (devices '%s' "
                     "and '%s') must be a positive finite number, not %g",
                     (int)i, (int)j, c->dev_name[i], c->dev_name[j], x);
      if (j > i && fabs(x - y) > 1e-9 * fmax(x, y))
        return bfail(b, PP_EINPUT,
                     "bandwidth_GBps is not symmetric: [%d][%d] "
                     "= %g but [%d][%d] = %g (devices '%s' and '%s')",
                     (int)i, (int)j, x, (int)j, (int)i, y, c->dev_name[i],
                     c->dev_name[j]);
    }
  }
  c->bw = b->bw;
  return PP_OK;
}

static int32_t vertex(const struct pp_cluster *c, int32_t v)
{
  return v >= 0 ? v : c->ndev + (-v - 2);
}

static const char *vertex_name(const struct pp_cluster *c, int32_t v)
{
  return v < c->ndev ? c->dev_name[v] : c->sw_name[v - c->ndev];
}

static pp_status build_links(pp_cluster_builder *b)
{
  struct pp_cluster *c = b->c;
  pp_ctx *ctx = b->ctx;
  int32_t nl = (int32_t)b->links.n, l, unreached = -1;
  int32_t nvert = c->ndev + c->nswitch;
  double *eff = NULL;
  int64_t *pairs = NULL;
  pp_status rc;

  c->has_links = true;
  c->nlink = nl;
  c->link_a = ppi_arena_alloc(&c->arena, ctx, (size_t)nl, sizeof(int32_t));
  c->link_b = ppi_arena_alloc(&c->arena, ctx, (size_t)nl, sizeof(int32_t));
  c->link_count = ppi_arena_alloc(&c->arena, ctx, (size_t)nl, sizeof(int32_t));
  c->link_gbps = ppi_arena_alloc(&c->arena, ctx, (size_t)nl, sizeof(double));
  c->bw = ppi_arena_alloc(&c->arena, ctx, (size_t)c->ndev * (size_t)c->ndev,
                          sizeof(double));
  eff = ppi_calloc(ctx, (size_t)nl, sizeof *eff);
  pairs = ppi_calloc(ctx, (size_t)nl, sizeof *pairs);
  if (!c->link_a || !c->link_b || !c->link_count || !c->link_gbps || !c->bw ||
      !eff || !pairs) {
    rc = ctx->err;
    goto done;
  }
  for (l = 0; l < nl; l++) {
    const struct link_rec *r = &PPI_VEC_AT(&b->links, struct link_rec, l);
    int32_t x = vertex(c, r->a), y = vertex(c, r->b);
    c->link_a[l] = x;
    c->link_b[l] = y;
    c->link_gbps[l] = r->gbps;
    c->link_count[l] = r->count;
    eff[l] = r->gbps * r->count;
    if (x > y) {
      int32_t t = x;
      x = y;
      y = t;
    }
    pairs[l] = (int64_t)x * nvert + y;
  }
  qsort(pairs, (size_t)nl, sizeof *pairs, cmp_pair);
  for (l = 1; l < nl; l++)
    if (pairs[l] == pairs[l - 1]) {
      rc = bfail(b, PP_EINPUT,
                 "two links join '%s' and '%s'; give one link "
                 "with \"count\" to bond them",
                 vertex_name(c, (int32_t)(pairs[l] / nvert)),
                 vertex_name(c, (int32_t)(pairs[l] % nvert)));
      goto done;
    }
  rc = ppi_route(ctx, c->ndev, nvert, nl, c->link_a, c->link_b, eff, c->routing,
                 c->bw, &unreached);
  if (rc == PP_EINPUT)
    rc = bfail(b, PP_EINPUT,
               "the topology is disconnected: no path of links "
               "joins device '%s' (index %d) to device '%s' (index 0)",
               c->dev_name[unreached], (int)unreached, c->dev_name[0]);
done:
  ppi_free(ctx, eff, (size_t)nl * sizeof *eff);
  ppi_free(ctx, pairs, (size_t)nl * sizeof *pairs);
  return rc;
}

static pp_status layout(pp_cluster_builder *b)
{
  struct pp_cluster *c = b->c;
  pp_ctx *ctx = b->ctx;
  struct ppi_arena *ar = &c->arena;
  int32_t nt = (int32_t)b->types.n, nd = (int32_t)b->devs.n, i;
  int32_t maxnode = 0;

  c->ntype = nt;
  c->type_name = ppi_arena_alloc(ar, ctx, (size_t)nt, sizeof(char *));
  c->type_mem_gib = ppi_arena_alloc(ar, ctx, (size_t)nt, sizeof(double));
  c->type_speed = ppi_arena_alloc(ar, ctx, (size_t)nt, sizeof(double));
  c->type_peak = ppi_arena_alloc(ar, ctx, (size_t)nt, sizeof(double));
  c->type_peak32 = ppi_arena_alloc(ar, ctx, (size_t)nt, sizeof(double));
  c->type_membw = ppi_arena_alloc(ar, ctx, (size_t)nt, sizeof(double));
  c->type_tf32 = ppi_arena_alloc(ar, ctx, (size_t)nt, sizeof(double));
  c->ndev = nd;
  c->dev_name = ppi_arena_alloc(ar, ctx, (size_t)nd, sizeof(char *));
  c->dev_host = ppi_arena_alloc(ar, ctx, (size_t)nd, sizeof(char *));
  c->dev_type = ppi_arena_alloc(ar, ctx, (size_t)nd, sizeof(int32_t));
  c->dev_node = ppi_arena_alloc(ar, ctx, (size_t)nd, sizeof(int32_t));
  c->dev_local = ppi_arena_alloc(ar, ctx, (size_t)nd, sizeof(int32_t));
  c->nswitch = (int32_t)b->switches.n;
  c->sw_name = ppi_arena_alloc(ar, ctx, b->switches.n, sizeof(char *));
  if (!c->type_name || !c->type_mem_gib || !c->type_speed || !c->type_peak ||
      !c->type_peak32 || !c->type_membw || !c->type_tf32 || !c->dev_name ||
      !c->dev_host || !c->dev_type || !c->dev_node || !c->dev_local ||
      !c->sw_name)
    return ctx->err;
  for (i = 0; i < nt; i++) {
    const struct type_rec *r = &PPI_VEC_AT(&b->types, struct type_rec, i);
    c->type_name[i] = (char *)r->name;
    c->type_mem_gib[i] = r->mem;
    c->type_speed[i] = r->speed;
    c->type_peak[i] = r->peak;
    c->type_peak32[i] = r->peak32;
    c->type_membw[i] = r->membw;
    c->type_tf32[i] = r->tf32;
  }
  for (i = 0; i < nd; i++) {
    const struct dev_rec *r = &PPI_VEC_AT(&b->devs, struct dev_rec, i);
    c->dev_name[i] = (char *)r->name;
    c->dev_host[i] = (char *)r->host;
    c->dev_type[i] = r->type;
    c->dev_node[i] = r->node;
    c->dev_local[i] = r->local;
    if (r->node > maxnode)
      maxnode = r->node;
  }
  for (i = 0; i < c->nswitch; i++)
    c->sw_name[i] = PPI_VEC_AT(&b->switches, char *, i);
  {
    /* Distinct node ids, by marking. */
    uint8_t *seen;
    if (maxnode > 16 * PP_MAX_DEVICES)
      return bfail(b, PP_ELIMIT, "node ids above %d are not supported",
                   16 * PP_MAX_DEVICES);
    seen = ppi_calloc(ctx, (size_t)maxnode + 1, 1);
    if (!seen)
      return ctx->err;
    for (i = 0; i < nd; i++)
      if (!seen[c->dev_node[i]]) {
        seen[c->dev_node[i]] = 1;
        c->nnode++;
      }
    ppi_free(ctx, seen, (size_t)maxnode + 1);
  }
  return PP_OK;
}

/* Two devices may not claim one GPU of one host. */
static pp_status check_hosts(pp_cluster_builder *b)
{
  struct pp_cluster *c = b->c;
  struct ppi_strmap seen;
  char key[PP_MAX_NAME + 32];
  pp_status rc = PP_OK;
  int32_t i, old;
  struct ppi_arena tmp;

  ppi_strmap_init(&seen);
  ppi_arena_init(&tmp, ppi_ctx_alloc(b->ctx));
  for (i = 0; i < c->ndev && rc == PP_OK; i++) {
    char *k;
    if (!c->dev_host[i] || c->dev_local[i] < 0)
      continue;
    snprintf(key, sizeof key, "%s#%d", c->dev_host[i], (int)c->dev_local[i]);
    k = ppi_arena_strdup(&tmp, b->ctx, key);
    if (!k) {
      rc = b->ctx->err;
      break;
    }
    rc = ppi_strmap_put(b->ctx, &seen, k, i, &old);
    if (rc == PP_EINVAL)
      rc = bfail(b, PP_EINPUT,
                 "devices '%s' and '%s' are both GPU %d of "
                 "host '%s'",
                 c->dev_name[old], c->dev_name[i], (int)c->dev_local[i],
                 c->dev_host[i]);
  }
  ppi_strmap_free(b->ctx, &seen);
  ppi_arena_free(&tmp);
  return rc;
}

pp_status pp_cluster_builder_finish(pp_cluster_builder *b, pp_cluster **out)
{
  pp_ctx *ctx;
  struct pp_cluster *c;
  pp_status rc;

  if (!b || !out) {
    pp_cluster_builder_destroy(b);
    return PP_EINVAL;
  }
  *out = NULL;
  ctx = b->ctx;
  c = b->c;
  if (b->failed) {
    rc = ctx->err != PP_OK ? ctx->err : PP_EINVAL;
    goto done;
  }
  if (b->devs.n == 0) {
    rc = bfail(b, PP_EINPUT, "the cluster has no devices");
    goto done;
  }
  if (b->bw && (b->links.n || b->switches.n)) {
    rc = bfail(b, PP_EINPUT, "give either bandwidth_GBps or links, not both");
    goto done;
  }
  if (b->routing_set && !b->links.n) {
    rc = bfail(b, PP_EINPUT, "routing applies to links; there are none");
    goto done;
  }
  if (!b->bw && !b->links.n && b->devs.n > 1) {
    rc = bfail(b, PP_EINPUT,
               "no bandwidth: give bandwidth_GBps (a matrix) "
               "or links");
    goto done;
  }
  if ((rc = layout(b)) != PP_OK || (rc = check_hosts(b)) != PP_OK)
    goto done;
  if (b->bw)
    rc = check_matrix(b);
  else if (b->links.n)
    rc = build_links(b);
  else {
    c->bw = ppi_arena_alloc(&c->arena, ctx, 1, sizeof(double));
    rc = c->bw ? PP_OK : ctx->err;
  }
  if (rc != PP_OK)
    goto done;
  /* Each map moves into the arena before the cluster takes it, so on
  ** failure the builder still owns (and frees) what did not move. */
  if ((rc = ppi_strmap_move(ctx, &b->names, &c->arena)) != PP_OK)
    goto done;
  c->devmap = b->names;
  ppi_strmap_init(&b->names);
  if ((rc = ppi_strmap_move(ctx, &b->typemap, &c->arena)) != PP_OK)
    goto done;
  c->typemap = b->typemap;
  ppi_strmap_init(&b->typemap);
  *out = c;
  b->c = NULL;
done:
  pp_cluster_builder_destroy(b);
  return rc;
}

void pp_cluster_destroy(pp_cluster *c)
{
  if (c) {
    pthread_mutex_destroy(&c->route_lock);
    ppi_arena_free_owner(&c->arena, c, sizeof *c);
  }
}
