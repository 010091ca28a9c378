/* SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* One lock for every counting allocator: the planner calls it from
** several threads. */
static pthread_mutex_t tu_lock = PTHREAD_MUTEX_INITIALIZER;

static void *tu_allocf_locked(struct tu_alloc *a, void *ptr, size_t osize,
                              size_t nsize)
{
  if (nsize == 0) {
    if (ptr) {
      a->live--;
      a->bytes -= osize;
      free(ptr);
    }
    return NULL;
  }
  a->count++;
  if (a->fail_at > 0 && a->count == a->fail_at)
    return NULL;
  {
    void *p = realloc(ptr, nsize);
    if (!p)
      return NULL;
    if (!ptr)
      a->live++;
    a->bytes += nsize - (ptr ? osize : 0);
    return p;
  }
}

static void *tu_allocf(void *ud, void *ptr, size_t osize, size_t nsize)
{
  void *p;
  pthread_mutex_lock(&tu_lock);
  p = tu_allocf_locked(ud, ptr, osize, nsize);
  pthread_mutex_unlock(&tu_lock);
  return p;
}

pp_ctx *tu_ctx(struct tu_alloc *a)
{
  pp_ctx_params p;
  pp_ctx *ctx = NULL;
  memset(a, 0, sizeof *a);
  pp_ctx_params_init(&p);
  p.alloc = tu_allocf;
  p.alloc_ud = a;
  assert_int_equal(pp_ctx_create(&p, &ctx), PP_OK);
  return ctx;
}

void tu_reset(struct tu_alloc *a, long fail_at)
{
  a->count = 0;
  a->fail_at = fail_at;
}

pp_status tu_model_json(pp_ctx *ctx, const char *json, pp_model **out)
{
  return pp_model_read_json(ctx, json, strlen(json), "test.json", out);
}

pp_status tu_cluster_json(pp_ctx *ctx, const char *json, pp_cluster **out)
{
  return pp_cluster_read_json(ctx, json, strlen(json), "test.json", out);
}

const char *tu_path(const char *rel)
{
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s/%s", PP_SOURCE_DIR, rel);
  return buf;
}

const char *tu_tmp(const char *name)
{
  static char dir[256], buf[512];
  if (!dir[0]) {
    snprintf(dir, sizeof dir, "/tmp/parplan-test-XXXXXX");
    if (!mkdtemp(dir))
      fail_msg("mkdtemp failed");
  }
  snprintf(buf, sizeof buf, "%s/%s", dir, name);
  return buf;
}

char *tu_slurp(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  size_t cap = 0, n = 0, got;
  if (!f)
    return NULL;
  do {
    if (n + 4096 + 1 > cap) {
      cap = cap ? cap * 2 : 8192;
      buf = realloc(buf, cap);
      assert_non_null(buf);
    }
    got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
  } while (got > 0);
  fclose(f);
  buf[n] = '\0';
  if (len)
    *len = n;
  return buf;
}

int tu_sh(const char *command, char **out, char **err)
{
  static char *obuf, *ebuf;
  char cmd[16384];
  const char *o = tu_tmp("run.out"), *e;
  char opath[512];
  int st;
  snprintf(opath, sizeof opath, "%s", o);
  e = tu_tmp("run.err");
  snprintf(cmd, sizeof cmd, "%s >'%s' 2>'%s' </dev/null", command, opath, e);
  st = system(cmd);
  free(obuf);
  free(ebuf);
  obuf = tu_slurp(opath, NULL);
  ebuf = tu_slurp(e, NULL);
  if (out)
    *out = obuf ? obuf : (char *)"";
  if (err)
    *err = ebuf ? ebuf : (char *)"";
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int tu_run(const char *args, char **out, char **err)
{
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "%s %s", PP_TOOL, args);
  return tu_sh(cmd, out, err);
}

void tu_expect_error(pp_ctx *ctx, pp_status got, pp_status rc, ...)
{
  va_list ap;
  const char *s, *msg = pp_ctx_errmsg(ctx);
  if (got != rc)
    fail_msg("expected status %d (%s), got %d; message: %s", rc,
             pp_status_str(rc), got, msg);
  if (pp_ctx_errcode(ctx) != rc)
    fail_msg("context holds status %d, expected %d: %s", pp_ctx_errcode(ctx),
             rc, msg);
  va_start(ap, rc);
  while ((s = va_arg(ap, const char *)) != NULL)
    if (!strstr(msg, s)) {
      va_end(ap);
      fail_msg("message lacks \"%s\": %s", s, msg);
    }
  va_end(ap);
  pp_ctx_clear_error(ctx);
}

