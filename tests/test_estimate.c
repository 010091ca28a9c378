/* SPDX-License-Identifier: MIT */
/*
** The analytic estimate and the lower bound (src/cost/cost_eval.c,
** pp_evaluate and pp_lower_bound; docs/COST_MODEL.md, "The analytic
** iteration time" and "Lower bound"), on models and clusters small
** enough to work out by hand:
**
** - one stage: (gas - 1) x compute + compute + the optimizer step, with
**   and without recomputation; every field of the summary, the stage and
**   the device's memory (parameters x the optimizer's factor + in-flight
**   activations + the reserve);
** - two stages, one replica each: the device-bound and the channel-bound
**   steady state (transfers x (n - 1) / n, latency included), the fill
**   path with both transfer directions, the bottleneck, send and receive
**   times, boundary buffers in memory, and the simulator's peak equal to
**   the memory model (docs: exact for devices holding one stage);
** - a stage DAG: the fill is the longest path, not the sum of stages;
** - data parallelism: the ring allreduce 2(R-1)/R x bytes / bw +
**   2(R-1) x latency, per tensor-parallel rank, in the plan's replica
**   order (a slow link on the ring's wrap-around counts);
** - GPipe's and 1F1B's bubble: (iteration - gas(f + b)) / gas(f + b) =
**   (S - 1) / gas, analytic and simulated (docs: exact for balanced
**   stages without communication);
** - the lower bound by hand (work over capacity on mixed device types,
**   longest path of a DAG, tp, micro-batch size, recomputation, bad
**   arguments), and on random plans: equal to its closed form
**   gbs x work / sum of speeds (or the fastest path), the summaries'
**   bound, and never above the simulated time;
** - the accessors' argument checks.
*/
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static pp_eval_summary summary(const pp_eval *e)
{
  pp_eval_summary s;
  assert_int_equal(pp_eval_get_summary(e, &s), PP_OK);
  return s;
}

static pp_stage_cost stage(const pp_eval *e, int32_t s)
{
  pp_stage_cost x;
  assert_int_equal(pp_eval_stage(e, s, &x), PP_OK);
  return x;
}

static pp_device_memory device(const pp_eval *e, int32_t d)
{
  pp_device_memory x;
  assert_int_equal(pp_eval_device(e, d, &x), PP_OK);
  return x;
}

static double lower_bound(pp_ctx *ctx, const pp_model *m, const pp_cluster *c,
                          int64_t gbs, int32_t tp, int32_t mbs, int recompute)
{
  double lb = -1;
  if (pp_lower_bound(ctx, m, c, gbs, tp, mbs, recompute, &lb) != PP_OK)
    fail_msg("lower bound: %s", pp_ctx_errmsg(ctx));
  return lb;
}

/* A cluster of ndev devices of one type (speed 1, 16 GiB), every pair
** joined by gbps with a latency of lat_us. */
static pp_cluster *uniform(pp_ctx *ctx, int ndev, double gbps, double lat_us)
{
  return tu_cluster(ctx, ndev, NULL, (double[]){1}, 1, NULL, NULL, gbps, lat_us,
                    16);
}

/* ---- one stage ----------------------------------------------------------- */

