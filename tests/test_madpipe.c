/* SPDX-License-Identifier: MIT */
/*
** MadPipe (src/part/part_madpipe.c, src/part/sched_ilp.c) and PipeDream +
** 1F1B*:
**
** - phase 2's ILP on contiguous allocations keeps exactly 1F1B*'s group
**   counts ([MadPipe] Proposition 1: no valid pattern keeps fewer, and
**   1F1B* reaches them), and is feasible at the period of the most
**   loaded resource and not below it (docs/ALGORITHMS.md 2.1, tests 1-3);
** - phase 1's label-setting DP answers "is there an allocation of period
**   <= T?" exactly as a brute force over every allocation (stages, which
**   go to the special processor) under the same rules, on hundreds of
**   random chains and targets, in both memory modes;
** - PipeDream + 1F1B*: its partition has the least contiguous period and
**   its period is the least candidate at which 1F1B* fits;
** - on random chains, every MadPipe and PipeDream + 1F1B* result that
**   fits is confirmed by the simulator (period and memory), and MadPipe
**   is reported against PipeDream + 1F1B*;
** - phase 1 alone (madpipe_phase1) gives the allocation a full run ends
**   in, and its plan the same estimate (the planner's MadPipe floor);
** - a plan built from a MadPipe partition reports the partition's
**   pattern for every stage (pp_plan_stage_pattern), also after its JSON
**   is read back; one built without it reports none.
*/
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include "part/part.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXL 10
#define MAXN 8

/* ---- ILP against 1F1B* ------------------------------------------------- */

static void t_ilp_prop1(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  uint64_t rng = 5;
  int iter, solved = 0, multi = 0;
  for (iter = 0; iter < 120; iter++) {
    int N = 1 + (int)tu_rand(&rng, 5), i, g[2 * MAXN];
    double uf[MAXN], ub[MAXN], cc[MAXN], abar[MAXN], room[MAXN], load[2 * MAXN],
        worst = 0, T;
    int32_t proc[MAXN], n[MAXN];
    struct ppi_ilp_in in;
    int st;
    for (i = 0; i < N; i++) {
      uf[i] = 1 + tu_rand(&rng, 10);
      ub[i] = 1 + tu_rand(&rng, 20);
      cc[i] = i + 1 < N ? tu_rand(&rng, 6) : 0;
      abar[i] = 1e6 * (1 + tu_rand(&rng, 100));
      room[i] = 1e30;
      proc[i] = i;
      load[2 * i] = uf[i] + ub[i];
      if (i + 1 < N)
        load[2 * i + 1] = 2 * cc[i];
    }
    for (i = 0; i < 2 * N - 1; i++)
      worst = load[i] > worst ? load[i] : worst;
    T = worst * (1 + tu_rand(&rng, 30) / 10.0);
    tu_star_groups(load, 2 * N - 1, T, g);
    memset(&in, 0, sizeof in);
    in.N = N;
    in.P = N;
    in.proc = proc;
    in.uf = uf;
    in.ub = ub;
    in.c = cc;
    in.abar = abar;
    in.room = room;
    in.T = T;
    in.scale = 1e6;
    in.time_limit = 30;
    in.max_nodes = 100000;
    in.minimize = 1;
    assert_int_equal(ppi_ilp_pattern(ctx, &in, n, NULL, &st), PP_OK);
    assert_int_equal(st, 1);
    for (i = 0; i < N; i++) {
      if (n[i] != g[2 * i])
        fail_msg("iteration %d: stage %d of %d keeps %d, 1F1B* %d", iter, i, N,
                 (int)n[i], g[2 * i]);
      multi += g[2 * i] > 1;
    }
    solved++;
    /* the least period: the most loaded resource, not below */
    in.T = worst;
    assert_int_equal(ppi_ilp_pattern(ctx, &in, n, NULL, &st), PP_OK);
    assert_true(st > 0);
    in.T = worst * 0.999;
    assert_int_equal(ppi_ilp_pattern(ctx, &in, n, NULL, &st), PP_OK);
    assert_int_equal(st, 0);
  }
  assert_true(multi > 50);
  print_message("%d ILPs equal 1F1B*'s counts\n", solved);
}

