/* SPDX-License-Identifier: MIT */
/*
** Model JSON reader and writer: the minimal document of the foundation
** issue, every optional field, the normalized round trip, and a clear
** error for each kind of bad input (malformed, empty, missing fields,
** wrong types, negative, NaN, huge, cycles, unknown endpoints,
** duplicates).
*/
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *minimal =
    "{\"name\": \"m\", \"micro_batch\": 1,\n"
    " \"ops\": [{\"name\": \"a\", \"fwd_ms\": 1.0, \"bwd_ms\": 2.0, "
    "\"param_bytes\": 100,\n"
    "          \"out_bytes\": 1000, \"saved_bytes\": 1000},\n"
    "         {\"name\": \"b\", \"fwd_ms\": 1.5, \"bwd_ms\": 3.0, "
    "\"param_bytes\": 100,\n"
    "          \"out_bytes\": 1000, \"saved_bytes\": 1000}],\n"
    " \"edges\": [{\"from\": \"a\", \"to\": \"b\", \"bytes\": 1000}]}";

static void t_minimal(void **state)
{
  struct tu_fix *fx = *state;
  pp_ctx *ctx = fx->ctx;
  pp_model *m = NULL;
  pp_op_desc d;
  int32_t from, to;
  int64_t bytes;
  assert_int_equal(tu_model_json(ctx, minimal, &m), PP_OK);
  assert_string_equal(pp_model_name(m), "m");
  assert_int_equal(pp_model_nop(m), 2);
  assert_int_equal(pp_model_nedge(m), 1);
  assert_int_equal(pp_model_micro_batch(m), 1);
  assert_true(pp_model_is_chain(m));
  assert_true(pp_model_topo_unique(m));
  assert_false(pp_model_edges_implied(m));
  assert_int_equal(pp_model_op(m, 1, &d), PP_OK);
  assert_string_equal(d.name, "b");
  assert_true(d.fwd_ms == 1.5 && d.bwd_ms == 3.0);
  assert_int_equal(d.param_bytes, 100);
  assert_int_equal(d.out_bytes, 1000);
  assert_int_equal(d.saved_bytes, 1000);
  assert_int_equal(pp_model_edge(m, 0, &from, &to, &bytes), PP_OK);
  assert_int_equal(from, 0);
  assert_int_equal(to, 1);
  assert_int_equal(bytes, 1000);
  assert_int_equal(pp_model_find_op(m, "b"), 1);
  assert_int_equal(pp_model_find_op(m, "zz"), -1);
  assert_null(pp_model_op_name(m, 2));
  assert_int_equal(pp_model_op(m, -1, &d), PP_EINVAL);
  pp_model_destroy(m);
  assert_int_equal(fx->a.live, 1); /* the context itself */
}

