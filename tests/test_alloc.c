/* SPDX-License-Identifier: MIT */
/*
** Allocation-failure sweep (curl's "torture" tests): for k = 1, 2, ...
** the k-th allocation of an operation fails.  Every run must end in
** PP_OK (k is past the last allocation: the sweep stops) or an error
** with a message, leave *out NULL on failure, and give back every block
** it took.  jansson allocates with its own malloc, outside the hook.
*/
#define _POSIX_C_SOURCE 200809L
#include "onnx_build.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An operation under test: does its work on ctx, checks *out == NULL on
** failure itself, destroys what it made, and returns the status. */
typedef pp_status (*op_fn)(pp_ctx *ctx, const void *arg);

struct sweep_stats {
  long runs;      /* values of k tried */
  long nomem;     /* runs that failed with PP_ENOMEM */
  long other;     /* runs that failed otherwise (with a message) */
  long tolerated; /* runs where an allocation failed yet PP_OK came back */
};

/* The sweep.  Returns the number of allocations a clean run makes. */
static long sweep(const char *label, op_fn fn, const void *arg,
                  struct sweep_stats *st)
{
  struct tu_alloc a;
  pp_ctx *ctx = tu_ctx(&a);
  long live0, k, clean;
  size_t bytes0;
  pp_status rc;

  memset(st, 0, sizeof *st);
  /* A clean run first: it must succeed and count the allocations. */
  live0 = a.live;
  bytes0 = a.bytes;
  tu_reset(&a, 0);
  rc = fn(ctx, arg);
  if (rc != PP_OK)
    fail_msg("%s: the clean run failed (%d): %s", label, rc,
             pp_ctx_errmsg(ctx));
  clean = a.count;
  if (a.live != live0 || a.bytes != bytes0)
    fail_msg("%s: the clean run leaks %ld blocks, %zu bytes", label,
             a.live - live0, a.bytes - bytes0);

  for (k = 1;; k++) {
    pp_ctx_clear_error(ctx);
    live0 = a.live;
    bytes0 = a.bytes;
    tu_reset(&a, k);
    rc = fn(ctx, arg);
    st->runs++;
    if (a.live != live0 || a.bytes != bytes0)
      fail_msg("%s: failing allocation %ld leaks %ld blocks, %zu bytes "
               "(status %d: %s)",
               label, k, a.live - live0, a.bytes - bytes0, rc,
               pp_ctx_errmsg(ctx));
    if (rc == PP_OK) {
      if (a.count < k)
        break; /* k is past the last allocation */
      st->tolerated++;
      continue;
    }
    if (a.count < k)
      fail_msg("%s: failed (%d: %s) though allocation %ld never happened",
               label, rc, pp_ctx_errmsg(ctx), k);
    if (pp_ctx_errmsg(ctx)[0] == '\0')
      fail_msg("%s: allocation %ld failed: status %d (%s) without a message",
               label, k, rc, pp_status_str(rc));
    if (pp_ctx_errcode(ctx) != rc)
      fail_msg("%s: allocation %ld: returned %d but the context holds %d: %s",
               label, k, rc, pp_ctx_errcode(ctx), pp_ctx_errmsg(ctx));
    if (rc == PP_ENOMEM)
      st->nomem++;
    else {
      /* Allowed, but it is worth seeing. */
      print_message("%s: allocation %ld failed as status %d: %s\n", label, k,
                    rc, pp_ctx_errmsg(ctx));
      st->other++;
    }
    if (k > clean + 1000)
      fail_msg("%s: still failing at k = %ld (clean run: %ld allocations)",
               label, k, clean);
  }
  tu_reset(&a, 0);
  pp_ctx_destroy(ctx);
  assert_int_equal(a.live, 0);
  assert_int_equal(a.bytes, 0);
  print_message("%-40s %5ld allocations, %5ld runs, %5ld ENOMEM, %ld other, "
                "%ld tolerated\n",
                label, clean, st->runs, st->nomem, st->other, st->tolerated);
  return clean;
}

