/* SPDX-License-Identifier: MIT */
/*
** The run's settings (issue 17): the plan's precision, engine and ZeRO
** stage in plan JSON (round trip, defaults, errors with their line, the
** engines' ZeRO rules), the model's dtype in model JSON and the
** generators, the command line's options and overrides, and the search
** with zero -1 choosing a stage its engine runs.
** Source: docs/FORMATS.md, "Plan JSON"; docs/PLANNER.md, "Run settings".
*/
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A plan of S one-operator stages, one device each, with extra fields
** (", \"engine\": ..." and so on) after the optimizer. */
static const char *plan_text(int S, const char *extra)
{
  static char buf[1024];
  int s, n;
  n = snprintf(buf, sizeof buf,
               "{\"global_batch\": 8, \"micro_batch\": 1, \"tp\": 1,\n"
               " \"schedule\": \"1f1b\", \"recompute\": false, "
               "\"optimizer\": \"adam-mixed\"%s,\n \"stages\": [",
               extra);
  for (s = 0; s < S; s++)
    n += snprintf(buf + n, sizeof buf - (size_t)n,
                  "%s\n  {\"ops\": [%d], \"replicas\": [[%d]]}", s ? "," : "",
                  s, s);
  snprintf(buf + n, sizeof buf - (size_t)n, "]}\n");
  return buf;
}

static pp_status read_plan(pp_ctx *ctx, const char *text, pp_plan **p)
{
  return pp_plan_read_json(ctx, text, strlen(text), "p.json", NULL, NULL, p);
}

/* What pp_plan_write makes of p (malloc'd). */
static char *written(pp_ctx *ctx, const pp_plan *p)
{
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  assert_non_null(f);
  assert_int_equal(pp_plan_write(ctx, p, NULL, f), PP_OK);
  fclose(f);
  return buf;
}

/* Every field round-trips byte for byte; defaults are not written. */
static void plan_round_trip(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  static const char *const extras[] = {
      ", \"precision\": \"bf16\"",
      ", \"precision\": \"fp32\"",
      ", \"engine\": \"deepspeed\", \"zero\": 1",
      ", \"precision\": \"fp16\", \"engine\": \"megatron\", \"zero\": 1",
      ", \"engine\": \"torch\", \"zero\": 3",
      ", \"zero\": 2"};
  size_t i;
  for (i = 0; i < sizeof extras / sizeof *extras; i++) {
    pp_plan *p = NULL, *q = NULL;
    char *a, *b;
    assert_int_equal(read_plan(ctx, plan_text(2, extras[i]), &p), PP_OK);
    a = written(ctx, p);
    if (!strstr(a, extras[i]))
      fail_msg("%s: written without its fields:\n%s", extras[i], a);
    assert_int_equal(read_plan(ctx, a, &q), PP_OK);
    b = written(ctx, q);
    assert_string_equal(a, b);
    free(a);
    free(b);
    pp_plan_destroy(p);
    pp_plan_destroy(q);
  }
}

/* A plan without the fields: the defaults, and none of them written. */
static void old_plan_defaults(void **state)
{
  struct tu_fix *fx = *state;
  pp_plan *p = NULL;
  pp_plan_params q;
  char *a;
  assert_int_equal(pp_plan_load(fx->ctx, tu_path("examples/plan-gpt2-amp.json"),
                                fx->m, fx->c, &p),
                   PP_OK);
  pp_plan_get_params(p, &q);
  assert_int_equal(q.precision, PP_PREC_MODEL);
  assert_int_equal(q.engine, PP_ENGINE_GENERIC);
  assert_int_equal(q.zero, 0);
  a = written(fx->ctx, p);
  assert_null(strstr(a, "precision"));
  assert_null(strstr(a, "engine"));
  assert_null(strstr(a, "zero"));
  free(a);
  pp_plan_destroy(p);
}

/* The recorded stdout of the golden command line containing what (its
** folder's cmd file), malloc'd; NULL when none. */
static char *golden_stdout(const char *what)
{
  char rel[64];
  int i;
  for (i = 1; i < 1000; i++) {
    char *cmd;
    snprintf(rel, sizeof rel, "tests/golden/expected/%d/cmd", i);
    if (!(cmd = tu_slurp(tu_path(rel), NULL)))
      continue;
    if (strstr(cmd, what)) {
      free(cmd);
      snprintf(rel, sizeof rel, "tests/golden/expected/%d/stdout", i);
      return tu_slurp(tu_path(rel), NULL);
    }
    free(cmd);
  }
  return NULL;
}