static void t_one_stage(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  /* compute 1 + 2 + 2 + 3 = 8 ms, update 0.75 ms, 4000 parameter bytes,
  ** 300 saved bytes per micro-batch */
  struct tu_op ops[2] = {{1, 2, 0.25, 1000, 0, 100}, {2, 3, 0.5, 3000, 0, 200}};
  struct tu_built k = {tu_model_ops(ctx, 2, ops, NULL, 0),
                       uniform(ctx, 1, 10, 0), NULL, NULL, NULL};
  struct tu_plan_spec x;
  int rec;
  tu_spec(&x, 1, 2, 1, 4, PP_SCHED_1F1B);
  x.opt = PP_OPT_ADAM;
  for (rec = 0; rec < 2; rec++) {
    /* with recomputation every micro-batch runs its forward twice */
    double comp = rec ? 11 : 8, want = 3 * comp + comp + 0.75;
    pp_eval_summary s;
    pp_stage_cost st;
    pp_device_memory dm;
    pp_cost_params cp;
    x.recompute = rec;
    k.p = tu_plan(ctx, &x);
    pp_cost_params_init(&cp);
    cp.reserve_bytes = 1 << 20;
    assert_int_equal(pp_evaluate(ctx, k.p, k.m, k.c, &cp, &k.e), PP_OK);
    s = summary(k.e);
    tu_near(s.steady_ms, 3 * comp, "steady: (gas - 1) x compute");
    tu_near(s.fill_ms, comp, "fill: one micro-batch");
    tu_near(s.p2p_ms, 0, "no transfers");
    tu_near(s.allreduce_ms, 0, "one replica: no allreduce");
    tu_near(s.update_ms, 0.75, "update");
    tu_near(s.iteration_ms, want, "iteration");
    tu_near(s.throughput, 4 / (want / 1000), "samples per second");
    tu_near(s.lower_bound_ms, 4 * comp, "lower bound: N x work / 1 device");
    assert_int_equal(s.bottleneck, 0);
    assert_true(s.fits);
    assert_int_equal(s.worst_device, 0);
    st = stage(k.e, 0);
    tu_near(st.compute_ms, comp, "stage compute");
    tu_near(st.fwd_ms, 3, "stage forward");
    tu_near(st.bwd_ms, 5, "stage backward");
    tu_near(st.recompute_ms, rec ? 3 : 0, "stage recomputation");
    tu_near(st.update_ms, 0.75, "stage update");
    tu_near(st.param_bytes, 4000, "stage parameters");
    assert_int_equal(st.micro_batches, 4);
    assert_int_equal(st.in_flight, 1);
    assert_int_equal(st.group, 0);
    /* 4000 x 4 (Adam) + one micro-batch's 300 saved bytes (kept, or
    ** recomputed: the input is 0 bytes and the re-forward 300), plus
    ** the reserve */
    dm = device(k.e, 0);
    assert_true(dm.used);
    tu_near(dm.model_bytes, 16000, "model bytes");
    tu_near(dm.activation_bytes, 300, "activation bytes");
    tu_near(dm.buffer_bytes, 0, "buffers");
    tu_near(dm.reserve_bytes, 1 << 20, "reserve");
    tu_near(dm.total_bytes, 16300 + (1 << 20), "total");
    assert_int_equal(dm.capacity_bytes, (int64_t)16 << 30);
    /* one device runs everything in turn: the simulator agrees */
    k.s = tu_sim(ctx, k.p, k.m, k.c, PP_AR_AUTO, PP_NET_CHANNELS);
    tu_near(tu_sim_ms(k.s), want, "simulated");
    pp_sim_destroy(k.s);
    pp_eval_destroy(k.e);
    pp_plan_destroy(k.p);
    k.s = NULL, k.e = NULL, k.p = NULL;
  }
  tu_built_free(&k);
}

/* Both operators as stages of their own on one device (MadPipe's shared
** processor): the device's load is both stages' work and its optimizer
** steps add up, as if it held one stage; transfers to itself are free. */
static void t_shared_device(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  struct tu_op ops[2] = {{1, 2, 0.25, 1000, 1000000, 100},
                         {2, 3, 0.5, 3000, 0, 200}};
  struct tu_built k = {tu_model_ops(ctx, 2, ops, NULL, 0),
                       uniform(ctx, 1, 10, 0), NULL, NULL, NULL};
  struct tu_plan_spec x;
  pp_eval_summary s;
  tu_spec(&x, 2, 1, 1, 4, PP_SCHED_1F1B);
  x.opt = PP_OPT_ADAM;
  x.dev[1][0] = 0; /* both stages on device 0 */
  k.p = tu_plan(ctx, &x);
  k.e = tu_eval(ctx, k.p, k.m, k.c, PP_AR_AUTO);
  s = summary(k.e);
  tu_near(s.steady_ms, 3 * (3 + 5), "steady: both stages' work");
  tu_near(s.fill_ms, 3 + 5, "fill");
  tu_near(s.update_ms, 0.75, "update: both stages' steps");
  tu_near(s.iteration_ms, 32.75, "iteration");
  tu_near(device(k.e, 0).model_bytes, 4 * (1000 + 3000), "both stages' state");
  tu_built_free(&k);
}