/* Edges by index; defaults when "bytes" and "edges" are absent. */
static void t_indices_and_chain(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = NULL;
  int64_t bytes;
  int32_t from, to;
  const char *doc =
      "{\"ops\": [{\"name\": \"x\", \"fwd_ms\": 1, \"bwd_ms\": 1, "
      "\"param_bytes\": 0, \"out_bytes\": 7, \"saved_bytes\": 0},"
      "{\"name\": \"y\", \"fwd_ms\": 1, \"bwd_ms\": 1, \"param_bytes\": 0, "
      "\"out_bytes\": 9, \"saved_bytes\": 0},"
      "{\"name\": \"z\", \"fwd_ms\": 1, \"bwd_ms\": 1, \"param_bytes\": 0, "
      "\"out_bytes\": 9, \"saved_bytes\": 0}]%s}";
  char buf[1024];
  snprintf(buf, sizeof buf, doc, "");
  assert_int_equal(tu_model_json(ctx, buf, &m), PP_OK);
  assert_string_equal(pp_model_name(m), "test"); /* the file's stem */
  assert_true(pp_model_edges_implied(m));
  assert_true(pp_model_is_chain(m));
  assert_int_equal(pp_model_nedge(m), 2);
  pp_model_edge(m, 0, &from, &to, &bytes);
  assert_int_equal(bytes, 7); /* the source's out_bytes */
  pp_model_destroy(m);

  snprintf(buf, sizeof buf, doc,
           ", \"edges\": [{\"from\": 0, \"to\": 2}, {\"from\": \"x\", "
           "\"to\": 1, \"bytes\": 3}]");
  assert_int_equal(tu_model_json(ctx, buf, &m), PP_OK);
  assert_false(pp_model_is_chain(m));
  assert_false(pp_model_topo_unique(m));
  pp_model_edge(m, 0, &from, &to, &bytes);
  assert_int_equal(from, 0);
  assert_int_equal(to, 2);
  assert_int_equal(bytes, 7);
  pp_model_edge(m, 1, &from, &to, &bytes);
  assert_int_equal(bytes, 3);
  {
    const int32_t *order = pp_model_topo_order(m);
    assert_int_equal(order[0], 0);
    assert_int_equal(order[1], 1);
    assert_int_equal(order[2], 2);
  }
  pp_model_destroy(m);
}

static void t_full_example_roundtrip(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = NULL, *m2 = NULL;
  const char *files[] = {"examples/model-chain.json", "examples/model-dag.json",
                         "examples/model-minimal.json"};
  size_t i;
  for (i = 0; i < sizeof files / sizeof files[0]; i++) {
    char *t1, *t2;
    size_t l1, l2;
    char p1[600], p2[600];
    snprintf(p1, sizeof p1, "%s", tu_tmp("rt1.json"));
    snprintf(p2, sizeof p2, "%s", tu_tmp("rt2.json"));
    assert_int_equal(pp_model_load(ctx, tu_path(files[i]), &m), PP_OK);
    assert_int_equal(pp_model_write(ctx, m, p1, NULL), PP_OK);
    assert_int_equal(pp_model_load(ctx, p1, &m2), PP_OK);
    assert_int_equal(pp_model_write(ctx, m2, p2, NULL), PP_OK);
    t1 = tu_slurp(p1, &l1);
    t2 = tu_slurp(p2, &l2);
    assert_non_null(t1);
    assert_non_null(t2);
    assert_int_equal(l1, l2);
    assert_memory_equal(t1, t2, l1);
    /* The reloaded model answers every question the same way. */
    assert_int_equal(pp_model_nop(m), pp_model_nop(m2));
    assert_int_equal(pp_model_nedge(m), pp_model_nedge(m2));
    assert_int_equal(pp_model_ntable(m), pp_model_ntable(m2));
    {
      int32_t v;
      for (v = 0; v < pp_model_nop(m); v++) {
        pp_op_desc d1, d2;
        pp_op_time x1, x2;
        pp_type_key k = {.name = "T4", .speed = 0.7, .peak_tflops = 65};
        pp_model_op(m, v, &d1);
        pp_model_op(m2, v, &d2);
        assert_string_equal(d1.name, d2.name);
        assert_true(d1.fwd_ms == d2.fwd_ms && d1.bwd_ms == d2.bwd_ms);
        assert_true(d1.update_ms == d2.update_ms);
        assert_true(d1.fwd_flops == d2.fwd_flops);
        assert_int_equal(d1.param_bytes, d2.param_bytes);
        assert_int_equal(d1.saved_bytes, d2.saved_bytes);
        assert_int_equal(pp_model_op_tied(m, v), pp_model_op_tied(m2, v));
        pp_model_op_time(m, v, &k, 2, 4, &x1);
        pp_model_op_time(m2, v, &k, 2, 4, &x2);
        assert_true(x1.fwd_ms == x2.fwd_ms && x1.est == x2.est);
      }
    }
    free(t1);
    free(t2);
    pp_model_destroy(m);
    pp_model_destroy(m2);
  }
}

