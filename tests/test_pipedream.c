/* SPDX-License-Identifier: MIT */
/*
** The PipeDream graph.txt reader (src/format/pipedream.c): every profile
** shipped in data/pipedream loads and agrees with models_summary.tsv and
** with an independent re-parse of the file done here; the inferred
** minibatch; GNMT's list-valued activations; the DAG kept as it is;
** malformed inputs fail with a status, the line and the culprit; a
** 100,000-node input.
*/
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- helpers ---------------------------------------------------------- */

static pp_status read_pd(pp_ctx *ctx, const char *text, pp_model **m)
{
  return pp_model_read_pipedream(ctx, text, strlen(text), "test.txt", m);
}

/* The value of hyper-parameter key, or NaN when the model lacks it. */
static double hyper(const pp_model *m, const char *key)
{
  int32_t i;
  for (i = 0; i < pp_model_nhyper(m); i++) {
    double v = 0;
    const char *k = pp_model_hyper(m, i, &v);
    if (k && strcmp(k, key) == 0)
      return v;
  }
  return NAN;
}

static void assert_rel(double got, double want, double tol, const char *what)
{
  if (!(fabs(got - want) <= tol * fmax(fabs(want), 1e-300) + 1e-12))
    fail_msg("%s: got %.17g, want %.17g (relative tolerance %g)", what, got,
             want, tol);
}

static bool has_edge(const pp_model *m, int32_t a, int32_t b)
{
  const int32_t *es;
  int32_t n, i, from, to;
  pp_model_op_edges(m, a, 0, &es, &n);
  for (i = 0; i < n; i++) {
    assert_int_equal(pp_model_edge(m, es[i], &from, &to, NULL), PP_OK);
    assert_int_equal(from, a);
    if (to == b)
      return true;
  }
  return false;
}

/* Copy [p, p+n) trimmed of blanks into buf. */
static void trim_copy(char *buf, size_t cap, const char *p, size_t n)
{
  while (n && (*p == ' ' || *p == '\t' || *p == '\r')) {
    p++;
    n--;
  }
  while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
    n--;
  assert_true(n < cap);
  memcpy(buf, p, n);
  buf[n] = '\0';
}

/* A number after "key=" in a node line, summing a "[a; b]" list. */
static double field(const char *line, const char *key, int *is_list)
{
  char pat[64];
  const char *p;
  char *end;
  double sum = 0;
  snprintf(pat, sizeof pat, "%s=", key);
  p = strstr(line, pat);
  if (!p)
    fail_msg("test parser: no %s in: %s", key, line);
  p += strlen(pat);
  if (is_list)
    *is_list = *p == '[';
  if (*p != '[')
    return strtod(p, NULL);
  p++;
  for (;;) {
    sum += strtod(p, &end);
    assert_true(end != p);
    p = end;
    while (*p == ' ')
      p++;
    if (*p == ']')
      return sum;
    assert_true(*p == ';');
    p++;
  }
}

/* What the test's own parser finds in a graph.txt. */
struct reparse {
  int nodes, edges, inputs, lists;
  double fwd_all, fwd_noinput, bwd, param;
};

/* Re-parse the file independently of the library and compare every node
** and edge with the loaded model. */
static void check_against_file(const pp_model *m, const char *path,
                               struct reparse *rp)
{
  size_t len;
  char *text = tu_slurp(path, &len), *line, *save = NULL;
  memset(rp, 0, sizeof *rp);
  assert_non_null(text);
  for (line = strtok_r(text, "\n", &save); line;
       line = strtok_r(NULL, "\n", &save)) {
    const char *s1 = strstr(line, " -- ");
    char a[256], b[256];
    int32_t ia, ib;
    if (!*line)
      continue;
    assert_non_null(s1);
    if (line[0] == '\t') {
      trim_copy(a, sizeof a, line, (size_t)(s1 - line));
      trim_copy(b, sizeof b, s1 + 4, strlen(s1 + 4));
      ia = pp_model_find_op(m, a);
      ib = pp_model_find_op(m, b);
      if (ia < 0 || ib < 0 || !has_edge(m, ia, ib))
        fail_msg("%s: edge %s -> %s missing from the model", path, a, b);
      rp->edges++;
    } else {
      pp_op_desc d;
      const char *desc = s1 + 4;
      int is_list = 0;
      double f, bw, act, par;
      int32_t v;
      trim_copy(a, sizeof a, line, (size_t)(s1 - line));
      v = pp_model_find_op(m, a);
      if (v < 0)
        fail_msg("%s: node %s missing from the model", path, a);
      assert_int_equal(pp_model_op(m, v, &d), PP_OK);
      f = field(line, "forward_compute_time", NULL);
      bw = field(line, "backward_compute_time", NULL);
      act = field(line, "activation_size", &is_list);
      par = field(line, "parameter_size", NULL);
      assert_rel(d.fwd_ms, f, 1e-12, a);
      assert_rel(d.bwd_ms, bw, 1e-12, a);
      assert_true(d.param_bytes == (int64_t)llround(par));
      assert_true(d.out_bytes == (int64_t)llround(act));
      /* PipeDream's assumption: the output is what backward keeps. */
      assert_true(d.saved_bytes == d.out_bytes);
      assert_true(d.update_ms == 0);
      rp->nodes++;
      rp->lists += is_list;
      rp->fwd_all += f;
      rp->bwd += bw;
      rp->param += par;
      if (strncmp(desc, "Input", 5) == 0) {
        rp->inputs++;
        assert_non_null(d.kind);
        assert_string_equal(d.kind, "input");
      } else {
        rp->fwd_noinput += f;
        /* The kind is the description up to its first '('. */
        if (d.kind) {
          size_t k = strlen(d.kind);
          assert_memory_equal(d.kind, desc, k);
          assert_true(desc[k] == '(' || desc[k] == ' ' || desc[k] == '\0' ||
                      k == 63);
        }
      }
    }
  }
  free(text);
}

