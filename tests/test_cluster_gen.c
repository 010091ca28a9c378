/* SPDX-License-Identifier: MIT */
/*
** Cluster generators and the one-line spec parser (cluster_gen.c,
** spec.c), checked against the numbers the file header of
** cluster_gen.c and docs/FORMATS.md state, recomputed here
** independently:
**
** - every generator loads with its defaults: devices, nodes, types,
**   memory, bandwidth classes;
** - hier / nvswitch: intra within a node (max(intra, inter)), inter
**   across; nvswitch A100 300/25, H100 450/50;
** - dgx1: our own copy of the NVLink count matrix (checked symmetric,
**   6 NVLinks per GPU, 24 links on 16 pairs, isomorphic to msccl-tools'
**   dgx1()), 25 GB/s per NVLink, PCIe otherwise, 3.125 across nodes;
** - meshes and tori with hop routing: link / Manhattan distance (with
**   wrap-around on a torus), every pair;
** - random_blk_1/2, uniform_dist: documented ranges, equal blocks,
**   symmetric, seeded;
** - AMP clusters against data/amp/clusters.json (read with jansson);
** - bad specs: status codes and messages;
** - write / read back / write again: same matrix, same bytes;
** - 4096-device generators load.
*/
#include "testutil.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sanitizers make the 4096-device torus slow: a smaller one then. */
#if defined(__SANITIZE_ADDRESS__)
#define TU_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TU_SANITIZED 1
#endif
#endif
#ifndef TU_SANITIZED
#define TU_SANITIZED 0
#endif

/* ---- helpers ---------------------------------------------------------- */

static pp_cluster *load_ok(pp_ctx *ctx, const char *spec)
{
  pp_cluster *c = NULL;
  pp_status rc = pp_cluster_load(ctx, spec, &c);
  if (rc != PP_OK)
    fail_msg("'%s': status %d: %s", spec, (int)rc, pp_ctx_errmsg(ctx));
  assert_non_null(c);
  return c;
}

/* Symmetric, zero diagonal, positive and finite off it. */
static void check_shape(const pp_cluster *c, const char *spec)
{
  int32_t n = pp_cluster_ndev(c), i, j;
  const double *m = pp_cluster_bandwidth_matrix(c);
  assert_non_null(m);
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      double x = m[(size_t)i * n + j];
      if (i == j) {
        if (x != 0)
          fail_msg("%s: diagonal [%d] = %g", spec, (int)i, x);
      } else if (!(x > 0) || !isfinite(x) || x != m[(size_t)j * n + i])
        fail_msg("%s: B(%d,%d) = %.17g, B(%d,%d) = %.17g", spec, (int)i, (int)j,
                 x, (int)j, (int)i, m[(size_t)j * n + i]);
    }
}

struct cls {
  double gbps;
  int64_t npairs, nintra;
};

/* The bandwidth classes are exactly `want' (highest first). */
static void check_classes(pp_ctx *ctx, const pp_cluster *c, const char *spec,
                          const struct cls *want, int nwant)
{
  pp_bw_class got[64];
  int32_t n = 0, i;
  assert_int_equal(pp_cluster_bw_classes(ctx, c, got, 64, &n), PP_OK);
  if (n != nwant) {
    for (i = 0; i < n && i < 64; i++)
      print_message("  class %.17g: %lld pairs, %lld intra\n", got[i].gbps,
                    (long long)got[i].npairs, (long long)got[i].nintra);
    fail_msg("%s: %d bandwidth classes, expected %d", spec, (int)n, nwant);
  }
  for (i = 0; i < n; i++)
    if (got[i].gbps != want[i].gbps || got[i].npairs != want[i].npairs ||
        got[i].nintra != want[i].nintra)
      fail_msg("%s: class %d is %.17g x %lld (%lld intra), expected %.17g x "
               "%lld (%lld intra)",
               spec, (int)i, got[i].gbps, (long long)got[i].npairs,
               (long long)got[i].nintra, want[i].gbps,
               (long long)want[i].npairs, (long long)want[i].nintra);
}

/* The catalog as docs/FORMATS.md lists it (memory GiB, speed, peak). */
static const struct {
  const char *name;
  double mem, speed, peak;
} catalog[] = {
    {"V100", 15.78, 1, 125},       {"V100-16", 15.78, 1, 125},
    {"V100-32", 31.75, 1, 125},    {"T4", 15, 0.72, 65},
    {"A100-40", 40, 3.206, 312},   {"A100-80", 80, 3.457, 312},
    {"H100", 79.65, 7.026, 989},   {"GH-96", 95.5771484375, 7.026, 989},
    {"RTX-2080", 7.79, 0.835, 40}, {"RTX-3090", 24, 1.545, 71},
    {"Titan-RTX", 24, 0.888, 130},
};
#define NCATALOG ((int)(sizeof catalog / sizeof catalog[0]))

/* Type t of c is the catalog's `name' with its memory, speed, peak. */
static void check_type(const pp_cluster *c, int32_t t, const char *name)
{
  pp_device_type_desc d;
  int k;
  for (k = 0; k < NCATALOG && strcmp(catalog[k].name, name); k++)
    ;
  assert_true(k < NCATALOG);
  assert_int_equal(pp_cluster_type(c, t, &d), PP_OK);
  assert_string_equal(d.name, name);
  assert_true(d.memory_gib == catalog[k].mem);
  assert_true(d.speed == catalog[k].speed);
  assert_true(d.peak_tflops == catalog[k].peak);
  assert_int_equal(pp_cluster_type_memory(c, t),
                   (int64_t)floor(catalog[k].mem * 1073741824.0));
}

/* Devices named nNgG with host nodeN and local_gpu G, node by node. */
static void check_node_devices(const pp_cluster *c, int nn, int ng,
                               const char *type)
{
  int32_t i;
  char name[32], host[32];
  assert_int_equal(pp_cluster_ndev(c), nn * ng);
  assert_int_equal(pp_cluster_nnode(c), nn);
  for (i = 0; i < nn * ng; i++) {
    pp_device_desc d;
    assert_int_equal(pp_cluster_device(c, i, &d), PP_OK);
    snprintf(name, sizeof name, "n%dg%d", (int)(i / ng), (int)(i % ng));
    snprintf(host, sizeof host, "node%d", (int)(i / ng));
    assert_string_equal(d.name, name);
    assert_non_null(d.host);
    assert_string_equal(d.host, host);
    assert_int_equal(d.node, i / ng);
    assert_int_equal(d.local_gpu, i % ng);
    if (type)
      assert_string_equal(d.type, type);
    assert_int_equal(pp_cluster_device_node(c, i), i / ng);
  }
}

/* ---- the list of generators and their defaults ------------------------ */

static const struct {
  const char *name;
  int ndev, nnode;
  const char *types[2];
  bool links;
} defaults[] = {
    {"hier", 16, 4, {"V100", NULL}, true},
    {"dgx1", 8, 1, {"V100", NULL}, false},
    {"nvswitch", 16, 2, {"A100-80", NULL}, true},
    {"mesh2d", 64, 64, {"V100", NULL}, true},
    {"torus2d", 64, 64, {"V100", NULL}, true},
    {"mesh3d", 64, 64, {"V100", NULL}, true},
    {"torus3d", 64, 64, {"V100", NULL}, true},
    {"random_blk_1", 64, 8, {"V100", NULL}, false},
    {"random_blk_2", 64, 8, {"V100", NULL}, false},
    {"uniform_dist", 64, 64, {"V100", NULL}, false},
    {"amp-homogeneous", 16, 4, {"T4", NULL}, true},
    {"amp-het-cluster", 16, 4, {"V100", "T4"}, true},
    {"amp-het-model", 16, 4, {"V100", NULL}, true},
    {"clariden", 128, 32, {"GH-96", NULL}, true},
};
#define NDEFAULTS ((int)(sizeof defaults / sizeof defaults[0]))