/* The old plan evaluates exactly as the recorded golden output says
** (tests/golden/commands.txt: evaluate plan-gpt2-amp.json --json). */
static void old_plan_evaluates_as_before(void **state)
{
  struct tu_fix *fx = *state;
  pp_plan *p = NULL;
  pp_eval *e;
  pp_eval_summary s;
  char *golden = golden_stdout("evaluate $EX/plan-gpt2-amp.json --model "
                               "gpt2-amp --cluster amp-het-cluster --json");
  const char *at;
  assert_non_null(golden);
  at = strstr(golden, "\"iteration_ms\": ");
  assert_non_null(at);
  assert_int_equal(pp_plan_load(fx->ctx, tu_path("examples/plan-gpt2-amp.json"),
                                fx->m, fx->c, &p),
                   PP_OK);
  e = tu_eval(fx->ctx, p, fx->m, fx->c, PP_AR_AUTO);
  pp_eval_get_summary(e, &s);
  assert_true(s.iteration_ms == strtod(at + strlen("\"iteration_ms\": "), 0));
  pp_eval_destroy(e);
  pp_plan_destroy(p);
  free(golden);
}

/* Bad values name the file, the line and what is allowed. */
static void plan_bad_values(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_plan *p = NULL;
  tu_expect_error(
      ctx, read_plan(ctx, plan_text(2, ", \"precision\": \"fp8\""), &p),
      PP_EINPUT, "p.json:2:", "\"fp8\"", "fp32, fp16 or bf16", NULL);
  tu_expect_error(
      ctx, read_plan(ctx, plan_text(2, ", \"precision\": \"model\""), &p),
      PP_EINPUT, "p.json:2:", "fp32, fp16 or bf16", NULL);
  tu_expect_error(ctx, read_plan(ctx, plan_text(2, ", \"engine\": 7"), &p),
                  PP_EINPUT,
                  "p.json:2:", "generic, deepspeed, megatron or torch", NULL);
  tu_expect_error(ctx, read_plan(ctx, plan_text(2, ", \"zero\": 4"), &p),
                  PP_EINPUT, "p.json:2:", "0, 1, 2 or 3", NULL);
  tu_expect_error(ctx, read_plan(ctx, plan_text(2, ", \"zero\": \"1\""), &p),
                  PP_EINPUT, "p.json:2:", "0, 1, 2 or 3", NULL);
  assert_null(p);
}

/* The engines' ZeRO rules (docs/FORMATS.md, "Plan JSON"). */
static void plan_engine_zero(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  static const struct {
    const char *extra;
    int S, ok;
    const char *allowed;
  } cases[] = {
      {", \"engine\": \"deepspeed\", \"zero\": 2", 2, 0, "it takes 0 or 1"},
      {", \"engine\": \"deepspeed\", \"zero\": 3", 4, 0, "it takes 0 or 1"},
      {", \"engine\": \"deepspeed\", \"zero\": 3", 1, 1, NULL},
      {", \"engine\": \"deepspeed\", \"zero\": 1", 3, 1, NULL},
      {", \"engine\": \"megatron\", \"zero\": 2", 1, 0, "it takes 0 or 1"},
      {", \"engine\": \"megatron\", \"zero\": 1", 2, 1, NULL},
      {", \"engine\": \"torch\", \"zero\": 1", 2, 0, "it takes 0, 2 or 3"},
      {", \"engine\": \"torch\", \"zero\": 2", 2, 1, NULL},
      {", \"zero\": 3", 4, 1, NULL},
  };
  size_t i;
  for (i = 0; i < sizeof cases / sizeof *cases; i++) {
    pp_plan *p = NULL;
    pp_status rc = read_plan(ctx, plan_text(cases[i].S, cases[i].extra), &p);
    if (cases[i].ok) {
      if (rc)
        fail_msg("%s with %d stages: %s", cases[i].extra, cases[i].S,
                 pp_ctx_errmsg(ctx));
      pp_plan_destroy(p);
    } else {
      tu_expect_error(ctx, rc, PP_EINPUT, "p.json:2:", "cannot run ZeRO stage",
                      cases[i].allowed, NULL);
    }
  }
  { /* the builder says the same without a file */
    pp_plan_params q;
    pp_plan_builder *b;
    pp_plan *p = NULL;
    int32_t op = 0, dev = 0, op1 = 1, dev1 = 1, id;
    pp_plan_params_init(&q);
    q.global_batch = 8;
    q.engine = PP_ENGINE_DEEPSPEED;
    q.zero = 2;
    assert_int_equal(pp_plan_builder_create(ctx, &q, "built", &b), PP_OK);
    assert_int_equal(pp_plan_builder_add_stage(b, &op, 1, &id), PP_OK);
    assert_int_equal(pp_plan_builder_add_replica(b, id, &dev), PP_OK);
    assert_int_equal(pp_plan_builder_add_stage(b, &op1, 1, &id), PP_OK);
    assert_int_equal(pp_plan_builder_add_replica(b, id, &dev1), PP_OK);
    tu_expect_error(ctx, pp_plan_builder_finish(b, &p), PP_EINPUT,
                    "engine deepspeed cannot run ZeRO stage 2 with 2 "
                    "pipeline stages",
                    NULL);
  }
}

