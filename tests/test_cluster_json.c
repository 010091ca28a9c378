/* SPDX-License-Identifier: MIT */
/*
** Cluster JSON: the minimal document, a matrix cluster, a link graph,
** the normalized round trip, and a clear error for every kind of bad
** input.
*/
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *minimal =
    "{\"device_types\": {\"gpu\": {\"memory_gb\": 16, \"speed\": 1.0}},\n"
    " \"devices\": [{\"name\": \"d0\", \"type\": \"gpu\", \"node\": 0}, "
    "{\"name\": \"d1\", \"type\": \"gpu\", \"node\": 0}],\n"
    " \"bandwidth_GBps\": [[0, 10], [10, 0]], \"latency_us\": 0}";

static void t_minimal(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_cluster *c = NULL;
  pp_device_desc d;
  pp_device_type_desc t;
  assert_int_equal(tu_cluster_json(ctx, minimal, &c), PP_OK);
  assert_int_equal(pp_cluster_ndev(c), 2);
  assert_int_equal(pp_cluster_ntype(c), 1);
  assert_int_equal(pp_cluster_nnode(c), 1);
  assert_true(pp_cluster_bandwidth(c, 0, 1) == 10);
  assert_true(pp_cluster_bandwidth(c, 1, 1) == 0);
  assert_true(pp_cluster_bandwidth(c, 0, 5) == 0);
  assert_int_equal(pp_cluster_type_memory(c, 0), (int64_t)16 << 30);
  assert_int_equal(pp_cluster_device(c, 1, &d), PP_OK);
  assert_string_equal(d.name, "d1");
  assert_string_equal(d.type, "gpu");
  assert_null(d.host);
  assert_int_equal(d.local_gpu, -1);
  assert_int_equal(pp_cluster_type(c, 0, &t), PP_OK);
  assert_true(t.speed == 1 && t.peak_tflops == 0);
  assert_int_equal(pp_cluster_find_device(c, "d1"), 1);
  assert_int_equal(pp_cluster_find_device(c, "nope"), -1);
  assert_int_equal(pp_cluster_find_type(c, "gpu"), 0);
  /* comm_ms = latency/1000 + bytes / (B * 1e6); 0 for 0 bytes or i==j. */
  assert_true(pp_cluster_comm_ms(c, 0, 1, 1e7) == 1e7 / (10 * 1e6));
  assert_true(pp_cluster_comm_ms(c, 0, 1, 0) == 0);
  assert_true(pp_cluster_comm_ms(c, 1, 1, 1e7) == 0);
  assert_int_equal(pp_cluster_nlink(c), 0);
  pp_cluster_destroy(c);
}

static void t_examples(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_cluster *c = NULL;
  pp_device_desc d;
  pp_type_key k = {0};
  int32_t i, j, la, lb, cnt;
  double g;
  assert_int_equal(
      pp_cluster_load(ctx, tu_path("examples/cluster-matrix.json"), &c), PP_OK);
  assert_int_equal(pp_cluster_nnode(c), 2);
  pp_cluster_device(c, 2, &d);
  assert_string_equal(d.host, "gpu-b");
  assert_int_equal(d.local_gpu, 0);
  assert_true(pp_cluster_latency(c) == 5);
  assert_true(pp_cluster_comm_ms(c, 0, 2, 12.5e6) == 0.005 + 1.0);
  k = pp_cluster_type_key(c, 0);
  assert_string_equal(k.name, "A100-80");
  assert_true(k.speed == 3.457);
  pp_cluster_destroy(c);

  assert_int_equal(
      pp_cluster_load(ctx, tu_path("examples/cluster-links.json"), &c), PP_OK);
  assert_int_equal(pp_cluster_nswitch(c), 3);
  assert_string_equal(pp_cluster_switch_name(c, 2), "leaf");
  assert_int_equal(pp_cluster_nlink(c), 10);
  assert_int_equal(pp_cluster_link(c, 8, &la, &lb, &g, &cnt), PP_OK);
  assert_int_equal(la, 8); /* nvswitch0: vertex ndev + 0 */
  assert_int_equal(lb, 10);
  assert_true(g == 25 && cnt == 4);
  assert_int_equal(pp_cluster_routing(c), PP_ROUTE_WIDEST);
  for (i = 0; i < 8; i++)
    for (j = 0; j < 8; j++)
      if (i != j)
        assert_true(pp_cluster_bandwidth(c, i, j) ==
                    (i / 4 == j / 4 ? 450.0 : 100.0));
  /* A switch is not a device. */
  assert_int_equal(pp_cluster_find_device(c, "leaf"), -1);
  pp_cluster_destroy(c);
}