static void t_defaults(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  int i, k;
  /* The list is exactly ours, in order, each with a one-line about that
  ** starts with its name. */
  for (i = 0; pp_cluster_generator_name(i); i++) {
    const char *name = pp_cluster_generator_name(i);
    const char *about = pp_cluster_generator_about(i);
    assert_true(i < NDEFAULTS);
    assert_string_equal(name, defaults[i].name);
    assert_non_null(about);
    assert_true(strncmp(about, name, strlen(name)) == 0);
    assert_null(strchr(about, '\n'));
  }
  assert_int_equal(i, NDEFAULTS);
  assert_null(pp_cluster_generator_name(-1));
  assert_null(pp_cluster_generator_about(-1));
  assert_null(pp_cluster_generator_about(NDEFAULTS));

  for (i = 0; i < NDEFAULTS; i++) {
    const char *name = defaults[i].name;
    pp_cluster *c = load_ok(ctx, name);
    int ntype = defaults[i].types[1] ? 2 : 1;
    assert_string_equal(pp_cluster_name(c), name);
    assert_int_equal(pp_cluster_ndev(c), defaults[i].ndev);
    assert_int_equal(pp_cluster_nnode(c), defaults[i].nnode);
    assert_int_equal(pp_cluster_ntype(c), ntype);
    for (k = 0; k < ntype; k++) {
      int32_t t = pp_cluster_find_type(c, defaults[i].types[k]);
      if (t < 0)
        fail_msg("%s: no type %s", name, defaults[i].types[k]);
      check_type(c, t, defaults[i].types[k]);
    }
    assert_int_equal(pp_cluster_nlink(c) > 0, defaults[i].links);
    assert_true(pp_cluster_latency(c) == 0);
    check_shape(c, name);
    pp_cluster_destroy(c);
  }
}

/* ---- hier and nvswitch ------------------------------------------------ */

/* Nodes of ng GPUs: max(intra, inter) inside a node, inter across; the
** link graph has a switch per node (ng > 1) and a spine (nn > 1). */
static void check_nodes(pp_ctx *ctx, const char *spec, int nn, int ng,
                        double intra, double inter, const char *type)
{
  pp_cluster *c = load_ok(ctx, spec);
  int32_t i, j, n = nn * ng;
  double in = fmax(intra, inter);
  int64_t pin = (int64_t)nn * ng * (ng - 1), pall = (int64_t)n * (n - 1);
  struct cls want[2];
  int nw = 0;
  check_node_devices(c, nn, ng, type);
  check_shape(c, spec);
  assert_int_equal(pp_cluster_ntype(c), 1);
  check_type(c, 0, type);
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      double w = i == j ? 0 : i / ng == j / ng ? in : inter;
      if (pp_cluster_bandwidth(c, i, j) != w)
        fail_msg("%s: B(%d,%d) = %.17g, expected %.17g", spec, (int)i, (int)j,
                 pp_cluster_bandwidth(c, i, j), w);
    }
  /* Classes, highest first. */
  if (in == inter || pin == 0) {
    if (pall > 0) {
      want[nw].gbps = pin > 0 ? in : inter;
      want[nw].npairs = pall;
      want[nw++].nintra = pin;
    }
  } else {
    want[nw].gbps = in;
    want[nw].npairs = pin;
    want[nw++].nintra = pin;
    if (pall > pin) {
      want[nw].gbps = inter;
      want[nw].npairs = pall - pin;
      want[nw++].nintra = 0;
    }
  }
  check_classes(ctx, c, spec, want, nw);
  if (n > 1) {
    assert_int_equal(pp_cluster_nswitch(c), (nn > 1) + (ng > 1 ? nn : 0));
    assert_int_equal(pp_cluster_nlink(c), (ng > 1 ? n : 0) + (nn > 1 ? n : 0));
    assert_int_equal(pp_cluster_routing(c), PP_ROUTE_WIDEST);
  }
  pp_cluster_destroy(c);
}

static void t_hier(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  check_nodes(ctx, "hier", 4, 4, 50, 12.5, "V100");
  check_nodes(ctx, "hier:4x8,intra=300", 4, 8, 300, 12.5, "V100");
  check_nodes(ctx, "hier:3x5,intra=100,inter=7.5", 3, 5, 100, 7.5, "V100");
  /* inter above intra: the spine is the wider way inside a node too. */
  check_nodes(ctx, "hier:2x4,intra=10,inter=20", 2, 4, 10, 20, "V100");
  check_nodes(ctx, "hier:1x8", 1, 8, 50, 12.5, "V100");
  check_nodes(ctx, "hier:8x1", 8, 1, 50, 12.5, "V100");
  check_nodes(ctx, "hier:1x1", 1, 1, 50, 12.5, "V100");
  check_nodes(ctx, "hier:2x2,gpu=T4", 2, 2, 50, 12.5, "T4");
  /* Options may come before the sizes. */
  check_nodes(ctx, "hier:intra=300,2x3", 2, 3, 300, 12.5, "V100");
  check_nodes(ctx, "nvswitch", 2, 8, 300, 25, "A100-80");
  check_nodes(ctx, "nvswitch:gpu=A100-40", 2, 8, 300, 25, "A100-40");
  check_nodes(ctx, "nvswitch:gpu=H100", 2, 8, 450, 50, "H100");
  check_nodes(ctx, "nvswitch:3,gpu=GH-96", 3, 8, 450, 50, "GH-96");
  check_nodes(ctx, "nvswitch:4", 4, 8, 300, 25, "A100-80");
  check_nodes(ctx, "nvswitch:2x4,intra=100", 2, 4, 100, 25, "A100-80");
  check_nodes(ctx, "nvswitch:2x4,gpu=H100,inter=40", 2, 4, 450, 40, "H100");

  /* Overrides of the catalog and the latency. */
  {
    pp_cluster *c = load_ok(ctx, "hier:2x2,mem=32,speed=2.5,peak=100,"
                                 "latency=3.5");
    pp_device_type_desc d;
    assert_int_equal(pp_cluster_type(c, 0, &d), PP_OK);
    assert_string_equal(d.name, "V100");
    assert_true(d.memory_gib == 32 && d.speed == 2.5 && d.peak_tflops == 100);
    assert_int_equal(pp_cluster_type_memory(c, 0), (int64_t)32 << 30);
    assert_true(pp_cluster_latency(c) == 3.5);
    pp_cluster_destroy(c);
    c = load_ok(ctx, "hier:2x2,latency=0");
    assert_true(pp_cluster_latency(c) == 0);
    pp_cluster_destroy(c);
  }
}

/* ---- dgx1 ------------------------------------------------------------- */

/* NVLinks between the GPUs of a DGX-1 V100, nvidia-smi numbering (the
** NCCL topology of NVIDIA/nccl issue 671). */
static const int dgx1_nvlinks[8][8] = {
    /* 0  1  2  3  4  5  6  7 */
    {0, 1, 1, 2, 2, 0, 0, 0}, /* 0 */
    {1, 0, 2, 1, 0, 2, 0, 0}, /* 1 */
    {1, 2, 0, 2, 0, 0, 1, 0}, /* 2 */
    {2, 1, 2, 0, 0, 0, 0, 1}, /* 3 */
    {2, 0, 0, 0, 0, 1, 1, 2}, /* 4 */
    {0, 2, 0, 0, 1, 0, 2, 1}, /* 5 */
    {0, 0, 1, 0, 1, 2, 0, 2}, /* 6 */
    {0, 0, 0, 1, 2, 1, 2, 0}, /* 7 */
};

/* msccl-tools, msccl/topologies/nvidia.py, dgx1(). */
static const int msccl_dgx1[8][8] = {
    {0, 2, 1, 1, 2, 0, 0, 0}, {2, 0, 1, 2, 0, 1, 0, 0},
    {1, 1, 0, 2, 0, 0, 2, 0}, {1, 2, 2, 0, 0, 0, 0, 1},
    {2, 0, 0, 0, 0, 2, 1, 1}, {0, 1, 0, 0, 2, 0, 1, 2},
    {0, 0, 2, 0, 1, 1, 0, 2}, {0, 0, 0, 1, 1, 2, 2, 0},
};

