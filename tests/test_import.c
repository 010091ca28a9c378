/* SPDX-License-Identifier: MIT */
/*
** The real-world readers: ONNX models (built here through the protoc-c
** bindings), nvidia-smi topo -m text and NCCL topology XML; exact
** contents, the spec forms, and clear errors on malformed inputs.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "onnx_build.h"
#include "testutil.h"

/* ---- ONNX --------------------------------------------------------------- */

static pp_model *onnx_model(pp_ctx *ctx, int32_t batch)
{
  size_t len;
  uint8_t *b = ob_build(OB_OK, &len);
  pp_onnx_params p;
  pp_model *m = NULL;
  pp_status rc;
  assert_non_null(b);
  pp_onnx_params_init(&p);
  p.batch = batch;
  rc = pp_model_read_onnx(ctx, b, len, "tiny.onnx", &p, &m);
  free(b);
  if (rc)
    fail_msg("%s", pp_ctx_errmsg(ctx));
  return m;
}

static void t_onnx_contents(void **state)
{
  static const char *const names[] = {"conv1", "relu1",  "pool", "reshape",
                                      "fc1",   "Relu_5", "add",  "fc2"};
  static const char *const kinds[] = {"Conv", "Relu", "MaxPool", "Reshape",
                                      "Gemm", "Relu", "Add",     "Gemm"};
  /* at batch 2: parameters (float initializers only: the int64 shape of
  ** Reshape is a constant), first output, forward FLOPs */
  static const int64_t param[] = {448, 0, 0, 0, 8320, 0, 0, 1320};
  static const int64_t outb[] = {2048, 2048, 512, 512, 256, 256, 256, 80};
  static const double flops[] = {
      2 * 512 * 27 + 512, 512, 128 * 4, 0,
      2 * 64 * 64 + 64,   64,  64,      2 * 20 * 32 + 20};
  /* what autograd keeps (docs/FORMATS.md): conv1 its input x, relu1 its
  ** output, pool its input (already kept by relu1) and int64 indices, fc1
  ** its input (a view of p1), Relu_5 its output, fc2 its input */
  static const int64_t saved[] = {1536, 2048, 1024, 0, 512, 256, 0, 256};
  static const int32_t efrom[] = {0, 1, 2, 3, 4, 4, 5, 6};
  static const int32_t eto[] = {1, 2, 3, 4, 5, 6, 6, 7};
  static const int64_t ebytes[] = {2048, 2048, 512, 512, 256, 256, 256, 256};
  pp_ctx *ctx;
  pp_model *m, *m8;
  int64_t total = 0;
  int32_t i, e;
  (void)state;
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  m = onnx_model(ctx, 2);
  assert_string_equal(pp_model_name(m), "tiny_cnn");
  assert_int_equal(pp_model_nop(m), 8);
  assert_int_equal(pp_model_micro_batch(m), 2);
  for (i = 0; i < 8; i++) {
    pp_op_desc d;
    assert_int_equal(pp_model_op(m, i, &d), PP_OK);
    assert_string_equal(d.name, names[i]);
    assert_string_equal(d.kind, kinds[i]);
    assert_int_equal(d.param_bytes, param[i]);
    assert_int_equal(d.out_bytes, outb[i]);
    assert_int_equal(d.saved_bytes, saved[i]);
    assert_true(d.fwd_flops == flops[i]);
    assert_true(d.bwd_flops == 2 * flops[i]);
    /* the V100 estimate: FLOPs over 125 TFLOP/s at efficiency 0.5 */
    assert_true(fabs(d.fwd_ms - flops[i] / (125e12 * 0.5 / 1e3)) < 1e-15);
    total += d.param_bytes;
  }
  assert_int_equal(total, 10088);
  { /* memory traffic: conv1 reads x, W, B and writes c1; the backward
    ** reads c1's gradient and x, reads W and B and writes their
    ** gradients (x needs none); the reshape is a view */
    pp_op_desc d;
    pp_model_op(m, 0, &d);
    assert_true(d.fwd_bytes == 1536 + 432 + 16 + 2048);
    assert_true(d.bwd_bytes == 2048 + 1536 + 2 * (432 + 16));
    pp_model_op(m, 3, &d);
    assert_true(d.fwd_bytes == 0 && d.bwd_bytes == 0);
    pp_model_op(m, 1, &d);
    assert_true(d.fwd_bytes == 2 * 2048);
  }
  assert_int_equal(pp_model_nedge(m), 8);
  for (e = 0; e < 8; e++) {
    int32_t f, t;
    int64_t b;
    assert_int_equal(pp_model_edge(m, e, &f, &t, &b), PP_OK);
    assert_int_equal(f, efrom[e]);
    assert_int_equal(t, eto[e]);
    assert_int_equal(b, ebytes[e]);
  }
  assert_false(pp_model_is_chain(m));
  /* the symbolic batch scales activations and FLOPs, not parameters */
  m8 = onnx_model(ctx, 8);
  for (i = 0; i < 8; i++) {
    pp_op_desc a, b;
    pp_model_op(m, i, &a);
    pp_model_op(m8, i, &b);
    assert_int_equal(b.param_bytes, a.param_bytes);
    assert_int_equal(b.out_bytes, 4 * a.out_bytes);
    assert_true(b.fwd_flops == 4 * a.fwd_flops);
  }
  pp_model_destroy(m8);
  pp_model_destroy(m);
  pp_ctx_destroy(ctx);
}

