/* SPDX-License-Identifier: MIT */
/*
** The cost model, the schedules and the simulator against closed forms
** (docs/DESIGN.md, "Units and the cost model"; docs/COST_MODEL.md):
**
** - balanced stages without communication take (gas + S - 1)(f + b)
**   under GPipe, 1F1B and 1F1B* (simulated and analytic), with
**   replicas and tensor parallelism, busy gas(f + b) and bubble
**   (S - 1)(f + b) per device;
** - in-flight counts are gas (GPipe) and min(S - s, gas) (1F1B), and the
**   operation orders keep exactly that many micro-batches alive;
** - 1F1B* groups equal an independent computation (prefix sums and the
**   greedy rule of [MadPipe] 4.1, checked by its two defining
**   properties) on random chains, and 1F1B* plans run;
** - one transfer, both directions, and one allreduce (ring in plan
**   order with the slowest link, hierarchical over nodes) equal their
**   formulas, analytically and in the simulator;
** - transfers that share a physical link share its bandwidth;
** - the simulator's peak memory equals the memory model for devices
**   holding one stage (and is below it for devices holding several);
** - on random plans (DAGs with skip edges, mixed device types, replica
**   counts that differ per stage, devices shared by stages, tp,
**   schedules, recomputation, both networks) no schedule blocks, the
**   simulated time is never below the lower bound, the critical path is
**   a chain of waits that ends the iteration, compute never overlaps on
**   a device, and two runs give the same events.
*/
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- balanced stages --------------------------------------------------- */

static void t_balanced(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  uint64_t rng = 0x9e3779b97f4a7c15ull;
  static const pp_schedule scheds[] = {PP_SCHED_GPIPE, PP_SCHED_1F1B,
                                       PP_SCHED_1F1B_STAR};
  int S, sc, iter = 0;
  for (S = 1; S <= 6; S++)
    for (sc = 0; sc < 3; sc++)
      for (int rep = 0; rep < 4; rep++, iter++) {
        int R = 1 + (int)tu_rand(&rng, 2), tp = 1 + (int)tu_rand(&rng, 2);
        int per = 1 + (int)tu_rand(&rng, 3), gas = 1 + (int)tu_rand(&rng, 12);
        int nop = S * per, s, i, d;
        struct tu_op ops[TU_MAXOP];
        struct tu_plan_spec x;
        pp_model *m;
        pp_cluster *c;
        pp_plan *p;
        pp_eval *e;
        pp_sim *sm;
        double fb = 0, fs[TU_MAXOP], bs[TU_MAXOP];
        if (S * R * tp > TU_MAXDEV)
          R = 1;
        /* every stage: the same total forward and backward, split in
        ** random operators; no bytes anywhere */
        for (i = 0; i < per; i++) {
          fs[i] = 1 + tu_rand(&rng, 8);
          bs[i] = 1 + tu_rand(&rng, 16);
          fb += fs[i] + bs[i];
        }
        memset(ops, 0, sizeof ops);
        for (s = 0; s < S; s++)
          for (i = 0; i < per; i++) {
            ops[s * per + i].f = fs[(i + s) % per];
            ops[s * per + i].b = bs[(i + s) % per];
          }
        m = tu_model_ops(ctx, nop, ops, NULL, 0);
        c = tu_cluster(ctx, S * R * tp, NULL, (double[]){1}, 1, NULL, NULL, 10,
                       0, 16);
        memset(&x, 0, sizeof x);
        x.S = S;
        x.tp = tp;
        x.gbs = (int64_t)gas * R;
        x.sched = scheds[sc];
        for (s = 0; s <= S; s++)
          x.lo[s] = s * per;
        tu_lay_out(&x, R);
        p = tu_plan(ctx, &x);
        fb /= tp; /* without a tp profile, each rank does 1/tp */
        e = tu_eval(ctx, p, m, c, PP_AR_AUTO);
        sm = tu_sim(ctx, p, m, c, PP_AR_AUTO,
                    iter % 2 ? PP_NET_LINKS : PP_NET_CHANNELS);
        tu_near(tu_sim_ms(sm), (gas + S - 1) * fb,
                "simulated (gas + S - 1)(f + b)");
        tu_near(tu_eval_ms(e), (gas + S - 1) * fb,
                "analytic (gas + S - 1)(f + b)");
        for (d = 0; d < S * R * tp; d++) {
          pp_sim_device sd;
          assert_int_equal(pp_sim_device_get(sm, d, &sd), PP_OK);
          assert_true(sd.used);
          tu_near(sd.busy_ms, gas * fb, "busy gas(f + b)");
          tu_near(sd.idle_ms, (S - 1) * fb, "idle (S - 1)(f + b)");
          tu_near(sd.bubble_ms, (S - 1) * fb, "bubble (S - 1)(f + b)");
        }
        pp_sim_destroy(sm);
        pp_eval_destroy(e);
        pp_plan_destroy(p);
        pp_cluster_destroy(c);
        pp_model_destroy(m);
      }
}

/* ---- in-flight counts and orders ---------------------------------------- */

static void t_inflight(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  int S, gas, sc;
  for (S = 1; S <= 8; S++)
    for (gas = 1; gas <= 10; gas++)
      for (sc = 0; sc < 2; sc++) {
        struct tu_op ops[TU_MAXOP];
        struct tu_plan_spec x;
        pp_model *m;
        pp_cluster *c;
        pp_plan *p;
        pp_eval *e;
        int s;
        for (s = 0; s < S; s++)
          ops[s] = (struct tu_op){1 + s % 3, 2, 0, 100, 10, 50};
        m = tu_model_ops(ctx, S, ops, NULL, 0);
        c = tu_cluster(ctx, S, NULL, (double[]){1}, 1, NULL, NULL, 10, 0, 16);
        memset(&x, 0, sizeof x);
        x.S = S;
        x.gbs = gas;
        x.sched = sc ? PP_SCHED_1F1B : PP_SCHED_GPIPE;
        for (s = 0; s <= S; s++)
          x.lo[s] = s;
        tu_lay_out(&x, 1);
        p = tu_plan(ctx, &x);
        e = tu_eval(ctx, p, m, c, PP_AR_AUTO);
        for (s = 0; s < S; s++) {
          pp_stage_cost st;
          pp_sched_op buf[64];
          int64_t n;
          int want = sc ? (S - s < gas ? S - s : gas) : gas;
          assert_int_equal(pp_eval_stage(e, s, &st), PP_OK);
          assert_int_equal(st.in_flight, want);
          assert_int_equal(st.micro_batches, gas);
          assert_int_equal(pp_eval_stage_order(e, s, buf, 64, &n), PP_OK);
          assert_int_equal(tu_order_inflight(buf, n, gas), want);
        }
        {
          /* GPipe: forwards in order, then backwards in reverse */
          pp_sched_op buf[64];
          int64_t n, i;
          assert_int_equal(pp_eval_stage_order(e, 0, buf, 64, &n), PP_OK);
          if (!sc)
            for (i = 0; i < gas; i++) {
              assert_int_equal(buf[i].kind, PP_TASK_FWD);
              assert_int_equal(buf[i].micro_batch, i);
              assert_int_equal(buf[gas + i].kind, PP_TASK_BWD);
              assert_int_equal(buf[gas + i].micro_batch, gas - 1 - i);
            }
        }
        pp_eval_destroy(e);
        pp_plan_destroy(p);
        pp_cluster_destroy(c);
        pp_model_destroy(m);
      }
}