static void t_optional_fields(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = NULL;
  double x;
  pp_op_sizes sz;
  assert_int_equal(pp_model_load(ctx, tu_path("examples/model-chain.json"), &m),
                   PP_OK);
  assert_string_equal(pp_model_reference_type(m), "V100");
  assert_true(pp_model_efficiency(m) == 0.45);
  assert_int_equal(pp_model_micro_batch(m), 2);
  assert_int_equal(pp_model_nhyper(m), 4);
  assert_string_equal(pp_model_hyper(m, 1, &x), "hidden");
  assert_true(x == 512);
  assert_int_equal(pp_model_op_tied(m, 3), 0);
  assert_int_equal(pp_model_ntable(m), 3);
  assert_int_equal(pp_model_ntp_sizes(m), 1);
  assert_int_equal(pp_model_op_sizes(m, 1, 2, 2, &sz), PP_OK);
  assert_true(sz.param_bytes == 3158016 && sz.saved_bytes == 5242880);
  assert_int_equal(sz.est, 0);
  /* Activation sizes scale with the micro-batch. */
  assert_int_equal(pp_model_op_sizes(m, 1, 2, 4, &sz), PP_OK);
  assert_true(sz.saved_bytes == 2 * 5242880.0);
  /* No table for tp 4: parameters divide, the output stays whole. */
  assert_int_equal(pp_model_op_sizes(m, 1, 4, 2, &sz), PP_OK);
  assert_true(sz.param_bytes == 6309888 / 4.0);
  assert_true(sz.out_bytes == 524288);
  assert_int_equal(sz.est, PP_EST_TP);
  pp_model_destroy(m);
}

/* ---- errors ----------------------------------------------------------- */

/* An op with one field replaced: FIELD is spliced in. */
static pp_status with_op(pp_ctx *ctx, const char *fields, pp_model **m)
{
  char buf[4096];
  snprintf(buf, sizeof buf,
           "{\"ops\": [{\"name\": \"a\", \"fwd_ms\": 1, \"bwd_ms\": 2, "
           "\"param_bytes\": 1, \"out_bytes\": 1, \"saved_bytes\": 1},\n"
           "{%s}]}",
           fields);
  return tu_model_json(ctx, buf, m);
}

static void t_malformed(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = NULL;
  tu_expect_error(ctx, tu_model_json(ctx, "", &m), PP_EPARSE, "test.json:1",
                  "malformed JSON", NULL);
  assert_null(m);
  tu_expect_error(ctx, tu_model_json(ctx, "   \n\n", &m), PP_EPARSE,
                  "test.json:", NULL);
  tu_expect_error(ctx, tu_model_json(ctx, "{\"ops\": [", &m), PP_EPARSE,
                  "test.json:1:", NULL);
  tu_expect_error(ctx, tu_model_json(ctx, "{\n\"ops\": [\n  NaN]}", &m),
                  PP_EPARSE, "test.json:3:", "NaN", NULL);
  tu_expect_error(ctx, tu_model_json(ctx, "[1, 2]", &m), PP_EPARSE,
                  "must be a JSON object", NULL);
  tu_expect_error(ctx, tu_model_json(ctx, "{\"ops\": [], \"ops\": []}", &m),
                  PP_EPARSE, "duplicate", NULL);
  tu_expect_error(ctx, tu_model_json(ctx, "{\"ops\": [1e400]}", &m), PP_EPARSE,
                  "overflow", NULL);
  tu_expect_error(
      ctx, tu_model_json(ctx, "{\"ops\": [123456789012345678901234]}", &m),
      PP_EPARSE, "too big integer", NULL);
  tu_expect_error(ctx, tu_model_json(ctx, "{} trailing", &m), PP_EPARSE,
                  "test.json:1:", NULL);
  {
    /* Deep nesting stops at jansson's depth limit, without a crash. */
    size_t n = 100000, i;
    char *deep = malloc(2 * n + 16);
    strcpy(deep, "{\"ops\": ");
    for (i = 0; i < n; i++)
      deep[8 + i] = '[';
    deep[8 + n] = '\0';
    tu_expect_error(ctx, tu_model_json(ctx, deep, &m), PP_EPARSE,
                    "test.json:1:", NULL);
    free(deep);
  }
}