static void t_roundtrip(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  const char *files[] = {"examples/cluster-minimal.json",
                         "examples/cluster-matrix.json",
                         "examples/cluster-links.json"};
  size_t f;
  for (f = 0; f < 3; f++) {
    pp_cluster *c = NULL, *c2 = NULL;
    char p1[600], p2[600], *t1, *t2;
    size_t l1, l2;
    snprintf(p1, sizeof p1, "%s", tu_tmp("c1.json"));
    snprintf(p2, sizeof p2, "%s", tu_tmp("c2.json"));
    assert_int_equal(pp_cluster_load(ctx, tu_path(files[f]), &c), PP_OK);
    assert_int_equal(pp_cluster_write(ctx, c, p1, NULL), PP_OK);
    assert_int_equal(pp_cluster_load(ctx, p1, &c2), PP_OK);
    assert_int_equal(pp_cluster_write(ctx, c2, p2, NULL), PP_OK);
    t1 = tu_slurp(p1, &l1);
    t2 = tu_slurp(p2, &l2);
    assert_int_equal(l1, l2);
    assert_memory_equal(t1, t2, l1);
    assert_int_equal(pp_cluster_ndev(c), pp_cluster_ndev(c2));
    assert_memory_equal(
        pp_cluster_bandwidth_matrix(c), pp_cluster_bandwidth_matrix(c2),
        (size_t)pp_cluster_ndev(c) * pp_cluster_ndev(c) * sizeof(double));
    assert_int_equal(pp_cluster_nlink(c), pp_cluster_nlink(c2));
    free(t1);
    free(t2);
    pp_cluster_destroy(c);
    pp_cluster_destroy(c2);
  }
}

/* A two-device cluster with pieces replaced. */
static pp_status doc(pp_ctx *ctx, const char *types, const char *devs,
                     const char *rest, pp_cluster **c)
{
  char buf[4096];
  snprintf(buf, sizeof buf, "{\"device_types\": %s,\n\"devices\": %s%s%s}",
           types ? types : "{\"gpu\": {\"memory_gb\": 16}}",
           devs ? devs
                : "[{\"name\": \"d0\", \"type\": \"gpu\", \"node\": 0}, "
                  "{\"name\": \"d1\", \"type\": \"gpu\", \"node\": 1}]",
           *rest ? ",\n" : "", rest);
  return tu_cluster_json(ctx, buf, c);
}

#define MATRIX "\"bandwidth_GBps\": [[0, 10], [10, 0]]"