/* One processor: the period is the whole work and one activation. */
static void t_ilp_one(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  double uf[3] = {1, 2, 3}, ub[3] = {2, 4, 6}, cc[3] = {5, 5, 0},
         abar[3] = {1e6, 2e6, 3e6}, room[1] = {6e6};
  int32_t proc[3] = {0, 0, 0}, n[3];
  struct ppi_ilp_in in;
  int st;
  memset(&in, 0, sizeof in);
  in.N = 3;
  in.P = 1;
  in.proc = proc;
  in.uf = uf;
  in.ub = ub;
  in.c = cc; /* ignored: one processor */
  in.abar = abar;
  in.room = room;
  in.T = 18;
  in.scale = 1e6;
  in.time_limit = 30;
  in.max_nodes = 100000;
  in.minimize = 1;
  assert_int_equal(ppi_ilp_pattern(ctx, &in, n, NULL, &st), PP_OK);
  assert_int_equal(st, 1);
  assert_int_equal(n[0], 1);
  assert_int_equal(n[1], 1);
  assert_int_equal(n[2], 1);
  in.T = 17.9;
  assert_int_equal(ppi_ilp_pattern(ctx, &in, n, NULL, &st), PP_OK);
  assert_int_equal(st, 0);
  room[0] = 5e6; /* one of each no longer fits */
  in.T = 1000;
  assert_int_equal(ppi_ilp_pattern(ctx, &in, n, NULL, &st), PP_OK);
  assert_int_equal(st, 0);
}

/* ---- phase 1 against brute force ----------------------------------------- */

struct chainbuf {
  struct ppi_chain c;
  double wp[MAXL + 1], fp[MAXL + 1], pp[MAXL + 1], sp[MAXL + 1], cut[MAXL];
  int32_t prof[MAXN];
  double bw[MAXN], mem[MAXN], nf[MAXN], ar[MAXN];
  double u[MAXL];
};

static void random_chain(uint64_t *rng, struct chainbuf *b, int P)
{
  struct ppi_chain *c = &b->c;
  int L = 1 + (int)tu_rand(rng, 7), l, s;
  memset(b, 0, sizeof *b);
  c->L = L;
  c->S = P;
  c->R = 1;
  c->nprof = 1;
  c->wp = b->wp;
  c->fp = b->fp;
  c->pp = b->pp;
  c->sp = b->sp;
  c->cut = b->cut;
  c->prof = b->prof;
  c->bw = b->bw;
  c->mem = b->mem;
  c->nf = b->nf;
  c->ar_a = c->ar_b = b->ar;
  c->fac = 3;
  c->gas = 1;
  for (l = 0; l < L; l++) {
    double f = 1 + tu_rand(rng, 10), bb = 1 + tu_rand(rng, 20);
    b->u[l] = f + bb;
    b->wp[l + 1] = b->wp[l] + f + bb;
    b->fp[l + 1] = b->fp[l] + f;
    b->pp[l + 1] = b->pp[l] + 1e6 * tu_rand(rng, 50);
    b->sp[l + 1] = b->sp[l] + 1e6 * (1 + tu_rand(rng, 200));
    b->cut[l] = l + 1 < L ? 1e6 * tu_rand(rng, 60) : 0;
  }
  for (s = 0; s < P; s++) {
    b->bw[s] = 10;
    b->mem[s] = 1e6 * (200 + tu_rand(rng, 1500));
  }
}

static double ceil_t(double x, double T)
{
  double q = ceil(x / T - 1e-9);
  return q > 0 ? q : 0;
}

static double oplus(double x, double y, double T)
{
  double a = ceil_t(x, T);
  return a == ceil_t(x + y, T) ? x + y : T * a + y;
}

static double mem_g(const struct chainbuf *b, int i, int j, double g)
{
  return 3 * (b->pp[j + 1] - b->pp[i]) + g * (b->sp[j + 1] - b->sp[i]) +
         2 * ((i > 0 ? b->cut[i - 1] : 0) + b->cut[j]);
}

static double link_of(const struct chainbuf *b, int l)
{
  return b->cut[l] > 0 ? 2 * b->cut[l] / (10 * 1e6) : 0;
}

