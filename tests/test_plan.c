/* SPDX-License-Identifier: MIT */
/*
** Plans: the builder, the checker, the Plan JSON reader and writer
** (docs/DESIGN.md, "Plan JSON"), and the evaluate and simulate commands.
**
** - the minimal plan of docs/DESIGN.md reads, checks and evaluates; write ->
**   read -> write gives identical bytes; names resolve only when a model
**   or cluster is given;
** - every bad input fails with its status and a message naming the file,
**   stage, replica, operator, device or field;
** - builder misuse fails cleanly and leaks nothing; every allocation of
**   read + check + evaluate fails in turn (PP_ENOMEM, never a crash);
** - a few thousand random mutations of valid plan texts never crash;
** - the command line: exit 0 / 1 / 3, --json figures, traces.
*/
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- fixtures --------------------------------------------------------- */

/* Five operators a..e: a chain plus a skip edge b -> d. */
static const char *model5 =
    "{\"name\": \"m5\", \"micro_batch\": 1, \"ops\": [\n"
    " {\"name\": \"a\", \"fwd_ms\": 1, \"bwd_ms\": 2, \"param_bytes\": 1000,"
    " \"out_bytes\": 100, \"saved_bytes\": 100},\n"
    " {\"name\": \"b\", \"fwd_ms\": 2, \"bwd_ms\": 4, \"param_bytes\": 2000,"
    " \"out_bytes\": 100, \"saved_bytes\": 200},\n"
    " {\"name\": \"c\", \"fwd_ms\": 1, \"bwd_ms\": 2, \"param_bytes\": 1000,"
    " \"out_bytes\": 100, \"saved_bytes\": 100},\n"
    " {\"name\": \"d\", \"fwd_ms\": 3, \"bwd_ms\": 6, \"param_bytes\": 3000,"
    " \"out_bytes\": 100, \"saved_bytes\": 300},\n"
    " {\"name\": \"e\", \"fwd_ms\": 1, \"bwd_ms\": 2, \"param_bytes\": 1000,"
    " \"out_bytes\": 100, \"saved_bytes\": 100}],\n"
    " \"edges\": [{\"from\": \"a\", \"to\": \"b\"}, {\"from\": \"b\", \"to\": "
    "\"c\"},\n"
    "           {\"from\": \"c\", \"to\": \"d\"}, {\"from\": \"d\", \"to\": "
    "\"e\"},\n"
    "           {\"from\": \"b\", \"to\": \"d\"}]}";

static pp_model *small_model(pp_ctx *ctx)
{
  pp_model *m = NULL;
  if (tu_model_json(ctx, model5, &m) != PP_OK)
    fail_msg("small model: %s", pp_ctx_errmsg(ctx));
  return m;
}

/* Eight devices g0..g7 on two nodes of four: 10 GB/s within a node, 1
** across. */
static pp_cluster *small_cluster(pp_ctx *ctx)
{
  char buf[4096];
  size_t off = 0;
  int i, j;
  pp_cluster *c = NULL;
  off += (size_t)snprintf(buf + off, sizeof buf - off,
                          "{\"name\": \"c8\", \"device_types\": {\"gpu\": "
                          "{\"memory_gb\": 16, \"speed\": 1}},\n"
                          " \"devices\": [");
  for (i = 0; i < 8; i++)
    off += (size_t)snprintf(buf + off, sizeof buf - off,
                            "%s{\"name\": \"g%d\", \"type\": \"gpu\", "
                            "\"node\": %d}",
                            i ? ", " : "", i, i / 4);
  off += (size_t)snprintf(buf + off, sizeof buf - off,
                          "],\n \"bandwidth_GBps\": [");
  for (i = 0; i < 8; i++) {
    off += (size_t)snprintf(buf + off, sizeof buf - off, "%s[", i ? ", " : "");
    for (j = 0; j < 8; j++)
      off +=
          (size_t)snprintf(buf + off, sizeof buf - off, "%s%d", j ? ", " : "",
                           i == j ? 0 : (i / 4 == j / 4 ? 10 : 1));
    off += (size_t)snprintf(buf + off, sizeof buf - off, "]");
  }
  snprintf(buf + off, sizeof buf - off, "]}");
  if (tu_cluster_json(ctx, buf, &c) != PP_OK)
    fail_msg("small cluster: %s", pp_ctx_errmsg(ctx));
  return c;
}

/* The plan of docs/DESIGN.md, "Plan JSON". */
static const char *design_plan =
    "{\"global_batch\": 16, \"micro_batch\": 1, \"micro_batches\": 8, \"tp\": "
    "1,\n"
    " \"schedule\": \"1f1b\", \"recompute\": false, \"optimizer\": "
    "\"adam-mixed\",\n"
    " \"stages\": [{\"ops\": [0, 1, 2], \"replicas\": [[3], [7]]},\n"
    "            {\"ops\": [3, 4],    \"replicas\": [[1], [5]]}]}";

/* What pp_plan_write makes of it. */
static const char *design_normalized =
    "{\"global_batch\": 16, \"micro_batch\": 1, \"micro_batches\": 8, \"tp\": "
    "1,\n"
    " \"schedule\": \"1f1b\", \"recompute\": false, \"optimizer\": "
    "\"adam-mixed\",\n"
    " \"stages\": [\n"
    "  {\"ops\": [0, 1, 2], \"replicas\": [[3], [7]]},\n"
    "  {\"ops\": [3, 4], \"replicas\": [[1], [5]]}]}\n";

/* Names and indices mixed; every optional field set. */
static const char *names_plan =
    "{\"global_batch\": 16, \"micro_batch\": 2, \"micro_batches\": 4, "
    "\"tp\": 1,\n"
    " \"schedule\": \"gpipe\", \"recompute\": true, \"optimizer\": \"adam\",\n"
    " \"stages\": [{\"ops\": [\"a\", 1], \"replicas\": [[\"g0\"], [4]]},\n"
    "            {\"ops\": [2, \"d\", \"e\"], \"replicas\": [[1], "
    "[\"g5\"]]}]}";

/* Tensor parallelism, replica counts that differ per stage, 1F1B*. */
static const char *tp_plan =
    "{\"global_batch\": 8, \"tp\": 2, \"schedule\": \"1f1b-star\", "
    "\"optimizer\": \"2bw\", \"period_ms\": 12.5,\n"
    " \"stages\": [{\"ops\": [0, 1, 2], \"replicas\": [[0, 1], [4, 5]]},\n"
    "            {\"ops\": [3, 4], \"replicas\": [[2, 3]]}]}";

static pp_status rd(pp_ctx *ctx, const char *text, const pp_model *m,
                    const pp_cluster *c, pp_plan **out)
{
  return pp_plan_read_json(ctx, text, strlen(text), "test.json", m, c, out);
}

