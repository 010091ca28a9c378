/* SPDX-License-Identifier: MIT */
/*
** Engine exports (export_megatron.c): exact contents on fixed plans; the
** layout round-trips through our parser on random plans; every part of a
** plan Megatron cannot express gives a warning; the parser refuses
** malformed, empty, huge and deeply nested layouts; allocation failures
** are clean; the command writes DIR/megatron_args.txt.
*/
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pp_plan *chain_plan(pp_ctx *ctx, const int *first, int S, int R,
                           const int *devs, pp_schedule sched, int64_t gbs)
{
  pp_plan_params pp;
  pp_plan_builder *b;
  pp_plan *p = NULL;
  int s, r, i, k = 0;
  pp_plan_params_init(&pp);
  pp.global_batch = gbs;
  pp.micro_batch = 1;
  pp.schedule = sched;
  assert_int_equal(pp_plan_builder_create(ctx, &pp, "test", &b), PP_OK);
  for (s = 0; s < S; s++) {
    int32_t ops[64], id, n = 0;
    for (i = first[s]; i < first[s + 1]; i++)
      ops[n++] = i;
    assert_int_equal(pp_plan_builder_add_stage(b, ops, n, &id), PP_OK);
    for (r = 0; r < R; r++) {
      int32_t d = devs ? devs[k] : k;
      k++;
      assert_int_equal(pp_plan_builder_add_replica(b, id, &d), PP_OK);
    }
  }
  assert_int_equal(pp_plan_builder_finish(b, &p), PP_OK);
  return p;
}

static bool has_warning(const pp_export *x, const char *needle)
{
  int32_t i;
  for (i = 0; i < pp_export_nwarning(x); i++)
    if (strstr(pp_export_warning(x, i), needle))
      return true;
  return false;
}

/* AMP's plan for GPT-2 (examples/plan-gpt2-amp.json): the exact line. */
static void t_exact(void **state)
{
  struct tu_alloc a;
  pp_ctx *ctx = tu_ctx(&a);
  pp_model *m;
  pp_cluster *c;
  pp_plan *p;
  pp_export *x;
  (void)state;
  assert_int_equal(pp_model_load(ctx, "gpt2-amp", &m), PP_OK);
  assert_int_equal(pp_cluster_load(ctx, "amp-het-cluster", &c), PP_OK);
  assert_int_equal(
      pp_plan_load(ctx, tu_path("examples/plan-gpt2-amp.json"), m, c, &p),
      PP_OK);
  assert_int_equal(pp_export_megatron(ctx, p, m, c, &x), PP_OK);
  assert_string_equal(
      pp_export_text(x),
      "--tensor-model-parallel-size 1 --pipeline-model-parallel-size 4 "
      "--micro-batch-size 1 --global-batch-size 32 "
      "--pipeline-model-parallel-layout "
      "\"Ettttt|ttttttt|tttttt|ttttttL\"");
  /* GPT-2's four no-op entries have no symbol; nothing else to say */
  assert_int_equal(pp_export_nwarning(x), 1);
  assert_true(has_warning(x, "4 operators have no Megatron symbol"));
  pp_export_destroy(x);
  pp_plan_destroy(p);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
  pp_ctx_destroy(ctx);
  assert_int_equal(a.live, 0);
}

