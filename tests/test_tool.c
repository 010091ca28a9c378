/* SPDX-License-Identifier: MIT */
/*
** The command line: what it prints, its exit codes (DESIGN: 0 success,
** 1 bad input or usage, 2 internal error), the files -o writes (complete
** or not at all, reloadable, byte-identical across runs) and its errors
** (one line starting "parplan: " that names the input).
*/
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- helpers ---------------------------------------------------------- */

/* Run the tool; keep private copies of its output (tu_run's buffers are
** reused by the next run). */
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
  r->out = r->err = NULL;
}

static void expect_contains(const char *hay, const char *needle)
{
  if (!strstr(hay, needle))
    fail_msg("output lacks \"%s\":\n%s", needle, hay);
}

static bool file_exists(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0;
}

/* A fresh empty directory for one test (under the run's temp dir). */
static const char *fresh_dir(const char *name)
{
  static char buf[512];
  snprintf(buf, sizeof buf, "%s", tu_tmp(name));
  if (mkdir(buf, 0777) != 0 && !file_exists(buf))
    fail_msg("mkdir %s failed", buf);
  return buf;
}

/* Number of entries of dir whose name starts with prefix. */
static int count_prefixed(const char *dir, const char *prefix)
{
  DIR *d = opendir(dir);
  struct dirent *de;
  int n = 0;
  assert_non_null(d);
  while ((de = readdir(d)) != NULL)
    if (strncmp(de->d_name, prefix, strlen(prefix)) == 0)
      n++;
  closedir(d);
  return n;
}

/* Number of entries of dir whose name contains ".tmp". */
static int count_tmp(const char *dir)
{
  DIR *d = opendir(dir);
  struct dirent *de;
  int n = 0;
  assert_non_null(d);
  while ((de = readdir(d)) != NULL)
    if (strstr(de->d_name, ".tmp"))
      n++;
  closedir(d);
  return n;
}

static void write_text(const char *path, const char *text)
{
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fputs(text, f) >= 0, 1);
  assert_int_equal(fclose(f), 0);
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

static json_int_t jint(const json_t *o, const char *key)
{
  const json_t *v = json_object_get(o, key);
  if (!json_is_integer(v))
    fail_msg("field \"%s\" is not an integer", key);
  return json_integer_value(v);
}

static const char *jstr(const json_t *o, const char *key)
{
  const json_t *v = json_object_get(o, key);
  if (!json_is_string(v))
    fail_msg("field \"%s\" is not a string", key);
  return json_string_value(v);
}

/* A failed run: exit 1, and stderr starts "parplan: " and contains want
** (if given). */
static void expect_usage_failure(struct run *r, const char *want)
{
  if (r->rc != 1)
    fail_msg("exit status %d, expected 1; stderr: %s", r->rc, r->err);
  if (strncmp(r->err, "parplan: ", 9) != 0)
    fail_msg("stderr does not start with \"parplan: \": %s", r->err);
  if (want)
    expect_contains(r->err, want);
}

/* ---- the default job -------------------------------------------------- */

static void test_default(void **state)
{
  struct run r = run("%s", ""); /* the default job: plan the default */
  (void)state;
  assert_int_equal(r.rc, 0);
  expect_contains(r.out, "plan for gpt2-amp on amp-het-cluster");
  expect_contains(r.out, "best:");
  assert_string_equal(r.err, "");
  run_free(&r);
  r = run("%s", "describe");
  assert_int_equal(r.rc, 0);
  expect_contains(r.out, "gpt2-amp");
  expect_contains(r.out, "amp-het-cluster");
  expect_contains(r.out, "V100");
  expect_contains(r.out, "T4");
  expect_contains(r.out, "operators    30");
  expect_contains(r.out, "16 on 4 nodes");
  assert_string_equal(r.err, "");
  run_free(&r);
}

static void test_default_json(void **state)
{
  struct run r = run("--json");
  json_t *j, *m, *c;
  (void)state;
  assert_int_equal(r.rc, 0);
  j = parse_json(r.out);
  assert_string_equal(jstr(j, "model"), "gpt2-amp");
  assert_true(json_array_size(json_object_get(j, "plans")) >= 1);
  json_decref(j);
  run_free(&r);
  r = run("describe --json");
  assert_int_equal(r.rc, 0);
  j = parse_json(r.out);
  m = json_object_get(j, "model");
  c = json_object_get(j, "cluster");
  assert_true(json_is_object(m));
  assert_true(json_is_object(c));
  assert_string_equal(jstr(m, "name"), "gpt2-amp");
  assert_string_equal(jstr(c, "name"), "amp-het-cluster");
  json_decref(j);
  run_free(&r);
}

/* ---- describe --json -------------------------------------------------- */

static void test_model_json(void **state)
{
  struct run r = run("model gpt2-amp --json");
  json_t *j, *kinds;
  (void)state;
  assert_int_equal(r.rc, 0);
  assert_string_equal(r.err, "");
  j = parse_json(r.out);
  assert_string_equal(jstr(j, "name"), "gpt2-amp");
  assert_string_equal(jstr(j, "reference_type"), "V100");
  assert_int_equal(jint(j, "operators"), 30);
  assert_int_equal(jint(j, "edges"), 29);
  assert_int_equal(jint(j, "micro_batch"), 1);
  assert_int_equal(jint(j, "depth"), 30);
  assert_int_equal(jint(j, "width"), 1);
  assert_int_equal(jint(j, "chain_layers"), 30);
  assert_true(json_is_true(json_object_get(j, "chain")));
  assert_true(json_is_array(json_object_get(j, "profiles")));
  /* V100 at tp 2 and 4, T4 at tp 2 and 4, at micro-batch 1 to 32 (the
  ** larger ones derived, scripts/gen_builtin_models.py), T4 at tp 1 */
  assert_int_equal(json_array_size(json_object_get(j, "profiles")), 25);
  kinds = json_object_get(j, "kinds");
  assert_int_equal(jint(kinds, "transformer_layer"), 24);
  assert_true(json_number_value(json_object_get(j, "fwd_ms")) > 0);
  json_decref(j);
  run_free(&r);
}

static void test_topo_json(void **state)
{
  struct run r = run("topo amp-het-cluster --json");
  json_t *j, *types, *t;
  size_t i;
  int v100 = 0, t4 = 0;
  (void)state;
  assert_int_equal(r.rc, 0);
  assert_string_equal(r.err, "");
  j = parse_json(r.out);
  assert_string_equal(jstr(j, "name"), "amp-het-cluster");
  assert_int_equal(jint(j, "devices"), 16);
  assert_int_equal(jint(j, "nodes"), 4);
  types = json_object_get(j, "types");
  assert_true(json_is_array(types));
  json_array_foreach(types, i, t)
  {
    if (!strcmp(jstr(t, "name"), "V100"))
      v100 = (int)jint(t, "count");
    else if (!strcmp(jstr(t, "name"), "T4"))
      t4 = (int)jint(t, "count");
  }
  assert_int_equal(v100, 12);
  assert_int_equal(t4, 4);
  assert_true(json_number_value(json_object_get(j, "min_GBps")) > 0);
  assert_true(json_number_value(json_object_get(j, "max_GBps")) >=
              json_number_value(json_object_get(j, "min_GBps")));
  json_decref(j);
  run_free(&r);
}

static void test_topo_links_json(void **state)
{
  struct run r =
      run("topo '%s' --json", tu_path("examples/cluster-links.json"));
  json_t *j;
  (void)state;
  assert_int_equal(r.rc, 0);
  j = parse_json(r.out);
  assert_int_equal(jint(j, "devices"), 8);
  assert_int_equal(jint(j, "nodes"), 2);
  assert_int_equal(jint(j, "links"), 10);
  assert_int_equal(jint(j, "switches"), 3);
  assert_string_equal(jstr(j, "routing"), "widest");
  json_decref(j);
  run_free(&r);
}

/* ---- -o: written files ------------------------------------------------ */