/* printf into a static buffer (one document at a time). */
#if defined(__GNUC__)
static const char *doc(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
#endif
static const char *doc(const char *fmt, ...)
{
  static char buf[16384];
  va_list ap;
  int n;
  va_start(ap, fmt);
  n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  assert_true(n > 0 && (size_t)n < sizeof buf);
  return buf;
}

/* A document with the usual head and the given stages. */
#define PLAN(head, stages)                                                     \
  doc("{\"global_batch\": 16, \"micro_batch\": 1, %s \"stages\": [%s]}", head, \
      stages)

/* The message must contain every string of the NULL-terminated list. */
static void vexpect(pp_ctx *ctx, pp_status got, pp_status rc, va_list ap)
{
  const char *s, *msg = pp_ctx_errmsg(ctx);
  if (got != rc)
    fail_msg("expected status %d (%s), got %d; message: %s", rc,
             pp_status_str(rc), got, msg);
  if (pp_ctx_errcode(ctx) != rc)
    fail_msg("context holds status %d, expected %d: %s", pp_ctx_errcode(ctx),
             rc, msg);
  while ((s = va_arg(ap, const char *)) != NULL)
    if (!strstr(msg, s))
      fail_msg("message lacks \"%s\": %s", s, msg);
  pp_ctx_clear_error(ctx);
}

/* Read text (with m and c for names, either may be NULL); when it reads,
** check it against cm and cc; the first failure must be rc with every
** string given in its message. */
static void bad_plan(pp_ctx *ctx, const pp_model *m, const pp_cluster *c,
                     const pp_model *cm, const pp_cluster *cc, const char *text,
                     pp_status rc, ...)
{
  pp_plan *p = (pp_plan *)&p;
  pp_status got;
  va_list ap;
  pp_ctx_clear_error(ctx);
  got = rd(ctx, text, m, c, &p);
  if (got == PP_OK) {
    assert_non_null(p);
    if (!cm || !cc)
      fail_msg("read, though an error was expected:\n%s", text);
    got = pp_plan_check(ctx, p, cm, cc);
    if (got != PP_OK) {
      /* pp_evaluate checks too and agrees. */
      pp_cost_params cp;
      pp_eval *e = (pp_eval *)&e;
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", pp_ctx_errmsg(ctx));
      pp_ctx_clear_error(ctx);
      pp_cost_params_init(&cp);
      assert_int_equal(pp_evaluate(ctx, p, cm, cc, &cp, &e), got);
      assert_null(e);
      assert_string_equal(pp_ctx_errmsg(ctx), msg);
    }
    pp_plan_destroy(p);
  } else {
    assert_null(p);
  }
  va_start(ap, rc);
  vexpect(ctx, got, rc, ap);
  va_end(ap);
}

/* Read errors need no model or cluster. */
#define BAD_READ(text, rc, ...)                                                \
  bad_plan(ctx, NULL, NULL, NULL, NULL, text, rc, __VA_ARGS__, NULL)
/* Errors with the model and cluster given for names and checking. */
#define BAD(text, rc, ...)                                                     \
  bad_plan(ctx, m, c, m, c, text, rc, __VA_ARGS__, NULL)
/* Read by indices only, then checked. */
#define BAD_CHECK(text, rc, ...)                                               \
  bad_plan(ctx, NULL, NULL, m, c, text, rc, __VA_ARGS__, NULL)

static void ok_plan(pp_ctx *ctx, const pp_model *m, const pp_cluster *c,
                    const char *text)
{
  pp_plan *p = NULL;
  pp_eval *e = NULL;
  pp_cost_params cp;
  if (rd(ctx, text, m, c, &p) != PP_OK)
    fail_msg("does not read: %s\n%s", pp_ctx_errmsg(ctx), text);
  if (pp_plan_check(ctx, p, m, c) != PP_OK)
    fail_msg("does not check: %s\n%s", pp_ctx_errmsg(ctx), text);
  pp_cost_params_init(&cp);
  if (pp_evaluate(ctx, p, m, c, &cp, &e) != PP_OK)
    fail_msg("does not evaluate: %s\n%s", pp_ctx_errmsg(ctx), text);
  pp_eval_destroy(e);
  pp_plan_destroy(p);
}

/* The normalized text of a plan. */
static char *plan_text(pp_ctx *ctx, const pp_plan *p, size_t *len)
{
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  assert_non_null(f);
  assert_int_equal(pp_plan_write(ctx, p, NULL, f), PP_OK);
  assert_int_equal(fclose(f), 0);
  if (len)
    *len = n;
  return buf;
}

/* ---- the minimal plan ------------------------------------------------- */

static void t_design_minimal(void **state)
{
  struct tu_fix *fx = *state;
  pp_ctx *ctx = fx->ctx;
  pp_model *m = small_model(ctx);
  pp_cluster *c = small_cluster(ctx);
  pp_plan *p = NULL;
  pp_plan_params pa;
  pp_eval *e = NULL;
  pp_eval_summary sum;
  pp_device_memory dm;
  pp_cost_params cp;
  const int32_t *ops, *r;
  int32_t n, d;

  assert_int_equal(pp_plan_read_json(ctx, design_plan, strlen(design_plan),
                                     "design.json", NULL, NULL, &p),
                   PP_OK);
  assert_string_equal(pp_plan_source(p), "design.json");
  pp_plan_get_params(p, &pa);
  assert_int_equal(pa.global_batch, 16);
  assert_int_equal(pa.micro_batch, 1);
  assert_int_equal(pa.micro_batches, 8);
  assert_int_equal(pa.tp, 1);
  assert_int_equal(pa.schedule, PP_SCHED_1F1B);
  assert_int_equal(pa.recompute, 0);
  assert_int_equal(pa.optimizer, PP_OPT_ADAM_MIXED);
  assert_true(pa.period_ms == 0);
  assert_int_equal(pp_plan_nstage(p), 2);
  ops = pp_plan_stage_ops(p, 0, &n);
  assert_int_equal(n, 3);
  assert_int_equal(ops[0], 0);
  assert_int_equal(ops[2], 2);
  ops = pp_plan_stage_ops(p, 1, &n);
  assert_int_equal(n, 2);
  assert_int_equal(ops[0], 3);
  assert_int_equal(ops[1], 4);
  assert_int_equal(pp_plan_nreplica(p, 0), 2);
  assert_int_equal(pp_plan_nreplica(p, 1), 2);
  r = pp_plan_replica(p, 0, 1);
  assert_int_equal(r[0], 7);
  r = pp_plan_replica(p, 1, 0);
  assert_int_equal(r[0], 1);
  assert_int_equal(pp_plan_stage_micro_batches(p, 0), 8);
  assert_int_equal(pp_plan_stage_micro_batches(p, 1), 8);

  /* It checks and evaluates against a five-operator model on eight
  ** devices; devices 0, 2, 4 and 6 stay unused. */
  assert_int_equal(pp_plan_check(ctx, p, m, c), PP_OK);
  pp_cost_params_init(&cp);
  assert_int_equal(pp_evaluate(ctx, p, m, c, &cp, &e), PP_OK);
  assert_int_equal(pp_eval_get_summary(e, &sum), PP_OK);
  assert_true(isfinite(sum.iteration_ms) && sum.iteration_ms > 0);
  assert_true(sum.lower_bound_ms > 0);
  assert_true(sum.lower_bound_ms <= sum.iteration_ms * (1 + 1e-9));
  assert_true(sum.fits);
  for (d = 0; d < 8; d++) {
    assert_int_equal(pp_eval_device(e, d, &dm), PP_OK);
    assert_int_equal(dm.used, d % 2);
    if (dm.used)
      assert_true(dm.total_bytes > 0 && dm.total_bytes <= dm.capacity_bytes);
  }
  pp_eval_destroy(e);
  pp_plan_destroy(p);

  /* Against gpt2-amp on amp-het-cluster it reads (indices are in range)
  ** but the check finds GPT-2's other 25 operators unplaced. */
  {
    pp_model *g = NULL;
    pp_cluster *h = NULL;
    assert_int_equal(pp_model_load(ctx, "gpt2-amp", &g), PP_OK);
    assert_int_equal(pp_cluster_load(ctx, "amp-het-cluster", &h), PP_OK);
    assert_int_equal(rd(ctx, design_plan, g, h, &p), PP_OK);
    tu_expect_error(ctx, pp_plan_check(ctx, p, g, h), PP_EINPUT, "test.json",
                    "operator 'layer4' (index 5) is in no stage", NULL);
    pp_plan_destroy(p);
    /* The example plan of the same pair reads by names' indices. */
    assert_int_equal(
        pp_plan_load(ctx, tu_path("examples/plan-gpt2-amp.json"), g, h, &p),
        PP_OK);
    assert_int_equal(pp_plan_check(ctx, p, g, h), PP_OK);
    assert_int_equal(pp_plan_nstage(p), 4);
    pp_plan_destroy(p);
    pp_cluster_destroy(h);
    pp_model_destroy(g);
  }
  pp_cluster_destroy(c);
  pp_model_destroy(m);
  assert_int_equal(fx->a.live, 1); /* the context itself */
}

/* write -> read -> write gives the same bytes, to a path and to a FILE. */
static void roundtrip(pp_ctx *ctx, const pp_plan *p, const char *expect)
{
  char p1[600], p2[600];
  pp_plan *q = NULL;
  char *t1, *t2, *t3, *t4;
  size_t l1, l2, l3, l4;
  snprintf(p1, sizeof p1, "%s", tu_tmp("plan1.json"));
  snprintf(p2, sizeof p2, "%s", tu_tmp("plan2.json"));
  assert_int_equal(pp_plan_write(ctx, p, p1, NULL), PP_OK);
  assert_int_equal(pp_plan_load(ctx, p1, NULL, NULL, &q), PP_OK);
  assert_int_equal(pp_plan_write(ctx, q, p2, NULL), PP_OK);
  t1 = tu_slurp(p1, &l1);
  t2 = tu_slurp(p2, &l2);
  t3 = plan_text(ctx, p, &l3);
  t4 = plan_text(ctx, q, &l4);
  assert_non_null(t1);
  assert_non_null(t2);
  assert_int_equal(l1, l2);
  assert_memory_equal(t1, t2, l1);
  assert_int_equal(l1, l3);
  assert_memory_equal(t1, t3, l1);
  assert_int_equal(l1, l4);
  assert_memory_equal(t1, t4, l1);
  if (expect)
    assert_string_equal(t1, expect);
  /* The reloaded plan answers the same. */
  {
    pp_plan_params a, b;
    int32_t s, r, k, n1, n2;
    pp_plan_get_params(p, &a);
    pp_plan_get_params(q, &b);
    assert_int_equal(a.global_batch, b.global_batch);
    assert_int_equal(a.micro_batch, b.micro_batch);
    assert_int_equal(a.tp, b.tp);
    assert_int_equal(a.schedule, b.schedule);
    assert_int_equal(a.optimizer, b.optimizer);
    assert_int_equal(a.recompute, b.recompute);
    assert_true(a.period_ms == b.period_ms);
    assert_int_equal(pp_plan_nstage(p), pp_plan_nstage(q));
    for (s = 0; s < pp_plan_nstage(p); s++) {
      const int32_t *o1 = pp_plan_stage_ops(p, s, &n1);
      const int32_t *o2 = pp_plan_stage_ops(q, s, &n2);
      assert_int_equal(n1, n2);
      assert_memory_equal(o1, o2, (size_t)n1 * sizeof *o1);
      assert_int_equal(pp_plan_nreplica(p, s), pp_plan_nreplica(q, s));
      assert_int_equal(pp_plan_stage_micro_batches(p, s),
                       pp_plan_stage_micro_batches(q, s));
      for (r = 0; r < pp_plan_nreplica(p, s); r++)
        for (k = 0; k < a.tp; k++)
          assert_int_equal(pp_plan_replica(p, s, r)[k],
                           pp_plan_replica(q, s, r)[k]);
    }
  }
  free(t1);
  free(t2);
  free(t3);
  free(t4);
  pp_plan_destroy(q);
}

static void t_roundtrip(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = small_model(ctx);
  pp_cluster *c = small_cluster(ctx);
  pp_plan *p = NULL;

  assert_int_equal(rd(ctx, design_plan, NULL, NULL, &p), PP_OK);
  roundtrip(ctx, p, design_normalized);
  pp_plan_destroy(p);

  assert_int_equal(rd(ctx, names_plan, m, c, &p), PP_OK);
  roundtrip(ctx, p,
            "{\"global_batch\": 16, \"micro_batch\": 2, \"micro_batches\": 4, "
            "\"tp\": 1,\n"
            " \"schedule\": \"gpipe\", \"recompute\": true, \"optimizer\": "
            "\"adam\",\n"
            " \"stages\": [\n"
            "  {\"ops\": [0, 1], \"replicas\": [[0], [4]]},\n"
            "  {\"ops\": [2, 3, 4], \"replicas\": [[1], [5]]}]}\n");
  pp_plan_destroy(p);

  /* Replica counts differ: micro_batches is left out. */
  assert_int_equal(rd(ctx, tp_plan, NULL, NULL, &p), PP_OK);
  assert_int_equal(pp_plan_stage_micro_batches(p, 0), 4);
  assert_int_equal(pp_plan_stage_micro_batches(p, 1), 8);
  roundtrip(ctx, p,
            "{\"global_batch\": 8, \"micro_batch\": 1, \"tp\": 2,\n"
            " \"schedule\": \"1f1b-star\", \"recompute\": false, "
            "\"optimizer\": \"2bw\", \"period_ms\": 12.5,\n"
            " \"stages\": [\n"
            "  {\"ops\": [0, 1, 2], \"replicas\": [[0, 1], [4, 5]]},\n"
            "  {\"ops\": [3, 4], \"replicas\": [[2, 3]]}]}\n");
  assert_int_equal(pp_plan_check(ctx, p, m, c), PP_OK);
  pp_plan_destroy(p);

  /* What `plan` adds, and fields nobody knows, are ignored. */
  assert_int_equal(
      rd(ctx,
         "{\"global_batch\": 16, \"stages\": [{\"ops\": [0, 1, 2, 3, 4], "
         "\"replicas\": [[0]], \"note\": \"x\"}],\n"
         " \"predicted\": {\"iteration_ms\": 12.5, \"lower_bound_ms\": 10},"
         " \"future\": [1, {\"a\": null}]}",
         m, c, &p),
      PP_OK);
  roundtrip(ctx, p, NULL);
  pp_plan_destroy(p);

  /* With tp 1, a replica may be a bare device. */
  assert_int_equal(rd(ctx,
                      "{\"global_batch\": 4, \"stages\": [{\"ops\": [0, 1, "
                      "2, 3, 4], \"replicas\": [\"g2\", 6]}]}",
                      m, c, &p),
                   PP_OK);
  assert_int_equal(pp_plan_replica(p, 0, 0)[0], 2);
  assert_int_equal(pp_plan_replica(p, 0, 1)[0], 6);
  pp_plan_destroy(p);

  /* Every schedule and optimizer name reads back as itself. */
  {
    int s, o;
    for (s = 0; s < 3; s++)
      for (o = 0; o < 4; o++) {
        pp_plan_params pa;
        assert_int_equal(
            rd(ctx,
               doc("{\"global_batch\": 2, \"schedule\": \"%s\", "
                   "\"optimizer\": \"%s\", \"stages\": [{\"ops\": [0, 1, 2, "
                   "3, 4], \"replicas\": [[7]]}]}",
                   pp_schedule_name((pp_schedule)s),
                   pp_optimizer_name((pp_optimizer)o)),
               NULL, NULL, &p),
            PP_OK);
        pp_plan_get_params(p, &pa);
        assert_int_equal(pa.schedule, s);
        assert_int_equal(pa.optimizer, o);
        roundtrip(ctx, p, NULL);
        pp_plan_destroy(p);
      }
  }

  /* The examples, with the model and cluster they name. */
  {
    static const struct {
      const char *plan, *model, *cluster;
    } ex[] = {
        {"examples/plan-minimal.json", "examples/model-minimal.json",
         "examples/cluster-minimal.json"},
        {"examples/plan-dag-special.json", "examples/model-dag.json",
         "amp-het-cluster"},
        {"examples/plan-gpt2-amp.json", "gpt2-amp", "amp-het-cluster"},
    };
    size_t i;
    for (i = 0; i < sizeof ex / sizeof ex[0]; i++) {
      pp_model *em = NULL;
      pp_cluster *ec = NULL;
      char mp[4096];
      snprintf(mp, sizeof mp, "%s",
               ex[i].model[0] == 'e' ? tu_path(ex[i].model) : ex[i].model);
      assert_int_equal(pp_model_load(ctx, mp, &em), PP_OK);
      snprintf(mp, sizeof mp, "%s",
               ex[i].cluster[0] == 'e' ? tu_path(ex[i].cluster)
                                       : ex[i].cluster);
      assert_int_equal(pp_cluster_load(ctx, mp, &ec), PP_OK);
      if (pp_plan_load(ctx, tu_path(ex[i].plan), em, ec, &p) != PP_OK)
        fail_msg("%s: %s", ex[i].plan, pp_ctx_errmsg(ctx));
      assert_int_equal(pp_plan_check(ctx, p, em, ec), PP_OK);
      roundtrip(ctx, p, NULL);
      pp_plan_destroy(p);
      pp_cluster_destroy(ec);
      pp_model_destroy(em);
    }
  }
  pp_cluster_destroy(c);
  pp_model_destroy(m);
}

/* Names resolve with a model and a cluster, and only then. */
static void t_names(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = small_model(ctx);
  pp_cluster *c = small_cluster(ctx);
  pp_cluster *links = NULL;
  pp_plan *p = NULL;

  assert_int_equal(rd(ctx, names_plan, m, c, &p), PP_OK);
  assert_int_equal(pp_plan_replica(p, 0, 0)[0], 0);
  assert_int_equal(pp_plan_replica(p, 1, 1)[0], 5);
  assert_int_equal(pp_plan_stage_ops(p, 1, NULL)[1], 3);
  assert_int_equal(pp_plan_check(ctx, p, m, c), PP_OK);
  pp_plan_destroy(p);

  /* Without a model, an operator name cannot be resolved. */
  bad_plan(ctx, NULL, c, m, c, names_plan, PP_EINPUT, "test.json: stage 0",
           "operator 'a' is a name, but no model was given", "use an index",
           NULL);
  /* Without a cluster, a device name cannot. */
  bad_plan(ctx, m, NULL, m, c, names_plan, PP_EINPUT,
           "test.json: stage 0, replica 0",
           "device 'g0' is a name, but no cluster was given", NULL);
  /* Unknown names. */
  BAD(PLAN("", "{\"ops\": [\"a\", \"b\", \"zz\"], \"replicas\": [[0]]}"),
      PP_EINPUT,
      "test.json: stage 0: operator 'zz' does not exist in model "
      "'m5'",
      NULL);
  BAD(PLAN("", "{\"ops\": [0, 1, 2, 3, 4], \"replicas\": [[0], [\"g9\"]]}"),
      PP_EINPUT,
      "stage 0, replica 1: device 'g9' does not exist in cluster 'c8'", NULL);
  /* Names are case-sensitive. */
  BAD(PLAN("", "{\"ops\": [\"A\", 1, 2, 3, 4], \"replicas\": [[0]]}"),
      PP_EINPUT, "operator 'A' does not exist", NULL);
  /* A switch is not a device. */
  assert_int_equal(
      pp_cluster_load(ctx, tu_path("examples/cluster-links.json"), &links),
      PP_OK);
  bad_plan(ctx, m, links, m, links,
           PLAN("", "{\"ops\": [0, 1, 2, 3, 4], \"replicas\": [[\"leaf\"]]}"),
           PP_EINPUT, "device 'leaf' does not exist", NULL);
  assert_int_equal(
      rd(ctx,
         PLAN("", "{\"ops\": [0, 1, 2, 3, 4], \"replicas\": [[\"n1g3\"]]}"), m,
         links, &p),
      PP_OK);
  assert_int_equal(pp_plan_replica(p, 0, 0)[0], 7);
  pp_plan_destroy(p);
  pp_cluster_destroy(links);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
}

/* ---- bad input -------------------------------------------------------- */

static void t_malformed(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_plan *p = NULL;
  const char *file;
  long line, col;
  BAD_READ("", PP_EPARSE, "test.json:1", "malformed JSON");
  BAD_READ("  \n\n ", PP_EPARSE, "test.json:", "malformed JSON");
  BAD_READ("{\"global_batch\": 16,\n \"stages\": [\n  {\"ops\": [0,", PP_EPARSE,
           "test.json:3:", "malformed JSON");
  /* The position is available to a caller too. */
  assert_int_equal(
      rd(ctx, "{\"global_batch\": 16,\n \"stages\": [}", NULL, NULL, &p),
      PP_EPARSE);
  assert_null(p);
  pp_ctx_errloc(ctx, &file, &line, &col);
  assert_string_equal(file, "test.json");
  assert_int_equal(line, 2);
  assert_true(col > 0);
  pp_ctx_clear_error(ctx);
  BAD_READ("{\"global_batch\": NaN, \"stages\": []}", PP_EPARSE,
           "test.json:1:", "NaN");
  BAD_READ("{\"global_batch\": Infinity, \"stages\": []}", PP_EPARSE,
           "test.json:1:");
  BAD_READ("{\"global_batch\": 1e400, \"stages\": []}", PP_EPARSE, "overflow");
  BAD_READ("{\"global_batch\": 123456789012345678901234, \"stages\": []}",
           PP_EPARSE, "too big integer");
  BAD_READ("[{\"global_batch\": 16}]", PP_EPARSE,
           "must be a JSON object, not an array");
  BAD_READ("\"plan\"", PP_EPARSE, "test.json:1:", "'[' or '{' expected");
  BAD_READ("16", PP_EPARSE, "test.json:1:", "malformed JSON");
  BAD_READ("{\"global_batch\": 16, \"global_batch\": 8, \"stages\": []}",
           PP_EPARSE, "duplicate");
  BAD_READ("{\"global_batch\": 16, \"stages\": []} {}", PP_EPARSE,
           "test.json:1:");
  BAD_READ("{\"global_batch\": 16, \"stages\": [], }", PP_EPARSE,
           "test.json:1:");
  BAD_READ("{'global_batch': 16}", PP_EPARSE, "test.json:1:");
  /* With an older error still in the context, the status is this call's
  ** and the older message is kept. */
  {
    pp_plan *q = (pp_plan *)&q;
    assert_int_equal(pp_plan_check(ctx, NULL, NULL, NULL), PP_EINVAL);
    assert_int_equal(rd(ctx, "{", NULL, NULL, &q), PP_EPARSE);
    assert_null(q);
    assert_int_equal(rd(ctx, "{}", NULL, NULL, &q), PP_EINPUT);
    assert_int_equal(rd(ctx,
                        PLAN("", "{\"ops\": [0], \"replicas\": [[0], "
                                 "[0]]}"),
                        NULL, NULL, &q),
                     PP_EINPUT);
    assert_null(q);
    assert_int_equal(pp_ctx_errcode(ctx), PP_EINVAL);
    pp_ctx_clear_error(ctx);
  }
  {
    /* A NUL inside the text. */
    static const char nul[] = "{\"global_batch\": 16,\0 \"stages\": []}";
    assert_int_equal(pp_plan_read_json(ctx, nul, sizeof nul - 1, "test.json",
                                       NULL, NULL, &p),
                     PP_EPARSE);
    assert_null(p);
    pp_ctx_clear_error(ctx);
  }
  {
    /* Deep nesting stops at jansson's depth limit. */
    size_t n = 100000, i;
    char *deep = malloc(n + 64);
    assert_non_null(deep);
    strcpy(deep, "{\"global_batch\": 1, \"stages\": ");
    for (i = strlen(deep); i < n; i++)
      deep[i] = '[';
    deep[n] = '\0';
    BAD_READ(deep, PP_EPARSE, "test.json:1:");
    free(deep);
  }
  /* A file that does not exist, and one that is empty. */
  tu_expect_error(ctx,
                  pp_plan_load(ctx, "/nonexistent/plan.json", NULL, NULL, &p),
                  PP_EIO, "/nonexistent/plan.json", NULL);
  assert_null(p);
  {
    char path[600];
    FILE *f;
    snprintf(path, sizeof path, "%s", tu_tmp("empty.json"));
    f = fopen(path, "wb");
    assert_non_null(f);
    fclose(f);
    tu_expect_error(ctx, pp_plan_load(ctx, path, NULL, NULL, &p), PP_EPARSE,
                    "empty.json:1", "malformed JSON", NULL);
    assert_null(p);
  }
}

static void t_missing_and_types(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  BAD_READ("{}", PP_EINPUT, "test.json: plan: missing field \"global_batch\"");
  BAD_READ("{\"stages\": [{\"ops\": [0], \"replicas\": [[0]]}]}", PP_EINPUT,
           "missing field \"global_batch\"");
  BAD_READ("{\"global_batch\": null, \"stages\": []}", PP_EINPUT,
           "missing field \"global_batch\"");
  BAD_READ("{\"global_batch\": 16}", PP_EINPUT,
           "plan: missing field \"stages\"");
  BAD_READ("{\"global_batch\": 16, \"stages\": {}}", PP_EINPUT,
           "\"stages\" must be an array, not an object");
  BAD_READ(PLAN("", "{\"replicas\": [[0]]}"), PP_EINPUT,
           "test.json: stage 0: missing field \"ops\"");
  BAD_READ(PLAN("", "{\"ops\": [0]}, {\"ops\": [1]}"), PP_EINPUT,
           "stage 0: missing field \"replicas\"");
  BAD_READ(PLAN("", "{\"ops\": [0], \"replicas\": [[0]]}, {\"ops\": [1]}"),
           PP_EINPUT, "stage 1: missing field \"replicas\"");
  BAD_READ(PLAN("", "{\"ops\": [0], \"replicas\": [[0]]}, 7"), PP_EINPUT,
           "stage 1 must be an object, not an integer");
  BAD_READ(PLAN("", "[0]"), PP_EINPUT,
           "stage 0 must be an object, not an array");
  BAD_READ(PLAN("", "{\"ops\": 0, \"replicas\": [[0]]}"), PP_EINPUT,
           "stage 0: \"ops\" must be an array, not an integer");
  BAD_READ(PLAN("", "{\"ops\": [0], \"replicas\": \"g0\"}"), PP_EINPUT,
           "stage 0: \"replicas\" must be an array, not a string");
  BAD_READ(PLAN("", "{\"ops\": [0, null], \"replicas\": [[0]]}"), PP_EINPUT,
           "stage 0: an operator must be an index or a name, not null");
  BAD_READ(PLAN("", "{\"ops\": [0, 1.0], \"replicas\": [[0]]}"), PP_EINPUT,
           "operator must be an index or a name, not a number");
  BAD_READ(PLAN("", "{\"ops\": [[0]], \"replicas\": [[0]]}"), PP_EINPUT,
           "operator must be an index or a name, not an array");
  BAD_READ(PLAN("", "{\"ops\": [0], \"replicas\": [[true]]}"), PP_EINPUT,
           "stage 0, replica 0: a device must be an index or a name, not a "
           "boolean");
  BAD_READ(PLAN("", "{\"ops\": [0], \"replicas\": [{}]}"), PP_EINPUT,
           "stage 0, replica 0: a device must be an index or a name, not an "
           "object");
  BAD_READ(PLAN("", "{\"ops\": [0], \"replicas\": [[0.5]]}"), PP_EINPUT,
           "device must be an index or a name, not a number");
}

/* global_batch, micro_batch, micro_batches, tp: each bad value. */
static void t_numbers(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  static const char *fields[] = {"global_batch", "micro_batch", "micro_batches",
                                 "tp"};
  static const struct {
    const char *value;
    pp_status rc;
    const char *msg;
  } bad[] = {
      {"-1", PP_EINPUT, "must be at least 1, not -1"},
      {"0", PP_EINPUT, "must be at least 1, not 0"},
      {"-9223372036854775808", PP_EINPUT, "must be at least 1"},
      {"1.5", PP_EINPUT, "must be an integer, not 1.5"},
      {"-0.5", PP_EINPUT, "must be an integer, not -0.5"},
      {"-2.0", PP_EINPUT, "must be at least 1, not -2"},
      {"\"16\"", PP_EINPUT, "must be an integer, not a string"},
      {"true", PP_EINPUT, "must be an integer, not a boolean"},
      {"[16]", PP_EINPUT, "must be an integer, not an array"},
      {"{}", PP_EINPUT, "must be an integer, not an object"},
      {"9223372036854775807", PP_ELIMIT, "must be at most"},
      {"1e30", PP_ELIMIT, "must be at most"},
      {"1.7976931348623157e308", PP_ELIMIT, "must be at most"},
      {"1e400", PP_EPARSE, "overflow"},
      {"99999999999999999999", PP_EPARSE, "too big integer"},
      {"NaN", PP_EPARSE, "test.json:1:"},
      {"-Infinity", PP_EPARSE, "test.json:1:"},
  };
  size_t f, i;
  for (f = 0; f < sizeof fields / sizeof fields[0]; f++)
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
      char name[64];
      const char *text;
      snprintf(name, sizeof name, "\"%s\"", fields[f]);
      if (f == 0)
        text = doc("{\"global_batch\": %s, \"stages\": [{\"ops\": [0], "
                   "\"replicas\": [[0]]}]}",
                   bad[i].value);
      else
        text = doc("{\"global_batch\": 16, \"%s\": %s, \"stages\": "
                   "[{\"ops\": [0], \"replicas\": [[0]]}]}",
                   fields[f], bad[i].value);
      if (bad[i].rc == PP_EPARSE)
        BAD_READ(text, bad[i].rc, bad[i].msg);
      else
        BAD_READ(text, bad[i].rc, "test.json: plan: ", name, bad[i].msg);
    }
  /* The limits themselves. */
  BAD_READ("{\"global_batch\": 1099511627777, \"stages\": []}", PP_ELIMIT,
           "\"global_batch\" must be at most 1099511627776");
  BAD_READ("{\"global_batch\": 16, \"micro_batch\": 1073741825, \"stages\": "
           "[]}",
           PP_ELIMIT, "\"micro_batch\" must be at most 1073741824");
  BAD_READ("{\"global_batch\": 16, \"tp\": 16385, \"stages\": []}", PP_ELIMIT,
           "\"tp\" must be at most 16384");
  /* period_ms: a number >= 0. */
  BAD_READ(PLAN("\"period_ms\": -1,", "{\"ops\": [0], \"replicas\": [[0]]}"),
           PP_EINPUT, "plan: \"period_ms\" is negative");
  BAD_READ(PLAN("\"period_ms\": 1e16,", "{\"ops\": [0], \"replicas\": [[0]]}"),
           PP_ELIMIT, "\"period_ms\" must be at most");
  BAD_READ(PLAN("\"period_ms\": \"5\",", "{\"ops\": [0], \"replicas\": [[0]]}"),
           PP_EINPUT, "\"period_ms\" must be a number, not a string");
  /* Integral reals are integers; null is absent. */
  {
    pp_plan *p = NULL;
    pp_plan_params pa;
    assert_int_equal(rd(ctx,
                        "{\"global_batch\": 16.0, \"micro_batch\": 2e0, "
                        "\"tp\": null, \"micro_batches\": null, "
                        "\"schedule\": null, \"optimizer\": null, "
                        "\"recompute\": null, \"period_ms\": 0, "
                        "\"stages\": [{\"ops\": [0], \"replicas\": [[0]]}]}",
                        NULL, NULL, &p),
                     PP_OK);
    pp_plan_get_params(p, &pa);
    assert_int_equal(pa.global_batch, 16);
    assert_int_equal(pa.micro_batch, 2);
    assert_int_equal(pa.tp, 1);
    assert_int_equal(pa.micro_batches, 0);
    assert_int_equal(pa.schedule, PP_SCHED_1F1B);
    assert_int_equal(pa.optimizer, PP_OPT_ADAM_MIXED);
    assert_int_equal(pa.recompute, 0);
    assert_int_equal(pp_plan_stage_micro_batches(p, 0), 8);
    pp_plan_destroy(p);
  }
  /* The largest values read, and evaluate without overflow. */
  {
    pp_model *m = small_model(ctx);
    pp_cluster *c = small_cluster(ctx);
    pp_plan *p = NULL;
    pp_eval *e = NULL;
    pp_eval_summary s;
    pp_cost_params cp;
    static const char *big[] = {
        "{\"global_batch\": 1099511627776, \"stages\": [{\"ops\": [0, 1, 2], "
        "\"replicas\": [[0], [1]]}, {\"ops\": [3, 4], \"replicas\": [[4]]}]}",
        "{\"global_batch\": 1099511627776, \"micro_batch\": 1073741824, "
        "\"micro_batches\": 1024, \"stages\": [{\"ops\": [0, 1, 2, 3, 4], "
        "\"replicas\": [[0]]}]}",
        /* 2^40 micro-batches: too many for "micro_batches", which the
        ** writer then leaves out. */
        "{\"global_batch\": 1099511627776, \"stages\": [{\"ops\": [0, 1, 2], "
        "\"replicas\": [[0]]}, {\"ops\": [3, 4], \"replicas\": [[4]]}]}",
        "{\"global_batch\": 1073741824, \"micro_batch\": 1073741824, "
        "\"schedule\": \"gpipe\", \"stages\": [{\"ops\": [0, 1, 2, 3, 4], "
        "\"replicas\": [[0]]}]}",
    };
    size_t k;
    pp_cost_params_init(&cp);
    for (k = 0; k < sizeof big / sizeof big[0]; k++) {
      if (rd(ctx, big[k], m, c, &p) != PP_OK)
        fail_msg("%s", pp_ctx_errmsg(ctx));
      assert_int_equal(pp_plan_check(ctx, p, m, c), PP_OK);
      assert_int_equal(pp_evaluate(ctx, p, m, c, &cp, &e), PP_OK);
      assert_int_equal(pp_eval_get_summary(e, &s), PP_OK);
      assert_true(isfinite(s.iteration_ms) && s.iteration_ms > 0);
      assert_true(isfinite(s.lower_bound_ms) && s.lower_bound_ms > 0);
      roundtrip(ctx, p, NULL);
      pp_eval_destroy(e);
      pp_plan_destroy(p);
    }
    pp_cluster_destroy(c);
    pp_model_destroy(m);
  }
}