static void t_onnx_defects(void **state)
{
  static const struct {
    enum ob_defect d;
    pp_status rc;
    const char *a, *b;
  } cases[] = {
      {OB_DYN_RESHAPE, PP_EINPUT, "operator 'reshape' (Reshape)",
       "input 1 ('dynshape', the target shape) is not a constant"},
      {OB_SYM_DIM, PP_EINPUT, "'x'", "dim.S=N"},
      {OB_UNKNOWN_INPUT, PP_EINPUT, "'fc1'", "'ghost'"},
      {OB_DUP_PRODUCER, PP_EINPUT, "'c1'", "produced by"},
      {OB_CYCLE, PP_EINPUT, "cycle", "conv1"},
      {OB_NEG_DIM, PP_EINPUT, "'c1'", "negative"},
      {OB_HUGE_DIM, PP_EINPUT, "'p1'", "elements"},
      {OB_NO_GRAPH, PP_EINPUT, "tiny.onnx", "no graph"},
      {OB_NO_NODES, PP_EINPUT, "tiny.onnx", "no nodes"},
      {OB_NO_OP_TYPE, PP_EINPUT, "node 5", "op_type"},
      {OB_GEMM_NO_B, PP_EINPUT, "operator 'fc1' (Gemm)", "input B is missing"},
      {OB_NAN_SHAPE, PP_EINPUT, "operator 'reshape' (Reshape)",
       "a floating-point tensor; ONNX's Reshape takes int64"},
  };
  pp_ctx *ctx;
  size_t i;
  (void)state;
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t len;
    uint8_t *b = ob_build(cases[i].d, &len);
    pp_model *m = (pp_model *)&m;
    pp_status rc;
    assert_non_null(b);
    pp_ctx_clear_error(ctx);
    rc = pp_model_read_onnx(ctx, b, len, "tiny.onnx", NULL, &m);
    free(b);
    assert_null(m);
    tu_expect_error(ctx, rc, cases[i].rc, cases[i].a, cases[i].b, NULL);
  }
  pp_ctx_destroy(ctx);
}

/* Read variant d of the tiny network at batch 2 (dim S = 8 when given). */
static pp_model *onnx_variant(pp_ctx *ctx, enum ob_defect d, bool sym)
{
  size_t len;
  uint8_t *b = ob_build(d, &len);
  pp_onnx_params p;
  pp_model *m = NULL;
  assert_non_null(b);
  pp_onnx_params_init(&p);
  p.batch = 2;
  if (sym) {
    p.nsym = 1;
    p.sym_name[0] = "S";
    p.sym_value[0] = 8;
  }
  if (pp_model_read_onnx(ctx, b, len, "tiny.onnx", &p, &m))
    fail_msg("%s", pp_ctx_errmsg(ctx));
  free(b);
  return m;
}

/* The same figures, operator by operator. */
static void same_ops(const pp_model *a, const pp_model *b)
{
  int32_t i;
  assert_int_equal(pp_model_nop(a), pp_model_nop(b));
  assert_int_equal(pp_model_nedge(a), pp_model_nedge(b));
  for (i = 0; i < pp_model_nop(a); i++) {
    pp_op_desc x, y;
    pp_model_op(a, i, &x);
    pp_model_op(b, i, &y);
    assert_string_equal(x.name, y.name);
    assert_int_equal(x.param_bytes, y.param_bytes);
    assert_int_equal(x.out_bytes, y.out_bytes);
    assert_int_equal(x.saved_bytes, y.saved_bytes);
    assert_true(x.fwd_flops == y.fwd_flops && x.fwd_bytes == y.fwd_bytes);
  }
}