/* Re-serialize a loaded object into a malloc'd buffer. */
static char *model_bytes(pp_ctx *ctx, const pp_model *m)
{
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  assert_non_null(f);
  assert_int_equal(pp_model_write(ctx, m, NULL, f), PP_OK);
  assert_int_equal(fclose(f), 0);
  return buf;
}

static char *cluster_bytes(pp_ctx *ctx, const pp_cluster *c)
{
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  assert_non_null(f);
  assert_int_equal(pp_cluster_write(ctx, c, NULL, f), PP_OK);
  assert_int_equal(fclose(f), 0);
  return buf;
}

/* Run "model SPEC [extra] -o a", again with -o b; both succeed, a and b
** are byte-identical, a reloads and re-serializes to the same bytes.
** Returns the reloaded model (caller destroys). */
static pp_model *model_out(pp_ctx *ctx, const char *spec, const char *extra,
                           const char *stem)
{
  char a[512], b[512];
  struct run r;
  char *ta, *tb, *tc;
  size_t la, lb;
  pp_model *m = NULL;
  const char *dir = fresh_dir(stem);

  snprintf(a, sizeof a, "%s/a.json", dir);
  snprintf(b, sizeof b, "%s/b.json", dir);
  r = run("model '%s' %s -o '%s'", spec, extra, a);
  if (r.rc != 0)
    fail_msg("model %s failed (%d): %s", spec, r.rc, r.err);
  assert_string_equal(r.err, "");
  assert_true(strlen(r.out) > 0); /* the description is still printed */
  run_free(&r);
  r = run("model '%s' %s -o '%s'", spec, extra, b);
  assert_int_equal(r.rc, 0);
  run_free(&r);
  ta = tu_slurp(a, &la);
  tb = tu_slurp(b, &lb);
  assert_non_null(ta);
  assert_non_null(tb);
  assert_true(la > 0);
  assert_int_equal(la, lb);
  assert_memory_equal(ta, tb, la);
  /* Reload through the public loader and write again: a fixed point. */
  if (pp_model_load(ctx, a, &m) != PP_OK)
    fail_msg("reloading %s: %s", a, pp_ctx_errmsg(ctx));
  tc = model_bytes(ctx, m);
  assert_string_equal(tc, ta);
  free(tc);
  free(ta);
  free(tb);
  assert_int_equal(count_tmp(dir), 0);
  return m;
}

static pp_cluster *cluster_out(pp_ctx *ctx, const char *spec, const char *extra,
                               const char *stem)
{
  char a[512], b[512];
  struct run r;
  char *ta, *tb, *tc;
  size_t la, lb;
  pp_cluster *c = NULL;
  const char *dir = fresh_dir(stem);

  snprintf(a, sizeof a, "%s/a.json", dir);
  snprintf(b, sizeof b, "%s/b.json", dir);
  r = run("topo '%s' %s -o '%s'", spec, extra, a);
  if (r.rc != 0)
    fail_msg("topo %s failed (%d): %s", spec, r.rc, r.err);
  assert_string_equal(r.err, "");
  run_free(&r);
  r = run("topo '%s' %s -o '%s'", spec, extra, b);
  assert_int_equal(r.rc, 0);
  run_free(&r);
  ta = tu_slurp(a, &la);
  tb = tu_slurp(b, &lb);
  assert_non_null(ta);
  assert_non_null(tb);
  assert_true(la > 0);
  assert_int_equal(la, lb);
  assert_memory_equal(ta, tb, la);
  if (pp_cluster_load(ctx, a, &c) != PP_OK)
    fail_msg("reloading %s: %s", a, pp_ctx_errmsg(ctx));
  tc = cluster_bytes(ctx, c);
  assert_string_equal(tc, ta);
  free(tc);
  free(ta);
  free(tb);
  assert_int_equal(count_tmp(dir), 0);
  return c;
}

static void test_model_out(void **state)
{
  pp_ctx *ctx;
  pp_model *m;
  (void)state;
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);

  m = model_out(ctx, tu_path("examples/model-minimal.json"), "", "o-minimal");
  assert_int_equal(pp_model_nop(m), 2);
  assert_int_equal(pp_model_nedge(m), 1);
  assert_string_equal(pp_model_name(m), "m");
  pp_model_destroy(m);

  m = model_out(ctx, tu_path("examples/model-chain.json"), "", "o-chain");
  assert_int_equal(pp_model_nop(m), 4);
  assert_int_equal(pp_model_op_tied(m, 3), 0);
  assert_true(pp_model_ntable(m) > 0);
  pp_model_destroy(m);

  m = model_out(ctx, tu_path("examples/pipedream-tiny.txt"), "", "o-pd");
  assert_int_equal(pp_model_nop(m), 6);
  assert_int_equal(pp_model_nedge(m), 6);
  pp_model_destroy(m);

  m = model_out(ctx, "gpt2-amp", "", "o-gpt2");
  assert_int_equal(pp_model_nop(m), 30);
  pp_model_destroy(m);

  m = model_out(ctx,
                "transformer:layers=3,hidden=256,heads=4,seq=128,"
                "vocab=1000",
                "", "o-gen");
  assert_true(pp_model_nop(m) >= 3);
  pp_model_destroy(m);
  pp_ctx_destroy(ctx);
}

static void test_topo_out(void **state)
{
  pp_ctx *ctx;
  pp_cluster *c;
  (void)state;
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);

  c = cluster_out(ctx, tu_path("examples/cluster-links.json"), "", "o-links");
  assert_int_equal(pp_cluster_ndev(c), 8);
  assert_int_equal(pp_cluster_nlink(c), 10);
  assert_int_equal(pp_cluster_nswitch(c), 3);
  assert_string_equal(pp_cluster_name(c), "fat-tree-2x4");
  pp_cluster_destroy(c);

  c = cluster_out(ctx, tu_path("examples/cluster-matrix.json"), "", "o-mat");
  assert_int_equal(pp_cluster_ndev(c), 4);
  assert_int_equal(pp_cluster_nlink(c), 0);
  assert_true(pp_cluster_bandwidth(c, 0, 1) == 300);
  pp_cluster_destroy(c);

  c = cluster_out(ctx, "hier:2x4,intra=300", "", "o-hier");
  assert_int_equal(pp_cluster_ndev(c), 8);
  assert_int_equal(pp_cluster_nnode(c), 2);
  pp_cluster_destroy(c);

  c = cluster_out(ctx, "random_blk_1:16", "--seed 7", "o-rand");
  assert_int_equal(pp_cluster_ndev(c), 16);
  pp_cluster_destroy(c);

  c = cluster_out(ctx, "amp-het-cluster", "", "o-amp");
  assert_int_equal(pp_cluster_ndev(c), 16);
  assert_int_equal(pp_cluster_nnode(c), 4);
  pp_cluster_destroy(c);
  pp_ctx_destroy(ctx);
}

/* ---- --chain and --chain-ops ------------------------------------------ */

