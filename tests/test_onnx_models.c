/* SPDX-License-Identifier: MIT */
/*
** Real networks as torch.onnx.export writes them (tests/data/onnx/, made
** by scripts/make_onnx_models.py with Debian's python3-torch, weights
** stripped; torch's own figures in figures.json): they import without
** shape inference, their parameter counts equal torch's within 0.01%,
** their saved-for-backward bytes are within 10% of what torch's
** saved-tensor hooks measured, the batch is the model's, tied weights and
** constant computations fold away, and the chain view keeps the blocks.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "testutil.h"

static json_t *figures(void)
{
  json_error_t je;
  json_t *j = json_load_file(tu_path("tests/data/onnx/figures.json"), 0, &je);
  if (!j)
    fail_msg("figures.json: %s", je.text);
  return j;
}

static int64_t fig(json_t *j, const char *model, const char *key)
{
  json_t *v = json_object_get(json_object_get(j, model), key);
  assert_non_null(v);
  return json_integer_value(v);
}

/* Load NAME.onnx of tests/data/onnx/ with batch (0: the model's) and, when
** seq > 0, dim.seq; NULL with the context's error on failure. */
static pp_model *load(pp_ctx *ctx, const char *name, int32_t batch, int64_t seq,
                      pp_precision dtype)
{
  char rel[256];
  pp_onnx_params p;
  pp_model *m = NULL;
  snprintf(rel, sizeof rel, "tests/data/onnx/%s.onnx", name);
  pp_onnx_params_init(&p);
  p.batch = batch;
  p.dtype = dtype;
  if (seq > 0) {
    p.nsym = 1;
    p.sym_name[0] = "seq";
    p.sym_value[0] = seq;
  }
  pp_ctx_clear_error(ctx);
  if (pp_model_load_onnx(ctx, tu_path(rel), &p, &m))
    return NULL;
  return m;
}

static void totals(const pp_model *m, int64_t *param, int64_t *saved)
{
  int32_t i;
  *param = *saved = 0;
  for (i = 0; i < pp_model_nop(m); i++) {
    pp_op_desc d;
    pp_model_op(m, i, &d);
    *param += d.param_bytes;
    *saved += d.saved_bytes;
  }
}

/* Every exported model: batch, parameters, saved bytes, no constant or
** alias operators left. */
static void t_models(void **state)
{
  static const char *const folded[] = {"Constant",        "Identity", "Shape",
                                       "ConstantOfShape", "Range",    NULL};
  json_t *j = figures();
  const char *name;
  json_t *v;
  pp_ctx *ctx;
  int n = 0;
  (void)state;
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  json_object_foreach(j, name, v)
  {
    int64_t batch = fig(j, name, "batch"), param, saved;
    int64_t want_p = fig(j, name, "parameters");
    int64_t want_s = fig(j, name, "saved_bytes_per_sample");
    bool dyn = json_is_object(json_object_get(v, "dynamic_axes"));
    const char *const *k;
    pp_model *m = load(ctx, name, dyn ? (int32_t)batch : 0,
                       dyn ? fig(j, name, "seq") : 0, PP_PREC_MODEL);
    double per;
    if (!m)
      fail_msg("%s: %s", name, pp_ctx_errmsg(ctx));
    assert_int_equal(pp_model_micro_batch(m), batch);
    assert_int_equal(pp_model_dtype(m), PP_PREC_FP32);
    totals(m, &param, &saved);
    per = (double)saved / (double)batch;
    print_message("%-20s %4d ops  params %lld (torch %lld)  saved/sample "
                  "%.0f (torch %lld, %+.1f%%)\n",
                  name, (int)pp_model_nop(m), (long long)(param / 4),
                  (long long)want_p, per, (long long)want_s,
                  100 * (per / (double)want_s - 1));
    if (fabs((double)param / 4 / (double)want_p - 1) > 1e-4)
      fail_msg("%s: %lld parameters, torch counts %lld", name,
               (long long)(param / 4), (long long)want_p);
    if (fabs(per / (double)want_s - 1) > 0.10)
      fail_msg("%s: %.0f bytes saved per sample, torch's hooks %lld", name, per,
               (long long)want_s);
    for (k = folded; *k; k++) {
      int32_t i;
      for (i = 0; i < pp_model_nop(m); i++) {
        pp_op_desc d;
        pp_model_op(m, i, &d);
        if (!strcmp(d.kind, *k))
          fail_msg("%s: operator '%s' is a %s", name, d.name, *k);
      }
    }
    pp_model_destroy(m);
    n++;
  }
  assert_true(n >= 9);
  pp_ctx_destroy(ctx);
  json_decref(j);
}