/* Sweep and require that at least one allocation happened and that
** failures came out as PP_ENOMEM. */
static void sweep_all(const char *label, op_fn fn, const void *arg)
{
  struct sweep_stats st;
  long n = sweep(label, fn, arg, &st);
  assert_true(n > 0);
  assert_true(st.nomem > 0);
}

/* ---- operations ------------------------------------------------------- */

struct text {
  char *text;
  size_t len;
  const char *src;
};

static struct text slurp(const char *rel)
{
  struct text t;
  t.text = tu_slurp(tu_path(rel), &t.len);
  if (!t.text)
    fail_msg("cannot read %s", rel);
  t.src = rel;
  return t;
}

static pp_status op_model_json(pp_ctx *ctx, const void *arg)
{
  const struct text *t = arg;
  pp_model *m = (pp_model *)&m; /* not NULL: the call must clear it */
  pp_status rc = pp_model_read_json(ctx, t->text, t->len, t->src, &m);
  if (rc != PP_OK) {
    assert_null(m);
    return rc;
  }
  assert_non_null(m);
  assert_true(pp_model_nop(m) > 0);
  pp_model_destroy(m);
  return rc;
}

static pp_status op_cluster_json(pp_ctx *ctx, const void *arg)
{
  const struct text *t = arg;
  pp_cluster *c = (pp_cluster *)&c;
  pp_status rc = pp_cluster_read_json(ctx, t->text, t->len, t->src, &c);
  if (rc != PP_OK) {
    assert_null(c);
    return rc;
  }
  assert_non_null(c);
  assert_true(pp_cluster_ndev(c) > 0);
  pp_cluster_destroy(c);
  return rc;
}

static pp_status op_pipedream(pp_ctx *ctx, const void *arg)
{
  const struct text *t = arg;
  pp_model *m = (pp_model *)&m;
  pp_status rc = pp_model_read_pipedream(ctx, t->text, t->len, t->src, &m);
  if (rc != PP_OK) {
    assert_null(m);
    return rc;
  }
  assert_true(pp_model_nop(m) > 0);
  pp_model_destroy(m);
  return rc;
}

static pp_status op_model_load(pp_ctx *ctx, const void *arg)
{
  pp_model *m = (pp_model *)&m;
  pp_status rc = pp_model_load(ctx, arg, &m);
  if (rc != PP_OK) {
    assert_null(m);
    return rc;
  }
  assert_true(pp_model_nop(m) > 0);
  pp_model_destroy(m);
  return rc;
}

static pp_status op_cluster_load(pp_ctx *ctx, const void *arg)
{
  pp_cluster *c = (pp_cluster *)&c;
  pp_status rc = pp_cluster_load(ctx, arg, &c);
  if (rc != PP_OK) {
    assert_null(c);
    return rc;
  }
  assert_true(pp_cluster_ndev(c) > 0);
  pp_cluster_destroy(c);
  return rc;
}

/* Read a DAG, then its chain views (both kinds) and its figures. */
static pp_status op_dag_views(pp_ctx *ctx, const void *arg)
{
  const struct text *t = arg;
  pp_model *m = NULL, *v = (pp_model *)&v;
  pp_model_stats s;
  pp_status rc = pp_model_read_json(ctx, t->text, t->len, t->src, &m);
  int every;
  if (rc != PP_OK) {
    assert_null(m);
    return rc;
  }
  for (every = 0; every < 2; every++) {
    v = (pp_model *)&v;
    rc = pp_model_chain_view(ctx, m, every, &v);
    if (rc != PP_OK) {
      assert_null(v);
      pp_model_destroy(m);
      return rc;
    }
    assert_int_equal(pp_model_is_chain(v), 1);
    memset(&s, 0, sizeof s);
    rc = pp_model_stats_get(ctx, v, &s);
    pp_model_destroy(v);
    if (rc != PP_OK) {
      pp_model_destroy(m);
      return rc;
    }
  }
  rc = pp_model_stats_get(ctx, m, &s);
  if (rc == PP_OK) {
    assert_int_equal(s.nop, pp_model_nop(m));
    assert_true(s.nlayer >= 1);
  }
  pp_model_destroy(m);
  return rc;
}