static void test_chain(void **state)
{
  const char *dag = tu_path("examples/model-dag.json");
  char dagp[512], out[512];
  struct run r;
  json_t *full, *chain;
  json_int_t nlayer, nop;
  pp_ctx *ctx;
  pp_model *m;
  char want[64];
  (void)state;
  snprintf(dagp, sizeof dagp, "%s", dag);

  r = run("model '%s' --json", dagp);
  assert_int_equal(r.rc, 0);
  full = parse_json(r.out);
  run_free(&r);
  nop = jint(full, "operators");
  nlayer = jint(full, "chain_layers");
  assert_int_equal(nop, 8);
  assert_true(json_is_false(json_object_get(full, "chain")));
  assert_true(nlayer >= 1 && nlayer < nop);

  /* The text description states the same layer count. */
  r = run("model '%s'", dagp);
  assert_int_equal(r.rc, 0);
  snprintf(want, sizeof want, "%d layers in the chain view", (int)nlayer);
  expect_contains(r.out, want);
  run_free(&r);

  /* --chain: a chain of that many layers, same total compute. */
  r = run("model '%s' --chain --json", dagp);
  assert_int_equal(r.rc, 0);
  chain = parse_json(r.out);
  run_free(&r);
  assert_int_equal(jint(chain, "operators"), nlayer);
  assert_int_equal(jint(chain, "edges"), nlayer - 1);
  assert_int_equal(jint(chain, "chain_layers"), nlayer);
  assert_true(json_is_true(json_object_get(chain, "chain")));
  assert_float_equal(json_number_value(json_object_get(chain, "fwd_ms")),
                     json_number_value(json_object_get(full, "fwd_ms")), 1e-9);
  assert_float_equal(json_number_value(json_object_get(chain, "bwd_ms")),
                     json_number_value(json_object_get(full, "bwd_ms")), 1e-9);
  assert_int_equal(jint(chain, "param_bytes"), jint(full, "param_bytes"));
  json_decref(chain);

  r = run("model '%s' --chain", dagp);
  assert_int_equal(r.rc, 0);
  snprintf(want, sizeof want, "operators    %d, a chain", (int)nlayer);
  expect_contains(r.out, want);
  run_free(&r);

  /* --chain-ops: one layer per operator. */
  r = run("model '%s' --chain-ops --json", dagp);
  assert_int_equal(r.rc, 0);
  chain = parse_json(r.out);
  run_free(&r);
  assert_int_equal(jint(chain, "operators"), nop);
  assert_int_equal(jint(chain, "edges"), nop - 1);
  assert_true(json_is_true(json_object_get(chain, "chain")));
  json_decref(chain);
  r = run("model '%s' --chain-ops", dagp);
  assert_int_equal(r.rc, 0);
  snprintf(want, sizeof want, "operators    %d, a chain", (int)nop);
  expect_contains(r.out, want);
  run_free(&r);

  /* -o with --chain writes the chain model; it reloads as a chain. */
  snprintf(out, sizeof out, "%s/chain.json", fresh_dir("o-chainview"));
  r = run("model '%s' --chain -o '%s'", dagp, out);
  assert_int_equal(r.rc, 0);
  run_free(&r);
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  if (pp_model_load(ctx, out, &m) != PP_OK)
    fail_msg("reloading the chain view: %s", pp_ctx_errmsg(ctx));
  assert_int_equal(pp_model_nop(m), nlayer);
  assert_int_equal(pp_model_is_chain(m), 1);
  assert_int_equal(pp_model_nedge(m), nlayer - 1);
  pp_model_destroy(m);
  pp_ctx_destroy(ctx);
  json_decref(full);
}

/* ---- --list ----------------------------------------------------------- */

static void test_list(void **state)
{
  struct run r;
  int i;
  (void)state;
  r = run("model --list");
  assert_int_equal(r.rc, 0);
  assert_true(pp_model_builtin_name(0) != NULL);
  for (i = 0; pp_model_builtin_name(i); i++)
    expect_contains(r.out, pp_model_builtin_name(i));
  expect_contains(r.out, "transformer:");
  run_free(&r);

  r = run("topo --list");
  assert_int_equal(r.rc, 0);
  assert_true(pp_cluster_generator_name(0) != NULL);
  for (i = 0; pp_cluster_generator_name(i); i++)
    expect_contains(r.out, pp_cluster_generator_name(i));
  run_free(&r);
}

/* ---- errors ----------------------------------------------------------- */

static void test_missing_file(void **state)
{
  const char *p = tu_tmp("no-such-file.json");
  char path[512];
  struct run r;
  (void)state;
  snprintf(path, sizeof path, "%s", p);
  r = run("model '%s'", path);
  expect_usage_failure(&r, path);
  assert_string_equal(r.out, "");
  run_free(&r);
  r = run("topo '%s'", path);
  expect_usage_failure(&r, path);
  run_free(&r);
  /* A path in a directory that does not exist. */
  r = run("model /nonexistent-dir/x/model.json");
  expect_usage_failure(&r, "/nonexistent-dir/x/model.json");
  run_free(&r);
  /* A directory is not a model. */
  snprintf(path, sizeof path, "%s", fresh_dir("a-directory"));
  r = run("model '%s'", path);
  expect_usage_failure(&r, path);
  run_free(&r);
}

static void test_malformed_file(void **state)
{
  char path[512], want[600];
  struct run r;
  const char *p;
  long line = 0, col = 0;
  (void)state;
  snprintf(path, sizeof path, "%s", tu_tmp("malformed.json"));
  write_text(path, "{\"ops\": [\n  {\"name\": \"a\",, \"fwd_ms\": 1}\n]}\n");
  r = run("model '%s'", path);
  expect_usage_failure(&r, path);
  snprintf(want, sizeof want, "%s:", path);
  p = strstr(r.err, want);
  assert_non_null(p);
  if (sscanf(p + strlen(want), "%ld:%ld:", &line, &col) != 2)
    fail_msg("no line:col after the file name: %s", r.err);
  assert_int_equal(line, 2);
  assert_true(col > 0);
  assert_string_equal(r.out, "");
  run_free(&r);

  /* The same for a cluster file. */
  r = run("topo '%s'", path);
  expect_usage_failure(&r, want);
  run_free(&r);

  /* Well formed but wrong: names the file and the operator. */
  snprintf(path, sizeof path, "%s", tu_tmp("negative.json"));
  write_text(path, "{\"ops\": [{\"name\": \"op_x\", \"fwd_ms\": -1, "
                   "\"bwd_ms\": 1, \"param_bytes\": 0, \"out_bytes\": 0, "
                   "\"saved_bytes\": 0}]}\n");
  r = run("model '%s'", path);
  expect_usage_failure(&r, path);
  expect_contains(r.err, "op_x");
  run_free(&r);

  /* A garbled PipeDream file names file and line. */
  snprintf(path, sizeof path, "%s", tu_tmp("garbled.txt"));
  write_text(path, "node1 -- Input -- forward_compute_time=0.1, "
                   "backward_compute_time=0, activation_size=4, "
                   "parameter_size=0\nthis is not a node line\n");
  r = run("model '%s'", path);
  expect_usage_failure(&r, path);
  snprintf(want, sizeof want, "%s:2", path);
  expect_contains(r.err, want);
  run_free(&r);
}

static void test_usage_errors(void **state)
{
  struct run r;
  (void)state;
  r = run("model no-such-model");
  expect_usage_failure(&r, "no-such-model");
  assert_string_equal(r.out, "");
  run_free(&r);
  r = run("topo no-such-cluster");
  expect_usage_failure(&r, "no-such-cluster");
  run_free(&r);
  r = run("topo hier:4x8,bogus=1");
  expect_usage_failure(&r, "bogus");
  run_free(&r);
  r = run("model transformer:layers=0");
  expect_usage_failure(&r, "layers");
  run_free(&r);
  r = run("topo hier:1000x1000");
  expect_usage_failure(&r, "hier:1000x1000");
  run_free(&r);
  r = run("--frobnicate");
  expect_usage_failure(&r, "--frobnicate");
  run_free(&r);
  r = run("model gpt2-amp --frobnicate");
  expect_usage_failure(&r, "--frobnicate");
  run_free(&r);
  r = run("frobnicate");
  expect_usage_failure(&r, "frobnicate");
  run_free(&r);
  r = run("model");
  expect_usage_failure(&r, "SPEC");
  run_free(&r);
  r = run("topo");
  expect_usage_failure(&r, "SPEC");
  run_free(&r);
  r = run("model gpt2-amp extra-arg");
  expect_usage_failure(&r, "extra-arg");
  run_free(&r);
  r = run("--seed abc");
  expect_usage_failure(&r, "abc");
  run_free(&r);
  r = run("topo random_blk_1:16 --seed -3");
  expect_usage_failure(&r, "-3");
  run_free(&r);
  r = run("topo random_blk_1:16 --seed 99999999999999999999999999");
  expect_usage_failure(&r, "--seed");
  run_free(&r);
  r = run("topo random_blk_1:16 --seed");
  expect_usage_failure(&r, "--seed");
  run_free(&r);
  r = run("model gpt2-amp -o");
  expect_usage_failure(&r, "-o");
  run_free(&r);
}

