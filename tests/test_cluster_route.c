/* SPDX-License-Identifier: MIT */
/*
** Link-graph routing (cluster_route.c), checked for exact equality
** against brute force on many small random graphs with switches, ties
** and bonded links, both through the internal ppi_route and through the
** public builder:
**
** - widest: B(i,j) is the largest bottleneck over all paths; brute
**   force is Floyd-Warshall over (max, min) and, independently, the
**   enumeration of every simple path.
** - hops: B(i,j) is the largest bottleneck among the paths with the
**   fewest links, divided by that number of links; brute force
**   enumerates every simple path (and, on larger graphs, a layered
**   dynamic program over walks of exactly k links).
**
** Plus: bonded links multiply the bandwidth, a disconnected graph is
** rejected naming the first unreached device, and the output matrix is
** symmetric with a zero diagonal.
**
** Paths (ppi_route_path, widest routing): on random graphs the route of
** random pairs equals the brute force over every simple path (widest,
** then fewest links, then the smallest link indices from the source);
** on a rail-optimised cluster (every GPU its own NIC) the GPU pairs
** across two nodes leave and enter through distinct NICs, each its own.
*/
#include "testutil.h"

#include "cluster/cluster.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a deterministic RNG (xorshift64) --------------------------------- */

static uint64_t rng_state;

static void rseed(uint64_t s)
{
  rng_state = s ? s : 0x9e3779b97f4a7c15ull;
}

/* ---- random graphs ---------------------------------------------------- */

#define MAXV 64
#define MAXL 512

struct graph {
  int nd, nv, nl; /* devices 0..nd-1, switches nd..nv-1 */
  int a[MAXL], b[MAXL], cnt[MAXL];
  double g[MAXL]; /* GB/s of one link */
};

static double eff(const struct graph *gr, int l)
{
  return gr->g[l] * gr->cnt[l];
}

/* A palette with many exact ties (and values whose products tie:
** 12.5 * 2 == 25, 25 * 2 == 50), sometimes an arbitrary value. */
static double rand_gbps(void)
{
  static const double pal[] = {1, 2.5, 3.125, 10, 12.5, 25, 50, 100};
  if (tu_rand(&rng_state, 5) == 0)
    return 0.1 + (double)tu_rand(&rng_state, 1000000) / 7919.0;
  return pal[tu_rand(&rng_state, (uint32_t)(sizeof pal / sizeof pal[0]))];
}

static bool has_link(const struct graph *gr, int x, int y)
{
  int l;
  for (l = 0; l < gr->nl; l++)
    if ((gr->a[l] == x && gr->b[l] == y) || (gr->a[l] == y && gr->b[l] == x))
      return true;
  return false;
}

static void add(struct graph *gr, int x, int y)
{
  assert_true(gr->nl < MAXL);
  /* Either orientation: the routing must not care. */
  if (tu_rand(&rng_state, 2)) {
    int t = x;
    x = y;
    y = t;
  }
  gr->a[gr->nl] = x;
  gr->b[gr->nl] = y;
  gr->g[gr->nl] = rand_gbps();
  gr->cnt[gr->nl] =
      tu_rand(&rng_state, 4) == 0 ? 2 + (int)tu_rand(&rng_state, 3) : 1;
  gr->nl++;
}

