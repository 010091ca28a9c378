/* SPDX-License-Identifier: MIT */
/*
** Topological order, uniqueness, cycles and the DAG figures, checked
** against brute force on many small random graphs: every permutation is
** tried, every path walked.
*/
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 7

static uint64_t rng_state = 88172645463325252ull;
struct graph {
  int n;
  int adj[MAXN][MAXN]; /* adj[u][v]: edge u -> v */
};

static pp_status build(pp_ctx *ctx, const struct graph *g, pp_model **m)
{
  pp_model_builder *b;
  int u, v;
  char name[16];
  pp_status rc = pp_model_builder_create(ctx, "g", "random", &b);
  assert_int_equal(rc, PP_OK);
  for (u = 0; u < g->n; u++) {
    pp_op_desc d;
    pp_op_desc_init(&d);
    snprintf(name, sizeof name, "v%d", u);
    d.name = name;
    d.fwd_ms = 1 + u;
    d.bwd_ms = 2;
    d.out_bytes = 10 * (u + 1);
    assert_int_equal(pp_model_builder_add_op(b, &d, NULL), PP_OK);
  }
  for (u = 0; u < g->n; u++)
    for (v = 0; v < g->n; v++)
      if (g->adj[u][v] && u != v)
        assert_int_equal(pp_model_builder_add_edge(b, u, v, -1), PP_OK);
  return pp_model_builder_finish(b, m);
}

static int nedges(const struct graph *g)
{
  int u, v, k = 0;
  for (u = 0; u < g->n; u++)
    for (v = 0; v < g->n; v++)
      k += g->adj[u][v] != 0;
  return k;
}

/* All permutations in lexicographic order (Heap's would not be). */
static bool valid_order(const struct graph *g, const int *p)
{
  int pos[MAXN], u, v;
  for (u = 0; u < g->n; u++)
    pos[p[u]] = u;
  for (u = 0; u < g->n; u++)
    for (v = 0; v < g->n; v++)
      if (g->adj[u][v] && pos[u] >= pos[v])
        return false;
  return true;
}

static bool reach(const struct graph *g, int u, int v, int depth)
{
  int w;
  if (depth > g->n)
    return false;
  for (w = 0; w < g->n; w++)
    if (g->adj[u][w] && (w == v || reach(g, w, v, depth + 1)))
      return true;
  return false;
}

static int longest_to(const struct graph *g, int v)
{
  int u, best = 1;
  for (u = 0; u < g->n; u++)
    if (g->adj[u][v]) {
      int d = longest_to(g, u) + 1;
      if (d > best)
        best = d;
    }
  return best;
}

static void random_dag(struct graph *g)
{
  int u, v, perm[MAXN], k, t;
  memset(g, 0, sizeof *g);
  g->n = 1 + (int)tu_rand(&rng_state, MAXN);
  /* A hidden random order, so the listed order is often not topological. */
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
      if (tu_rand(&rng_state, 100) < 35)
        g->adj[perm[u]][perm[v]] = 1;
}

static void t_order_vs_brute_force(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  int trial;
  for (trial = 0; trial < 1500; trial++) {
    struct graph g;
    pp_model *m = NULL;
    pp_model_stats st;
    int p[MAXN], first[MAXN], k, count = 0, u, v, i;
    const int32_t *order;
    random_dag(&g);
    assert_int_equal(build(ctx, &g, &m), PP_OK);
    /* Without edges the model is the listed chain: compare with that. */
    if (!nedges(&g))
      for (u = 0; u + 1 < g.n; u++)
        g.adj[u][u + 1] = 1;
    for (k = 0; k < g.n; k++)
      p[k] = k;
    do {
      if (valid_order(&g, p)) {
        if (count++ == 0)
          memcpy(first, p, sizeof p);
      }
    } while (tu_next_perm(p, g.n));
    assert_true(count >= 1);
    order = pp_model_topo_order(m);
    /* Kahn with a min-heap gives the lexicographically smallest order. */
    for (k = 0; k < g.n; k++)
      assert_int_equal(order[k], first[k]);
    assert_int_equal(pp_model_topo_unique(m), count == 1);
    assert_int_equal(pp_model_nedge(m), nedges(&g));
    /* Figures. */
    assert_int_equal(pp_model_stats_get(ctx, m, &st), PP_OK);
    {
      int depth = 0, level[MAXN + 1] = {0}, width = 0, maxcut = 0;
      int pos[MAXN], nsrc = 0, nsink = 0;
      struct graph eg = g;
      for (v = 0; v < g.n; v++) {
        int d = longest_to(&eg, v);
        if (d > depth)
          depth = d;
        if (++level[d] > width)
          width = level[d];
      }
      assert_int_equal(st.depth, depth);
      assert_int_equal(st.width, width);
      /* Operators of one depth are pairwise unordered (an antichain). */
      for (u = 0; u < g.n; u++)
        for (v = 0; v < g.n; v++)
          if (u != v && longest_to(&eg, u) == longest_to(&eg, v))
            assert_false(reach(&eg, u, v, 0));
      for (k = 0; k < g.n; k++)
        pos[order[k]] = k;
      for (i = 0; i + 1 < g.n; i++) {
        int cut = 0;
        for (u = 0; u < g.n; u++) {
          bool crosses = false;
          for (v = 0; v < g.n; v++)
            if (eg.adj[u][v] && pos[u] <= i && pos[v] > i)
              crosses = true;
          cut += crosses;
        }
        if (cut > maxcut)
          maxcut = cut;
      }
      assert_int_equal(st.max_cut, maxcut);
      for (v = 0; v < g.n; v++) {
        bool in = false, out = false;
        for (u = 0; u < g.n; u++) {
          in |= eg.adj[u][v] != 0;
          out |= eg.adj[v][u] != 0;
        }
        nsrc += !in;
        nsink += !out;
      }
      assert_int_equal(st.nsource, nsrc);
      assert_int_equal(st.nsink, nsink);
      {
        bool chain = nedges(&eg) == g.n - 1;
        for (u = 0; u + 1 < g.n; u++)
          chain = chain && eg.adj[u][u + 1];
        assert_int_equal(pp_model_is_chain(m), chain);
      }
    }
    pp_model_destroy(m);
  }
}