/* ---- 1F1B* groups -------------------------------------------------------- */

static void t_star_groups(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  uint64_t rng = 12345;
  int iter, checked = 0, multi = 0;
  for (iter = 0; iter < 300; iter++) {
    int S = 1 + (int)tu_rand(&rng, 10), gas = 1 + (int)tu_rand(&rng, 12);
    double gbps = 1 + tu_rand(&rng, 4), load[2 * TU_MAXOP], T, worst = 0;
    int g[2 * TU_MAXOP], s, i, j;
    struct tu_op ops[TU_MAXOP];
    struct tu_plan_spec x;
    pp_model *m;
    pp_cluster *c;
    pp_plan *p;
    pp_eval *e;
    pp_sim *sm;
    for (s = 0; s < S; s++) {
      ops[s].f = 1 + tu_rand(&rng, 5);
      ops[s].b = 1 + tu_rand(&rng, 9);
      ops[s].u = 0;
      ops[s].param = 1000;
      ops[s].saved = 100 + tu_rand(&rng, 1000);
      /* 0 to 8 ms of transfer each way at gbps */
      ops[s].out = (int64_t)tu_rand(&rng, 9) * (int64_t)(gbps * 1e6);
    }
    for (s = 0; s < S; s++) {
      load[2 * s] = ops[s].f + ops[s].b;
      if (s + 1 < S)
        load[2 * s + 1] = 2 * (double)ops[s].out / (gbps * 1e6);
    }
    for (i = 0; i < 2 * S - 1; i++)
      worst = load[i] > worst ? load[i] : worst;
    /* the bottleneck's period, or a longer one */
    T = iter % 3 == 0 ? 0 : worst * (1 + tu_rand(&rng, 40) / 10.0);
    tu_star_groups(load, 2 * S - 1, T > 0 ? T : worst, g);
    /* the two defining properties of the greedy grouping */
    for (i = 0; i < 2 * S - 1; i = j) {
      double sum = 0;
      for (j = i; j < 2 * S - 1 && g[j] == g[i]; j++)
        sum += load[j];
      assert_true(sum <= (T > 0 ? T : worst) * (1 + 1e-9) || j == i + 1);
      if (i > 0)
        assert_true(sum + load[i - 1] > (T > 0 ? T : worst) * (1 - 1e-9));
    }
    m = tu_model_ops(ctx, S, ops, NULL, 0);
    c = tu_cluster(ctx, S, NULL, (double[]){1}, 1, NULL, NULL, gbps, 0, 16);
    memset(&x, 0, sizeof x);
    x.S = S;
    x.gbs = gas;
    x.sched = PP_SCHED_1F1B_STAR;
    x.period = T;
    for (s = 0; s <= S; s++)
      x.lo[s] = s;
    tu_lay_out(&x, 1);
    p = tu_plan(ctx, &x);
    e = tu_eval(ctx, p, m, c, PP_AR_AUTO);
    for (s = 0; s < S; s++) {
      pp_stage_cost st;
      pp_sched_op buf[64];
      int64_t n;
      int want = g[2 * s] < gas ? g[2 * s] : gas;
      assert_int_equal(pp_eval_stage(e, s, &st), PP_OK);
      if (st.group != g[2 * s])
        fail_msg("S %d T %g stage %d: group %d, expected %d", S, T, s,
                 (int)st.group, g[2 * s]);
      assert_int_equal(st.in_flight, want);
      assert_int_equal(pp_eval_stage_order(e, s, buf, 64, &n), PP_OK);
      assert_int_equal(tu_order_inflight(buf, n, gas), want);
      if (s > 0) {
        pp_stage_cost prev;
        assert_int_equal(pp_eval_stage(e, s - 1, &prev), PP_OK);
        assert_true(prev.group >= st.group); /* deadlock-free orders */
      }
      if (g[2 * s] > 1 && g[2 * s] < S - s)
        multi++; /* fewer than 1F1B keeps */
    }
    /* the schedule runs, and its peak memory is the model's */
    sm = tu_sim(ctx, p, m, c, PP_AR_AUTO, PP_NET_CHANNELS);
    for (s = 0; s < S; s++) {
      pp_sim_device sd;
      pp_device_memory dm;
      assert_int_equal(pp_sim_device_get(sm, s, &sd), PP_OK);
      assert_int_equal(pp_eval_device(e, s, &dm), PP_OK);
      tu_near(sd.peak_memory_bytes, dm.total_bytes, "1f1b-star peak memory");
    }
    checked++;
    pp_sim_destroy(sm);
    pp_eval_destroy(e);
    pp_plan_destroy(p);
    pp_cluster_destroy(c);
    pp_model_destroy(m);
  }
  assert_int_equal(checked, 300);
  assert_true(multi > 20); /* the instances exercise real grouping */
}