/* A connected graph: a random spanning tree plus up to `extra' more
** links (parallel links only when `parallel'). */
static void random_graph(struct graph *gr, int nv, int nd, int extra,
                         bool parallel)
{
  int perm[MAXV], i, k;
  memset(gr, 0, sizeof *gr);
  gr->nv = nv;
  gr->nd = nd;
  for (i = 0; i < nv; i++)
    perm[i] = i;
  for (i = nv - 1; i > 0; i--) {
    int j = (int)tu_rand(&rng_state, (uint32_t)i + 1), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  for (i = 1; i < nv; i++)
    add(gr, perm[i], perm[tu_rand(&rng_state, (uint32_t)i)]);
  for (k = 0; k < extra; k++) {
    int x = (int)tu_rand(&rng_state, (uint32_t)nv),
        y = (int)tu_rand(&rng_state, (uint32_t)nv);
    if (x == y || (!parallel && has_link(gr, x, y)))
      continue;
    add(gr, x, y);
  }
}

/* ---- brute force ------------------------------------------------------ */

/* Widest by Floyd-Warshall over (max, min); 0 = no path. */
static void brute_widest_fw(const struct graph *gr, double *out)
{
  static double w[MAXV][MAXV];
  int i, j, k, l, n = gr->nv;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      w[i][j] = 0;
  for (l = 0; l < gr->nl; l++) {
    double x = eff(gr, l);
    int p = gr->a[l], q = gr->b[l];
    if (x > w[p][q])
      w[p][q] = w[q][p] = x;
  }
  for (k = 0; k < n; k++)
    for (i = 0; i < n; i++)
      for (j = 0; j < n; j++) {
        double m = fmin(w[i][k], w[k][j]);
        if (i != j && m > w[i][j])
          w[i][j] = m;
      }
  for (i = 0; i < gr->nd; i++)
    for (j = 0; j < gr->nd; j++)
      out[i * gr->nd + j] = i == j ? 0 : w[i][j];
}

/* Every simple path from s: for each vertex, the widest bottleneck of
** any path, and the fewest links with the widest bottleneck among
** those. */
struct pathrec {
  double widest;   /* over all simple paths; 0 = none */
  int hops;        /* fewest links; 0 = none */
  double hops_bot; /* widest bottleneck among the paths of `hops' links */
};

static void dfs(const struct graph *gr, int v, int len, double bot, bool *seen,
                struct pathrec *rec)
{
  int l;
  if (len > 0) {
    struct pathrec *r = &rec[v];
    if (bot > r->widest)
      r->widest = bot;
    if (r->hops == 0 || len < r->hops) {
      r->hops = len;
      r->hops_bot = bot;
    } else if (len == r->hops && bot > r->hops_bot)
      r->hops_bot = bot;
  }
  for (l = 0; l < gr->nl; l++) {
    int u = gr->a[l] == v ? gr->b[l] : gr->b[l] == v ? gr->a[l] : -1;
    if (u < 0 || seen[u])
      continue;
    seen[u] = true;
    dfs(gr, u, len + 1, fmin(bot, eff(gr, l)), seen, rec);
    seen[u] = false;
  }
}

static void brute_paths(const struct graph *gr, double *widest, double *hop)
{
  int s, v;
  for (s = 0; s < gr->nd; s++) {
    struct pathrec rec[MAXV];
    bool seen[MAXV];
    memset(rec, 0, sizeof rec);
    memset(seen, 0, sizeof seen);
    seen[s] = true;
    dfs(gr, s, 0, INFINITY, seen, rec);
    for (v = 0; v < gr->nd; v++) {
      widest[s * gr->nd + v] = v == s ? 0 : rec[v].widest;
      hop[s * gr->nd + v] =
          v == s || rec[v].hops == 0 ? 0 : rec[v].hops_bot / rec[v].hops;
    }
  }
}

/* Hops by a layered program over walks: best[k][v] is the widest
** bottleneck of a walk of exactly k links from s to v (0 = none).  The
** first k that reaches v is its hop distance, and every walk of that
** length is a shortest path. */
static void brute_hops_dp(const struct graph *gr, double *out)
{
  static double best[MAXV + 1][MAXV];
  int s, k, l, v, n = gr->nv;
  for (s = 0; s < gr->nd; s++) {
    int dist[MAXV];
    for (v = 0; v < n; v++) {
      best[0][v] = 0;
      dist[v] = -1;
    }
    best[0][s] = INFINITY;
    dist[s] = 0;
    for (k = 1; k <= n; k++) {
      for (v = 0; v < n; v++)
        best[k][v] = 0;
      for (l = 0; l < gr->nl; l++) {
        int p = gr->a[l], q = gr->b[l];
        double x = eff(gr, l);
        if (fmin(best[k - 1][p], x) > best[k][q])
          best[k][q] = fmin(best[k - 1][p], x);
        if (fmin(best[k - 1][q], x) > best[k][p])
          best[k][p] = fmin(best[k - 1][q], x);
      }
      for (v = 0; v < n; v++)
        if (dist[v] < 0 && best[k][v] > 0)
          dist[v] = k;
    }
    for (v = 0; v < gr->nd; v++)
      out[s * gr->nd + v] =
          v == s || dist[v] < 0 ? 0 : best[dist[v]][v] / dist[v];
  }
}

/* ---- the code under test ---------------------------------------------- */

static pp_status route(pp_ctx *ctx, const struct graph *gr, pp_routing r,
                       double *bw, int32_t *unreached)
{
  int32_t a[MAXL], b[MAXL];
  double w[MAXL];
  int l;
  for (l = 0; l < gr->nl; l++) {
    a[l] = gr->a[l];
    b[l] = gr->b[l];
    w[l] = eff(gr, l);
  }
  *unreached = -1;
  return ppi_route(ctx, gr->nd, gr->nv, gr->nl, a, b, w, r, bw, unreached);
}

static void vname(const struct graph *gr, int v, char *buf, size_t n)
{
  if (v < gr->nd)
    snprintf(buf, n, "d%d", v);
  else
    snprintf(buf, n, "s%d", v - gr->nd);
}

/* The same graph through the public builder (devices, then switches,
** then links with their counts). */
static pp_status build(pp_ctx *ctx, const struct graph *gr, pp_routing r,
                       bool set_routing, pp_cluster **out)
{
  pp_cluster_builder *b = NULL;
  pp_device_type_desc t;
  int i, l;
  char x[16], y[16];
  assert_int_equal(pp_cluster_builder_create(ctx, "g", "random", &b), PP_OK);
  pp_device_type_desc_init(&t);
  t.name = "gpu";
  t.memory_gib = 16;
  assert_int_equal(pp_cluster_builder_add_type(b, &t), PP_OK);
  for (i = 0; i < gr->nd; i++) {
    pp_device_desc d;
    pp_device_desc_init(&d);
    vname(gr, i, x, sizeof x);
    d.name = x;
    d.type = "gpu";
    d.node = i % 3;
    assert_int_equal(pp_cluster_builder_add_device(b, &d, NULL), PP_OK);
  }
  for (i = gr->nd; i < gr->nv; i++) {
    vname(gr, i, x, sizeof x);
    assert_int_equal(pp_cluster_builder_add_switch(b, x), PP_OK);
  }
  for (l = 0; l < gr->nl; l++) {
    vname(gr, gr->a[l], x, sizeof x);
    vname(gr, gr->b[l], y, sizeof y);
    assert_int_equal(pp_cluster_builder_add_link(b, x, y, gr->g[l], gr->cnt[l]),
                     PP_OK);
  }
  if (set_routing)
    assert_int_equal(pp_cluster_builder_set_routing(b, r), PP_OK);
  return pp_cluster_builder_finish(b, out);
}

/* ---- checks ----------------------------------------------------------- */

static void dump(const struct graph *gr)
{
  int l;
  print_message("graph: %d devices, %d vertices, %d links\n", gr->nd, gr->nv,
                gr->nl);
  for (l = 0; l < gr->nl; l++)
    print_message("  %d - %d  %.17g x %d\n", gr->a[l], gr->b[l], gr->g[l],
                  gr->cnt[l]);
}

/* Exact equality with the expectation, symmetry, zero diagonal. */
static void check_matrix(const struct graph *gr, const char *what,
                         const double *got, const double *want)
{
  int i, j, n = gr->nd;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      double x = got[i * n + j];
      if (i == j) {
        if (x != 0) {
          dump(gr);
          fail_msg("%s: diagonal [%d][%d] = %.17g", what, i, j, x);
        }
        continue;
      }
      if (x != want[i * n + j]) {
        dump(gr);
        fail_msg("%s: B(%d,%d) = %.17g, brute force %.17g", what, i, j, x,
                 want[i * n + j]);
      }
      if (memcmp(&got[i * n + j], &got[j * n + i], sizeof(double)) != 0) {
        dump(gr);
        fail_msg("%s: not symmetric at (%d,%d): %.17g vs %.17g", what, i, j, x,
                 got[j * n + i]);
      }
      if (!(x > 0) || !isfinite(x)) {
        dump(gr);
        fail_msg("%s: B(%d,%d) = %g is not positive and finite", what, i, j, x);
      }
    }
}

