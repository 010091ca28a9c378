/* SPDX-License-Identifier: MIT */
/*
** The layer-level (chain) view of a DAG against its definition, computed
** by brute force on random DAGs: the bytes crossing every cut of the
** topological order, the single-tensor cuts, and conserved totals.
*/
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 12

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
struct dag {
  int n;
  int64_t bytes[MAXN][MAXN]; /* -1: no edge */
  int tied[MAXN];
};

static pp_model *build(pp_ctx *ctx, const struct dag *g, int ntimes)
{
  pp_model_builder *b;
  pp_model *m = NULL;
  int u, v;
  char name[16];
  assert_int_equal(pp_model_builder_create(ctx, "g", "random", &b), PP_OK);
  for (u = 0; u < g->n; u++) {
    pp_op_desc d;
    pp_op_desc_init(&d);
    snprintf(name, sizeof name, "v%d", u);
    d.name = name;
    d.kind = u % 3 ? "conv" : "relu";
    d.fwd_ms = 1 + u;
    d.bwd_ms = 2 + u;
    d.update_ms = 0.25 * u;
    d.fwd_flops = 100.0 * u;
    d.param_bytes = 1000 + u;
    d.out_bytes = 10 * (u + 1);
    d.saved_bytes = 7 * u;
    assert_int_equal(pp_model_builder_add_op(b, &d, NULL), PP_OK);
  }
  for (u = 0; u < g->n; u++) {
    if (g->tied[u] >= 0)
      assert_int_equal(pp_model_builder_tie(b, u, g->tied[u]), PP_OK);
    if (ntimes && u % 2 == 0)
      assert_int_equal(
          pp_model_builder_add_time(b, u, "T4", 1, 1, 0.5 + u, 1.0 + u, -1),
          PP_OK);
  }
  for (u = 0; u < g->n; u++)
    for (v = 0; v < g->n; v++)
      if (g->bytes[u][v] >= 0)
        assert_int_equal(pp_model_builder_add_edge(b, u, v, g->bytes[u][v]),
                         PP_OK);
  assert_int_equal(pp_model_builder_finish(b, &m), PP_OK);
  return m;
}

static void random_dag(struct dag *g)
{
  int u, v, perm[MAXN], k, t;
  g->n = 2 + (int)tu_rand(&rng_state, MAXN - 1);
  for (u = 0; u < MAXN; u++) {
    g->tied[u] = -1;
    for (v = 0; v < MAXN; v++)
      g->bytes[u][v] = -1;
  }
  for (k = 0; k < g->n; k++)
    perm[k] = k;
  for (k = g->n - 1; k > 0; k--) {
    int j = (int)tu_rand(&rng_state, (uint32_t)k + 1);
    t = perm[k];
    perm[k] = perm[j];
    perm[j] = t;
  }
  for (u = 0; u < g->n; u++)
    for (v = u + 1; v < g->n; v++)
      if (tu_rand(&rng_state, 100) < (v == u + 1 ? 70 : 15))
        g->bytes[perm[u]][perm[v]] = 1 + tu_rand(&rng_state, 50);
  /* A tie or two: owners are untied operators. */
  if (g->n > 3 && tu_rand(&rng_state, 2)) {
    g->tied[perm[g->n - 1]] = perm[0];
    if (tu_rand(&rng_state, 2))
      g->tied[perm[g->n - 2]] = perm[0];
  }
}

/* Bytes crossing the cut after position i: per producer, the largest
** edge to a consumer beyond the cut. */
static void cut_brute(const struct dag *g, const int *pos, int i,
                      int64_t *bytes, int *count)
{
  int u, v;
  *bytes = 0;
  *count = 0;
  for (u = 0; u < g->n; u++) {
    int64_t best = -1;
    if (pos[u] > i)
      continue;
    for (v = 0; v < g->n; v++)
      if (g->bytes[u][v] >= 0 && pos[v] > i && g->bytes[u][v] > best)
        best = g->bytes[u][v];
    if (best >= 0) {
      *bytes += best;
      (*count)++;
    }
  }
}