/* A period shorter than the bottleneck is refused, naming the resource. */
static void t_star_period_too_short(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  struct tu_op ops[2] = {{2, 4, 0, 0, 0, 0}, {1, 1, 0, 0, 0, 0}};
  struct tu_plan_spec x;
  pp_model *m;
  pp_cluster *c;
  pp_plan *p;
  pp_eval *e = NULL;
  pp_cost_params cp;
  m = tu_model_ops(ctx, 2, ops, NULL, 0);
  c = tu_cluster(ctx, 2, NULL, (double[]){1}, 1, NULL, NULL, 10, 0, 16);
  memset(&x, 0, sizeof x);
  x.S = 2;
  x.gbs = 4;
  x.sched = PP_SCHED_1F1B_STAR;
  x.period = 5;
  x.lo[1] = 1;
  x.lo[2] = 2;
  tu_lay_out(&x, 1);
  p = tu_plan(ctx, &x);
  pp_cost_params_init(&cp);
  tu_expect_error(ctx, pp_evaluate(ctx, p, m, c, &cp, &e), PP_EINPUT, "t.plan",
                  "period 5 ms", "load 6 ms", "stage 0", NULL);
  assert_null(e);
  pp_plan_destroy(p);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
}

/* ---- transfers ----------------------------------------------------------- */

static double comm(double bytes, double gbps, double lat_us)
{
  return bytes > 0 ? lat_us / 1000 + bytes / (gbps * 1e6) : 0;
}

static void t_p2p(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  uint64_t rng = 777;
  int iter;
  for (iter = 0; iter < 60; iter++) {
    int tp = 1 + (int)tu_rand(&rng, 2), t;
    double lat = iter % 2 ? 0 : 1 + tu_rand(&rng, 50);
    double bw[TU_MAXDEV * TU_MAXDEV], want = 0, f0, b0, f1, b1;
    struct tu_op ops[2];
    struct tu_plan_spec x;
    pp_model *m;
    pp_cluster *c;
    pp_plan *p;
    pp_eval *e;
    pp_sim *sm;
    pp_stage_cost st;
    int i, j, n = 2 * tp;
    int64_t bytes = (1 + (int64_t)tu_rand(&rng, 100)) * 1000000;
    for (i = 0; i < n; i++)
      for (j = i; j < n; j++)
        bw[i * n + j] = bw[j * n + i] = 1 + tu_rand(&rng, 20);
    ops[0] = (struct tu_op){
        f0 = 1 + tu_rand(&rng, 5), b0 = 1 + tu_rand(&rng, 5), 0, 0, bytes, 10};
    ops[1] = (struct tu_op){
        f1 = 1 + tu_rand(&rng, 5), b1 = 1 + tu_rand(&rng, 5), 0, 0, 7, 10};
    m = tu_model_ops(ctx, 2, ops, NULL, 0);
    c = tu_cluster(ctx, n, NULL, (double[]){1}, 1, NULL, bw, 0, lat, 16);
    memset(&x, 0, sizeof x);
    x.S = 2;
    x.tp = tp;
    x.gbs = 1;
    x.sched = iter % 3 ? PP_SCHED_1F1B : PP_SCHED_GPIPE;
    x.lo[1] = 1;
    x.lo[2] = 2;
    tu_lay_out(&x, 1);
    p = tu_plan(ctx, &x);
    f0 /= tp, b0 /= tp, f1 /= tp, b1 /= tp; /* each rank 1/tp of the work */
    /* each rank sends 1/tp of the tensor to the same rank; the slowest
    ** pair sets the time, once forward and once backward (its own
    ** direction's bandwidth) */
    {
      double fw = 0, bk = 0;
      for (t = 0; t < tp; t++) {
        int u = t, v = tp + t;
        double y = comm((double)bytes / tp, bw[u * n + v], lat);
        double z = comm((double)bytes / tp, bw[v * n + u], lat);
        fw = y > fw ? y : fw;
        bk = z > bk ? z : bk;
        want = (y > z ? y : z) > want ? (y > z ? y : z) : want;
      }
      e = tu_eval(ctx, p, m, c, PP_AR_AUTO);
      assert_int_equal(pp_eval_stage(e, 0, &st), PP_OK);
      tu_near(st.send_ms, want, "send_ms = comm_ms(bytes / tp, B)");
      sm = tu_sim(ctx, p, m, c, PP_AR_AUTO,
                  iter % 4 < 2 ? PP_NET_CHANNELS : PP_NET_LINKS);
      tu_near(tu_sim_ms(sm), f0 + fw + f1 + b1 + bk + b0,
              "one micro-batch: f0 + send + f1 + b1 + send back + b0");
    }
    pp_sim_destroy(sm);
    pp_eval_destroy(e);
    pp_plan_destroy(p);
    pp_cluster_destroy(c);
    pp_model_destroy(m);
  }
}

/* Two replicas' transfers cross one physical link: with link sharing
** each gets half of it; with channels they do not interfere. */
static void t_shared_link(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_cluster_builder *cb;
  pp_cluster *c = NULL;
  pp_device_type_desc t;
  struct tu_op ops[2] = {{1, 2, 0, 0, 40000000, 10}, {3, 4, 0, 0, 5, 10}};
  struct tu_plan_spec x;
  pp_model *m;
  pp_plan *p;
  pp_sim *s1, *s2;
  int i;
  double xfer = 40000000 / (10 * 1e6); /* 4 ms over the 10 GB/s trunk */
  m = tu_model_ops(ctx, 2, ops, NULL, 0);
  assert_int_equal(pp_cluster_builder_create(ctx, "two-switch", NULL, &cb),
                   PP_OK);
  pp_device_type_desc_init(&t);
  t.name = "gpu";
  t.memory_gib = 16;
  assert_int_equal(pp_cluster_builder_add_type(cb, &t), PP_OK);
  for (i = 0; i < 4; i++) {
    pp_device_desc d;
    char name[8];
    pp_device_desc_init(&d);
    snprintf(name, sizeof name, "g%d", i);
    d.name = name;
    d.type = "gpu";
    d.node = i / 2;
    assert_int_equal(pp_cluster_builder_add_device(cb, &d, NULL), PP_OK);
  }
  assert_int_equal(pp_cluster_builder_add_switch(cb, "A"), PP_OK);
  assert_int_equal(pp_cluster_builder_add_switch(cb, "B"), PP_OK);
  assert_int_equal(pp_cluster_builder_add_link(cb, "g0", "A", 100, 1), PP_OK);
  assert_int_equal(pp_cluster_builder_add_link(cb, "g1", "A", 100, 1), PP_OK);
  assert_int_equal(pp_cluster_builder_add_link(cb, "g2", "B", 100, 1), PP_OK);
  assert_int_equal(pp_cluster_builder_add_link(cb, "g3", "B", 100, 1), PP_OK);
  assert_int_equal(pp_cluster_builder_add_link(cb, "A", "B", 10, 1), PP_OK);
  if (pp_cluster_builder_finish(cb, &c) != PP_OK)
    fail_msg("cluster: %s", pp_ctx_errmsg(ctx));
  memset(&x, 0, sizeof x);
  x.S = 2;
  x.gbs = 2; /* one micro-batch per replica, sent at the same moment */
  x.sched = PP_SCHED_1F1B;
  x.lo[1] = 1;
  x.lo[2] = 2;
  x.R[0] = x.R[1] = 2;
  x.dev[0][0] = 0;
  x.dev[0][1] = 1;
  x.dev[1][0] = 2;
  x.dev[1][1] = 3;
  p = tu_plan(ctx, &x);
  s1 = tu_sim(ctx, p, m, c, PP_AR_AUTO, PP_NET_CHANNELS);
  s2 = tu_sim(ctx, p, m, c, PP_AR_AUTO, PP_NET_LINKS);
  tu_near(tu_sim_ms(s1), 1 + xfer + 3 + 4 + xfer + 2,
          "channels: no interference");
  tu_near(tu_sim_ms(s2), 1 + 2 * xfer + 3 + 4 + 2 * xfer + 2,
          "links: two transfers share the trunk");
  pp_sim_destroy(s1);
  pp_sim_destroy(s2);
  pp_plan_destroy(p);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
}