/* As exported, without shape inference: the reader infers every shape;
** a symbolic dimension other than the batch takes its dim.NAME value;
** Identity and Constant nodes and tied initializers fold away. */
static void t_onnx_inferred(void **state)
{
  pp_ctx *ctx;
  pp_model *ok, *m;
  int64_t total = 0;
  int32_t i, e, relu = -1, pool = -1;
  bool edge = false;
  (void)state;
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  ok = onnx_variant(ctx, OB_OK, false);
  m = onnx_variant(ctx, OB_NO_SHAPE, false);
  same_ops(ok, m);
  pp_model_destroy(m);
  m = onnx_variant(ctx, OB_SYM_DIM, true);
  same_ops(ok, m);
  pp_model_destroy(m);

  m = onnx_variant(ctx, OB_ALIASES, false);
  assert_int_equal(pp_model_nop(m), 10); /* + tied, tied2 */
  for (i = 0; i < pp_model_nop(m); i++) {
    pp_op_desc d;
    pp_model_op(m, i, &d);
    total += d.param_bytes;
    assert_string_not_equal(d.kind, "Identity");
    assert_string_not_equal(d.kind, "Constant");
    assert_string_not_equal(d.kind, "Transpose");
  }
  assert_int_equal(total, 10088); /* W1 once, not three times */
  relu = pp_model_find_op(m, "relu1");
  pool = pp_model_find_op(m, "pool");
  for (e = 0; e < pp_model_nedge(m); e++) {
    int32_t f, t;
    int64_t b;
    pp_model_edge(m, e, &f, &t, &b);
    edge = edge || (f == relu && t == pool && b == 2048);
    assert_true(f != pp_model_find_op(m, "reshape") ||
                t == pp_model_find_op(m, "fc1"));
  }
  assert_true(edge);
  pp_model_destroy(m);
  pp_model_destroy(ok);
  pp_ctx_destroy(ctx);
}

static void t_onnx_garbage(void **state)
{
  pp_ctx *ctx;
  pp_model *m = NULL;
  pp_onnx_params p;
  size_t len, k;
  uint8_t *b;
  static const char text[] = "{\"operators\": []}";
  uint8_t junk[256];
  uint64_t s = 7;
  int ok = 0, bad = 0;
  (void)state;
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  tu_expect_error(ctx, pp_model_read_onnx(ctx, "", 0, "e.onnx", NULL, &m),
                  PP_EPARSE, "e.onnx", "empty", NULL);
  pp_ctx_clear_error(ctx);
  tu_expect_error(
      ctx, pp_model_read_onnx(ctx, text, sizeof text - 1, "j.onnx", NULL, &m),
      PP_EPARSE, "j.onnx", "not an ONNX model", NULL);
  pp_onnx_params_init(&p);
  p.batch = -1;
  pp_ctx_clear_error(ctx);
  tu_expect_error(ctx, pp_model_read_onnx(ctx, text, 4, "b.onnx", &p, &m),
                  PP_EINVAL, "batch", NULL);
  p.batch = 1;
  p.nsym = 1; /* a named dimension without a name */
  pp_ctx_clear_error(ctx);
  tu_expect_error(ctx, pp_model_read_onnx(ctx, text, 4, "b.onnx", &p, &m),
                  PP_EINVAL, "named dimension 0", NULL);
  p.nsym = 0;
  p.efficiency = 0.0 / 0.0; /* NaN */
  pp_ctx_clear_error(ctx);
  tu_expect_error(ctx, pp_model_read_onnx(ctx, text, 4, "b.onnx", &p, &m),
                  PP_EINVAL, "efficiency", NULL);
  /* random bytes and every truncation of a good file: an error with a
  ** message or a model, never a crash (ASan watches) */
  for (k = 0; k < 200; k++) {
    size_t i, n = 1 + tu_rand(&s, sizeof junk);
    for (i = 0; i < n; i++)
      junk[i] = (uint8_t)tu_rand(&s, 256);
    pp_ctx_clear_error(ctx);
    if (pp_model_read_onnx(ctx, junk, n, "junk.onnx", NULL, &m) == PP_OK)
      pp_model_destroy(m), ok++;
    else
      assert_true(pp_ctx_errmsg(ctx)[0] != '\0'), bad++;
  }
  b = ob_build(OB_OK, &len);
  for (k = 1; k < len; k++) {
    pp_ctx_clear_error(ctx);
    if (pp_model_read_onnx(ctx, b, k, "cut.onnx", NULL, &m) == PP_OK)
      pp_model_destroy(m), ok++;
    else
      assert_true(pp_ctx_errmsg(ctx)[0] != '\0'), bad++;
  }
  free(b);
  assert_true(bad > 0);
  pp_ctx_destroy(ctx);
}