static void t_dgx1_table(void **state)
{
  int i, j, pairs = 0, links = 0, p[8], iso = 0;
  (void)state;
  for (i = 0; i < 8; i++) {
    int deg = 0;
    assert_int_equal(dgx1_nvlinks[i][i], 0);
    for (j = 0; j < 8; j++) {
      assert_int_equal(dgx1_nvlinks[i][j], dgx1_nvlinks[j][i]);
      assert_true(dgx1_nvlinks[i][j] >= 0 && dgx1_nvlinks[i][j] <= 2);
      deg += dgx1_nvlinks[i][j];
      if (j > i && dgx1_nvlinks[i][j]) {
        pairs++;
        links += dgx1_nvlinks[i][j];
      }
    }
    assert_int_equal(deg, 6); /* six NVLink2 ports per V100 */
  }
  assert_int_equal(pairs, 16);
  assert_int_equal(links, 24);
  /* The same graph as msccl-tools' dgx1(), up to renumbering. */
  for (i = 0; i < 8; i++)
    p[i] = i;
  do {
    bool ok = true;
    for (i = 0; i < 8 && ok; i++)
      for (j = 0; j < 8 && ok; j++)
        ok = dgx1_nvlinks[p[i]][p[j]] == msccl_dgx1[i][j];
    iso += ok;
  } while (tu_next_perm(p, 8));
  assert_true(iso > 0);
}

static void check_dgx1(pp_ctx *ctx, const char *spec, int nn, double pcie,
                       double inter)
{
  pp_cluster *c = load_ok(ctx, spec);
  int32_t i, j, n = 8 * nn;
  int64_t c2 = 0, c1 = 0, c0 = 0;
  struct cls want[4];
  int nw = 0;
  check_node_devices(c, nn, 8, "V100");
  check_shape(c, spec);
  assert_int_equal(pp_cluster_nlink(c), 0);
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      int k = dgx1_nvlinks[i % 8][j % 8];
      double w = i == j ? 0 : i / 8 != j / 8 ? inter : k ? 25.0 * k : pcie;
      if (i != j && i / 8 == j / 8) {
        c2 += k == 2;
        c1 += k == 1;
        c0 += k == 0;
      }
      if (pp_cluster_bandwidth(c, i, j) != w)
        fail_msg("%s: B(%d,%d) = %.17g, expected %.17g", spec, (int)i, (int)j,
                 pp_cluster_bandwidth(c, i, j), w);
    }
  assert_int_equal(c2, 16 * nn); /* ordered pairs */
  assert_int_equal(c1, 16 * nn);
  assert_int_equal(c0, 24 * nn);
  /* Classes, for settings where the four values are distinct and pcie
  ** lies below 25 and above inter. */
  want[nw].gbps = 50, want[nw].npairs = c2, want[nw++].nintra = c2;
  want[nw].gbps = 25, want[nw].npairs = c1, want[nw++].nintra = c1;
  want[nw].gbps = pcie, want[nw].npairs = c0, want[nw++].nintra = c0;
  if (nn > 1) {
    want[nw].gbps = inter;
    want[nw].npairs = (int64_t)n * (n - 1) - 56 * nn;
    want[nw++].nintra = 0;
  }
  check_classes(ctx, c, spec, want, nw);
  pp_cluster_destroy(c);
}

static void t_dgx1(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  check_dgx1(ctx, "dgx1", 1, 10, 3.125);
  check_dgx1(ctx, "dgx1:2", 2, 10, 3.125);
  check_dgx1(ctx, "dgx1:3,pcie=12,inter=5", 3, 12, 5);
  check_dgx1(ctx, "dgx1:pcie=7.5", 1, 7.5, 3.125);
}

/* ---- meshes and tori -------------------------------------------------- */

static int axis_dist(int a, int b, int side, bool torus)
{
  int d = abs(a - b);
  return torus && side - d < d ? side - d : d;
}

static void check_grid(pp_ctx *ctx, const char *spec, int nd, int dx, int dy,
                       int dz, bool torus, double link, bool hops)
{
  pp_cluster *c = load_ok(ctx, spec);
  int32_t n = dx * dy * dz, i, j;
  int side[3], a;
  int(*xyz)[3] = calloc((size_t)n, sizeof *xyz);
  unsigned char *seen = calloc((size_t)n, 1);
  const double *m;
  long bad = 0, nlink = 0;
  assert_non_null(xyz);
  assert_non_null(seen);
  side[0] = dx, side[1] = dy, side[2] = dz;
  assert_int_equal(pp_cluster_ndev(c), n);
  assert_int_equal(pp_cluster_nnode(c), n);
  assert_int_equal(pp_cluster_nswitch(c), 0);
  check_type(c, 0, "V100");
  /* Coordinates from the names: dX_Y or dX_Y_Z. */
  for (i = 0; i < n; i++) {
    pp_device_desc dd;
    const char *name;
    int k;
    assert_int_equal(pp_cluster_device(c, i, &dd), PP_OK);
    name = dd.name;
    assert_null(dd.host);
    xyz[i][2] = 0;
    k = nd == 3 ? sscanf(name, "d%d_%d_%d", &xyz[i][0], &xyz[i][1], &xyz[i][2])
                : sscanf(name, "d%d_%d", &xyz[i][0], &xyz[i][1]);
    assert_int_equal(k, nd);
    for (a = 0; a < 3; a++)
      assert_true(xyz[i][a] >= 0 && xyz[i][a] < side[a]);
    k = (xyz[i][2] * dy + xyz[i][1]) * dx + xyz[i][0];
    assert_int_equal(seen[k], 0);
    seen[k] = 1;
  }
  /* Every pair: link / hops (Manhattan, wrapped on a torus). */
  m = pp_cluster_bandwidth_matrix(c);
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      int d = 0;
      double w;
      for (a = 0; a < 3; a++)
        d += axis_dist(xyz[i][a], xyz[j][a], side[a], torus);
      w = i == j ? 0 : hops ? link / d : link;
      if (m[(size_t)i * n + j] != w && bad++ == 0)
        print_message("%s: B(%d,%d) = %.17g, expected %.17g (%d hops)\n", spec,
                      (int)i, (int)j, m[(size_t)i * n + j], w, d);
    }
  if (bad)
    fail_msg("%s: %ld pairs differ from link / hops", spec, bad);
  /* Links: (side - 1) per line of a mesh; side per line of a torus when
  ** side > 2 (a side of 2 has one link, not two). */
  for (a = 0; a < nd; a++) {
    long lines = n / side[a];
    long per = side[a] == 1   ? 0
               : !torus       ? side[a] - 1
               : side[a] == 2 ? 1
                              : side[a];
    nlink += lines * per;
  }
  assert_int_equal(pp_cluster_nlink(c), nlink);
  if (n > 1)
    assert_int_equal(pp_cluster_routing(c),
                     hops ? PP_ROUTE_HOPS : PP_ROUTE_WIDEST);
  for (i = 0; i < pp_cluster_nlink(c); i++) {
    int32_t x, y, k;
    double g;
    int d = 0;
    assert_int_equal(pp_cluster_link(c, i, &x, &y, &g, &k), PP_OK);
    assert_true(g == link && k == 1);
    for (a = 0; a < 3; a++)
      d += axis_dist(xyz[x][a], xyz[y][a], side[a], torus);
    assert_int_equal(d, 1); /* grid neighbours only */
  }
  free(xyz);
  free(seen);
  pp_cluster_destroy(c);
}