/* ---- allreduce ----------------------------------------------------------- */

static void t_ring(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  uint64_t rng = 4242;
  int iter;
  for (iter = 0; iter < 80; iter++) {
    int R = 2 + (int)tu_rand(&rng, 7), tp = 1 + (int)tu_rand(&rng, 2);
    int n = R * tp, i, j, r, t, perm[TU_MAXDEV];
    double bw[TU_MAXDEV * TU_MAXDEV], lat = iter % 2 ? 0 : tu_rand(&rng, 30);
    double bmin = INFINITY, want, f = 1 + tu_rand(&rng, 4),
           b = 1 + tu_rand(&rng, 4), u = tu_rand(&rng, 3);
    int64_t P = (1 + (int64_t)tu_rand(&rng, 50)) * 2000000;
    int gas = 1 + (int)tu_rand(&rng, 4);
    struct tu_op ops[1];
    struct tu_plan_spec x;
    pp_model *m;
    pp_cluster *c;
    pp_plan *p;
    pp_eval *e;
    pp_sim *sm;
    pp_stage_cost st;
    if (n > TU_MAXDEV)
      R = TU_MAXDEV / tp, n = R * tp;
    for (i = 0; i < n; i++)
      for (j = i; j < n; j++)
        bw[i * n + j] = bw[j * n + i] = 1 + tu_rand(&rng, 30);
    for (i = 0; i < n; i++)
      perm[i] = i;
    for (i = n - 1; i > 0; i--) {
      j = (int)tu_rand(&rng, (uint32_t)i + 1);
      r = perm[i], perm[i] = perm[j], perm[j] = r;
    }
    ops[0] = (struct tu_op){f, b, u, P * tp, 0, 10};
    m = tu_model_ops(ctx, 1, ops, NULL, 0);
    c = tu_cluster(ctx, n, NULL, (double[]){1}, 1, NULL, bw, 0, lat, 16);
    memset(&x, 0, sizeof x);
    x.S = 1;
    x.tp = tp;
    x.gbs = (int64_t)gas * R;
    x.sched = PP_SCHED_1F1B;
    x.lo[1] = 1;
    x.R[0] = R;
    for (i = 0; i < n; i++)
      x.dev[0][i] = perm[i];
    p = tu_plan(ctx, &x);
    /* one ring per tp rank in plan order, wrap-around included */
    for (t = 0; t < tp; t++)
      for (r = 0; r < R; r++) {
        int u0 = perm[r * tp + t], v0 = perm[((r + 1) % R) * tp + t];
        bmin = bw[u0 * n + v0] < bmin ? bw[u0 * n + v0] : bmin;
      }
    want = 2.0 * (R - 1) / R * (double)P / (bmin * 1e6) +
           2.0 * (R - 1) * lat / 1000;
    f /= tp, b /= tp, u /= tp; /* each rank 1/tp of the work */
    e = tu_eval(ctx, p, m, c, PP_AR_RING);
    assert_int_equal(pp_eval_stage(e, 0, &st), PP_OK);
    tu_near(st.allreduce_ms, want, "ring 2(R-1)/R P / B_min + 2(R-1) lat");
    assert_int_equal(st.hierarchical, 0);
    tu_near(tu_eval_ms(e), gas * (f + b) + want + u, "analytic one stage");
    sm = tu_sim(ctx, p, m, c, PP_AR_RING, PP_NET_CHANNELS);
    tu_near(tu_sim_ms(sm), gas * (f + b) + want + u, "simulated one stage");
    pp_sim_destroy(sm);
    pp_eval_destroy(e);
    pp_plan_destroy(p);
    pp_cluster_destroy(c);
    pp_model_destroy(m);
  }
}

