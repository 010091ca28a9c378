/* SPDX-License-Identifier: MIT */
/*
** Engine exports (export_*.c): exact contents on fixed plans; the
** Megatron layout round-trips through our parser on random plans; the
** DeepSpeed, torch and PipeDream files, loaded by tests/check_exports.py
** the way the engines load them (stand-ins for their APIs), run what the
** plan says on random plans; the torch schedule is the plan's order
** (sched.c's, independently of the simulator that writes it); every part
** of a plan an engine cannot express gives a warning; the parser refuses
** malformed, empty, huge and deeply nested layouts; allocation failures
** are clean; the command writes every file.
*/
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A plan of the chain: stage s holds operators first[s] .. first[s+1]-1
** and R replicas of tp devices each (devs: S R tp entries, NULL: 0, 1,
** 2, ...). */
struct gp {
  const int *first;
  int S, R, tp, mbs, recompute;
  const int32_t *devs;
  pp_schedule sched;
  pp_optimizer opt;
  int64_t gbs;
  int run; /* set: the run's settings below */
  pp_precision prec;
  pp_engine engine;
  int zero;
};

static pp_plan *gen_plan(pp_ctx *ctx, const struct gp *g)
{
  pp_plan_params pp;
  pp_plan_builder *b;
  pp_plan *p = NULL;
  int s, r, i, k = 0;
  pp_plan_params_init(&pp);
  pp.global_batch = g->gbs;
  pp.micro_batch = g->mbs ? g->mbs : 1;
  pp.tp = g->tp ? g->tp : 1;
  pp.schedule = g->sched;
  pp.recompute = g->recompute;
  pp.optimizer = g->opt;
  if (g->run) {
    pp.precision = g->prec;
    pp.engine = g->engine;
    pp.zero = g->zero;
  }
  assert_int_equal(pp_plan_builder_create(ctx, &pp, "test", &b), PP_OK);
  for (s = 0; s < g->S; s++) {
    int32_t ops[64], id, n = 0;
    for (i = g->first[s]; i < g->first[s + 1]; i++)
      ops[n++] = i;
    assert_int_equal(pp_plan_builder_add_stage(b, ops, n, &id), PP_OK);
    for (r = 0; r < g->R; r++) {
      int32_t d[8];
      for (i = 0; i < pp.tp; i++, k++)
        d[i] = g->devs ? g->devs[k] : k;
      assert_int_equal(pp_plan_builder_add_replica(b, id, d), PP_OK);
    }
  }
  assert_int_equal(pp_plan_builder_finish(b, &p), PP_OK);
  return p;
}

static pp_plan *chain_plan(pp_ctx *ctx, const int *first, int S, int R,
                           const int32_t *devs, pp_schedule sched, int64_t gbs)
{
  struct gp g;
  memset(&g, 0, sizeof g);
  g.first = first;
  g.S = S;
  g.R = R;
  g.devs = devs;
  g.sched = sched;
  g.opt = PP_OPT_ADAM_MIXED;
  g.gbs = gbs;
  return gen_plan(ctx, &g);
}

/* AMP's plan for GPT-2 (examples/plan-gpt2-amp.json): the exact line. */
static void t_exact(void **state)
{
  struct tu_fix *fx = *state;
  pp_ctx *ctx = fx->ctx;
  pp_model *m = fx->m;
  pp_cluster *c = fx->c;
  pp_plan *p;
  pp_export *x;
  assert_int_equal(
      pp_plan_load(ctx, tu_path("examples/plan-gpt2-amp.json"), m, c, &p),
      PP_OK);
  assert_int_equal(pp_export_megatron(ctx, p, m, c, &x), PP_OK);
  assert_string_equal(
      pp_export_text(x),
      "--tensor-model-parallel-size 1 --pipeline-model-parallel-size 4 "
      "--micro-batch-size 1 --global-batch-size 32 --num-layers 24 --fp16 "
      "--overlap-grad-reduce --pipeline-model-parallel-layout "
      "Ettttt|ttttttt|tttttt|ttttttL\n");
  /* GPT-2's four no-op entries have no symbol; nothing else to say */
  assert_int_equal(pp_export_nwarning(x), 1);
  assert_true(tu_export_warned(x, "4 operators have no Megatron symbol"));
  pp_export_destroy(x);
  pp_plan_destroy(p);
}

/* A profile's operators (parplan.profile of a GPT with a loss): wte and
** wpe are Megatron's one E, the head and the loss its one L
** (export_megatron.c, layout_symbol); apart over two stages they stay two
** symbols and the layout check warns. */
static void t_profile_layout(void **state)
{
  struct tu_fix *fx = *state;
  pp_ctx *ctx = fx->ctx;
  pp_model *m;
  pp_plan *p;
  pp_export *x;
  struct gp g;
#define OP(n, k)                                                               \
  "{\"name\": \"" n "\", \"kind\": \"" k "\", \"fwd_ms\": 1, \"bwd_ms\": 2, "  \
  "\"param_bytes\": 0, \"out_bytes\": 0, \"saved_bytes\": 0}"
  static const char *json = "{\"micro_batch\": 1, \"ops\": [" OP(
      "wte",
      "embedd"
      "ing") "," OP("wpe",
                    "e"
                    "m"
                    "b"
                    "e"
                    "d"
                    "d"
                    "i"
                    "n"
                    "g") "," OP("b0",
                                "transformer_layer") "," OP("b1",
                                                            "transformer_"
                                                            "layer") "," OP("ln"
                                                                            "_"
                                                                            "f",
                                                                            "la"
                                                                            "ye"
                                                                            "rn"
                                                                            "or"
                                                                            "m") "," OP("head",
                                                                                        "logits") "," OP("los"
                                                                                                         "s",
                                                                                                         "los"
                                                                                                         "s") "]}";
#undef OP
  int joined[3] = {0, 3, 7}, split[4] = {0, 1, 6, 7};
  assert_int_equal(tu_model_json(ctx, json, &m), PP_OK);
  memset(&g, 0, sizeof g);
  g.first = joined;
  g.S = 2;
  g.R = 1;
  g.sched = PP_SCHED_1F1B;
  g.opt = PP_OPT_ADAM_MIXED;
  g.gbs = 4;
  p = gen_plan(ctx, &g);
  assert_int_equal(pp_export_megatron(ctx, p, m, fx->c, &x), PP_OK);
  assert_non_null(strstr(pp_export_text(x), "--num-layers 2 "));
  assert_non_null(strstr(pp_export_text(x), "layout Et|tL\n"));
  assert_false(tu_export_warned(x, "one embedding"));
  assert_false(tu_export_warned(x, "one loss"));
  assert_true(tu_export_warned(x, "1 operators have no Megatron symbol"));
  pp_export_destroy(x);
  /* torchtitan: one tok_embeddings, one lm_head (export_torch.c) */
  assert_int_equal(pp_export_torch(ctx, p, m, fx->c, &x), PP_OK);
  assert_non_null(strstr(pp_export_file_text(x, 2),
                         "    [\"tok_embeddings\", \"layers.0\"],\n"
                         "    [\"layers.1\", \"norm\", \"lm_head\"],\n"));
  pp_export_destroy(x);
  pp_plan_destroy(p);
  g.first = split; /* wte | wpe b0 b1 ln_f head | loss */
  g.S = 3;
  p = gen_plan(ctx, &g);
  assert_int_equal(pp_export_megatron(ctx, p, m, fx->c, &x), PP_OK);
  assert_non_null(strstr(pp_export_text(x), "layout E|EttL|L\n"));
  assert_true(tu_export_warned(x, "this one has 2 E"));
  pp_export_destroy(x);
  pp_plan_destroy(p);
  pp_model_destroy(m);
}