/* ---- two stages ---------------------------------------------------------- */

static void t_two_stages(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  /* compute 3 and 6 ms; X bytes from stage 0 to stage 1 at 1 GB/s */
  static const struct {
    double bytes, lat_us;
    double t, steady, fill, iter;
    int bottleneck;
  } cases[] = {
      /* t = 2 ms: the second stage sets the pace, 3 x 6 */
      {2e6, 0, 2, 18, 3 + 6 + 2 * 2, 31, 1},
      /* t = 8 ms: the channel does, 3 transfers x 8 */
      {8e6, 0, 8, 24, 3 + 6 + 2 * 8, 49, -1},
      /* t = 1 + 8 ms with a latency of 1000 us */
      {8e6, 1000, 9, 27, 3 + 6 + 2 * 9, 54, -1},
  };
  size_t i;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct tu_op ops[2] = {{1, 2, 0, 1000, (int64_t)cases[i].bytes, 100},
                           {2, 4, 0, 2000, 0, 200}};
    struct tu_built k = {tu_model_ops(ctx, 2, ops, NULL, 0),
                         uniform(ctx, 2, 1, cases[i].lat_us), NULL, NULL, NULL};
    struct tu_plan_spec x;
    pp_eval_summary s;
    double X = cases[i].bytes;
    int d;
    tu_spec(&x, 2, 1, 1, 4, PP_SCHED_1F1B);
    x.opt = PP_OPT_ADAM;
    k.p = tu_plan(ctx, &x);
    k.e = tu_eval(ctx, k.p, k.m, k.c, PP_AR_AUTO);
    s = summary(k.e);
    tu_near(s.steady_ms, cases[i].steady, "steady");
    tu_near(s.fill_ms, cases[i].fill, "fill");
    tu_near(s.p2p_ms, 2 * cases[i].t, "p2p: one edge, both ways");
    tu_near(s.iteration_ms, cases[i].iter, "iteration");
    assert_int_equal(s.bottleneck, cases[i].bottleneck);
    tu_near(s.lower_bound_ms, 4 * 9 / 2.0, "lower bound: 4 x 9 ms / 2");
    tu_near(stage(k.e, 0).send_ms, cases[i].t, "stage 0 sends");
    tu_near(stage(k.e, 0).recv_ms, cases[i].t, "stage 0 receives gradients");
    tu_near(stage(k.e, 1).send_ms, 0, "the last stage sends nothing on");
    assert_int_equal(stage(k.e, 0).in_flight, 2);
    assert_int_equal(stage(k.e, 1).in_flight, 1);
    /* memory: parameters x 4, in-flight x saved, 2 x (in + out) */
    tu_near(device(k.e, 0).total_bytes, 4000 + 2 * 100 + 2 * X, "device 0");
    tu_near(device(k.e, 1).total_bytes, 8000 + 1 * 200 + 2 * X, "device 1");
    k.s = tu_sim(ctx, k.p, k.m, k.c, PP_AR_AUTO, PP_NET_CHANNELS);
    assert_true(tu_sim_ms(k.s) >= s.lower_bound_ms);
    for (d = 0; d < 2; d++) {
      pp_sim_device sd;
      assert_int_equal(pp_sim_device_get(k.s, d, &sd), PP_OK);
      tu_near(sd.peak_memory_bytes, device(k.e, d).total_bytes,
              "simulated peak = memory model");
    }
    tu_built_free(&k);
  }
}