static void t_hier(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  uint64_t rng = 99;
  int iter, picked_hier = 0, picked_ring = 0;
  for (iter = 0; iter < 60; iter++) {
    int nn = 2 + (int)tu_rand(&rng, 3), kk = 2 + (int)tu_rand(&rng, 3);
    int R = nn * kk, i, j, node[TU_MAXDEV];
    double bin = 20 + tu_rand(&rng, 200), bx = 1 + tu_rand(&rng, 20);
    double lat = iter % 2 ? 0 : tu_rand(&rng, 20), bw[TU_MAXDEV * TU_MAXDEV];
    double f = 1, b = 2, hier, ring;
    int64_t P = (1 + (int64_t)tu_rand(&rng, 50)) * 4000000;
    struct tu_op ops[1];
    struct tu_plan_spec x;
    pp_model *m;
    pp_cluster *c;
    pp_plan *p;
    pp_eval *e;
    pp_sim *sm;
    pp_stage_cost st;
    if (R > TU_MAXDEV)
      kk = 2, R = nn * kk;
    for (i = 0; i < R; i++)
      node[i] = i / kk;
    for (i = 0; i < R; i++)
      for (j = 0; j < R; j++)
        bw[i * R + j] = node[i] == node[j] ? bin : bx;
    ops[0] = (struct tu_op){f, b, 0, P, 0, 10};
    m = tu_model_ops(ctx, 1, ops, NULL, 0);
    c = tu_cluster(ctx, R, NULL, (double[]){1}, 1, node, bw, 0, lat, 16);
    memset(&x, 0, sizeof x);
    x.S = 1;
    x.gbs = R;
    x.sched = PP_SCHED_GPIPE;
    x.lo[1] = 1;
    x.R[0] = R;
    /* replicas interleaved over the nodes: the ring crosses nodes at
    ** every hop */
    for (i = 0; i < R; i++)
      x.dev[0][i] = (i % nn) * kk + i / nn;
    p = tu_plan(ctx, &x);
    hier = 2 * ((kk - 1.0) / kk * P / (bin * 1e6) + (kk - 1) * lat / 1000) +
           2.0 * (nn - 1) / nn * ((double)P / kk) / (bx * 1e6) +
           2.0 * (nn - 1) * lat / 1000;
    ring =
        2.0 * (R - 1) / R * (double)P / (bx * 1e6) + 2.0 * (R - 1) * lat / 1000;
    e = tu_eval(ctx, p, m, c, PP_AR_HIER);
    assert_int_equal(pp_eval_stage(e, 0, &st), PP_OK);
    tu_near(st.allreduce_ms, hier, "hierarchical allreduce formula");
    assert_int_equal(st.hierarchical, 1);
    sm = tu_sim(ctx, p, m, c, PP_AR_HIER, PP_NET_CHANNELS);
    tu_near(tu_sim_ms(sm), f + b + hier, "simulated hierarchical allreduce");
    pp_sim_destroy(sm);
    pp_eval_destroy(e);
    e = tu_eval(ctx, p, m, c, PP_AR_AUTO);
    assert_int_equal(pp_eval_stage(e, 0, &st), PP_OK);
    tu_near(st.allreduce_ms, hier < ring ? hier : ring, "auto: the faster");
    if (st.hierarchical)
      picked_hier++;
    else
      picked_ring++;
    pp_eval_destroy(e);
    e = tu_eval(ctx, p, m, c, PP_AR_RING);
    assert_int_equal(pp_eval_stage(e, 0, &st), PP_OK);
    tu_near(st.allreduce_ms, ring, "forced ring");
    sm = tu_sim(ctx, p, m, c, PP_AR_RING, PP_NET_CHANNELS);
    tu_near(tu_sim_ms(sm), f + b + ring, "simulated ring");
    pp_sim_destroy(sm);
    pp_eval_destroy(e);
    pp_plan_destroy(p);
    pp_cluster_destroy(c);
    pp_model_destroy(m);
  }
  assert_true(picked_hier > 0);
  (void)picked_ring;
}

/* ---- random plans -------------------------------------------------------- */

struct inst {
  pp_model *m;
  pp_cluster *c;
  pp_plan *p;
  int shared; /* a device holds several stages */
  int uneven; /* replica counts differ between stages */
  int ndev;
};

static void inst_free(struct inst *x)
{
  pp_plan_destroy(x->p);
  pp_cluster_destroy(x->c);
  pp_model_destroy(x->m);
}

/* A random DAG (a chain plus skip edges), two device types on a random
** matrix, stages of contiguous operators, random replicas, tp,
** schedule, recomputation, optimizer; devices distinct within a stage,
** shared across stages when allow_shared. */
static void random_inst(pp_ctx *ctx, uint64_t *rng, int allow_shared,
                        struct inst *in)
{
  int nop = 1 + (int)tu_rand(rng, 14), S, s, i, j, nextra = 0, ndev, tp, R;
  struct tu_op ops[TU_MAXOP];
  int extra[16][2], type[TU_MAXDEV], node[TU_MAXDEV];
  double bw[TU_MAXDEV * TU_MAXDEV];
  struct tu_plan_spec x;
  static const pp_schedule scheds[] = {PP_SCHED_GPIPE, PP_SCHED_1F1B,
                                       PP_SCHED_1F1B_STAR};