/* Describing already-loaded objects (text and JSON) to a file. */
struct describe_arg {
  const pp_model *m;
  const pp_cluster *c;
  FILE *f;
};

static pp_status op_describe(pp_ctx *ctx, const void *arg)
{
  const struct describe_arg *d = arg;
  pp_status rc = PP_OK;
  int json;
  for (json = 0; json < 2 && rc == PP_OK; json++) {
    rewind(d->f);
    if (d->m)
      rc = pp_model_describe(ctx, d->m, json, d->f);
    else
      rc = pp_cluster_describe(ctx, d->c, json, d->f);
  }
  if (rc == PP_OK)
    assert_true(ftell(d->f) > 0);
  return rc;
}

static pp_status op_write(pp_ctx *ctx, const void *arg)
{
  const struct describe_arg *d = arg;
  rewind(d->f);
  if (d->m)
    return pp_model_write(ctx, d->m, NULL, d->f);
  return pp_cluster_write(ctx, d->c, NULL, d->f);
}

static pp_status op_bw_classes(pp_ctx *ctx, const void *arg)
{
  const struct describe_arg *d = arg;
  pp_bw_class cl[8];
  int32_t n = 0;
  return pp_cluster_bw_classes(ctx, d->c, cl, 8, &n);
}

/* ---- tests ------------------------------------------------------------ */

static void test_model_chain_json(void **state)
{
  struct text t = slurp("examples/model-chain.json");
  (void)state;
  sweep_all("read_json model-chain.json", op_model_json, &t);
  free(t.text);
  t = slurp("examples/model-minimal.json");
  sweep_all("read_json model-minimal.json", op_model_json, &t);
  free(t.text);
}

static void test_model_dag(void **state)
{
  struct text t = slurp("examples/model-dag.json");
  (void)state;
  sweep_all("model-dag.json + chain views + stats", op_dag_views, &t);
  free(t.text);
  /* Through the file loader as well (its read buffer). */
  sweep_all("model_load model-dag.json", op_model_load,
            tu_path("examples/model-dag.json"));
}

static void test_cluster_json(void **state)
{
  struct text t = slurp("examples/cluster-links.json");
  (void)state;
  sweep_all("read_json cluster-links.json", op_cluster_json, &t);
  free(t.text);
  t = slurp("examples/cluster-matrix.json");
  sweep_all("read_json cluster-matrix.json", op_cluster_json, &t);
  free(t.text);
  t = slurp("examples/cluster-minimal.json");
  sweep_all("read_json cluster-minimal.json", op_cluster_json, &t);
  free(t.text);
  {
    char path[4096];
    snprintf(path, sizeof path, "%s", tu_path("examples/cluster-links.json"));
    sweep_all("cluster_load cluster-links.json", op_cluster_load, path);
  }
}

static void test_cluster_specs(void **state)
{
  (void)state;
  sweep_all("cluster_load hier:2x4", op_cluster_load, "hier:2x4");
  sweep_all("cluster_load random_blk_1:16", op_cluster_load, "random_blk_1:16");
  sweep_all("cluster_load amp-het-cluster", op_cluster_load, "amp-het-cluster");
  sweep_all("cluster_load mesh2d:3x3", op_cluster_load, "mesh2d:3x3");
}