/* ---- output is all or nothing ----------------------------------------- */

static void test_no_half_written(void **state)
{
  char dir[512], out[600], missing[600], bad[600], sub[600];
  const char *sentinel = "sentinel: do not touch\n";
  struct run r;
  char *t;
  (void)state;
  snprintf(dir, sizeof dir, "%s", fresh_dir("atomic"));
  snprintf(out, sizeof out, "%s/out.json", dir);
  snprintf(missing, sizeof missing, "%s/no-such-dir/out.json", dir);
  snprintf(sub, sizeof sub, "%s/no-such-dir", dir);
  snprintf(bad, sizeof bad, "%s/bad-input.json", dir);
  write_text(bad, "{\"ops\": [}\n");

  /* -o into a directory that does not exist: fails, creates nothing. */
  r = run("model gpt2-amp -o '%s'", missing);
  assert_int_not_equal(r.rc, 0);
  assert_int_equal(strncmp(r.err, "parplan: ", 9), 0);
  expect_contains(r.err, missing);
  run_free(&r);
  assert_false(file_exists(missing));
  assert_false(file_exists(sub));
  r = run("topo hier:2x4 -o '%s'", missing);
  assert_int_not_equal(r.rc, 0);
  run_free(&r);
  assert_false(file_exists(sub));

  /* Bad input: -o OUT is not created... */
  r = run("model '%s' -o '%s'", bad, out);
  expect_usage_failure(&r, bad);
  run_free(&r);
  assert_false(file_exists(out));
  r = run("topo no-such-cluster -o '%s'", out);
  expect_usage_failure(&r, NULL);
  run_free(&r);
  assert_false(file_exists(out));
  assert_int_equal(count_tmp(dir), 0);

  /* ...and an existing OUT is left untouched. */
  write_text(out, sentinel);
  r = run("model '%s' -o '%s'", bad, out);
  expect_usage_failure(&r, NULL);
  run_free(&r);
  r = run("topo '%s' -o '%s'", bad, out);
  expect_usage_failure(&r, NULL);
  run_free(&r);
  r = run("model gpt2-amp --chain --frobnicate -o '%s'", out);
  expect_usage_failure(&r, NULL);
  run_free(&r);
  t = tu_slurp(out, NULL);
  assert_non_null(t);
  assert_string_equal(t, sentinel);
  free(t);
  assert_int_equal(count_tmp(dir), 0);

  /* Writing over a directory fails after the temporary is made: the
  ** temporary must be gone and the directory intact. */
  r = run("model gpt2-amp -o '%s'", dir);
  assert_int_not_equal(r.rc, 0);
  assert_int_equal(strncmp(r.err, "parplan: ", 9), 0);
  run_free(&r);
  {
    char parent[512], *slash;
    snprintf(parent, sizeof parent, "%s", dir);
    slash = strrchr(parent, '/');
    assert_non_null(slash);
    *slash = '\0';
    assert_int_equal(count_prefixed(parent, "atomic.tmp"), 0);
  }

  /* Success replaces the sentinel with a whole file, leaving no
  ** temporary behind. */
  r = run("model gpt2-amp -o '%s'", out);
  assert_int_equal(r.rc, 0);
  run_free(&r);
  t = tu_slurp(out, NULL);
  assert_non_null(t);
  assert_true(strstr(t, "sentinel") == NULL);
  assert_true(strlen(t) > 100);
  assert_int_equal(t[strlen(t) - 1], '\n');
  free(t);
  assert_int_equal(count_tmp(dir), 0);
  {
    struct stat st;
    assert_int_equal(stat(out, &st), 0);
    /* An ordinary file, readable by others (umask permitting), not the
    ** 0600 of mkstemp. */
    assert_true((st.st_mode & 0400) != 0);
  }
}

/* ---- --seed ----------------------------------------------------------- */

static void test_seed(void **state)
{
  struct run a, b, c, d;
  (void)state;
  a = run("topo random_blk_1:16 --json --seed 1");
  b = run("topo random_blk_1:16 --json --seed 2");
  c = run("topo random_blk_1:16 --json --seed 1");
  d = run("topo random_blk_1:16 --json");
  assert_int_equal(a.rc, 0);
  assert_int_equal(b.rc, 0);
  assert_int_equal(c.rc, 0);
  assert_int_equal(d.rc, 0);
  assert_true(strcmp(a.out, b.out) != 0);
  assert_string_equal(a.out, c.out);
  assert_string_equal(a.out, d.out); /* the default seed is 1 */
  json_decref(parse_json(a.out));
  run_free(&a);
  run_free(&b);
  run_free(&c);
  run_free(&d);

  /* A deterministic generator ignores the seed. */
  a = run("topo hier:2x4 --json --seed 1");
  b = run("topo hier:2x4 --json --seed 99");
  assert_int_equal(a.rc, 0);
  assert_string_equal(a.out, b.out);
  run_free(&a);
  run_free(&b);
}

/* ---- --json always prints JSON ---------------------------------------- */

/* Whatever the input, --json prints a valid JSON document (exit 0) or
** refuses the input (exit 1): never bare inf/nan or bytes that are not
** UTF-8, which the tool's own reader (jansson) cannot read back. */
static void expect_json_or_refusal(const char *args)
{
  static char msg[1200];
  struct run r = run("%s --json", args);
  json_error_t err;
  json_t *j = NULL;
  msg[0] = '\0';
  if (r.rc == 1) {
    if (strncmp(r.err, "parplan: ", 9) != 0)
      snprintf(msg, sizeof msg, "parplan %s --json: stderr: %.600s", args,
               r.err);
  } else if (r.rc != 0)
    snprintf(msg, sizeof msg, "parplan %s --json: exit %d: %.600s", args, r.rc,
             r.err);
  else if ((j = json_loads(r.out, 0, &err)) == NULL)
    snprintf(msg, sizeof msg,
             "parplan %s --json prints invalid JSON (%d:%d: %s):\n%.600s", args,
             err.line, err.column, err.text, r.out);
  json_decref(j);
  run_free(&r);
  if (msg[0])
    fail_msg("%s", msg);
}

static void test_json_always_valid(void **state)
{
  char path[512], args[700];
  (void)state;
  /* Finite figures whose sums overflow. */
  snprintf(path, sizeof path, "%s", tu_tmp("huge-sums.json"));
  write_text(path, "{\"ops\": ["
                   "{\"name\": \"a\", \"fwd_ms\": 1e308, \"bwd_ms\": 1e308, "
                   "\"param_bytes\": 4000000000000000000, \"out_bytes\": 1, "
                   "\"saved_bytes\": 1},"
                   "{\"name\": \"b\", \"fwd_ms\": 1e308, \"bwd_ms\": 1e308, "
                   "\"param_bytes\": 4000000000000000000, \"out_bytes\": 1, "
                   "\"saved_bytes\": 1}]}\n");
  snprintf(args, sizeof args, "model '%s'", path);
  expect_json_or_refusal(args);
  /* A file name that is not UTF-8 (the model's source and name). */
  snprintf(path, sizeof path, "%s", tu_tmp("nameless-\xfe.json"));
  write_text(path, "{\"ops\": [{\"name\": \"a\", \"fwd_ms\": 1, \"bwd_ms\": 1, "
                   "\"param_bytes\": 1, \"out_bytes\": 1, "
                   "\"saved_bytes\": 1}]}\n");
  snprintf(args, sizeof args, "model '%s'", path);
  expect_json_or_refusal(args);
  /* Specs with bytes that are not UTF-8 (a later option overrides). */
  expect_json_or_refusal("topo 'hier:2x2,gpu=\xff,gpu=V100'");
  expect_json_or_refusal("model 'transformer:gpu=\xff,gpu=V100,layers=2'");
  /* Bonded links whose product overflows. */
  snprintf(path, sizeof path, "%s", tu_tmp("bonded.json"));
  write_text(path, "{\"device_types\": {\"g\": {\"memory_gb\": 16}}, "
                   "\"devices\": [{\"name\": \"a\", \"type\": \"g\", "
                   "\"node\": 0}, {\"name\": \"b\", \"type\": \"g\", "
                   "\"node\": 0}], \"links\": [{\"a\": \"a\", \"b\": \"b\", "
                   "\"GBps\": 1e308, \"count\": 1000}]}\n");
  snprintf(args, sizeof args, "topo '%s'", path);
  expect_json_or_refusal(args);
}