/* ---- the shipped profiles --------------------------------------------- */

#define MAXROWS 64

struct tsv_row {
  char model[64];
  int nodes, edges, inputs, lists;
  double fwd, bwd, params_mb;
  int batch; /* 0: not inferred (blank) */
};

static int read_summary(struct tsv_row *rows)
{
  size_t len;
  char *text = tu_slurp(tu_path("data/pipedream/models_summary.tsv"), &len);
  char *line, *save = NULL;
  int col[10], nrow = 0, ncol = 0, i;
  static const char *const want[10] = {
      "model",       "nodes",           "edges",
      "input_nodes", "sum_fwd_ms",      "sum_bwd_ms",
      "params_MB",   "batch(inferred)", "list_activation_nodes",
      "source_path"};
  assert_non_null(text);
  for (line = strtok_r(text, "\n", &save); line;
       line = strtok_r(NULL, "\n", &save)) {
    char *cells[16];
    char *p = line;
    int n = 0;
    /* Split on TABs by hand: strtok would merge an empty cell. */
    for (;;) {
      char *t = strchr(p, '\t');
      assert_true(n < 16);
      cells[n++] = p;
      if (!t)
        break;
      *t = '\0';
      p = t + 1;
    }
    if (ncol == 0) {
      /* The header: find the columns by name. */
      ncol = n;
      for (i = 0; i < 10; i++) {
        int c;
        col[i] = -1;
        for (c = 0; c < n; c++)
          if (strcmp(cells[c], want[i]) == 0)
            col[i] = c;
        if (col[i] < 0)
          fail_msg("models_summary.tsv lacks column %s", want[i]);
      }
      continue;
    }
    assert_int_equal(n, ncol);
    assert_true(nrow < MAXROWS);
    snprintf(rows[nrow].model, sizeof rows[nrow].model, "%s", cells[col[0]]);
    rows[nrow].nodes = atoi(cells[col[1]]);
    rows[nrow].edges = atoi(cells[col[2]]);
    rows[nrow].inputs = atoi(cells[col[3]]);
    rows[nrow].fwd = strtod(cells[col[4]], NULL);
    rows[nrow].bwd = strtod(cells[col[5]], NULL);
    rows[nrow].params_mb = strtod(cells[col[6]], NULL);
    rows[nrow].batch = atoi(cells[col[7]]); /* "256 (224x224)" or "" */
    rows[nrow].lists = atoi(cells[col[8]]);
    nrow++;
  }
  free(text);
  return nrow;
}

/* The batch sizes data/pipedream/README.md lists for the image models. */
static const struct {
  const char *model;
  int batch;
} readme_batch[] = {
    {"alexnet", 256},      {"resnet18", 256},      {"squeezenet1_0", 256},
    {"vgg16", 128},        {"resnet50", 128},      {"resnext50", 128},
    {"inception_v3", 128}, {"nasnetamobile", 128}, {"densenet121", 64},
    {"resnet101", 64},     {"resnext101", 64},     {"nasnetalarge", 16},
};
#define NREADME ((int)(sizeof readme_batch / sizeof readme_batch[0]))

