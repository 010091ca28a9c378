/* SPDX-License-Identifier: MIT */
/*
** The schedule kernels of src/cost/sched.c on plain arrays, without a
** model, cluster or plan (docs/COST_MODEL.md, "Schedules and in-flight
** micro-batches"):
**
** - ppi_sched_counts: GPipe keeps gas_s, 1F1B min(S - s, gas_s), on
**   cases worked by hand; with equal gas the 1F1B counts never grow
**   along the stages;
** - ppi_sched_order: the orders of GPipe, 1F1B and 1F1B* written out by
**   hand (counts clamped to [1, gas], buffers shorter than the order
**   left untouched past cap); on every small (gas, count) every
**   micro-batch runs forward once, then backward once, and the
**   micro-batches alive at once never exceed the count;
** - ppi_sched_groups: 1F1B* groups on hand cases (rounding tolerance,
**   zero loads, a resource above the period), and on random loads the
**   independent grouping of testutil.c and the greedy rule's defining
**   properties;
** - ppi_sched_feedable: the three-stage PipeDream case of the docs (1,
**   4, 1 replicas) raised from 3 to exactly the 5 forwards it needs;
**   on thousands of random stage DAGs with replica counts that differ
**   (fixed seed), a brute-force run of every replica's order (each task
**   waits for its inputs) finishes after the fix, blocks before it in
**   many instances, and the fix only raises counts, never past gas,
**   keeps the documented inequality on every edge and changes nothing
**   when replica counts are equal and counts do not grow along edges.
*/
#include "testutil.h"

#include "cost/cost.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXS 8
#define MAXN 24

/* ---- in-flight counts ---------------------------------------------------- */

static void expect_counts(pp_schedule sc, int32_t S, const int64_t *gas,
                          const int32_t *want)
{
  int32_t got[MAXS], s;
  ppi_sched_counts(sc, S, gas, got);
  for (s = 0; s < S; s++)
    if (got[s] != want[s])
      fail_msg("%s, %d stages: stage %d keeps %d, expected %d",
               pp_schedule_name(sc), S, s, got[s], want[s]);
}

static void t_counts(void **state)
{
  uint64_t rng = 31;
  int iter;
  (void)state;
  /* worked by hand */
  expect_counts(PP_SCHED_GPIPE, 4, (int64_t[]){8, 8, 8, 8},
                (int32_t[]){8, 8, 8, 8});
  expect_counts(PP_SCHED_GPIPE, 4, (int64_t[]){3, 5, 1, 2},
                (int32_t[]){3, 5, 1, 2});
  expect_counts(PP_SCHED_1F1B, 4, (int64_t[]){8, 8, 8, 8},
                (int32_t[]){4, 3, 2, 1});
  expect_counts(PP_SCHED_1F1B, 4, (int64_t[]){2, 2, 2, 2},
                (int32_t[]){2, 2, 2, 1});
  expect_counts(PP_SCHED_1F1B, 4, (int64_t[]){1, 6, 6, 6},
                (int32_t[]){1, 3, 2, 1});
  expect_counts(PP_SCHED_1F1B, 1, (int64_t[]){5}, (int32_t[]){1});
  /* equal gas: 1F1B's counts are at least 1 and never grow along the
  ** stages (what makes its orders deadlock-free on a chain) */
  for (iter = 0; iter < 500; iter++) {
    int32_t S = 1 + (int32_t)tu_rand(&rng, MAXS), c[MAXS], s;
    int64_t gas[MAXS], g = 1 + tu_rand(&rng, 12);
    for (s = 0; s < S; s++)
      gas[s] = g;
    ppi_sched_counts(PP_SCHED_1F1B, S, gas, c);
    for (s = 0; s < S; s++) {
      assert_true(c[s] >= 1 && c[s] <= g);
      assert_int_equal(c[s], S - s < g ? S - s : g);
      if (s > 0)
        assert_true(c[s] <= c[s - 1]);
    }
  }
}

/* ---- orders -------------------------------------------------------------- */

/* The order as text: "F0 F1 B0 ...". */
static const char *order_text(pp_schedule sc, int64_t gas, int32_t inflight)
{
  static char buf[512];
  pp_sched_op o[64];
  int64_t i;
  size_t n = 0;
  assert_true(gas <= 32);
  ppi_sched_order(sc, gas, inflight, o, 64);
  buf[0] = 0;
  for (i = 0; i < 2 * gas; i++)
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%c%d", i ? " " : "",
                          o[i].kind == PP_TASK_FWD   ? 'F'
                          : o[i].kind == PP_TASK_BWD ? 'B'
                                                     : '?',
                          (int)o[i].micro_batch);
  return buf;
}