static void t_missing_and_types(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = NULL;
  static const char *required[] = {"fwd_ms", "bwd_ms", "param_bytes",
                                   "out_bytes", "saved_bytes"};
  size_t i;
  tu_expect_error(ctx, tu_model_json(ctx, "{}", &m), PP_EINPUT,
                  "missing field \"ops\"", NULL);
  tu_expect_error(ctx, tu_model_json(ctx, "{\"ops\": {}}", &m), PP_EINPUT,
                  "\"ops\" must be an array", NULL);
  tu_expect_error(ctx, tu_model_json(ctx, "{\"ops\": []}", &m), PP_EINPUT,
                  "no operators", NULL);
  tu_expect_error(ctx, tu_model_json(ctx, "{\"ops\": [3]}", &m), PP_EINPUT,
                  "operator 0 must be an object", NULL);
  tu_expect_error(ctx, with_op(ctx, "\"fwd_ms\": 1", &m), PP_EINPUT,
                  "operator 1", "missing field \"name\"", NULL);
  tu_expect_error(ctx, with_op(ctx, "\"name\": 5", &m), PP_EINPUT,
                  "\"name\" must be a string", NULL);
  for (i = 0; i < sizeof required / sizeof required[0]; i++) {
    char fields[512], expect[64];
    size_t k;
    int off = snprintf(fields, sizeof fields, "\"name\": \"b\"");
    for (k = 0; k < sizeof required / sizeof required[0]; k++)
      if (k != i)
        off += snprintf(fields + off, sizeof fields - (size_t)off,
                        ", \"%s\": 1", required[k]);
    snprintf(expect, sizeof expect, "missing field \"%s\"", required[i]);
    tu_expect_error(ctx, with_op(ctx, fields, &m), PP_EINPUT,
                    "operator 'b' (index 1)", expect, NULL);
  }
  tu_expect_error(ctx,
                  with_op(ctx,
                          "\"name\": \"b\", \"fwd_ms\": \"1\", \"bwd_ms\": 1, "
                          "\"param_bytes\": 1, \"out_bytes\": 1, "
                          "\"saved_bytes\": 1",
                          &m),
                  PP_EINPUT, "\"fwd_ms\" must be a number, not a string", NULL);
  tu_expect_error(ctx,
                  with_op(ctx,
                          "\"name\": \"b\", \"fwd_ms\": 1, \"bwd_ms\": 1, "
                          "\"param_bytes\": 1.5, \"out_bytes\": 1, "
                          "\"saved_bytes\": 1",
                          &m),
                  PP_EINPUT, "\"param_bytes\" must be an integer", NULL);
  tu_expect_error(ctx,
                  with_op(ctx,
                          "\"name\": \"b\", \"fwd_ms\": 1, \"bwd_ms\": 1, "
                          "\"param_bytes\": true, \"out_bytes\": 1, "
                          "\"saved_bytes\": 1",
                          &m),
                  PP_EINPUT, "must be an integer, not a boolean", NULL);
  tu_expect_error(ctx,
                  tu_model_json(ctx, "{\"micro_batch\": 0, \"ops\": []}", &m),
                  PP_EINPUT, "micro_batch", NULL);
  tu_expect_error(ctx,
                  tu_model_json(ctx, "{\"efficiency\": 2, \"ops\": []}", &m),
                  PP_ELIMIT, "efficiency", NULL);
  tu_expect_error(ctx, tu_model_json(ctx, "{\"hyper\": [], \"ops\": []}", &m),
                  PP_EINPUT, "hyper", NULL);
  assert_null(m);
}