/* Random contiguous plans of GPT-2: the layout parses back to the counts
** of the plan's operator kinds, stage by stage. */
static void t_roundtrip(void **state)
{
  struct tu_alloc a;
  pp_ctx *ctx = tu_ctx(&a);
  pp_model *m;
  pp_cluster *c;
  uint64_t rng = 77;
  int iter;
  (void)state;
  assert_int_equal(pp_model_load(ctx, "gpt2-amp", &m), PP_OK);
  assert_int_equal(pp_cluster_load(ctx, "amp-het-cluster", &c), PP_OK);
  for (iter = 0; iter < 200; iter++) {
    int S = 1 + (int)tu_rand(&rng, 16), first[17], s, i, L = 30;
    int32_t counts[16 * 4], ns = 0, want[16 * 4];
    const char *q;
    pp_plan *p;
    pp_export *x;
    /* S - 1 distinct cuts in 1..L-1 */
    first[0] = 0;
    for (s = 1; s < S; s++) {
      int lo = first[s - 1] + 1, hi = L - (S - s);
      first[s] = lo + (int)tu_rand(&rng, (uint32_t)(hi - lo + 1));
    }
    first[S] = L;
    p = chain_plan(ctx, first, S, 1, NULL, PP_SCHED_1F1B, 16);
    assert_int_equal(pp_export_megatron(ctx, p, m, c, &x), PP_OK);
    q = strstr(pp_export_text(x), "layout \"");
    assert_non_null(q);
    {
      char lay[512];
      size_t n = strcspn(q + 8, "\"");
      memcpy(lay, q + 8, n);
      lay[n] = 0;
      assert_int_equal(pp_megatron_layout_parse(ctx, lay, 16, &ns, counts),
                       PP_OK);
    }
    assert_int_equal(ns, S);
    memset(want, 0, sizeof want);
    for (s = 0; s < S; s++)
      for (i = first[s]; i < first[s + 1]; i++) {
        pp_op_desc od;
        pp_model_op(m, i, &od);
        if (!strcmp(od.kind, "embed2h"))
          want[4 * s]++;
        else if (!strcmp(od.kind, "transformer_layer"))
          want[4 * s + 1]++;
        else if (!strcmp(od.kind, "embed2v"))
          want[4 * s + 3]++;
      }
    assert_memory_equal(counts, want, (size_t)S * 4 * sizeof *counts);
    pp_export_destroy(x);
    pp_plan_destroy(p);
  }
  pp_cluster_destroy(c);
  pp_model_destroy(m);
  pp_ctx_destroy(ctx);
  assert_int_equal(a.live, 0);
}

/* What Megatron cannot express is said. */
static void t_warnings(void **state)
{
  struct tu_alloc a;
  pp_ctx *ctx = tu_ctx(&a);
  pp_model *m;
  pp_cluster *c;
  pp_plan *p;
  pp_export *x;
  int first[3] = {0, 15, 30};
  (void)state;
  assert_int_equal(pp_model_load(ctx, "gpt2-amp", &m), PP_OK);
  assert_int_equal(pp_cluster_load(ctx, "amp-het-cluster", &c), PP_OK);
  { /* replicas out of rank order */
    int32_t devs[4] = {1, 0, 2, 3};
    p = chain_plan(ctx, first, 2, 2, devs, PP_SCHED_1F1B_STAR, 16);
    assert_int_equal(pp_export_megatron(ctx, p, m, c, &x), PP_OK);
    assert_true(has_warning(x, "not Megatron's rank order"));
    assert_true(has_warning(x, "not 1F1B*"));
    pp_export_destroy(x);
    pp_plan_destroy(p);
  }
  { /* different replica counts */
    pp_plan_params pp;
    pp_plan_builder *b;
    int32_t ops0[15], ops1[15], id, d, i;
    for (i = 0; i < 15; i++) {
      ops0[i] = i;
      ops1[i] = 15 + i;
    }
    pp_plan_params_init(&pp);
    pp.global_batch = 16;
    assert_int_equal(pp_plan_builder_create(ctx, &pp, "t", &b), PP_OK);
    assert_int_equal(pp_plan_builder_add_stage(b, ops0, 15, &id), PP_OK);
    for (d = 0; d < 2; d++)
      assert_int_equal(pp_plan_builder_add_replica(b, id, &d), PP_OK);
    assert_int_equal(pp_plan_builder_add_stage(b, ops1, 15, &id), PP_OK);
    d = 2;
    assert_int_equal(pp_plan_builder_add_replica(b, id, &d), PP_OK);
    assert_int_equal(pp_plan_builder_finish(b, &p), PP_OK);
    assert_int_equal(pp_export_megatron(ctx, p, m, c, &x), PP_OK);
    assert_true(has_warning(x, "replicas"));
    pp_export_destroy(x);
    pp_plan_destroy(p);
  }
  { /* one device holding two stages, stages out of order */
    int32_t devs[3] = {0, 1, 0};
    int f3[4] = {0, 10, 20, 30};
    p = chain_plan(ctx, f3, 3, 1, devs, PP_SCHED_1F1B, 16);
    assert_int_equal(pp_export_megatron(ctx, p, m, c, &x), PP_OK);
    assert_true(has_warning(x, "holds stages 0 and 2"));
    pp_export_destroy(x);
    pp_plan_destroy(p);
  }
  pp_cluster_destroy(c);
  pp_model_destroy(m);
  pp_ctx_destroy(ctx);
  assert_int_equal(a.live, 0);
}