/* ---- --help and --version --------------------------------------------- */

static void test_help_version(void **state)
{
  struct run r;
  (void)state;
  r = run("--help");
  assert_int_equal(r.rc, 0);
  expect_contains(r.out, "usage: parplan");
  expect_contains(r.out, "exit status");
  assert_string_equal(r.err, "");
  run_free(&r);
  r = run("-h");
  assert_int_equal(r.rc, 0);
  expect_contains(r.out, "usage: parplan");
  run_free(&r);
  r = run("model --help");
  assert_int_equal(r.rc, 0);
  expect_contains(r.out, "usage: parplan");
  run_free(&r);
  r = run("--version");
  assert_int_equal(r.rc, 0);
  expect_contains(r.out, pp_version());
  assert_string_equal(r.err, "");
  run_free(&r);
}

/* ---- the command line's tables ------------------------------------- */

/* s without the "; 0.14 s" that ends a line with the time taken, in
** place: runs differ only there. */
static char *drop_seconds(char *s)
{
  char *p = s, *q;
  while ((p = strstr(p, "; ")) != NULL) {
    q = p + 2;
    q += strspn(q, "0123456789.e+-");
    if (q > p + 2 && !strncmp(q, " s", 2) && (q[2] == '\n' || !q[2]))
      memmove(p, q + 2, strlen(q + 2) + 1);
    else
      p += 2;
  }
  return s;
}

/* Each command's --help: its own entry and options, not the tool's. */
static void test_command_help(void **state)
{
  static const struct {
    const char *cmd, *has, *lacks;
  } cases[] = {
      {"plan", "--batch GBS", "--network"},
      {"compare", "--max-tp", "--trace"},
      {"describe", "--json", "--model"},
      {"model", "--chain-ops", "--batch"},
      {"topo", "--list", "--chain"},
      {"evaluate", "--cost-model", "--network"},
      {"simulate", "--network", "--batch"},
      {"export", "--to ENGINE", "--json"},
      {"report", "--no-baselines", "--json"},
      {"partition", "--refine-steps", "--algorithm"},
      {"map", "--algorithm", "--refine-steps"},
  };
  char want[64];
  struct run r, h;
  size_t i;
  (void)state;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    r = run("%s --help", cases[i].cmd);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.err, "");
    snprintf(want, sizeof want, "usage: parplan %s", cases[i].cmd);
    assert_int_equal(strncmp(r.out, want, strlen(want)), 0);
    snprintf(want, sizeof want, "\n  %s ", cases[i].cmd);
    expect_contains(r.out, want);
    expect_contains(r.out, "\noptions:\n");
    expect_contains(r.out, cases[i].has);
    expect_contains(r.out, "--seed N");
    if (strstr(r.out, cases[i].lacks) || strstr(r.out, "commands:"))
      fail_msg("%s --help is not the command's alone:\n%s", cases[i].cmd,
               r.out);
    h = run("%s -h", cases[i].cmd);
    assert_string_equal(h.out, r.out);
    run_free(&h);
    run_free(&r);
  }
  /* With no command, the tool's help. */
  r = run("--help");
  expect_contains(r.out, "commands:");
  expect_contains(r.out, "partition options:");
  run_free(&r);
}

/* --opt=value is --opt value, also for a value holding '='. */
static void test_opt_equals(void **state)
{
  const char *plan = tu_path("examples/plan-gpt2-amp.json");
  struct run a, b;
  (void)state;
  a = run("evaluate %s --model=gpt2-amp --cluster=amp-het-cluster "
          "--reserve-gb=1 --allreduce=ring --json",
          plan);
  b = run("evaluate %s --model gpt2-amp --cluster amp-het-cluster "
          "--reserve-gb 1 --allreduce ring --json",
          plan);
  assert_int_equal(a.rc, 0);
  assert_string_equal(a.out, b.out);
  run_free(&a);
  run_free(&b);
  a = run("partition --model=transformer:layers=4,hidden=64,heads=2,seq=16,"
          "vocab=100 --stages=2 --method=uniform-layers");
  b = run("partition --model transformer:layers=4,hidden=64,heads=2,seq=16,"
          "vocab=100 --stages 2 --method uniform-layers");
  assert_int_equal(a.rc, 0);
  assert_string_equal(drop_seconds(a.out), drop_seconds(b.out));
  run_free(&a);
  run_free(&b);
  /* Options may come before the command. */
  a = run("--seed=7 --json topo random_blk_1:16");
  b = run("topo random_blk_1:16 --json --seed 7");
  assert_int_equal(a.rc, 0);
  assert_string_equal(a.out, b.out);
  run_free(&a);
  run_free(&b);
  /* A flag takes no value. */
  a = run("topo dgx1 --json=yes");
  expect_usage_failure(&a, "--json takes no value");
  run_free(&a);
}

/* An option of another command is refused, naming the command. */
static void test_other_command_option(void **state)
{
  struct run r;
  (void)state;
  r = run("topo dgx1 --batch 32 --to megatron");
  expect_usage_failure(&r, "topo does not take --batch");
  expect_contains(r.err, "parplan topo --help");
  assert_string_equal(r.out, "");
  run_free(&r);
  r = run("evaluate %s --model gpt2-amp --cluster amp-het-cluster "
          "--network=links",
          tu_path("examples/plan-gpt2-amp.json"));
  expect_usage_failure(&r, "evaluate does not take --network");
  run_free(&r);
  r = run("map --stages s.json --cluster dgx1 --refine-steps 3");
  expect_usage_failure(&r, "map does not take --refine-steps");
  run_free(&r);
  r = run("plan --frobnicate");
  expect_usage_failure(&r, "unknown option '--frobnicate'");
  run_free(&r);
}

/* Out of range: the option and the range. */
static void test_out_of_range(void **state)
{
  struct run r;
  (void)state;
  r = run("partition --model gpt2-amp --stages 0");
  expect_usage_failure(&r, "--stages needs an integer from 1 to 1048576, "
                           "not '0'");
  expect_contains(r.err, "parplan partition --help");
  run_free(&r);
  r = run("plan --time-limit=0");
  expect_usage_failure(&r, "--time-limit needs a number from 0.001 to "
                           "1e+06, not '0'");
  run_free(&r);
  r = run("simulate p.json --gantt 10001");
  expect_usage_failure(&r, "--gantt needs an integer from 0 to 10000");
  run_free(&r);
  r = run("evaluate p.json --reserve-gb -1");
  expect_usage_failure(&r, "--reserve-gb needs a number from 0 to");
  run_free(&r);
}

/* A limit that runs out before anything is priced: the planner says
** so, not that no plan fits (it never tried them); exit status 3.
** Building the 512-device cluster alone takes longer than 1 ms. */
static void test_limit_before_any_plan(void **state)
{
  struct run r;
  (void)state;
  r = run("plan --model gpt2-amp --cluster hier:64x8 --batch 512 "
          "--time-limit 0.001");
  assert_int_equal(r.rc, 3);
  expect_contains(r.out, "no plan found before the search stopped");
  expect_contains(r.out, "raise the time limit (--time-limit)");
  if (strstr(r.out, "no plan fits in memory"))
    fail_msg("a search cut by its limit claims that no plan fits:\n%s", r.out);
  run_free(&r);
}

/* The library's name functions, by enum. */
enum named {
  SCHEDULE,
  OPTIMIZER,
  PART_OBJECTIVE,
  PART_METHOD,
  MAP_OBJECTIVE,
  MAP_ALGORITHM,
  COST_KIND,
  ALLREDUCE,
  NETWORK
};