static void t_orders_by_hand(void **state)
{
  pp_sched_op o[8];
  int i;
  (void)state;
  assert_string_equal(order_text(PP_SCHED_GPIPE, 3, 3), "F0 F1 F2 B2 B1 B0");
  /* GPipe ignores the count */
  assert_string_equal(order_text(PP_SCHED_GPIPE, 3, 1), "F0 F1 F2 B2 B1 B0");
  assert_string_equal(order_text(PP_SCHED_1F1B, 4, 2),
                      "F0 F1 B0 F2 B1 F3 B2 B3");
  assert_string_equal(order_text(PP_SCHED_1F1B, 3, 1), "F0 B0 F1 B1 F2 B2");
  assert_string_equal(order_text(PP_SCHED_1F1B, 3, 3), "F0 F1 F2 B0 B1 B2");
  assert_string_equal(order_text(PP_SCHED_1F1B_STAR, 5, 3),
                      "F0 F1 F2 B0 F3 B1 F4 B2 B3 B4");
  /* counts below 1 and above gas are clamped */
  assert_string_equal(order_text(PP_SCHED_1F1B, 3, 0), "F0 B0 F1 B1 F2 B2");
  assert_string_equal(order_text(PP_SCHED_1F1B, 3, -4), "F0 B0 F1 B1 F2 B2");
  assert_string_equal(order_text(PP_SCHED_1F1B, 3, 7), "F0 F1 F2 B0 B1 B2");
  assert_string_equal(order_text(PP_SCHED_1F1B, 1, 1), "F0 B0");
  /* a buffer shorter than the order: the first cap entries, nothing
  ** written past them */
  for (i = 0; i < 8; i++)
    o[i] = (pp_sched_op){PP_TASK_UPDATE, -7};
  ppi_sched_order(PP_SCHED_1F1B, 4, 2, o, 3);
  assert_int_equal(o[0].kind, PP_TASK_FWD);
  assert_int_equal(o[0].micro_batch, 0);
  assert_int_equal(o[1].kind, PP_TASK_FWD);
  assert_int_equal(o[1].micro_batch, 1);
  assert_int_equal(o[2].kind, PP_TASK_BWD);
  assert_int_equal(o[2].micro_batch, 0);
  for (i = 3; i < 8; i++) {
    assert_int_equal(o[i].kind, PP_TASK_UPDATE);
    assert_int_equal(o[i].micro_batch, -7);
  }
  /* cap 0, and no micro-batches: nothing written */
  o[0] = o[1] = o[2] = (pp_sched_op){PP_TASK_UPDATE, -7};
  ppi_sched_order(PP_SCHED_GPIPE, 4, 4, o, 0);
  ppi_sched_order(PP_SCHED_1F1B, 4, 2, o, 0);
  ppi_sched_order(PP_SCHED_1F1B, 0, 2, o, 8);
  ppi_sched_order(PP_SCHED_GPIPE, 0, 2, o, 8);
  for (i = 0; i < 8; i++)
    assert_int_equal(o[i].micro_batch, -7);
}

static void t_order_invariants(void **state)
{
  static const pp_schedule scheds[] = {PP_SCHED_GPIPE, PP_SCHED_1F1B,
                                       PP_SCHED_1F1B_STAR};
  pp_sched_op o[2 * 16];
  int sc;
  int64_t gas, i;
  int32_t n;
  (void)state;
  for (sc = 0; sc < 3; sc++)
    for (gas = 1; gas <= 16; gas++)
      for (n = 0; n <= 18; n++) {
        int64_t want = scheds[sc] == PP_SCHED_GPIPE ? gas
                       : n < 1                      ? 1
                       : n > gas                    ? gas
                                                    : n;
        int64_t nf = 0, nb = 0;
        ppi_sched_order(scheds[sc], gas, n, o, 2 * gas);
        /* each micro-batch forward once then backward once, and never
        ** more alive than the count */
        assert_int_equal(tu_order_inflight(o, 2 * gas, gas), want);
        /* forwards in micro-batch order; 1F1B's backwards too, GPipe's
        ** reversed */
        for (i = 0; i < 2 * gas; i++) {
          if (o[i].kind == PP_TASK_FWD) {
            assert_int_equal(o[i].micro_batch, nf++);
          } else if (scheds[sc] == PP_SCHED_GPIPE) {
            assert_int_equal(o[i].micro_batch, gas - 1 - nb++);
          } else {
            assert_int_equal(o[i].micro_batch, nb++);
          }
        }
      }
}