static void t_parser(void **state)
{
  struct tu_alloc a;
  pp_ctx *ctx = tu_ctx(&a);
  int32_t counts[64 * 4], n = 0;
  static const char *const bad[] = {"",
                                    "X",
                                    "(tt",
                                    "(t)",
                                    "(t)*",
                                    "t|t|t|t|t",
                                    "E)t",
                                    "((((((((((((((((((t)*1)*1)*1)*1)*1)*1)*1)*"
                                    "1)*1)*1)*1)*1)*1)*1)*1)*1)*1)*1",
                                    "((((t)*1000)*1000)*1000)*1000"};
  size_t i;
  (void)state;
  assert_int_equal(
      pp_megatron_layout_parse(ctx, "E|(tt|)*3,m|L", 64, &n, counts), PP_OK);
  assert_int_equal(n, 6);
  assert_int_equal(counts[0], 1);      /* E */
  assert_int_equal(counts[4 + 1], 2);  /* tt */
  assert_int_equal(counts[12 + 1], 2); /* the third tt */
  assert_int_equal(counts[16 + 2], 1); /* m */
  assert_int_equal(counts[20 + 3], 1); /* L */
  assert_int_equal(pp_megatron_layout_parse(ctx, "Ettt|ttt L", 64, &n, counts),
                   PP_OK);
  assert_int_equal(n, 2);
  assert_int_equal(counts[4 + 1], 3);
  for (i = 0; i < sizeof bad / sizeof *bad; i++) {
    pp_status rc = pp_megatron_layout_parse(ctx, bad[i], 4, &n, counts);
    if (rc != PP_EINPUT)
      fail_msg("layout '%s': status %d", bad[i], (int)rc);
    assert_non_null(strstr(pp_ctx_errmsg(ctx), "megatron layout"));
    pp_ctx_clear_error(ctx);
  }
  assert_int_equal(pp_megatron_layout_parse(ctx, NULL, 4, &n, counts),
                   PP_EINVAL);
  pp_ctx_clear_error(ctx);
  pp_ctx_destroy(ctx);
  assert_int_equal(a.live, 0);
}

/* Fail every allocation of run in turn (the last run fails none): each
** failure is PP_ENOMEM and clean, and some run succeeds. */
struct job {
  const pp_plan *p;
  const pp_model *m;
  const pp_cluster *c;
};

static pp_status run_megatron(pp_ctx *ctx, const struct job *j)
{
  pp_export *x = NULL;
  pp_status rc = pp_export_megatron(ctx, j->p, j->m, j->c, &x);
  assert_true(rc == PP_OK ? x != NULL : x == NULL);
  pp_export_destroy(x);
  return rc;
}

static pp_status run_launch(pp_ctx *ctx, const struct job *j)
{
  pp_launch *x = NULL;
  pp_status rc = pp_export_launch(ctx, j->p, j->m, j->c, &x);
  assert_true(rc == PP_OK ? x != NULL : x == NULL);
  pp_launch_destroy(x);
  return rc;
}

static void sweep(struct tu_alloc *a, pp_ctx *ctx,
                  pp_status (*run)(pp_ctx *, const struct job *),
                  const struct job *j)
{
  long k, n, ok = 0;
  tu_reset(a, 0);
  assert_int_equal(run(ctx, j), PP_OK);
  n = a->count;
  for (k = 1; k <= n + 1; k++) {
    pp_status rc;
    tu_reset(a, k);
    rc = run(ctx, j);
    tu_reset(a, 0);
    if (rc == PP_OK)
      ok++;
    else
      assert_int_equal(rc, PP_ENOMEM);
    pp_ctx_clear_error(ctx);
  }
  assert_true(ok > 0);
}

static void t_alloc(void **state)
{
  struct tu_alloc a;
  pp_ctx *ctx = tu_ctx(&a);
  pp_model *m;
  pp_cluster *c;
  pp_plan *p;
  int first[3] = {0, 15, 30};
  int32_t devs[2] = {1, 0};
  struct job jb;
  (void)state;
  assert_int_equal(pp_model_load(ctx, "gpt2-amp", &m), PP_OK);
  assert_int_equal(pp_cluster_load(ctx, "amp-het-cluster", &c), PP_OK);
  p = chain_plan(ctx, first, 2, 1, devs, PP_SCHED_GPIPE, 8);
  jb.p = p;
  jb.m = m;
  jb.c = c;
  sweep(&a, ctx, run_megatron, &jb);
  pp_plan_destroy(p);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
  pp_ctx_destroy(ctx);
  assert_int_equal(a.live, 0);
}