static const char *name_of(enum named e, int i)
{
  switch (e) {
  case SCHEDULE: return pp_schedule_name((pp_schedule)i);
  case OPTIMIZER: return pp_optimizer_name((pp_optimizer)i);
  case PART_OBJECTIVE: return pp_part_objective_name((pp_part_objective)i);
  case PART_METHOD: return pp_part_method_name((pp_part_method)i);
  case MAP_OBJECTIVE: return pp_map_objective_name((pp_map_objective)i);
  case MAP_ALGORITHM: return pp_map_algorithm_name((pp_map_algorithm)i);
  case COST_KIND: return pp_cost_kind_name((pp_cost_kind)i);
  case ALLREDUCE: return pp_allreduce_name((pp_allreduce)i);
  case NETWORK: return pp_sim_network_name((pp_sim_network)i);
  }
  return NULL;
}

/* "a|b|c" into buf. */
static void join_names(enum named e, char *buf, size_t n)
{
  int i;
  buf[0] = '\0';
  for (i = 0; name_of(e, i); i++) {
    if (i)
      strncat(buf, "|", n - strlen(buf) - 1);
    strncat(buf, name_of(e, i), n - strlen(buf) - 1);
  }
}

/* A bad enum value: the error lists the library's names; so does the
** help (but partition's --schedule, which shows the two its memory
** model tells apart). */
static void test_enum_names(void **state)
{
  static const struct {
    const char *cmd, *opt;
    enum named names;
  } cases[] = {
      {"plan", "--schedule", SCHEDULE},
      {"plan", "--optimizer", OPTIMIZER},
      {"partition", "--objective", PART_OBJECTIVE},
      {"partition", "--method", PART_METHOD},
      {"partition", "--optimizer", OPTIMIZER},
      {"map", "--objective", MAP_OBJECTIVE},
      {"map", "--algorithm", MAP_ALGORITHM},
      {"evaluate", "--cost-model", COST_KIND},
      {"evaluate", "--allreduce", ALLREDUCE},
      {"simulate", "--network", NETWORK},
  };
  char list[256], want[320];
  struct run r;
  size_t i;
  (void)state;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    join_names(cases[i].names, list, sizeof list);
    r = run("%s %s bogus", cases[i].cmd, cases[i].opt);
    snprintf(want, sizeof want, "%s needs one of %s, not 'bogus'", cases[i].opt,
             list);
    expect_usage_failure(&r, want);
    run_free(&r);
    if (strcmp(cases[i].opt, "--method")) { /* its list wraps */
      r = run("%s --help", cases[i].cmd);
      snprintf(want, sizeof want, "%s %s", cases[i].opt, list);
      expect_contains(r.out, want);
      run_free(&r);
    }
  }
  /* --to: the library's engines, then launch. */
  list[0] = '\0';
  for (i = 0; pp_export_engine_name((int)i); i++) {
    strcat(list, pp_export_engine_name((int)i));
    strcat(list, "|");
  }
  strcat(list, "launch");
  r = run("export p.json --to nemo");
  snprintf(want, sizeof want, "--to needs one of %s, not 'nemo'", list);
  expect_usage_failure(&r, want);
  run_free(&r);
  r = run("export --help");
  snprintf(want, sizeof want, "--to %s", list);
  expect_contains(r.out, want);
  run_free(&r);
}

/* plan alone plans the default, as the tool alone does. */
static void test_plan_alone(void **state)
{
  struct run a = run("%s", ""), b = run("plan");
  (void)state;
  assert_int_equal(a.rc, 0);
  assert_int_equal(b.rc, 0);
  assert_string_equal(drop_seconds(a.out), drop_seconds(b.out));
  run_free(&a);
  run_free(&b);
  /* Given one of model, cluster and batch, plan needs all three. */
  a = run("plan --model gpt2-amp --cluster amp-het-cluster");
  expect_usage_failure(&a, "plan needs --model M --cluster C --batch GBS");
  expect_contains(a.err, "parplan plan --help");
  run_free(&a);
}

/* Positional arguments: each command's one, no more. */
static void test_surplus_positional(void **state)
{
  struct run r;
  (void)state;
  r = run("plan extra");
  expect_usage_failure(&r, "plan takes no argument 'extra'");
  run_free(&r);
  r = run("describe extra");
  expect_usage_failure(&r, "describe takes no argument 'extra'");
  run_free(&r);
  r = run("evaluate a.json b.json --model gpt2-amp");
  expect_usage_failure(&r, "unexpected argument 'b.json' (evaluate takes "
                           "one PLAN)");
  run_free(&r);
  r = run("topo dgx1 hier:2x4");
  expect_usage_failure(&r, "unexpected argument 'hier:2x4'");
  run_free(&r);
  /* an empty argument (fuzz_options' first finding: the parser read
  ** past its end; ASan reports it in the sanitizer run) */
  r = run("''");
  expect_usage_failure(&r, "unknown command ''");
  run_free(&r);
  r = run("plan ''");
  expect_usage_failure(&r, "plan takes no argument ''");
  run_free(&r);
}

/* Ctrl-C and the time limit during MadPipe's ILPs (issue 22): the
** partition of GPT-2 into 16 stages at 5 GB runs ILPs for minutes (CBC
** cannot be told to stop; a cut generator ends its tree at the next node,
** sched_ilp.c).  SIGINT after a second: the tool stops within a second,
** says why, exits 130.  --time-limit 2 bounds the whole command to within
** a second, and says the limit cut it. */
static void test_partition_stop(void **state)
{
  char cmd[2048], path[600];
  char *out = NULL, *err = NULL; /* tu_sh's own buffers */
  long ms;
  int rc;
  struct run r;
  (void)state;
  snprintf(path, sizeof path, "%s", tu_tmp("part-stop.txt"));
  snprintf(cmd, sizeof cmd,
           "%s partition --model gpt2-amp --stages 16 --objective madpipe "
           "--memory-gb 5 --time-limit 120 > /dev/null 2> '%s' & "
           "pid=$!; sleep 1; t0=$(date +%%s%%N); kill -INT $pid; wait $pid; "
           "rc=$?; t1=$(date +%%s%%N); echo $rc $(( (t1 - t0) / 1000000 ))",
           PP_TOOL, path);
  assert_int_equal(tu_sh(cmd, &out, &err), 0);
  assert_int_equal(sscanf(out, "%d %ld", &rc, &ms), 2);
  assert_int_equal(rc, 130);
  if (ms >= 1000)
    fail_msg("partition: stopped after %ld ms", ms);
  {
    char *txt = tu_slurp(path, NULL);
    assert_non_null(txt);
    expect_contains(txt, "madpipe: stopped (the time limit, or an interrupt)");
    free(txt);
  }
  snprintf(cmd, sizeof cmd,
           "t0=$(date +%%s%%N); %s partition --model gpt2-amp --stages 16 "
           "--objective madpipe --memory-gb 5 --time-limit 2 --json "
           "> /dev/null 2>&1; t1=$(date +%%s%%N); "
           "echo $(( (t1 - t0) / 1000000 ))",
           PP_TOOL);
  assert_int_equal(tu_sh(cmd, &out, &err), 0);
  assert_int_equal(sscanf(out, "%ld", &ms), 1);
  /* 2 s and up to 2 s more: about one run in five of this command ends
  ** at 3.2-3.4 s (Debug and Release alike, on an idle machine): a step of
  ** CBC's that neither its time limit nor the cut callback interrupts;
  ** under a loaded CI machine it crossed 3 s.  A real overrun (the
  ** minutes it took before issue 22) still fails. */
  if (ms > 4000)
    fail_msg("partition --time-limit 2: %ld ms", ms);
  r = run("partition --model gpt2-amp --stages 16 --objective madpipe "
          "--memory-gb 5 --time-limit 2");
  assert_true(r.rc == 0 || r.rc == 1);
  if (r.rc == 0)
    expect_contains(r.out, "(time limit reached: the best schedule found in "
                           "time)");
  else
    expect_contains(r.err, "before phase 2 found a schedule that fits");
  run_free(&r);
  /* --phase1: MadPipe's allocation alone, in milliseconds where the full
  ** run above takes minutes; the report says what it is; 3 is refused */
  r = run("partition --model gpt2-amp --stages 16 --objective madpipe "
          "--memory-gb 5 --phase1 1");
  assert_int_equal(r.rc, 0);
  expect_contains(r.out, "MadPipe's phase 1 alone");
  run_free(&r);
  r = run("partition --model gpt2-amp --stages 4 --objective madpipe "
          "--phase1 3");
  assert_int_equal(r.rc, 1);
  expect_contains(r.err, "--phase1 needs an integer from 1 to 2");
  run_free(&r);
}