static void t_all_profiles(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  struct tsv_row rows[MAXROWS];
  int nrow = read_summary(rows), r, k, seen_readme = 0, ndir = 0;
  DIR *dir;
  struct dirent *de;
  assert_int_equal(nrow, 14);

  /* Every data/pipedream/<model>/graph.txt has a row in the TSV. */
  dir = opendir(tu_path("data/pipedream"));
  assert_non_null(dir);
  while ((de = readdir(dir)) != NULL) {
    char rel[512];
    struct stat st;
    bool found = false;
    snprintf(rel, sizeof rel, "data/pipedream/%s/graph.txt", de->d_name);
    if (de->d_name[0] == '.' || stat(tu_path(rel), &st) != 0)
      continue;
    ndir++;
    for (r = 0; r < nrow; r++)
      found |= strcmp(rows[r].model, de->d_name) == 0;
    if (!found)
      fail_msg("%s has no row in models_summary.tsv", rel);
  }
  closedir(dir);
  assert_int_equal(ndir, nrow);

  for (r = 0; r < nrow; r++) {
    const struct tsv_row *w = &rows[r];
    char rel[512], path[4096];
    pp_model *m = NULL;
    pp_model_stats st;
    struct reparse rp;
    double fwd_all = 0, fwd_noinput = 0, bwd = 0, param = 0;
    int32_t v, ninput = 0;
    pp_status rc;

    snprintf(rel, sizeof rel, "data/pipedream/%.63s/graph.txt", w->model);
    snprintf(path, sizeof path, "%s", tu_path(rel));
    rc = pp_model_load(ctx, path, &m);
    if (rc != PP_OK)
      fail_msg("%s: %s", rel, pp_ctx_errmsg(ctx));
    assert_string_equal(pp_model_name(m), w->model);
    assert_string_equal(pp_model_source(m), path);
    assert_int_equal(pp_model_nop(m), w->nodes);
    assert_int_equal(pp_model_nedge(m), w->edges);
    assert_int_equal(pp_model_edges_implied(m), 0);
    assert_null(pp_model_reference_type(m));
    for (v = 0; v < pp_model_nop(m); v++) {
      pp_op_desc d;
      assert_int_equal(pp_model_op(m, v, &d), PP_OK);
      bwd += d.bwd_ms;
      param += (double)d.param_bytes;
      fwd_all += d.fwd_ms;
      if (d.kind && strcmp(d.kind, "input") == 0)
        ninput++;
      else
        fwd_noinput += d.fwd_ms;
      assert_int_equal(pp_model_op_tied(m, v), -1);
    }
    /* models_summary.tsv's conventions: sum_fwd_ms leaves out the Input
    ** nodes (their forward time is data loading, which PipeDream's
    ** optimizer drops; they have no backward time, so sum_bwd_ms is the
    ** plain sum); params_MB is bytes / 1e6; the TSV rounds to 3 and 1
    ** decimals, so the comparison allows half a unit of the last place
    ** (a relative 1e-6 cannot hold against rounded figures).  The exact
    ** sums are checked below against our own parse of the file. */
    assert_int_equal(ninput, w->inputs);
    if (fabs(fwd_noinput - w->fwd) > 0.0005 + 1e-9 ||
        fabs(bwd - w->bwd) > 0.0005 + 1e-9 ||
        fabs(param / 1e6 - w->params_mb) > 0.05 + 1e-9)
      fail_msg("%s: sums fwd %.6f bwd %.6f params %.3f MB; TSV says %.3f "
               "%.3f %.1f",
               w->model, fwd_noinput, bwd, param / 1e6, w->fwd, w->bwd,
               w->params_mb);

    /* Exact: every node and edge of the file, independently parsed. */
    check_against_file(m, path, &rp);
    assert_int_equal(rp.nodes, w->nodes);
    assert_int_equal(rp.edges, w->edges);
    assert_int_equal(rp.inputs, w->inputs);
    assert_int_equal(rp.lists, w->lists);
    assert_rel(fwd_all, rp.fwd_all, 1e-6, "sum fwd");
    assert_rel(fwd_noinput, rp.fwd_noinput, 1e-6, "sum fwd without inputs");
    assert_rel(bwd, rp.bwd, 1e-6, "sum bwd");
    assert_rel(param, rp.param, 1e-6, "sum params");

    /* The whole-model figures agree with the per-operator sums. */
    assert_int_equal(pp_model_stats_get(ctx, m, &st), PP_OK);
    assert_int_equal(st.nop, w->nodes);
    assert_int_equal(st.nedge, w->edges);
    assert_rel(st.fwd_ms, fwd_all, 1e-9, "stats fwd");
    assert_rel(st.bwd_ms, bwd, 1e-9, "stats bwd");
    assert_rel(st.param_bytes, param, 1e-9, "stats params");
    assert_true(st.nsource >= w->inputs);

    /* The minibatch, inferred from the Input activation. */
    if (w->batch > 0) {
      assert_int_equal(pp_model_micro_batch(m), w->batch);
      assert_true(hyper(m, "batch_inferred") == 1);
    } else {
      /* GNMT: the Input activations are 0, nothing to infer from. */
      assert_int_equal(pp_model_micro_batch(m), 1);
      assert_true(hyper(m, "batch_inferred") == 0);
    }
    for (k = 0; k < NREADME; k++)
      if (strcmp(readme_batch[k].model, w->model) == 0) {
        seen_readme++;
        if (pp_model_micro_batch(m) != readme_batch[k].batch)
          fail_msg("%s: micro-batch %d, README says %d", w->model,
                   (int)pp_model_micro_batch(m), readme_batch[k].batch);
        assert_true(hyper(m, "batch_inferred") == 1);
      }
    pp_model_destroy(m);
  }
  assert_int_equal(seen_readme, NREADME);
}

/* The other graph files shipped next to the profiles load too. */
static void t_other_files(void **state)
{
  static const struct {
    const char *rel;
    int nop, nedge; /* -1: not checked */
  } files[] = {
      {"data/pipedream/resnet18/graph_copy.txt", 71, 79},
      {"data/pipedream/vgg16/partitioned_example.txt", 41, 41},
      {"data/pipedream/resnet50/partitioned_example.txt", 177, 193},
      {"data/pipedream/resnext50/graph_generated_variant.txt", -1, -1},
      {"data/pipedream/_toy/test.txt", -1, -1},
      {"data/pipedream/_toy/test2.txt", -1, -1},
      {"data/pipedream/inception_v3/derived/graph_compressed_branches.txt", 92,
       -1},
      {"data/pipedream/nasnetamobile/derived/graph_compressed_branches.txt",
       290, -1},
      {"data/pipedream/nasnetalarge/derived/graph_compressed_branches.txt", 388,
       -1},
  };
  pp_ctx *ctx = tu_fix_ctx(state);
  size_t i;
  for (i = 0; i < sizeof files / sizeof files[0]; i++) {
    pp_model *m = NULL;
    struct reparse rp;
    char path[4096];
    snprintf(path, sizeof path, "%s", tu_path(files[i].rel));
    if (pp_model_load(ctx, path, &m) != PP_OK)
      fail_msg("%s: %s", files[i].rel, pp_ctx_errmsg(ctx));
    if (files[i].nop >= 0)
      assert_int_equal(pp_model_nop(m), files[i].nop);
    if (files[i].nedge >= 0)
      assert_int_equal(pp_model_nedge(m), files[i].nedge);
    check_against_file(m, path, &rp);
    assert_int_equal(rp.nodes, pp_model_nop(m));
    if (rp.edges > 0)
      assert_int_equal(rp.edges, pp_model_nedge(m));
    pp_model_destroy(m);
  }
}