/* Every allocation: cut positions (a bit per gap) and a special flag per
** stage, under the rules of [MadPipe] 4.2 as part_madpipe.c states them. */
static bool brute_feasible(const struct chainbuf *b, int P, double T, int pess)
{
  int L = b->c.L, cuts, flags, first[MAXL + 1], N, s;
  double M = b->mem[0];
  for (cuts = 0; cuts < 1 << (L - 1); cuts++) {
    N = 0;
    first[N++] = 0;
    for (s = 1; s < L; s++)
      if (cuts >> (s - 1) & 1)
        first[N++] = s;
    first[N] = L;
    for (flags = 0; flags < 1 << N; flags++) {
      double tP = 0, mP = 0, amax = 0, V = 0;
      int normal = 0;
      bool ok = true;
      for (s = 0; s < N; s++)
        normal += !(flags >> s & 1);
      if (normal > P - 1)
        continue;
      for (s = N - 1; s >= 0 && ok; s--) {
        int i = first[s], j = first[s + 1] - 1;
        double U = b->wp[j + 1] - b->wp[i], Cc = i > 0 ? link_of(b, i - 1) : 0;
        double g = ceil_t(V + U, T);
        if (g < 1)
          g = 1;
        if (U > T * (1 + 1e-9) || Cc > T * (1 + 1e-9)) {
          ok = false;
          break;
        }
        if (!(flags >> s & 1)) {
          ok = mem_g(b, i, j, g) <= M;
        } else {
          double ab = b->sp[j + 1] - b->sp[i];
          tP += U;
          mP += mem_g(b, i, j, pess ? g : g - 1);
          if (!pess && ab > amax)
            amax = ab;
          ok = tP <= T * (1 + 1e-9) && mP + amax <= M;
        }
        V = oplus(oplus(V, U, T), Cc, T);
      }
      if (ok)
        return true;
    }
  }
  return false;
}

static void t_phase1_exact(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  uint64_t rng = 77;
  int iter, yes = 0, no = 0;
  for (iter = 0; iter < 600; iter++) {
    struct chainbuf b;
    int P = 1 + (int)tu_rand(&rng, 3), ok, pess = iter % 2, l;
    double tot = 0, T;
    random_chain(&rng, &b, P);
    for (l = 0; l < b.c.L; l++)
      tot += b.u[l];
    T = tot * (0.2 + tu_rand(&rng, 100) / 100.0);
    assert_int_equal(ppi_madpipe_feasible(ctx, &b.c, P, T, pess, &ok), PP_OK);
    if (ok != brute_feasible(&b, P, T, pess))
      fail_msg("iteration %d: L %d P %d T %g (%s): DP says %d", iter, b.c.L, P,
               T, pess ? "pessimistic" : "optimistic", ok);
    if (ok)
      yes++;
    else
      no++;
  }
  print_message("phase 1: %d feasible, %d infeasible, all as brute force\n",
                yes, no);
  assert_true(yes > 100 && no > 100);
}

/* ---- whole runs --------------------------------------------------------- */

static pp_model *random_model(pp_ctx *ctx, uint64_t *rng, int L)
{
  struct tu_op ops[32];
  int i;
  assert_true(L <= 32);
  for (i = 0; i < L; i++) {
    ops[i].f = 1 + tu_rand(rng, 20);
    ops[i].b = 1 + tu_rand(rng, 40);
    ops[i].u = 0;
    ops[i].param = (int64_t)tu_rand(rng, 50) * 1000000;
    ops[i].saved = (int64_t)(1 + tu_rand(rng, 400)) * 1000000;
    ops[i].out = (int64_t)tu_rand(rng, 100) * 1000000;
  }
  return tu_model_ops(ctx, L, ops, NULL, 0);
}

static pp_partition *run(pp_ctx *ctx, const pp_model *m, int P, double mem,
                         pp_part_method meth)
{
  pp_part_params p;
  pp_partition *pt = NULL;
  pp_part_params_init(&p);
  p.objective = PP_OBJ_MADPIPE;
  p.method = meth;
  p.stages = P;
  p.bandwidth_gbps = 12;
  p.memory_bytes = mem;
  p.optimizer = PP_OPT_2BW;
  p.time_limit_s = 30;
  if (pp_partition_chain(ctx, m, &p, &pt) != PP_OK)
    fail_msg("%s", pp_ctx_errmsg(ctx));
  return pt;
}