static void check_builder(pp_ctx *ctx, const struct graph *gr, pp_routing r,
                          const double *want, bool roundtrip)
{
  pp_cluster *c = NULL;
  const double *m;
  int i, j, l;
  /* The default routing is widest: say so explicitly half the time. */
  bool set = r == PP_ROUTE_HOPS || tu_rand(&rng_state, 2);
  pp_status rc = build(ctx, gr, r, set, &c);
  if (rc != PP_OK) {
    dump(gr);
    fail_msg("builder: %s", pp_ctx_errmsg(ctx));
  }
  assert_int_equal(pp_cluster_ndev(c), gr->nd);
  assert_int_equal(pp_cluster_nswitch(c), gr->nv - gr->nd);
  assert_int_equal(pp_cluster_nlink(c), gr->nl);
  assert_int_equal(pp_cluster_routing(c), r);
  for (l = 0; l < gr->nl; l++) {
    int32_t a = -1, b = -1, k = 0;
    double g = 0;
    assert_int_equal(pp_cluster_link(c, l, &a, &b, &g, &k), PP_OK);
    /* The link as given: not multiplied by its count. */
    assert_int_equal(a, gr->a[l]);
    assert_int_equal(b, gr->b[l]);
    assert_true(g == gr->g[l]);
    assert_int_equal(k, gr->cnt[l]);
  }
  m = pp_cluster_bandwidth_matrix(c);
  assert_non_null(m);
  check_matrix(gr, r == PP_ROUTE_HOPS ? "builder hops" : "builder widest", m,
               want);
  for (i = 0; i < gr->nd; i++)
    for (j = 0; j < gr->nd; j++)
      assert_true(pp_cluster_bandwidth(c, i, j) == m[i * gr->nd + j]);
  /* Written and read back, the link graph (bonds and routing included)
  ** gives the same matrix, bit for bit. */
  if (roundtrip) {
    char path[512];
    pp_cluster *back = NULL;
    snprintf(path, sizeof path, "%s", tu_tmp("route.json"));
    assert_int_equal(pp_cluster_write(ctx, c, path, NULL), PP_OK);
    if (pp_cluster_load(ctx, path, &back) != PP_OK)
      fail_msg("reading back: %s", pp_ctx_errmsg(ctx));
    assert_int_equal(pp_cluster_nlink(back), gr->nl);
    assert_int_equal(pp_cluster_routing(back), r);
    for (l = 0; l < gr->nl; l++) {
      int32_t a = -1, b = -1, k = 0;
      double g = 0;
      assert_int_equal(pp_cluster_link(back, l, &a, &b, &g, &k), PP_OK);
      assert_true(g == gr->g[l] && k == gr->cnt[l]);
    }
    if (memcmp(pp_cluster_bandwidth_matrix(back), m,
               (size_t)gr->nd * gr->nd * sizeof(double)) != 0) {
      dump(gr);
      fail_msg("the matrix read back differs");
    }
    pp_cluster_destroy(back);
    remove(path);
  }
  pp_cluster_destroy(c);
}

/* ---- tests ------------------------------------------------------------ */

/* 300 graphs of 3..9 vertices: widest against Floyd-Warshall and against
** every simple path; hops against every simple path and the layered
** program.  Through ppi_route and through the builder. */
static void t_random_small(void **state)
{
  struct tu_fix *fx = *state;
  pp_ctx *ctx = fx->ctx;
  int it;
  rseed(0x5eed0001);
  for (it = 0; it < 300; it++) {
    struct graph gr;
    double fw[MAXV * MAXV], pw[MAXV * MAXV], ph[MAXV * MAXV], dp[MAXV * MAXV];
    double bw[MAXV * MAXV];
    int nv = 3 + (int)tu_rand(&rng_state, 7);                /* 3..9 vertices */
    int nd = 2 + (int)tu_rand(&rng_state, (uint32_t)nv - 1); /* 2..nv devices */
    int32_t unr;
    /* Every 10th graph is complete (small), else sparse to dense. */
    if (it % 10 == 9) {
      int x, y;
      nv = 3 + (int)tu_rand(&rng_state, 4);
      nd = 2 + (int)tu_rand(&rng_state, (uint32_t)nv - 1);
      memset(&gr, 0, sizeof gr);
      gr.nv = nv;
      gr.nd = nd;
      for (x = 0; x < nv; x++)
        for (y = x + 1; y < nv; y++)
          add(&gr, x, y);
    } else
      random_graph(&gr, nv, nd, (int)tu_rand(&rng_state, (uint32_t)nv + 3),
                   false);

    brute_widest_fw(&gr, fw);
    brute_paths(&gr, pw, ph);
    brute_hops_dp(&gr, dp);
    /* The brute forces agree with each other (a test of the test). */
    check_matrix(&gr, "simple paths vs Floyd-Warshall", pw, fw);
    check_matrix(&gr, "simple paths vs layered program", ph, dp);

    assert_int_equal(route(ctx, &gr, PP_ROUTE_WIDEST, bw, &unr), PP_OK);
    check_matrix(&gr, "ppi_route widest", bw, fw);
    assert_int_equal(route(ctx, &gr, PP_ROUTE_HOPS, bw, &unr), PP_OK);
    check_matrix(&gr, "ppi_route hops", bw, ph);

    check_builder(ctx, &gr, PP_ROUTE_WIDEST, fw, it % 5 == 0);
    check_builder(ctx, &gr, PP_ROUTE_HOPS, ph, it % 5 == 0);
    assert_int_equal(pp_ctx_errcode(ctx), PP_OK);
  }
  assert_int_equal(fx->a.live, 1); /* only the context */
}