static void t_grids(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  check_grid(ctx, "mesh2d", 2, 8, 8, 1, false, 25, true);
  check_grid(ctx, "torus2d", 2, 8, 8, 1, true, 25, true);
  check_grid(ctx, "mesh3d", 3, 4, 4, 4, false, 25, true);
  check_grid(ctx, "torus3d", 3, 4, 4, 4, true, 25, true);
  check_grid(ctx, "mesh2d:3x5,link=10", 2, 3, 5, 1, false, 10, true);
  check_grid(ctx, "torus2d:3x5,link=10", 2, 3, 5, 1, true, 10, true);
  check_grid(ctx, "torus2d:7x6", 2, 7, 6, 1, true, 25, true);
  check_grid(ctx, "torus2d:2x5", 2, 2, 5, 1, true, 25, true);
  check_grid(ctx, "torus2d:1x6", 2, 1, 6, 1, true, 25, true);
  check_grid(ctx, "mesh2d:1x1", 2, 1, 1, 1, false, 25, true);
  check_grid(ctx, "mesh3d:4x3x5,link=12.5", 3, 4, 3, 5, false, 12.5, true);
  check_grid(ctx, "torus3d:5x3x4,link=12.5", 3, 5, 3, 4, true, 12.5, true);
  check_grid(ctx, "torus3d:2x2x3", 3, 2, 2, 3, true, 25, true);
  check_grid(ctx, "torus3d:6x1x3", 3, 6, 1, 3, true, 25, true);
  check_grid(ctx, "mesh2d:4x4,routing=widest", 2, 4, 4, 1, false, 25, false);
  check_grid(ctx, "torus3d:3x3x3,routing=widest,link=7", 3, 3, 3, 3, true, 7,
             false);
  check_grid(ctx, "mesh3d:3x3x3,routing=hops", 3, 3, 3, 3, false, 25, true);
}

/* ---- random clusters -------------------------------------------------- */

static int64_t count_nodes(const pp_cluster *c, int32_t *size_of_node)
{
  int32_t i, n = pp_cluster_ndev(c);
  int64_t k = 0;
  for (i = 0; i < n; i++)
    size_of_node[i] = 0;
  for (i = 0; i < n; i++) {
    int32_t v = pp_cluster_device_node(c, i);
    assert_true(v >= 0 && v < n);
    k += size_of_node[v]++ == 0;
  }
  return k;
}

static bool in_range(double x, double lo, double hi)
{
  return x >= lo && x <= hi;
}

/* random_blk_1/2: nodes are blocks of `block' devices; blk_2 groups
** `super' blocks into super-blocks, found here from the values. */
static void check_blocks(pp_ctx *ctx, const char *spec, int two, int d,
                         int block, int super)
{
  pp_cluster *c = load_ok(ctx, spec);
  int32_t i, j, *size = calloc((size_t)d, sizeof *size);
  int32_t *sup = calloc((size_t)d, sizeof *sup);
  double mn = INFINITY, mx = 0;
  assert_non_null(size);
  assert_non_null(sup);
  assert_int_equal(pp_cluster_ndev(c), d);
  check_shape(c, spec);
  check_type(c, 0, "V100");
  assert_int_equal(count_nodes(c, size), d / block);
  for (i = 0; i < d; i++) {
    pp_device_desc dd;
    char name[32];
    assert_true(size[i] == 0 || size[i] == block);
    assert_int_equal(pp_cluster_device(c, i, &dd), PP_OK);
    snprintf(name, sizeof name, "d%d", (int)i);
    assert_string_equal(dd.name, name);
    assert_null(dd.host); /* no host, no GPU index: not a real machine */
    assert_int_equal(dd.local_gpu, -1);
    sup[i] = -1;
  }
  /* Super-block of each node: the smallest node joined to it by a
  ** U[10,20] or same-node pair; must be consistent for every pair. */
  for (i = 0; i < d; i++)
    for (j = 0; j < d; j++) {
      double x = pp_cluster_bandwidth(c, i, j);
      int32_t ni = pp_cluster_device_node(c, i),
              nj = pp_cluster_device_node(c, j);
      if (i == j)
        continue;
      mn = fmin(mn, x);
      mx = fmax(mx, x);
      if (ni == nj) {
        if (!in_range(x, 40, 50))
          fail_msg("%s: B(%d,%d) = %g inside a block", spec, (int)i, (int)j, x);
      } else if (!two) {
        if (!in_range(x, 2, 10))
          fail_msg("%s: B(%d,%d) = %g between blocks", spec, (int)i, (int)j, x);
      } else if (!in_range(x, 10, 20) && !in_range(x, 1, 5))
        fail_msg("%s: B(%d,%d) = %g between blocks", spec, (int)i, (int)j, x);
    }
  if (two) {
    /* sup[node] = the smallest node in its super-block. */
    int32_t nodes_in_sup;
    for (i = 0; i < d; i++) {
      int32_t ni = pp_cluster_device_node(c, i), s = ni;
      for (j = 0; j < d; j++) {
        int32_t nj = pp_cluster_device_node(c, j);
        if (i != j && nj < s && in_range(pp_cluster_bandwidth(c, i, j), 10, 50))
          s = nj;
      }
      if (sup[ni] < 0)
        sup[ni] = s;
      else if (sup[ni] != s)
        fail_msg("%s: node %d: inconsistent super-block", spec, (int)ni);
    }
    /* The relation is consistent pair by pair and groups `super'
    ** blocks. */
    for (i = 0; i < d; i++)
      for (j = 0; j < d; j++) {
        int32_t ni = pp_cluster_device_node(c, i),
                nj = pp_cluster_device_node(c, j);
        bool same = sup[ni] == sup[nj];
        double x = pp_cluster_bandwidth(c, i, j);
        if (i == j || ni == nj)
          continue;
        if (same != in_range(x, 10, 20))
          fail_msg("%s: B(%d,%d) = %g but the blocks are %s", spec, (int)i,
                   (int)j, x, same ? "in one super-block" : "apart");
      }
    for (i = 0; i < d; i++) {
      if (size[i] == 0 || sup[i] != i)
        continue;
      nodes_in_sup = 0;
      for (j = 0; j < d; j++)
        nodes_in_sup += size[j] > 0 && sup[j] == i;
      assert_int_equal(nodes_in_sup, super);
    }
  }
  /* Random, not constant: the draws spread over their ranges. */
  if (d / block > 1)
    assert_true(mn < (two ? 2 : 3));
  if (block > 1)
    assert_true(mx > 49);
  free(size);
  free(sup);
  pp_cluster_destroy(c);
}

static void check_uniform(pp_ctx *ctx, const char *spec, int d, double lo,
                          double hi)
{
  pp_cluster *c = load_ok(ctx, spec);
  int32_t i, j;
  double mn = INFINITY, mx = -INFINITY;
  assert_int_equal(pp_cluster_ndev(c), d);
  check_shape(c, spec);
  check_type(c, 0, "V100");
  for (i = 0; i < d; i++) {
    pp_device_desc dd;
    assert_int_equal(pp_cluster_device(c, i, &dd), PP_OK);
    assert_null(dd.host);
    assert_int_equal(dd.local_gpu, -1);
  }
  for (i = 0; i < d; i++)
    for (j = 0; j < d; j++) {
      double x = pp_cluster_bandwidth(c, i, j);
      if (i == j)
        continue;
      if (!in_range(x, lo, hi))
        fail_msg("%s: B(%d,%d) = %g outside [%g, %g]", spec, (int)i, (int)j, x,
                 lo, hi);
      mn = fmin(mn, x);
      mx = fmax(mx, x);
    }
  if (d >= 32) {
    assert_true(mn < lo + (hi - lo) * 0.05);
    assert_true(mx > hi - (hi - lo) * 0.05);
  }
  if (lo == hi)
    assert_true(mn == lo && mx == hi);
  pp_cluster_destroy(c);
}

static void t_random(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  check_blocks(ctx, "random_blk_1", 0, 64, 8, 0);
  check_blocks(ctx, "random_blk_1:48,block=6", 0, 48, 6, 0);
  check_blocks(ctx, "random_blk_1:40,block=40", 0, 40, 40, 0);
  check_blocks(ctx, "random_blk_1:30,block=1,seed=9", 0, 30, 1, 0);
  check_blocks(ctx, "random_blk_2", 1, 64, 8, 4);
  check_blocks(ctx, "random_blk_2:64,block=4,super=2", 1, 64, 4, 2);
  check_blocks(ctx, "random_blk_2:72,block=3,super=3,seed=77", 1, 72, 3, 3);
  check_uniform(ctx, "uniform_dist", 64, 1, 100);
  check_uniform(ctx, "uniform_dist:40,lo=5,hi=6", 40, 5, 6);
  check_uniform(ctx, "uniform_dist:8,lo=3,hi=3", 8, 3, 3);
  check_uniform(ctx, "uniform_dist:2", 2, 1, 100);
}