static void t_enums(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  const char *st = "{\"ops\": [0], \"replicas\": [[0]]}";
  BAD_READ(PLAN("\"schedule\": \"zero-bubble\",", st), PP_EINPUT,
           "test.json: plan: unknown schedule \"zero-bubble\"",
           "gpipe, 1f1b, 1f1b-star");
  BAD_READ(PLAN("\"schedule\": \"1F1B\",", st), PP_EINPUT,
           "unknown schedule \"1F1B\"");
  BAD_READ(PLAN("\"schedule\": \"\",", st), PP_EINPUT, "unknown schedule \"\"");
  BAD_READ(PLAN("\"schedule\": 1,", st), PP_EINPUT,
           "plan: \"schedule\" must be a string, not an integer");
  BAD_READ(PLAN("\"optimizer\": \"lamb\",", st), PP_EINPUT,
           "unknown optimizer \"lamb\"", "sgd, adam, adam-mixed, 2bw");
  BAD_READ(PLAN("\"optimizer\": [\"adam\"],", st), PP_EINPUT,
           "\"optimizer\" must be a string, not an array");
  BAD_READ(PLAN("\"recompute\": \"yes\",", st), PP_EINPUT,
           "plan: \"recompute\" must be true or false, not a string");
  BAD_READ(PLAN("\"recompute\": 1,", st), PP_EINPUT,
           "\"recompute\" must be true or false, not an integer");
  BAD_READ(PLAN("\"recompute\": [],", st), PP_EINPUT,
           "\"recompute\" must be true or false, not an array");
  {
    /* A schedule name longer than any name may be. */
    char *longname = malloc(PP_MAX_NAME + 2);
    assert_non_null(longname);
    memset(longname, 's', PP_MAX_NAME + 1);
    longname[PP_MAX_NAME + 1] = '\0';
    BAD_READ(doc("{\"global_batch\": 1, \"schedule\": \"%s\", \"stages\": "
                 "[]}",
                 longname),
             PP_ELIMIT, "\"schedule\" is longer than");
    free(longname);
  }
}