static void t_runs(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  uint64_t rng = 31;
  int iter, both = 0, better = 0, worse = 0, only_mad = 0;
  double logsum = 0;
  for (iter = 0; iter < 36; iter++) {
    int L = 4 + (int)tu_rand(&rng, 14), P = 2 + (int)tu_rand(&rng, 4), s;
    pp_model *m = random_model(ctx, &rng, L);
    pp_model_stats st;
    pp_partition *mad, *pd;
    pp_part_summary sm, sp;
    double mem;
    assert_int_equal(pp_model_stats_get(ctx, m, &st), PP_OK);
    /* from tight to loose: a share of everything */
    mem = (3 * st.param_bytes + 2 * st.saved_bytes) *
          (0.15 + tu_rand(&rng, 60) / 100.0) / P * 2;
    mad = run(ctx, m, P, mem, PP_PART_OPTIMAL);
    pd = run(ctx, m, P, mem, PP_PART_PIPEDREAM_STAR);
    assert_int_equal(pp_partition_summary(mad, &sm), PP_OK);
    assert_int_equal(pp_partition_summary(pd, &sp), PP_OK);
    for (s = 0; s < 2; s++) {
      const pp_part_summary *x = s ? &sp : &sm;
      if (!x->fits)
        continue;
      /* the simulator confirms: memory within, period no longer */
      if (!x->sim_fits)
        fail_msg("iteration %d (%s): simulated peak %.4f of memory", iter,
                 s ? "pipedream-star" : "madpipe", x->sim_peak_share);
      if (x->sim_period_ms > x->period_ms * (1 + 1e-6) &&
          getenv("PP_TEST_DUMP")) {
        pp_model_write(ctx, m, "/tmp/m.json", NULL);
        fprintf(stderr, "P %d mem %.17g\n", P, mem);
      }
      if (x->sim_period_ms > x->period_ms * (1 + 1e-6))
        fail_msg("iteration %d (%s): simulated period %.6g > %.6g", iter,
                 s ? "pipedream-star" : "madpipe", x->sim_period_ms,
                 x->period_ms);
      assert_true(x->period_ms >= x->lower_bound_ms * (1 - 1e-9));
    }
    if (sm.fits && sp.fits) {
      both++;
      logsum += log(sp.period_ms / sm.period_ms);
      better += sm.period_ms < sp.period_ms * (1 - 1e-9);
      worse += sm.period_ms > sp.period_ms * (1 + 1e-9);
    } else if (sm.fits) {
      only_mad++;
    }
    pp_partition_destroy(mad);
    pp_partition_destroy(pd);
    pp_model_destroy(m);
  }
  print_message("MadPipe vs PipeDream + 1F1B*: both fit %d (MadPipe faster "
                "%d, slower %d, geometric mean speedup %.3f), only MadPipe "
                "fits %d\n",
                both, better, worse, both ? exp(logsum / both) : 1, only_mad);
  assert_true(both > 6);
}