/* GNMT's LSTMs have tuple outputs: activation_size=[a; b; c] is summed. */
static void t_gnmt_lists(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = NULL;
  pp_op_desc d;
  int32_t v;
  assert_int_equal(
      pp_model_load(ctx, tu_path("data/pipedream/gnmt/graph.txt"), &m), PP_OK);
  /* node7 -- LSTM(2048, 1024) -- ..., activation_size=[6291456.0;
  ** 131072.0; 131072.0], parameter_size=50364416.000 */
  v = pp_model_find_op(m, "node7");
  assert_true(v >= 0);
  assert_int_equal(pp_model_op(m, v, &d), PP_OK);
  assert_string_equal(d.kind, "LSTM");
  assert_true(d.out_bytes == 6291456 + 131072 + 131072);
  assert_true(d.saved_bytes == d.out_bytes);
  assert_true(d.param_bytes == 50364416);
  assert_rel(d.fwd_ms, 3.190, 1e-12, "node7 fwd");
  assert_rel(d.bwd_ms, 5.348, 1e-12, "node7 bwd");
  /* Edges leaving it carry the summed size. */
  {
    const int32_t *es;
    int32_t n, i;
    int64_t bytes;
    pp_model_op_edges(m, v, 0, &es, &n);
    assert_true(n >= 1);
    for (i = 0; i < n; i++) {
      assert_int_equal(pp_model_edge(m, es[i], NULL, NULL, &bytes), PP_OK);
      assert_true(bytes == d.out_bytes);
    }
  }
  /* Three Input sources plus "hidden"; not a chain. */
  assert_int_equal(pp_model_is_chain(m), 0);
  assert_string_equal(pp_model_name(m), "gnmt");
  pp_model_destroy(m);

  /* The same from a string, with irregular spacing inside the list. */
  assert_int_equal(
      read_pd(ctx,
              "a -- LSTM(1, 1) -- forward_compute_time=1, "
              "backward_compute_time=2, activation_size=[1.0;2.0 ;  3.5], "
              "parameter_size=4\n",
              &m),
      PP_OK);
  assert_int_equal(pp_model_op(m, 0, &d), PP_OK);
  assert_true(d.out_bytes == 7); /* 6.5 rounded to nearest, away from 0 */
  pp_model_destroy(m);
}

/* ResNet-18 keeps its DAG (residual connections), with the file's edges. */
static void t_resnet18_dag(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = NULL;
  pp_model_stats st;
  const int32_t *topo;
  int32_t v, e, from, to, nadd = 0;
  int64_t bytes;
  assert_int_equal(
      pp_model_load(ctx, tu_path("data/pipedream/resnet18/graph.txt"), &m),
      PP_OK);
  assert_int_equal(pp_model_is_chain(m), 0);
  assert_int_equal(pp_model_edges_implied(m), 0);
  assert_int_equal(pp_model_nop(m), 71);
  assert_int_equal(pp_model_nedge(m), 79);
  /* The first edge lines of the file, in file order (edges keep their
  ** input order). */
  assert_int_equal(pp_model_edge(m, 0, &from, &to, &bytes), PP_OK);
  assert_string_equal(pp_model_op_name(m, from), "node11");
  assert_string_equal(pp_model_op_name(m, to), "node12");
  assert_int_equal(pp_model_edge(m, 1, &from, &to, &bytes), PP_OK);
  assert_string_equal(pp_model_op_name(m, from), "node10");
  assert_string_equal(pp_model_op_name(m, to), "node11");
  assert_int_equal(pp_model_edge(m, 2, &from, &to, &bytes), PP_OK);
  assert_string_equal(pp_model_op_name(m, from), "node13");
  assert_string_equal(pp_model_op_name(m, to), "node14");
  /* Node lines come in arbitrary order: node11 is listed first. */
  assert_string_equal(pp_model_op_name(m, 0), "node11");
  /* Every edge carries its source's output; every Add has two inputs. */
  for (e = 0; e < pp_model_nedge(m); e++) {
    pp_op_desc d;
    assert_int_equal(pp_model_edge(m, e, &from, &to, &bytes), PP_OK);
    assert_int_equal(pp_model_op(m, from, &d), PP_OK);
    assert_true(bytes == d.out_bytes);
  }
  for (v = 0; v < pp_model_nop(m); v++) {
    pp_op_desc d;
    const int32_t *es;
    int32_t n;
    assert_int_equal(pp_model_op(m, v, &d), PP_OK);
    pp_model_op_edges(m, v, 1, &es, &n);
    if (d.kind && strcmp(d.kind, "Add") == 0) {
      assert_int_equal(n, 2);
      nadd++;
    }
  }
  assert_int_equal(nadd, 8); /* 8 basic blocks */
  /* A valid topological order exists and respects every edge. */
  topo = pp_model_topo_order(m);
  assert_non_null(topo);
  {
    int32_t pos[71];
    for (v = 0; v < 71; v++)
      pos[topo[v]] = v;
    for (e = 0; e < pp_model_nedge(m); e++) {
      assert_int_equal(pp_model_edge(m, e, &from, &to, NULL), PP_OK);
      assert_true(pos[from] < pos[to]);
    }
  }
  assert_int_equal(pp_model_stats_get(ctx, m, &st), PP_OK);
  assert_int_equal(st.nsource, 1);
  assert_true(st.width >= 2);
  assert_true(st.depth < 71);
  pp_model_destroy(m);
}