/* ---- 1F1B* groups -------------------------------------------------------- */

static void expect_groups(const double *load, int32_t n, double T,
                          const int32_t *want)
{
  int32_t g[16], i;
  ppi_sched_groups(load, n, T, g);
  for (i = 0; i < n; i++)
    if (g[i] != want[i])
      fail_msg("T %g: resource %d in group %d, expected %d", T, i, g[i],
               want[i]);
}

static void t_groups_by_hand(void **state)
{
  static const double ones[5] = {1, 1, 1, 1, 1};
  (void)state;
  /* three stages and two links of load 1 */
  expect_groups(ones, 5, 2, (int32_t[]){3, 2, 2, 1, 1});
  expect_groups(ones, 5, 5, (int32_t[]){1, 1, 1, 1, 1});
  expect_groups(ones, 5, 1, (int32_t[]){5, 4, 3, 2, 1});
  expect_groups(ones, 1, 1, (int32_t[]){1});
  /* a resource above the period stands alone */
  expect_groups((double[]){1, 5, 1}, 3, 2, (int32_t[]){3, 2, 1});
  expect_groups((double[]){1, 5}, 2, 2, (int32_t[]){2, 1});
  expect_groups((double[]){5, 0}, 2, 2, (int32_t[]){1, 1});
  /* 0.1 + 0.2 rounds above 0.3: the tolerance keeps them together */
  expect_groups((double[]){0.1, 0.2}, 2, 0.3, (int32_t[]){1, 1});
  expect_groups((double[]){0.1, 0.2 + 1e-9}, 2, 0.3, (int32_t[]){2, 1});
  /* links without transfers never split a group */
  expect_groups((double[]){2, 0, 2, 0, 2}, 5, 2, (int32_t[]){3, 2, 2, 1, 1});
  expect_groups((double[]){0, 0, 0}, 3, 1, (int32_t[]){1, 1, 1});
}

static void t_groups_random(void **state)
{
  uint64_t rng = 4711;
  int iter, split = 0;
  (void)state;
  for (iter = 0; iter < 2000; iter++) {
    int32_t n = 1 + (int32_t)tu_rand(&rng, 15), g[16], i, j;
    int want[16];
    double load[16], worst = 0, T;
    for (i = 0; i < n; i++) {
      load[i] = tu_rand(&rng, 4) == 0 ? 0 : tu_rand(&rng, 40) / 8.0;
      if (load[i] > worst)
        worst = load[i];
    }
    T = worst > 0 ? worst * (1 + tu_rand(&rng, 30) / 10.0) : 1;
    ppi_sched_groups(load, n, T, g);
    tu_star_groups(load, n, T, want);
    for (i = 0; i < n; i++)
      assert_int_equal(g[i], want[i]);
    /* numbered from the last resource, contiguous, each group within T
    ** and unable to take the resource before it */
    assert_int_equal(g[n - 1], 1);
    for (i = 0; i < n; i = j) {
      double sum = 0;
      for (j = i; j < n && g[j] == g[i]; j++)
        sum += load[j];
      if (j < n)
        assert_int_equal(g[j], g[i] - 1);
      assert_true(sum <= T * (1 + 1e-12));
      if (i > 0)
        assert_true(sum + load[i - 1] > T);
    }
    split += g[0] > 1;
  }
  assert_true(split > 1000);
}

/* ---- feedability -----------------------------------------------------------
**
** A stage graph: S stages in plan order, stage s with R[s] replicas of
** gas[s] = N / R[s] micro-batches each (global micro-batch m on replica
** m mod R[s]), edges from[i] -> to[i] with from < to. */
struct graph {
  int32_t S, N, ne;
  int32_t R[MAXS];
  int64_t gas[MAXS];
  int32_t from[MAXS * MAXS], to[MAXS * MAXS];
};