/* Parse "'vA' -> 'vB' -> ..." and check every step is an edge and the
** walk closes. */
static void check_cycle_message(const struct graph *g, const char *msg)
{
  const char *p = strstr(msg, "cycle: ");
  int seq[64], n = 0, k;
  assert_non_null(p);
  p += 7;
  while ((p = strchr(p, '\'')) != NULL && n < 64) {
    seq[n++] = atoi(p + 2); /* 'vN' */
    p = strchr(p + 1, '\'') + 1;
  }
  assert_true(n >= 3);
  assert_int_equal(seq[0], seq[n - 1]);
  for (k = 0; k + 1 < n; k++)
    assert_true(g->adj[seq[k]][seq[k + 1]]);
}

static void t_cycles_vs_brute_force(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  int trial, ncyclic = 0;
  for (trial = 0; trial < 1500; trial++) {
    struct graph g;
    pp_model *m = NULL;
    int u, v;
    bool cyclic = false;
    pp_status rc;
    memset(&g, 0, sizeof g);
    g.n = 2 + (int)tu_rand(&rng_state, MAXN - 1);
    for (u = 0; u < g.n; u++)
      for (v = 0; v < g.n; v++)
        if (u != v && tu_rand(&rng_state, 100) < 22)
          g.adj[u][v] = 1;
    for (u = 0; u < g.n; u++)
      if (reach(&g, u, u, 0))
        cyclic = true;
    rc = build(ctx, &g, &m);
    if (cyclic) {
      ncyclic++;
      assert_int_equal(rc, PP_EINPUT);
      assert_null(m);
      check_cycle_message(&g, pp_ctx_errmsg(ctx));
      pp_ctx_clear_error(ctx);
    } else {
      assert_int_equal(rc, PP_OK);
      pp_model_destroy(m);
    }
  }
  assert_true(ncyclic > 300); /* the test exercised both outcomes */
}

/* A 100,000-operator cycle is reported without deep recursion. */
static void t_long_cycle(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model_builder *b;
  pp_model *m = NULL;
  int32_t n = 100000, i;
  char name[32];
  assert_int_equal(pp_model_builder_create(ctx, "ring", "ring", &b), PP_OK);
  for (i = 0; i < n; i++) {
    pp_op_desc d;
    pp_op_desc_init(&d);
    snprintf(name, sizeof name, "op%d", (int)i);
    d.name = name;
    assert_int_equal(pp_model_builder_add_op(b, &d, NULL), PP_OK);
  }
  for (i = 0; i < n; i++)
    assert_int_equal(pp_model_builder_add_edge(b, i, (i + 1) % n, 5), PP_OK);
  tu_expect_error(ctx, pp_model_builder_finish(b, &m), PP_EINPUT,
                  "cycle: 'op0' -> 'op1'", "...", NULL);
  assert_null(m);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      TU_CTX_TEST(t_order_vs_brute_force),
      TU_CTX_TEST(t_cycles_vs_brute_force),
      TU_CTX_TEST(t_long_cycle),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