/* ---- small inputs ----------------------------------------------------- */

#define NODE(id, desc, f, b, act, par)                                         \
  id " -- " desc " -- forward_compute_time=" f ", backward_compute_time=" b    \
     ", activation_size=" act ", parameter_size=" par "\n"

static void t_small_ok(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = NULL;
  pp_op_desc d;
  int32_t from, to;

  /* The optional " -- stage_id=K" suffix; a blank line. */
  assert_int_equal(
      read_pd(ctx,
              "n1 -- Input -- forward_compute_time=0.5, "
              "backward_compute_time=0.0, activation_size=602112.0, "
              "parameter_size=0.0 -- stage_id=3\n"
              "\n"
              "n2 -- Conv2d(3, 8, kernel_size=(3, 3)) -- "
              "forward_compute_time=1.250, backward_compute_time=2.500, "
              "activation_size=1024.0, parameter_size=864.000 -- "
              "stage_id=0\n"
              "\tn1 -- n2\n",
              &m),
      PP_OK);
  assert_int_equal(pp_model_nop(m), 2);
  assert_int_equal(pp_model_nedge(m), 1);
  assert_int_equal(pp_model_is_chain(m), 1);
  assert_int_equal(pp_model_edge(m, 0, &from, &to, NULL), PP_OK);
  assert_int_equal(from, 0);
  assert_int_equal(to, 1);
  assert_int_equal(pp_model_op(m, 1, &d), PP_OK);
  assert_string_equal(d.name, "n2");
  assert_string_equal(d.kind, "Conv2d");
  assert_rel(d.fwd_ms, 1.25, 1e-15, "fwd");
  assert_rel(d.bwd_ms, 2.5, 1e-15, "bwd");
  assert_true(d.param_bytes == 864);
  assert_true(d.out_bytes == 1024);
  assert_int_equal(pp_model_op(m, 0, &d), PP_OK);
  assert_string_equal(d.kind, "input");
  /* 602112 = 3 * 224 * 224 * 4: a minibatch of one image. */
  assert_int_equal(pp_model_micro_batch(m), 1);
  assert_true(hyper(m, "batch_inferred") == 1);
  assert_string_equal(pp_model_name(m), "test");
  pp_model_destroy(m);

  /* Windows line endings, a blank line of spaces, a tiny time that
  ** underflows to 0. */
  assert_int_equal(
      read_pd(ctx,
              "a -- ReLU -- forward_compute_time=1e-400, "
              "backward_compute_time=2, activation_size=3, "
              "parameter_size=4\r\n"
              "   \r\n"
              "b -- ReLU -- forward_compute_time=1, backward_compute_time=2, "
              "activation_size=[3; 4], parameter_size=4\r\n"
              "\ta -- b\r\n",
              &m),
      PP_OK);
  assert_int_equal(pp_model_nop(m), 2);
  assert_int_equal(pp_model_op(m, 0, &d), PP_OK);
  assert_true(d.fwd_ms >= 0 && d.fwd_ms < 1e-300);
  assert_int_equal(pp_model_op(m, 1, &d), PP_OK);
  assert_true(d.out_bytes == 7 && d.param_bytes == 4);
  pp_model_destroy(m);

  /* 299 x 299 images, batch 3; the edge line comes before the nodes. */
  assert_int_equal(
      read_pd(ctx,
              "\tb -- a\n" NODE("a", "Linear(1, 1)", "1", "1", "4", "8")
                  NODE("b", "Input", "0", "0", "3218436", "0"),
              &m),
      PP_OK);
  assert_int_equal(pp_model_micro_batch(m), 3);
  assert_true(hyper(m, "batch_inferred") == 1);
  assert_int_equal(pp_model_nedge(m), 1);
  assert_int_equal(pp_model_edge(m, 0, &from, &to, NULL), PP_OK);
  assert_string_equal(pp_model_op_name(m, from), "b");
  assert_string_equal(pp_model_op_name(m, to), "a");
  /* The topological order puts b first though it is listed second. */
  assert_int_equal(pp_model_topo_order(m)[0], 1);
  pp_model_destroy(m);

  /* No Input node: batch stays 1 and is not inferred; no edges: a chain
  ** in listed order. */
  assert_int_equal(read_pd(ctx,
                           NODE("x", "ReLU", "1", "2", "3", "0")
                               NODE("y", "ReLU", "1", "2", "3", "0")
                                   NODE("z", "ReLU", "1", "2", "3", "0"),
                           &m),
                   PP_OK);
  assert_int_equal(pp_model_micro_batch(m), 1);
  assert_true(hyper(m, "batch_inferred") == 0);
  assert_int_equal(pp_model_nedge(m), 2);
  assert_int_equal(pp_model_edges_implied(m), 1);
  assert_int_equal(pp_model_is_chain(m), 1);
  pp_model_destroy(m);

  /* An Input whose size is no image batch: not inferred. */
  assert_int_equal(read_pd(ctx, NODE("i", "Input", "0", "0", "1000", "0"), &m),
                   PP_OK);
  assert_int_equal(pp_model_micro_batch(m), 1);
  assert_true(hyper(m, "batch_inferred") == 0);
  pp_model_destroy(m);

  /* The source defaults to "graph.txt"; the model is named from it. */
  {
    const char *t = NODE("i", "Input", "0", "0", "0", "0");
    assert_int_equal(pp_model_read_pipedream(ctx, t, strlen(t), NULL, &m),
                     PP_OK);
    assert_non_null(pp_model_source(m));
    pp_model_destroy(m);
    assert_int_equal(
        pp_model_read_pipedream(ctx, t, strlen(t), "dir/mymodel/graph.txt", &m),
        PP_OK);
    assert_string_equal(pp_model_name(m), "mymodel");
    pp_model_destroy(m);
  }
  /* Misuse. */
  assert_int_equal(pp_model_read_pipedream(ctx, NULL, 0, "x", &m), PP_EINVAL);
  assert_int_equal(pp_model_read_pipedream(ctx, "", 0, "x", NULL), PP_EINVAL);
  pp_ctx_clear_error(ctx);
}