static bool same_matrix(const pp_cluster *a, const pp_cluster *b)
{
  size_t n = (size_t)pp_cluster_ndev(a);
  return pp_cluster_ndev(a) == pp_cluster_ndev(b) &&
         memcmp(pp_cluster_bandwidth_matrix(a), pp_cluster_bandwidth_matrix(b),
                n * n * sizeof(double)) == 0;
}

static bool same_nodes(const pp_cluster *a, const pp_cluster *b)
{
  int32_t i;
  if (pp_cluster_ndev(a) != pp_cluster_ndev(b))
    return false;
  for (i = 0; i < pp_cluster_ndev(a); i++)
    if (pp_cluster_device_node(a, i) != pp_cluster_device_node(b, i))
      return false;
  return true;
}

/* The same seed gives the same cluster; another seed, from the spec or
** from the context, another one. */
static void t_seeds(void **state)
{
  static const char *const rgen[] = {"random_blk_1", "random_blk_2",
                                     "uniform_dist"};
  struct tu_alloc al;
  pp_ctx *ctx = tu_ctx(&al), *ctx2 = NULL;
  const size_t base = al.bytes;
  pp_ctx_params p;
  int k;
  char spec[64];
  (void)state;
  pp_ctx_params_init(&p);
  assert_true(p.seed == 1);
  p.seed = 2;
  assert_int_equal(pp_ctx_create(&p, &ctx2), PP_OK);
  assert_true(pp_ctx_seed(ctx2) == 2);
  for (k = 0; k < 3; k++) {
    pp_cluster *a = load_ok(ctx, rgen[k]);
    pp_cluster *a2 = load_ok(ctx, rgen[k]);
    pp_cluster *s1, *s2, *c2, *s3;
    snprintf(spec, sizeof spec, "%s:seed=1", rgen[k]);
    s1 = load_ok(ctx, spec);
    snprintf(spec, sizeof spec, "%s:seed=2", rgen[k]);
    s2 = load_ok(ctx, spec);
    c2 = load_ok(ctx2, rgen[k]);
    snprintf(spec, sizeof spec, "%s:seed=3", rgen[k]);
    s3 = load_ok(ctx2, spec);
    /* Default seed 1 == explicit seed=1; repeatable. */
    assert_true(same_matrix(a, a2) && same_nodes(a, a2));
    assert_true(same_matrix(a, s1) && same_nodes(a, s1));
    /* seed=2 in the spec == a context seeded 2. */
    assert_true(same_matrix(s2, c2) && same_nodes(s2, c2));
    /* Different seeds, different matrices (and partitions). */
    assert_false(same_matrix(a, s2));
    assert_false(same_matrix(s2, s3));
    if (k < 2)
      assert_false(same_nodes(a, s2));
    pp_cluster_destroy(a);
    pp_cluster_destroy(a2);
    pp_cluster_destroy(s1);
    pp_cluster_destroy(s2);
    pp_cluster_destroy(c2);
    pp_cluster_destroy(s3);
  }
  /* A large seed is taken whole. */
  {
    pp_cluster *x = load_ok(ctx, "uniform_dist:8,seed=18446744073709551615");
    pp_cluster *y = load_ok(ctx, "uniform_dist:8,seed=18446744073709551614");
    assert_false(same_matrix(x, y));
    pp_cluster_destroy(x);
    pp_cluster_destroy(y);
  }
  pp_ctx_destroy(ctx2);
  assert_int_equal(al.live, 1);
  assert_int_equal(al.bytes, base); /* every free told the right size */
  pp_ctx_destroy(ctx);
}

/* ---- AMP -------------------------------------------------------------- */

static void t_amp(void **state)
{
  static const struct {
    const char *exp, *spec;
  } map[] = {{"homogeneous", "amp-homogeneous"},
             {"het_cluster", "amp-het-cluster"},
             {"het_model", "amp-het-model"}};
  pp_ctx *ctx = tu_fix_ctx(state);
  json_error_t jerr;
  json_t *root = json_load_file(tu_path("data/amp/clusters.json"), 0, &jerr);
  int k;
  if (!root)
    fail_msg("data/amp/clusters.json: %s (line %d)", jerr.text, jerr.line);
  for (k = 0; k < 3; k++) {
    json_t *e =
        json_object_get(json_object_get(root, "experiments"), map[k].exp);
    json_t *nodes = json_object_get(e, "nodes");
    pp_cluster *c = load_ok(ctx, map[k].spec);
    int32_t i, j, nn, gpn;
    const char *gpu[8];
    double inter[8], intra[8];
    int ntypes = 0, n;
    assert_non_null(e);
    assert_true(json_is_array(nodes));
    nn = (int32_t)json_integer_value(json_object_get(e, "num_nodes"));
    gpn = (int32_t)json_integer_value(json_object_get(e, "gpus_per_node"));
    assert_int_equal(nn, 4);
    assert_int_equal(gpn, 4);
    assert_int_equal((int)json_array_size(nodes), nn);
    for (n = 0; n < nn; n++) {
      json_t *o = json_array_get(nodes, (size_t)n);
      int m;
      assert_int_equal(json_integer_value(json_object_get(o, "node")), n);
      gpu[n] = json_string_value(json_object_get(o, "gpu"));
      assert_non_null(gpu[n]);
      inter[n] = json_number_value(json_object_get(o, "inter_gbps"));
      intra[n] = json_number_value(json_object_get(o, "intra_gbps"));
      assert_true(inter[n] > 0 && intra[n] > 0);
      for (m = 0; m < n && strcmp(gpu[m], gpu[n]); m++)
        ;
      ntypes += m == n;
    }
    assert_int_equal(pp_cluster_ndev(c), 16);
    assert_int_equal(pp_cluster_nnode(c), 4);
    assert_int_equal(pp_cluster_ntype(c), ntypes);
    /* One NIC per node: a link from the node's switch to the spine at
    ** the node's inter bandwidth, which every GPU of the node shares;
    ** each GPU links to its switch at the intra bandwidth. */
    assert_int_equal(pp_cluster_nswitch(c), 5);
    assert_int_equal(pp_cluster_nlink(c), 20);
    {
      int32_t l, nnic = 0, ngpu = 0;
      for (l = 0; l < 20; l++) {
        int32_t a, b, cnt;
        double g;
        assert_int_equal(pp_cluster_link(c, l, &a, &b, &g, &cnt), PP_OK);
        assert_int_equal(cnt, 1);
        if (a >= 16 && b >= 16) { /* switch to switch: a node's NIC */
          const char *sa = pp_cluster_switch_name(c, a - 16);
          const char *sb = pp_cluster_switch_name(c, b - 16);
          const char *node = strcmp(sa, "spine") == 0 ? sb : sa;
          assert_true(strcmp(sa, "spine") == 0 || strcmp(sb, "spine") == 0);
          assert_true(strncmp(node, "node", 4) == 0);
          assert_true(g == inter[atoi(node + 4)] / 8);
          nnic++;
        } else {
          int32_t d = a < 16 ? a : b;
          assert_true(g == intra[d / gpn] / 8);
          ngpu++;
        }
      }
      assert_int_equal(nnic, 4);
      assert_int_equal(ngpu, 16);
    }
    check_node_devices(c, nn, gpn, NULL);
    check_shape(c, map[k].spec);
    for (i = 0; i < 16; i++) {
      pp_device_desc d;
      int32_t t;
      assert_int_equal(pp_cluster_device(c, i, &d), PP_OK);
      assert_string_equal(d.type, gpu[i / gpn]);
      t = pp_cluster_device_type(c, i);
      check_type(c, t, gpu[i / gpn]);
    }
    for (i = 0; i < 16; i++)
      for (j = 0; j < 16; j++) {
        int a = i / gpn, b = j / gpn;
        double w = i == j   ? 0
                   : a == b ? intra[a] / 8
                            : fmin(inter[a], inter[b]) / 8;
        if (pp_cluster_bandwidth(c, i, j) != w)
          fail_msg("%s: B(%d,%d) = %.17g, expected %.17g", map[k].spec, (int)i,
                   (int)j, pp_cluster_bandwidth(c, i, j), w);
      }
    pp_cluster_destroy(c);
  }
  json_decref(root);
  /* The class summary of the heterogeneous cluster, by hand. */
  {
    pp_cluster *c = load_ok(ctx, "amp-het-cluster");
    static const struct cls want[] = {
        {170.0 / 8, 36, 36}, {50.0 / 8, 12, 12}, {10.0 / 8, 192, 0}};
    check_classes(ctx, c, "amp-het-cluster", want, 3);
    pp_cluster_destroy(c);
  }
}