static void t_structure(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = small_model(ctx);
  pp_cluster *c = small_cluster(ctx);

  /* Empty arrays. */
  BAD_READ(PLAN("", ""), PP_EINPUT,
           "test.json: plan: \"stages\" is empty; a plan needs a stage");
  BAD_READ(PLAN("", "{\"ops\": [], \"replicas\": [[0]]}"), PP_EINPUT,
           "test.json: stage 0: \"ops\" is empty");
  BAD_READ(PLAN("", "{\"ops\": [0, 1, 2], \"replicas\": [[0]]}, {\"ops\": "
                    "[3, 4], \"replicas\": []}"),
           PP_EINPUT, "stage 1: \"replicas\" is empty");

  /* Replicas of the wrong size for tp. */
  BAD_READ(PLAN("\"tp\": 2,", "{\"ops\": [0], \"replicas\": [[0, 1], [2]]}"),
           PP_EINPUT, "stage 0, replica 1: lists 1 devices but tp is 2");
  BAD_READ(PLAN("\"tp\": 2,", "{\"ops\": [0], \"replicas\": [[0, 1, 2]]}"),
           PP_EINPUT, "stage 0, replica 0: lists 3 devices but tp is 2");
  BAD_READ(PLAN("\"tp\": 2,", "{\"ops\": [0], \"replicas\": [[]]}"), PP_EINPUT,
           "lists 0 devices but tp is 2");
  BAD_READ(PLAN("", "{\"ops\": [0], \"replicas\": [[0, 1]]}"), PP_EINPUT,
           "stage 0, replica 0: lists 2 devices but tp is 1");
  BAD_READ(PLAN("\"tp\": 2,", "{\"ops\": [0], \"replicas\": [0, 1]}"),
           PP_EINPUT,
           "stage 0, replica 0: must be an array of 2 devices (tp = 2), not "
           "an integer");

  /* Device indices out of range: at reading with a cluster, at checking
  ** without. */
  BAD(PLAN("", "{\"ops\": [0, 1, 2], \"replicas\": [[0]]}, {\"ops\": [3, 4], "
               "\"replicas\": [[8]]}"),
      PP_EINPUT,
      "test.json: stage 1, replica 0: device index 8 is out of "
      "range (8 devices)");
  BAD_CHECK(PLAN("", "{\"ops\": [0, 1, 2], \"replicas\": [[0]]}, {\"ops\": [3, "
                     "4], \"replicas\": [[1], [8]]}"),
            PP_EINPUT, "test.json: stage 1, replica 1: device 8 does not exist",
            "cluster 'c8' has 8 devices");
  BAD_CHECK(PLAN("\"tp\": 2,", "{\"ops\": [0, 1, 2, 3, 4], \"replicas\": [[0, "
                               "1], [2, 3], [4, 9], [5, 6]]}"),
            PP_EINPUT, "stage 0, replica 2: device 9 does not exist");
  BAD_READ(PLAN("", "{\"ops\": [0], \"replicas\": [[-1]]}"), PP_EINPUT,
           "stage 0, replica 0: device index -1 is out of range");
  BAD_READ(PLAN("", "{\"ops\": [0], \"replicas\": [[16384]]}"), PP_EINPUT,
           "device index 16384 is out of range (at most 16384 devices)");
  BAD_READ(PLAN("", "{\"ops\": [0], \"replicas\": [[4294967296]]}"), PP_EINPUT,
           "device index 4294967296 is out of range");

  /* Operators that do not exist. */
  BAD(PLAN("", "{\"ops\": [0, 1, 2, 3, 5], \"replicas\": [[0]]}"), PP_EINPUT,
      "test.json: stage 0: operator index 5 is out of range (5 operators)");
  BAD_CHECK(PLAN("", "{\"ops\": [0, 1], \"replicas\": [[0]]}, {\"ops\": [2, 3, "
                     "4, 7], \"replicas\": [[1]]}"),
            PP_EINPUT, "test.json: stage 1: operator 7 does not exist",
            "model 'm5' has 5 operators");
  BAD_READ(PLAN("", "{\"ops\": [-3], \"replicas\": [[0]]}"), PP_EINPUT,
           "stage 0: operator index -3 is out of range");
  BAD_READ(PLAN("", "{\"ops\": [10000000], \"replicas\": [[0]]}"), PP_EINPUT,
           "operator index 10000000 is out of range");

  /* Every operator in exactly one stage. */
  BAD(PLAN("", "{\"ops\": [0, 1, 2], \"replicas\": [[0]]}, {\"ops\": [2, 3, "
               "4], \"replicas\": [[1]]}"),
      PP_EINPUT,
      "test.json: operator 'c' (index 2) is in stage 0 and again "
      "in stage 1");
  BAD(PLAN("", "{\"ops\": [0, 1, 1, 2, 3, 4], \"replicas\": [[0]]}"), PP_EINPUT,
      "operator 'b' (index 1) is listed twice in stage 0");
  BAD(PLAN("", "{\"ops\": [0, 1, 2], \"replicas\": [[0]]}, {\"ops\": [3], "
               "\"replicas\": [[1]]}"),
      PP_EINPUT, "test.json: operator 'e' (index 4) is in no stage");
  /* Stage order against the model's edges: c -> d, and the skip edge
  ** b -> d. */
  BAD(PLAN("", "{\"ops\": [0, 1, 3, 4], \"replicas\": [[0]]}, {\"ops\": [2], "
               "\"replicas\": [[1]]}"),
      PP_EINPUT,
      "operator 'd' in stage 0 needs the output of 'c' in the later stage 1",
      "must follow the model's dependencies");
  BAD(PLAN("", "{\"ops\": [0, 2], \"replicas\": [[0]]}, {\"ops\": [1, 3, 4], "
               "\"replicas\": [[1]]}"),
      PP_EINPUT,
      "operator 'c' in stage 0 needs the output of 'b' in the "
      "later stage 1");
  BAD(PLAN("", "{\"ops\": [3, 4], \"replicas\": [[0]]}, {\"ops\": [0, 1, 2], "
               "\"replicas\": [[1]]}"),
      PP_EINPUT, "needs the output of", "in the later stage 1");
  /* Within a stage, operators may be listed in any order. */
  ok_plan(ctx, m, c,
          PLAN("", "{\"ops\": [1, 0], \"replicas\": [[0]]}, {\"ops\": [2, 4, "
                   "3], \"replicas\": [[1]]}"));

  /* A device twice in one stage: across replicas, within a tp group. */
  BAD(PLAN("", "{\"ops\": [0, 1, 2, 3, 4], \"replicas\": [[3], [5], [3], "
               "[6]]}"),
      PP_EINPUT,
      "test.json: stage 0: device 3 appears twice (replicas 0 and "
      "2)");
  BAD(PLAN("\"tp\": 2,", "{\"ops\": [0, 1, 2], \"replicas\": [[0, 1]]}, "
                         "{\"ops\": [3, 4], \"replicas\": [[2, 2]]}"),
      PP_EINPUT, "test.json: stage 1: device 2 appears twice in replica 0");
  BAD(PLAN("\"tp\": 2,", "{\"ops\": [0, 1, 2, 3, 4], \"replicas\": [[0, 1], "
                         "[2, 3], [4, 1], [5, 6]]}"),
      PP_EINPUT, "stage 0: device 1 appears twice (replicas 0 and 2)");
  /* ... but in two stages it is MadPipe's special processor. */
  ok_plan(ctx, m, c,
          PLAN("", "{\"ops\": [0, 1], \"replicas\": [[0]]}, {\"ops\": [2, 3], "
                   "\"replicas\": [[1]]}, {\"ops\": [4], \"replicas\": "
                   "[[0]]}"));
  ok_plan(ctx, m, c,
          PLAN("\"tp\": 2, \"schedule\": \"1f1b-star\",",
               "{\"ops\": [0, 1], \"replicas\": [[0, 1], [2, 3]]}, {\"ops\": "
               "[2, 3], \"replicas\": [[4, 5], [6, 7]]}, {\"ops\": [4], "
               "\"replicas\": [[1, 0], [3, 2]]}"));

  /* The batch must divide. */
  BAD_READ("{\"global_batch\": 15, \"stages\": [{\"ops\": [0], "
           "\"replicas\": [[0], [1]]}]}",
           PP_EINPUT,
           "test.json: stage 0: the global batch 15 is not divided by its 2 "
           "replicas x micro-batch size 1");
  BAD_READ("{\"global_batch\": 16, \"micro_batch\": 4, \"stages\": "
           "[{\"ops\": [0], \"replicas\": [[0]]}, {\"ops\": [1], "
           "\"replicas\": [[1], [2], [3]]}]}",
           PP_EINPUT,
           "stage 1: the global batch 16 is not divided by its 3 replicas x "
           "micro-batch size 4");
  BAD_READ("{\"global_batch\": 15, \"micro_batch\": 2, \"stages\": "
           "[{\"ops\": [0], \"replicas\": [[0]]}]}",
           PP_EINPUT,
           "test.json: micro-batch size 2 does not divide the global batch "
           "15");
  /* micro_batches must agree with every stage. */
  BAD_READ("{\"global_batch\": 16, \"micro_batches\": 4, \"stages\": "
           "[{\"ops\": [0], \"replicas\": [[0], [1]]}]}",
           PP_EINPUT,
           "test.json: stage 0: micro_batches 4 disagrees with global batch "
           "16 / (micro-batch 1 x 2 replicas) = 8");
  BAD_READ("{\"global_batch\": 16, \"micro_batches\": 8, \"stages\": "
           "[{\"ops\": [0], \"replicas\": [[0], [1]]}, {\"ops\": [1], "
           "\"replicas\": [[2], [3], [4], [5]]}]}",
           PP_EINPUT,
           "stage 1: micro_batches 8 disagrees with global batch 16 / "
           "(micro-batch 1 x 4 replicas) = 4");
  ok_plan(ctx, m, c,
          "{\"global_batch\": 16, \"micro_batch\": 2, \"micro_batches\": 4, "
          "\"stages\": [{\"ops\": [0, 1, 2], \"replicas\": [[0], [1]]}, "
          "{\"ops\": [3, 4], \"replicas\": [[2], [3]]}]}");
  /* PipeDream-style replica counts that differ. */
  ok_plan(ctx, m, c,
          "{\"global_batch\": 12, \"stages\": [{\"ops\": [0, 1, 2], "
          "\"replicas\": [[0], [1], [2]]}, {\"ops\": [3, 4], \"replicas\": "
          "[[4], [5], [6], [7]]}]}");

  pp_cluster_destroy(c);
  pp_model_destroy(m);
}

/* A plan the size of a big model: 5,000 single-operator stages on 8
** devices (each device holds many stages). */
static void t_many_stages(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_cluster *c = small_cluster(ctx);
  pp_model *m = NULL;
  pp_plan *p = NULL;
  pp_eval *e = NULL;
  pp_cost_params cp;
  size_t n = 5000, cap = n * 160, off = 0, i;
  char *text = malloc(cap);
  assert_non_null(text);
  off += (size_t)snprintf(text + off, cap - off,
                          "{\"name\": \"big\", "
                          "\"ops\": [");
  for (i = 0; i < n; i++)
    off += (size_t)snprintf(text + off, cap - off,
                            "%s{\"name\": \"op%zu\", \"fwd_ms\": 0.1, "
                            "\"bwd_ms\": 0.2, \"param_bytes\": 100, "
                            "\"out_bytes\": 100, \"saved_bytes\": 100}",
                            i ? "," : "", i);
  snprintf(text + off, cap - off, "]}");
  assert_int_equal(tu_model_json(ctx, text, &m), PP_OK);
  off = (size_t)snprintf(text, cap, "{\"global_batch\": 8, \"stages\": [");
  for (i = 0; i < n; i++)
    off += (size_t)snprintf(text + off, cap - off,
                            "%s{\"ops\": [\"op%zu\"], \"replicas\": [[%zu]]}",
                            i ? "," : "", i, i % 8);
  snprintf(text + off, cap - off, "]}");
  assert_int_equal(rd(ctx, text, m, c, &p), PP_OK);
  assert_int_equal(pp_plan_nstage(p), (int32_t)n);
  assert_int_equal(pp_plan_check(ctx, p, m, c), PP_OK);
  pp_cost_params_init(&cp);
  assert_int_equal(pp_evaluate(ctx, p, m, c, &cp, &e), PP_OK);
  roundtrip(ctx, p, NULL);
  pp_eval_destroy(e);
  pp_plan_destroy(p);
  free(text);
  pp_model_destroy(m);
  pp_cluster_destroy(c);
}