/* One malformed input: status, and every substring in the message. */
static void bad(pp_ctx *ctx, const char *text, size_t len, pp_status rc,
                const char *s1, const char *s2, const char *s3)
{
  pp_model *m = (pp_model *)&m; /* must be reset to NULL */
  pp_status got = pp_model_read_pipedream(ctx, text, len, "test.txt", &m);
  assert_null(m);
  tu_expect_error(ctx, got, rc, s1, s2, s3, (const char *)NULL);
}

#define BAD(text, rc, s1, s2, s3) bad(ctx, text, strlen(text), rc, s1, s2, s3)
#define GOOD1 NODE("a", "ReLU", "1", "2", "3", "4")
#define GOOD2 NODE("b", "ReLU", "1", "2", "3", "4")

static void t_malformed(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  const char *file;
  long line, col;

  /* Nothing at all, or only blank lines. */
  BAD("", PP_EINPUT, "test.txt", "no operators", NULL);
  BAD("\n\n\r\n", PP_EINPUT, "test.txt", "no operators", NULL);

  /* A node line without the " -- " separators. */
  BAD(GOOD1 "b ReLU forward_compute_time=1, backward_compute_time=2, "
            "activation_size=3, parameter_size=4\n",
      PP_EPARSE, "test.txt:2:", "node line", "--");
  /* One separator only. */
  BAD("a -- forward_compute_time=1, backward_compute_time=2, "
      "activation_size=3, parameter_size=4\n",
      PP_EPARSE, "test.txt:1:", "node line", NULL);
  pp_ctx_errloc(ctx, &file, &line, &col); /* cleared: nothing */
  assert_int_equal(line, 0);
  {
    /* The error location is kept apart too. */
    pp_model *m = NULL;
    const char *t = GOOD1 GOOD2 "c ReLU\n";
    assert_int_equal(read_pd(ctx, t, &m), PP_EPARSE);
    pp_ctx_errloc(ctx, &file, &line, &col);
    assert_string_equal(file, "test.txt");
    assert_int_equal(line, 3);
    pp_ctx_clear_error(ctx);
  }

  /* Each metadata key is required. */
  BAD("a -- ReLU -- backward_compute_time=2, activation_size=3, "
      "parameter_size=4\n",
      PP_EPARSE, "test.txt:1:", "forward_compute_time=", NULL);
  BAD(GOOD1 "b -- ReLU -- forward_compute_time=2, activation_size=3, "
            "parameter_size=4\n",
      PP_EPARSE, "test.txt:2:", "backward_compute_time=", NULL);
  BAD("a -- ReLU -- forward_compute_time=1, backward_compute_time=2, "
      "parameter_size=4\n",
      PP_EPARSE, "test.txt:1:", "activation_size=", NULL);
  BAD("a -- ReLU -- forward_compute_time=1, backward_compute_time=2, "
      "activation_size=3\n",
      PP_EPARSE, "test.txt:1:", "parameter_size=", NULL);
  /* A key inside a longer word does not count. */
  BAD("a -- ReLU -- xforward_compute_time=1, backward_compute_time=2, "
      "activation_size=3, parameter_size=4\n",
      PP_EPARSE, "test.txt:1:", "forward_compute_time=", NULL);

  /* Not a number. */
  BAD(GOOD1 NODE("b", "ReLU", "abc", "2", "3", "4"), PP_EPARSE,
      "test.txt:2:", "forward_compute_time", "number");
  BAD(NODE("a", "ReLU", "1", "", "3", "4"), PP_EPARSE,
      "test.txt:1:", "backward_compute_time", "number");
  BAD(NODE("a", "ReLU", "1", "2x", "3", "4"), PP_EPARSE,
      "test.txt:1:", "backward_compute_time", "number");
  BAD(NODE("a", "ReLU", "1", "2", "[1; x]", "4"), PP_EPARSE,
      "test.txt:1:", "activation_size", "number");
  BAD(NODE("a", "ReLU", "1", "2", "[1; 2", "4"), PP_EPARSE,
      "test.txt:1:", "activation_size", "a list is");
  BAD(NODE("a", "ReLU", "1", "2", "[1; inf]", "4"), PP_EINPUT,
      "test.txt:1:", "activation_size", "finite");
  BAD(NODE("a", "ReLU", "1", "2", "[nan; 1]", "4"), PP_EINPUT,
      "test.txt:1:", "activation_size", "finite");
  BAD(NODE("a", "ReLU", "[inf]", "2", "3", "4"), PP_EINPUT,
      "test.txt:1:", "forward_compute_time", "finite");
  /* Text after a number is not ignored. */
  BAD(NODE("a", "ReLU", "1 junk", "2", "3", "4"), PP_EPARSE,
      "test.txt:1:", "forward_compute_time", "after the number");

  /* Negative. */
  BAD(GOOD1 GOOD2 NODE("c", "ReLU", "-1", "2", "3", "4"), PP_EINPUT,
      "test.txt:3:", "forward_compute_time", "negative");
  BAD(NODE("a", "ReLU", "1", "2", "3", "-4"), PP_EINPUT,
      "test.txt:1:", "parameter_size", "negative");
  BAD(NODE("a", "ReLU", "1", "2", "[1; -2]", "4"), PP_EINPUT,
      "test.txt:1:", "activation_size", "negative");

  /* NaN and infinity. */
  BAD(NODE("a", "ReLU", "nan", "2", "3", "4"), PP_EINPUT,
      "test.txt:1:", "forward_compute_time", "finite");
  BAD(NODE("a", "ReLU", "1", "NaN", "3", "4"), PP_EINPUT,
      "test.txt:1:", "backward_compute_time", "finite");
  BAD(GOOD1 NODE("b", "ReLU", "inf", "2", "3", "4"), PP_EINPUT,
      "test.txt:2:", "forward_compute_time", "finite");
  BAD(NODE("a", "ReLU", "1", "2", "3", "Infinity"), PP_EINPUT,
      "test.txt:1:", "parameter_size", "finite");
  BAD(NODE("a", "ReLU", "1", "-inf", "3", "4"), PP_EINPUT,
      "test.txt:1:", "backward_compute_time", NULL);

  /* Out of range: 1e400 overflows a double. */
  BAD(NODE("a", "ReLU", "1e400", "2", "3", "4"), PP_EINPUT,
      "test.txt:1:", "forward_compute_time", "finite");
  BAD(GOOD1 NODE("b", "ReLU", "1", "2", "3", "1e400"), PP_EINPUT,
      "test.txt:2:", "parameter_size", "finite");
  /* Finite but beyond 63-bit sizes. */
  BAD(NODE("a", "ReLU", "1", "2", "3", "5e18"), PP_ELIMIT,
      "test.txt:1:", "too large", NULL);
  BAD(NODE("a", "ReLU", "1", "2", "[3e18; 3e18]", "4"), PP_ELIMIT,
      "test.txt:1:", "too large", NULL);

  /* Duplicate node id: the second definition's line and the id. */
  BAD(GOOD1 GOOD2 NODE("a", "Add", "1", "2", "3", "4"), PP_EINPUT,
      "test.txt:3:", "'a'", "twice");

  /* Edges. */
  BAD(GOOD1 GOOD2 "\ta -- nowhere\n", PP_EINPUT, "test.txt:3:", "unknown node",
      "'nowhere'");
  BAD(GOOD1 GOOD2 "\tghost -- b\n", PP_EINPUT, "test.txt:3:", "unknown node",
      "'ghost'");
  BAD(GOOD1 GOOD2 "\ta -> b\n", PP_EPARSE, "test.txt:3:", "edge line", NULL);
  BAD(GOOD1 GOOD2 "\ta--b\n", PP_EPARSE, "test.txt:3:", "edge line", NULL);
  /* A cycle a -> b -> a: the message names it. */
  BAD(GOOD1 GOOD2 "\ta -- b\n\tb -- a\n", PP_EINPUT, "test.txt", "cycle",
      "'a'");
  BAD(GOOD1 GOOD2 NODE("c", "ReLU", "1", "2", "3",
                       "4") "\ta -- b\n\tb -- c\n\tc -- a\n",
      PP_EINPUT, "test.txt", "cycle", "'c'");
  /* A self-loop, with its line. */
  BAD(GOOD1 GOOD2 "\ta -- b\n\tb -- b\n", PP_EINPUT, "test.txt:4:", "'b'",
      "itself");
  /* The same edge twice: both lines. */
  BAD(GOOD1 GOOD2 "\ta -- b\n\ta -- b\n", PP_EINPUT,
      "test.txt:4:", "'a' -> 'b'", "repeats line 3");

  /* A NUL byte: not a text file. */
  {
    static const char t[] = "a -- ReLU -- forward_compute_time=1,\0 "
                            "backward_compute_time=2, activation_size=3, "
                            "parameter_size=4\n";
    bad(ctx, t, sizeof t - 1, PP_EPARSE, "test.txt", "NUL", NULL);
    /* Even at the very end, after a valid text. */
    {
      char buf[256];
      size_t n = strlen(GOOD1);
      memcpy(buf, GOOD1, n);
      buf[n] = '\0';
      bad(ctx, buf, n + 1, PP_EPARSE, "test.txt", "NUL", NULL);
    }
  }

  /* Overlong node id. */
  {
    size_t n = PP_MAX_NAME + 10, k;
    char *t = malloc(n + 200);
    assert_non_null(t);
    for (k = 0; k < n; k++)
      t[k] = 'x';
    snprintf(t + n, 200,
             " -- ReLU -- forward_compute_time=1, "
             "backward_compute_time=2, activation_size=3, "
             "parameter_size=4\n");
    bad(ctx, t, strlen(t), PP_EPARSE, "test.txt:1:", "id", NULL);
    free(t);
  }
  /* Empty node id. */
  BAD(" -- ReLU -- forward_compute_time=1, backward_compute_time=2, "
      "activation_size=3, parameter_size=4\n",
      PP_EPARSE, "test.txt:1:", "id", NULL);

  /* After all these, nothing leaked. */
}