/* Every built-in cluster and generator at its default sizes. */
static void test_all_generators(void **state)
{
  int i;
  char label[128];
  (void)state;
  for (i = 0; pp_cluster_generator_name(i); i++) {
    snprintf(label, sizeof label, "cluster_load %s",
             pp_cluster_generator_name(i));
    sweep_all(label, op_cluster_load, pp_cluster_generator_name(i));
  }
  sweep_all("cluster_load dgx1:2", op_cluster_load, "dgx1:2");
  sweep_all("cluster_load nvswitch:2,gpu=H100", op_cluster_load,
            "nvswitch:2,gpu=H100");
  sweep_all("cluster_load torus3d:2x2x3,routing=widest", op_cluster_load,
            "torus3d:2x2x3,routing=widest");
}

/* Every built-in model. */
static void test_all_builtin_models(void **state)
{
  int i;
  char label[128];
  (void)state;
  for (i = 0; pp_model_builtin_name(i); i++) {
    snprintf(label, sizeof label, "model_load %s", pp_model_builtin_name(i));
    sweep_all(label, op_model_load, pp_model_builtin_name(i));
  }
  sweep_all("model_load transformer:...,tie=1", op_model_load,
            "transformer:layers=3,hidden=64,heads=4,seq=32,vocab=100,tie=1");
}

static void test_model_specs(void **state)
{
  (void)state;
  sweep_all("model_load gpt2-amp", op_model_load, "gpt2-amp");
  sweep_all("model_load transformer:layers=2", op_model_load,
            "transformer:layers=2");
}

static void test_pipedream(void **state)
{
  struct text t = slurp("examples/pipedream-tiny.txt");
  (void)state;
  sweep_all("read_pipedream pipedream-tiny.txt", op_pipedream, &t);
  free(t.text);
  {
    char path[4096];
    snprintf(path, sizeof path, "%s",
             tu_path("data/pipedream/resnet18/graph.txt"));
    sweep_all("model_load resnet18/graph.txt", op_model_load, path);
  }
}

/* One of the importers on a text: 0 ONNX, 1 nvidia-smi, 2 NCCL XML. */
struct import_arg {
  struct text t;
  int kind; /* 0 ONNX, 1 nvidia-smi, 2 NCCL XML, 3 rocm-smi */
  const char *gpus;
};

static pp_status op_import(pp_ctx *ctx, const void *arg)
{
  const struct import_arg *a = arg;
  pp_model *m = (pp_model *)&m;
  pp_cluster *c = (pp_cluster *)&c;
  pp_status rc;
  pp_topo_params tp;
  pp_topo_params_init(&tp);
  tp.nodes = 2; /* the NICs' share and the notes are built too */
  if (a->kind == 0)
    rc = pp_model_read_onnx(ctx, a->t.text, a->t.len, a->t.src, NULL, &m);
  else if (a->kind == 1) {
    tp.gpus = a->gpus; /* read through the hook as well */
    tp.nic_gbits = 200;
    rc = pp_cluster_read_nvsmi(ctx, a->t.text, a->t.len, a->t.src, &tp, &c);
  } else if (a->kind == 2)
    rc = pp_cluster_read_nccl_xml(ctx, a->t.text, a->t.len, a->t.src, &tp, &c);
  else {
    tp.gpu = "A100-80";
    tp.nvlink_gbps = 36;
    rc = pp_cluster_read_rocm_smi(ctx, a->t.text, a->t.len, a->t.src, &tp, &c);
  }
  if (rc != PP_OK) {
    assert_true(a->kind == 0 ? m == NULL : c == NULL);
    return rc;
  }
  if (a->kind == 0) {
    assert_int_equal(pp_model_nop(m), 8);
    pp_model_destroy(m);
  } else {
    assert_int_equal(pp_cluster_ndev(c), 16);
    pp_cluster_destroy(c);
  }
  return rc;
}