/* ppi_route accepts parallel links (the builder does not: it asks for
** a count); the widest of them counts. */
static void t_random_parallel(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  int it;
  rseed(0x5eed0002);
  for (it = 0; it < 200; it++) {
    struct graph gr;
    double fw[MAXV * MAXV], pw[MAXV * MAXV], ph[MAXV * MAXV];
    double bw[MAXV * MAXV];
    int nv = 3 + (int)tu_rand(&rng_state, 6),
        nd = 2 + (int)tu_rand(&rng_state, (uint32_t)nv - 1);
    int32_t unr;
    random_graph(&gr, nv, nd, 2 * nv, true);
    brute_widest_fw(&gr, fw);
    brute_paths(&gr, pw, ph);
    check_matrix(&gr, "simple paths vs Floyd-Warshall", pw, fw);
    assert_int_equal(route(ctx, &gr, PP_ROUTE_WIDEST, bw, &unr), PP_OK);
    check_matrix(&gr, "ppi_route widest (parallel)", bw, fw);
    assert_int_equal(route(ctx, &gr, PP_ROUTE_HOPS, bw, &unr), PP_OK);
    check_matrix(&gr, "ppi_route hops (parallel)", bw, ph);
  }
}

/* Larger graphs (20..64 vertices, a few devices or many): widest against
** Floyd-Warshall, hops against the layered program. */
static void t_random_larger(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  int it;
  rseed(0x5eed0003);
  for (it = 0; it < 40; it++) {
    static struct graph gr;
    static double fw[MAXV * MAXV], dp[MAXV * MAXV], bw[MAXV * MAXV];
    int nv = 20 + (int)tu_rand(&rng_state, MAXV - 19);
    int nd = it % 2 ? nv : 2 + (int)tu_rand(&rng_state, (uint32_t)nv - 1);
    int32_t unr;
    random_graph(&gr, nv, nd, (int)tu_rand(&rng_state, (uint32_t)(3 * nv)),
                 false);
    brute_widest_fw(&gr, fw);
    brute_hops_dp(&gr, dp);
    assert_int_equal(route(ctx, &gr, PP_ROUTE_WIDEST, bw, &unr), PP_OK);
    check_matrix(&gr, "ppi_route widest (larger)", bw, fw);
    assert_int_equal(route(ctx, &gr, PP_ROUTE_HOPS, bw, &unr), PP_OK);
    check_matrix(&gr, "ppi_route hops (larger)", bw, dp);
    check_builder(ctx, &gr, PP_ROUTE_WIDEST, fw, it % 5 == 0);
    check_builder(ctx, &gr, PP_ROUTE_HOPS, dp, it % 5 == 0);
  }
}

/* Hand-made cases with known answers. */
static void t_known(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  struct graph gr;
  double bw[16];
  int32_t unr;

  /* d0 -100- s0 -100- d1 and a direct d0 -20- d1: widest takes the
  ** switch (100), hops the direct link (20 / 1). */
  memset(&gr, 0, sizeof gr);
  gr.nd = 2;
  gr.nv = 3;
  gr.nl = 3;
  gr.a[0] = 0, gr.b[0] = 2, gr.g[0] = 100, gr.cnt[0] = 1;
  gr.a[1] = 2, gr.b[1] = 1, gr.g[1] = 100, gr.cnt[1] = 1;
  gr.a[2] = 0, gr.b[2] = 1, gr.g[2] = 20, gr.cnt[2] = 1;
  assert_int_equal(route(ctx, &gr, PP_ROUTE_WIDEST, bw, &unr), PP_OK);
  assert_true(bw[1] == 100 && bw[2] == 100 && bw[0] == 0 && bw[3] == 0);
  assert_int_equal(route(ctx, &gr, PP_ROUTE_HOPS, bw, &unr), PP_OK);
  assert_true(bw[1] == 20 && bw[2] == 20);

  /* Two 2-link paths d0 - x - d1: one with bottleneck 30, the other 50;
  ** hops takes 50 / 2 = 25 whichever vertex the search meets first.  A
  ** 3-link path of 1000 does not count for hops but wins widest. */
  memset(&gr, 0, sizeof gr);
  gr.nd = 2;
  gr.nv = 6;
  gr.nl = 7;
  gr.a[0] = 0, gr.b[0] = 2, gr.g[0] = 30, gr.cnt[0] = 1; /* via s0: 30 */
  gr.a[1] = 2, gr.b[1] = 1, gr.g[1] = 100, gr.cnt[1] = 1;
  gr.a[2] = 0, gr.b[2] = 3, gr.g[2] = 60, gr.cnt[2] = 1; /* via s1: 50 */
  gr.a[3] = 3, gr.b[3] = 1, gr.g[3] = 50, gr.cnt[3] = 1;
  gr.a[4] = 0, gr.b[4] = 4, gr.g[4] = 1000, gr.cnt[4] = 1; /* 3 links */
  gr.a[5] = 4, gr.b[5] = 5, gr.g[5] = 1000, gr.cnt[5] = 1;
  gr.a[6] = 5, gr.b[6] = 1, gr.g[6] = 1000, gr.cnt[6] = 1;
  assert_int_equal(route(ctx, &gr, PP_ROUTE_HOPS, bw, &unr), PP_OK);
  assert_true(bw[1] == 25 && bw[2] == 25);
  assert_int_equal(route(ctx, &gr, PP_ROUTE_WIDEST, bw, &unr), PP_OK);
  assert_true(bw[1] == 1000 && bw[2] == 1000);

  /* A chain of 3 devices: hops divides by the distance exactly. */
  memset(&gr, 0, sizeof gr);
  gr.nd = 4;
  gr.nv = 4;
  gr.nl = 3;
  gr.a[0] = 0, gr.b[0] = 1, gr.g[0] = 10, gr.cnt[0] = 1;
  gr.a[1] = 1, gr.b[1] = 2, gr.g[1] = 10, gr.cnt[1] = 1;
  gr.a[2] = 2, gr.b[2] = 3, gr.g[2] = 10, gr.cnt[2] = 1;
  assert_int_equal(route(ctx, &gr, PP_ROUTE_HOPS, bw, &unr), PP_OK);
  assert_true(bw[0 * 4 + 1] == 10.0 / 1);
  assert_true(bw[0 * 4 + 2] == 10.0 / 2);
  assert_true(bw[0 * 4 + 3] == 10.0 / 3);
  assert_true(bw[3 * 4 + 0] == 10.0 / 3);
  assert_true(bw[1 * 4 + 3] == 10.0 / 2);
  assert_int_equal(route(ctx, &gr, PP_ROUTE_WIDEST, bw, &unr), PP_OK);
  assert_true(bw[0 * 4 + 3] == 10 && bw[3 * 4 + 0] == 10);
}