static void t_errors(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_cluster *c = NULL;
  tu_expect_error(ctx, tu_cluster_json(ctx, "", &c), PP_EPARSE, "test.json:1",
                  NULL);
  tu_expect_error(ctx, tu_cluster_json(ctx, "{\"devices\": [}", &c), PP_EPARSE,
                  "test.json:1:", NULL);
  tu_expect_error(ctx, tu_cluster_json(ctx, "{\"devices\": []}", &c), PP_EINPUT,
                  "missing field \"device_types\"", NULL);
  tu_expect_error(ctx, tu_cluster_json(ctx, "{\"device_types\": {}}", &c),
                  PP_EINPUT, "missing field \"devices\"", NULL);
  tu_expect_error(ctx, doc(ctx, "{}", NULL, MATRIX, &c), PP_EINPUT,
                  "\"device_types\" is empty", NULL);
  tu_expect_error(ctx, doc(ctx, "[]", NULL, MATRIX, &c), PP_EINPUT,
                  "must be an object", NULL);
  tu_expect_error(ctx, doc(ctx, "{\"gpu\": {}}", NULL, MATRIX, &c), PP_EINPUT,
                  "device type 'gpu'", "missing field \"memory_gb\"", NULL);
  tu_expect_error(ctx,
                  doc(ctx, "{\"gpu\": {\"memory_gb\": -16}}", NULL, MATRIX, &c),
                  PP_EINPUT, "memory_gb", "negative", NULL);
  tu_expect_error(ctx,
                  doc(ctx, "{\"gpu\": {\"memory_gb\": 0}}", NULL, MATRIX, &c),
                  PP_EINPUT, "memory_gb must be a positive number", NULL);
  tu_expect_error(ctx,
                  doc(ctx, "{\"gpu\": {\"memory_gb\": 16, \"speed\": 0}}", NULL,
                      MATRIX, &c),
                  PP_EINPUT, "speed must be a positive number", NULL);
  tu_expect_error(ctx, doc(ctx, NULL, "[]", MATRIX, &c), PP_EINPUT,
                  "bandwidth_GBps has 2 rows but there are 0 devices", NULL);
  tu_expect_error(
      ctx,
      doc(ctx, NULL, "[{\"name\": \"d0\", \"type\": \"A100\", \"node\": 0}]",
          "", &c),
      PP_EINPUT, "device 'd0' (index 0)", "unknown device type 'A100'", NULL);
  tu_expect_error(
      ctx, doc(ctx, NULL, "[{\"name\": \"d0\", \"type\": \"gpu\"}]", "", &c),
      PP_EINPUT, "device 'd0' (index 0)", "missing field \"node\"", NULL);
  tu_expect_error(ctx,
                  doc(ctx, NULL,
                      "[{\"name\": \"d0\", \"type\": \"gpu\", \"node\": -1}]",
                      "", &c),
                  PP_EINPUT, "\"node\" is negative", NULL);
  tu_expect_error(ctx,
                  doc(ctx, NULL,
                      "[{\"name\": \"d0\", \"type\": \"gpu\", \"node\": 0}, "
                      "{\"name\": \"d0\", \"type\": \"gpu\", \"node\": 0}]",
                      MATRIX, &c),
                  PP_EINPUT, "device 'd0'", "already used by device 0", NULL);
  tu_expect_error(ctx,
                  doc(ctx, NULL,
                      "[{\"name\": \"d0\", \"type\": \"gpu\", \"node\": 0, "
                      "\"host\": \"h\", \"local_gpu\": 1}, {\"name\": \"d1\", "
                      "\"type\": \"gpu\", \"node\": 0, \"host\": \"h\", "
                      "\"local_gpu\": 1}]",
                      MATRIX, &c),
                  PP_EINPUT, "'d0' and 'd1' are both GPU 1 of host 'h'", NULL);
  /* Matrices. */
  tu_expect_error(ctx, doc(ctx, NULL, NULL, "", &c), PP_EINPUT, "no bandwidth",
                  NULL);
  tu_expect_error(ctx,
                  doc(ctx, NULL, NULL, "\"bandwidth_GBps\": [[0, 10]]", &c),
                  PP_EINPUT, "has 1 rows but there are 2 devices", NULL);
  tu_expect_error(
      ctx, doc(ctx, NULL, NULL, "\"bandwidth_GBps\": [[0, 10], [10]]", &c),
      PP_EINPUT, "not square: row 1 has 1 entries", NULL);
  tu_expect_error(
      ctx,
      doc(ctx, NULL, NULL, "\"bandwidth_GBps\": [[0, 10], {\"a\": 1}]", &c),
      PP_EINPUT, "row 1 must be an array", NULL);
  tu_expect_error(
      ctx, doc(ctx, NULL, NULL, "\"bandwidth_GBps\": [[0, 10], [12, 0]]", &c),
      PP_EINPUT, "not symmetric", "[0][1] = 10", "[1][0] = 12", "'d0' and 'd1'",
      NULL);
  tu_expect_error(
      ctx, doc(ctx, NULL, NULL, "\"bandwidth_GBps\": [[0, 0], [0, 0]]", &c),
      PP_EINPUT, "bandwidth_GBps[0][1]", "positive", NULL);
  tu_expect_error(
      ctx, doc(ctx, NULL, NULL, "\"bandwidth_GBps\": [[0, -3], [-3, 0]]", &c),
      PP_EINPUT, "positive", NULL);
  tu_expect_error(
      ctx, doc(ctx, NULL, NULL, "\"bandwidth_GBps\": [[0, \"x\"], [1, 0]]", &c),
      PP_EINPUT, "bandwidth_GBps[0][1] must be a number", NULL);
  tu_expect_error(
      ctx, doc(ctx, NULL, NULL, "\"bandwidth_GBps\": [[0, NaN], [1, 0]]", &c),
      PP_EPARSE, "test.json:3:", NULL);
  tu_expect_error(
      ctx,
      doc(ctx, NULL, NULL, "\"bandwidth_GBps\": [[0, 1e999], [1e999, 0]]", &c),
      PP_EPARSE, "overflow", NULL);
  /* The diagonal is ignored, whatever it holds. */
  assert_int_equal(
      doc(ctx, NULL, NULL, "\"bandwidth_GBps\": [[-7, 10], [10, 1e300]]", &c),
      PP_OK);
  assert_true(pp_cluster_bandwidth(c, 0, 0) == 0);
  pp_cluster_destroy(c);
  c = NULL;
  tu_expect_error(ctx, doc(ctx, NULL, NULL, MATRIX ", \"latency_us\": -1", &c),
                  PP_EINPUT, "latency_us", NULL);
  /* Link graphs. */
  tu_expect_error(ctx,
                  doc(ctx, NULL, NULL,
                      MATRIX ", \"links\": [{\"a\": \"d0\", \"b\": \"d1\", "
                             "\"GBps\": 5}]",
                      &c),
                  PP_EINPUT, "either", NULL);
  tu_expect_error(ctx,
                  doc(ctx, NULL, NULL,
                      "\"links\": [{\"a\": \"d0\", \"b\": \"sw\", "
                      "\"GBps\": 5}]",
                      &c),
                  PP_EINPUT, "link 0: unknown device or switch 'sw'", NULL);
  tu_expect_error(ctx,
                  doc(ctx, NULL, NULL,
                      "\"switches\": [\"sw\"], \"links\": [{\"a\": \"d0\", "
                      "\"b\": \"sw\", \"GBps\": 5}]",
                      &c),
                  PP_EINPUT, "disconnected", "'d1' (index 1)", NULL);
  tu_expect_error(ctx,
                  doc(ctx, NULL, NULL,
                      "\"links\": [{\"a\": \"d0\", \"b\": \"d0\", "
                      "\"GBps\": 5}]",
                      &c),
                  PP_EINPUT, "joins 'd0' to itself", NULL);
  tu_expect_error(ctx,
                  doc(ctx, NULL, NULL,
                      "\"links\": [{\"a\": \"d0\", \"b\": \"d1\", "
                      "\"GBps\": 0}]",
                      &c),
                  PP_EINPUT, "GBps must be a positive number", NULL);
  tu_expect_error(
      ctx,
      doc(ctx, NULL, NULL, "\"links\": [{\"a\": \"d0\", \"b\": \"d1\"}]", &c),
      PP_EINPUT, "link 0: missing field \"GBps\"", NULL);
  tu_expect_error(ctx,
                  doc(ctx, NULL, NULL,
                      "\"links\": [{\"a\": \"d0\", \"b\": \"d1\", "
                      "\"GBps\": 5}, {\"a\": \"d1\", \"b\": \"d0\", "
                      "\"GBps\": 5}]",
                      &c),
                  PP_EINPUT, "two links join 'd0' and 'd1'", "count", NULL);
  tu_expect_error(ctx,
                  doc(ctx, NULL, NULL,
                      "\"links\": [{\"a\": \"d0\", \"b\": \"d1\", "
                      "\"GBps\": 5, \"count\": 0}]",
                      &c),
                  PP_EINPUT, "count", NULL);
  tu_expect_error(
      ctx, doc(ctx, NULL, NULL, "\"switches\": [\"d0\"], \"links\": []", &c),
      PP_EINPUT, "switch 'd0'", "already used by device 0", NULL);
  tu_expect_error(ctx,
                  doc(ctx, NULL, NULL,
                      "\"links\": [{\"a\": \"d0\", \"b\": \"d1\", "
                      "\"GBps\": 5}], \"routing\": \"fastest\"",
                      &c),
                  PP_EINPUT, "\"routing\" must be \"widest\" or \"hops\"",
                  NULL);
  tu_expect_error(ctx,
                  doc(ctx, NULL, NULL, MATRIX ", \"routing\": \"hops\"", &c),
                  PP_EINPUT, "routing applies to links", NULL);
  assert_null(c);
}