static void t_negative_and_huge(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = NULL;
  tu_expect_error(ctx,
                  with_op(ctx,
                          "\"name\": \"b\", \"fwd_ms\": -1, \"bwd_ms\": 1, "
                          "\"param_bytes\": 1, \"out_bytes\": 1, "
                          "\"saved_bytes\": 1",
                          &m),
                  PP_EINPUT, "operator 'b' (index 1)", "\"fwd_ms\" is negative",
                  NULL);
  tu_expect_error(ctx,
                  with_op(ctx,
                          "\"name\": \"b\", \"fwd_ms\": 1, \"bwd_ms\": 1, "
                          "\"param_bytes\": -5, \"out_bytes\": 1, "
                          "\"saved_bytes\": 1",
                          &m),
                  PP_EINPUT, "\"param_bytes\" is negative", NULL);
  tu_expect_error(ctx,
                  with_op(ctx,
                          "\"name\": \"b\", \"fwd_ms\": 1, \"bwd_ms\": 1, "
                          "\"param_bytes\": 9000000000000000000, "
                          "\"out_bytes\": 1, \"saved_bytes\": 1",
                          &m),
                  PP_ELIMIT, "\"param_bytes\" must be at most", NULL);
  tu_expect_error(ctx,
                  with_op(ctx,
                          "\"name\": \"b\", \"fwd_ms\": 1e308, \"bwd_ms\": "
                          "1e308, \"param_bytes\": 1, \"out_bytes\": 1, "
                          "\"saved_bytes\": 1, \"update_ms\": -0.5",
                          &m),
                  PP_EINPUT, "\"update_ms\" is negative", NULL);
  {
    /* A name over the limit. */
    size_t n = 5000;
    char *name = malloc(n + 1), *buf = malloc(n + 256);
    memset(name, 'x', n);
    name[n] = '\0';
    snprintf(buf, n + 256,
             "\"name\": \"%s\", \"fwd_ms\": 1, \"bwd_ms\": 1, "
             "\"param_bytes\": 1, \"out_bytes\": 1, \"saved_bytes\": 1",
             name);
    {
      char *doc = malloc(n + 512);
      snprintf(doc, n + 512, "{\"ops\": [{%s}]}", buf);
      tu_expect_error(ctx, tu_model_json(ctx, doc, &m), PP_ELIMIT,
                      "longer than", NULL);
      free(doc);
    }
    free(name);
    free(buf);
  }
}

static pp_status with_edges(pp_ctx *ctx, const char *edges, pp_model **m)
{
  char buf[4096];
  snprintf(
      buf, sizeof buf,
      "{\"ops\": ["
      "{\"name\": \"a\", \"fwd_ms\": 1, \"bwd_ms\": 2, \"param_bytes\": 1, "
      "\"out_bytes\": 1, \"saved_bytes\": 1},"
      "{\"name\": \"b\", \"fwd_ms\": 1, \"bwd_ms\": 2, \"param_bytes\": 1, "
      "\"out_bytes\": 1, \"saved_bytes\": 1},"
      "{\"name\": \"c\", \"fwd_ms\": 1, \"bwd_ms\": 2, \"param_bytes\": 1, "
      "\"out_bytes\": 1, \"saved_bytes\": 1}],\n"
      "\"edges\": [%s]}",
      edges);
  return tu_model_json(ctx, buf, m);
}