/* The reader's shape inference agrees with onnx's: each model after
** onnx.shape_inference.infer_shapes(data_prop=True) (Debian's
** python3-onnx), whose value_info the reader checks against its own
** shapes, gives the same operators, edges and figures. */
static void t_onnx_agrees(void **state)
{
  json_t *j = figures();
  const char *name;
  json_t *v;
  pp_ctx *ctx;
  (void)state;
  if (tu_sh("/usr/bin/python3 -c 'import onnx'", NULL, NULL) != 0)
    fail_msg("python3-onnx is missing: run scripts/deps.sh --test");
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  json_object_foreach(j, name, v)
  {
    char cmd[2048], path[600], rel[256], *out, *err;
    bool dyn = json_is_object(json_object_get(v, "dynamic_axes"));
    pp_onnx_params p;
    pp_model *a = NULL, *b;
    int32_t i;
    snprintf(rel, sizeof rel, "tests/data/onnx/%s.onnx", name);
    snprintf(path, sizeof path, "%s", tu_tmp("inferred.onnx"));
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c 'import onnx, sys; "
             "from onnx import shape_inference as s; "
             "onnx.save(s.infer_shapes(onnx.load(sys.argv[1]), "
             "data_prop=True), sys.argv[2])' '%s' '%s'",
             tu_path(rel), path);
    if (tu_sh(cmd, &out, &err) != 0)
      fail_msg("%s: onnx shape inference: %s", name, err);
    pp_onnx_params_init(&p);
    if (dyn) {
      p.batch = (int32_t)fig(j, name, "batch");
      p.nsym = 1;
      p.sym_name[0] = "seq";
      p.sym_value[0] = fig(j, name, "seq");
    }
    pp_ctx_clear_error(ctx);
    if (pp_model_load_onnx(ctx, path, &p, &a))
      fail_msg("%s after onnx's shape inference: %s", name, pp_ctx_errmsg(ctx));
    b = load(ctx, name, p.batch, dyn ? p.sym_value[0] : 0, PP_PREC_MODEL);
    assert_non_null(b);
    assert_int_equal(pp_model_nop(a), pp_model_nop(b));
    assert_int_equal(pp_model_nedge(a), pp_model_nedge(b));
    for (i = 0; i < pp_model_nop(a); i++) {
      pp_op_desc x, y;
      pp_model_op(a, i, &x);
      pp_model_op(b, i, &y);
      if (x.out_bytes != y.out_bytes || x.saved_bytes != y.saved_bytes ||
          x.param_bytes != y.param_bytes || x.fwd_flops != y.fwd_flops)
        fail_msg("%s: operator '%s' differs after onnx's shape inference", name,
                 x.name);
    }
    pp_model_destroy(a);
    pp_model_destroy(b);
  }
  pp_ctx_destroy(ctx);
  json_decref(j);
}

/* The chain view has about one layer per block, not a handful. */
static void t_chain(void **state)
{
  static const struct {
    const char *name;
    int32_t blocks;
  } cases[] = {
      {"resnet50", 16}, {"gpt2", 12}, {"bert_large", 24}, {"vit_b_16", 12}};
  pp_ctx *ctx;
  size_t i;
  (void)state;
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    pp_model *m = load(ctx, cases[i].name, 0, 0, PP_PREC_MODEL);
    pp_model_stats st;
    if (!m)
      fail_msg("%s: %s", cases[i].name, pp_ctx_errmsg(ctx));
    assert_int_equal(pp_model_stats_get(ctx, m, &st), PP_OK);
    print_message("%s: %d layers in the chain view, %d blocks\n", cases[i].name,
                  (int)st.nlayer, (int)cases[i].blocks);
    if (st.nlayer < cases[i].blocks)
      fail_msg("%s: %d layers in the chain view for %d blocks", cases[i].name,
               (int)st.nlayer, (int)cases[i].blocks);
    pp_model_destroy(m);
  }
  pp_ctx_destroy(ctx);
}

/* GPT-2's output projection is the embedding, exported as a second,
** transposed initializer: counted once (124 M, not 163 M). */
static void t_tied(void **state)
{
  json_t *j = figures();
  pp_ctx *ctx;
  pp_model *m;
  int64_t param, saved;
  (void)state;
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  m = load(ctx, "gpt2", 0, 0, PP_PREC_MODEL);
  assert_non_null(m);
  totals(m, &param, &saved);
  assert_int_equal(param / 4, fig(j, "gpt2", "parameters"));
  assert_true(param / 4 < 125000000);
  pp_model_destroy(m);
  pp_ctx_destroy(ctx);
  json_decref(j);
}