static const char *model_text(const char *dtype)
{
  static char buf[512];
  snprintf(buf, sizeof buf,
           "{\"name\": \"m\",%s\n \"ops\": [{\"name\": \"a\", \"fwd_ms\": 1, "
           "\"bwd_ms\": 2, \"param_bytes\": 10, \"out_bytes\": 4, "
           "\"saved_bytes\": 4}]}\n",
           dtype);
  return buf;
}

static char *model_written(pp_ctx *ctx, const pp_model *m)
{
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  assert_int_equal(pp_model_write(ctx, m, NULL, f), PP_OK);
  fclose(f);
  return buf;
}

static void model_dtype(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  static const char *const names[] = {"fp32", "fp16", "bf16"};
  pp_model *m = NULL, *m2 = NULL;
  int i;
  char field[64], *a, *b;
  assert_int_equal(tu_model_json(ctx, model_text(""), &m), PP_OK);
  assert_int_equal(pp_model_dtype(m), PP_PREC_FP16); /* absent: fp16 */
  a = model_written(ctx, m);
  assert_non_null(strstr(a, "\"dtype\": \"fp16\""));
  free(a);
  pp_model_destroy(m);
  for (i = 0; i < 3; i++) {
    snprintf(field, sizeof field, " \"dtype\": \"%s\",", names[i]);
    assert_int_equal(tu_model_json(ctx, model_text(field), &m), PP_OK);
    assert_string_equal(pp_precision_name(pp_model_dtype(m)), names[i]);
    a = model_written(ctx, m);
    assert_int_equal(tu_model_json(ctx, a, &m2), PP_OK);
    b = model_written(ctx, m2);
    assert_string_equal(a, b);
    assert_int_equal(pp_model_dtype(m2), pp_model_dtype(m));
    free(a);
    free(b);
    pp_model_destroy(m);
    pp_model_destroy(m2);
  }
  tu_expect_error(ctx,
                  tu_model_json(ctx, model_text(" \"dtype\": \"int8\","), &m),
                  PP_EINPUT, ":1:", "\"int8\"", "fp32, fp16 or bf16", NULL);
}

static void generator_dtype(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = NULL;
  assert_int_equal(
      pp_model_load(ctx,
                    "transformer:layers=2,hidden=64,heads=4,seq=16,"
                    "vocab=100,bytes=4",
                    &m),
      PP_OK);
  assert_int_equal(pp_model_dtype(m), PP_PREC_FP32);
  pp_model_destroy(m);
  assert_int_equal(
      pp_model_load(ctx,
                    "transformer:layers=2,hidden=64,heads=4,seq=16,"
                    "vocab=100",
                    &m),
      PP_OK);
  assert_int_equal(pp_model_dtype(m), PP_PREC_FP16);
  pp_model_destroy(m);
  tu_expect_error(ctx,
                  pp_model_load(ctx,
                                "transformer:layers=2,hidden=64,heads=4,"
                                "seq=16,vocab=100,bytes=3",
                                &m),
                  PP_EINPUT, "2 bytes (fp16) or 4 (fp32)", NULL);
  assert_int_equal(pp_model_load(ctx, "bert:layers=2", &m), PP_OK);
  assert_int_equal(pp_model_dtype(m), PP_PREC_FP16);
  pp_model_destroy(m);
}