/* ---- clariden -------------------------------------------------------- */

static void near_rel(double got, double want, double rel)
{
  if (got != want && !(fabs(got - want) <= rel * fabs(want)))
    fail_msg("%.17g, expected %.17g (relative %g)", got, want, rel);
}

/* min(fit at a 1 GiB message, peak) of one of Sailor's fits
** [[c0, c1, c2], peak bytes/s], GB/s (data/sailor/README.md). */
static double fit_gbps(const json_t *fit)
{
  const json_t *co = json_array_get(fit, 0);
  double x = log2(1073741824.0) - log2(1e6);
  double f = (json_number_value(json_array_get(co, 0)) * x +
              json_number_value(json_array_get(co, 1))) *
                 x +
             json_number_value(json_array_get(co, 2));
  return fmin(f, json_number_value(json_array_get(fit, 1)) / 1e9);
}

static void t_clariden(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  json_error_t jerr;
  json_t *intra = json_load_file(
      tu_path("data/sailor/simulator/intra_node_bandwidths.json"), 0, &jerr);
  json_t *inter = json_load_file(
      tu_path("data/sailor/simulator/multizone_gh96.json"), 0, &jerr);
  json_t *mem = json_load_file(
      tu_path("data/sailor/simulator/basic_cluster_config.json"), 0, &jerr);
  double nv, nic, gib;
  pp_cluster *c;
  int32_t i, j, l, nn;
  assert_non_null(intra);
  assert_non_null(inter);
  assert_non_null(mem);
  /* The constants, recomputed from Sailor's measured fits. */
  nv = fit_gbps(json_object_get(json_object_get(intra, "GH-96"), "2"));
  nic = fit_gbps(json_object_get(
      json_object_get(
          json_object_get(json_object_get(inter, "us-central1-a"), "GH-96"),
          "1"),
      "1"));
  gib = json_number_value(
            json_object_get(json_object_get(mem, "GH-96"), "mem_per_gpu")) /
        1073741824.0;
  near_rel(nv, 125.46, 1e-4);
  near_rel(nic, 22.93, 1e-3);
  for (nn = 1; nn <= 3; nn++) {
    char spec[32];
    int nspine = nn > 1;
    snprintf(spec, sizeof spec, "clariden:%d", (int)nn);
    c = load_ok(ctx, spec);
    assert_int_equal(pp_cluster_ndev(c), 4 * nn);
    assert_int_equal(pp_cluster_nnode(c), nn);
    check_node_devices(c, nn, 4, "GH-96");
    check_type(c, 0, "GH-96");
    near_rel(gib, 95.5771484375, 1e-15);
    /* A mesh of 6 NVLinks a node, one NIC per GPU to the spine. */
    assert_int_equal(pp_cluster_nswitch(c), nspine);
    assert_int_equal(pp_cluster_nlink(c), 6 * nn + (nspine ? 4 * nn : 0));
    for (l = 0; l < pp_cluster_nlink(c); l++) {
      int32_t a, b, cnt;
      double g;
      assert_int_equal(pp_cluster_link(c, l, &a, &b, &g, &cnt), PP_OK);
      if (b >= 4 * nn || a >= 4 * nn)
        near_rel(g, nic, 1e-15);
      else {
        assert_int_equal(a / 4, b / 4);
        near_rel(g, nv, 1e-12);
      }
    }
    for (i = 0; i < 4 * nn; i++)
      for (j = 0; j < 4 * nn; j++)
        near_rel(pp_cluster_bandwidth(c, i, j),
                 i == j           ? 0
                 : i / 4 == j / 4 ? nv
                                  : nic,
                 1e-12);
    pp_cluster_destroy(c);
  }
  c = load_ok(ctx, "clariden");
  assert_int_equal(pp_cluster_ndev(c), 128);
  pp_cluster_destroy(c);
  c = load_ok(ctx, "clariden:2,inter=25");
  assert_true(pp_cluster_bandwidth(c, 0, 4) == 25);
  pp_cluster_destroy(c);
  json_decref(intra);
  json_decref(inter);
  json_decref(mem);
}

/* ---- bad specs -------------------------------------------------------- */

