/* SPDX-License-Identifier: MIT */
/*
** DeepSpeed's own rules, applied to what `parplan export --to deepspeed`
** writes for random plans (uniform and uneven stages, tp 1-8, pp 1-16,
** data parallelism, every precision, ZeRO 0-3, recomputation); and
** PipeDream's (t_pipedream, its sources there) to `--to pipedream`.  Every
** check is written from DeepSpeed's code (microsoft/DeepSpeed 38327e07;
** file and line at each), not from the exporter's:
**   - ds_config.json is JSON that DeepSpeedConfig reads: train_batch_size
**     = micro-batch x gradient_accumulation_steps x world_size, all > 0
**     (deepspeed/runtime/config.py:919-934), world_size the pipeline
**     grid's data-parallel size (config.py:726);
**   - not fp16 and bf16 together (config.py:834-835);
**     communication_data_type one of fp16, bf16, fp32 (config.py:252-266);
**   - ZeRO 2 and 3 refused by the pipeline engine (runtime/pipe/engine.py:
**     77-78): the export must warn where the plan asks for them;
**   - ds_pipeline.py's parts as PipelineModule uses them (runtime/pipe/
**     module.py:393-444: stage s owns layers parts[s] .. parts[s+1]-1,
**     parts[0] = 0 and parts[-1] = the layer count), NUM_STAGES parts;
**   - the topology class by tp (runtime/pipe/topology.py:232-249:
**     PipeModelDataParallelTopology(num_pp, num_mp, num_dp) has axes
**     pipe, data, model, row-major), so rank = t + tp (r + dp s): the
**     plan's devices in that order raise no placement warning.
** And the plan itself: each stage's layers are the plan's stage's
** operators, in order.
*/
#include "testutil.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *file_text(const pp_export *x, const char *name)
{
  int32_t i;
  for (i = 0; i < pp_export_nfile(x); i++)
    if (!strcmp(pp_export_file_name(x, i), name))
      return pp_export_file_text(x, i);
  fail_msg("no file %s", name);
  return NULL;
}

/* The integer after "NAME = " in the Python file. */
static long py_int(const char *py, const char *name)
{
  char key[64];
  const char *at;
  snprintf(key, sizeof key, "\n%s = ", name);
  at = strstr(py, key);
  if (!at)
    fail_msg("ds_pipeline.py: no %s", name);
  return strtol(at + strlen(key), NULL, 10);
}

static long jint(const json_t *o, const char *key)
{
  const json_t *v = json_object_get(o, key);
  if (!json_is_integer(v))
    fail_msg("ds_config.json: %s is not an integer", key);
  return (long)json_integer_value(v);
}

static bool enabled(const json_t *o, const char *key)
{
  const json_t *v = json_object_get(o, key);
  return v && json_is_true(json_object_get(v, "enabled"));
}