/* Run every replica's order as far as it goes: a forward waits for the
** forward of its micro-batch on every stage before it along an edge, a
** backward for the backward on every stage after it.  Readiness only
** grows as tasks finish, so this fixpoint runs every task iff no
** schedule of these orders can block.  1: every task ran. */
static int runs_through(const struct graph *g, pp_schedule sc,
                        const int32_t *inflight)
{
  static pp_sched_op order[MAXS][2 * MAXN];
  unsigned char fdone[MAXS][MAXN], bdone[MAXS][MAXN];
  int64_t pos[MAXS][MAXN];
  int32_t s, r, i;
  int progress = 1;
  memset(fdone, 0, sizeof fdone);
  memset(bdone, 0, sizeof bdone);
  memset(pos, 0, sizeof pos);
  for (s = 0; s < g->S; s++)
    ppi_sched_order(sc, g->gas[s], inflight[s], order[s], 2 * MAXN);
  while (progress) {
    progress = 0;
    for (s = 0; s < g->S; s++)
      for (r = 0; r < g->R[s]; r++)
        while (pos[s][r] < 2 * g->gas[s]) {
          const pp_sched_op *op = &order[s][pos[s][r]];
          int32_t m = r + op->micro_batch * g->R[s];
          int ready = 1;
          for (i = 0; i < g->ne; i++) {
            if (op->kind == PP_TASK_FWD && g->to[i] == s &&
                !fdone[g->from[i]][m])
              ready = 0;
            if (op->kind == PP_TASK_BWD && g->from[i] == s &&
                !bdone[g->to[i]][m])
              ready = 0;
          }
          if (!ready)
            break;
          if (op->kind == PP_TASK_FWD)
            fdone[s][m] = 1;
          else
            bdone[s][m] = 1;
          pos[s][r]++;
          progress = 1;
        }
  }
  for (s = 0; s < g->S; s++)
    for (r = 0; r < g->R[s]; r++)
      if (pos[s][r] < 2 * g->gas[s])
        return 0;
  return 1;
}

static void feedable(pp_ctx *ctx, const struct graph *g, int32_t *inflight)
{
  assert_int_equal(ppi_sched_feedable(ctx, g->S, g->R, g->gas, g->ne, g->from,
                                      g->to, inflight),
                   PP_OK);
}

static void chain(struct graph *g, int32_t S, int32_t N, const int32_t *R)
{
  int32_t s;
  memset(g, 0, sizeof *g);
  g->S = S;
  g->N = N;
  for (s = 0; s < S; s++) {
    g->R[s] = R[s];
    g->gas[s] = N / R[s];
    if (s + 1 < S) {
      g->from[g->ne] = s;
      g->to[g->ne++] = s + 1;
    }
  }
}

static void t_feedable_by_hand(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  struct graph g;
  int32_t n[MAXS];
  /* docs/COST_MODEL.md: 1, 4 and 1 replicas, 8 micro-batches.  1F1B
  ** keeps 3, 2, 1; a replica of stage 1 needs forwards m and m + 4
  ** before its first backward, so stage 0 must run 5 forwards before it
  ** waits for a backward: n_0 R_0 >= (n_1 - 1) R_1 + 1 */
  chain(&g, 3, 8, (int32_t[]){1, 4, 1});
  ppi_sched_counts(PP_SCHED_1F1B, 3, g.gas, n);
  assert_int_equal(n[0], 3);
  assert_int_equal(n[1], 2);
  assert_int_equal(n[2], 1);
  assert_false(runs_through(&g, PP_SCHED_1F1B, n));
  assert_false(runs_through(&g, PP_SCHED_1F1B, (int32_t[]){4, 2, 1}));
  feedable(ctx, &g, n);
  assert_int_equal(n[0], 5);
  assert_int_equal(n[1], 2);
  assert_int_equal(n[2], 1);
  assert_true(runs_through(&g, PP_SCHED_1F1B, n));
  /* GPipe's orders need no fix */
  ppi_sched_counts(PP_SCHED_GPIPE, 3, g.gas, n);
  assert_true(runs_through(&g, PP_SCHED_GPIPE, n));
  feedable(ctx, &g, n);
  assert_int_equal(n[0], 8);
  assert_int_equal(n[1], 2);
  assert_int_equal(n[2], 8);

  /* equal replica counts, 1F1B: nothing to do */
  chain(&g, 4, 8, (int32_t[]){2, 2, 2, 2});
  ppi_sched_counts(PP_SCHED_1F1B, 4, g.gas, n);
  feedable(ctx, &g, n);
  assert_int_equal(n[0], 4);
  assert_int_equal(n[1], 3);
  assert_int_equal(n[2], 2);
  assert_int_equal(n[3], 1);

  /* fixed counts that grow along an edge block even with one replica
  ** each, and are raised */
  chain(&g, 2, 4, (int32_t[]){1, 1});
  n[0] = 1;
  n[1] = 2;
  assert_false(runs_through(&g, PP_SCHED_1F1B, n));
  feedable(ctx, &g, n);
  assert_int_equal(n[0], 2);
  assert_int_equal(n[1], 2);
  assert_true(runs_through(&g, PP_SCHED_1F1B, n));
}