  for (i = 0; i < nop; i++) {
    ops[i].f = 0.5 + tu_rand(rng, 40) / 8.0;
    ops[i].b = 0.5 + tu_rand(rng, 80) / 8.0;
    ops[i].u = tu_rand(rng, 3) / 4.0;
    ops[i].param = (int64_t)tu_rand(rng, 100) * 1000000;
    ops[i].out = (int64_t)tu_rand(rng, 50) * 1000000;
    ops[i].saved = (int64_t)tu_rand(rng, 100) * 1000000;
  }
  for (i = 0; i + 2 < nop && nextra < 16; i++)
    if (tu_rand(rng, 3) == 0) {
      extra[nextra][0] = i;
      extra[nextra][1] = i + 2 + (int)tu_rand(rng, (uint32_t)(nop - i - 2));
      nextra++;
    }
  in->m = tu_model_ops(ctx, nop, ops, (const int(*)[2])extra, nextra);
  ndev = 2 + (int)tu_rand(rng, 7);
  for (i = 0; i < ndev; i++) {
    type[i] = (int)tu_rand(rng, 2);
    node[i] = i / 4;
  }
  for (i = 0; i < ndev; i++)
    for (j = i; j < ndev; j++)
      bw[i * ndev + j] = bw[j * ndev + i] =
          node[i] == node[j] ? 20 + tu_rand(rng, 100) : 1 + tu_rand(rng, 20);
  in->c =
      tu_cluster(ctx, ndev, type, (double[]){1, 0.25 + tu_rand(rng, 8) / 4}, 2,
                 node, bw, 0, tu_rand(rng, 2) ? 0 : tu_rand(rng, 40), 1000);
  in->ndev = ndev;
  memset(&x, 0, sizeof x);
  S = 1 + (int)tu_rand(rng, (uint32_t)(nop < 8 ? nop : 8));
  /* cut points */
  x.lo[0] = 0;
  for (s = 1; s < S; s++)
    x.lo[s] = x.lo[s - 1] + 1 +
              (int)tu_rand(rng, (uint32_t)(nop - x.lo[s - 1] - (S - s)));
  x.lo[S] = nop;
  tp = tu_rand(rng, 3) == 0 && ndev >= 2 ? 2 : 1;
  x.S = S;
  x.tp = tp;
  x.sched = scheds[tu_rand(rng, 3)];
  x.recompute = (int)tu_rand(rng, 2);
  x.opt = (pp_optimizer)tu_rand(rng, 4);
  x.mbs = 1 + (int)tu_rand(rng, 2);
  R = 1;
  if (!allow_shared) {
    /* every device at most one stage: R * tp * S <= ndev */
    int maxr = ndev / (tp * S);
    if (maxr < 1) {
      S = x.S = 1;
      x.lo[1] = nop;
      maxr = ndev / tp;
    }
    R = maxr < 3 ? maxr : 3;
  }
  {
    int perm[TU_MAXDEV], k = 0;
    for (i = 0; i < ndev; i++)
      perm[i] = i;
    for (i = ndev - 1; i > 0; i--) {
      j = (int)tu_rand(rng, (uint32_t)i + 1);
      k = perm[i], perm[i] = perm[j], perm[j] = k;
    }
    k = 0;
    in->shared = 0;
    for (s = 0; s < x.S; s++) {
      int Rs =
          1 + (int)tu_rand(rng, (uint32_t)(allow_shared
                                               ? (ndev / tp < 3 ? ndev / tp : 3)
                                               : R));
      x.R[s] = Rs;
      if (allow_shared) {
        /* a random injective choice inside the stage */
        int used[TU_MAXDEV] = {0};
        for (i = 0; i < Rs * tp; i++) {
          int d;
          do
            d = (int)tu_rand(rng, (uint32_t)ndev);
          while (used[d]);
          used[d] = 1;
          x.dev[s][i] = d;
        }
      } else {
        for (i = 0; i < Rs * tp; i++)
          x.dev[s][i] = perm[k++];
      }
    }
    in->uneven = 0;
    for (s = 1; s < x.S; s++)
      if (x.R[s] != x.R[0])
        in->uneven = 1;
    if (allow_shared) {
      int cnt[TU_MAXDEV] = {0};
      for (s = 0; s < x.S; s++)
        for (i = 0; i < x.R[s] * tp; i++)
          if (++cnt[x.dev[s][i]] > 1)
            in->shared = 1;
    }
  }
  {
    /* a batch every stage's replicas divide */
    int64_t l = 1;
    for (s = 0; s < x.S; s++) {
      int64_t aa = l, bb = x.R[s];
      while (bb) {
        int64_t tt = aa % bb;
        aa = bb;
        bb = tt;
      }
      l = l / aa * x.R[s];
    }
    x.gbs = l * x.mbs * (1 + (int64_t)tu_rand(rng, 6));
  }
  if (x.sched == PP_SCHED_1F1B_STAR && tu_rand(rng, 2))
    x.period = 1e6; /* a long period: one group */
  in->p = tu_plan(ctx, &x);
}

static void check_events(const pp_sim *s, double T)
{
  int64_t n = pp_sim_nevent(s), i, nc;
  const int64_t *cp = pp_sim_critical_path(s, &nc);
  double prev_start = -1;
  pp_sim_event e, f;
  assert_true(n > 0 && nc > 0);
  for (i = 0; i < n; i++) {
    assert_int_equal(pp_sim_event_get(s, i, &e), PP_OK);
    assert_true(e.start_ms >= prev_start);
    assert_true(e.end_ms >= e.start_ms - 1e-9);
    assert_true(e.end_ms <= T * (1 + 1e-12) + 1e-9);
    prev_start = e.start_ms;
  }
  /* the critical path: starts at 0 (or right after a latency), ends at
  ** the end, and each link waits for the previous */
  assert_int_equal(pp_sim_event_get(s, cp[nc - 1], &e), PP_OK);
  tu_near(e.end_ms, T, "critical path ends the iteration");
  for (i = 1; i < nc; i++) {
    assert_int_equal(pp_sim_event_get(s, cp[i - 1], &e), PP_OK);
    assert_int_equal(pp_sim_event_get(s, cp[i], &f), PP_OK);
    if (f.start_ms < e.end_ms - 1e-9 * (1 + T))
      fail_msg("critical path: a %s starts at %.9g before the %s it waits "
               "for ends at %.9g",
               pp_task_kind_name(f.kind), f.start_ms, pp_task_kind_name(e.kind),
               e.end_ms);
  }
}

/* Compute tasks never overlap on one device. */
static void check_no_overlap(const pp_sim *s, int ndev)
{
  int64_t n = pp_sim_nevent(s), i;
  double *last = calloc((size_t)ndev, sizeof *last);
  assert_non_null(last);
  for (i = 0; i < n; i++) {
    pp_sim_event e;
    assert_int_equal(pp_sim_event_get(s, i, &e), PP_OK);
    if (e.kind == PP_TASK_FWD || e.kind == PP_TASK_BWD ||
        e.kind == PP_TASK_RECOMPUTE || e.kind == PP_TASK_UPDATE) {
      if (e.start_ms < last[e.device] - 1e-9)
        fail_msg("device %d: a %s at %.9g overlaps a task ending at %.9g",
                 e.device, pp_task_kind_name(e.kind), e.start_ms,
                 last[e.device]);
      last[e.device] = e.end_ms;
    }
  }
  free(last);
}