/* ---- the builder ------------------------------------------------------ */

static void t_builder(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_plan_params pa;
  pp_plan_builder *b = NULL;
  pp_plan *p = NULL;
  int32_t ops0[] = {0, 1, 2}, ops1[] = {3, 4}, id = -1;
  int32_t d3 = 3, d7 = 7, d1 = 1, d5 = 5;

  pp_plan_params_init(&pa);
  assert_int_equal(pa.micro_batch, 1);
  assert_int_equal(pa.tp, 1);
  assert_int_equal(pa.schedule, PP_SCHED_1F1B);
  assert_int_equal(pa.optimizer, PP_OPT_ADAM_MIXED);
  assert_int_equal(pa.recompute, 0);
  assert_int_equal(pa.micro_batches, 0);
  pp_plan_params_init(NULL);

  /* The DESIGN plan, replicas added in mixed stage order. */
  pa.global_batch = 16;
  assert_int_equal(pp_plan_builder_create(ctx, &pa, NULL, &b), PP_OK);
  assert_int_equal(pp_plan_builder_add_stage(b, ops0, 3, &id), PP_OK);
  assert_int_equal(id, 0);
  assert_int_equal(pp_plan_builder_add_replica(b, 0, &d3), PP_OK);
  assert_int_equal(pp_plan_builder_add_stage(b, ops1, 2, &id), PP_OK);
  assert_int_equal(id, 1);
  assert_int_equal(pp_plan_builder_add_replica(b, 1, &d1), PP_OK);
  assert_int_equal(pp_plan_builder_add_replica(b, 0, &d7), PP_OK);
  assert_int_equal(pp_plan_builder_add_replica(b, 1, &d5), PP_OK);
  assert_int_equal(pp_plan_builder_finish(b, &p), PP_OK);
  assert_string_equal(pp_plan_source(p), "plan");
  assert_int_equal(pp_plan_replica(p, 0, 1)[0], 7);
  assert_int_equal(pp_plan_replica(p, 1, 0)[0], 1);
  {
    /* micro_batches 0 is written as the implied 8. */
    char *t = plan_text(ctx, p, NULL);
    assert_string_equal(t, design_normalized);
    free(t);
  }
  /* Queries out of range. */
  {
    int32_t n = 99;
    assert_null(pp_plan_stage_ops(p, 2, &n));
    assert_int_equal(n, 0);
    n = 99;
    assert_null(pp_plan_stage_ops(p, -1, &n));
    assert_int_equal(n, 0);
    assert_null(pp_plan_stage_ops(p, 5, NULL));
    assert_int_equal(pp_plan_nreplica(p, 2), 0);
    assert_int_equal(pp_plan_nreplica(p, -1), 0);
    assert_null(pp_plan_replica(p, 0, 2));
    assert_null(pp_plan_replica(p, 2, 0));
    assert_null(pp_plan_replica(p, 0, -1));
    assert_int_equal(pp_plan_stage_micro_batches(p, 2), 0);
    assert_int_equal(pp_plan_nstage(NULL), 0);
    assert_null(pp_plan_source(NULL));
    assert_null(pp_plan_stage_ops(NULL, 0, &n));
    assert_int_equal(pp_plan_nreplica(NULL, 0), 0);
    assert_null(pp_plan_replica(NULL, 0, 0));
    assert_int_equal(pp_plan_stage_micro_batches(NULL, 0), 0);
    pp_plan_get_params(NULL, &pa);
    pp_plan_get_params(p, NULL);
  }
  pp_plan_destroy(p);
  pp_plan_destroy(NULL);
  pp_plan_builder_destroy(NULL);

  /* NULL arguments. */
  p = (pp_plan *)&p;
  assert_int_equal(pp_plan_builder_create(NULL, &pa, "x", &b), PP_EINVAL);
  tu_expect_error(ctx, pp_plan_builder_create(ctx, NULL, "x", &b), PP_EINVAL,
                  "pp_plan_builder_create: NULL argument", NULL);
  tu_expect_error(ctx, pp_plan_builder_create(ctx, &pa, "x", NULL), PP_EINVAL,
                  "NULL argument", NULL);
  assert_int_equal(pp_plan_builder_add_stage(NULL, ops0, 3, &id), PP_EINVAL);
  assert_int_equal(pp_plan_builder_add_replica(NULL, 0, &d3), PP_EINVAL);
  assert_int_equal(pp_plan_builder_finish(NULL, &p), PP_EINVAL);
  assert_int_equal(pp_plan_check(NULL, NULL, NULL, NULL), PP_EINVAL);
  tu_expect_error(ctx, pp_plan_check(ctx, NULL, NULL, NULL), PP_EINVAL,
                  "pp_plan_check: NULL argument", NULL);
  assert_int_equal(pp_plan_read_json(NULL, "{}", 2, NULL, NULL, NULL, &p),
                   PP_EINVAL);
  tu_expect_error(ctx, pp_plan_read_json(ctx, NULL, 0, NULL, NULL, NULL, &p),
                  PP_EINVAL, "pp_plan_read_json: NULL argument", NULL);
  tu_expect_error(ctx, pp_plan_read_json(ctx, "{}", 2, NULL, NULL, NULL, NULL),
                  PP_EINVAL, "NULL argument", NULL);
  tu_expect_error(ctx, pp_plan_load(ctx, NULL, NULL, NULL, &p), PP_EINVAL,
                  "pp_plan_load: NULL argument", NULL);
  tu_expect_error(ctx, pp_plan_write(ctx, NULL, NULL, stdout), PP_EINVAL,
                  "pp_plan_write: NULL argument", NULL);
  assert_int_equal(pp_plan_write(NULL, NULL, NULL, NULL), PP_EINVAL);

  /* Bad parameters. */
  {
    static const struct {
      int field;
      int64_t value;
      pp_status rc;
      const char *msg;
    } bad[] = {
        {0, 0, PP_EINPUT, "mine: global batch 0 must be positive"},
        {0, -16, PP_EINPUT, "global batch -16 must be positive"},
        {1, 0, PP_EINPUT, "micro-batch size 0 must be positive"},
        {1, -1, PP_EINPUT, "micro-batch size -1 must be positive"},
        {1, 3, PP_EINPUT, "micro-batch size 3 does not divide"},
        {2, 0, PP_EINPUT, "tensor-parallel degree 0 must be in 1..16384"},
        {2, 16385, PP_EINPUT, "tensor-parallel degree 16385"},
        {3, 3, PP_EINVAL, "unknown schedule 3"},
        {3, -1, PP_EINVAL, "unknown schedule -1"},
        {4, 4, PP_EINVAL, "unknown optimizer 4"},
        {5, -1, PP_EINPUT, "micro_batches -1 must be positive"},
        {6, -1, PP_EINPUT, "period_ms must be a finite number >= 0"},
        {7, 0, PP_EINPUT, "period_ms must be a finite number >= 0"},
        {8, 0, PP_EINPUT, "period_ms must be a finite number >= 0"},
    };
    size_t i;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
      pp_plan_params q;
      pp_plan_params_init(&q);
      q.global_batch = 16;
      switch (bad[i].field) {
      case 0: q.global_batch = bad[i].value; break;
      case 1: q.micro_batch = (int32_t)bad[i].value; break;
      case 2: q.tp = (int32_t)bad[i].value; break;
      case 3: q.schedule = (pp_schedule)bad[i].value; break;
      case 4: q.optimizer = (pp_optimizer)bad[i].value; break;
      case 5: q.micro_batches = (int32_t)bad[i].value; break;
      case 6: q.period_ms = -1; break;
      case 7: q.period_ms = NAN; break;
      case 8: q.period_ms = INFINITY; break;
      }
      b = (pp_plan_builder *)&b;
      tu_expect_error(ctx, pp_plan_builder_create(ctx, &q, "mine", &b),
                      bad[i].rc, bad[i].msg, NULL);
      assert_null(b);
    }
  }

  /* Bad stages and replicas; the builder remembers and finish fails. */
  assert_int_equal(pp_plan_builder_create(ctx, &pa, "mine", &b), PP_OK);
  tu_expect_error(ctx, pp_plan_builder_add_stage(b, ops0, 0, &id), PP_EINPUT,
                  "mine: stage 0 has no operators", NULL);
  assert_int_equal(pp_plan_builder_finish(b, &p), PP_EINPUT);
  assert_null(p);
  pp_ctx_clear_error(ctx);

  assert_int_equal(pp_plan_builder_create(ctx, &pa, "mine", &b), PP_OK);
  tu_expect_error(ctx, pp_plan_builder_add_stage(b, NULL, 3, &id), PP_EINVAL,
                  "pp_plan_builder_add_stage: NULL operators", NULL);
  pp_plan_builder_destroy(b);

  assert_int_equal(pp_plan_builder_create(ctx, &pa, "mine", &b), PP_OK);
  {
    int32_t badops[] = {0, -1};
    tu_expect_error(ctx, pp_plan_builder_add_stage(b, badops, 2, &id),
                    PP_EINPUT,
                    "mine: stage 0: operator index -1 is out of "
                    "range",
                    NULL);
  }
  /* Later calls still work; finish reports the first failure's status,
  ** whatever happened to the context's message since. */
  assert_int_equal(pp_plan_builder_add_stage(b, ops0, 3, &id), PP_OK);
  assert_int_equal(id, 0);
  assert_int_equal(pp_plan_builder_add_replica(b, 0, &d3), PP_OK);
  tu_expect_error(ctx, pp_plan_builder_finish(b, &p), PP_EINPUT,
                  "mine: the plan was not built: an earlier call to the "
                  "builder failed",
                  NULL);
  assert_null(p);

  assert_int_equal(pp_plan_builder_create(ctx, &pa, "mine", &b), PP_OK);
  assert_int_equal(pp_plan_builder_add_stage(b, ops0, 3, &id), PP_OK);
  tu_expect_error(ctx, pp_plan_builder_add_replica(b, 1, &d3), PP_EINVAL,
                  "mine: replica added to unknown stage 1", NULL);
  tu_expect_error(ctx, pp_plan_builder_add_replica(b, -1, &d3), PP_EINVAL,
                  "replica added to unknown stage -1", NULL);
  tu_expect_error(ctx, pp_plan_builder_add_replica(b, 0, NULL), PP_EINVAL,
                  "pp_plan_builder_add_replica: NULL devices", NULL);
  {
    int32_t neg = -2, huge = PP_MAX_DEVICES;
    tu_expect_error(ctx, pp_plan_builder_add_replica(b, 0, &neg), PP_EINPUT,
                    "mine: stage 0: device index -2 is out of range", NULL);
    tu_expect_error(ctx, pp_plan_builder_add_replica(b, 0, &huge), PP_EINPUT,
                    "device index 16384 is out of range", NULL);
  }
  assert_int_equal(pp_plan_builder_add_replica(b, 0, &d3), PP_OK);
  assert_int_equal(pp_plan_builder_finish(b, &p), PP_EINVAL);
  assert_null(p);
  pp_ctx_clear_error(ctx);

  /* finish with a NULL out destroys the builder. */
  assert_int_equal(pp_plan_builder_create(ctx, &pa, "mine", &b), PP_OK);
  assert_int_equal(pp_plan_builder_add_stage(b, ops0, 3, &id), PP_OK);
  tu_expect_error(ctx, pp_plan_builder_finish(b, NULL), PP_EINVAL,
                  "pp_plan_builder_finish: NULL out", NULL);

  /* Structural failures found by finish. */
  assert_int_equal(pp_plan_builder_create(ctx, &pa, "mine", &b), PP_OK);
  assert_int_equal(pp_plan_builder_finish(b, &p), PP_EINPUT);
  {
    /* The source is the error's file, for pp_ctx_errloc too. */
    const char *file = NULL;
    long line = -1, col = -1;
    pp_ctx_errloc(ctx, &file, &line, &col);
    assert_non_null(file);
    assert_string_equal(file, "mine");
    assert_int_equal(line, 0);
    assert_int_equal(col, 0);
  }
  tu_expect_error(ctx, PP_EINPUT, PP_EINPUT, "mine: the plan has no stages",
                  NULL);
  assert_null(p);
  assert_int_equal(pp_plan_builder_create(ctx, &pa, "mine", &b), PP_OK);
  assert_int_equal(pp_plan_builder_add_stage(b, ops0, 3, &id), PP_OK);
  assert_int_equal(pp_plan_builder_add_replica(b, 0, &d3), PP_OK);
  assert_int_equal(pp_plan_builder_add_stage(b, ops1, 2, &id), PP_OK);
  tu_expect_error(ctx, pp_plan_builder_finish(b, &p), PP_EINPUT,
                  "mine: stage 1 has no replicas", NULL);
  assert_null(p);
  assert_int_equal(pp_plan_builder_create(ctx, &pa, "mine", &b), PP_OK);
  assert_int_equal(pp_plan_builder_add_stage(b, ops0, 3, &id), PP_OK);
  assert_int_equal(pp_plan_builder_add_replica(b, 0, &d3), PP_OK);
  assert_int_equal(pp_plan_builder_add_replica(b, 0, &d7), PP_OK);
  assert_int_equal(pp_plan_builder_add_replica(b, 0, &d3), PP_OK);
  tu_expect_error(ctx, pp_plan_builder_finish(b, &p), PP_EINPUT,
                  "mine: stage 0: the global batch 16 is not divided by its 3 "
                  "replicas",
                  NULL);
  assert_int_equal(pp_plan_builder_create(ctx, &pa, "mine", &b), PP_OK);
  assert_int_equal(pp_plan_builder_add_stage(b, ops0, 3, &id), PP_OK);
  assert_int_equal(pp_plan_builder_add_replica(b, 0, &d3), PP_OK);
  assert_int_equal(pp_plan_builder_add_replica(b, 0, &d3), PP_OK);
  tu_expect_error(ctx, pp_plan_builder_finish(b, &p), PP_EINPUT,
                  "mine: stage 0: device 3 appears twice (replicas 0 and 1)",
                  NULL);
  /* An abandoned builder. */
  assert_int_equal(pp_plan_builder_create(ctx, &pa, "mine", &b), PP_OK);
  assert_int_equal(pp_plan_builder_add_stage(b, ops0, 3, &id), PP_OK);
  assert_int_equal(pp_plan_builder_add_replica(b, 0, &d3), PP_OK);
  pp_plan_builder_destroy(b);

  /* Names of the enums. */
  {
    pp_schedule s;
    pp_optimizer o;
    assert_int_equal(pp_schedule_parse("1f1b-star", &s), PP_OK);
    assert_int_equal(s, PP_SCHED_1F1B_STAR);
    assert_int_equal(pp_schedule_parse("pipedream", &s), PP_EINVAL);
    assert_int_equal(pp_schedule_parse(NULL, &s), PP_EINVAL);
    assert_null(pp_schedule_name((pp_schedule)3));
    assert_int_equal(pp_optimizer_parse("2bw", &o), PP_OK);
    assert_int_equal(o, PP_OPT_2BW);
    assert_int_equal(pp_optimizer_parse("adamw", &o), PP_EINVAL);
    assert_null(pp_optimizer_name((pp_optimizer)-1));
    assert_true(pp_optimizer_factor(PP_OPT_SGD) == 2);
    assert_true(pp_optimizer_factor(PP_OPT_ADAM) == 4);
    assert_true(pp_optimizer_factor(PP_OPT_ADAM_MIXED) == 8);
    assert_true(pp_optimizer_factor(PP_OPT_2BW) == 3);
    assert_true(pp_optimizer_factor((pp_optimizer)4) == 0);
    assert_string_equal(pp_task_kind_name(PP_TASK_UPDATE), "update");
    assert_null(pp_task_kind_name((pp_task_kind)7));
  }
}