/* The planner's hooks: flat_device gives every processor that device's
** type (its times: T4's, not the reference V100's, and its memory);
** period_cap stops before phase 2 when the allocation is already slower;
** bad values are refused. */
static void t_flat_device_and_cap(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m, *v;
  pp_cluster *c;
  pp_part_params p;
  pp_partition *pt = NULL;
  pp_part_summary sum;
  pp_type_key key = {0};
  double want = 0, got = 0;
  int32_t l, s, t4 = -1, d;
  assert_int_equal(pp_model_load(ctx, "gpt2-amp", &m), PP_OK);
  assert_int_equal(pp_cluster_load(ctx, "amp-het-cluster", &c), PP_OK);
  for (d = 0; d < pp_cluster_ndev(c) && t4 < 0; d++) {
    pp_device_type_desc td;
    pp_cluster_type(c, pp_cluster_device_type(c, d), &td);
    if (!strcmp(td.name, "T4"))
      t4 = d;
  }
  assert_true(t4 >= 0);
  assert_int_equal(pp_model_chain_view(ctx, m, 0, &v), PP_OK);
  key = pp_model_type_key(v, c, t4);
  for (l = 0; l < pp_model_nop(v); l++) {
    pp_op_time t;
    assert_int_equal(pp_model_op_time(v, l, &key, 1, 1, &t), PP_OK);
    want += t.fwd_ms + t.bwd_ms;
  }
  pp_part_params_init(&p);
  p.objective = PP_OBJ_MADPIPE;
  p.stages = 4;
  p.gas = 16;
  p.bandwidth_gbps = 10;
  p.cluster = c;
  p.flat_device = t4;
  p.max_nodes = 200;
  assert_int_equal(pp_partition_chain(ctx, m, &p, &pt), PP_OK);
  pp_partition_summary(pt, &sum);
  for (s = 0; s < sum.nstage; s++) {
    pp_part_stage st;
    pp_partition_stage(pt, s, &st);
    got += st.compute_ms;
    assert_true(st.memory_limit_bytes <= (double)pp_cluster_type_memory(
                                             c, pp_cluster_device_type(c, t4)));
  }
  assert_true(fabs(got - want) <= 1e-9 * want);
  pp_partition_destroy(pt);
  pt = NULL;
  /* a cap below the allocation's period: stopped before phase 2 */
  p.period_cap_ms = 1e-3;
  tu_expect_error(ctx, pp_partition_chain(ctx, m, &p, &pt), PP_ELIMIT,
                  "exceeds the cap", NULL);
  assert_null(pt);
  p.period_cap_ms = NAN;
  tu_expect_error(ctx, pp_partition_chain(ctx, m, &p, &pt), PP_EINPUT,
                  "period cap", NULL);
  p.period_cap_ms = 0;
  p.flat_device = pp_cluster_ndev(c);
  tu_expect_error(ctx, pp_partition_chain(ctx, m, &p, &pt), PP_EINVAL,
                  "flat_device", NULL);
  p.flat_device = 0;
  p.cluster = NULL;
  tu_expect_error(ctx, pp_partition_chain(ctx, m, &p, &pt), PP_EINVAL,
                  "without a cluster", NULL);
  pp_model_destroy(v);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
}

/* ---- phase 1 alone (madpipe_phase1) -------------------------------------- */

static pp_partition *run_phase1(pp_ctx *ctx, const pp_model *m, int P,
                                double mem, int mode)
{
  pp_part_params p;
  pp_partition *pt = NULL;
  pp_part_params_init(&p);
  p.objective = PP_OBJ_MADPIPE;
  p.stages = P;
  p.bandwidth_gbps = 12;
  p.memory_bytes = mem;
  p.optimizer = PP_OPT_2BW;
  p.time_limit_s = 30;
  p.madpipe_phase1 = mode;
  if (pp_partition_chain(ctx, m, &p, &pt) != PP_OK)
    fail_msg("%s", pp_ctx_errmsg(ctx));
  return pt;
}

/* The same stages (operators) on the same processors. */
static bool same_allocation(const pp_partition *a, const pp_partition *b)
{
  pp_part_summary x, y;
  int32_t s;
  pp_partition_summary(a, &x);
  pp_partition_summary(b, &y);
  if (x.nstage != y.nstage)
    return false;
  for (s = 0; s < x.nstage; s++) {
    pp_part_stage u, v;
    int32_t nu, nv;
    const int32_t *ou = pp_partition_stage_ops(a, s, &nu);
    const int32_t *ov = pp_partition_stage_ops(b, s, &nv);
    pp_partition_stage(a, s, &u);
    pp_partition_stage(b, s, &v);
    if (u.proc != v.proc || nu != nv || memcmp(ou, ov, nu * sizeof *ou))
      return false;
  }
  return true;
}

static pp_plan *partition_plan(pp_ctx *ctx, const pp_partition *pt,
                               bool pattern);