static void t_feedable_nomem(void **state)
{
  struct tu_fix *f = *state;
  struct graph g;
  int32_t n[3] = {3, 2, 1};
  chain(&g, 3, 8, (int32_t[]){1, 4, 1});
  tu_reset(&f->a, 1);
  assert_int_equal(
      ppi_sched_feedable(f->ctx, g.S, g.R, g.gas, g.ne, g.from, g.to, n),
      PP_ENOMEM);
  tu_reset(&f->a, 0);
  pp_ctx_clear_error(f->ctx);
  /* nothing changed */
  assert_int_equal(n[0], 3);
  assert_int_equal(n[1], 2);
  assert_int_equal(n[2], 1);
}

/* A random stage DAG: a chain plus skip edges, replica counts dividing N. */
static void random_graph(uint64_t *rng, struct graph *g)
{
  static const int32_t Ns[] = {4, 6, 8, 12, 24};
  int32_t div[MAXN], nd = 0, s, d, a, b;
  g->S = 2 + (int32_t)tu_rand(rng, 5);
  g->N = Ns[tu_rand(rng, 5)];
  for (d = 1; d <= 6; d++)
    if (g->N % d == 0)
      div[nd++] = d;
  for (s = 0; s < g->S; s++) {
    g->R[s] = tu_rand(rng, 3) ? div[tu_rand(rng, (uint32_t)nd)] : 1;
    g->gas[s] = g->N / g->R[s];
  }
  g->ne = 0;
  for (a = 0; a < g->S; a++)
    for (b = a + 1; b < g->S; b++)
      if (b == a + 1 || tu_rand(rng, 4) == 0) {
        g->from[g->ne] = a;
        g->to[g->ne++] = b;
      }
}

static void t_feedable_random(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  uint64_t rng = 20240601;
  int iter, blocked = 0, raised = 0, equal_kept = 0;
  for (iter = 0; iter < 4000; iter++) {
    struct graph g;
    int32_t before[MAXS], n[MAXS], s, i;
    int mode = iter % 3, equal = 1, monotone = 1;
    pp_schedule sc = mode == 2 ? PP_SCHED_GPIPE : PP_SCHED_1F1B;
    random_graph(&rng, &g);
    /* 1F1B's counts, fixed counts (a periodic pattern's), or GPipe's */
    if (mode == 1)
      for (s = 0; s < g.S; s++)
        before[s] = 1 + (int32_t)tu_rand(&rng, (uint32_t)g.gas[s]);
    else
      ppi_sched_counts(sc, g.S, g.gas, before);
    memcpy(n, before, sizeof n);
    feedable(ctx, &g, n);
    if (!runs_through(&g, sc, n))
      fail_msg("iteration %d: the orders block after ppi_sched_feedable", iter);
    for (s = 0; s < g.S; s++) {
      assert_true(n[s] >= before[s] && n[s] <= g.gas[s]);
      if (n[s] != before[s])
        raised++;
    }
    /* the documented inequality on every edge, or the cap */
    for (i = 0; i < g.ne; i++) {
      int32_t a = g.from[i], b = g.to[i];
      assert_true(n[a] == g.gas[a] ||
                  (int64_t)n[a] * g.R[a] >= (int64_t)(n[b] - 1) * g.R[b] + 1);
      if (g.R[a] != g.R[b])
        equal = 0;
      if (before[a] < before[b])
        monotone = 0;
    }
    if (equal && monotone) {
      for (s = 0; s < g.S; s++)
        assert_int_equal(n[s], before[s]);
      equal_kept++;
    }
    if (!runs_through(&g, sc, before)) {
      /* the fix was needed: it must have raised a count */
      assert_int_not_equal(memcmp(n, before, (size_t)g.S * sizeof *n), 0);
      blocked++;
    }
  }
  print_message("%d of 4000 stage graphs block before the fix (%d counts "
                "raised; %d kept as they were)\n",
                blocked, raised, equal_kept);
  assert_true(blocked >= 200);
  assert_true(equal_kept >= 50);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_counts),           cmocka_unit_test(t_orders_by_hand),
      cmocka_unit_test(t_order_invariants), cmocka_unit_test(t_groups_by_hand),
      cmocka_unit_test(t_groups_random),    TU_CTX_TEST(t_feedable_by_hand),
      TU_CTX_TEST(t_feedable_nomem),        TU_CTX_TEST(t_feedable_random),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