/* ---- a stage DAG --------------------------------------------------------- */

/* a feeds b and c, which do not meet: compute 2, 6 and 3 ms. */
static const char *branches =
    "{\"name\": \"branches\", \"micro_batch\": 1, \"ops\": [\n"
    " {\"name\": \"a\", \"fwd_ms\": 1, \"bwd_ms\": 1, \"param_bytes\": 0,"
    " \"out_bytes\": 1000000, \"saved_bytes\": 0},\n"
    " {\"name\": \"b\", \"fwd_ms\": 3, \"bwd_ms\": 3, \"param_bytes\": 0,"
    " \"out_bytes\": 0, \"saved_bytes\": 0},\n"
    " {\"name\": \"c\", \"fwd_ms\": 1, \"bwd_ms\": 2, \"param_bytes\": 0,"
    " \"out_bytes\": 0, \"saved_bytes\": 0}],\n"
    " \"edges\": [{\"from\": \"a\", \"to\": \"b\"},"
    " {\"from\": \"a\", \"to\": \"c\"}]}";

static void t_dag_fill(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  struct tu_built k = {NULL, uniform(ctx, 3, 1, 0), NULL, NULL, NULL};
  struct tu_plan_spec x;
  pp_eval_summary s;
  assert_int_equal(tu_model_json(ctx, branches, &k.m), PP_OK);
  tu_spec(&x, 3, 1, 1, 4, PP_SCHED_1F1B);
  k.p = tu_plan(ctx, &x);
  k.e = tu_eval(ctx, k.p, k.m, k.c, PP_AR_AUTO);
  s = summary(k.e);
  /* 1 MB at 1 GB/s: 1 ms each way on both edges.  The longest path is
  ** a -> b: 2 + 2 x 1 + 6 = 10 (the stages in a row would give 15) */
  tu_near(s.fill_ms, 10, "fill: longest path");
  tu_near(s.p2p_ms, 4, "p2p: both edges, both ways");
  tu_near(s.steady_ms, 18, "steady: 3 x 6 on b's device");
  assert_int_equal(s.bottleneck, 1);
  tu_near(s.iteration_ms, 28, "iteration");
  tu_near(stage(k.e, 0).send_ms, 2, "a sends to b and to c");
  /* the lower bound: 4 x 11 ms over 3 devices, and for one micro-batch
  ** the longest operator path a -> b (8), not the sum (11) */
  tu_near(s.lower_bound_ms, 4 * 11 / 3.0, "lower bound, 4 micro-batches");
  tu_near(lower_bound(ctx, k.m, k.c, 1, 1, 1, 0), 8, "lower bound, one");
  tu_near(lower_bound(ctx, k.m, k.c, 1, 1, 1, 1), 12, "recomputed: a, b twice");
  tu_built_free(&k);
}

/* ---- data parallelism ---------------------------------------------------- */

/* One stage of 1 GB of parameters (f = b = 1 ms) on R replicas of tp
** ranks, each device on its own node (no hierarchical allreduce), links
** of 10 GB/s (bw: a matrix instead), 5 us of latency; replicas on the
** devices order[]. */
static void ring_case(pp_ctx *ctx, int R, int tp, const int *order,
                      const double *bw, double want_ar)
{
  struct tu_op op = {1, 1, 0, 1000000000, 0, 0};
  struct tu_built k = {
      tu_model_ops(ctx, 1, &op, NULL, 0),
      tu_cluster(ctx, R * tp, NULL, (double[]){1}, 1, NULL, bw, 10, 5, 64),
      NULL, NULL, NULL};
  struct tu_plan_spec x;
  pp_eval_summary s;
  int i, gas = 3;
  double comp = 2.0 / tp;
  tu_spec(&x, 1, 1, 1, (int64_t)gas * R, PP_SCHED_1F1B);
  x.tp = tp;
  tu_lay_out(&x, R);
  for (i = 0; order && i < R * tp; i++)
    x.dev[0][i] = order[i];
  k.p = tu_plan(ctx, &x);
  k.e = tu_eval(ctx, k.p, k.m, k.c, PP_AR_RING);
  s = summary(k.e);
  tu_near(stage(k.e, 0).allreduce_ms, want_ar, "stage allreduce");
  assert_int_equal(stage(k.e, 0).hierarchical, 0);
  tu_near(s.allreduce_ms, want_ar, "summary allreduce");
  tu_near(s.iteration_ms, gas * comp + want_ar, "iteration");
  tu_built_free(&k);
}