static void t_graph_errors(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = NULL;
  tu_expect_error(ctx,
                  with_edges(ctx,
                             "{\"from\": \"a\", \"to\": \"b\"}, {\"from\": "
                             "\"b\", \"to\": \"c\"}, {\"from\": \"c\", "
                             "\"to\": \"a\"}",
                             &m),
                  PP_EINPUT, "cycle", "'a' -> 'b' -> 'c' -> 'a'", NULL);
  tu_expect_error(ctx, with_edges(ctx, "{\"from\": \"b\", \"to\": \"b\"}", &m),
                  PP_EINPUT, "'b' feeds itself", NULL);
  tu_expect_error(ctx, with_edges(ctx, "{\"from\": \"a\", \"to\": \"q\"}", &m),
                  PP_EINPUT, "edge 0", "unknown operator 'q'", NULL);
  tu_expect_error(ctx, with_edges(ctx, "{\"from\": 0, \"to\": 3}", &m),
                  PP_EINPUT, "operator index 3, out of range", NULL);
  tu_expect_error(ctx, with_edges(ctx, "{\"from\": -1, \"to\": 1}", &m),
                  PP_EINPUT, "operator index -1", NULL);
  tu_expect_error(ctx, with_edges(ctx, "{\"from\": 0}", &m), PP_EINPUT,
                  "edge 0: missing field \"to\"", NULL);
  tu_expect_error(ctx, with_edges(ctx, "{\"from\": 1.5, \"to\": 2}", &m),
                  PP_EINPUT, "operator name or index", NULL);
  tu_expect_error(ctx,
                  with_edges(ctx,
                             "{\"from\": \"a\", \"to\": \"b\"}, {\"from\": 0, "
                             "\"to\": 1}",
                             &m),
                  PP_EINPUT, "duplicate edge 'a' -> 'b'", NULL);
  tu_expect_error(
      ctx,
      with_edges(ctx, "{\"from\": \"a\", \"to\": \"b\", \"bytes\": -2}", &m),
      PP_EINPUT, "\"bytes\" is negative", NULL);
  tu_expect_error(ctx,
                  with_op(ctx,
                          "\"name\": \"a\", \"fwd_ms\": 1, \"bwd_ms\": 1, "
                          "\"param_bytes\": 1, \"out_bytes\": 1, "
                          "\"saved_bytes\": 1",
                          &m),
                  PP_EINPUT, "duplicate name", "also operator 0", NULL);
  assert_null(m);
}

static void t_times_and_ties(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = NULL;
  const char *base = "\"name\": \"b\", \"fwd_ms\": 1, \"bwd_ms\": 1, "
                     "\"param_bytes\": 1, \"out_bytes\": 1, "
                     "\"saved_bytes\": 1, ";
  char buf[1024];
  snprintf(buf, sizeof buf, "%s\"times\": [{\"fwd_ms\": 1, \"bwd_ms\": 2}]",
           base);
  tu_expect_error(ctx, with_op(ctx, buf, &m), PP_EINPUT,
                  "repeats the reference point", NULL);
  snprintf(buf, sizeof buf,
           "%s\"times\": [{\"type\": \"T4\", \"fwd_ms\": 1, \"bwd_ms\": 2}, "
           "{\"type\": \"T4\", \"tp\": 1, \"fwd_ms\": 3, \"bwd_ms\": 2}]",
           base);
  tu_expect_error(ctx, with_op(ctx, buf, &m), PP_EINPUT,
                  "two times entries for (T4, tp 1", NULL);
  snprintf(buf, sizeof buf,
           "%s\"times\": [{\"type\": \"T4\", \"tp\": 0, \"fwd_ms\": 1, "
           "\"bwd_ms\": 2}]",
           base);
  tu_expect_error(ctx, with_op(ctx, buf, &m), PP_EINPUT, "times entry 0",
                  "\"tp\" must be at least 1", NULL);
  snprintf(buf, sizeof buf, "%s\"times\": [{\"type\": \"T4\", \"bwd_ms\": 2}]",
           base);
  tu_expect_error(ctx, with_op(ctx, buf, &m), PP_EINPUT,
                  "missing field \"fwd_ms\"", NULL);
  snprintf(buf, sizeof buf, "%s\"times\": 5", base);
  tu_expect_error(ctx, with_op(ctx, buf, &m), PP_EINPUT,
                  "\"times\" must be an array", NULL);
  snprintf(buf, sizeof buf,
           "%s\"tp_sizes\": [{\"tp\": 1, \"param_bytes\": 1, "
           "\"out_bytes\": 1, \"saved_bytes\": 1}]",
           base);
  tu_expect_error(ctx, with_op(ctx, buf, &m), PP_EINPUT, "tp_sizes", NULL);
  snprintf(buf, sizeof buf, "%s\"tied_to\": \"b\"", base);
  tu_expect_error(ctx, with_op(ctx, buf, &m), PP_EINPUT, "tied to itself",
                  NULL);
  snprintf(buf, sizeof buf, "%s\"tied_to\": \"zz\"", base);
  tu_expect_error(ctx, with_op(ctx, buf, &m), PP_EINPUT,
                  "unknown operator 'zz'", NULL);
  {
    const char *doc =
        "{\"ops\": ["
        "{\"name\": \"a\", \"fwd_ms\": 1, \"bwd_ms\": 2, \"param_bytes\": 1, "
        "\"out_bytes\": 1, \"saved_bytes\": 1},"
        "{\"name\": \"b\", \"fwd_ms\": 1, \"bwd_ms\": 2, \"param_bytes\": 1, "
        "\"out_bytes\": 1, \"saved_bytes\": 1, \"tied_to\": \"a\"},"
        "{\"name\": \"c\", \"fwd_ms\": 1, \"bwd_ms\": 2, \"param_bytes\": 1, "
        "\"out_bytes\": 1, \"saved_bytes\": 1, \"tied_to\": 1}]}";
    tu_expect_error(ctx, tu_model_json(ctx, doc, &m), PP_EINPUT,
                    "which is itself tied", NULL);
  }
  assert_null(m);
}