static pp_cluster_builder *start(pp_ctx *ctx, int ndev, int nsw)
{
  pp_cluster_builder *b = NULL;
  pp_device_type_desc t;
  char x[16];
  int i;
  assert_int_equal(pp_cluster_builder_create(ctx, "c", "test", &b), PP_OK);
  pp_device_type_desc_init(&t);
  t.name = "gpu";
  t.memory_gib = 16;
  assert_int_equal(pp_cluster_builder_add_type(b, &t), PP_OK);
  for (i = 0; i < ndev; i++) {
    pp_device_desc d;
    pp_device_desc_init(&d);
    snprintf(x, sizeof x, "d%d", i);
    d.name = x;
    d.type = "gpu";
    d.node = 0;
    assert_int_equal(pp_cluster_builder_add_device(b, &d, NULL), PP_OK);
  }
  for (i = 0; i < nsw; i++) {
    snprintf(x, sizeof x, "s%d", i);
    assert_int_equal(pp_cluster_builder_add_switch(b, x), PP_OK);
  }
  return b;
}

/* count > 1 bonds equal links: the bandwidth is multiplied. */
static void t_bonded(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_cluster_builder *b;
  pp_cluster *c = NULL;
  int32_t x, y, k;
  double g;

  /* A direct bonded pair: 2 x 25 = 50. */
  b = start(ctx, 2, 0);
  assert_int_equal(pp_cluster_builder_add_link(b, "d0", "d1", 25, 2), PP_OK);
  assert_int_equal(pp_cluster_builder_finish(b, &c), PP_OK);
  assert_true(pp_cluster_bandwidth(c, 0, 1) == 50);
  assert_true(pp_cluster_bandwidth(c, 1, 0) == 50);
  assert_int_equal(pp_cluster_link(c, 0, &x, &y, &g, &k), PP_OK);
  assert_true(g == 25 && k == 2);
  pp_cluster_destroy(c);

  /* Through a switch: d0 -(10 x 3 = 30)- s0 -(25)- d1 -(12.5 x 4 = 50)- d2
  ** widest: B(0,1) = 25, B(1,2) = 50 (the bond beats 25), B(0,2) = 25. */
  b = start(ctx, 3, 1);
  assert_int_equal(pp_cluster_builder_add_link(b, "d0", "s0", 10, 3), PP_OK);
  assert_int_equal(pp_cluster_builder_add_link(b, "s0", "d1", 25, 1), PP_OK);
  assert_int_equal(pp_cluster_builder_add_link(b, "d1", "d2", 12.5, 4), PP_OK);
  assert_int_equal(pp_cluster_builder_finish(b, &c), PP_OK);
  assert_true(pp_cluster_bandwidth(c, 0, 1) == 25);
  assert_true(pp_cluster_bandwidth(c, 1, 2) == 50);
  assert_true(pp_cluster_bandwidth(c, 0, 2) == 25);
  pp_cluster_destroy(c);

  /* The same with hops: B(0,1) = min(30, 25) / 2, B(0,2) = 25 / 3,
  ** B(1,2) = 50 / 1. */
  b = start(ctx, 3, 1);
  assert_int_equal(pp_cluster_builder_add_link(b, "d0", "s0", 10, 3), PP_OK);
  assert_int_equal(pp_cluster_builder_add_link(b, "s0", "d1", 25, 1), PP_OK);
  assert_int_equal(pp_cluster_builder_add_link(b, "d1", "d2", 12.5, 4), PP_OK);
  assert_int_equal(pp_cluster_builder_set_routing(b, PP_ROUTE_HOPS), PP_OK);
  assert_int_equal(pp_cluster_builder_finish(b, &c), PP_OK);
  assert_true(pp_cluster_bandwidth(c, 0, 1) == 25.0 / 2);
  assert_true(pp_cluster_bandwidth(c, 0, 2) == 25.0 / 3);
  assert_true(pp_cluster_bandwidth(c, 1, 2) == 50.0);
  pp_cluster_destroy(c);

  /* A bond makes the longer path the wider one: d0 -25- d1 directly,
  ** d0 -(20 x 2)- s0 -(20 x 2)- d1: widest 40, hops 25. */
  b = start(ctx, 2, 1);
  assert_int_equal(pp_cluster_builder_add_link(b, "d0", "d1", 25, 1), PP_OK);
  assert_int_equal(pp_cluster_builder_add_link(b, "d0", "s0", 20, 2), PP_OK);
  assert_int_equal(pp_cluster_builder_add_link(b, "s0", "d1", 20, 2), PP_OK);
  assert_int_equal(pp_cluster_builder_finish(b, &c), PP_OK);
  assert_true(pp_cluster_bandwidth(c, 0, 1) == 40);
  pp_cluster_destroy(c);

  /* Two links between one pair are refused: bond them with a count. */
  b = start(ctx, 2, 0);
  assert_int_equal(pp_cluster_builder_add_link(b, "d0", "d1", 25, 1), PP_OK);
  assert_int_equal(pp_cluster_builder_add_link(b, "d1", "d0", 25, 1), PP_OK);
  tu_expect_error(ctx, pp_cluster_builder_finish(b, &c), PP_EINPUT,
                  "two links join", "count", NULL);
  assert_null(c);

  /* A count below 1 is refused. */
  b = start(ctx, 2, 0);
  tu_expect_error(ctx, pp_cluster_builder_add_link(b, "d0", "d1", 25, 0),
                  PP_EINPUT, "count must be a positive integer", NULL);
  pp_cluster_builder_destroy(b);
}