static void t_allreduce_ring(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  double bw[16];
  int i, j, R;
  /* 2(R-1)/R x 1e9 bytes / 10 GB/s + 2(R-1) x 5 us */
  for (R = 2; R <= 4; R++)
    ring_case(ctx, R, 1, NULL, NULL,
              2.0 * (R - 1) / R * 100 + 2.0 * (R - 1) * 0.005);
  /* tp 2: each rank's ring carries half the parameters */
  ring_case(ctx, 2, 2, NULL, NULL, 50 + 0.01);
  /* devices 0 and 2 joined by 1 GB/s: the ring 0 1 2 3 avoids the slow
  ** pair, the ring 0 2 1 3 uses it */
  for (i = 0; i < 4; i++)
    for (j = 0; j < 4; j++)
      bw[i * 4 + j] = i == j ? 0 : (i + j == 2 && i != j) ? 1 : 10;
  ring_case(ctx, 4, 1, (int[]){0, 1, 2, 3}, bw, 150 + 0.03);
  ring_case(ctx, 4, 1, (int[]){0, 2, 1, 3}, bw, 1500 + 0.03);
  /* the wrap-around link counts: 2 1 3 0 closes with 0 -> 2 */
  ring_case(ctx, 4, 1, (int[]){2, 1, 3, 0}, bw, 1500 + 0.03);
}

/* ---- the bubble ---------------------------------------------------------- */

static void t_bubble(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  static const int cases[][2] = {{1, 4}, {2, 1},  {2, 4}, {4, 3},
                                 {4, 8}, {6, 12}, {8, 16}};
  size_t i;
  int sc;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (sc = 0; sc < 2; sc++) {
      int S = cases[i][0], gas = cases[i][1], s;
      struct tu_op ops[TU_MAXOP];
      struct tu_plan_spec x;
      struct tu_built k;
      double work = gas * 3.0, want = (double)(S - 1) / gas;
      char what[64];
      for (s = 0; s < S; s++)
        ops[s] = (struct tu_op){1, 2, 0, 0, 0, 0};
      k.m = tu_model_ops(ctx, S, ops, NULL, 0);
      k.c = uniform(ctx, S, 10, 0);
      tu_spec(&x, S, 1, 1, gas, sc ? PP_SCHED_1F1B : PP_SCHED_GPIPE);
      k.p = tu_plan(ctx, &x);
      k.e = tu_eval(ctx, k.p, k.m, k.c, PP_AR_AUTO);
      k.s = tu_sim(ctx, k.p, k.m, k.c, PP_AR_AUTO, PP_NET_CHANNELS);
      snprintf(what, sizeof what, "%s S %d gas %d: bubble (S - 1) / gas",
               sc ? "1f1b" : "gpipe", S, gas);
      tu_near((tu_eval_ms(k.e) - work) / work, want, what);
      tu_near((tu_sim_ms(k.s) - work) / work, want, what);
      for (s = 0; s < S; s++) {
        pp_sim_device sd;
        assert_int_equal(pp_sim_device_get(k.s, s, &sd), PP_OK);
        tu_near(sd.bubble_ms / sd.busy_ms, want, what);
      }
      tu_built_free(&k);
    }
}

/* ---- the lower bound ----------------------------------------------------- */