/* The importers; expat and protobuf-c allocate through the hook too. */
static void test_imports(void **state)
{
  struct import_arg a;
  char gpus[600];
  size_t len;
  (void)state;
  a.t.text = (char *)ob_build(OB_OK, &len);
  a.t.len = len;
  a.t.src = "tiny.onnx";
  a.kind = 0;
  assert_non_null(a.t.text);
  sweep_all("read_onnx tiny.onnx", op_import, &a);
  free(a.t.text);
  a.t = slurp("tests/data/dumps/nvsmi-hgx-a100.txt");
  a.kind = 1;
  snprintf(gpus, sizeof gpus, "%s",
           tu_path("tests/data/dumps/nvsmi-query-a100.csv"));
  a.gpus = gpus;
  sweep_all("read_nvsmi nvsmi-hgx-a100.txt", op_import, &a);
  free(a.t.text);
  a.t = slurp("examples/nccl-topo-dgx-a100.xml");
  a.kind = 2;
  sweep_all("read_nccl_xml nccl-topo-dgx-a100.xml", op_import, &a);
  free(a.t.text);
  a.t = slurp("tests/data/dumps/rocm-smi-showtopo-mi250x.txt");
  a.kind = 3;
  sweep_all("read_rocm_smi rocm-smi-showtopo-mi250x.txt", op_import, &a);
  free(a.t.text);
}

/* Training logs: the reports' vectors and the median's array. */
static pp_status op_log(pp_ctx *ctx, const void *arg)
{
  const struct text *t = arg;
  pp_log_summary s;
  pp_status rc = pp_log_read(ctx, t->text, t->len, t->src, &s);
  if (rc != PP_OK) {
    assert_null(s.format);
    return rc;
  }
  assert_non_null(s.format);
  assert_true(s.iterations > 0);
  return rc;
}

static void test_logs(void **state)
{
  static const char *const logs[] = {"tests/data/logs/megatron-ranks.log",
                                     "tests/data/logs/deepspeed-zero.log"};
  size_t i;
  (void)state;
  for (i = 0; i < sizeof logs / sizeof logs[0]; i++) {
    struct text t = slurp(logs[i]);
    sweep_all(logs[i], op_log, &t);
    free(t.text);
  }
}

/* Calibration: RUNS.json read (its plan file, model and cluster loaded),
** the fit, the calibration written and read back. */
static pp_status op_calibrate(pp_ctx *ctx, const void *arg)
{
  const struct text *t = arg;
  pp_runs *r = (pp_runs *)&r;
  pp_calibration *c = (pp_calibration *)&c, *d = (pp_calibration *)&d;
  FILE *f;
  char buf[4096];
  size_t n;
  pp_status rc = pp_runs_read_json(ctx, t->text, t->len, t->src, &r);
  if (rc != PP_OK) {
    assert_null(r);
    return rc;
  }
  rc = pp_calibrate(ctx, pp_runs_records(r), pp_runs_count(r), NULL, &c);
  pp_runs_destroy(r);
  if (rc != PP_OK) {
    assert_null(c);
    return rc;
  }
  f = tmpfile();
  assert_non_null(f);
  if ((rc = pp_calibration_write(ctx, c, NULL, f)) == PP_OK) {
    rewind(f);
    n = fread(buf, 1, sizeof buf, f);
    rc = pp_calibration_read_json(ctx, buf, n, "calib.json", &d);
    if (rc == PP_OK)
      pp_calibration_destroy(d);
    else
      assert_null(d);
  }
  fclose(f);
  pp_calibration_destroy(c);
  return rc;
}

static void test_calibrate(void **state)
{
  struct text t;
  char text[8192];
  char mp[1024], cp[1024];
  (void)state;
  snprintf(mp, sizeof mp, "%s", tu_path("examples/model-minimal.json"));
  snprintf(cp, sizeof cp, "%s", tu_path("examples/cluster-minimal.json"));
  snprintf(text, sizeof text,
           "{\"runs\": [{\"plan\": \"plan-minimal.json\", \"model\": "
           "\"%s\", \"cluster\": \"%s\", \"iteration_ms\": 30, "
           "\"peak_memory_bytes\": 2000},\n {\"plan\": "
           "\"plan-minimal.json\", \"model\": \"%s\", \"cluster\": "
           "\"%s\", \"iteration_ms\": 33}]}",
           mp, cp, mp, cp);
  t.text = text;
  t.len = strlen(text);
  /* the plan path is relative to the RUNS.json: examples/ */
  t.src = tu_path("examples/runs.json");
  sweep_all("calibrate", op_calibrate, &t);
}