/* The finished cluster promises finite bandwidths; a bond of huge links
** must not overflow to infinity unnoticed. */
static void t_bonded_overflow(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_cluster_builder *b;
  pp_cluster *c = NULL;
  /* 1e308 GB/s x 2 bonded links would be infinite: refused at once. */
  b = start(ctx, 2, 0);
  tu_expect_error(ctx, pp_cluster_builder_add_link(b, "d0", "d1", 1e308, 2),
                  PP_ELIMIT, "link 0", "'d0' - 'd1'", "overflows", NULL);
  assert_int_not_equal(pp_cluster_builder_finish(b, &c), PP_OK);
  assert_null(c);
  pp_ctx_clear_error(ctx);
}

/* A device no link path reaches: PP_EINPUT naming the first such device. */
static void t_disconnected(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_cluster_builder *b;
  pp_cluster *c = NULL;
  struct graph gr;
  double bw[MAXV * MAXV];
  int32_t unr;
  int r, it;

  for (r = 0; r < 2; r++) {
    /* d0 - s0 - d1 - d2 and apart d3 - s1 - d4. */
    b = start(ctx, 5, 2);
    assert_int_equal(pp_cluster_builder_add_link(b, "d0", "s0", 10, 1), PP_OK);
    assert_int_equal(pp_cluster_builder_add_link(b, "s0", "d1", 10, 1), PP_OK);
    assert_int_equal(pp_cluster_builder_add_link(b, "d1", "d2", 10, 1), PP_OK);
    assert_int_equal(pp_cluster_builder_add_link(b, "d3", "s1", 10, 1), PP_OK);
    assert_int_equal(pp_cluster_builder_add_link(b, "s1", "d4", 10, 1), PP_OK);
    if (r)
      assert_int_equal(pp_cluster_builder_set_routing(b, PP_ROUTE_HOPS), PP_OK);
    tu_expect_error(ctx, pp_cluster_builder_finish(b, &c), PP_EINPUT,
                    "disconnected", "'d3'", "index 3", "'d0'", NULL);
    assert_null(c);

    /* Device 0 alone: the first other device is named. */
    b = start(ctx, 3, 0);
    assert_int_equal(pp_cluster_builder_add_link(b, "d1", "d2", 10, 1), PP_OK);
    if (r)
      assert_int_equal(pp_cluster_builder_set_routing(b, PP_ROUTE_HOPS), PP_OK);
    tu_expect_error(ctx, pp_cluster_builder_finish(b, &c), PP_EINPUT,
                    "disconnected", "'d1'", NULL);
    assert_null(c);

    /* Only through a switch that is itself cut off: d2 is unreached. */
    b = start(ctx, 3, 1);
    assert_int_equal(pp_cluster_builder_add_link(b, "d0", "d1", 10, 1), PP_OK);
    assert_int_equal(pp_cluster_builder_add_link(b, "d2", "s0", 10, 1), PP_OK);
    if (r)
      assert_int_equal(pp_cluster_builder_set_routing(b, PP_ROUTE_HOPS), PP_OK);
    tu_expect_error(ctx, pp_cluster_builder_finish(b, &c), PP_EINPUT,
                    "disconnected", "'d2'", NULL);
    assert_null(c);

    /* A switch no link reaches is harmless: only devices matter. */
    b = start(ctx, 2, 2);
    assert_int_equal(pp_cluster_builder_add_link(b, "d0", "s0", 10, 1), PP_OK);
    assert_int_equal(pp_cluster_builder_add_link(b, "s0", "d1", 10, 1), PP_OK);
    if (r)
      assert_int_equal(pp_cluster_builder_set_routing(b, PP_ROUTE_HOPS), PP_OK);
    assert_int_equal(pp_cluster_builder_finish(b, &c), PP_OK);
    assert_true(pp_cluster_bandwidth(c, 0, 1) == (r ? 5 : 10));
    pp_cluster_destroy(c);
    c = NULL;
  }

  /* Random forests of two components: the first device (by index) not in
  ** device 0's component is named, by ppi_route and by the builder. */
  rseed(0x5eed0004);
  for (it = 0; it < 100; it++) {
    int nv = 3 + (int)tu_rand(&rng_state, 7),
        nd = 2 + (int)tu_rand(&rng_state, (uint32_t)nv - 1);
    int comp[MAXV], i, l, want = -1;
    char msg[64];
    struct graph g1;
    random_graph(&g1, nv, nd, (int)tu_rand(&rng_state, (uint32_t)nv), false);
    /* Split the vertices at random (both sides non-empty) and keep only
    ** the links inside a side. */
    do {
      int n0 = 0;
      for (i = 0; i < nv; i++)
        n0 += (comp[i] = (int)tu_rand(&rng_state, 2)) == 0;
      if (n0 > 0 && n0 < nv)
        break;
    } while (1);
    gr = g1;
    gr.nl = 0;
    for (l = 0; l < g1.nl; l++)
      if (comp[g1.a[l]] == comp[g1.b[l]]) {
        gr.a[gr.nl] = g1.a[l];
        gr.b[gr.nl] = g1.b[l];
        gr.g[gr.nl] = g1.g[l];
        gr.cnt[gr.nl] = g1.cnt[l];
        gr.nl++;
      }
    /* Which device does device 0 not reach?  (Floyd-Warshall, 0 = no
    ** path.) */
    brute_widest_fw(&gr, bw);
    for (i = 1; i < nd && want < 0; i++)
      if (bw[i] == 0)
        want = i;
    for (r = 0; r < 2; r++) {
      pp_status rc;
      rc = route(ctx, &gr, r ? PP_ROUTE_HOPS : PP_ROUTE_WIDEST, bw, &unr);
      if (want < 0) {
        double fw[MAXV * MAXV], pw[MAXV * MAXV], ph[MAXV * MAXV];
        assert_int_equal(rc, PP_OK);
        brute_widest_fw(&gr, fw);
        brute_paths(&gr, pw, ph);
        check_matrix(&gr, "split but connected", bw, r ? ph : fw);
        continue;
      }
      if (rc != PP_EINPUT || unr != want) {
        dump(&gr);
        fail_msg("ppi_route: status %d, unreached %d; expected %d, %d", (int)rc,
                 (int)unr, PP_EINPUT, want);
      }
      if (gr.nl == 0)
        continue; /* the builder wants a matrix or links */
      rc = build(ctx, &gr, r ? PP_ROUTE_HOPS : PP_ROUTE_WIDEST, r != 0, &c);
      snprintf(msg, sizeof msg, "'d%d' (index %d)", want, want);
      tu_expect_error(ctx, rc, PP_EINPUT, "disconnected", msg, NULL);
      assert_null(c);
    }
  }
}