static void t_cli(void **state)
{
  char *out, *err, cmd[1024], dir[512];
  size_t len;
  char *txt;
  (void)state;
  snprintf(dir, sizeof dir, "%s", tu_tmp("megatron_out"));
  snprintf(cmd, sizeof cmd,
           "export %s --model gpt2-amp --cluster amp-het-cluster --to "
           "megatron -o %s",
           tu_path("examples/plan-gpt2-amp.json"), dir);
  assert_int_equal(tu_run(cmd, &out, &err), 0);
  assert_non_null(strstr(err, "warning: 4 operators"));
  snprintf(cmd, sizeof cmd, "%s/megatron_args.txt", dir);
  txt = tu_slurp(cmd, &len);
  assert_non_null(txt);
  assert_non_null(strstr(txt, "\"Ettttt|ttttttt|tttttt|ttttttL\"\n"));
  free(txt);
  snprintf(cmd, sizeof cmd,
           "export %s --model gpt2-amp --cluster amp-het-cluster",
           tu_path("examples/plan-gpt2-amp.json"));
  assert_int_equal(tu_run(cmd, &out, &err), 1);
  assert_non_null(strstr(err, "--to"));
  snprintf(cmd, sizeof cmd,
           "export %s --model gpt2-amp --cluster amp-het-cluster --to nemo",
           tu_path("examples/plan-gpt2-amp.json"));
  assert_int_equal(tu_run(cmd, &out, &err), 1);
  assert_non_null(strstr(err, "nemo"));
}

/* The sorted output of running script with a command that echoes env. */
static char *run_sorted(const char *script, const char *echo)
{
  char line[2048], *txt = calloc(1, 4096);
  FILE *pf;
  snprintf(line, sizeof line, "sh %s sh -c 'echo %s' | sort", script, echo);
  pf = popen(line, "r");
  assert_non_null(pf);
  assert_non_null(txt);
  assert_true(fread(txt, 1, 4095, pf) > 0);
  assert_int_equal(pclose(pf), 0);
  return txt;
}

/* Launch files: two hosts with GPUs numbered out of cluster order and a
** plan placed off the rank order; the scripts, run with a command that
** prints its environment, start every rank on the planned GPU. */
static const char cl_json[] =
    "{\"name\": \"two\", \"device_types\": {\"g\": {\"memory_gb\": 80}},"
    " \"devices\": ["
    "{\"name\": \"a0\", \"type\": \"g\", \"node\": 0, \"host\": \"alpha\","
    " \"local_gpu\": 3},"
    "{\"name\": \"a1\", \"type\": \"g\", \"node\": 0, \"host\": \"alpha\","
    " \"local_gpu\": 1},"
    "{\"name\": \"b0\", \"type\": \"g\", \"node\": 1, \"host\": \"beta\","
    " \"local_gpu\": 0},"
    "{\"name\": \"b1\", \"type\": \"g\", \"node\": 1, \"host\": \"beta\","
    " \"local_gpu\": 2}],"
    " \"bandwidth_GBps\": [[0, 100, 10, 10], [100, 0, 10, 10],"
    " [10, 10, 0, 100], [10, 10, 100, 0]]}";