static void test_describe(void **state)
{
  pp_ctx *ctx;
  struct describe_arg d;
  pp_model *m = NULL, *dag = NULL;
  pp_cluster *c = NULL, *links = NULL;
  struct sweep_stats st;
  (void)state;
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  assert_int_equal(pp_model_load(ctx, "gpt2-amp", &m), PP_OK);
  assert_int_equal(pp_model_load(ctx, tu_path("examples/model-dag.json"), &dag),
                   PP_OK);
  assert_int_equal(pp_cluster_load(ctx, "amp-het-cluster", &c), PP_OK);
  assert_int_equal(
      pp_cluster_load(ctx, tu_path("examples/cluster-links.json"), &links),
      PP_OK);
  d.f = tmpfile();
  assert_non_null(d.f);

  /* Objects keep their creating context's allocator for their own
  ** memory; the operations take scratch memory from the ctx passed. */
  d.c = NULL;
  d.m = m;
  sweep("describe gpt2-amp", op_describe, &d, &st);
  sweep("write gpt2-amp", op_write, &d, &st);
  d.m = dag;
  sweep("describe model-dag.json", op_describe, &d, &st);
  d.m = NULL;
  d.c = c;
  sweep("describe amp-het-cluster", op_describe, &d, &st);
  sweep("bw_classes amp-het-cluster", op_bw_classes, &d, &st);
  d.c = links;
  sweep("describe cluster-links.json", op_describe, &d, &st);
  sweep("write cluster-links.json", op_write, &d, &st);

  fclose(d.f);
  pp_model_destroy(m);
  pp_model_destroy(dag);
  pp_cluster_destroy(c);
  pp_cluster_destroy(links);
  pp_ctx_destroy(ctx);
}

/* Evaluating and simulating an already-loaded plan: every output too. */
struct sim_arg {
  const pp_model *m;
  const pp_cluster *c;
  const pp_plan *p;
  FILE *f;
};

static pp_status op_simulate(pp_ctx *ctx, const void *arg)
{
  const struct sim_arg *a = arg;
  pp_cost_params cp;
  pp_status rc = PP_OK;
  int net;
  pp_eval *e = (pp_eval *)&e;

  pp_cost_params_init(&cp);
  rc = pp_evaluate(ctx, a->p, a->m, a->c, &cp, &e);
  if (rc != PP_OK) {
    assert_null(e);
    return rc;
  }
  rewind(a->f);
  rc = pp_eval_write(ctx, e, 1, a->f);
  pp_eval_destroy(e);
  for (net = 0; net < 2 && rc == PP_OK; net++) {
    pp_sim *s = (pp_sim *)&s;
    cp.network = net ? PP_NET_LINKS : PP_NET_CHANNELS;
    rc = pp_simulate(ctx, a->p, a->m, a->c, &cp, &s);
    if (rc != PP_OK) {
      assert_null(s);
      break;
    }
    rewind(a->f);
    if ((rc = pp_sim_write(ctx, s, 0, 60, a->f)) == PP_OK)
      rc = pp_sim_write_trace(ctx, s, NULL, a->f);
    if (rc == PP_OK && !net) {
      rewind(a->f);
      rc = pp_gantt_write(ctx, s, a->c, PP_IMAGE_SVG, NULL, a->f);
    }
    pp_sim_destroy(s);
  }
  if (rc == PP_OK) { /* the report, without the baselines' search */
    pp_report_params rp;
    pp_report_params_init(&rp);
    rp.baselines = 0;
    rewind(a->f);
    rc = pp_report_write(ctx, a->p, a->m, a->c, NULL, &rp, NULL, a->f);
  }
  return rc;
}