/* Random contiguous plans of GPT-2: the layout parses back to the counts
** of the plan's operator kinds, stage by stage. */
static void t_roundtrip(void **state)
{
  struct tu_fix *fx = *state;
  pp_ctx *ctx = fx->ctx;
  pp_model *m = fx->m;
  pp_cluster *c = fx->c;
  uint64_t rng = 77;
  int iter;
  for (iter = 0; iter < 200; iter++) {
    int S = 1 + (int)tu_rand(&rng, 16), first[17], s, i, L = 30;
    int32_t counts[16 * 4], ns = 0, want[16 * 4];
    const char *q;
    pp_plan *p;
    pp_export *x;
    /* S - 1 distinct cuts in 1..L-1 */
    tu_random_cuts(&rng, L, S, first);
    p = chain_plan(ctx, first, S, 1, NULL, PP_SCHED_1F1B, 16);
    assert_int_equal(pp_export_megatron(ctx, p, m, c, &x), PP_OK);
    q = strstr(pp_export_text(x), "layout ");
    assert_non_null(q);
    {
      char lay[512];
      size_t n = strcspn(q + 7, "\n");
      memcpy(lay, q + 7, n);
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
}

/* What Megatron cannot express is said. */
static void t_warnings(void **state)
{
  struct tu_fix *fx = *state;
  pp_ctx *ctx = fx->ctx;
  pp_model *m = fx->m;
  pp_cluster *c = fx->c;
  pp_plan *p;
  pp_export *x;
  int first[3] = {0, 15, 30};
  { /* replicas out of rank order */
    int32_t devs[4] = {1, 0, 2, 3};
    p = chain_plan(ctx, first, 2, 2, devs, PP_SCHED_1F1B_STAR, 16);
    assert_int_equal(pp_export_megatron(ctx, p, m, c, &x), PP_OK);
    assert_true(tu_export_warned(x, "not Megatron's rank order"));
    assert_true(tu_export_warned(x, "not 1F1B*"));
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
    assert_true(tu_export_warned(x, "replicas"));
    pp_export_destroy(x);
    pp_plan_destroy(p);
  }
  { /* one device holding two stages, stages out of order */
    int32_t devs[3] = {0, 1, 0};
    int f3[4] = {0, 10, 20, 30};
    p = chain_plan(ctx, f3, 3, 1, devs, PP_SCHED_1F1B, 16);
    assert_int_equal(pp_export_megatron(ctx, p, m, c, &x), PP_OK);
    assert_true(tu_export_warned(x, "holds stages 0 and 2"));
    pp_export_destroy(x);
    pp_plan_destroy(p);
  }
}

static void t_parser(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  int32_t counts[64 * 4], n = 0;
  static const char *const bad[] = {"", "X", "(tt", "(t)", "(t)*", "t|t|t|t|t",
                                    "E)t",
                                    /* Megatron refuses what its four
                                    ** steps leave outside E t m L |:
                                    ** spaces, quotes, nested groups */
                                    "Ettt|ttt L", "\"Ettt|L\"", "E((t)*2)*2|L",
                                    "((((((((((((((((((t)*1)*1)*1)*1)*1)*1)*1)*"
                                    "1)*1)*1)*1)*1)*1)*1)*1)*1)*1)*1",
                                    "((((t)*1000)*1000)*1000)*1000"};
  size_t i;
  assert_int_equal(
      pp_megatron_layout_parse(ctx, "E|(tt|)*3,m|L", 64, &n, counts), PP_OK);
  assert_int_equal(n, 6);
  assert_int_equal(counts[0], 1);      /* E */
  assert_int_equal(counts[4 + 1], 2);  /* tt */
  assert_int_equal(counts[12 + 1], 2); /* the third tt */
  assert_int_equal(counts[16 + 2], 1); /* m */
  assert_int_equal(counts[20 + 3], 1); /* L */
  /* x*k repeats one character (parse_str_to_list's second pattern,
  ** pipeline_parallel_layer_layout.py:300), a '|' too */
  assert_int_equal(pp_megatron_layout_parse(ctx, "Et*3|t*2,L", 64, &n, counts),
                   PP_OK);
  assert_int_equal(n, 2);
  assert_int_equal(counts[1], 3);
  assert_int_equal(counts[4 + 1], 2);
  /* its docstring's example (line 285): Ettt, 29 x tt, m, L */
  assert_int_equal(
      pp_megatron_layout_parse(ctx, "Ettt|(tt|)*29,m|L", 64, &n, counts),
      PP_OK);
  assert_int_equal(n, 32);
  assert_int_equal(counts[1], 3);
  assert_int_equal(counts[29 * 4 + 1], 2);
  assert_int_equal(counts[30 * 4 + 2], 1);
  assert_int_equal(counts[31 * 4 + 3], 1);
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
}

/* Fail every allocation of run in turn (the last run fails none): each
** failure is PP_ENOMEM and clean, and some run succeeds. */
struct job {
  const pp_plan *p;
  const pp_model *m;
  const pp_cluster *c;
  const char *engine; /* run_engine */
};

static pp_status run_engine(pp_ctx *ctx, const struct job *j)
{
  pp_export *x = NULL;
  pp_status rc = pp_export_to(ctx, j->engine, j->p, j->m, j->c, &x);
  assert_true(rc == PP_OK ? x != NULL : x == NULL);
  pp_export_destroy(x);
  return rc;
}

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
  struct tu_fix *fx = *state;
  pp_ctx *ctx = fx->ctx;
  pp_model *m = fx->m;
  pp_cluster *c = fx->c;
  pp_plan *p;
  int first[3] = {0, 15, 30};
  int32_t devs[2] = {1, 0};
  struct job jb;
  p = chain_plan(ctx, first, 2, 1, devs, PP_SCHED_GPIPE, 8);
  jb.p = p;
  jb.m = m;
  jb.c = c;
  sweep(&fx->a, ctx, run_megatron, &jb);
  pp_plan_destroy(p);
  { /* every engine, on a plan with tp 2, recomputation and a device
    ** holding two stages (more of each export's paths) */
    static const char *const engines[] = {"megatron", "deepspeed", "torch",
                                          "pipedream"};
    size_t e;
    static const int32_t shared[4] = {0, 1, 0, 1};
    struct gp g;
    memset(&g, 0, sizeof g);
    g.first = first;
    g.S = 2;
    g.R = 1;
    g.tp = 2;
    g.devs = shared;
    g.sched = PP_SCHED_1F1B_STAR;
    g.recompute = 1;
    g.opt = PP_OPT_ADAM_MIXED;
    g.gbs = 8;
    p = gen_plan(ctx, &g);
    jb.p = p;
    for (e = 0; e < sizeof engines / sizeof *engines; e++) {
      jb.engine = engines[e];
      sweep(&fx->a, ctx, run_engine, &jb);
    }
    pp_plan_destroy(p);
  }
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
  assert_non_null(strstr(txt, " Ettttt|ttttttt|tttttt|ttttttL\n"));
  assert_null(strchr(txt, '"'));
  free(txt);
  snprintf(cmd, sizeof cmd, "%s/megatron_env.sh", dir);
  txt = tu_slurp(cmd, &len);
  assert_non_null(txt);
  assert_non_null(strstr(txt, "Megatron-Core v0.13.0"));
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
  struct tu_fix *fx = *state;
  pp_ctx *ctx = fx->ctx;
  pp_model *m;
  pp_cluster *c;
  pp_plan *p;
  pp_launch *x = NULL;
  int first[3] = {0, 15, 30};
  int32_t devs[4] = {2, 0, 3, 1}; /* stage 0 on b0, a0; stage 1 on b1, a1 */
  char *buf = NULL, *out, *err, cmd[1024];
  size_t len = 0;
  FILE *f;
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
  /* in rank order, but on GPUs 3 and 1 of alpha: torchrun and
  ** DeepSpeed's launcher would start them on GPUs 0 and 1 */
  {
    int32_t ord[4] = {0, 1, 2, 3};
    pp_plan *q = chain_plan(ctx, first, 2, 2, ord, PP_SCHED_1F1B, 16);
    pp_cluster *c2;
    char gpus[sizeof cl_json];
    char *h;
    assert_int_equal(pp_export_launch(ctx, q, m, c, &x), PP_OK);
    assert_false(pp_launch_torchrun_ok(x));
    pp_launch_destroy(x);
    /* on each host's GPUs 0 and 1: torchrun would do */
    snprintf(gpus, sizeof gpus, "%s", cl_json);
    h = strstr(gpus, "\"local_gpu\": 3");
    h[13] = '0';
    h = strstr(gpus, "\"local_gpu\": 2");
    h[13] = '1';
    h = strstr(gpus, "\"name\": \"b0\"");
    h = strstr(h, "\"local_gpu\": 0");
    assert_non_null(h);
    assert_int_equal(tu_cluster_json(ctx, gpus, &c2), PP_OK);
    assert_int_equal(pp_export_launch(ctx, q, m, c2, &x), PP_OK);
    assert_true(pp_launch_torchrun_ok(x));
    pp_launch_destroy(x);
    pp_cluster_destroy(c2);
    pp_plan_destroy(q);
  }
  /* two stages per device, round-robin (Megatron's interleaved
  ** pipeline): one rank per device, never two on one GPU */
  {
    int f4[5] = {0, 8, 15, 22, 30};
    int32_t rr[4] = {0, 2, 0, 2};
    pp_plan *q = chain_plan(ctx, f4, 4, 1, rr, PP_SCHED_1F1B, 16);
    assert_int_equal(pp_export_launch(ctx, q, m, c, &x), PP_OK);
    snprintf(cmd, sizeof cmd, "%s", tu_tmp("launch_rr.sh"));
    assert_int_equal(pp_launch_write_script(ctx, x, 0, cmd, NULL), PP_OK);
    {
      char *txt = run_sorted(cmd, "$RANK $LOCAL_RANK $WORLD_SIZE");
      assert_string_equal(txt, "0 0 2\n");
      free(txt);
    }
    pp_launch_destroy(x);
    pp_plan_destroy(q);
  }
  /* tensor parallelism under Megatron before Blackwell: the scripts set
  ** CUDA_DEVICE_MAX_CONNECTIONS=1 (Megatron's arguments.py:1452-1479),
  ** unless the environment does */
  {
    struct gp g;
    int f1[2] = {0, 30};
    pp_plan *q;
    memset(&g, 0, sizeof g);
    g.first = f1;
    g.S = 1;
    g.R = 1;
    g.tp = 2;
    g.sched = PP_SCHED_1F1B;
    g.opt = PP_OPT_ADAM_MIXED;
    g.gbs = 8;
    q = gen_plan(ctx, &g);
    assert_int_equal(pp_export_launch(ctx, q, m, c, &x), PP_OK);
    snprintf(cmd, sizeof cmd, "%s", tu_tmp("launch_tp.sh"));
    assert_int_equal(pp_launch_write_script(ctx, x, 0, cmd, NULL), PP_OK);
    {
      char *txt = run_sorted(cmd, "$RANK $CUDA_DEVICE_MAX_CONNECTIONS");
      assert_string_equal(txt, "0 1\n1 1\n");
      free(txt);
    }
    pp_launch_destroy(x);
    pp_plan_destroy(q);
  }
  /* allocation failures are clean */
  {
    struct job jb;
    jb.p = p;
    jb.m = m;
    jb.c = c;
    sweep(&fx->a, ctx, run_launch, &jb);
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
}

/* ---- DeepSpeed, torch and PipeDream ------------------------------------ */

/* Write every file of x into the fresh directory tu_tmp(name); returns
** its path (static). */
static const char *write_all(pp_ctx *ctx, const pp_export *x, const char *name)
{
  static char dir[512];
  char path[1200];
  int32_t i;
  snprintf(dir, sizeof dir, "%s", tu_tmp(name));
  snprintf(path, sizeof path, "rm -rf '%s' && mkdir '%s'", dir, dir);
  assert_int_equal(system(path), 0);
  for (i = 0; i < pp_export_nfile(x); i++) {
    snprintf(path, sizeof path, "%s/%s", dir, pp_export_file_name(x, i));
    assert_int_equal(pp_export_write_file(ctx, x, i, path, NULL), PP_OK);
  }
  return dir;
}

/* Run tests/check_exports.py WHAT DIR [WORLD]; its stdout (malloc'd).
** It must succeed: it raises on every inconsistency it finds. */
static char *check_py(const char *what, const char *dir, int world)
{
  char cmd[2048];
  char *txt = calloc(1, 1 << 16);
  size_t n;
  FILE *pf;
  snprintf(cmd, sizeof cmd, "python3 '%s' %s '%s' %d 2>&1",
           tu_path("tests/check_exports.py"), what, dir, world);
  pf = popen(cmd, "r");
  assert_non_null(pf);
  assert_non_null(txt);
  n = fread(txt, 1, (1 << 16) - 1, pf);
  txt[n] = 0;
  if (pclose(pf) != 0)
    fail_msg("%s failed:\n%s", cmd, txt);
  return txt;
}

/* AMP's GPT-2 plan: ds_config.json exactly; the stages DeepSpeed builds on
** every rank through PlannedPipelineModule are the plan's. */
static void t_deepspeed(void **state)
{
  struct tu_fix *fx = *state;
  pp_ctx *ctx = fx->ctx;
  pp_model *m = fx->m;
  pp_cluster *c = fx->c;
  pp_plan *p;
  pp_export *x;
  uint64_t rng = 2024;
  int iter;
  assert_int_equal(
      pp_plan_load(ctx, tu_path("examples/plan-gpt2-amp.json"), m, c, &p),
      PP_OK);
  assert_int_equal(pp_export_deepspeed(ctx, p, m, c, &x), PP_OK);
  assert_int_equal(pp_export_nfile(x), 2);
  assert_string_equal(pp_export_file_name(x, 0), "ds_config.json");
  assert_string_equal(pp_export_file_text(x, 0),
                      "{\n"
                      "  \"train_batch_size\": 32,\n"
                      "  \"train_micro_batch_size_per_gpu\": 1,\n"
                      "  \"gradient_accumulation_steps\": 8,\n"
                      "  \"fp16\": {\"enabled\": true, \"loss_scale\": 0},\n"
                      "  \"communication_data_type\": \"fp32\",\n"
                      "  \"zero_optimization\": {\"stage\": 0}\n"
                      "}\n");
  assert_string_equal(pp_export_file_name(x, 1), "ds_pipeline.py");
  assert_non_null(
      strstr(pp_export_file_text(x, 1), "\nPARTS = [0, 7, 14, 20, 30]\n"));
  assert_non_null(
      strstr(pp_export_file_text(x, 1), "    \"embedding\",  # 0, stage 0\n"));
  assert_int_equal(pp_export_nwarning(x), 0);
  {
    char *txt = check_py("deepspeed", write_all(ctx, x, "ds_gpt2"), 16);
    assert_non_null(strstr(txt, "rank 5 stage 1 layers 7 14 ckpt 0\n"));
    assert_non_null(strstr(txt, "rank 15 stage 3 layers 20 30 ckpt 0\n"));
    assert_non_null(strstr(txt, "refused: the plan has 30 layers"));
    free(txt);
  }
  pp_export_destroy(x);
  pp_plan_destroy(p);
  /* random plans: cuts, replicas, tp, micro-batch, recomputation */
  for (iter = 0; iter < 12; iter++) {
    struct gp g;
    int first[9], s, r, t, k, L = 30;
    char *txt, line[128];
    memset(&g, 0, sizeof g);
    g.S = 1 + (int)tu_rand(&rng, 8);
    g.tp = 1 + (int)tu_rand(&rng, 2);
    g.R = 1 + (int)tu_rand(&rng, (uint32_t)(16 / (g.S * g.tp)));
    g.mbs = 1 + (int)tu_rand(&rng, 2);
    g.recompute = (int)tu_rand(&rng, 2);
    g.sched = PP_SCHED_1F1B;
    g.opt = (pp_optimizer)tu_rand(&rng, 3);
    g.gbs = (int64_t)g.R * g.mbs * (1 + (int)tu_rand(&rng, 8));
    tu_random_cuts(&rng, L, g.S, first);
    g.first = first;
    p = gen_plan(ctx, &g);
    assert_int_equal(pp_export_deepspeed(ctx, p, m, c, &x), PP_OK);
    assert_int_equal(pp_export_nwarning(x), 0);
    txt = check_py("deepspeed", write_all(ctx, x, "ds_rand"), g.S * g.R * g.tp);
    snprintf(line, sizeof line, "gradient_accumulation_steps %lld\n",
             (long long)(g.gbs / (g.R * g.mbs)));
    assert_non_null(strstr(txt, line));
    snprintf(line, sizeof line, "fp16 %s\n",
             g.opt == PP_OPT_ADAM_MIXED ? "True" : "False");
    assert_non_null(strstr(txt, line));
    /* rank (s R + r) tp + t builds stage s's layers */
    for (k = 0, s = 0; s < g.S; s++)
      for (r = 0; r < g.R; r++)
        for (t = 0; t < g.tp; t++, k++) {
          snprintf(line, sizeof line, "rank %d stage %d layers %d %d ckpt %d\n",
                   k, s, first[s], first[s + 1], g.recompute);
          if (!strstr(txt, line))
            fail_msg("missing '%s' in\n%s", line, txt);
        }
    free(txt);
    pp_export_destroy(x);
    pp_plan_destroy(p);
  }
}

/* The schedule CSV's row of rank k, as cells. */
static int csv_row(const char *csv, int k, char cells[][16], int max)
{
  const char *q = csv;
  int n = 0;
  while (k-- > 0)
    q = strchr(q, '\n') + 1;
  while (*q && *q != '\n' && n < max) {
    int i = 0;
    while (*q && *q != ',' && *q != '\n' && i < 15)
      cells[n][i++] = *q++;
    cells[n++][i] = 0;
    if (*q == ',')
      q++;
  }
  return n;
}

/* torch: on GPT-2's plan the CSV is 1F1B written out (warm-up of S - s
** forwards, then one backward, one forward); on random plans every
** rank's row is its stage's order from sched.c (the simulator writes the
** CSV, so this compares two implementations), and check_exports.py
** finds every action once, backward after forward, on the rank of
** STAGE_TO_RANK, and the TOML's parts equal STAGE_MODULES. */
static void t_torch(void **state)
{
  struct tu_fix *fx = *state;
  pp_ctx *ctx = fx->ctx;
  pp_model *m = fx->m;
  pp_cluster *c = fx->c;
  pp_plan *p;
  pp_export *x;
  uint64_t rng = 99;
  int iter, s;
  static char cells[512][16];
  assert_int_equal(
      pp_plan_load(ctx, tu_path("examples/plan-gpt2-amp.json"), m, c, &p),
      PP_OK);
  assert_int_equal(pp_export_torch(ctx, p, m, c, &x), PP_OK);
  /* fp16: bf16 in torchtitan, and mixed precision without sharding */
  assert_int_equal(pp_export_nwarning(x), 2);
  assert_true(tu_export_warned(x, "torchtitan has no fp16"));
  assert_true(tu_export_warned(x, "no sharding (ZeRO 0)"));
  assert_int_equal(pp_export_nfile(x), 3);
  assert_string_equal(pp_export_file_name(x, 0), "pp_schedule.csv");
  for (s = 0; s < 4; s++) { /* 1F1B: S = 4, 8 micro-batches */
    char want[512] = "", cell[16];
    int f, b, w = 4 - s;
    for (f = 0; f < w; f++) {
      snprintf(cell, sizeof cell, "%s%dF%d", f ? "," : "", s, f);
      strcat(want, cell);
    }
    for (b = 0; b < 8; b++) {
      snprintf(cell, sizeof cell, ",%dB%d", s, b);
      strcat(want, cell);
      if (f < 8) {
        snprintf(cell, sizeof cell, ",%dF%d", s, f++);
        strcat(want, cell);
      }
    }
    {
      const char *csv = pp_export_file_text(x, 0), *q = csv;
      int k;
      for (k = 0; k < s; k++)
        q = strchr(q, '\n') + 1;
      if (strncmp(q, want, strlen(want)) || q[strlen(want)] != '\n')
        fail_msg("stage %d: want %s in\n%s", s, want, csv);
    }
  }
  assert_non_null(strstr(pp_export_file_text(x, 1),
                         "    \"layer6\": SplitPoint.BEGINNING,\n"));
  assert_non_null(strstr(pp_export_file_text(x, 1),
                         "sched = _PipelineScheduleRuntime(stages, "));
  assert_string_equal(pp_export_file_name(x, 2), "torchtitan_config.py");
  assert_non_null(strstr(pp_export_file_text(x, 2),
                         "    [\"layers.18\", \"layers.19\", \"layers.20\", "
                         "\"layers.21\", \"layers.22\", \"layers.23\", "
                         "\"norm\", \"lm_head\"],\n"));
  {
    char *txt = check_py("torch", write_all(ctx, x, "torch_gpt2"), 0);
    assert_non_null(strstr(txt, "data_parallel_replicate_degree 4\n"));
    assert_non_null(strstr(txt, "num_pp_microbatches 8\n"));
    assert_non_null(strstr(txt, "torchtitan modules\n"));
    free(txt);
  }
  pp_export_destroy(x);
  pp_plan_destroy(p);
  /* random plans: P pipeline ranks (1 to 16), k stages per rank (round
  ** robin, stage s on rank s mod P's devices), uniform or uneven cuts, R
  ** data-parallel replicas */
  for (iter = 0; iter < 48; iter++) {
    struct gp g;
    int first[17], L = 30, P, k, uniform = iter % 4 == 0;
    int32_t devs[16 * 16 * 2]; /* S R tp entries: S, R <= 16, tp <= 2 */
    char *txt;
    memset(&g, 0, sizeof g);
    P = 1 + (int)tu_rand(&rng, 16);
    k = iter % 3 == 2 && P <= 8 ? 2 + (int)tu_rand(&rng, (uint32_t)(16 / P - 1))
                                : 1;
    g.S = P * k;
    g.R = 1 + (int)tu_rand(&rng, (uint32_t)(16 / P));
    g.mbs = 1 + (int)tu_rand(&rng, 2);
    g.recompute = (int)tu_rand(&rng, 2);
    g.sched = k > 1 ? PP_SCHED_1F1B_STAR : (pp_schedule)tu_rand(&rng, 3);
    g.opt = PP_OPT_ADAM_MIXED;
    g.gbs = (int64_t)g.R * g.mbs * (1 + (int)tu_rand(&rng, 12));
    /* the run's settings: every precision, DDP or FSDP2 (ZeRO 2, 3), tp
    ** 2 where the 16 devices allow */
    {
      static const pp_precision precs[3] = {PP_PREC_FP32, PP_PREC_FP16,
                                            PP_PREC_BF16};
      static const int zeros[3] = {0, 2, 3};
      g.run = 1;
      g.prec = precs[tu_rand(&rng, 3)];
      g.engine = PP_ENGINE_TORCH;
      g.zero = zeros[tu_rand(&rng, 3)];
      g.tp = P * g.R <= 8 && tu_rand(&rng, 2) ? 2 : 1;
    }
    first[0] = 0;
    for (s = 1; s < g.S; s++) {
      int lo = first[s - 1] + 1, hi = L - (g.S - s);
      first[s] = uniform ? s * L / g.S
                         : lo + (int)tu_rand(&rng, (uint32_t)(hi - lo + 1));
    }
    first[g.S] = L;
    g.first = first;
    {
      int i, r;
      for (i = 0, s = 0; s < g.S; s++)
        for (r = 0; r < g.R; r++) {
          int t;
          for (t = 0; t < g.tp; t++, i++)
            devs[i] = ((s % P) * g.R + r) * g.tp + t;
        }
      g.devs = devs;
    }
    p = gen_plan(ctx, &g);
    assert_int_equal(pp_export_torch(ctx, p, m, c, &x), PP_OK);
    assert_false(tu_export_warned(x, "\"loop\" style"));
    assert_false(tu_export_warned(x, "multiple of the pipeline ranks"));
    txt = check_py("torch", write_all(ctx, x, "torch_rand"), 0);
    if (!strstr(txt, "torchtitan modules\n"))
      fail_msg("iter %d: not torchtitan's module names:\n%s", iter, txt);
    /* a stage of casts and no-ops only: warned, and empty in the file */
    assert_int_equal(tu_export_warned(x, "hold no torchtitan module"),
                     strstr(txt, "empty stage ") != NULL);
    if (!strstr(txt, "torchtitan refused")) { /* the run's settings */
      char want[96];
      snprintf(want, sizeof want, "tensor_parallel_degree %d\n", g.tp);
      assert_non_null(strstr(txt, want));
      assert_non_null(strstr(txt, g.prec == PP_PREC_FP32
                                      ? "mixed_precision_param float32\n"
                                      : "mixed_precision_param bfloat16\n"));
      snprintf(want, sizeof want, "data_parallel_shard_degree %d\n",
               g.zero >= 2 ? g.R : 1);
      assert_non_null(strstr(txt, want));
      if (g.prec == PP_PREC_FP16)
        assert_true(tu_export_warned(x, "no fp16"));
    }
    free(txt);
    if (k == 1) { /* rank s = stage s: its order */
      pp_eval *e;
      pp_cost_params cp;
      pp_cost_params_init(&cp);
      assert_int_equal(pp_evaluate(ctx, p, m, c, &cp, &e), PP_OK);
      for (s = 0; s < g.S; s++) {
        pp_sched_op ops[512];
        int64_t n, i;
        int nc = csv_row(pp_export_file_text(x, 0), s, cells, 512);
        assert_int_equal(pp_eval_stage_order(e, s, ops, 512, &n), PP_OK);
        assert_int_equal(nc, (int)n);
        for (i = 0; i < n; i++) {
          char want[16];
          snprintf(want, sizeof want, "%d%c%d", s,
                   ops[i].kind == PP_TASK_FWD ? 'F' : 'B',
                   (int)ops[i].micro_batch);
          if (strcmp(cells[i], want))
            fail_msg("iter %d stage %d step %d: %s, sched.c %s", iter, s,
                     (int)i, cells[i], want);
        }
      }
      pp_eval_destroy(e);
    } else { /* every rank runs its k stages, F and B of each micro-batch */
      int r;
      for (r = 0; r < P; r++)
        assert_int_equal(csv_row(pp_export_file_text(x, 0), r, cells, 512),
                         (int)(2 * k * (g.gbs / (g.R * g.mbs))));
    }
    pp_export_destroy(x);
    pp_plan_destroy(p);
  }
}

/* PipeDream: stages with different replica counts, which only it
** expresses: the maps exactly, no warning but its asynchronous runtime. */
static void t_pipedream(void **state)
{
  struct tu_fix *fx = *state;
  pp_ctx *ctx = fx->ctx;
  pp_model *m = fx->m;
  pp_cluster *c = fx->c;
  pp_plan *p;
  pp_export *x;
  pp_plan_params pp;
  pp_plan_builder *b;
  int32_t ops[30], id, d, i;
  pp_plan_params_init(&pp);
  pp.global_batch = 12;
  assert_int_equal(pp_plan_builder_create(ctx, &pp, "t", &b), PP_OK);
  for (i = 0; i < 30; i++)
    ops[i] = i;
  assert_int_equal(pp_plan_builder_add_stage(b, ops, 20, &id), PP_OK);
  for (d = 5; d < 8; d++) /* three replicas on devices 5, 6, 7 */
    assert_int_equal(pp_plan_builder_add_replica(b, id, &d), PP_OK);
  assert_int_equal(pp_plan_builder_add_stage(b, ops + 20, 10, &id), PP_OK);
  d = 2;
  assert_int_equal(pp_plan_builder_add_replica(b, id, &d), PP_OK);
  assert_int_equal(pp_plan_builder_finish(b, &p), PP_OK);
  assert_int_equal(pp_export_pipedream(ctx, p, m, c, &x), PP_OK);
  assert_int_equal(pp_export_nfile(x), 2);
  assert_string_equal(pp_export_file_name(x, 0), "pipedream_conf.json");
  /* one module per stage and the criterion (PipeDream's runtime.py:131);
  ** ranks 0 .. 3 (runtime.py:145); the warm-up forwards of each stage,
  ** its in-flight count less one (runtime.py:166-168), here what
  ** PipeDream's own default gives (runtime.py:170-174: (4 - 1) / 3 = 1
  ** and 0) */
  assert_non_null(strstr(pp_export_text(x),
                         "{\n  \"module_to_stage_map\": [0, 1, 1],\n"
                         "  \"stage_to_rank_map\": {\"0\": [0, 1, 2], "
                         "\"1\": [3]},\n"
                         "  \"stage_to_depth_map\": {\"0\": 1, \"1\": 0},\n"));
  /* the wrapper gives PipeDream the flags it reads (main_with_runtime.py:
  ** 62-71) from the launch scripts' environment */
  assert_string_equal(pp_export_file_name(x, 1), "pipedream_run.sh");
  {
    char path[600], cmd[1024], *out, *err;
    snprintf(path, sizeof path, "%s", tu_tmp("pipedream_run.sh"));
    assert_int_equal(pp_export_write_file(ctx, x, 1, path, NULL), PP_OK);
    snprintf(cmd, sizeof cmd,
             "RANK=3 LOCAL_RANK=1 MASTER_ADDR=hostA sh '%s' echo main.py",
             path);
    assert_int_equal(tu_sh(cmd, &out, &err), 0);
    /* the plan's fp16 (gpt2-amp's dtype, mixed Adam) as --fp16 (line 58) */
    assert_string_equal(out, "main.py --rank 3 --local_rank 1 --master_addr "
                             "hostA --fp16\n");
  }
  assert_non_null(strstr(pp_export_text(x), "\"layer20\": 1,"));
  assert_non_null(strstr(pp_export_text(x),
                         "{\"rank\": 3, \"device\": 2, \"name\": \"n0g2\"}"));
  assert_int_equal(pp_export_nwarning(x), 1);
  assert_true(tu_export_warned(x, "asynchronous"));
  {
    char *txt = check_py("pipedream", write_all(ctx, x, "pd"), 0);
    assert_non_null(strstr(txt, "stage 0 ranks 0 1 2\nstage 1 ranks 3\n"));
    assert_non_null(strstr(txt, "operators 30\n"));
    free(txt);
  }
  /* the others warn about the replica counts */
  pp_export_destroy(x);
  assert_int_equal(pp_export_deepspeed(ctx, p, m, c, &x), PP_OK);
  assert_true(tu_export_warned(x, "stage 1 has 1 replicas and stage 0 has 3"));
  pp_export_destroy(x);
  assert_int_equal(pp_export_torch(ctx, p, m, c, &x), PP_OK);
  assert_true(tu_export_warned(x, "torch's data parallelism"));
  pp_export_destroy(x);
  pp_plan_destroy(p);
}

/* What an engine cannot express: tensor-parallel groups across nodes and
** device types, a DAG for DeepSpeed, 2BW, GPipe, non-contiguous stages,
** tp for PipeDream, an unknown engine. */
static void t_engine_warnings(void **state)
{
  struct tu_fix *fx = *state;
  pp_ctx *ctx = fx->ctx;
  pp_model *m = fx->m, *dag;
  pp_cluster *c = fx->c;
  pp_plan *p;
  pp_export *x;
  struct gp g;
  int first[3] = {0, 15, 30};
  memset(&g, 0, sizeof g);
  g.first = first;
  g.S = 2;
  g.R = 1;
  g.tp = 2;
  g.sched = PP_SCHED_GPIPE;
  g.opt = PP_OPT_2BW;
  g.gbs = 4;
  { /* tp groups (3, 4): nodes 0 and 1; (11, 12): V100 and T4 */
    static const int32_t devs[4] = {3, 4, 11, 12};
    g.devs = devs;
    p = gen_plan(ctx, &g);
  }
  assert_int_equal(pp_export_megatron(ctx, p, m, c, &x), PP_OK);
  assert_true(
      tu_export_warned(x, "2 tensor-parallel groups span nodes (the first: "
                          "devices 3 and 4 on nodes 0 and 1)"));
  assert_true(tu_export_warned(x, "1 tensor-parallel group mixes device types "
                                  "(the first: V100 and T4)"));
  assert_true(tu_export_warned(x, "not GPipe"));
  pp_export_destroy(x);
  assert_int_equal(pp_export_deepspeed(ctx, p, m, c, &x), PP_OK);
  assert_true(tu_export_warned(x, "DeepSpeed runs tensor parallelism over the "
                                  "inter-node network"));
  assert_true(
      tu_export_warned(x, "PipeDream-2BW optimizer is not expressible"));
  assert_non_null(
      strstr(pp_export_file_text(x, 1), "PipeModelDataParallelTopology(\n"));
  pp_export_destroy(x);
  assert_int_equal(pp_export_pipedream(ctx, p, m, c, &x), PP_OK);
  assert_true(tu_export_warned(x, "no tensor parallelism"));
  { /* tp 2: launch rank 2 is PipeDream rank 1, launch rank 3 idles */
    char path[600], cmd[1024], *out, *err;
    snprintf(path, sizeof path, "%s", tu_tmp("pipedream_run_tp.sh"));
    assert_int_equal(pp_export_write_file(ctx, x, 1, path, NULL), PP_OK);
    snprintf(cmd, sizeof cmd,
             "for r in 2 3; do RANK=$r LOCAL_RANK=0 MASTER_ADDR=h sh '%s' "
             "echo run; done",
             path);
    assert_int_equal(tu_sh(cmd, &out, &err), 0);
    assert_string_equal(out, "run --rank 1 --local_rank 0 --master_addr h\n");
  }
  pp_export_destroy(x);
  assert_int_equal(pp_export_torch(ctx, p, m, c, &x), PP_OK);
  assert_true(tu_export_warned(x, "torch runs tensor parallelism"));
  assert_false(tu_export_warned(x, "GPipe")); /* the CSV is the plan's order */
  pp_export_destroy(x);
  pp_plan_destroy(p);
  /* a DAG in DeepSpeed, with a stage that is not a run of the model's
  ** order: {input, conv1, branch_b} then the rest (branch_a is third) */
  assert_int_equal(pp_model_load(ctx, tu_path("examples/model-dag.json"), &dag),
                   PP_OK);
  {
    pp_plan_params pp;
    pp_plan_builder *b;
    int32_t s0[3] = {0, 1, 3}, s1[5] = {2, 4, 5, 6, 7}, id, d;
    pp_plan_params_init(&pp);
    pp.global_batch = 4;
    assert_int_equal(pp_plan_builder_create(ctx, &pp, "t", &b), PP_OK);
    assert_int_equal(pp_plan_builder_add_stage(b, s0, 3, &id), PP_OK);
    d = 0;
    assert_int_equal(pp_plan_builder_add_replica(b, id, &d), PP_OK);
    assert_int_equal(pp_plan_builder_add_stage(b, s1, 5, &id), PP_OK);
    d = 1;
    assert_int_equal(pp_plan_builder_add_replica(b, id, &d), PP_OK);
    assert_int_equal(pp_plan_builder_finish(b, &p), PP_OK);
    assert_int_equal(pp_export_deepspeed(ctx, p, dag, c, &x), PP_OK);
    assert_true(tu_export_warned(x, "the model is a DAG"));
    assert_true(tu_export_warned(x, "stage 0 is not one run of the model's "
                                    "operators: DeepSpeed stages"));
    /* the parts keep each stage's operator count */
    assert_non_null(strstr(pp_export_file_text(x, 1), "\nPARTS = [0, 3, 8]"));
    pp_export_destroy(x);
    assert_int_equal(pp_export_torch(ctx, p, dag, c, &x), PP_OK);
    assert_true(tu_export_warned(x, "torchtitan stages are consecutive"));
    assert_non_null(strstr(pp_export_file_text(x, 1),
                           "[\"input\", \"conv1\", \"branch_b\"],\n"));
    pp_export_destroy(x);
    pp_plan_destroy(p);
  }
  pp_model_destroy(dag);
  /* an unknown engine; NULL arguments */
  p = chain_plan(ctx, first, 2, 1, NULL, PP_SCHED_1F1B, 4);
  tu_expect_error(ctx, pp_export_to(ctx, "nemo", p, m, c, &x), PP_EINVAL,
                  "unknown engine 'nemo'", "deepspeed", NULL);
  tu_expect_error(ctx, pp_export_torch(ctx, NULL, m, c, &x), PP_EINVAL,
                  "NULL argument", NULL);
  assert_int_equal(pp_export_write_file(ctx, NULL, 0, NULL, stdout), PP_EINVAL);
  pp_ctx_clear_error(ctx);
  pp_plan_destroy(p);
}

/* The command: every engine's files in -o DIR; several files on stdout
** are headed by their names. */
/* Per-stage tp degrees (issue 23): no engine runs stages of different
** degrees.  Megatron's initialize_model_parallel takes one
** tensor_model_parallel_size (megatron/core/parallel_state.py:601-602)
** and splits the world by tp x pp (:815-823 @ d98e8a6); DeepSpeed's
** PipeModelDataParallelTopology(num_pp, num_mp, num_dp) one num_mp
** (deepspeed/runtime/pipe/topology.py:244-247 @ 38327e0); torchtitan's
** ParallelDims one tp (torchtitan/distributed/parallel_dims.py:137, and
** dp x cp x tp x pp = world, :182 @ b5bcd76).  So each export writes the
** plan at its smallest degree, on the first devices of every group, and
** warns; DeepSpeed's topology then builds every stage on the ranks the
** launch files start. */
static void t_stage_tp(void **state)
{
  struct tu_fix *fx = *state;
  pp_ctx *ctx = fx->ctx;
  pp_model *m = fx->m;
  pp_cluster *c = fx->c;
  pp_plan_params pa;
  pp_plan_builder *b;
  pp_plan *p;
  pp_export *x;
  int32_t ops[30], id, i, k;
  static const int32_t d0[2][1] = {{0}, {1}}, d1[2][2] = {{4, 5}, {6, 7}};
  for (i = 0; i < 30; i++)
    ops[i] = i;
  pp_plan_params_init(&pa);
  pa.global_batch = 16;
  assert_int_equal(pp_plan_builder_create(ctx, &pa, "mixed-tp", &b), PP_OK);
  assert_int_equal(pp_plan_builder_add_stage(b, ops, 15, &id), PP_OK);
  for (k = 0; k < 2; k++)
    assert_int_equal(pp_plan_builder_add_replica(b, id, d0[k]), PP_OK);
  assert_int_equal(pp_plan_builder_add_stage(b, ops + 15, 15, &id), PP_OK);
  assert_int_equal(pp_plan_builder_set_stage_tp(b, id, 2), PP_OK);
  for (k = 0; k < 2; k++)
    assert_int_equal(pp_plan_builder_add_replica(b, id, d1[k]), PP_OK);
  assert_int_equal(pp_plan_builder_finish(b, &p), PP_OK);
  for (k = 0; k < 3; k++) {
    static const char *const engines[] = {"megatron", "deepspeed", "torch"};
    static const char *const one[] = {"--tensor-model-parallel-size 1",
                                      "x tp 1;", "TENSOR_PARALLEL = 1\n"};
    bool found = false;
    assert_int_equal(pp_export_to(ctx, engines[k], p, m, c, &x), PP_OK);
    assert_true(tu_export_warned(x, "stage 1 at tp 2"));
    assert_true(tu_export_warned(x, "runs one degree in every stage"));
    for (i = 0; i < pp_export_nfile(x); i++)
      found = found || strstr(pp_export_file_text(x, i), one[k]);
    if (!found)
      fail_msg("%s: no '%s' in the files", engines[k], one[k]);
    if (k == 1) { /* DeepSpeed's topology over the 4 ranks */
      char *txt = check_py("deepspeed", write_all(ctx, x, "ds_stage_tp"), 4);
      assert_non_null(strstr(txt, "rank 0 stage 0 layers 0 15"));
      assert_non_null(strstr(txt, "rank 3 stage 1 layers 15 30"));
      free(txt);
    }
    pp_export_destroy(x);
  }
  pp_plan_destroy(p);
}

static void t_engine_cli(void **state)
{
  char *out, *err, cmd[2048], path[512];
  const char *dir = NULL;
  static const char *const files[] = {
      "deepspeed", "ds_config.json",       "deepspeed", "ds_pipeline.py",
      "torch",     "pp_schedule.csv",      "torch",     "pp_stages.py",
      "torch",     "torchtitan_config.py", "pipedream", "pipedream_conf.json"};
  size_t i;
  (void)state;
  for (i = 0; i < sizeof files / sizeof *files; i += 2) {
    size_t len;
    char *txt;
    dir = tu_tmp(files[i]);
    snprintf(path, sizeof path, "%s", dir);
    snprintf(cmd, sizeof cmd,
             "export %s --model gpt2-amp --cluster amp-het-cluster --to %s "
             "-o %s",
             tu_path("examples/plan-gpt2-amp.json"), files[i], path);
    assert_int_equal(tu_run(cmd, &out, &err), 0);
    snprintf(cmd, sizeof cmd, "%s/%s", path, files[i + 1]);
    assert_non_null(strstr(out, cmd));
    txt = tu_slurp(cmd, &len);
    assert_non_null(txt);
    assert_true(len > 0 && txt[len - 1] == '\n');
    free(txt);
  }
  snprintf(cmd, sizeof cmd,
           "export %s --model gpt2-amp --cluster amp-het-cluster --to torch",
           tu_path("examples/plan-gpt2-amp.json"));
  assert_int_equal(tu_run(cmd, &out, &err), 0);
  assert_true(!strncmp(out, "==> pp_schedule.csv <==\n0F0,0F1,", 32));
  assert_non_null(strstr(out, "\n\n==> torchtitan_config.py <==\n"));
  snprintf(cmd, sizeof cmd,
           "export %s --model gpt2-amp --cluster amp-het-cluster --to nemo",
           tu_path("examples/plan-gpt2-amp.json"));
  assert_int_equal(tu_run(cmd, &out, &err), 1);
  assert_non_null(strstr(err, "megatron|deepspeed|torch|pipedream|launch"));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      TU_GPT2_TEST(t_exact),          TU_GPT2_TEST(t_roundtrip),
      TU_GPT2_TEST(t_warnings),       TU_CTX_TEST(t_parser),
      TU_GPT2_TEST(t_profile_layout), TU_GPT2_TEST(t_alloc),
      cmocka_unit_test(t_cli),        TU_CTX_TEST(t_launch),
      TU_GPT2_TEST(t_deepspeed),      TU_GPT2_TEST(t_torch),
      TU_GPT2_TEST(t_pipedream),      TU_GPT2_TEST(t_engine_warnings),
      TU_GPT2_TEST(t_stage_tp),       cmocka_unit_test(t_engine_cli),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