static void t_random(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  static const pp_precision precs[3] = {PP_PREC_FP32, PP_PREC_FP16,
                                        PP_PREC_BF16};
  pp_model *m = NULL;
  pp_cluster *c = NULL;
  uint64_t rng = 3030;
  int iter, zwarn = 0;
  assert_int_equal(pp_model_load(ctx, "gpt2-amp", &m), PP_OK);
  assert_int_equal(pp_cluster_load(ctx, "hier:16x8,gpu=A100-80", &c), PP_OK);
  for (iter = 0; iter < 200; iter++) {
    int nop = pp_model_nop(m), tp = 1 << tu_rand(&rng, 4), S, R, s, i;
    int cut[17], Rs[16];
    int64_t gas;
    pp_plan_params pa;
    pp_plan *p;
    pp_export *x;
    json_t *cfg;
    json_error_t jerr;
    const char *py, *at;
    S = 1 + (int)tu_rand(&rng, 16);
    R = 1 + (int)tu_rand(&rng, 4);
    if (S * R * tp > 128)
      continue;
    tu_random_cuts(&rng, nop, S, cut);
    pp_plan_params_init(&pa);
    pa.tp = tp;
    pa.micro_batch = 1 + (int)tu_rand(&rng, 4);
    gas = 1 + tu_rand(&rng, 8);
    pa.global_batch = gas * pa.micro_batch * R;
    pa.precision = precs[tu_rand(&rng, 3)];
    pa.engine = PP_ENGINE_DEEPSPEED;
    pa.zero = S == 1 ? (int)tu_rand(&rng, 4) : (int)tu_rand(&rng, 2);
    pa.recompute = tu_rand(&rng, 2) == 0;
    for (s = 0; s < S; s++)
      Rs[s] = R;
    /* topology.py's row-major rank order */
    if (tu_cut_plan(ctx, &pa, S, cut, Rs, S, &p) != PP_OK) {
      /* the plan layer refuses some settings (ZeRO with pipelining under
      ** an engine that cannot): not an export's business */
      pp_ctx_clear_error(ctx);
      continue;
    }
    assert_int_equal(pp_export_deepspeed(ctx, p, m, c, &x), PP_OK);
    /* ds_config.json */
    cfg = json_loads(file_text(x, "ds_config.json"), 0, &jerr);
    if (!cfg)
      fail_msg("ds_config.json: %s", jerr.text);
    {
      long tb = jint(cfg, "train_batch_size"),
           mb = jint(cfg, "train_micro_batch_size_per_gpu"),
           ga = jint(cfg, "gradient_accumulation_steps");
      const json_t *ct = json_object_get(cfg, "communication_data_type");
      const json_t *z = json_object_get(cfg, "zero_optimization");
      assert_true(tb > 0 && mb > 0 && ga > 0);
      assert_int_equal(tb, mb * ga * R); /* config.py:931 */
      assert_int_equal(mb, pa.micro_batch);
      assert_int_equal(tb, pa.global_batch);
      assert_false(enabled(cfg, "fp16") && enabled(cfg, "bf16"));
      assert_int_equal(enabled(cfg, "fp16"), pa.precision == PP_PREC_FP16);
      assert_int_equal(enabled(cfg, "bf16"), pa.precision == PP_PREC_BF16);
      if (ct) {
        const char *v = json_string_value(ct);
        assert_non_null(v);
        assert_true(!strcmp(v, "fp16") || !strcmp(v, "bf16") ||
                    !strcmp(v, "fp32"));
      }
      assert_non_null(z);
      assert_int_equal(jint(z, "stage"), pa.zero);
      /* pipe/engine.py:77-78: the engine refuses ZeRO 2 and 3 */
      if (pa.zero >= 2) {
        assert_true(tu_export_warned(x, "ZeRO"));
        zwarn++;
      }
    }
    json_decref(cfg);
    /* ds_pipeline.py */
    py = file_text(x, "ds_pipeline.py");
    assert_int_equal(py_int(py, "NUM_STAGES"), S);
    assert_int_equal(py_int(py, "DATA_PARALLEL"), R);
    assert_int_equal(py_int(py, "TENSOR_PARALLEL"), tp);
    at = strstr(py, "\nPARTS = [");
    assert_non_null(at);
    at += 10;
    for (s = 0; s <= S; s++) {
      char *end;
      long v = strtol(at, &end, 10);
      assert_int_equal(v, cut[s]); /* module.py:444: parts[s] .. parts[s+1] */
      at = end + (*end == ',' ? 2 : 0);
    }
    assert_int_equal(*at, ']');
    /* the layers, in order: LAYER_NAMES[i] is operator i */
    for (i = 0; i < nop; i++) {
      pp_op_desc od;
      char want[256];
      pp_model_op(m, i, &od);
      snprintf(want, sizeof want, "    \"%s\",  # %d, stage ", od.name, i);
      assert_non_null(strstr(py, want));
    }
    /* topology.py:232-249 */
    if (tp > 1)
      assert_non_null(strstr(py, "PipeModelDataParallelTopology("));
    else
      assert_non_null(strstr(py, "PipeDataParallelTopology(num_pp="));
    assert_false(tu_export_warned(x, "rank order"));
    pp_export_destroy(x);
    pp_plan_destroy(p);
  }
  print_message("%d plans asked for ZeRO 2/3: warned\n", zwarn);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
}