static const struct bad {
  const char *spec;
  pp_status rc;
  const char *m1, *m2, *m3;
} bad_specs[] = {
    /* unknown generator */
    {"nosuch", PP_EINPUT, "'nosuch'", "--list", NULL},
    {"nosuch:4x4", PP_EINPUT, "'nosuch:4x4'", "--list", NULL},
    {"Hier:4x4", PP_EINPUT, "--list", NULL, NULL},
    /* unknown option */
    {"hier:4x4,foo=1", PP_EPARSE, "cluster spec 'hier:4x4,foo=1'",
     "unknown option 'foo'", "intra,inter"},
    {"hier:pcie=5", PP_EPARSE, "unknown option 'pcie'", NULL, NULL},
    {"dgx1:intra=5", PP_EPARSE, "unknown option 'intra'", NULL, NULL},
    {"mesh2d:inter=5", PP_EPARSE, "unknown option 'inter'", NULL, NULL},
    {"uniform_dist:block=4", PP_EPARSE, "unknown option 'block'", NULL, NULL},
    {"amp-homogeneous:intra=5", PP_EPARSE, "unknown option 'intra'", NULL,
     NULL},
    {"hier:in=5", PP_EPARSE, "unknown option 'in'", NULL, NULL},
    {"hier:intr=5", PP_EPARSE, "unknown option 'intr'", NULL, NULL},
    {"hier:intra,inter=5", PP_EPARSE, "not 'intra'", NULL, NULL},
    {"hier:4x4,intra", PP_EPARSE, "unexpected argument 'intra'", NULL, NULL},
    /* bad numbers */
    {"hier:4x4,intra=abc", PP_EPARSE,
     "option 'intra' needs a positive number, not 'abc'", NULL, NULL},
    {"hier:4x4,intra=-1", PP_EPARSE, "option 'intra'", "not '-1'", NULL},
    {"hier:4x4,intra=0", PP_EPARSE, "option 'intra'", "positive", "not '0'"},
    {"hier:4x4,intra=nan", PP_EPARSE, "option 'intra'", "not 'nan'", NULL},
    {"hier:4x4,intra=inf", PP_EPARSE, "option 'intra'", "not 'inf'", NULL},
    {"hier:4x4,intra=1e999", PP_EPARSE, "option 'intra'", "not '1e999'", NULL},
    {"hier:4x4,intra=5x", PP_EPARSE, "option 'intra'", "not '5x'", NULL},
    {"hier:inter=0", PP_EPARSE, "option 'inter'", NULL, NULL},
    {"mesh2d:link=-25", PP_EPARSE, "option 'link'", NULL, NULL},
    {"dgx1:pcie=0", PP_EPARSE, "option 'pcie'", NULL, NULL},
    {"hier:mem=0", PP_EPARSE, "option 'mem'", NULL, NULL},
    {"hier:speed=-1", PP_EPARSE, "option 'speed'", NULL, NULL},
    {"hier:latency=-1", PP_EPARSE, "option 'latency'", "non-negative", NULL},
    {"hier:latency=nan", PP_EPARSE, "option 'latency'", NULL, NULL},
    {"uniform_dist:lo=0", PP_EPARSE, "option 'lo'", NULL, NULL},
    /* sizes */
    {"mesh3d:4x4", PP_EPARSE, "mesh3d needs 3 sizes", "4x4x4", NULL},
    {"torus3d:64", PP_EPARSE, "torus3d needs 3 sizes", NULL, NULL},
    {"hier:4", PP_EPARSE, "hier needs 2 sizes", NULL, NULL},
    {"mesh2d:4x4x4", PP_EPARSE, "mesh2d needs 2 sizes", NULL, NULL},
    {"torus2d:8", PP_EPARSE, "torus2d needs 2 sizes", NULL, NULL},
    {"random_blk_1:8x8", PP_EPARSE, "random_blk_1 needs 1 size", NULL, NULL},
    {"dgx1:2x2", PP_EPARSE, "dgx1 needs 1 size", NULL, NULL},
    {"nvswitch:2x4x2", PP_EPARSE, "nvswitch needs 2 sizes", NULL, NULL},
    {"hier:4x4x4x4", PP_EPARSE, "at most 3 sizes", NULL, NULL},
    {"amp-homogeneous:4", PP_EPARSE, "takes no sizes", NULL, NULL},
    {"hier:4x4,4x4", PP_EPARSE, "unexpected argument '4x4'", NULL, NULL},
    {"hier:0x4", PP_EPARSE, "from 1 to 16384", "not '0'", NULL},
    {"hier:4x0", PP_EPARSE, "not '0'", NULL, NULL},
    {"mesh3d:4x0x4", PP_EPARSE, "not '0'", NULL, NULL},
    {"hier:-4x4", PP_EPARSE, "not '-4'", NULL, NULL},
    {"hier:4x", PP_EPARSE, "not ''", NULL, NULL},
    {"hier:x4", PP_EPARSE, "not ''", NULL, NULL},
    {"hier:4.5x4", PP_EPARSE, "not '4.5'", NULL, NULL},
    {"hier:16385x1", PP_EPARSE, "from 1 to 16384", NULL, NULL},
    {"random_blk_1:99999999999999999999", PP_EPARSE, "from 1 to 16384", NULL,
     NULL},
    /* too many devices */
    {"torus3d:100x100x100", PP_ELIMIT, "1000000 devices", "16384", NULL},
    {"hier:4097x4", PP_ELIMIT, "16388 devices", NULL, NULL},
    {"mesh2d:16384x16384", PP_ELIMIT, "268435456 devices", NULL, NULL},
    {"dgx1:2049", PP_ELIMIT, "16392 devices", NULL, NULL},
    {"nvswitch:2049", PP_ELIMIT, "16392 devices", NULL, NULL},
    /* empty pieces */
    {"hier:", PP_EPARSE, "nothing after ':'", NULL, NULL},
    {"amp-homogeneous:", PP_EPARSE, "nothing after ':'", NULL, NULL},
    {"hier:4x4,,intra=1", PP_EPARSE, "empty argument", NULL, NULL},
    {"hier:,4x4", PP_EPARSE, "empty argument", NULL, NULL},
    {"hier:4x4,", PP_EPARSE, "empty argument", NULL, NULL},
    {"hier:4x4,intra=", PP_EPARSE, "'intra=' needs a key and a value", NULL,
     NULL},
    {"hier:4x4,=5", PP_EPARSE, "'=5' needs a key and a value", NULL, NULL},
    {"hier:=", PP_EPARSE, "needs a key and a value", NULL, NULL},
    /* gpus */
    {"hier:gpu=NOPE", PP_EINPUT, "unknown GPU 'NOPE'", "known: ", NULL},
    {"nvswitch:gpu=v100", PP_EINPUT, "unknown GPU 'v100'", NULL, NULL},
    /* routing, seeds, blocks */
    {"mesh2d:routing=foo", PP_EPARSE, "routing is 'hops' or 'widest'",
     "not 'foo'", NULL},
    {"random_blk_1:seed=-1", PP_EPARSE, "seed needs a non-negative integer",
     NULL, NULL},
    {"random_blk_1:seed=abc", PP_EPARSE, "seed", "not 'abc'", NULL},
    {"random_blk_1:seed=99999999999999999999999", PP_EPARSE, "seed", NULL,
     NULL},
    {"random_blk_1:block=0", PP_EPARSE, "block needs an integer", "not '0'",
     NULL},
    {"random_blk_2:super=0", PP_EPARSE, "super needs an integer", NULL, NULL},
    {"random_blk_1:60", PP_EINPUT, "60 devices do not split into blocks of 8",
     NULL, NULL},
    {"random_blk_1:64,block=7", PP_EINPUT, "blocks of 7", NULL, NULL},
    {"random_blk_1:4,block=8", PP_EINPUT, "4 devices do not split", NULL, NULL},
    {"random_blk_2:48", PP_EINPUT, "48 devices do not split into super-blocks",
     NULL, NULL},
    {"random_blk_2:64,super=3", PP_EINPUT, "super-blocks", NULL, NULL},
    {"uniform_dist:lo=5,hi=1", PP_EPARSE, "lo 5 is above hi 1", NULL, NULL},
    {"uniform_dist:lo=200", PP_EPARSE, "lo 200 is above hi 100", NULL, NULL},
    /* a path that does not exist */
    {"/nonexistent/dir/cluster.json", PP_EIO, "cannot open", NULL, NULL},
    {"nosuch.json", PP_EIO, "nosuch.json", "cannot open", NULL},
};

static void t_bad_specs(void **state)
{
  struct tu_fix *fx = *state;
  pp_ctx *ctx = fx->ctx;
  size_t i;
  int k;
  pp_cluster *c;
  for (i = 0; i < sizeof bad_specs / sizeof bad_specs[0]; i++) {
    const struct bad *b = &bad_specs[i];
    pp_status rc;
    c = (pp_cluster *)&c; /* must be reset to NULL */
    rc = pp_cluster_load(ctx, b->spec, &c);
    if (rc != b->rc)
      fail_msg("'%s': status %d, expected %d; message: %s", b->spec, (int)rc,
               (int)b->rc, pp_ctx_errmsg(ctx));
    assert_null(c);
    /* Every message quotes the spec. */
    tu_expect_error(ctx, rc, b->rc, b->spec, b->m1, b->m2, b->m3, NULL);
    assert_int_equal(fx->a.live, 1);
  }
  /* The unknown GPU's message lists every catalog GPU. */
  c = NULL;
  assert_int_equal(pp_cluster_load(ctx, "hier:gpu=NOPE", &c), PP_EINPUT);
  for (k = 0; k < NCATALOG; k++)
    if (!strstr(pp_ctx_errmsg(ctx), catalog[k].name))
      fail_msg("the list of GPUs lacks %s: %s", catalog[k].name,
               pp_ctx_errmsg(ctx));
  pp_ctx_clear_error(ctx);
  /* Misuse. */
  assert_int_equal(pp_cluster_load(ctx, NULL, &c), PP_EINVAL);
  assert_int_equal(pp_cluster_load(ctx, "hier", NULL), PP_EINVAL);
  assert_int_equal(pp_cluster_load(NULL, "hier", &c), PP_EINVAL);
  /* And the good neighbours of the bad ones load. */
  {
    static const char *const good[] = {
        "hier:4x4,intra=1e3",     "hier:latency=0",
        "mesh2d:routing=hops",    "random_blk_1:seed=0",
        "uniform_dist:lo=1,hi=1", "nvswitch:1",
        "hier:16x4,inter=1e-3",   "dgx1:1",
        "random_blk_2:32",        "random_blk_1:8,block=8"};
    for (i = 0; i < sizeof good / sizeof good[0]; i++) {
      c = load_ok(ctx, good[i]);
      pp_cluster_destroy(c);
    }
  }
}