static void t_launch(void **state)
{
  struct tu_alloc a;
  pp_ctx *ctx = tu_ctx(&a);
  pp_model *m;
  pp_cluster *c;
  pp_plan *p;
  pp_launch *x = NULL;
  int first[3] = {0, 15, 30};
  int32_t devs[4] = {2, 0, 3, 1}; /* stage 0 on b0, a0; stage 1 on b1, a1 */
  char *buf = NULL, *out, *err, cmd[1024];
  size_t len = 0;
  FILE *f;
  (void)state;
  assert_int_equal(pp_model_load(ctx, "gpt2-amp", &m), PP_OK);
  assert_int_equal(tu_cluster_json(ctx, cl_json, &c), PP_OK);
  p = chain_plan(ctx, first, 2, 2, devs, PP_SCHED_1F1B, 16);
  assert_int_equal(pp_export_launch(ctx, p, m, c, &x), PP_OK);
  assert_int_equal(pp_launch_nhost(x), 2);
  assert_string_equal(pp_launch_host(x, 0), "beta"); /* rank 0's host */
  assert_false(pp_launch_torchrun_ok(x));            /* ranks alternate hosts */
  f = open_memstream(&buf, &len);
  assert_int_equal(pp_launch_write_hostfile(ctx, x, NULL, f), PP_OK);
  fclose(f);
  assert_string_equal(buf, "beta slots=2\nalpha slots=2\n");
  free(buf);
  /* run beta's and alpha's scripts with a command printing the env */
  snprintf(cmd, sizeof cmd, "%s", tu_tmp("launch_beta.sh"));
  assert_int_equal(pp_launch_write_script(ctx, x, 0, cmd, NULL), PP_OK);
  {
    char *txt = run_sorted(cmd, "$RANK $LOCAL_RANK $CUDA_VISIBLE_DEVICES "
                                "$WORLD_SIZE $MASTER_ADDR $CUDA_DEVICE_ORDER");
    /* ranks 0 (b0 = GPU 0) and 2 (b1 = GPU 2) */
    assert_string_equal(txt, "0 0 0,2 4 beta PCI_BUS_ID\n"
                             "2 1 0,2 4 beta PCI_BUS_ID\n");
    free(txt);
  }
  snprintf(cmd, sizeof cmd, "%s", tu_tmp("launch_alpha.sh"));
  assert_int_equal(pp_launch_write_script(ctx, x, 1, cmd, NULL), PP_OK);
  {
    char *txt = run_sorted(cmd, "$RANK $LOCAL_RANK $CUDA_VISIBLE_DEVICES");
    /* ranks 1 (a0 = GPU 3) and 3 (a1 = GPU 1) */
    assert_string_equal(txt, "1 0 3,1\n3 1 3,1\n");
    free(txt);
  }
  /* the script refuses to run without a command */
  snprintf(cmd, sizeof cmd, "sh %s 2>/dev/null", tu_tmp("launch_alpha.sh"));
  assert_int_not_equal(system(cmd), 0);
  pp_launch_destroy(x);
  /* in rank order: torchrun would do */
  {
    int32_t ord[4] = {0, 1, 2, 3};
    pp_plan *q = chain_plan(ctx, first, 2, 2, ord, PP_SCHED_1F1B, 16);
    assert_int_equal(pp_export_launch(ctx, q, m, c, &x), PP_OK);
    assert_true(pp_launch_torchrun_ok(x));
    pp_launch_destroy(x);
    pp_plan_destroy(q);
  }
  /* allocation failures are clean */
  {
    struct job jb;
    jb.p = p;
    jb.m = m;
    jb.c = c;
    sweep(&a, ctx, run_launch, &jb);
  }
  pp_plan_destroy(p);
  pp_cluster_destroy(c);
  /* a host name that cannot go into a script is refused */
  {
    char bad[sizeof cl_json + 16];
    char *h;
    snprintf(bad, sizeof bad, "%s", cl_json);
    h = strstr(bad, "\"beta\"");
    memcpy(h, "\"b;ta\"", 6);
    h = strstr(h + 6, "\"beta\"");
    memcpy(h, "\"b;ta\"", 6);
    assert_int_equal(tu_cluster_json(ctx, bad, &c), PP_OK);
    p = chain_plan(ctx, first, 2, 2, devs, PP_SCHED_1F1B, 16);
    tu_expect_error(ctx, pp_export_launch(ctx, p, m, c, &x), PP_EINPUT,
                    "host name", NULL);
    assert_null(x);
    pp_plan_destroy(p);
    pp_cluster_destroy(c);
  }
  /* the command */
  snprintf(cmd, sizeof cmd,
           "export %s --model gpt2-amp --cluster amp-het-cluster --to launch "
           "-o %s",
           tu_path("examples/plan-gpt2-amp.json"), tu_tmp("launch_dir"));
  assert_int_equal(tu_run(cmd, &out, &err), 0);
  assert_non_null(strstr(out, "4 launch scripts"));
  snprintf(cmd, sizeof cmd, "%s/launch_node3.sh", tu_tmp("launch_dir"));
  buf = tu_slurp(cmd, &len);
  assert_non_null(buf);
  assert_non_null(strstr(buf, "RANK=15 LOCAL_RANK=3"));
  free(buf);
  pp_model_destroy(m);
  pp_ctx_destroy(ctx);
  assert_int_equal(a.live, 0);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_exact),    cmocka_unit_test(t_roundtrip),
      cmocka_unit_test(t_warnings), cmocka_unit_test(t_parser),
      cmocka_unit_test(t_alloc),    cmocka_unit_test(t_cli),
      cmocka_unit_test(t_launch),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