/* One device: nothing to route, the matrix is a single 0. */
static void t_single(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_cluster_builder *b;
  pp_cluster *c = NULL;
  b = start(ctx, 1, 1);
  assert_int_equal(pp_cluster_builder_add_link(b, "d0", "s0", 10, 1), PP_OK);
  assert_int_equal(pp_cluster_builder_finish(b, &c), PP_OK);
  assert_int_equal(pp_cluster_ndev(c), 1);
  assert_true(pp_cluster_bandwidth_matrix(c)[0] == 0);
  assert_true(pp_cluster_bandwidth(c, 0, 0) == 0);
  pp_cluster_destroy(c);
}

/* ---- paths ------------------------------------------------------------ */

/* Brute force of the widest route's objective over the cluster's own
** link arrays: every simple path from s to t by DFS; keep the widest,
** then the fewest links, then the lexicographically smallest sequence
** of link indices read from s. */
struct brute {
  const pp_cluster *c;
  int32_t t, path[MAXV], best[MAXV], nbest;
  double wbest;
  bool used[MAXV + 8];
};

static void brute_dfs(struct brute *x, int32_t v, int32_t n, double w)
{
  int32_t l, k;
  if (v == x->t) {
    bool take = w > x->wbest || (w == x->wbest && n < x->nbest);
    if (w == x->wbest && n == x->nbest)
      for (k = 0; k < n; k++)
        if (x->path[k] != x->best[k]) {
          take = x->path[k] < x->best[k];
          break;
        }
    if (take) {
      x->wbest = w;
      x->nbest = n;
      memcpy(x->best, x->path, (size_t)n * sizeof x->path[0]);
    }
    return;
  }
  for (l = 0; l < x->c->nlink; l++) {
    int32_t y;
    if (x->c->link_a[l] == v)
      y = x->c->link_b[l];
    else if (x->c->link_b[l] == v)
      y = x->c->link_a[l];
    else
      continue;
    if (x->used[y])
      continue;
    x->used[y] = true;
    x->path[n] = l;
    brute_dfs(x, y, n + 1, fmin(w, x->c->link_gbps[l] * x->c->link_count[l]));
    x->used[y] = false;
  }
}

/* ppi_route_path's route from i to j: a connected walk from i to j whose
** links (into links[]) are returned with their count. */
static int path_of(pp_ctx *ctx, struct ppi_routes *rt, const pp_cluster *c,
                   int32_t i, int32_t j, int32_t *links, int cap)
{
  int32_t res[MAXV + 8], n, k, v = i;
  assert_int_equal(ppi_route_path(ctx, rt, i, j, res, cap, &n), PP_OK);
  for (k = 0; k < n; k++) {
    int32_t l = res[k] / 2;
    assert_int_equal(res[k] % 2 ? c->link_b[l] : c->link_a[l], v);
    v = res[k] % 2 ? c->link_a[l] : c->link_b[l];
    links[k] = l;
  }
  assert_int_equal(v, j);
  return n;
}