static void t_onnx_cli(void **state)
{
  size_t len;
  uint8_t *b = ob_build(OB_OK, &len);
  char path[600], cmd[1200], *out, *err;
  FILE *f;
  snprintf(path, sizeof path, "%s", tu_tmp("tiny.onnx"));
  f = fopen(path, "wb");
  (void)state;
  assert_non_null(f);
  assert_int_equal(fwrite(b, 1, len, f), len);
  fclose(f);
  free(b);
  snprintf(cmd, sizeof cmd, "model %s:batch=8,name=cnn --json", path);
  assert_int_equal(tu_run(cmd, &out, &err), 0);
  assert_non_null(strstr(out, "\"cnn\""));
  assert_non_null(strstr(out, "\"operators\": 8"));
  snprintf(cmd, sizeof cmd,
           "plan --model %s:batch=4 --cluster %s:gpu=V100 --batch 64", path,
           tu_path("examples/nvsmi-dgx1.txt"));
  if (tu_run(cmd, &out, &err) != 0)
    fail_msg("%s%s", out, err);
  snprintf(cmd, sizeof cmd, "model %s:batch=x", path);
  assert_int_not_equal(tu_run(cmd, &out, &err), 0);
  assert_non_null(strstr(err, "batch"));
  snprintf(cmd, sizeof cmd, "model %s:colour=red", path);
  assert_int_not_equal(tu_run(cmd, &out, &err), 0);
  assert_non_null(strstr(err, "unknown option 'colour'"));
}

/* A model made by the onnx library itself (Debian's python3-onnx): its
** shape inference and checker, then our reader; the figures the script
** computes from onnx's inferred shapes must be what we read.  Our own
** test network passes onnx's checker too. */
static void t_onnx_real(void **state)
{
  char cmd[2048], path[600], *out, *err;
  json_t *j, *ob, *fl, *v;
  json_error_t je;
  pp_ctx *ctx;
  pp_model *m;
  pp_onnx_params p;
  const char *key;
  int64_t total = 0;
  int32_t i;
  (void)state;
  if (tu_sh("/usr/bin/python3 -c 'import onnx'", NULL, NULL) != 0)
    fail_msg("python3-onnx is missing: run scripts/deps.sh --test");
  snprintf(path, sizeof path, "%s", tu_tmp("tiny-transformer.onnx"));
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s '%s' 4",
           tu_path("scripts/gen_onnx_example.py"), path);
  if (tu_sh(cmd, &out, &err) != 0)
    fail_msg("gen_onnx_example.py: %s", err);
  j = json_loads(out, 0, &je);
  assert_non_null(j);
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  pp_onnx_params_init(&p);
  p.batch = 4;
  if (pp_model_load_onnx(ctx, path, &p, &m))
    fail_msg("%s", pp_ctx_errmsg(ctx));
  assert_int_equal(pp_model_nop(m),
                   json_integer_value(json_object_get(j, "nodes")));
  for (i = 0; i < pp_model_nop(m); i++) {
    pp_op_desc d;
    pp_model_op(m, i, &d);
    total += d.param_bytes;
  }
  assert_int_equal(total,
                   json_integer_value(json_object_get(j, "param_bytes")));
  ob = json_object_get(j, "out_bytes");
  fl = json_object_get(j, "flops");
  json_object_foreach(ob, key, v)
  {
    pp_op_desc d;
    int32_t k = pp_model_find_op(m, key);
    assert_true(k >= 0);
    pp_model_op(m, k, &d);
    if (d.out_bytes != json_integer_value(v))
      fail_msg("%s: %lld bytes, onnx says %lld", key, (long long)d.out_bytes,
               (long long)json_integer_value(v));
  }
  json_object_foreach(fl, key, v)
  {
    pp_op_desc d;
    pp_model_op(m, pp_model_find_op(m, key), &d);
    if (d.fwd_flops != (double)json_integer_value(v))
      fail_msg("%s: %g FLOPs, expected %lld", key, d.fwd_flops,
               (long long)json_integer_value(v));
  }
  pp_model_destroy(m);
  pp_ctx_destroy(ctx);
  json_decref(j);
  { /* our C-built network is a valid ONNX model for the onnx checker */
    size_t len;
    uint8_t *b = ob_build(OB_OK, &len);
    FILE *f;
    snprintf(path, sizeof path, "%s", tu_tmp("tiny.onnx"));
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, len, f), len);
    fclose(f);
    free(b);
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c 'import onnx, sys; "
             "onnx.checker.check_model(onnx.load(sys.argv[1]))' '%s'",
             path);
    if (tu_sh(cmd, &out, &err) != 0)
      fail_msg("onnx.checker: %s", err);
  }
}

/* ---- nvidia-smi --------------------------------------------------------- */

static char *slurp(const char *rel, size_t *len)
{
  char *t = tu_slurp(tu_path(rel), len);
  if (!t)
    fail_msg("cannot read %s", rel);
  return t;
}