/* 100,000 operators with skip edges load, in order. */
static void t_huge(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = NULL;
  size_t n = 100000, cap = n * 160, off = 0, i;
  char *doc = malloc(cap);
  off += (size_t)snprintf(doc + off, cap - off, "{\"ops\": [");
  for (i = 0; i < n; i++)
    off += (size_t)snprintf(doc + off, cap - off,
                            "%s{\"name\": \"op%zu\", \"fwd_ms\": 0.5, "
                            "\"bwd_ms\": 1, \"param_bytes\": 10, "
                            "\"out_bytes\": 20, \"saved_bytes\": 30}",
                            i ? "," : "", i);
  off += (size_t)snprintf(doc + off, cap - off, "], \"edges\": [");
  for (i = 0; i + 1 < n; i++)
    off += (size_t)snprintf(doc + off, cap - off,
                            "%s{\"from\": %zu, \"to\": %zu}%s", i ? "," : "", i,
                            i + 1, i % 10 == 0 && i + 5 < n ? "" : "");
  for (i = 0; i + 5 < n; i += 10)
    off += (size_t)snprintf(doc + off, cap - off,
                            ",{\"from\": %zu, \"to\": %zu}", i, i + 5);
  snprintf(doc + off, cap - off, "]}");
  assert_int_equal(tu_model_json(ctx, doc, &m), PP_OK);
  assert_int_equal(pp_model_nop(m), (int32_t)n);
  assert_int_equal(pp_model_nedge(m), (int32_t)(n - 1 + (n - 5 + 9) / 10));
  assert_true(pp_model_topo_unique(m));
  assert_false(pp_model_is_chain(m));
  pp_model_destroy(m);
  free(doc);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      TU_CTX_TEST(t_minimal),
      TU_CTX_TEST(t_indices_and_chain),
      TU_CTX_TEST(t_full_example_roundtrip),
      TU_CTX_TEST(t_optional_fields),
      TU_CTX_TEST(t_malformed),
      TU_CTX_TEST(t_missing_and_types),
      TU_CTX_TEST(t_negative_and_huge),
      TU_CTX_TEST(t_graph_errors),
      TU_CTX_TEST(t_times_and_ties),
      TU_CTX_TEST(t_huge),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