static void t_random_plans(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  uint64_t rng = 2026;
  int iter, ran = 0, uneven = 0, shared_ran = 0, closed = 0;
  for (iter = 0; iter < 3000; iter++) {
    struct inst in;
    int allow_shared = iter % 4 == 3, d;
    pp_cost_params cp;
    pp_sim *s = NULL, *s2 = NULL;
    pp_eval *e = NULL;
    pp_sim_summary sum;
    pp_status rc;
    random_inst(ctx, &rng, allow_shared, &in);
    pp_cost_params_init(&cp);
    cp.network = iter % 2 ? PP_NET_LINKS : PP_NET_CHANNELS;
    cp.allreduce = (pp_allreduce)(iter % 3);
    cp.reserve_bytes = (int64_t)(iter % 5) << 20;
    rc = pp_simulate(ctx, in.p, in.m, in.c, &cp, &s);
    if (rc != PP_OK) {
      /* no schedule may block: replica counts that differ and devices
      ** shared by stages included */
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", pp_ctx_errmsg(ctx));
      pp_ctx_clear_error(ctx);
      pp_plan_write(ctx, in.p, NULL, stderr);
      pp_model_write(ctx, in.m, NULL, stderr);
      if (pp_evaluate(ctx, in.p, in.m, in.c, &cp, &e) == PP_OK) {
        pp_eval_write(ctx, e, 0, stderr);
        pp_eval_destroy(e);
      }
      fail_msg("iteration %d: %s", iter, msg);
    }
    ran++;
    uneven += in.uneven;
    shared_ran += in.shared;
    assert_int_equal(pp_sim_get_summary(s, &sum), PP_OK);
    if (sum.iteration_ms < sum.lower_bound_ms * (1 - 1e-9))
      fail_msg("iteration %d: simulated %.9g ms < lower bound %.9g ms", iter,
               sum.iteration_ms, sum.lower_bound_ms);
    {
      double lb;
      pp_plan_params pp;
      pp_plan_get_params(in.p, &pp);
      assert_int_equal(pp_lower_bound(ctx, in.m, in.c, pp.global_batch, pp.tp,
                                      pp.micro_batch, pp.recompute, &lb),
                       PP_OK);
      tu_near(lb, sum.lower_bound_ms, "pp_lower_bound = the summary's");
    }
    check_events(s, sum.iteration_ms);
    check_no_overlap(s, in.ndev);
    /* memory: the model is the simulator's peak for one-stage devices,
    ** an upper bound otherwise */
    assert_int_equal(pp_evaluate(ctx, in.p, in.m, in.c, &cp, &e), PP_OK);
    for (d = 0; d < in.ndev; d++) {
      pp_sim_device sd;
      pp_device_memory dm;
      assert_int_equal(pp_sim_device_get(s, d, &sd), PP_OK);
      assert_int_equal(pp_eval_device(e, d, &dm), PP_OK);
      assert_int_equal(sd.used, dm.used);
      if (!sd.used)
        continue;
      if (!in.shared)
        tu_near(sd.peak_memory_bytes, dm.total_bytes, "peak = memory model");
      else
        assert_true(sd.peak_memory_bytes <= dm.total_bytes * (1 + 1e-12));
      tu_near(sd.busy_ms + sd.idle_ms, sum.iteration_ms, "busy + idle");
    }
    /* determinism: the same events, bit for bit */
    assert_int_equal(pp_simulate(ctx, in.p, in.m, in.c, &cp, &s2), PP_OK);
    assert_int_equal(pp_sim_nevent(s), pp_sim_nevent(s2));
    for (int64_t i = 0; i < pp_sim_nevent(s); i++) {
      pp_sim_event x, y;
      pp_sim_event_get(s, i, &x);
      pp_sim_event_get(s2, i, &y);
      assert_true(x.kind == y.kind && x.stage == y.stage &&
                  x.replica == y.replica && x.micro_batch == y.micro_batch &&
                  x.device == y.device && x.peer == y.peer &&
                  x.start_ms == y.start_ms && x.end_ms == y.end_ms &&
                  x.bytes == y.bytes);
    }
    pp_sim_destroy(s2);
    /* without the record of every event, rings whose channels are theirs
    ** alone (channels, no device in two stage replicas) run in closed
    ** form (sim.c, ring_closed_form): the same iteration, device by
    ** device, as stepping them */
    {
      pp_cost_params cq = cp;
      pp_sim_summary s3;
      int32_t st;
      cq.record = 0;
      assert_int_equal(pp_simulate(ctx, in.p, in.m, in.c, &cq, &s2), PP_OK);
      assert_int_equal(pp_sim_get_summary(s2, &s3), PP_OK);
      if (s3.iteration_ms != sum.iteration_ms || s3.nevents != sum.nevents)
        fail_msg("iteration %d: without the record %.17g ms, %lld tasks; "
                 "with it %.17g ms, %lld tasks",
                 iter, s3.iteration_ms, (long long)s3.nevents, sum.iteration_ms,
                 (long long)sum.nevents);
      for (d = 0; d < in.ndev; d++) {
        pp_sim_device a, b;
        assert_int_equal(pp_sim_device_get(s, d, &a), PP_OK);
        assert_int_equal(pp_sim_device_get(s2, d, &b), PP_OK);
        assert_true(a.used == b.used && a.busy_ms == b.busy_ms &&
                    a.bubble_ms == b.bubble_ms &&
                    a.peak_memory_bytes == b.peak_memory_bytes);
        tu_near(a.comm_ms, b.comm_ms, "communication, without the record");
      }
      for (st = 0; st < pp_plan_nstage(in.p); st++)
        closed += cp.network == PP_NET_CHANNELS && !in.shared &&
                  pp_plan_nreplica(in.p, st) > 1;
      pp_sim_destroy(s2);
    }
    pp_sim_destroy(s);
    pp_eval_destroy(e);
    inst_free(&in);
  }
  print_message("%d random plans simulated (%d with shared devices, %d with "
                "replica counts that differ; %d reductions in closed form "
                "without the record)\n",
                ran, shared_ran, uneven, closed);
  assert_int_equal(ran, 3000);
  assert_true(shared_ran >= 300 && uneven >= 300 && closed >= 300);
}

/* ---- stragglers and mixed types ------------------------------------------ */

/* A stage's replicas on a fast and a slow type: the stage runs at the
** slow one's pace, and a tp group at its slowest rank's. */
static void t_straggler(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  struct tu_op ops[2] = {{2, 4, 0, 0, 0, 10}, {1, 3, 0, 0, 0, 10}};
  int type[4] = {0, 1, 0, 0};
  struct tu_plan_spec x;
  pp_model *m;
  pp_cluster *c;
  pp_plan *p;
  pp_eval *e;
  pp_sim *s;
  pp_stage_cost st;
  m = tu_model_ops(ctx, 2, ops, NULL, 0);
  c = tu_cluster(ctx, 4, type, (double[]){2, 0.5}, 2, NULL, NULL, 10, 0, 16);
  memset(&x, 0, sizeof x);
  x.S = 1;
  x.gbs = 6;
  x.sched = PP_SCHED_1F1B;
  x.lo[1] = 2;
  x.R[0] = 2; /* device 0 (speed 2) and 1 (speed 0.5) */
  x.dev[0][0] = 0;
  x.dev[0][1] = 1;
  p = tu_plan(ctx, &x);
  e = tu_eval(ctx, p, m, c, PP_AR_AUTO);
  assert_int_equal(pp_eval_stage(e, 0, &st), PP_OK);
  tu_near(st.compute_ms, 10 / 0.5, "straggler compute");
  assert_int_equal(st.straggler, 1);
  s = tu_sim(ctx, p, m, c, PP_AR_AUTO, PP_NET_CHANNELS);
  tu_near(tu_sim_ms(s), 3 * 20.0, "three micro-batches at the slow pace");
  {
    pp_sim_device d0;
    assert_int_equal(pp_sim_device_get(s, 0, &d0), PP_OK);
    tu_near(d0.busy_ms, 3 * 10 / 2.0, "the fast replica is busy less");
  }
  pp_sim_destroy(s);
  pp_eval_destroy(e);
  pp_plan_destroy(p);
  /* tp 2 over a fast and a slow device */
  x.tp = 2;
  x.R[0] = 1;
  x.gbs = 3;
  p = tu_plan(ctx, &x);
  s = tu_sim(ctx, p, m, c, PP_AR_AUTO, PP_NET_CHANNELS);
  /* each rank does half the work (no tp profile): 5 ms at speed 0.5 */
  tu_near(tu_sim_ms(s), 3 * 10.0, "a tp group at its slowest rank");
  pp_sim_destroy(s);
  pp_plan_destroy(p);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
}