/* GPT-2's GELU is exported decomposed (Div, Erf, Add, Mul, Mul); torch
** runs it as one kernel, so the erf's input and output and 1 + erf are
** no memory traffic: the Erf node moves nothing, each of the 12 GELUs
** still reads its input. */
static void t_gelu_traffic(void **state)
{
  pp_ctx *ctx;
  pp_model *m;
  int32_t i, nerf = 0;
  (void)state;
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  m = load(ctx, "gpt2", 0, 0, PP_PREC_MODEL);
  assert_non_null(m);
  for (i = 0; i < pp_model_nop(m); i++) {
    pp_op_desc d;
    pp_model_op(m, i, &d);
    if (!d.kind || strcmp(d.kind, "Erf"))
      continue;
    nerf++;
    if (d.fwd_bytes != 0 || d.bwd_bytes != 0)
      fail_msg("%s: %g bytes forward, %g backward; want 0", d.name, d.fwd_bytes,
               d.bwd_bytes);
  }
  assert_int_equal(nerf, 12);
  pp_model_destroy(m);
  pp_ctx_destroy(ctx);
}

/* The batch is the model's: a static export's batch= must agree; a
** symbolic batch takes batch=; another symbolic dimension needs its own
** value, never the batch's. */
static void t_batch(void **state)
{
  pp_ctx *ctx;
  pp_model *m, *m2;
  int64_t p1, s1, p2, s2;
  (void)state;
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  m = load(ctx, "resnet50", 4, 0, PP_PREC_MODEL);
  assert_null(m);
  tu_expect_error(ctx, pp_ctx_errcode(ctx), PP_EINPUT, "batch=4",
                  "exported with batch 2", NULL);
  m = load(ctx, "resnet50", 2, 0, PP_PREC_MODEL);
  assert_non_null(m);
  assert_int_equal(pp_model_micro_batch(m), 2);
  pp_model_destroy(m);

  m = load(ctx, "gpt2_dynamic", 0, 0, PP_PREC_MODEL);
  assert_null(m);
  tu_expect_error(ctx, pp_ctx_errcode(ctx), PP_EINPUT, "'input_ids'",
                  "dim.seq=N", NULL);
  m = load(ctx, "gpt2_dynamic", 1, 1024, PP_PREC_MODEL);
  if (!m)
    fail_msg("%s", pp_ctx_errmsg(ctx));
  m2 = load(ctx, "gpt2", 0, 0, PP_PREC_MODEL);
  assert_non_null(m2);
  totals(m, &p1, &s1);
  totals(m2, &p2, &s2);
  assert_int_equal(p1, p2);
  assert_true(fabs((double)s1 / (double)s2 - 1) < 0.02);
  pp_model_destroy(m);
  /* batch 2, a shorter sequence: activations scale, parameters do not */
  m = load(ctx, "gpt2_dynamic", 2, 512, PP_PREC_MODEL);
  if (!m)
    fail_msg("%s", pp_ctx_errmsg(ctx));
  assert_int_equal(pp_model_micro_batch(m), 2);
  totals(m, &p1, &s1);
  assert_int_equal(p1, p2);
  assert_true(s1 < s2 * 2 && s1 > s2 / 2);
  pp_model_destroy(m);
  pp_model_destroy(m2);
  pp_ctx_destroy(ctx);
}

/* dtype= sets the model's dtype and counts float tensors at its size. */
static void t_dtype(void **state)
{
  pp_ctx *ctx;
  pp_model *a, *b;
  int64_t pa, sa, pb, sb;
  char cmd[1200], *out, *err;
  (void)state;
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  a = load(ctx, "resnet50", 0, 0, PP_PREC_MODEL);
  b = load(ctx, "resnet50", 0, 0, PP_PREC_BF16);
  assert_non_null(a);
  assert_non_null(b);
  assert_int_equal(pp_model_dtype(b), PP_PREC_BF16);
  totals(a, &pa, &sa);
  totals(b, &pb, &sb);
  assert_int_equal(pb * 2, pa);
  /* MaxPool's int64 indices keep their size */
  assert_true(sb * 2 > sa && sb < sa);
  pp_model_destroy(a);
  pp_model_destroy(b);
  pp_ctx_destroy(ctx);

  snprintf(cmd, sizeof cmd, "model %s:dim.seq=128,batch=2,dtype=fp16 --json",
           tu_path("tests/data/onnx/gpt2_dynamic.onnx"));
  if (tu_run(cmd, &out, &err) != 0)
    fail_msg("%s%s", out, err);
  assert_non_null(strstr(out, "\"micro_batch\": 2"));
  snprintf(cmd, sizeof cmd, "model %s:dim.seq=x",
           tu_path("tests/data/onnx/gpt2_dynamic.onnx"));
  assert_int_not_equal(tu_run(cmd, &out, &err), 0);
  assert_non_null(strstr(err, "seq"));
  snprintf(cmd, sizeof cmd, "model %s:dtype=fp8",
           tu_path("tests/data/onnx/resnet50.onnx"));
  assert_int_not_equal(tu_run(cmd, &out, &err), 0);
  assert_non_null(strstr(err, "dtype"));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_models),       cmocka_unit_test(t_chain),
      cmocka_unit_test(t_tied),         cmocka_unit_test(t_batch),
      cmocka_unit_test(t_dtype),        cmocka_unit_test(t_onnx_agrees),
      cmocka_unit_test(t_gelu_traffic),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