/* ---- allocation failures ---------------------------------------------- */

typedef pp_status (*op_fn)(pp_ctx *ctx, const void *arg);

/* Fail allocation k = 1, 2, ... of fn in turn (tests/test_alloc.c): every
** run ends in PP_OK once k is past the last allocation, or in an error
** with a message, and gives back every block it took. */
static void sweep(const char *label, op_fn fn, const void *arg)
{
  struct tu_alloc a;
  pp_ctx *ctx = tu_ctx(&a);
  long live0, k, clean, nomem = 0;
  size_t bytes0;
  pp_status rc;

  live0 = a.live;
  bytes0 = a.bytes;
  tu_reset(&a, 0);
  if ((rc = fn(ctx, arg)) != PP_OK)
    fail_msg("%s: the clean run failed (%d): %s", label, rc,
             pp_ctx_errmsg(ctx));
  clean = a.count;
  assert_true(clean > 0);
  if (a.live != live0 || a.bytes != bytes0)
    fail_msg("%s: the clean run leaks %ld blocks", label, a.live - live0);
  for (k = 1;; k++) {
    pp_ctx_clear_error(ctx);
    live0 = a.live;
    bytes0 = a.bytes;
    tu_reset(&a, k);
    rc = fn(ctx, arg);
    if (a.live != live0 || a.bytes != bytes0)
      fail_msg("%s: failing allocation %ld leaks %ld blocks, %zu bytes "
               "(status %d: %s)",
               label, k, a.live - live0, a.bytes - bytes0, rc,
               pp_ctx_errmsg(ctx));
    if (rc == PP_OK) {
      if (a.count < k)
        break;
      continue; /* the failure was absorbed (a cache, a retry) */
    }
    if (a.count < k)
      fail_msg("%s: failed (%d: %s) though allocation %ld never happened",
               label, rc, pp_ctx_errmsg(ctx), k);
    if (pp_ctx_errmsg(ctx)[0] == '\0')
      fail_msg("%s: allocation %ld failed: status %d without a message", label,
               k, rc);
    if (pp_ctx_errcode(ctx) != rc)
      fail_msg("%s: allocation %ld: returned %d, the context holds %d: %s",
               label, k, rc, pp_ctx_errcode(ctx), pp_ctx_errmsg(ctx));
    if (rc == PP_ENOMEM)
      nomem++;
    else
      print_message("%s: allocation %ld failed as status %d: %s\n", label, k,
                    rc, pp_ctx_errmsg(ctx));
    if (k > clean + 1000)
      fail_msg("%s: still failing at k = %ld (clean run: %ld)", label, k,
               clean);
  }
  assert_true(nomem > 0);
  tu_reset(&a, 0);
  pp_ctx_destroy(ctx);
  assert_int_equal(a.live, 0);
  assert_int_equal(a.bytes, 0);
}

struct rce {
  const char *text;
  const pp_model *m;
  const pp_cluster *c;
  FILE *f;
  int simulate;
};

static pp_status op_read_check_eval(pp_ctx *ctx, const void *arg)
{
  const struct rce *x = arg;
  pp_plan *p = (pp_plan *)&p;
  pp_eval *e = (pp_eval *)&e;
  pp_cost_params cp;
  pp_status rc;

  rc = pp_plan_read_json(ctx, x->text, strlen(x->text), "sweep.json", x->m,
                         x->c, &p);
  if (rc != PP_OK) {
    assert_null(p);
    return rc;
  }
  if ((rc = pp_plan_check(ctx, p, x->m, x->c)))
    goto done;
  pp_cost_params_init(&cp);
  if ((rc = pp_evaluate(ctx, p, x->m, x->c, &cp, &e))) {
    assert_null(e);
    goto done;
  }
  rewind(x->f);
  if (!(rc = pp_eval_write(ctx, e, 0, x->f)))
    rc = pp_eval_write(ctx, e, 1, x->f);
  pp_eval_destroy(e);
  if (!rc)
    rc = pp_plan_write(ctx, p, NULL, x->f);
  if (!rc && x->simulate) {
    pp_sim *s = (pp_sim *)&s;
    if ((rc = pp_simulate(ctx, p, x->m, x->c, &cp, &s)) != PP_OK)
      assert_null(s);
    pp_sim_destroy(s);
  }
done:
  pp_plan_destroy(p);
  return rc;
}

static pp_status op_build(pp_ctx *ctx, const void *arg)
{
  pp_plan_params pa;
  pp_plan_builder *b = (pp_plan_builder *)&b;
  pp_plan *p = (pp_plan *)&p;
  int32_t ops[40], s, r, dev[2];
  pp_status rc;
  (void)arg;
  pp_plan_params_init(&pa);
  pa.global_batch = 64;
  pa.tp = 2;
  if ((rc = pp_plan_builder_create(ctx, &pa, "built", &b))) {
    assert_null(b);
    return rc;
  }
  /* 20 stages of 2 operators, 4 replicas each, added stage by stage and
  ** then replica by replica, so the vectors grow. */
  for (s = 0; s < 20; s++) {
    ops[2 * s] = 2 * s;
    ops[2 * s + 1] = 2 * s + 1;
    if ((rc = pp_plan_builder_add_stage(b, ops + 2 * s, 2, NULL)))
      break;
  }
  for (r = 0; r < 4 && !rc; r++)
    for (s = 0; s < 20 && !rc; s++) {
      dev[0] = 2 * r;
      dev[1] = 2 * r + 1;
      rc = pp_plan_builder_add_replica(b, s, dev);
    }
  /* finish reports an earlier failure itself. */
  rc = pp_plan_builder_finish(b, &p);
  if (rc) {
    assert_null(p);
    return rc;
  }
  assert_int_equal(pp_plan_nreplica(p, 19), 4);
  pp_plan_destroy(p);
  return PP_OK;
}

/* Per-stage tensor-parallel degrees (issue 23): the builder, plan JSON
** (a stage's "tp", written only where it is not the plan's), the checker,
** the estimate, the simulator and the exports of engines that run one
** degree. */
static void t_stage_tp(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = small_model(ctx);
  pp_cluster *c = small_cluster(ctx);
  pp_plan *p = NULL, *u1 = NULL, *u2 = NULL;
  pp_plan_builder *b;
  pp_plan_params pa;
  pp_cost_params cp;
  pp_eval *e, *e1, *e2;
  pp_stage_cost sc, sc1, sc2;
  pp_sim *sim;
  pp_sim_summary ss;
  pp_export *x;
  pp_launch *ln;
  int32_t i, id, d0[1] = {0}, d2[2] = {4, 5};
  bool warned = false;
  static const char *const mixed =
      "{\"global_batch\": 8, \"micro_batch\": 1, \"micro_batches\": 4, "
      "\"tp\": 1,\n"
      " \"schedule\": \"1f1b\", \"recompute\": false, \"optimizer\": "
      "\"adam-mixed\",\n"
      " \"stages\": [\n"
      "  {\"ops\": [0, 1, 2], \"replicas\": [[0], [1]]},\n"
      "  {\"ops\": [3, 4], \"tp\": 2, \"replicas\": [[4, 5], [6, 7]]}]}\n";

  assert_int_equal(rd(ctx, mixed, m, c, &p), PP_OK);
  assert_int_equal(pp_plan_check(ctx, p, m, c), PP_OK);
  assert_int_equal(pp_plan_stage_tp(p, 0), 1);
  assert_int_equal(pp_plan_stage_tp(p, 1), 2);
  assert_int_equal(pp_plan_stage_tp(p, 2), 0);
  assert_int_equal(pp_plan_uniform_tp(p), 0);
  assert_int_equal(pp_plan_replica(p, 1, 1)[0], 6);
  assert_int_equal(pp_plan_replica(p, 1, 1)[1], 7);
  roundtrip(ctx, p, mixed);

  /* Each stage priced at its degree: stage 0 as in the plan of tp 1,
  ** stage 1's parameters per rank as in the plan of tp 2. */
  assert_int_equal(
      rd(ctx,
         "{\"global_batch\": 8, \"stages\": [{\"ops\": [0, 1, 2], "
         "\"replicas\": [[0], [1]]}, {\"ops\": [3, 4], \"replicas\": [[4], "
         "[6]]}]}",
         m, c, &u1),
      PP_OK);
  assert_int_equal(
      rd(ctx,
         "{\"global_batch\": 8, \"tp\": 2, \"stages\": [{\"ops\": [0, 1, 2], "
         "\"replicas\": [[0, 1], [2, 3]]}, {\"ops\": [3, 4], \"replicas\": "
         "[[4, 5], [6, 7]]}]}",
         m, c, &u2),
      PP_OK);
  pp_cost_params_init(&cp);
  assert_int_equal(pp_evaluate(ctx, p, m, c, &cp, &e), PP_OK);
  assert_int_equal(pp_evaluate(ctx, u1, m, c, &cp, &e1), PP_OK);
  assert_int_equal(pp_evaluate(ctx, u2, m, c, &cp, &e2), PP_OK);
  assert_int_equal(pp_eval_stage(e, 0, &sc), PP_OK);
  assert_int_equal(pp_eval_stage(e1, 0, &sc1), PP_OK);
  assert_int_equal(sc.tp, 1);
  assert_true(sc.param_bytes == sc1.param_bytes);
  assert_true(sc.fwd_ms == sc1.fwd_ms && sc.bwd_ms == sc1.bwd_ms);
  assert_int_equal(pp_eval_stage(e, 1, &sc), PP_OK);
  assert_int_equal(pp_eval_stage(e2, 1, &sc2), PP_OK);
  assert_int_equal(sc.tp, 2);
  assert_true(sc.param_bytes == sc2.param_bytes);
  assert_true(sc.fwd_ms == sc2.fwd_ms && sc.bwd_ms == sc2.bwd_ms);
  assert_int_equal(pp_eval_stage(e1, 1, &sc1), PP_OK);
  assert_true(sc.param_bytes < sc1.param_bytes);
  {
    pp_eval_summary es;
    pp_eval_get_summary(e, &es);
    assert_true(es.iteration_ms > 0 && es.lower_bound_ms > 0 &&
                es.lower_bound_ms <= es.iteration_ms);
  }
  pp_eval_destroy(e1);
  pp_eval_destroy(e2);
  pp_plan_destroy(u2);

  /* The simulator runs it: every device of both stages works, and the
  ** same plan written with one stage tp per stage reads the same. */
  cp.record = 1;
  assert_int_equal(pp_simulate(ctx, p, m, c, &cp, &sim), PP_OK);
  assert_int_equal(pp_sim_get_summary(sim, &ss), PP_OK);
  assert_true(ss.iteration_ms > 0);
  for (i = 0; i < 8; i++) {
    pp_sim_device sd;
    assert_int_equal(pp_sim_device_get(sim, i, &sd), PP_OK);
    assert_int_equal(sd.used, i != 2 && i != 3);
  }
  pp_sim_destroy(sim);
  cp.record = 0; /* closed-form rings: the same time */
  {
    pp_sim_summary s2;
    assert_int_equal(pp_simulate(ctx, p, m, c, &cp, &sim), PP_OK);
    assert_int_equal(pp_sim_get_summary(sim, &s2), PP_OK);
    assert_true(fabs(s2.iteration_ms - ss.iteration_ms) <=
                1e-9 * ss.iteration_ms);
    pp_sim_destroy(sim);
  }

  /* AMP's cost model has one degree. */
  cp.kind = PP_COST_AMP;
  assert_int_equal(pp_evaluate(ctx, p, m, c, &cp, &e1), PP_EINPUT);
  assert_non_null(strstr(pp_ctx_errmsg(ctx), "one tp degree"));
  pp_ctx_clear_error(ctx);
  pp_eval_destroy(e);

  /* Engines run one degree: the files take the smallest, with a warning
  ** naming the stage; the launch files the same ranks. */
  assert_int_equal(pp_export_megatron(ctx, p, m, c, &x), PP_OK);
  for (i = 0; i < pp_export_nwarning(x); i++)
    warned = warned || (strstr(pp_export_warning(x, i), "stage 1 at tp 2") &&
                        strstr(pp_export_warning(x, i), "tp 1"));
  assert_true(warned);
  assert_non_null(strstr(pp_export_text(x), "--tensor-model-parallel-size 1"));
  pp_export_destroy(x);
  assert_int_equal(pp_export_launch(ctx, p, m, c, &ln), PP_OK);
  assert_int_equal(pp_launch_nhost(ln), 2);
  pp_launch_destroy(ln);

  /* Stages that all set one degree make a plan of that degree. */
  pp_plan_params_init(&pa);
  pa.global_batch = 8;
  assert_int_equal(pp_plan_builder_create(ctx, &pa, "all2", &b), PP_OK);
  assert_int_equal(
      pp_plan_builder_add_stage(b, (const int32_t[]){0, 1, 2, 3, 4}, 5, &id),
      PP_OK);
  assert_int_equal(pp_plan_builder_set_stage_tp(b, id, 2), PP_OK);
  assert_int_equal(pp_plan_builder_add_replica(b, id, d2), PP_OK);
  pp_plan_destroy(u1);
  assert_int_equal(pp_plan_builder_finish(b, &u1), PP_OK);
  pp_plan_get_params(u1, &pa);
  assert_int_equal(pa.tp, 2);
  assert_int_equal(pp_plan_uniform_tp(u1), 2);

  /* Misuse: a degree after the stage's replicas, a degree out of range,
  ** a stage's "tp" that is not a degree, a replica of the wrong size. */
  pp_plan_params_init(&pa);
  pa.global_batch = 8;
  assert_int_equal(pp_plan_builder_create(ctx, &pa, "late", &b), PP_OK);
  assert_int_equal(
      pp_plan_builder_add_stage(b, (const int32_t[]){0, 1, 2, 3, 4}, 5, &id),
      PP_OK);
  assert_int_equal(pp_plan_builder_add_replica(b, id, d0), PP_OK);
  assert_int_equal(pp_plan_builder_set_stage_tp(b, id, 2), PP_EINVAL);
  assert_non_null(strstr(pp_ctx_errmsg(ctx), "after its replicas"));
  assert_int_equal(pp_plan_builder_set_stage_tp(b, id, 0), PP_EINPUT);
  pp_plan_builder_destroy(b);
  pp_ctx_clear_error(ctx);
  assert_int_equal(
      rd(ctx,
         "{\"global_batch\": 8, \"stages\": [{\"ops\": [0, 1, 2, 3, 4], "
         "\"tp\": 0, \"replicas\": [[0]]}]}",
         m, c, &u2),
      PP_EINPUT);
  assert_non_null(strstr(pp_ctx_errmsg(ctx), "stage 0"));
  assert_non_null(strstr(pp_ctx_errmsg(ctx), "tp"));
  pp_ctx_clear_error(ctx);
  assert_int_equal(
      rd(ctx,
         "{\"global_batch\": 8, \"stages\": [{\"ops\": [0, 1, 2], "
         "\"replicas\": [[0]]}, {\"ops\": [3, 4], \"tp\": 2, \"replicas\": "
         "[[4]]}]}",
         m, c, &u2),
      PP_EINPUT);
  assert_non_null(strstr(pp_ctx_errmsg(ctx), "stage 1, replica 0"));
  assert_non_null(strstr(pp_ctx_errmsg(ctx), "tp is 2"));
  pp_ctx_clear_error(ctx);

  pp_plan_destroy(u1);
  pp_plan_destroy(p);
  pp_model_destroy(m);
  pp_cluster_destroy(c);
}