/* A spec too long to parse is refused, and the message still says why
** (the spec is quoted, but not at the cost of the reason). */
static void t_long_spec(void **state)
{
  static const size_t lens[] = {1023, 1024, 1100};
  struct tu_alloc al;
  pp_ctx *ctx = tu_ctx(&al);
  const size_t base = al.bytes;
  pp_cluster *c = NULL;
  char longspec[1200], msg[2][1100];
  pp_status rc[2];
  size_t k;
  long live;
  size_t bytes;
  (void)state;
  for (k = 0; k < sizeof lens / sizeof lens[0]; k++) {
    /* "hier:4x4,intra=1,...,latency=000...0" of exactly lens[k] bytes. */
    strcpy(longspec, "hier:4x4");
    while (strlen(longspec) + 8 + 10 < lens[k])
      strcat(longspec, ",intra=1");
    strcat(longspec, ",latency=");
    while (strlen(longspec) < lens[k])
      strcat(longspec, "0");
    assert_int_equal(strlen(longspec), lens[k]);
    c = NULL;
    if (lens[k] <= 1023) {
      c = load_ok(ctx, longspec);
      pp_cluster_destroy(c);
      continue;
    }
    rc[k - 1] = pp_cluster_load(ctx, longspec, &c);
    assert_null(c);
    snprintf(msg[k - 1], sizeof msg[k - 1], "%s", pp_ctx_errmsg(ctx));
    pp_ctx_clear_error(ctx);
  }
  live = al.live;
  bytes = al.bytes;
  pp_ctx_destroy(ctx); /* before asserting: no leak report on failure */
  for (k = 0; k < 2; k++) {
    assert_int_equal(rc[k], PP_EPARSE);
    if (!strstr(msg[k], "longer than"))
      fail_msg("a %d-byte spec: the message lacks the reason (\"longer "
               "than\"), it ends \"...%s\"",
               (int)lens[k + 1],
               strlen(msg[k]) > 40 ? msg[k] + strlen(msg[k]) - 40 : msg[k]);
  }
  assert_int_equal(live, 1);
  assert_int_equal(bytes, base);
}

/* ---- write, read back, write again ------------------------------------ */

static void t_roundtrip(void **state)
{
  static const char *const specs[] = {"hier:2x4,intra=300,latency=2.5",
                                      "hier:1x1",
                                      "nvswitch:2x4,gpu=H100",
                                      "torus2d:3x4",
                                      "torus3d:3x3x3,link=12.5",
                                      "mesh2d:4x4,routing=widest",
                                      "dgx1:2",
                                      "random_blk_1:32,block=4",
                                      "random_blk_2:32,block=4,super=2",
                                      "uniform_dist:16,lo=0.1,hi=1e4",
                                      "amp-het-cluster",
                                      "hier:3x2,mem=12.3,speed=0.3"};
  pp_ctx *ctx = tu_fix_ctx(state);
  size_t i;
  for (i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    char pa[512], pb[512], fa[64], fb[64];
    pp_cluster *c = load_ok(ctx, specs[i]), *r;
    char *ta, *tb;
    size_t la = 0, lb = 0;
    int32_t d, t;
    bool links = pp_cluster_nlink(c) > 0;
    snprintf(fa, sizeof fa, "gen-%d-a.json", (int)i);
    snprintf(fb, sizeof fb, "gen-%d-b.json", (int)i);
    snprintf(pa, sizeof pa, "%s", tu_tmp(fa));
    snprintf(pb, sizeof pb, "%s", tu_tmp(fb));
    assert_int_equal(pp_cluster_write(ctx, c, pa, NULL), PP_OK);
    r = load_ok(ctx, pa);
    if (!same_matrix(c, r))
      fail_msg("%s: the matrix read back differs", specs[i]);
    assert_string_equal(pp_cluster_name(r), pp_cluster_name(c));
    assert_int_equal(pp_cluster_nnode(r), pp_cluster_nnode(c));
    assert_int_equal(pp_cluster_ntype(r), pp_cluster_ntype(c));
    assert_int_equal(pp_cluster_nlink(r), pp_cluster_nlink(c));
    assert_int_equal(pp_cluster_nswitch(r), pp_cluster_nswitch(c));
    assert_true(pp_cluster_latency(r) == pp_cluster_latency(c));
    if (links)
      assert_int_equal(pp_cluster_routing(r), pp_cluster_routing(c));
    for (t = 0; t < pp_cluster_ntype(c); t++) {
      pp_device_type_desc x, y;
      assert_int_equal(pp_cluster_type(c, t, &x), PP_OK);
      assert_int_equal(pp_cluster_type(r, t, &y), PP_OK);
      assert_string_equal(x.name, y.name);
      assert_true(x.memory_gib == y.memory_gib && x.speed == y.speed &&
                  x.peak_tflops == y.peak_tflops);
      assert_int_equal(pp_cluster_type_memory(c, t),
                       pp_cluster_type_memory(r, t));
    }
    for (d = 0; d < pp_cluster_ndev(c); d++) {
      pp_device_desc x, y;
      assert_int_equal(pp_cluster_device(c, d, &x), PP_OK);
      assert_int_equal(pp_cluster_device(r, d, &y), PP_OK);
      assert_string_equal(x.name, y.name);
      assert_string_equal(x.type, y.type);
      assert_int_equal(x.node, y.node);
      assert_int_equal(x.local_gpu, y.local_gpu);
      assert_true((x.host == NULL) == (y.host == NULL));
      if (x.host)
        assert_string_equal(x.host, y.host);
    }
    assert_int_equal(pp_cluster_write(ctx, r, pb, NULL), PP_OK);
    ta = tu_slurp(pa, &la);
    tb = tu_slurp(pb, &lb);
    assert_non_null(ta);
    assert_non_null(tb);
    if (la != lb || memcmp(ta, tb, la) != 0)
      fail_msg("%s: writing what was read gives other bytes", specs[i]);
    /* A link graph stays a link graph. */
    if (links) {
      assert_non_null(strstr(ta, "\"links\""));
      assert_null(strstr(ta, "bandwidth_GBps"));
    } else if (pp_cluster_ndev(c) > 1) {
      assert_non_null(strstr(ta, "bandwidth_GBps"));
      assert_null(strstr(ta, "\"links\""));
    }
    free(ta);
    free(tb);
    pp_cluster_destroy(r);
    pp_cluster_destroy(c);
    remove(pa);
    remove(pb);
  }
  /* hier and torus are link graphs. */
  {
    pp_cluster *c = load_ok(ctx, "hier");
    assert_true(pp_cluster_nlink(c) > 0);
    pp_cluster_destroy(c);
    c = load_ok(ctx, "torus2d");
    assert_true(pp_cluster_nlink(c) > 0);
    assert_int_equal(pp_cluster_routing(c), PP_ROUTE_HOPS);
    pp_cluster_destroy(c);
  }
}

/* ---- 4096 devices ----------------------------------------------------- */

static void t_big(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_cluster *c;
  /* hier:512x8: two classes, exactly. */
  c = load_ok(ctx, "hier:512x8");
  {
    const struct cls want[] = {{50, 512LL * 8 * 7, 512LL * 8 * 7},
                               {12.5, 4096LL * 4095 - 512LL * 8 * 7, 0}};
    assert_int_equal(pp_cluster_ndev(c), 4096);
    assert_int_equal(pp_cluster_nnode(c), 512);
    assert_int_equal(pp_cluster_nswitch(c), 513);
    check_classes(ctx, c, "hier:512x8", want, 2);
  }
  pp_cluster_destroy(c);
  /* torus3d:16x16x16 (12x12x12 under a sanitizer): every pair. */
  if (TU_SANITIZED || getenv("PP_TEST_QUICK"))
    check_grid(ctx, "torus3d:12x12x12", 3, 12, 12, 12, true, 25, true);
  else
    check_grid(ctx, "torus3d:16x16x16", 3, 16, 16, 16, true, 25, true);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      TU_CTX_TEST(t_defaults),
      TU_CTX_TEST(t_hier),
      cmocka_unit_test(t_dgx1_table),
      TU_CTX_TEST(t_dgx1),
      TU_CTX_TEST(t_grids),
      TU_CTX_TEST(t_random),
      cmocka_unit_test(t_seeds),
      TU_CTX_TEST(t_amp),
      TU_CTX_TEST(t_clariden),
      TU_CTX_TEST(t_bad_specs),
      cmocka_unit_test(t_long_spec),
      TU_CTX_TEST(t_roundtrip),
      TU_CTX_TEST(t_big),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