/* What the planner's MadPipe floor rests on (src/search/search_madpipe.c,
** madpipe_floor): a full run ends in the allocation phase 1 alone gives
** in one of the two memory modes (phase 2 sets counts and the pattern
** only), and the estimate's time of a plan does not read its in-flight
** counts, so phase 1's plan prices the run's exactly.  Bad modes are
** refused. */
static void t_phase1_alone(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  uint64_t rng = 77;
  int iter, checked = 0, differ = 0;
  for (iter = 0; iter < 30; iter++) {
    int L = 4 + (int)tu_rand(&rng, 12), P = 2 + (int)tu_rand(&rng, 4), mode;
    int type[8] = {0};
    double speed = 1;
    pp_model *m = random_model(ctx, &rng, L);
    pp_cluster *c =
        tu_cluster(ctx, P, type, &speed, 1, NULL, NULL, 12, 0, 1000);
    pp_model_stats st;
    pp_partition *full;
    pp_part_summary sf;
    bool found = false;
    double mem;
    assert_int_equal(pp_model_stats_get(ctx, m, &st), PP_OK);
    mem = (3 * st.param_bytes + 2 * st.saved_bytes) *
          (0.15 + tu_rand(&rng, 60) / 100.0) / P * 2;
    full = run(ctx, m, P, mem, PP_PART_OPTIMAL);
    pp_partition_summary(full, &sf);
    for (mode = 1; mode <= 2 && sf.fits; mode++) {
      pp_partition *one = run_phase1(ctx, m, P, mem, mode);
      pp_part_summary so;
      pp_partition_summary(one, &so);
      if (so.fits && !found && same_allocation(one, full)) {
        pp_plan *a = partition_plan(ctx, full, false);
        pp_plan *b = partition_plan(ctx, one, false);
        pp_eval *ea = tu_eval(ctx, a, m, c, PP_AR_RING);
        pp_eval *eb = tu_eval(ctx, b, m, c, PP_AR_RING);
        int32_t s;
        found = true;
        for (s = 0; s < so.nstage; s++) {
          pp_part_stage x, y;
          pp_partition_stage(full, s, &x);
          pp_partition_stage(one, s, &y);
          differ += x.in_flight != y.in_flight;
        }
        assert_true(tu_eval_ms(ea) == tu_eval_ms(eb));
        pp_eval_destroy(ea);
        pp_eval_destroy(eb);
        pp_plan_destroy(a);
        pp_plan_destroy(b);
      }
      pp_partition_destroy(one);
    }
    if (sf.fits && !found)
      fail_msg("iteration %d: the run's allocation is neither mode's "
               "phase 1",
               iter);
    checked += sf.fits;
    pp_partition_destroy(full);
    pp_cluster_destroy(c);
    pp_model_destroy(m);
  }
  print_message("%d runs end in phase 1's allocation (%d stages with other "
                "in-flight counts, the same estimate)\n",
                checked, differ);
  assert_true(checked > 6 && differ > 0);
  {
    pp_model *m = random_model(ctx, &rng, 6);
    pp_part_params p;
    pp_partition *pt = NULL;
    pp_part_params_init(&p);
    p.objective = PP_OBJ_MADPIPE;
    p.stages = 2;
    p.bandwidth_gbps = 12;
    p.madpipe_phase1 = 3;
    tu_expect_error(ctx, pp_partition_chain(ctx, m, &p, &pt), PP_EINPUT,
                    "madpipe_phase1 3", NULL);
    assert_null(pt);
    pp_model_destroy(m);
  }
}

/* ---- the plan's pattern ------------------------------------------------ */

/* Equal offsets, a NaN (no transfer) equal to a NaN. */
static bool same_offsets(const double *a, const double *b)
{
  int k;
  for (k = 0; k < 4; k++)
    if (!(a[k] == b[k] || (isnan(a[k]) && isnan(b[k]))))
      return false;
  return true;
}

/* A plan of pt's stages, one replica each on its processor, with the
** partition's in-flight counts and, when asked, its pattern (as the
** planner builds it, src/search/search_madpipe.c). */
static pp_plan *partition_plan(pp_ctx *ctx, const pp_partition *pt,
                               bool pattern)
{
  pp_part_summary sum;
  pp_plan_params pl;
  pp_plan_builder *b;
  pp_plan *plan = NULL;
  int32_t s;
  pp_partition_summary(pt, &sum);
  pp_plan_params_init(&pl);
  pl.global_batch = 16;
  pl.schedule = PP_SCHED_1F1B_STAR;
  pl.period_ms = pattern ? sum.period_ms : 0;
  assert_int_equal(pp_plan_builder_create(ctx, &pl, "madpipe", &b), PP_OK);
  for (s = 0; s < sum.nstage; s++) {
    pp_part_stage st;
    double sig[4];
    int32_t id, n;
    const int32_t *ops = pp_partition_stage_ops(pt, s, &n);
    assert_int_equal(pp_partition_stage(pt, s, &st), PP_OK);
    assert_int_equal(pp_plan_builder_add_stage(b, ops, n, &id), PP_OK);
    assert_int_equal(pp_plan_builder_add_replica(b, id, &st.proc), PP_OK);
    assert_int_equal(pp_plan_builder_set_in_flight(b, id, st.in_flight), PP_OK);
    if (pattern) {
      assert_true(ppi_partition_pattern(pt, s, sig));
      assert_int_equal(pp_plan_builder_set_pattern(b, id, sig), PP_OK);
    }
  }
  if (pp_plan_builder_finish(b, &plan) != PP_OK)
    fail_msg("%s", pp_ctx_errmsg(ctx));
  return plan;
}