static void check_view(pp_ctx *ctx, const struct dag *g, pp_model *m,
                       int every_op)
{
  pp_model *c = NULL;
  const int32_t *order = pp_model_topo_order(m);
  int pos[MAXN], k, i, l, nlayer, first[MAXN + 1], has_edges = 0, u, v;
  double fsum = 0, usum = 0, flsum = 0;
  int64_t ssum = 0;

  for (u = 0; u < g->n; u++)
    for (v = 0; v < g->n; v++)
      has_edges |= g->bytes[u][v] >= 0;
  if (!has_edges)
    return; /* the listed chain: covered elsewhere */
  for (k = 0; k < g->n; k++)
    pos[order[k]] = k;
  assert_int_equal(pp_model_chain_view(ctx, m, every_op, &c), PP_OK);
  assert_true(pp_model_is_chain(c));
  /* Expected layer starts. */
  nlayer = 0;
  for (i = 0; i < g->n; i++) {
    int64_t b;
    int cnt = 0;
    if (i > 0)
      cut_brute(g, pos, i - 1, &b, &cnt);
    if (i == 0 || every_op || cnt <= 1)
      first[nlayer++] = i;
  }
  first[nlayer] = g->n;
  assert_int_equal(pp_model_nop(c), nlayer);
  for (l = 0; l < nlayer; l++) {
    int32_t nm;
    const int32_t *mem = pp_model_layer_members(c, l, &nm);
    pp_op_desc d;
    double f = 0, p = 0;
    int64_t sv = 0;
    assert_int_equal(nm, first[l + 1] - first[l]);
    for (k = 0; k < nm; k++) {
      int w = order[first[l] + k];
      assert_int_equal(mem[k], w);
      f += 1 + w + 2 + w;
      sv += 7 * w;
      if (g->tied[w] < 0 || pos[g->tied[w]] < first[l] ||
          pos[g->tied[w]] >= first[l + 1])
        p += 1000 + w;
    }
    pp_model_op(c, l, &d);
    assert_true(fabs(d.fwd_ms + d.bwd_ms - f) < 1e-9);
    assert_int_equal(d.saved_bytes, sv);
    assert_true(d.param_bytes == p);
    fsum += d.fwd_ms + d.bwd_ms;
    usum += d.update_ms;
    flsum += d.fwd_flops;
    ssum += d.saved_bytes;
    if (l + 1 < nlayer) {
      int64_t b, eb;
      int cnt;
      int32_t from, to;
      cut_brute(g, pos, first[l + 1] - 1, &b, &cnt);
      assert_int_equal(pp_model_edge(c, l, &from, &to, &eb), PP_OK);
      assert_int_equal(from, l);
      assert_int_equal(to, l + 1);
      assert_int_equal(eb, b);
      assert_int_equal(d.out_bytes, b);
      if (!every_op)
        assert_true(cnt <= 1);
    }
    /* A layer's profile exists only when every member has one. */
    {
      pp_type_key t4 = {.name = "T4", .speed = 1, .peak_tflops = 0};
      pp_op_time ot;
      bool all = true;
      double want = 0;
      for (k = 0; k < nm; k++) {
        int w = order[first[l] + k];
        all = all && w % 2 == 0;
        want += 0.5 + w;
      }
      pp_model_op_time(c, l, &t4, 1, 1, &ot);
      if (all) {
        assert_int_equal(ot.est, 0);
        assert_true(fabs(ot.fwd_ms - want) < 1e-9);
      } else
        assert_int_not_equal(ot.est, 0);
    }
  }
  {
    double tf = 0, tu = 0, tfl = 0;
    int64_t ts = 0;
    for (u = 0; u < g->n; u++) {
      tf += 3 + 2 * u;
      tu += 0.25 * u;
      tfl += 100.0 * u;
      ts += 7 * u;
    }
    assert_true(fabs(fsum - tf) < 1e-9 && fabs(usum - tu) < 1e-9);
    assert_true(flsum == tfl && ssum == ts);
  }
  pp_model_destroy(c);
}

static void t_views_vs_brute_force(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  int trial;
  for (trial = 0; trial < 2000; trial++) {
    struct dag g;
    pp_model *m;
    random_dag(&g);
    m = build(ctx, &g, 1);
    check_view(ctx, &g, m, 0);
    check_view(ctx, &g, m, 1);
    pp_model_destroy(m);
  }
}

static void t_chain_is_identity(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = NULL, *c = NULL;
  int32_t v;
  assert_int_equal(pp_model_load(ctx, "gpt2-amp", &m), PP_OK);
  assert_int_equal(pp_model_chain_view(ctx, m, 0, &c), PP_OK);
  assert_int_equal(pp_model_nop(c), pp_model_nop(m));
  assert_int_equal(pp_model_ntable(c), pp_model_ntable(m));
  for (v = 0; v < pp_model_nop(m); v++) {
    pp_op_desc d1, d2;
    pp_model_op(m, v, &d1);
    pp_model_op(c, v, &d2);
    assert_string_equal(d1.name, d2.name);
    assert_true(d1.fwd_ms == d2.fwd_ms);
    assert_int_equal(d1.param_bytes, d2.param_bytes);
    assert_int_equal(pp_model_op_tied(m, v), pp_model_op_tied(c, v));
  }
  assert_null(pp_model_layer_members(m, 0, NULL));
  pp_model_destroy(c);
  pp_model_destroy(m);
}

/* The example DAG: a branch and a skip connection inside one block. */
static void t_example_dag(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = NULL, *c = NULL;
  pp_op_desc d;
  int32_t n;
  assert_int_equal(pp_model_load(ctx, tu_path("examples/model-dag.json"), &m),
                   PP_OK);
  assert_int_equal(pp_model_chain_view(ctx, m, 0, &c), PP_OK);
  assert_int_equal(pp_model_nop(c), 4);
  pp_model_op(c, 2, &d);
  assert_string_equal(d.name, "branch_a..add");
  pp_model_layer_members(c, 2, &n);
  assert_int_equal(n, 5);
  pp_model_op(c, 1, &d); /* conv1's tensor alone crosses after it */
  assert_int_equal(d.out_bytes, 102760448);
  pp_model_destroy(c);
  /* ResNet-18 from PipeDream: residual blocks become layers. */
  pp_model_destroy(m);
  assert_int_equal(
      pp_model_load(ctx, tu_path("data/pipedream/resnet18/graph.txt"), &m),
      PP_OK);
  assert_int_equal(pp_model_chain_view(ctx, m, 0, &c), PP_OK);
  assert_true(pp_model_nop(c) > 8 && pp_model_nop(c) < pp_model_nop(m));
  pp_model_destroy(c);
  pp_model_destroy(m);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      TU_CTX_TEST(t_views_vs_brute_force),
      TU_CTX_TEST(t_chain_is_identity),
      TU_CTX_TEST(t_example_dag),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