/* The widest route equals the brute force's on random graphs with
** switches, ties and bonded links, whatever order the pairs come in
** (the scratch's stamps carry over between routes). */
static void t_route_widest(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  int it;
  rseed(0x5eed0005);
  for (it = 0; it < 400; it++) {
    struct graph gr;
    pp_cluster *c = NULL;
    struct ppi_routes rt;
    struct brute x;
    int32_t i, j, k, links[MAXV];
    int nv = 3 + (int)tu_rand(&rng_state, 8);
    int nd = 2 + (int)tu_rand(&rng_state, (uint32_t)nv - 1), n;
    random_graph(&gr, nv, nd, (int)tu_rand(&rng_state, (uint32_t)nv + 4),
                 false);
    assert_int_equal(build(ctx, &gr, PP_ROUTE_WIDEST, false, &c), PP_OK);
    assert_int_equal(ppi_routes_init(ctx, &rt, c), PP_OK);
    for (k = 0; k < nd * nd; k++) {
      i = (int32_t)tu_rand(&rng_state, (uint32_t)nd);
      j = (int32_t)tu_rand(&rng_state, (uint32_t)nd);
      if (i == j)
        continue;
      memset(&x, 0, sizeof x);
      x.c = c;
      x.t = j;
      x.wbest = -1;
      x.used[i] = true;
      brute_dfs(&x, i, 0, INFINITY);
      n = path_of(ctx, &rt, c, i, j, links, MAXV);
      if (x.wbest != pp_cluster_bandwidth(c, i, j))
        fail_msg("graph %d: widest %d -> %d is %g, B = %g", it, (int)i, (int)j,
                 x.wbest, pp_cluster_bandwidth(c, i, j));
      if (n != x.nbest || memcmp(links, x.best, (size_t)n * sizeof links[0]))
        fail_msg("graph %d: route %d -> %d has %d links (first %d), brute "
                 "force %d (first %d)",
                 it, (int)i, (int)j, n, n ? (int)links[0] : -1, (int)x.nbest,
                 x.nbest ? (int)x.best[0] : -1);
    }
    ppi_routes_free(ctx, &rt);
    pp_cluster_destroy(c);
  }
}

/* Two nodes of 4 GPUs, NVLink between every pair of a node's GPUs, each
** GPU its own NIC to one spine (clariden's shape, cluster_gen.c): GPU i
** of node 0 reaches GPU i of node 1 through NIC i of both nodes, so the
** 4 pairs use 4 distinct NICs on each side.  A spanning tree would keep
** one NIC a node. */
static void t_rail(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_cluster_builder *b = start(ctx, 8, 1);
  pp_cluster *c = NULL;
  struct ppi_routes rt;
  int32_t links[9], i, j, l, n, nic[4];
  char x[16], y[16];
  for (i = 0; i < 8; i++) {
    snprintf(x, sizeof x, "d%d", (int)i);
    assert_int_equal(pp_cluster_builder_add_link(b, x, "s0", 22.93, 1), PP_OK);
    for (j = i + 1; j < 8; j++)
      if (i / 4 == j / 4) {
        snprintf(y, sizeof y, "d%d", (int)j);
        assert_int_equal(pp_cluster_builder_add_link(b, x, y, 125.46, 1),
                         PP_OK);
      }
  }
  assert_int_equal(pp_cluster_builder_finish(b, &c), PP_OK);
  /* Link of d's NIC: the one joining device d and the switch. */
  assert_int_equal(ppi_routes_init(ctx, &rt, c), PP_OK);
  for (i = 0; i < 4; i++) {
    int32_t mine = -1, theirs = -1;
    for (l = 0; l < c->nlink; l++) {
      if (c->link_a[l] == i && c->link_b[l] == 8)
        mine = l;
      if (c->link_a[l] == i + 4 && c->link_b[l] == 8)
        theirs = l;
    }
    assert_true(mine >= 0 && theirs >= 0);
    n = path_of(ctx, &rt, c, i, i + 4, links, 9);
    assert_int_equal(n, 2);
    /* The source's own NIC, then the destination's. */
    assert_int_equal(links[0], mine);
    assert_int_equal(links[1], theirs);
    nic[i] = mine;
    for (j = 0; j < i; j++)
      assert_int_not_equal(nic[j], nic[i]);
    /* Inside the node: the direct NVLink. */
    n = path_of(ctx, &rt, c, i, (i + 1) % 4, links, 9);
    assert_int_equal(n, 1);
    assert_true(c->link_gbps[links[0]] == 125.46);
  }
  ppi_routes_free(ctx, &rt);
  pp_cluster_destroy(c);
  /* The same through the generator: every GPU of clariden:2 leaves
  ** through its own NIC. */
  assert_int_equal(pp_cluster_load(ctx, "clariden:2", &c), PP_OK);
  assert_int_equal(ppi_routes_init(ctx, &rt, c), PP_OK);
  for (i = 0; i < 4; i++) {
    n = path_of(ctx, &rt, c, i, i + 4, links, 9);
    assert_int_equal(n, 2);
    nic[i] = links[0];
    assert_true(c->link_a[nic[i]] == i || c->link_b[nic[i]] == i);
    for (j = 0; j < i; j++)
      assert_int_not_equal(nic[j], nic[i]);
  }
  ppi_routes_free(ctx, &rt);
  pp_cluster_destroy(c);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      TU_CTX_TEST(t_known),           TU_CTX_TEST(t_random_small),
      TU_CTX_TEST(t_random_parallel), TU_CTX_TEST(t_random_larger),
      TU_CTX_TEST(t_bonded),          TU_CTX_TEST(t_bonded_overflow),
      TU_CTX_TEST(t_disconnected),    TU_CTX_TEST(t_single),
      TU_CTX_TEST(t_route_widest),    TU_CTX_TEST(t_rail),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