/* Limits: more devices than PP_MAX_DEVICES, and a single device. */
static void t_limits(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_cluster *c = NULL;
  size_t n = PP_MAX_DEVICES + 1, i, cap = n * 64 + 256, off = 0;
  char *buf = malloc(cap);
  off += (size_t)snprintf(buf, cap,
                          "{\"device_types\": {\"g\": "
                          "{\"memory_gb\": 1}}, \"devices\": [");
  for (i = 0; i < n; i++)
    off += (size_t)snprintf(buf + off, cap - off,
                            "%s{\"name\": \"d%zu\", \"type\": \"g\", "
                            "\"node\": 0}",
                            i ? "," : "", i);
  snprintf(buf + off, cap - off, "]}");
  tu_expect_error(ctx, tu_cluster_json(ctx, buf, &c), PP_ELIMIT, "16385", NULL);
  free(buf);
  assert_int_equal(
      tu_cluster_json(ctx,
                      "{\"device_types\": {\"g\": {\"memory_gb\": 1}}, "
                      "\"devices\": [{\"name\": \"solo\", \"type\": \"g\", "
                      "\"node\": 0}]}",
                      &c),
      PP_OK);
  assert_int_equal(pp_cluster_ndev(c), 1);
  pp_cluster_destroy(c);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      TU_CTX_TEST(t_minimal), TU_CTX_TEST(t_examples), TU_CTX_TEST(t_roundtrip),
      TU_CTX_TEST(t_errors),  TU_CTX_TEST(t_limits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