static void t_lower_bound_by_hand(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  /* a chain of 2 + 3 and 2 + 3 ms on two devices of speed 1 and one of
  ** speed 2: capacity 4 reference devices */
  struct tu_op ops[2] = {{2, 3, 0, 0, 0, 0}, {2, 3, 0, 0, 0, 0}};
  pp_model *m = tu_model_ops(ctx, 2, ops, NULL, 0);
  pp_cluster *c = tu_cluster(ctx, 3, (int[]){0, 0, 1}, (double[]){1, 2}, 2,
                             NULL, NULL, 10, 0, 16);
  double lb;
  /* 6 samples x 10 ms / 4 */
  tu_near(lower_bound(ctx, m, c, 6, 1, 1, 0), 15, "work over capacity");
  /* tp and the micro-batch size change neither the work nor the
  ** capacity */
  tu_near(lower_bound(ctx, m, c, 6, 2, 1, 0), 15, "tp 2");
  tu_near(lower_bound(ctx, m, c, 6, 1, 2, 0), 15, "micro-batch 2");
  /* recomputation: 2 x (2 + 3 + 2) ms per sample */
  tu_near(lower_bound(ctx, m, c, 6, 1, 1, 1), 21, "recomputation");
  /* one sample: the path, every operator on the fast type, 10 / 2 */
  tu_near(lower_bound(ctx, m, c, 1, 1, 1, 0), 5, "one micro-batch's path");
  tu_near(lower_bound(ctx, m, c, 1, 2, 1, 0), 2.5, "its path at tp 2");
  tu_near(lower_bound(ctx, m, c, 2, 1, 2, 0), 10, "a micro-batch of 2");
  /* bad arguments */
  tu_expect_error(ctx, pp_lower_bound(ctx, m, c, 5, 1, 2, 0, &lb), PP_EINVAL,
                  "micro-batch", NULL);
  tu_expect_error(ctx, pp_lower_bound(ctx, m, c, 4, 0, 1, 0, &lb), PP_EINVAL,
                  "tp 0", NULL);
  tu_expect_error(ctx, pp_lower_bound(ctx, m, c, 0, 1, 1, 0, &lb), PP_EINVAL,
                  "global batch 0", NULL);
  tu_expect_error(ctx, pp_lower_bound(ctx, NULL, c, 4, 1, 1, 0, &lb), PP_EINVAL,
                  "NULL", NULL);
  assert_int_equal(pp_lower_bound(NULL, m, c, 4, 1, 1, 0, &lb), PP_EINVAL);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
}