/* A plan that does not fit names the device, what it needs and what it
** has. */
static void t_does_not_fit(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  struct tu_op ops[2] = {{1, 2, 0, (int64_t)1 << 30, 1000, 1 << 20},
                         {1, 2, 0, 1000, 1000, 1000}};
  struct tu_plan_spec x;
  pp_model *m;
  pp_cluster *c;
  pp_plan *p;
  pp_eval *e;
  pp_eval_summary es;
  pp_device_memory dm;
  pp_sim *s;
  pp_sim_summary ss;
  char *buf = NULL;
  size_t len = 0;
  FILE *f;
  m = tu_model_ops(ctx, 2, ops, NULL, 0);
  /* 4 GiB devices; stage 0 holds 1 GiB of parameters x 8 (adam-mixed) */
  c = tu_cluster(ctx, 2, NULL, (double[]){1}, 1, NULL, NULL, 10, 0, 4);
  memset(&x, 0, sizeof x);
  x.S = 2;
  x.gbs = 4;
  x.sched = PP_SCHED_1F1B;
  x.opt = PP_OPT_ADAM_MIXED;
  x.lo[1] = 1;
  x.lo[2] = 2;
  tu_lay_out(&x, 1);
  p = tu_plan(ctx, &x);
  e = tu_eval(ctx, p, m, c, PP_AR_AUTO);
  assert_int_equal(pp_eval_get_summary(e, &es), PP_OK);
  assert_int_equal(es.fits, 0);
  assert_int_equal(es.worst_device, 0);
  assert_int_equal(pp_eval_device(e, 0, &dm), PP_OK);
  tu_near(dm.model_bytes, 8.0 * (1 << 30), "adam-mixed: 8 x parameters");
  assert_true(dm.total_bytes > (double)dm.capacity_bytes);
  assert_int_equal(dm.capacity_bytes, (int64_t)4 << 30);
  f = open_memstream(&buf, &len);
  assert_non_null(f);
  assert_int_equal(pp_eval_write(ctx, e, 0, f), PP_OK);
  fclose(f);
  if (!strstr(buf, "g0") || !strstr(buf, "does not fit"))
    fail_msg("the report must name the device and say it does not fit:\n%s",
             buf);
  free(buf);
  s = tu_sim(ctx, p, m, c, PP_AR_AUTO, PP_NET_CHANNELS);
  assert_int_equal(pp_sim_get_summary(s, &ss), PP_OK);
  assert_int_equal(ss.fits, 0);
  assert_int_equal(ss.worst_device, 0);
  pp_sim_destroy(s);
  pp_eval_destroy(e);
  pp_plan_destroy(p);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
}

/* A global batch whose tasks pass PPI_MAX_SIM_TASKS is refused before the
** simulator allocates anything that grows with it (issue 22: 10^9 ran out
** of memory after 8 s), as is 2^20 + 1 micro-batches of 2 stages (4
** tasks past the limit of 2^22); evaluate prices them. */
static void t_task_limit(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  struct tu_op ops[2] = {{1, 2, 0, 1000, 1000, 1000},
                         {1, 2, 0, 1000, 1000, 1000}};
  struct tu_plan_spec x;
  pp_model *m = tu_model_ops(ctx, 2, ops, NULL, 0);
  pp_cluster *c =
      tu_cluster(ctx, 2, NULL, (double[]){1}, 1, NULL, NULL, 10, 0, 4);
  pp_plan *p;
  pp_sim *s = NULL;
  pp_eval *e;
  memset(&x, 0, sizeof x);
  x.S = 2;
  x.sched = PP_SCHED_1F1B;
  x.opt = PP_OPT_ADAM_MIXED;
  x.lo[1] = 1;
  x.lo[2] = 2;
  tu_lay_out(&x, 1);
  x.gbs = 1000000000;
  p = tu_plan(ctx, &x);
  tu_expect_error(ctx, pp_simulate(ctx, p, m, c, NULL, &s), PP_ELIMIT,
                  "4000000000 compute tasks", "evaluate prices it", NULL);
  assert_null(s);
  pp_ctx_clear_error(ctx);
  e = tu_eval(ctx, p, m, c, PP_AR_AUTO);
  pp_eval_destroy(e);
  pp_plan_destroy(p);
  x.gbs = ((int64_t)1 << 20) + 1; /* 4 tasks past the limit */
  p = tu_plan(ctx, &x);
  tu_expect_error(ctx, pp_simulate(ctx, p, m, c, NULL, &s), PP_ELIMIT,
                  "4194308 compute tasks", NULL);
  pp_ctx_clear_error(ctx);
  pp_plan_destroy(p);
  x.gbs = 1000;
  p = tu_plan(ctx, &x);
  assert_int_equal(pp_simulate(ctx, p, m, c, NULL, &s), PP_OK);
  pp_sim_destroy(s);
  pp_plan_destroy(p);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      TU_CTX_TEST(t_balanced),     TU_CTX_TEST(t_inflight),
      TU_CTX_TEST(t_star_groups),  TU_CTX_TEST(t_star_period_too_short),
      TU_CTX_TEST(t_p2p),          TU_CTX_TEST(t_shared_link),
      TU_CTX_TEST(t_ring),         TU_CTX_TEST(t_hier),
      TU_CTX_TEST(t_random_plans), TU_CTX_TEST(t_straggler),
      TU_CTX_TEST(t_does_not_fit), TU_CTX_TEST(t_task_limit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