static void sim_case(const char *model, const char *cluster, const char *plan)
{
  pp_ctx *ctx;
  struct sim_arg a;
  pp_model *m;
  pp_cluster *c;
  pp_plan *p;
  char label[256];
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  assert_int_equal(pp_model_load(ctx, model, &m), PP_OK);
  assert_int_equal(pp_cluster_load(ctx, cluster, &c), PP_OK);
  assert_int_equal(pp_plan_load(ctx, tu_path(plan), m, c, &p), PP_OK);
  a.m = m;
  a.c = c;
  a.p = p;
  a.f = tmpfile();
  assert_non_null(a.f);
  snprintf(label, sizeof label, "simulate %s", plan);
  sweep_all(label, op_simulate, &a);
  fclose(a.f);
  pp_plan_destroy(p);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
  pp_ctx_destroy(ctx);
}

static void test_simulate(void **state)
{
  (void)state;
  char mp[4096], cp[4096];
  snprintf(mp, sizeof mp, "%s", tu_path("examples/model-dag.json"));
  snprintf(cp, sizeof cp, "%s", tu_path("examples/cluster-links.json"));
  sim_case(mp, cp, "examples/plan-dag-special.json");
  sim_case("gpt2-amp", "amp-het-cluster", "examples/plan-gpt2-amp.json");
}

/* Objects made under a failing allocator and destroyed after their
** context: they keep the hook, not the context. */
static void test_outlive_ctx(void **state)
{
  struct tu_alloc a;
  pp_ctx *ctx = tu_ctx(&a);
  pp_model *m = NULL;
  pp_cluster *c = NULL;
  (void)state;
  assert_int_equal(pp_model_load(ctx, "transformer:layers=2", &m), PP_OK);
  assert_int_equal(pp_cluster_load(ctx, "hier:2x2", &c), PP_OK);
  pp_ctx_destroy(ctx);
  assert_true(a.live > 0);
  assert_int_equal(pp_model_nop(m) > 0, 1);
  pp_model_destroy(m);
  pp_cluster_destroy(c);
  assert_int_equal(a.live, 0);
  assert_int_equal(a.bytes, 0);
}

/* ---- the context itself ----------------------------------------------- */

static long refusals;
static void *refuse_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
  (void)ud;
  (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  refusals++;
  return NULL;
}

static void test_ctx_create_nomem(void **state)
{
  pp_ctx_params p;
  pp_ctx *ctx = (pp_ctx *)&p;
  (void)state;
  pp_ctx_params_init(&p);
  p.alloc = refuse_alloc;
  refusals = 0;
  assert_int_equal(pp_ctx_create(&p, &ctx), PP_ENOMEM);
  assert_null(ctx);
  assert_int_equal(refusals, 1);
  /* The defaults still work, and a NULL out is misuse. */
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  assert_non_null(ctx);
  assert_int_equal(pp_ctx_seed(ctx), 1);
  pp_ctx_destroy(ctx);
  assert_int_equal(pp_ctx_create(NULL, NULL), PP_EINVAL);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ctx_create_nomem),
      cmocka_unit_test(test_model_chain_json),
      cmocka_unit_test(test_model_dag),
      cmocka_unit_test(test_cluster_json),
      cmocka_unit_test(test_cluster_specs),
      cmocka_unit_test(test_model_specs),
      cmocka_unit_test(test_all_generators),
      cmocka_unit_test(test_all_builtin_models),
      cmocka_unit_test(test_pipedream),
      cmocka_unit_test(test_imports),
      cmocka_unit_test(test_logs),
      cmocka_unit_test(test_calibrate),
      cmocka_unit_test(test_describe),
      cmocka_unit_test(test_outlive_ctx),
      cmocka_unit_test(test_simulate),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