uint32_t tu_rand(uint64_t *state, uint32_t n)
{
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return (uint32_t)(*state % n);
}

bool tu_next_perm(int *p, int n)
{
  int i = n - 2, j, t;
  while (i >= 0 && p[i] > p[i + 1])
    i--;
  if (i < 0)
    return false;
  for (j = n - 1; p[j] < p[i]; j--)
    ;
  t = p[i];
  p[i] = p[j];
  p[j] = t;
  for (i++, j = n - 1; i < j; i++, j--) {
    t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
  return true;
}

void tu_star_groups(const double *load, int n, double T, int *g)
{
  double *pre = malloc(sizeof *pre * (size_t)(n + 1));
  int i, end = n, gi = 1;
  assert_non_null(pre);
  pre[0] = 0;
  for (i = 0; i < n; i++)
    pre[i + 1] = pre[i] + load[i];
  while (end > 0) {
    /* smallest lo < end with pre[end] - pre[lo] <= T; at least one */
    int lo = 0, hi = end - 1;
    while (lo < hi) {
      int mid = (lo + hi) / 2;
      if (pre[end] - pre[mid] <= T * (1 + 1e-12))
        hi = mid;
      else
        lo = mid + 1;
    }
    for (i = lo; i < end; i++)
      g[i] = gi;
    gi++;
    end = lo;
  }
  free(pre);
}

pp_model *tu_model_ops(pp_ctx *ctx, int n, const struct tu_op *ops,
                       const int (*extra)[2], int nextra)
{
  pp_model_builder *b;
  pp_model *m = NULL;
  int i;
  assert_int_equal(pp_model_builder_create(ctx, "t", NULL, &b), PP_OK);
  for (i = 0; i < n; i++) {
    pp_op_desc d;
    char name[16];
    pp_op_desc_init(&d);
    snprintf(name, sizeof name, "o%d", i);
    d.name = name;
    d.fwd_ms = ops[i].f;
    d.bwd_ms = ops[i].b;
    d.update_ms = ops[i].u;
    d.param_bytes = ops[i].param;
    d.out_bytes = ops[i].out;
    d.saved_bytes = ops[i].saved;
    assert_int_equal(pp_model_builder_add_op(b, &d, NULL), PP_OK);
  }
  if (nextra > 0) {
    for (i = 0; i + 1 < n; i++)
      assert_int_equal(pp_model_builder_add_edge(b, i, i + 1, -1), PP_OK);
    for (i = 0; i < nextra; i++)
      assert_int_equal(
          pp_model_builder_add_edge(b, extra[i][0], extra[i][1], -1), PP_OK);
  }
  if (pp_model_builder_finish(b, &m) != PP_OK)
    fail_msg("model: %s", pp_ctx_errmsg(ctx));
  return m;
}

/* ---- fixtures ----------------------------------------------------------- */

int tu_fix_setup(void **state, const char *model, const char *cluster)
{
  struct tu_fix *f = calloc(1, sizeof *f);
  if (!f)
    return -1;
  f->ctx = tu_ctx(&f->a);
  *state = f;
  if (model && pp_model_load(f->ctx, model, &f->m) != PP_OK) {
    print_error("fixture: model %s: %s\n", model, pp_ctx_errmsg(f->ctx));
    tu_teardown(state); /* cmocka runs no teardown after a failed setup */
    return -1;
  }
  if (cluster && pp_cluster_load(f->ctx, cluster, &f->c) != PP_OK) {
    print_error("fixture: cluster %s: %s\n", cluster, pp_ctx_errmsg(f->ctx));
    tu_teardown(state);
    return -1;
  }
  return 0;
}

int tu_setup_ctx(void **state)
{
  return tu_fix_setup(state, NULL, NULL);
}

int tu_setup_gpt2(void **state)
{
  return tu_fix_setup(state, "gpt2-amp", "amp-het-cluster");
}

pp_ctx *tu_fix_ctx(void **state)
{
  return ((struct tu_fix *)*state)->ctx;
}

int tu_teardown(void **state)
{
  struct tu_fix *f = *state;
  long live;
  size_t bytes;
  if (!f)
    return 0;
  pp_cluster_destroy(f->c);
  pp_model_destroy(f->m);
  pp_ctx_destroy(f->ctx);
  live = f->a.live;
  bytes = f->a.bytes;
  free(f);
  *state = NULL;
  if (live != 0 || bytes != 0) {
    print_error("teardown: %ld blocks, %zu bytes still live (a leak, or a "
                "free told the wrong size)\n",
                live, bytes);
    return -1;
  }
  return 0;
}

/* ---- small models, clusters and plans ----------------------------------- */

void tu_near(double got, double want, const char *what)
{
  double tol = 1e-9 * (fabs(want) > 1 ? fabs(want) : 1);
  if (!(fabs(got - want) <= tol))
    fail_msg("%s: got %.12g, expected %.12g", what, got, want);
}

pp_cluster *tu_cluster(pp_ctx *ctx, int ndev, const int *type,
                       const double *speeds, int ntype, const int *node,
                       const double *bw, double gbps, double lat_us,
                       double mem_gib)
{
  pp_cluster_builder *b;
  pp_cluster *c = NULL;
  double m[TU_MAXDEV * TU_MAXDEV];
  char names[TU_MAXDEV][16], tnames[4][16];
  int i, j;
  assert_true(ndev <= TU_MAXDEV && ntype <= 4);
  assert_int_equal(pp_cluster_builder_create(ctx, "c", NULL, &b), PP_OK);
  for (i = 0; i < ntype; i++) {
    pp_device_type_desc t;
    pp_device_type_desc_init(&t);
    snprintf(tnames[i], sizeof tnames[i], "t%d", i);
    t.name = tnames[i];
    t.memory_gib = mem_gib;
    t.speed = speeds[i];
    assert_int_equal(pp_cluster_builder_add_type(b, &t), PP_OK);
  }
  for (i = 0; i < ndev; i++) {
    pp_device_desc d;
    pp_device_desc_init(&d);
    snprintf(names[i], sizeof names[i], "g%d", i);
    d.name = names[i];
    d.type = tnames[type ? type[i] : 0];
    d.node = node ? node[i] : i;
    assert_int_equal(pp_cluster_builder_add_device(b, &d, NULL), PP_OK);
  }
  for (i = 0; i < ndev; i++)
    for (j = 0; j < ndev; j++)
      m[i * ndev + j] = i == j ? 0 : bw ? bw[i * ndev + j] : gbps;
  if (ndev > 1)
    assert_int_equal(pp_cluster_builder_set_bandwidth(b, m, ndev), PP_OK);
  if (lat_us > 0)
    assert_int_equal(pp_cluster_builder_set_latency(b, lat_us), PP_OK);
  if (pp_cluster_builder_finish(b, &c) != PP_OK)
    fail_msg("cluster: %s", pp_ctx_errmsg(ctx));
  return c;
}

pp_plan *tu_plan(pp_ctx *ctx, const struct tu_plan_spec *x)
{
  pp_plan_params pp;
  pp_plan_builder *b;
  pp_plan *p = NULL;
  int s, r, i;
  pp_plan_params_init(&pp);
  pp.global_batch = x->gbs;
  pp.micro_batch = x->mbs ? x->mbs : 1;
  pp.tp = x->tp ? x->tp : 1;
  pp.schedule = x->sched;
  pp.recompute = x->recompute;
  pp.optimizer = x->opt;
  pp.period_ms = x->period;
  assert_int_equal(pp_plan_builder_create(ctx, &pp, "t.plan", &b), PP_OK);
  for (s = 0; s < x->S; s++) {
    int32_t ops[TU_MAXOP], n = 0, id;
    for (i = x->lo[s]; i < x->lo[s + 1]; i++)
      ops[n++] = i;
    assert_int_equal(pp_plan_builder_add_stage(b, ops, n, &id), PP_OK);
    for (r = 0; r < x->R[s]; r++) {
      int32_t devs[TU_MAXDEV];
      for (i = 0; i < pp.tp; i++)
        devs[i] = x->dev[s][r * pp.tp + i];
      assert_int_equal(pp_plan_builder_add_replica(b, s, devs), PP_OK);
    }
  }
  if (pp_plan_builder_finish(b, &p) != PP_OK)
    fail_msg("plan: %s", pp_ctx_errmsg(ctx));
  return p;
}

void tu_lay_out(struct tu_plan_spec *x, int R)
{
  int s, r, t, tp = x->tp ? x->tp : 1;
  for (s = 0; s < x->S; s++) {
    x->R[s] = R;
    for (r = 0; r < R; r++)
      for (t = 0; t < tp; t++)
        x->dev[s][r * tp + t] = (s * R + r) * tp + t;
  }
}

void tu_spec(struct tu_plan_spec *x, int S, int per, int R, int64_t gbs,
             pp_schedule sc)
{
  int s;
  memset(x, 0, sizeof *x);
  x->S = S;
  x->gbs = gbs;
  x->sched = sc;
  for (s = 0; s <= S; s++)
    x->lo[s] = s * per;
  tu_lay_out(x, R);
}

void tu_built_free(struct tu_built *b)
{
  pp_sim_destroy(b->s);
  pp_eval_destroy(b->e);
  pp_plan_destroy(b->p);
  pp_cluster_destroy(b->c);
  pp_model_destroy(b->m);
  memset(b, 0, sizeof *b);
}

pp_eval *tu_eval(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                 const pp_cluster *c, pp_allreduce ar)
{
  pp_cost_params cp;
  pp_eval *e = NULL;
  pp_cost_params_init(&cp);
  cp.allreduce = ar;
  if (pp_evaluate(ctx, p, m, c, &cp, &e) != PP_OK)
    fail_msg("evaluate: %s", pp_ctx_errmsg(ctx));
  return e;
}

pp_sim *tu_sim(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
               const pp_cluster *c, pp_allreduce ar, pp_sim_network net)
{
  pp_cost_params cp;
  pp_sim *s = NULL;
  pp_cost_params_init(&cp);
  cp.allreduce = ar;
  cp.network = net;
  if (pp_simulate(ctx, p, m, c, &cp, &s) != PP_OK)
    fail_msg("simulate: %s", pp_ctx_errmsg(ctx));
  return s;
}

double tu_sim_ms(const pp_sim *s)
{
  pp_sim_summary x;
  assert_int_equal(pp_sim_get_summary(s, &x), PP_OK);
  return x.iteration_ms;
}

double tu_eval_ms(const pp_eval *e)
{
  pp_eval_summary x;
  assert_int_equal(pp_eval_get_summary(e, &x), PP_OK);
  return x.iteration_ms;
}

int tu_order_inflight(const pp_sched_op *o, int64_t n, int64_t gas)
{
  int *st = calloc((size_t)(gas > 0 ? gas : 1), sizeof *st), live = 0, most = 0;
  int64_t i;
  assert_non_null(st);
  assert_int_equal(n, 2 * gas);
  for (i = 0; i < n; i++) {
    int32_t j = o[i].micro_batch;
    assert_true(j >= 0 && j < gas);
    if (o[i].kind == PP_TASK_FWD) {
      assert_int_equal(st[j], 0);
      st[j] = 1;
      if (++live > most)
        most = live;
    } else {
      assert_int_equal(o[i].kind, PP_TASK_BWD);
      assert_int_equal(st[j], 1);
      st[j] = 2;
      live--;
    }
  }
  free(st);
  return most;
}

bool tu_export_warned(const pp_export *x, const char *needle)
{
  int32_t i;
  for (i = 0; i < pp_export_nwarning(x); i++)
    if (strstr(pp_export_warning(x, i), needle))
      return true;
  return false;
}

void tu_random_cuts(uint64_t *rng, int n, int S, int *cut)
{
  int s;
  cut[0] = 0;
  for (s = 1; s < S; s++) {
    int lo = cut[s - 1] + 1, hi = n - (S - s);
    cut[s] = lo + (int)tu_rand(rng, (uint32_t)(hi - lo + 1));
  }
  cut[S] = n;
}

pp_status tu_cut_plan(pp_ctx *ctx, const pp_plan_params *pa, int S,
                      const int *cut, const int *R, int P, pp_plan **out)
{
  pp_plan_builder *b;
  int s, r, t, i, off[64];
  *out = NULL;
  assert_true(S <= 64 && P >= 1 && P <= S);
  assert_int_equal(pp_plan_builder_create(ctx, pa, "tu", &b), PP_OK);
  for (s = 0, off[0] = 0; s + 1 < P; s++)
    off[s + 1] = off[s] + R[s] * pa->tp;
  for (s = 0; s < S; s++) {
    int32_t ops[256], id, devs[64];
    for (i = cut[s]; i < cut[s + 1]; i++)
      ops[i - cut[s]] = i;
    assert_int_equal(
        pp_plan_builder_add_stage(b, ops, cut[s + 1] - cut[s], &id), PP_OK);
    for (r = 0; r < R[s]; r++) {
      for (t = 0; t < pa->tp; t++)
        devs[t] = off[s % P] + r * pa->tp + t;
      assert_int_equal(pp_plan_builder_add_replica(b, id, devs), PP_OK);
    }
  }
  return pp_plan_builder_finish(b, out);
}