/* --max-memory (issue 22): building a 4,096-device cluster's bandwidth
** matrix (128 MiB) under a 64 MiB limit stops with a clear error and
** exit 1, not 2 and not a kill; a plan whose search fits but whose best
** plans' simulation does not (a 16-stage pipeline of 65,536 micro-batches
** per replica: 337 MB) falls back to the estimate's ranking and says so
** (by_estimate 2), as does one past the simulator's size limit; one
** where the routed paths' cache does not fit routes without it; a limit
** that is not reached changes nothing. */
static void test_max_memory(void **state)
{
  struct run r, a, b;
  json_t *j;
  (void)state;
  r = run("topo hier:512x8 --max-memory 0.0625");
  assert_int_equal(r.rc, 1);
  expect_contains(r.err, "out of memory");
  expect_contains(r.err, "stopped at the memory limit of 0.0625 GiB "
                         "(--max-memory)");
  run_free(&r);
  r = run("plan --model gpt2-amp --cluster hier:2x8 --batch 1048576 "
          "--max-memory 0.1 --json");
  assert_int_equal(r.rc, 0);
  j = parse_json(r.out);
  {
    const json_t *s = json_object_get(j, "search");
    assert_int_equal(jint(s, "by_estimate"), 2);
    assert_true(jint(s, "simulated") < 5);
  }
  json_decref(j);
  run_free(&r);
  r = run("plan --model gpt2-amp --cluster hier:2x8 --batch 1048576 "
          "--max-memory 0.1");
  assert_int_equal(r.rc, 0);
  expect_contains(r.out, "before the simulator hit its size limit or ran "
                         "out of memory: all are ranked by the estimate");
  run_free(&r);
  r = run("plan --model gpt2-amp --cluster hier:16x8 --batch 4194304");
  assert_int_equal(r.rc, 0);
  expect_contains(r.out, "before the simulator hit its size limit or ran "
                         "out of memory: all are ranked by the estimate");
  run_free(&r);
  /* 0.18 GiB: the 4,096-GPU bandwidth matrix (128 MiB) fits, the routed
  ** pairs' index (64 MiB) does not: a cache, so the search goes on
  ** without it (and simulates: its rings are in closed form) */
  r = run("plan --model gpt2-amp --cluster hier:512x8 --batch 8192 "
          "--max-memory 0.18");
  assert_int_equal(r.rc, 0);
  expect_contains(r.out, "(simulated; estimate");
  run_free(&r);
  a = run("plan --model gpt2-amp --cluster hier:4x8 --batch 256 "
          "--max-memory 4");
  b = run("plan --model gpt2-amp --cluster hier:4x8 --batch 256");
  assert_int_equal(a.rc, 0);
  assert_int_equal(b.rc, 0);
  assert_string_equal(drop_seconds(a.out), drop_seconds(b.out));
  run_free(&a);
  run_free(&b);
}

/* Ctrl-C during a long plan (issue 22): the exact mapper is still
** working on the kept plans (--map-time 20 with no node budget,
** --map-nodes 0, on a 128-device cluster whose mappings it cannot prove),
** SIGINT arrives after a second; the tool
** stops within a second, prints the best plans marked interrupted, writes
** -o complete and exits 130.  SIGTERM does the same with 143. */
static void test_interrupt(void **state)
{
  char dir[512], cmd[4096], pathp[600], pathj[600], pathe[600];
  static const int sigs[2][2] = {{2, 130}, {15, 143}};
  int k;
  (void)state;
  snprintf(dir, sizeof dir, "%s", fresh_dir("interrupt"));
  for (k = 0; k < 2; k++) {
    char *out = NULL, *err = NULL, *txt;
    json_t *j, *srch;
    long ms;
    int rc;
    pp_ctx *ctx;
    pp_model *m;
    pp_cluster *c;
    pp_plan *p;
    snprintf(pathp, sizeof pathp, "%s/p%d.json", dir, k);
    snprintf(pathj, sizeof pathj, "%s/out%d.json", dir, k);
    snprintf(pathe, sizeof pathe, "%s/err%d.txt", dir, k);
    snprintf(cmd, sizeof cmd,
             "%s plan --model gpt2-amp --cluster uniform_dist:128 --batch 256 "
             "--map-time 20 --map-nodes 0 --time-limit 120 --json -o '%s' > "
             "'%s' 2> '%s' & "
             "pid=$!; "
             "sleep 1.5; t0=$(date +%%s%%N); kill -%d $pid; wait $pid; "
             "rc=$?; t1=$(date +%%s%%N); echo $rc $(( (t1 - t0) / 1000000 ))",
             PP_TOOL, pathp, pathj, pathe, sigs[k][0]);
    assert_int_equal(tu_sh(cmd, &out, &err), 0);
    assert_int_equal(sscanf(out, "%d %ld", &rc, &ms), 2);
    assert_int_equal(rc, sigs[k][1]);
    if (ms >= 1000)
      fail_msg("signal %d: stopped after %ld ms", sigs[k][0], ms);
    txt = tu_slurp(pathe, NULL);
    assert_non_null(txt);
    expect_contains(txt, "interrupted by signal");
    free(txt);
    txt = tu_slurp(pathj, NULL);
    assert_non_null(txt);
    j = parse_json(txt);
    srch = json_object_get(j, "search");
    assert_true(json_is_true(json_object_get(srch, "interrupted")));
    assert_true(json_is_true(json_object_get(srch, "timed_out")));
    assert_true(json_array_size(json_object_get(j, "plans")) >= 1);
    json_decref(j);
    free(txt);
    /* the -o plan is complete and valid */
    assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
    assert_int_equal(pp_model_load(ctx, "gpt2-amp", &m), PP_OK);
    assert_int_equal(pp_cluster_load(ctx, "uniform_dist:128", &c), PP_OK);
    assert_int_equal(pp_plan_load(ctx, pathp, m, c, &p), PP_OK);
    pp_plan_destroy(p);
    pp_cluster_destroy(c);
    pp_model_destroy(m);
    pp_ctx_destroy(ctx);
    assert_int_equal(count_tmp(dir), 0);
  }
}

/* SIGKILL at 50 moments of a plan (issue 22): its -o file is absent or a
** complete plan, never half-written. */
static void test_kill_anytime(void **state)
{
  char dir[512], cmd[2048], path[600];
  pp_ctx *ctx;
  pp_model *m;
  pp_cluster *c;
  int k, complete = 0;
  uint64_t rng = 22;
  (void)state;
  snprintf(dir, sizeof dir, "%s", fresh_dir("sigkill"));
  assert_int_equal(pp_ctx_create(NULL, &ctx), PP_OK);
  assert_int_equal(pp_model_load(ctx, "gpt2-amp", &m), PP_OK);
  assert_int_equal(pp_cluster_load(ctx, "uniform_dist:128", &c), PP_OK);
  for (k = 0; k < 50; k++) {
    char *out = NULL, *err = NULL;
    /* 0 to 0.5 s: through the search and the writing of the plan */
    unsigned us = tu_rand(&rng, 500000);
    snprintf(path, sizeof path, "%s/p%d.json", dir, k);
    snprintf(cmd, sizeof cmd,
             "%s plan --model gpt2-amp --cluster uniform_dist:128 --batch 256 "
             "--map-time 0.05 --top 2 -o '%s' > /dev/null & pid=$!; "
             "sleep %u.%06u; kill -9 $pid 2>/dev/null; wait $pid; true",
             PP_TOOL, path, us / 1000000, us % 1000000);
    assert_int_equal(tu_sh(cmd, &out, &err), 0);
    if (file_exists(path)) {
      pp_plan *p = NULL;
      if (pp_plan_load(ctx, path, m, c, &p) != PP_OK)
        fail_msg("kill %d after %u us: %s is half-written: %s", k, us, path,
                 pp_ctx_errmsg(ctx));
      pp_plan_destroy(p);
      complete++;
    }
  }
  pp_cluster_destroy(c);
  pp_model_destroy(m);
  pp_ctx_destroy(ctx);
  assert_true(complete < 50); /* some kills landed before the write */
}