static void same_bandwidth(const pp_cluster *a, const pp_cluster *b)
{
  int32_t n = pp_cluster_ndev(a), i, j;
  assert_int_equal(pp_cluster_ndev(b), n);
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      if (pp_cluster_bandwidth(a, i, j) != pp_cluster_bandwidth(b, i, j))
        fail_msg("bandwidth %d-%d: %g vs %g", (int)i, (int)j,
                 pp_cluster_bandwidth(a, i, j), pp_cluster_bandwidth(b, i, j));
}

static void t_nvsmi(void **state)
{
  pp_ctx *ctx;
  pp_cluster *c, *ref, *c2;
  pp_topo_params p;
  pp_device_desc d;
  size_t len, i;
  char *t = slurp("examples/nvsmi-dgx1.txt", &len), *sp;
  (void)state;
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  /* DGX-1: NV1 25, NV2 50, SYS 10, as the dgx1 generator has it */
  pp_topo_params_init(&p);
  p.nodes = 2;
  p.inter_gbps = 3.125;
  p.gpu = "V100";
  assert_int_equal(pp_cluster_read_nvsmi(ctx, t, len, "nvsmi-dgx1.txt", &p, &c),
                   PP_OK);
  assert_int_equal(pp_cluster_load(ctx, "dgx1:2", &ref), PP_OK);
  same_bandwidth(c, ref);
  assert_int_equal(pp_cluster_device(c, 11, &d), PP_OK);
  assert_string_equal(d.name, "n1g3");
  assert_string_equal(d.host, "node1");
  assert_int_equal(d.local_gpu, 3);
  assert_int_equal(d.node, 1);
  {
    pp_device_type_desc td;
    assert_int_equal(pp_cluster_type(c, pp_cluster_device_type(c, 0), &td),
                     PP_OK);
    assert_string_equal(td.name, "V100");
  }
  /* the space-aligned output of older drivers reads the same */
  sp = malloc(len + 1);
  memcpy(sp, t, len + 1);
  for (i = 0; i < len; i++)
    if (sp[i] == '\t')
      sp[i] = ' ';
  assert_int_equal(pp_cluster_read_nvsmi(ctx, sp, len, "spaces", &p, &c2),
                   PP_OK);
  same_bandwidth(c, c2);
  pp_cluster_destroy(c2);
  free(sp);
  /* the same through a spec, options included */
  {
    char spec[1024];
    snprintf(spec, sizeof spec, "%s:nodes=2,inter=3.125,gpu=V100",
             tu_path("examples/nvsmi-dgx1.txt"));
    assert_int_equal(pp_cluster_load(ctx, spec, &c2), PP_OK);
    same_bandwidth(c2, ref);
    pp_cluster_destroy(c2);
  }
  pp_cluster_destroy(c);
  pp_cluster_destroy(ref);
  free(t);
  /* NVSwitch box: NV12 everywhere, 12 x 25 GB/s; the type is never
  ** guessed from the link count (issue 18: it silently became V100) */
  t = slurp("examples/nvsmi-dgx-a100.txt", &len);
  tu_expect_error(ctx, pp_cluster_read_nvsmi(ctx, t, len, "a100", NULL, &c),
                  PP_EINPUT, "a100", "gpu=", "gpus=", "--query-gpu", NULL);
  pp_ctx_clear_error(ctx);
  pp_topo_params_init(&p);
  p.gpu = "A100-80";
  assert_int_equal(pp_cluster_read_nvsmi(ctx, t, len, "a100", &p, &c), PP_OK);
  assert_int_equal(pp_cluster_ndev(c), 8);
  {
    pp_device_type_desc td;
    assert_int_equal(pp_cluster_type(c, 0, &td), PP_OK);
    assert_string_equal(td.name, "A100-80");
  }
  assert_true(pp_cluster_bandwidth(c, 0, 7) == 300);
  pp_cluster_destroy(c);
  pp_topo_params_init(&p);
  p.gpu = "H100";
  p.nvlink_gbps = 37.5;
  assert_int_equal(pp_cluster_read_nvsmi(ctx, t, len, "a100", &p, &c), PP_OK);
  assert_true(pp_cluster_bandwidth(c, 3, 4) == 450);
  pp_cluster_destroy(c);
  free(t);
  pp_ctx_destroy(ctx);
}