/* PipeDream's runtime (msr-fiddle/pipedream 7db6a1c, runtime/runtime.py)
** on random plans with per-stage replica counts (which only PipeDream
** expresses) and tp 1-4: module_to_stage_map has one entry per module,
** the stages and the criterion (line 131); the ranks of
** stage_to_rank_map are 0 .. N-1, each once (137-145); stage_to_depth_map
** has every str(stage) (166-168), each the plan's in-flight count less
** one; the wrapper gives launch rank r PipeDream rank r / tp on a group's
** first device and lets the others idle. */
static void t_pipedream(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = NULL;
  pp_cluster *c = NULL;
  uint64_t rng = 4040;
  int iter;
  assert_int_equal(pp_model_load(ctx, "gpt2-amp", &m), PP_OK);
  assert_int_equal(pp_cluster_load(ctx, "hier:16x8,gpu=A100-80", &c), PP_OK);
  for (iter = 0; iter < 60; iter++) {
    int nop = pp_model_nop(m), tp = 1 << tu_rand(&rng, 3), S, s, r, k;
    int cut[17], R[16], N = 0;
    pp_plan_params pa;
    pp_plan *p;
    pp_export *x;
    pp_eval *e = NULL;
    json_t *cfg, *v;
    json_error_t jerr;
    char seen[128];
    S = 1 + (int)tu_rand(&rng, 8);
    for (s = 0; s < S; s++)
      N += R[s] = 1 + (int)tu_rand(&rng, 3);
    if (N * tp > 128)
      continue;
    tu_random_cuts(&rng, nop, S, cut);
    pp_plan_params_init(&pa);
    pa.tp = tp;
    pa.global_batch = 12 * (1 + tu_rand(&rng, 2)); /* R in 1..3 divides */
    if (tu_cut_plan(ctx, &pa, S, cut, R, S, &p) != PP_OK)
      fail_msg("plan %d: %s", iter, pp_ctx_errmsg(ctx));
    assert_int_equal(pp_export_pipedream(ctx, p, m, c, &x), PP_OK);
    assert_int_equal(pp_evaluate(ctx, p, m, c, NULL, &e), PP_OK);
    cfg = json_loads(pp_export_file_text(x, 0), 0, &jerr);
    if (!cfg)
      fail_msg("pipedream_conf.json: %s", jerr.text);
    /* runtime.py:131 */
    v = json_object_get(cfg, "module_to_stage_map");
    assert_true(json_is_array(v));
    assert_int_equal((int)json_array_size(v), S + 1);
    for (k = 0; k <= S; k++)
      assert_int_equal(json_integer_value(json_array_get(v, (size_t)k)),
                       k < S ? k : S - 1);
    /* runtime.py:137-145 */
    memset(seen, 0, sizeof seen);
    v = json_object_get(cfg, "stage_to_rank_map");
    assert_int_equal((int)json_object_size(v), S);
    for (s = 0; s < S; s++) {
      char key[16];
      json_t *ranks;
      snprintf(key, sizeof key, "%d", s);
      ranks = json_object_get(v, key);
      assert_int_equal((int)json_array_size(ranks), R[s]);
      for (r = 0; r < R[s]; r++) {
        json_int_t q = json_integer_value(json_array_get(ranks, (size_t)r));
        assert_true(q >= 0 && q < N && !seen[q]);
        seen[q] = 1;
      }
    }
    /* runtime.py:166-168 */
    v = json_object_get(cfg, "stage_to_depth_map");
    for (s = 0; s < S; s++) {
      char key[16];
      pp_stage_cost sc;
      snprintf(key, sizeof key, "%d", s);
      assert_int_equal(pp_eval_stage(e, s, &sc), PP_OK);
      assert_true(json_is_integer(json_object_get(v, key)));
      assert_int_equal(json_integer_value(json_object_get(v, key)),
                       sc.in_flight - 1);
    }
    json_decref(cfg);
    if (iter < 6) { /* the wrapper, through /bin/sh */
      char path[600], cmd[1200], *out, *err;
      snprintf(path, sizeof path, "%s", tu_tmp("pd_run.sh"));
      assert_int_equal(pp_export_write_file(ctx, x, 1, path, NULL), PP_OK);
      for (r = 0; r < tp + 1 && r < N * tp; r++) {
        snprintf(cmd, sizeof cmd,
                 "RANK=%d LOCAL_RANK=0 MASTER_ADDR=h sh '%s' echo run", r,
                 path);
        assert_int_equal(tu_sh(cmd, &out, &err), 0);
        if (r % tp) {
          assert_string_equal(out, "");
        } else {
          char want[128];
          snprintf(want, sizeof want, "run --rank %d --local_rank 0", r / tp);
          assert_true(!strncmp(out, want, strlen(want)));
        }
      }
    }
    pp_eval_destroy(e);
    pp_export_destroy(x);
    pp_plan_destroy(p);
  }
  pp_cluster_destroy(c);
  pp_model_destroy(m);
}

int main(void)
{
  const struct CMUnitTest tests[] = {TU_CTX_TEST(t_random),
                                     TU_CTX_TEST(t_pipedream)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