static void t_alloc_sweep(void **state)
{
  pp_ctx *ctx;
  pp_model *m;
  pp_cluster *c, *h;
  struct rce x;
  (void)state;
  /* The model and cluster come from a context of their own, with the C
  ** library's allocator: the sweep counts only the plan's work. */
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  m = small_model(ctx);
  c = small_cluster(ctx);
  x.f = tmpfile();
  assert_non_null(x.f);
  x.m = m;
  x.c = c;
  x.simulate = 0;
  x.text = design_plan;
  sweep("read+check+evaluate design plan", op_read_check_eval, &x);
  x.text = names_plan;
  sweep("read+check+evaluate names plan", op_read_check_eval, &x);
  x.text = tp_plan;
  sweep("read+check+evaluate tp plan", op_read_check_eval, &x);
  x.simulate = 1;
  sweep("read+check+evaluate+simulate tp plan", op_read_check_eval, &x);
  /* The builder alone, its vectors growing; an add that fails makes
  ** finish fail with its status. */
  sweep("build 20 stages x 4 replicas", op_build, NULL);
  /* Names resolved against a link-graph cluster. */
  assert_int_equal(
      pp_cluster_load(ctx, tu_path("examples/cluster-links.json"), &h), PP_OK);
  x.c = h;
  x.simulate = 0;
  x.text = PLAN("\"tp\": 2,", "{\"ops\": [\"a\", \"b\"], \"replicas\": "
                              "[[\"n0g0\", \"n0g1\"], [\"n1g0\", \"n1g1\"]]}, "
                              "{\"ops\": [\"c\", \"d\", \"e\"], \"replicas\": "
                              "[[\"n0g2\", \"n0g3\"], [\"n1g2\", \"n1g3\"]]}");
  {
    char *copy = strdup(x.text);
    assert_non_null(copy);
    x.text = copy;
    sweep("read+check+evaluate on a link graph", op_read_check_eval, &x);
    free(copy);
  }
  fclose(x.f);
  pp_cluster_destroy(h);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
  pp_ctx_destroy(ctx);
}

/* ---- mutation fuzz ---------------------------------------------------- */

static const char fuzz_bytes[] = "0123456789-+.eE[]{}\":, \n\tabcdegnrstuxy";

/* Apply one random mutation to buf (len bytes, capacity cap); a safe one
** changes a digit, which keeps the text JSON unless it makes a leading
** zero. */
static size_t mutate(uint64_t *rs, char *buf, size_t len, size_t cap, int safe)
{
  uint32_t kind = safe ? 9 : tu_rand(rs, 13);
  size_t i = len ? tu_rand(rs, (uint32_t)len) : 0, n;
  char ch = tu_rand(rs, 8) == 0
                ? (char)tu_rand(rs, 256)
                : fuzz_bytes[tu_rand(rs, sizeof fuzz_bytes - 1)];
  switch (kind) {
  case 0:
  case 1:
  case 2: /* replace a byte */
    if (len)
      buf[i] = ch;
    return len;
  case 3:
  case 4: /* insert a byte */
    if (len + 1 > cap)
      return len;
    memmove(buf + i + 1, buf + i, len - i);
    buf[i] = ch;
    return len + 1;
  case 5:
  case 6: /* delete a run */
    n = 1 + tu_rand(rs, 8);
    if (i + n > len)
      n = len - i;
    memmove(buf + i, buf + i + n, len - i - n);
    return len - n;
  case 7: /* duplicate a run */
    n = 1 + tu_rand(rs, 16);
    if (i + n > len)
      n = len - i;
    if (len + n > cap)
      return len;
    memmove(buf + i + n, buf + i, len - i);
    return len + n;
  case 8: /* a digit becomes a long number */
    for (; i < len && (buf[i] < '0' || buf[i] > '9'); i++)
      ;
    if (i < len && len + 12 <= cap) {
      memmove(buf + i + 12, buf + i, len - i);
      memcpy(buf + i, tu_rand(rs, 2) ? "999999999999" : "000000000000", 12);
      return len + 12;
    }
    return len;
  case 9:
  case 10:
  case 11: /* a digit becomes another: the text stays JSON */
    for (n = 0; n < len; n++, i = (i + 1) % len)
      if (buf[i] >= '0' && buf[i] <= '9') {
        buf[i] = (char)('0' + tu_rand(rs, 10));
        break;
      }
    return len;
  default: /* truncate */ return i;
  }
}

static void t_fuzz(void **state)
{
  pp_ctx *ctx;
  pp_model *m;
  pp_cluster *c;
  const char *seeds[3];
  uint64_t rs = 0x9e3779b97f4a7c15ull;
  size_t cap = 4096;
  int iter, nok = 0, nread = 0, ncheck = 0, nsim = 0;
  (void)state;
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  m = small_model(ctx);
  c = small_cluster(ctx);
  seeds[0] = design_plan;
  seeds[1] = names_plan;
  seeds[2] = tp_plan;
  for (iter = 0; iter < 4000; iter++) {
    const char *seed = seeds[iter % 3];
    size_t len = strlen(seed), k, nmut = 1 + tu_rand(&rs, 4);
    char *buf = malloc(cap);
    char *text;
    pp_plan *p = (pp_plan *)&p;
    int named = tu_rand(&rs, 4) != 0;
    pp_status rc;
    assert_non_null(buf);
    memcpy(buf, seed, len);
    for (k = 0; k < nmut; k++)
      len = mutate(&rs, buf, len, cap, iter % 2);
    /* Exactly len bytes, no terminator: a read past the end is caught
    ** by the sanitizers. */
    text = malloc(len ? len : 1);
    assert_non_null(text);
    memcpy(text, buf, len);
    free(buf);
    pp_ctx_clear_error(ctx);
    rc = pp_plan_read_json(ctx, text, len, "fuzz.json", named ? m : NULL,
                           named ? c : NULL, &p);
    if (rc != PP_OK) {
      assert_null(p);
      if (pp_ctx_errmsg(ctx)[0] == '\0' || pp_ctx_errcode(ctx) != rc)
        fail_msg("iteration %d: status %d, message '%s'", iter, rc,
                 pp_ctx_errmsg(ctx));
      free(text);
      continue;
    }
    nread++;
    {
      /* The normalized text reads back and writes the same bytes. */
      size_t l1, l2;
      char *t1 = plan_text(ctx, p, &l1), *t2;
      pp_plan *q = NULL;
      if (pp_plan_read_json(ctx, t1, l1, "again.json", NULL, NULL, &q))
        fail_msg("iteration %d: the written plan does not read: %s\n%s", iter,
                 pp_ctx_errmsg(ctx), t1);
      t2 = plan_text(ctx, q, &l2);
      assert_int_equal(l1, l2);
      assert_memory_equal(t1, t2, l1);
      free(t1);
      free(t2);
      pp_plan_destroy(q);
    }
    rc = pp_plan_check(ctx, p, m, c);
    if (rc == PP_OK) {
      pp_cost_params cp;
      pp_eval *e = (pp_eval *)&e;
      pp_eval_summary s;
      ncheck++;
      pp_cost_params_init(&cp);
      rc = pp_evaluate(ctx, p, m, c, &cp, &e);
      if (rc == PP_OK) {
        nok++;
        assert_int_equal(pp_eval_get_summary(e, &s), PP_OK);
        if (!(s.iteration_ms >= 0) || !(s.lower_bound_ms >= 0))
          fail_msg("iteration %d: iteration %g ms, lower bound %g ms", iter,
                   s.iteration_ms, s.lower_bound_ms);
        pp_eval_destroy(e);
        /* Simulate the small ones. */
        {
          int32_t st;
          int64_t most = 0;
          for (st = 0; st < pp_plan_nstage(p); st++)
            if (pp_plan_stage_micro_batches(p, st) > most)
              most = pp_plan_stage_micro_batches(p, st);
          if (most <= 64) {
            pp_sim *sim = (pp_sim *)&sim;
            cp.record = (int)(iter & 1);
            rc = pp_simulate(ctx, p, m, c, &cp, &sim);
            if (rc == PP_OK) {
              nsim++;
              pp_sim_destroy(sim);
            } else {
              assert_null(sim);
            }
          }
        }
      } else {
        assert_null(e);
      }
    }
    if (rc != PP_OK &&
        (pp_ctx_errmsg(ctx)[0] == '\0' || pp_ctx_errcode(ctx) != rc))
      fail_msg("iteration %d: status %d, message '%s'", iter, rc,
               pp_ctx_errmsg(ctx));
    pp_plan_destroy(p);
    free(text);
  }
  print_message("fuzz: 4000 mutants, %d read, %d checked, %d evaluated, %d "
                "simulated\n",
                nread, ncheck, nok, nsim);
  /* The mutations are mild enough that some plans survive. */
  assert_true(nread > 100);
  assert_true(nok > 20);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
  pp_ctx_destroy(ctx);
}

/* ---- the command line ------------------------------------------------- */

struct run {
  int rc;
  char *out, *err;
};