static void t_nvsmi_bad(void **state)
{
  static const struct {
    const char *text;
    pp_status rc;
    const char *a, *b;
  } cases[] = {
      {"", PP_EPARSE, "no header", "nvidia-smi topo -m"},
      {"hello world\n", PP_EPARSE, "no header", NULL},
      {"\tGPU0\tGPU1\nGPU0\tX\tNVX\nGPU1\tNV1\tX\n", PP_EPARSE,
       "t:2:", "'NVX'"},
      {"\tGPU0\tGPU1\nGPU0\tX\tNV1\n", PP_EPARSE, "ends before row GPU1", NULL},
      {"\tGPU0\tGPU1\nGPU0\tX\tNV1\nGPU1\tNV2\tX\n", PP_EINPUT, "symmetric",
       NULL},
      {"\tGPU0\tGPU1\nGPU0\tSYS\tNV1\nGPU1\tNV1\tX\n", PP_EPARSE, "to itself",
       NULL},
      {"\tGPU0\tGPU2\n", PP_EPARSE, "out of order", NULL},
      {"\tGPU0\tGPU1\nGPU1\tX\tNV1\n", PP_EPARSE, "GPU0 was expected", NULL},
      {"\tGPU0\tGPU1\nGPU0\tX\n", PP_EPARSE, "1 cells", NULL},
      {"\tGPU0\tGPU1\nGPU0\tX\tNV-1\nGPU1\tNV1\tX\n", PP_EPARSE, "'NV-1'",
       NULL},
  };
  pp_ctx *ctx;
  pp_cluster *c = NULL;
  pp_topo_params p;
  size_t i;
  char *big;
  (void)state;
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    pp_ctx_clear_error(ctx);
    tu_expect_error(ctx,
                    pp_cluster_read_nvsmi(ctx, cases[i].text,
                                          strlen(cases[i].text), "t", NULL, &c),
                    cases[i].rc, cases[i].a, cases[i].b, NULL);
    assert_null(c);
  }
  pp_ctx_clear_error(ctx);
  tu_expect_error(ctx, pp_cluster_read_nvsmi(ctx, "GPU0\0", 5, "t", NULL, &c),
                  PP_EPARSE, "NUL", NULL);
  /* more columns than a box can have */
  big = malloc(20000);
  strcpy(big, "GPU0");
  for (i = 0; i < 1100; i++)
    strcat(big, " NIC");
  pp_ctx_clear_error(ctx);
  tu_expect_error(ctx,
                  pp_cluster_read_nvsmi(ctx, big, strlen(big), "t", NULL, &c),
                  PP_ELIMIT, "columns", NULL);
  free(big);
  pp_topo_params_init(&p);
  p.gpu = "Z80";
  pp_ctx_clear_error(ctx);
  tu_expect_error(
      ctx, pp_cluster_read_nvsmi(ctx, "\tGPU0\nGPU0\tX\n", 12, "t", &p, &c),
      PP_EINPUT, "unknown GPU 'Z80'", NULL);
  pp_topo_params_init(&p);
  p.gpu = "V100";
  p.latency_us = 0.0 / 0.0;
  pp_ctx_clear_error(ctx);
  tu_expect_error(
      ctx, pp_cluster_read_nvsmi(ctx, "\tGPU0\nGPU0\tX\n", 12, "t", &p, &c),
      PP_EINPUT, "latency", NULL);
  pp_topo_params_init(&p);
  p.gpu = "V100";
  p.nodes = 3000;
  pp_ctx_clear_error(ctx);
  {
    size_t len;
    char *t = slurp("examples/nvsmi-dgx1.txt", &len);
    tu_expect_error(ctx, pp_cluster_read_nvsmi(ctx, t, len, "t", &p, &c),
                    PP_ELIMIT, "limit", NULL);
    free(t);
  }
  pp_ctx_destroy(ctx);
}

/* ---- NCCL XML ------------------------------------------------------------ */