/* A file of 100,000 nodes listed backwards: a chain plus skip edges. */
static void t_huge(void **state)
{
  enum { N = 100000 };
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = NULL;
  pp_model_stats st;
  size_t cap = (size_t)N * 160 + 64, len = 0;
  char *t = malloc(cap);
  const int32_t *topo;
  int i, nskip = 0;
  assert_non_null(t);
  for (i = N - 1; i >= 0; i--)
    len +=
        (size_t)snprintf(t + len, cap - len,
                         "n%d -- Linear(%d, 8) -- "
                         "forward_compute_time=0.5, "
                         "backward_compute_time=1.0, "
                         "activation_size=%d.0, parameter_size=8.000%s\n",
                         i, i, 4 * (i % 7 + 1), i % 3 ? "" : " -- stage_id=1");
  for (i = 0; i + 1 < N; i++)
    len += (size_t)snprintf(t + len, cap - len, "\tn%d -- n%d\n", i, i + 1);
  for (i = 0; i + 2 < N; i += 10, nskip++)
    len += (size_t)snprintf(t + len, cap - len, "\tn%d -- n%d\n", i, i + 2);
  assert_true(len < cap);
  if (pp_model_read_pipedream(ctx, t, len, "big/graph.txt", &m) != PP_OK)
    fail_msg("%s", pp_ctx_errmsg(ctx));
  free(t);
  assert_int_equal(pp_model_nop(m), N);
  assert_int_equal(pp_model_nedge(m), N - 1 + nskip);
  assert_int_equal(nskip, 10000);
  assert_int_equal(pp_model_is_chain(m), 0);
  assert_int_equal(pp_model_topo_unique(m), 1);
  assert_string_equal(pp_model_name(m), "big");
  /* Listed backwards, ordered forwards. */
  topo = pp_model_topo_order(m);
  for (i = 0; i < N; i++) {
    char name[32];
    snprintf(name, sizeof name, "n%d", i);
    if (strcmp(pp_model_op_name(m, topo[i]), name) != 0)
      fail_msg("topo[%d] is %s, want %s", i, pp_model_op_name(m, topo[i]),
               name);
  }
  assert_int_equal(pp_model_find_op(m, "n0"), N - 1);
  assert_int_equal(pp_model_stats_get(ctx, m, &st), PP_OK);
  assert_int_equal(st.nsource, 1);
  assert_int_equal(st.nsink, 1);
  assert_int_equal(st.depth, N);
  assert_rel(st.fwd_ms, 0.5 * N, 1e-12, "fwd");
  assert_rel(st.bwd_ms, 1.0 * N, 1e-12, "bwd");
  assert_rel(st.param_bytes, 8.0 * N, 1e-12, "params");
  pp_model_destroy(m);
}