#if defined(__GNUC__)
static struct run run(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
#endif
static struct run run(const char *fmt, ...)
{
  char args[6000];
  char *o = NULL, *e = NULL;
  struct run r;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  r.rc = tu_run(args, &o, &e);
  r.out = strdup(o);
  r.err = strdup(e);
  assert_non_null(r.out);
  assert_non_null(r.err);
  return r;
}

static void run_free(struct run *r)
{
  free(r->out);
  free(r->err);
}

static void expect_contains(const char *hay, const char *needle)
{
  if (!strstr(hay, needle))
    fail_msg("output lacks \"%s\":\n%s", needle, hay);
}

static void expect_exit(const struct run *r, int rc)
{
  if (r->rc != rc)
    fail_msg("exit status %d, expected %d\nstdout: %s\nstderr: %s", r->rc, rc,
             r->out, r->err);
}

/* A failed run: exit 1, and stderr starts "parplan: " and contains want. */
static void expect_failure(const struct run *r, const char *want)
{
  expect_exit(r, 1);
  if (strncmp(r->err, "parplan: ", 9) != 0)
    fail_msg("stderr does not start with \"parplan: \": %s", r->err);
  if (want)
    expect_contains(r->err, want);
}

static json_t *parse_json(const char *text)
{
  json_error_t err;
  json_t *j = json_loads(text, 0, &err);
  if (!j)
    fail_msg("not valid JSON (%d:%d: %s):\n%s", err.line, err.column, err.text,
             text);
  return j;
}

static double jnum(const json_t *o, const char *key)
{
  const json_t *v = json_object_get(o, key);
  if (!json_is_number(v))
    fail_msg("field \"%s\" is not a number", key);
  return json_number_value(v);
}

/* A plan file under the test's directory; returns its path (static). */
static const char *plan_file(const char *name, const char *text)
{
  static char path[600];
  FILE *f;
  snprintf(path, sizeof path, "%s", tu_tmp(name));
  f = fopen(path, "wb");
  assert_non_null(f);
  assert_true(fputs(text, f) >= 0);
  assert_int_equal(fclose(f), 0);
  return path;
}

#define GPT2 "--model gpt2-amp --cluster amp-het-cluster"

static void t_cli_evaluate(void **state)
{
  char plan[600], half[600];
  struct run r;
  json_t *j, *mem;
  size_t i;
  (void)state;
  snprintf(plan, sizeof plan, "%s", tu_path("examples/plan-gpt2-amp.json"));

  r = run("evaluate %s %s", plan, GPT2);
  expect_exit(&r, 0);
  expect_contains(r.out, "iteration");
  assert_string_equal(r.err, "");
  run_free(&r);

  r = run("evaluate %s %s --json", plan, GPT2);
  expect_exit(&r, 0);
  j = parse_json(r.out);
  assert_true(jnum(j, "iteration_ms") > 0);
  assert_true(jnum(j, "lower_bound_ms") > 0);
  assert_true(jnum(j, "lower_bound_ms") <= jnum(j, "iteration_ms"));
  assert_true(json_is_true(json_object_get(j, "fits")));
  mem = json_object_get(j, "memory_bytes");
  assert_true(json_is_array(mem));
  assert_int_equal(json_array_size(mem), 16);
  for (i = 0; i < 16; i++)
    assert_true(json_is_integer(json_array_get(mem, i)) &&
                json_integer_value(json_array_get(mem, i)) > 0);
  json_decref(j);
  run_free(&r);

  /* Two stages on devices 0 and 4 only: every other device is null. */
  snprintf(half, sizeof half, "%s",
           plan_file("half.json",
                     "{\"global_batch\": 8, \"micro_batch\": 1, \"stages\": "
                     "[{\"ops\": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, "
                     "13, 14], \"replicas\": [[\"n0g0\"]]},\n{\"ops\": [15, "
                     "16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, "
                     "29], \"replicas\": [[4]]}]}\n"));
  r = run("evaluate %s %s --json", half, GPT2);
  expect_exit(&r, 0);
  j = parse_json(r.out);
  mem = json_object_get(j, "memory_bytes");
  assert_int_equal(json_array_size(mem), 16);
  for (i = 0; i < 16; i++)
    if (i == 0 || i == 4)
      assert_true(json_is_integer(json_array_get(mem, i)));
    else if (!json_is_null(json_array_get(mem, i)))
      fail_msg("memory_bytes[%zu] of an unused device is not null", i);
  json_decref(j);
  run_free(&r);

  /* AMP's cost model. */
  r = run("evaluate %s %s --cost-model amp", plan, GPT2);
  expect_exit(&r, 0);
  expect_contains(r.out, "iteration");
  run_free(&r);
  r = run("evaluate %s %s --cost-model amp --json", plan, GPT2);
  expect_exit(&r, 0);
  j = parse_json(r.out);
  assert_true(jnum(j, "iteration_ms") > 0);
  assert_true(json_is_string(json_object_get(j, "cost_model")));
  assert_string_equal(json_string_value(json_object_get(j, "cost_model")),
                      "amp");
  json_decref(j);
  run_free(&r);

  /* -o writes the normalized plan, which evaluates the same. */
  {
    char out[600], *t1, *t2;
    struct run r2;
    snprintf(out, sizeof out, "%s", tu_tmp("normalized.json"));
    r = run("evaluate %s %s --json -o %s", half, GPT2, out);
    expect_exit(&r, 0);
    t1 = tu_slurp(out, NULL);
    assert_non_null(t1);
    expect_contains(t1, "\"replicas\": [[0]]");
    r2 = run("evaluate %s %s --json", out, GPT2);
    expect_exit(&r2, 0);
    {
      json_t *a = parse_json(r.out), *b = parse_json(r2.out);
      assert_true(jnum(a, "iteration_ms") == jnum(b, "iteration_ms"));
      json_decref(a);
      json_decref(b);
    }
    run_free(&r2);
    run_free(&r);
    /* Byte-identical across runs. */
    r = run("evaluate %s %s -o %s", out, GPT2, out);
    expect_exit(&r, 0);
    t2 = tu_slurp(out, NULL);
    assert_non_null(t2);
    assert_string_equal(t1, t2);
    free(t1);
    free(t2);
    run_free(&r);
  }

  /* Names need the model and cluster the command loads. */
  {
    char mp[4096], cp[4096];
    snprintf(mp, sizeof mp, "%s", tu_path("examples/model-minimal.json"));
    snprintf(cp, sizeof cp, "%s", tu_path("examples/cluster-minimal.json"));
    r = run("evaluate %s --model %s --cluster %s",
            tu_path("examples/plan-minimal.json"), mp, cp);
    expect_exit(&r, 0);
    expect_contains(r.out, "iteration");
    run_free(&r);
  }
}

static void t_cli_does_not_fit(void **state)
{
  char text[2048], plan[600];
  size_t off;
  int v;
  struct run r;
  json_t *j;
  (void)state;
  /* All of GPT-2 on one T4, 64 micro-batches in flight (GPipe). */
  off = (size_t)snprintf(text, sizeof text,
                         "{\"global_batch\": 64, \"schedule\": \"gpipe\", "
                         "\"stages\": [{\"ops\": [");
  for (v = 0; v < 30; v++)
    off +=
        (size_t)snprintf(text + off, sizeof text - off, v ? ", %d" : "%d", v);
  snprintf(text + off, sizeof text - off, "], \"replicas\": [[12]]}]}\n");
  snprintf(plan, sizeof plan, "%s", plan_file("t4.json", text));

  r = run("evaluate %s %s", plan, GPT2);
  expect_exit(&r, 3);
  {
    /* Which device, how much it needs, how much it has. */
    size_t n = strlen(r.out) + strlen(r.err) + 2;
    char *all = malloc(n);
    assert_non_null(all);
    snprintf(all, n, "%s\n%s", r.out, r.err);
    expect_contains(all, "does not fit");
    expect_contains(all, "n3g0");
    expect_contains(all, "needs");
    expect_contains(all, "has");
    expect_contains(all, "15.00 GiB"); /* a T4's capacity */
    free(all);
  }
  run_free(&r);

  r = run("evaluate %s %s --json", plan, GPT2);
  expect_exit(&r, 3);
  j = parse_json(r.out);
  assert_true(json_is_false(json_object_get(j, "fits")));
  {
    json_t *mem = json_object_get(j, "memory_bytes");
    assert_int_equal(json_array_size(mem), 16);
    assert_true(json_integer_value(json_array_get(mem, 12)) > (json_int_t)15
                                                                  << 30);
    assert_true(json_is_null(json_array_get(mem, 0)));
  }
  json_decref(j);
  run_free(&r);

  r = run("simulate %s %s --json", plan, GPT2);
  expect_exit(&r, 3);
  j = parse_json(r.out);
  assert_true(json_is_false(json_object_get(j, "fits")));
  json_decref(j);
  run_free(&r);

  /* A plan that fits, until 100 GiB are reserved on every device. */
  r = run("evaluate %s %s --reserve-gb 100",
          tu_path("examples/plan-gpt2-amp.json"), GPT2);
  expect_exit(&r, 3);
  expect_contains(r.out, "does not fit");
  expect_contains(r.out, "needs");
  run_free(&r);
}

static void t_cli_simulate(void **state)
{
  char plan[600], trace[600];
  struct run r;
  json_t *j, *peak, *ev;
  char *t;
  (void)state;
  snprintf(plan, sizeof plan, "%s", tu_path("examples/plan-gpt2-amp.json"));
  snprintf(trace, sizeof trace, "%s", tu_tmp("trace.json"));

  r = run("simulate %s %s --trace %s", plan, GPT2, trace);
  expect_exit(&r, 0);
  expect_contains(r.out, "iteration");
  run_free(&r);
  t = tu_slurp(trace, NULL);
  assert_non_null(t);
  j = parse_json(t);
  ev = json_object_get(j, "traceEvents");
  assert_true(json_is_array(ev));
  assert_true(json_array_size(ev) > 100);
  json_decref(j);
  free(t);

  r = run("simulate %s %s --json", plan, GPT2);
  expect_exit(&r, 0);
  j = parse_json(r.out);
  assert_true(jnum(j, "iteration_ms") > 0);
  peak = json_object_get(j, "peak_memory_bytes");
  assert_true(json_is_array(peak));
  assert_int_equal(json_array_size(peak), 16);
  assert_true(json_integer_value(json_array_get(peak, 0)) > 0);
  json_decref(j);
  run_free(&r);

  /* MadPipe's special processor: one device holds stages 0 and 3. */
  {
    char mp[4096];
    snprintf(mp, sizeof mp, "%s", tu_path("examples/model-dag.json"));
    r = run("simulate %s --model %s --cluster amp-het-cluster --json",
            tu_path("examples/plan-dag-special.json"), mp);
    expect_exit(&r, 0);
    j = parse_json(r.out);
    assert_true(jnum(j, "iteration_ms") > 0);
    json_decref(j);
    run_free(&r);
  }

  /* AMP's cost model is for evaluate only. */
  r = run("simulate %s %s --cost-model amp", plan, GPT2);
  expect_failure(&r, "--cost-model amp");
  run_free(&r);
}

static void t_cli_errors(void **state)
{
  char plan[600], bad[600];
  struct run r;
  (void)state;
  snprintf(plan, sizeof plan, "%s", tu_path("examples/plan-gpt2-amp.json"));

  /* A plan the checker rejects: the message names the file and the
  ** operator. */
  snprintf(bad, sizeof bad, "%s",
           plan_file("bad.json",
                     "{\"global_batch\": 8, \"stages\": [{\"ops\": [0, 1, 2], "
                     "\"replicas\": [[0]]}]}\n"));
  r = run("evaluate %s %s", bad, GPT2);
  expect_failure(&r, "bad.json");
  expect_contains(r.err, "operator 'layer2' (index 3) is in no stage");
  assert_string_equal(r.out, "");
  run_free(&r);
  r = run("simulate %s %s", bad, GPT2);
  expect_failure(&r, "is in no stage");
  run_free(&r);

  /* Malformed: file, line and column. */
  snprintf(bad, sizeof bad, "%s",
           plan_file("broken.json", "{\"global_batch\": 8,\n \"stages\": [\n"));
  r = run("evaluate %s %s", bad, GPT2);
  expect_failure(&r, "broken.json:3:");
  run_free(&r);

  /* An unknown device name. */
  snprintf(bad, sizeof bad, "%s",
           plan_file("dev.json",
                     "{\"global_batch\": 8, \"stages\": [{\"ops\": [0], "
                     "\"replicas\": [[\"n9g9\"]]}]}\n"));
  r = run("evaluate %s %s", bad, GPT2);
  expect_failure(&r, "device 'n9g9' does not exist");
  run_free(&r);

  /* A plan file that does not exist. */
  r = run("evaluate %s %s", tu_tmp("nothing-here.json"), GPT2);
  expect_failure(&r, "nothing-here.json");
  run_free(&r);

  /* Usage. */
  r = run("evaluate %s --cluster amp-het-cluster", plan);
  expect_failure(&r, "--model");
  run_free(&r);
  r = run("evaluate %s --model gpt2-amp", plan);
  expect_failure(&r, "--cluster");
  run_free(&r);
  r = run("simulate %s --cluster amp-het-cluster", plan);
  expect_failure(&r, "--model");
  run_free(&r);
  r = run("evaluate %s", GPT2);
  expect_failure(&r, "PLAN");
  run_free(&r);
  r = run("evaluate %s %s --cost-model ours", plan, GPT2);
  expect_failure(&r, "--cost-model");
  run_free(&r);
  r = run("evaluate %s %s --reserve-gb -1", plan, GPT2);
  expect_failure(&r, "--reserve-gb");
  run_free(&r);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      TU_CTX_TEST(t_design_minimal),
      TU_CTX_TEST(t_roundtrip),
      TU_CTX_TEST(t_names),
      TU_CTX_TEST(t_malformed),
      TU_CTX_TEST(t_missing_and_types),
      TU_CTX_TEST(t_numbers),
      TU_CTX_TEST(t_enums),
      TU_CTX_TEST(t_structure),
      TU_CTX_TEST(t_many_stages),
      TU_CTX_TEST(t_builder),
      TU_CTX_TEST(t_stage_tp),
      cmocka_unit_test(t_alloc_sweep),
      cmocka_unit_test(t_fuzz),
      cmocka_unit_test(t_cli_evaluate),
      cmocka_unit_test(t_cli_does_not_fit),
      cmocka_unit_test(t_cli_simulate),
      cmocka_unit_test(t_cli_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