/* The options parse, override the plan file's fields, and are refused
** where they cannot apply. */
static void cli_options(void **state)
{
  char *out, *err;
  const char *plan = tu_path("examples/plan-gpt2-amp.json");
  char cmd[1024];
  (void)state;
  snprintf(cmd, sizeof cmd,
           "evaluate '%s' --model gpt2-amp --cluster amp-het-cluster --json "
           "--precision bf16 --engine megatron --zero 1",
           plan);
  assert_int_equal(tu_run(cmd, &out, &err), 0);
  if (!strstr(out,
              "\"precision\": \"bf16\", \"engine\": \"megatron\", \"zero\": 1"))
    fail_msg("no settings in: %s", out);
  snprintf(cmd, sizeof cmd,
           "evaluate '%s' --model gpt2-amp --cluster amp-het-cluster", plan);
  assert_int_equal(tu_run(cmd, &out, &err), 0);
  assert_non_null(strstr(out, "precision fp16, engine generic, ZeRO stage 0"));
  assert_non_null(strstr(out, "tightest device: "));
  snprintf(cmd, sizeof cmd,
           "simulate '%s' --model gpt2-amp --cluster amp-het-cluster "
           "--gantt 0 --engine torch --zero 3 -o '%s'",
           plan, tu_tmp("over.json"));
  assert_int_equal(tu_run(cmd, &out, &err), 0);
  assert_non_null(strstr(out, "precision fp16, engine torch, ZeRO stage 3"));
  { /* -o writes the plan with the overrides */
    char *w = tu_slurp(tu_tmp("over.json"), NULL);
    assert_non_null(w);
    assert_non_null(strstr(w, "\"engine\": \"torch\", \"zero\": 3"));
    free(w);
  }
  snprintf(cmd, sizeof cmd,
           "evaluate '%s' --model gpt2-amp --cluster amp-het-cluster "
           "--engine deepspeed --zero 2",
           plan);
  assert_int_equal(tu_run(cmd, &out, &err), 1);
  assert_non_null(strstr(err, "cannot run ZeRO stage 2 with 4 pipeline"));
  snprintf(cmd, sizeof cmd,
           "evaluate '%s' --model gpt2-amp --cluster amp-het-cluster "
           "--zero auto",
           plan);
  assert_int_equal(tu_run(cmd, &out, &err), 1);
  assert_non_null(strstr(err, "--zero auto is for plan and compare"));
  assert_int_equal(tu_run("evaluate x --precision fp12", &out, &err), 1);
  assert_non_null(strstr(err, "fp32|fp16|bf16"));
  assert_int_equal(tu_run("plan --engine deepspeed --zero auto --precision "
                          "bf16 --memory-margin 0.1 --time-limit 5 --top 1",
                          &out, &err),
                   0);
  assert_non_null(strstr(out, "precision bf16, engine deepspeed, ZeRO stage"));
  assert_int_equal(tu_run("plan --memory-margin 1.5", &out, &err), 1);
}

/* zero -1 with DeepSpeed: every plan's stage is one its depth allows, and
** the summary's zero is the plan's. */
static void search_zero_auto(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = NULL;
  pp_cluster *c = NULL;
  pp_search *s = NULL;
  pp_search_params p;
  pp_search_summary sum;
  int32_t i;
  assert_int_equal(pp_model_load(ctx,
                                 "transformer:layers=4,hidden=256,heads=4,"
                                 "seq=128,vocab=1000",
                                 &m),
                   PP_OK);
  assert_int_equal(pp_cluster_load(ctx, "hier:2x2", &c), PP_OK);
  pp_search_params_init(&p);
  assert_true(p.memory_margin == 0.05);
  assert_int_equal(p.zero, 0);
  p.global_batch = 8;
  p.engine = PP_ENGINE_DEEPSPEED;
  p.zero = -1;
  p.top_k = 5;
  p.map_time_s = 0;
  p.madpipe = 0;
  assert_int_equal(pp_plan_search(ctx, m, c, &p, &s), PP_OK);
  assert_int_equal(pp_search_get_summary(s, &sum), PP_OK);
  assert_true(sum.nplans > 0);
  for (i = 0; i < sum.nplans; i++) {
    pp_search_plan y;
    pp_plan_params q;
    pp_search_plan_get(s, i, &y);
    pp_plan_get_params(pp_search_plan_at(s, i), &q);
    assert_int_equal(q.engine, PP_ENGINE_DEEPSPEED);
    assert_int_equal(q.zero, y.zero);
    assert_true(q.zero >= 0 && q.zero <= (y.pp > 1 ? 1 : 3));
  }
  pp_search_destroy(s);
  /* a stage the engine runs at no depth but 1: only one-stage plans */
  p.zero = 3;
  assert_int_equal(pp_plan_search(ctx, m, c, &p, &s), PP_OK);
  assert_int_equal(pp_search_get_summary(s, &sum), PP_OK);
  for (i = 0; i < sum.nplans; i++) {
    pp_search_plan y;
    pp_search_plan_get(s, i, &y);
    assert_int_equal(y.pp, 1);
    assert_int_equal(y.zero, 3);
  }
  pp_search_destroy(s);
  p.zero = 5;
  tu_expect_error(ctx, pp_plan_search(ctx, m, c, &p, &s), PP_EINPUT, "ZeRO",
                  NULL);
  p.zero = 0;
  p.memory_margin = 1;
  tu_expect_error(ctx, pp_plan_search(ctx, m, c, &p, &s), PP_EINPUT,
                  "memory margin", NULL);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      TU_CTX_TEST(plan_round_trip),
      TU_GPT2_TEST(old_plan_defaults),
      TU_GPT2_TEST(old_plan_evaluates_as_before),
      TU_CTX_TEST(plan_bad_values),
      TU_CTX_TEST(plan_engine_zero),
      TU_CTX_TEST(model_dtype),
      TU_CTX_TEST(generator_dtype),
      cmocka_unit_test(cli_options),
      TU_CTX_TEST(search_zero_auto),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