/* Random plans on two device types: the bound is its closed form (every
** operator's time is its reference time / the type's speed, so the LP
** gives gbs x work / the sum of the devices' speeds), the summaries
** carry it, and no simulated iteration is faster. */
static void t_lower_bound_random(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  uint64_t rng = 777001;
  int iter, path_bound = 0;
  static const pp_schedule scheds[] = {PP_SCHED_GPIPE, PP_SCHED_1F1B,
                                       PP_SCHED_1F1B_STAR};
  for (iter = 0; iter < 400; iter++) {
    int nop = 1 + (int)tu_rand(&rng, 8), nextra = 0, i, j, s, ndev, type[8];
    int extra[8][2], tp = 1 + (int)tu_rand(&rng, 2),
                     mbs = 1 + (int)tu_rand(&rng, 2);
    int rec = (int)tu_rand(&rng, 2);
    double speed[2] = {1, 0.5 + tu_rand(&rng, 7) / 2.0}, cap = 0, fast = 0;
    double work = 0, path[8], longest = 0, want, lb;
    struct tu_op ops[8];
    struct tu_plan_spec x;
    struct tu_built k;
    int64_t l = 1;
    for (i = 0; i < nop; i++) {
      ops[i] = (struct tu_op){0.5 + tu_rand(&rng, 16) / 4.0,
                              0.5 + tu_rand(&rng, 32) / 4.0,
                              tu_rand(&rng, 3) / 4.0,
                              (int64_t)tu_rand(&rng, 50) * 1000000,
                              (int64_t)tu_rand(&rng, 20) * 1000000,
                              (int64_t)tu_rand(&rng, 20) * 1000000};
      work += ops[i].f * (rec ? 2 : 1) + ops[i].b;
    }
    for (i = 0; i + 2 < nop; i++)
      if (tu_rand(&rng, 3) == 0) {
        extra[nextra][0] = i;
        extra[nextra++][1] =
            i + 2 + (int)tu_rand(&rng, (uint32_t)(nop - i - 2));
      }
    k.m = tu_model_ops(ctx, nop, ops, (const int(*)[2])extra, nextra);
    ndev = 2 + (int)tu_rand(&rng, 7);
    for (i = 0; i < ndev; i++) {
      type[i] = (int)tu_rand(&rng, 2);
      cap += speed[type[i]];
      if (speed[type[i]] > fast)
        fast = speed[type[i]];
    }
    k.c = tu_cluster(ctx, ndev, type, speed, 2, NULL, NULL,
                     1 + tu_rand(&rng, 20), tu_rand(&rng, 20), 1000);
    if (ndev < 2 * tp)
      tp = 1;
    /* the longest operator path, on the fastest type, per rank */
    for (i = 0; i < nop; i++) {
      double w = (ops[i].f * (rec ? 2 : 1) + ops[i].b) * mbs / tp / fast;
      path[i] = (i ? path[i - 1] : 0) + w;
      for (j = 0; j < nextra; j++)
        if (extra[j][1] == i && path[extra[j][0]] + w > path[i])
          path[i] = path[extra[j][0]] + w;
      if (path[i] > longest)
        longest = path[i];
    }
    /* a plan: contiguous stages, 1 or 2 replicas on distinct devices */
    memset(&x, 0, sizeof x);
    x.S = 1 + (int)tu_rand(&rng, (uint32_t)(nop < 4 ? nop : 4));
    for (s = 1; s < x.S; s++)
      x.lo[s] = x.lo[s - 1] + 1 +
                (int)tu_rand(&rng, (uint32_t)(nop - x.lo[s - 1] - (x.S - s)));
    x.lo[x.S] = nop;
    x.tp = tp;
    x.mbs = mbs;
    x.recompute = rec;
    x.sched = scheds[tu_rand(&rng, 3)];
    for (s = 0; s < x.S; s++) {
      int used[8] = {0}, d;
      x.R[s] = ndev >= 2 * tp ? 1 + (int)tu_rand(&rng, 2) : 1;
      for (i = 0; i < x.R[s] * tp; i++) {
        do
          d = (int)tu_rand(&rng, (uint32_t)ndev);
        while (used[d]);
        used[d] = 1;
        x.dev[s][i] = d;
      }
      if (x.R[s] == 2)
        l = 2;
    }
    x.gbs = l * mbs * (1 + (int64_t)tu_rand(&rng, 6));
    want = (double)x.gbs * work / cap;
    if (longest > want) {
      want = longest;
      path_bound++;
    }
    lb = lower_bound(ctx, k.m, k.c, x.gbs, tp, mbs, rec);
    tu_near(lb, want, "lower bound = its closed form");
    k.p = tu_plan(ctx, &x);
    k.e = tu_eval(ctx, k.p, k.m, k.c, PP_AR_AUTO);
    k.s = tu_sim(ctx, k.p, k.m, k.c, PP_AR_AUTO,
                 iter % 2 ? PP_NET_LINKS : PP_NET_CHANNELS);
    tu_near(summary(k.e).lower_bound_ms, lb, "the estimate's bound");
    {
      pp_sim_summary ss;
      assert_int_equal(pp_sim_get_summary(k.s, &ss), PP_OK);
      tu_near(ss.lower_bound_ms, lb, "the simulation's bound");
      if (ss.iteration_ms < lb * (1 - 1e-12))
        fail_msg("iteration %d: simulated %.12g ms below the bound %.12g ms",
                 iter, ss.iteration_ms, lb);
    }
    tu_built_free(&k);
  }
  print_message("%d of 400 bounds set by the path\n", path_bound);
  /* both terms of the bound were exercised */
  assert_true(path_bound >= 20 && path_bound <= 380);
}