/* Through pp_model_load: a text file that is not JSON is read as
** graph.txt, and its errors name the path. */
static void t_load_path(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = NULL;
  const char *path = tu_tmp("broken.txt");
  char p[512];
  FILE *f;
  snprintf(p, sizeof p, "%s", path);
  f = fopen(p, "w");
  assert_non_null(f);
  fputs(GOOD1 GOOD2 "\ta -- c\n", f);
  fclose(f);
  tu_expect_error(ctx, pp_model_load(ctx, p, &m), PP_EINPUT, p, ":3:", "'c'",
                  (const char *)NULL);
  assert_null(m);
  f = fopen(p, "w");
  assert_non_null(f);
  fputs("\n\n" GOOD1 GOOD2 "\tb -- a\n", f);
  fclose(f);
  assert_int_equal(pp_model_load(ctx, p, &m), PP_OK);
  assert_string_equal(pp_model_name(m), "broken");
  assert_int_equal(pp_model_nop(m), 2);
  assert_int_equal(pp_model_nedge(m), 1);
  pp_model_destroy(m);
  remove(p);
  /* A missing graph.txt is an I/O error. */
  tu_expect_error(
      ctx, pp_model_load(ctx, tu_path("data/pipedream/nope/graph.txt"), &m),
      PP_EIO, "nope", (const char *)NULL);
}

/* The reader under allocation failures: every failure is reported as
** PP_ENOMEM and leaks nothing. */
static void t_alloc_failures(void **state)
{
  struct tu_fix *fx = *state;
  pp_ctx *ctx = fx->ctx;
  const char *t = NODE("i", "Input", "0", "0", "602112", "0") GOOD1 GOOD2
      "\ti -- a\n\ta -- b\n\ti -- b\n";
  long k, total;
  pp_model *m = NULL;
  tu_reset(&fx->a, 0);
  assert_int_equal(read_pd(ctx, t, &m), PP_OK);
  total = fx->a.count;
  pp_model_destroy(m);
  assert_true(total > 0);
  for (k = 1; k <= total; k++) {
    pp_status rc;
    m = NULL;
    tu_reset(&fx->a, k);
    rc = read_pd(ctx, t, &m);
    if (rc == PP_OK) {
      pp_model_destroy(m);
      continue;
    }
    tu_expect_error(ctx, rc, PP_ENOMEM, (const char *)NULL);
    assert_null(m);
    assert_int_equal(fx->a.live, 1); /* the context itself */
  }
  tu_reset(&fx->a, 0);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      TU_CTX_TEST(t_all_profiles),   TU_CTX_TEST(t_other_files),
      TU_CTX_TEST(t_gnmt_lists),     TU_CTX_TEST(t_resnet18_dag),
      TU_CTX_TEST(t_small_ok),       TU_CTX_TEST(t_malformed),
      TU_CTX_TEST(t_huge),           TU_CTX_TEST(t_load_path),
      TU_CTX_TEST(t_alloc_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