/* A plan a library user builds from a MadPipe partition: every stage's
** pattern is the partition's, kept through the plan JSON; the same
** stages without a pattern have none; the partition's stage graph has
** its stages, more than its processors when the special one holds
** several. */
static void t_plan_pattern(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  uint64_t rng = 5;
  int iter, with = 0, shared = 0;
  for (iter = 0; iter < 12; iter++) {
    int L = 4 + (int)tu_rand(&rng, 8), P = 2 + (int)tu_rand(&rng, 3);
    pp_model *m = random_model(ctx, &rng, L);
    pp_model_stats mst;
    pp_partition *pt;
    pp_part_summary sum;
    pp_stage_graph *g;
    pp_plan *plan, *none, *back = NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *f;
    int32_t s;
    assert_int_equal(pp_model_stats_get(ctx, m, &mst), PP_OK);
    pt = run(ctx, m, P,
             (3 * mst.param_bytes + 2 * mst.saved_bytes) *
                 (0.3 + tu_rand(&rng, 60) / 100.0) / P * 2,
             PP_PART_OPTIMAL);
    assert_int_equal(pp_partition_summary(pt, &sum), PP_OK);
    assert_int_equal(pp_partition_stage_graph(ctx, pt, &g), PP_OK);
    assert_int_equal(pp_stage_graph_nstage(g), sum.nstage);
    shared += sum.nstage > P;
    pp_stage_graph_destroy(g);
    if (!sum.fits) { /* no pattern to give */
      double sig[4];
      assert_false(ppi_partition_pattern(pt, 0, sig));
      pp_partition_destroy(pt);
      pp_model_destroy(m);
      continue;
    }
    with++;
    plan = partition_plan(ctx, pt, true);
    none = partition_plan(ctx, pt, false);
    f = open_memstream(&buf, &len);
    assert_int_equal(pp_plan_write(ctx, plan, NULL, f), PP_OK);
    fclose(f);
    if (pp_plan_read_json(ctx, buf, len, "plan.json", NULL, NULL, &back))
      fail_msg("%s", pp_ctx_errmsg(ctx));
    free(buf);
    assert_int_equal(pp_plan_nstage(plan), sum.nstage);
    for (s = 0; s < sum.nstage; s++) {
      double want[4], got[4], again[4];
      double keep[4] = {-7, -7, -7, -7}, untouched[4] = {-7, -7, -7, -7};
      assert_true(ppi_partition_pattern(pt, s, want));
      assert_int_equal(pp_plan_stage_pattern(plan, s, got), 1);
      assert_true(same_offsets(got, want));
      assert_true(got[0] >= 0 && got[1] >= got[0]);
      assert_int_equal(pp_plan_stage_pattern(plan, s, NULL), 1);
      assert_int_equal(pp_plan_stage_pattern(back, s, again), 1);
      assert_true(same_offsets(again, want));
      assert_int_equal(pp_plan_stage_pattern(none, s, keep), 0);
      assert_memory_equal(keep, untouched, sizeof keep);
    }
    assert_int_equal(pp_plan_stage_pattern(plan, -1, NULL), 0);
    assert_int_equal(pp_plan_stage_pattern(plan, sum.nstage, NULL), 0);
    pp_plan_destroy(back);
    pp_plan_destroy(none);
    pp_plan_destroy(plan);
    pp_partition_destroy(pt);
    pp_model_destroy(m);
  }
  assert_int_equal(pp_plan_stage_pattern(NULL, 0, NULL), 0);
  print_message("%d MadPipe plans with a pattern (%d with a shared "
                "processor)\n",
                with, shared);
  assert_true(with >= 4);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      TU_CTX_TEST(t_ilp_prop1),           TU_CTX_TEST(t_ilp_one),
      TU_CTX_TEST(t_phase1_exact),        TU_CTX_TEST(t_runs),
      TU_CTX_TEST(t_flat_device_and_cap), TU_CTX_TEST(t_plan_pattern),
      TU_CTX_TEST(t_phase1_alone),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