static void t_nccl(void **state)
{
  pp_ctx *ctx;
  pp_cluster *c;
  pp_topo_params p;
  size_t len;
  char *t = slurp("examples/nccl-topo-dgx1.xml", &len);
  int32_t i, j;
  static const int links[8][8] = {
      {0, 1, 1, 2, 2, 0, 0, 0}, {1, 0, 2, 1, 0, 2, 0, 0},
      {1, 2, 0, 2, 0, 0, 1, 0}, {2, 1, 2, 0, 0, 0, 0, 1},
      {2, 0, 0, 0, 0, 1, 1, 2}, {0, 2, 0, 0, 1, 0, 2, 1},
      {0, 0, 1, 0, 1, 2, 0, 2}, {0, 0, 0, 1, 2, 1, 2, 0}};
  (void)state;
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  /* sm 70: 20 GB/s per NVLink (NCCL); no NVLink: across the sockets,
  ** Broadwell QPI at 6 */
  assert_int_equal(pp_cluster_read_nccl_xml(ctx, t, len, "dgx1.xml", NULL, &c),
                   PP_OK);
  assert_int_equal(pp_cluster_ndev(c), 8);
  for (i = 0; i < 8; i++)
    for (j = 0; j < 8; j++)
      if (i != j)
        assert_true(pp_cluster_bandwidth(c, i, j) ==
                    (links[i][j] ? 20.0 * links[i][j] : 6.0));
  pp_cluster_destroy(c);
  /* per-link override and a sys override */
  pp_topo_params_init(&p);
  p.nvlink_gbps = 25;
  p.sys_gbps = 10;
  p.nodes = 2;
  p.inter_gbps = 3.125;
  assert_int_equal(pp_cluster_read_nccl_xml(ctx, t, len, "dgx1.xml", &p, &c),
                   PP_OK);
  {
    pp_cluster *ref;
    assert_int_equal(pp_cluster_load(ctx, "dgx1:2", &ref), PP_OK);
    same_bandwidth(c, ref);
    pp_cluster_destroy(ref);
  }
  pp_cluster_destroy(c);
  free(t);
  /* NVSwitch: every pair through the merged switch, 12 x 20 */
  t = slurp("examples/nccl-topo-dgx-a100.xml", &len);
  assert_int_equal(pp_cluster_read_nccl_xml(ctx, t, len, "a100.xml", NULL, &c),
                   PP_OK);
  for (i = 0; i < 8; i++)
    for (j = 0; j < 8; j++)
      if (i != j)
        assert_true(pp_cluster_bandwidth(c, i, j) == 240);
  pp_cluster_destroy(c);
  free(t);
  { /* PCIe only: through the switch 8 GT/s x16 = 12, through the Gen4
    ** root 16 GT/s x8 = 12, across AMD sockets 16 (not the bottleneck) */
    static const char x[] =
        "<system version=\"1\">\n"
        " <cpu numaid=\"0\" arch=\"x86_64\" vendor=\"AuthenticAMD\">\n"
        "  <pci busid=\"0000:01:00.0\" link_speed=\"16.0 GT/s\" "
        "link_width=\"8\">\n"
        "   <pci busid=\"0000:02:00.0\" link_speed=\"8 GT/s\" "
        "link_width=\"16\"><gpu dev=\"1\" sm=\"75\"/></pci>\n"
        "   <pci busid=\"0000:03:00.0\" link_speed=\"8 GT/s\" "
        "link_width=\"4\"><gpu dev=\"0\" sm=\"75\"/></pci>\n"
        "  </pci>\n"
        " </cpu>\n"
        " <cpu numaid=\"1\" arch=\"x86_64\" vendor=\"AuthenticAMD\">\n"
        "  <pci busid=\"0000:81:00.0\" link_speed=\"32 GT/s\" "
        "link_width=\"16\"><gpu dev=\"2\" sm=\"75\"/></pci>\n"
        " </cpu>\n"
        "</system>\n";
    pp_device_type_desc td;
    assert_int_equal(
        pp_cluster_read_nccl_xml(ctx, x, sizeof x - 1, "pcie.xml", NULL, &c),
        PP_OK);
    assert_int_equal(pp_cluster_type(c, 0, &td), PP_OK);
    assert_string_equal(td.name, "T4");
    /* dev 0 is the x4 one: 4 x 60 / 80 = 3 */
    assert_true(pp_cluster_bandwidth(c, 0, 1) == 3);
    assert_true(pp_cluster_bandwidth(c, 1, 2) == 12);
    assert_true(pp_cluster_bandwidth(c, 0, 2) == 3);
    pp_cluster_destroy(c);
  }
  pp_ctx_destroy(ctx);
}