/* ---- the accessors ------------------------------------------------------- */

static void t_accessors(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  struct tu_op ops[2] = {{1, 2, 0, 0, 0, 0}, {1, 2, 0, 0, 0, 0}};
  struct tu_built k = {tu_model_ops(ctx, 2, ops, NULL, 0),
                       uniform(ctx, 3, 10, 0), NULL, NULL, NULL};
  struct tu_plan_spec x;
  pp_eval *e = NULL;
  pp_eval_summary s;
  pp_stage_cost st;
  pp_device_memory dm;
  pp_sched_op buf[2];
  int64_t n = -1;
  tu_spec(&x, 2, 1, 1, 5, PP_SCHED_1F1B);
  k.p = tu_plan(ctx, &x);
  tu_expect_error(ctx, pp_evaluate(ctx, NULL, k.m, k.c, NULL, &e), PP_EINVAL,
                  "NULL", NULL);
  tu_expect_error(ctx, pp_evaluate(ctx, k.p, k.m, k.c, NULL, NULL), PP_EINVAL,
                  "NULL", NULL);
  assert_int_equal(pp_evaluate(NULL, k.p, k.m, k.c, NULL, &e), PP_EINVAL);
  assert_null(e);
  k.e = e = tu_eval(ctx, k.p, k.m, k.c, PP_AR_AUTO);
  assert_int_equal(pp_eval_get_summary(NULL, &s), PP_EINVAL);
  assert_int_equal(pp_eval_get_summary(e, NULL), PP_EINVAL);
  assert_int_equal(pp_eval_stage(e, -1, &st), PP_EINVAL);
  assert_int_equal(pp_eval_stage(e, 2, &st), PP_EINVAL);
  assert_int_equal(pp_eval_stage(e, 0, NULL), PP_EINVAL);
  assert_int_equal(pp_eval_device(e, -1, &dm), PP_EINVAL);
  assert_int_equal(pp_eval_device(e, 3, &dm), PP_EINVAL);
  /* device 2 is not in the plan */
  assert_int_equal(pp_eval_device(e, 2, &dm), PP_OK);
  assert_false(dm.used);
  tu_near(dm.total_bytes, 0, "unused device");
  /* the order's length without a buffer, then a short buffer */
  assert_int_equal(pp_eval_stage_order(e, 1, NULL, 0, &n), PP_OK);
  assert_int_equal(n, 10);
  assert_int_equal(pp_eval_stage_order(e, 1, NULL, 2, &n), PP_EINVAL);
  assert_int_equal(pp_eval_stage_order(e, 2, buf, 2, &n), PP_EINVAL);
  assert_int_equal(pp_eval_stage_order(e, 0, buf, 2, NULL), PP_EINVAL);
  assert_int_equal(pp_eval_stage_order(e, 1, buf, 2, &n), PP_OK);
  assert_int_equal(n, 10);
  /* the last stage of 1F1B: F0 B0 */
  assert_int_equal(buf[0].kind, PP_TASK_FWD);
  assert_int_equal(buf[1].kind, PP_TASK_BWD);
  assert_int_equal(buf[1].micro_batch, 0);
  pp_eval_destroy(NULL);
  tu_built_free(&k);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      TU_CTX_TEST(t_one_stage),           TU_CTX_TEST(t_shared_device),
      TU_CTX_TEST(t_two_stages),          TU_CTX_TEST(t_dag_fill),
      TU_CTX_TEST(t_allreduce_ring),      TU_CTX_TEST(t_bubble),
      TU_CTX_TEST(t_lower_bound_by_hand), TU_CTX_TEST(t_lower_bound_random),
      TU_CTX_TEST(t_accessors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