/* Output hygiene (issue 22): stdout write errors fail the command; -o
** keeps a file's mode, writes through a symbolic link (the link stays)
** and into a device in place (the node stays); plan's two outputs are
** both written or neither; a JSON input with a UTF-8 byte order mark is
** JSON; control characters of an input are escaped in errors. */
static void test_output_hygiene(void **state)
{
  char dir[512], f[600], link[600], target[600], cmd[2048];
  struct stat st;
  struct run r;
  char *out = NULL, *err = NULL;
  static const char *full[] = {"model gpt2-amp", "topo hier:2x4 --json",
                               "describe", "--help"};
  size_t i;
  (void)state;
  snprintf(dir, sizeof dir, "%s", fresh_dir("hygiene"));
  for (i = 0; i < sizeof full / sizeof *full; i++) {
    snprintf(cmd, sizeof cmd, "(%s %s > /dev/full)", PP_TOOL, full[i]);
    assert_int_equal(tu_sh(cmd, &out, &err), 1);
    expect_contains(err, "writing the standard output failed");
  }
  /* a 0600 file stays 0600 */
  snprintf(f, sizeof f, "%s/private.json", dir);
  write_text(f, "old\n");
  assert_int_equal(chmod(f, 0600), 0);
  r = run("model gpt2-amp -o '%s'", f);
  assert_int_equal(r.rc, 0);
  run_free(&r);
  assert_int_equal(stat(f, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
  /* through a symbolic link: the link stays, its target is written */
  snprintf(target, sizeof target, "%s/target.json", dir);
  snprintf(link, sizeof link, "%s/link.json", dir);
  write_text(target, "old\n");
  assert_int_equal(symlink("target.json", link), 0);
  r = run("model gpt2-amp -o '%s'", link);
  assert_int_equal(r.rc, 0);
  run_free(&r);
  assert_int_equal(lstat(link, &st), 0);
  assert_true(S_ISLNK(st.st_mode));
  {
    char *t = tu_slurp(target, NULL);
    assert_non_null(t);
    expect_contains(t, "\"name\": \"gpt2-amp\"");
    free(t);
  }
  /* a device: written in place, never replaced by a file */
  r = run("model gpt2-amp -o /dev/null");
  assert_int_equal(r.rc, 0);
  run_free(&r);
  assert_int_equal(stat("/dev/null", &st), 0);
  assert_true(S_ISCHR(st.st_mode));
  assert_int_equal(count_tmp(dir), 0);
  /* plan: -o and --trace, the trace's folder missing: neither written */
  snprintf(f, sizeof f, "%s/p.json", dir);
  r = run("plan -o '%s' --trace '%s/no-such-folder/t.json'", f, dir);
  assert_int_equal(r.rc, 1);
  expect_contains(r.err, "no-such-folder");
  run_free(&r);
  assert_false(file_exists(f));
  /* a byte order mark */
  snprintf(f, sizeof f, "%s/bom.json", dir);
  write_text(f, "\xEF\xBB\xBF{\"ops\": [{\"name\": \"a\", \"fwd_ms\": 1, "
                "\"bwd_ms\": 2, \"param_bytes\": 0, \"out_bytes\": 0, "
                "\"saved_bytes\": 0}]}\n");
  r = run("model '%s' --json", f);
  assert_int_equal(r.rc, 0);
  expect_contains(r.out, "\"operators\": 1");
  run_free(&r);
  /* an escape sequence in a name comes back escaped */
  snprintf(f, sizeof f, "%s/esc.json", dir);
  write_text(f, "{\"ops\": [{\"name\": \"a\\u001b[2J\", \"fwd_ms\": 1}]}\n");
  r = run("model '%s'", f);
  assert_int_equal(r.rc, 1);
  expect_contains(r.err, "a\\x1b[2J");
  assert_null(strchr(r.err, 0x1b));
  run_free(&r);
}

/* An export over an earlier one of the same kind leaves no stale file:
** a 1-host launch export over a 4-host one removes launch_node1..3.sh
** (issue 22), keeps a file of the user's, and an export of another kind
** into the folder removes nothing of the launch export's. */
static void test_export_no_stale(void **state)
{
  char dir[512], p4[600], p1[600], mine[600], path[700];
  struct run r;
  int h;
  (void)state;
  snprintf(dir, sizeof dir, "%s", fresh_dir("stale"));
  snprintf(p4, sizeof p4, "%s/p4.json", dir);
  snprintf(p1, sizeof p1, "%s/p1.json", dir);
  snprintf(mine, sizeof mine, "%s/out/notes.txt", dir);
  r = run("plan --model gpt2-amp --cluster hier:4x2 --batch 32 -o '%s'", p4);
  assert_int_equal(r.rc, 0);
  run_free(&r);
  r = run("plan --model gpt2-amp --cluster hier:1x2 --batch 32 -o '%s'", p1);
  assert_int_equal(r.rc, 0);
  run_free(&r);
  r = run("export '%s' --model gpt2-amp --cluster hier:4x2 --to launch -o "
          "'%s/out'",
          p4, dir);
  assert_int_equal(r.rc, 0);
  run_free(&r);
  write_text(mine, "mine\n");
  r = run("export '%s' --model gpt2-amp --cluster hier:1x2 --to megatron -o "
          "'%s/out'",
          p1, dir);
  assert_int_equal(r.rc, 0);
  run_free(&r);
  snprintf(path, sizeof path, "%s/out/launch_node3.sh", dir);
  assert_true(file_exists(path)); /* another kind removes nothing */
  r = run("export '%s' --model gpt2-amp --cluster hier:1x2 --to launch -o "
          "'%s/out'",
          p1, dir);
  assert_int_equal(r.rc, 0);
  expect_contains(r.out, "removed");
  run_free(&r);
  for (h = 0; h < 4; h++) {
    snprintf(path, sizeof path, "%s/out/launch_node%d.sh", dir, h);
    assert_int_equal(file_exists(path), h == 0);
  }
  assert_true(file_exists(mine));
  snprintf(path, sizeof path, "%s/out/megatron_args.txt", dir);
  assert_true(file_exists(path));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_default),
      cmocka_unit_test(test_default_json),
      cmocka_unit_test(test_model_json),
      cmocka_unit_test(test_topo_json),
      cmocka_unit_test(test_topo_links_json),
      cmocka_unit_test(test_model_out),
      cmocka_unit_test(test_topo_out),
      cmocka_unit_test(test_chain),
      cmocka_unit_test(test_list),
      cmocka_unit_test(test_missing_file),
      cmocka_unit_test(test_malformed_file),
      cmocka_unit_test(test_usage_errors),
      cmocka_unit_test(test_no_half_written),
      cmocka_unit_test(test_seed),
      cmocka_unit_test(test_json_always_valid),
      cmocka_unit_test(test_help_version),
      cmocka_unit_test(test_command_help),
      cmocka_unit_test(test_opt_equals),
      cmocka_unit_test(test_other_command_option),
      cmocka_unit_test(test_out_of_range),
      cmocka_unit_test(test_limit_before_any_plan),
      cmocka_unit_test(test_enum_names),
      cmocka_unit_test(test_plan_alone),
      cmocka_unit_test(test_surplus_positional),
      cmocka_unit_test(test_interrupt),
      cmocka_unit_test(test_kill_anytime),
      cmocka_unit_test(test_output_hygiene),
      cmocka_unit_test(test_export_no_stale),
      cmocka_unit_test(test_max_memory),
      cmocka_unit_test(test_partition_stop),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