static void t_nccl_bad(void **state)
{
  static const struct {
    const char *text;
    pp_status rc;
    const char *a, *b;
  } cases[] = {
      {"", PP_EPARSE, "x.xml", "no element found"},
      {"<system><cpu></system>", PP_EPARSE, "x.xml:1:", "mismatched tag"},
      {"<topology/>", PP_EINPUT, "<topology>", "not an NCCL or RCCL topology"},
      {"<system/>", PP_EINPUT, "no <gpu>", NULL},
      {"<system>\n<cpu><gpu dev=\"0\"/></cpu></system>", PP_EINPUT,
       "x.xml:2:", "outside a <pci>"},
      {"<system><pci busid=\"1\"/></system>", PP_EINPUT, "outside any <cpu>",
       NULL},
      {"<system><cpu><pci/></cpu></system>", PP_EINPUT, "without a busid",
       NULL},
      {"<system><cpu><pci busid=\"a\"><gpu sm=\"70\"/></pci></cpu></system>",
       PP_EINPUT, "without a dev", NULL},
      {"<system><cpu><pci busid=\"a\"><gpu dev=\"x\"/></pci></cpu></system>",
       PP_EINPUT, "dev='x'", NULL},
      {"<system><cpu><pci busid=\"a\"><gpu dev=\"0\" sm=\"70\"/></pci>"
       "<pci busid=\"b\"><gpu dev=\"0\" sm=\"70\"/></pci></cpu></system>",
       PP_EINPUT, "two GPUs with dev=0", NULL},
      {"<system><cpu><pci busid=\"a\"><gpu dev=\"0\" sm=\"70\"><nvlink "
       "target=\"zz\" count=\"2\"/></gpu></pci></cpu></system>",
       PP_EINPUT, "target='zz'", "no GPU has that busid"},
      {"<system><cpu><pci busid=\"a\"><gpu dev=\"0\" sm=\"70\"><nvlink "
       "target=\"a\" count=\"-2\"/></gpu></pci></cpu></system>",
       PP_EINPUT, "count='-2'", NULL},
      {"<system><cpu><pci busid=\"a\"><gpu dev=\"0\" sm=\"70\"><nvlink "
       "target=\"a\"/></gpu></pci></cpu></system>",
       PP_EINPUT, "without a count", NULL},
      {"<system><cpu><pci busid=\"a\"><gpu dev=\"0\" sm=\"70\"><nvlink "
       "target=\"a\" count=\"1\"/></gpu></pci></cpu></system>",
       PP_EINPUT, "to itself", NULL},
      {"<system><cpu><pci busid=\"a\"><gpu dev=\"0\" sm=\"12\"/></pci></cpu>"
       "</system>",
       PP_EINPUT, "sm=12", "gpu="},
      {"<system><cpu><pci busid=\"a\" link_speed=\"fast\"><gpu dev=\"0\" "
       "sm=\"70\"/></pci></cpu></system>",
       PP_EINPUT, "link_speed 'fast'", NULL},
      {"<system><nvlink target=\"a\" count=\"1\"/></system>", PP_EINPUT,
       "outside a <gpu>", NULL},
  };
  pp_ctx *ctx;
  pp_cluster *c = NULL;
  size_t i;
  char *deep;
  (void)state;
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    pp_ctx_clear_error(ctx);
    tu_expect_error(ctx,
                    pp_cluster_read_nccl_xml(ctx, cases[i].text,
                                             strlen(cases[i].text), "x.xml",
                                             NULL, &c),
                    cases[i].rc, cases[i].a, cases[i].b, NULL);
    assert_null(c);
  }
  /* nesting deeper than any machine: a limit, not a stack overflow */
  deep = malloc(20 * 1000 + 64);
  strcpy(deep, "<system>");
  for (i = 0; i < 1000; i++)
    strcat(deep, "<x>");
  pp_ctx_clear_error(ctx);
  tu_expect_error(
      ctx, pp_cluster_read_nccl_xml(ctx, deep, strlen(deep), "x.xml", NULL, &c),
      PP_ELIMIT, "deeper", NULL);
  free(deep);
  pp_ctx_destroy(ctx);
}

static void t_topo_cli(void **state)
{
  char cmd[1200], *out, *err;
  (void)state;
  snprintf(cmd, sizeof cmd, "topo %s:nodes=2,gpu=A100-40 --json",
           tu_path("examples/nccl-topo-dgx1.xml"));
  assert_int_equal(tu_run(cmd, &out, &err), 0);
  assert_non_null(strstr(out, "\"devices\": 16"));
  assert_non_null(strstr(out, "A100-40"));
  snprintf(cmd, sizeof cmd, "topo %s:nodes=0,gpu=V100",
           tu_path("examples/nvsmi-dgx1.txt"));
  assert_int_not_equal(tu_run(cmd, &out, &err), 0);
  assert_non_null(strstr(err, "nodes"));
  snprintf(cmd, sizeof cmd, "topo %s:nodes=2",
           tu_path("examples/cluster-minimal.json"));
  assert_int_not_equal(tu_run(cmd, &out, &err), 0);
  assert_non_null(strstr(err, "cluster JSON"));
  assert_int_not_equal(tu_run("topo missing.xml", &out, &err), 0);
  assert_non_null(strstr(err, "missing.xml"));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_onnx_contents), cmocka_unit_test(t_onnx_defects),
      cmocka_unit_test(t_onnx_inferred), cmocka_unit_test(t_onnx_garbage),
      cmocka_unit_test(t_onnx_cli),      cmocka_unit_test(t_onnx_real),
      cmocka_unit_test(t_nvsmi),         cmocka_unit_test(t_nvsmi_bad),
      cmocka_unit_test(t_nccl),          cmocka_unit_test(t_nccl_bad),
      cmocka_unit_test(t_topo_cli),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
