/* SPDX-License-Identifier: MIT */
/*
** The engine-aware cost model (src/cost/engine.c, docs/COST_MODEL.md
** "Engines", "Precision", "Fixed runtime memory", "Tensor parallelism")
** against independent recomputations:
**   - t_memory_random: on random chains and plans (engine, precision,
**     ZeRO stage, tp, replicas, micro-batch, schedule drawn at random),
**     every device's total equals the sum recomputed here from the
**     documented bytes per parameter, the schedule's in-flight counts,
**     the run's precision, the kept last-stage output, the transients,
**     the slack and the runtime;
**   - t_sim_memory: with one stage per device, the simulator's peak is
**     the estimate's total under every engine;
**   - t_precision: fp32 on an fp16 model doubles the transfers;
**   - t_overlap: an engine that overlaps the gradient reduction exposes
**     max(T - b, T x bucket / G) of it, DeepSpeed all of it;
**   - t_tp_comm: a transformer block timed at another tp pays two
**     allreduces each way, a profiled degree none;
**   - t_shared_nic: four tp rings through one NIC share it, and the
**     estimate equals the simulator (channels and links) on AMP's
**     one-NIC nodes, ring and hierarchical;
**   - t_zero_comm: ZeRO-2's and ZeRO-3's prefetched collectives;
**   - t_step_time: the memory-bound optimizer step where the profile has
**     none, with DeepSpeed's unfused fp16 checks and its reduction's
**     memory passes;
**   - t_tied_sync: the tied weight's gradient reduction between the
**     first and the last stage through shared NICs, estimate and
**     simulator;
**   - t_pipe_p2p: DeepSpeed's partitioned transfers, the attention mask
**     they carry, the all-gathers at both ends, the NIC they share;
**   - t_loss: the model's loss priced with its last operator, kept by
**     the model JSON, bad values refused.
*/
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GIB 1073741824.0

/* docs/COST_MODEL.md, "Engines": bytes per parameter between steps. */
static double state_bpp(pp_engine e, pp_precision p, int zero, double d)
{
  int mixed = p != PP_PREC_FP32;
  switch (e) {
  case PP_ENGINE_DEEPSPEED:
    if (zero == 0)
      return p == PP_PREC_BF16 ? 8 + 12 / d : 16;
    if (zero == 1) /* bf16 with ZeRO-1 is BF16_Optimizer too */
      return p == PP_PREC_BF16 ? 8 + 12 / d : mixed ? 4 + 12 / d : 8 + 8 / d;
    if (zero == 2)
      return mixed ? 2 + 14 / d : 4 + 12 / d;
    return 16 / d;
  case PP_ENGINE_MEGATRON:
    if (p == PP_PREC_FP16)
      return zero ? 4 + 16 / d : 20;
    if (p == PP_PREC_BF16)
      return zero ? 6 + 12 / d : 18;
    return zero ? 8 + 8 / d : 16;
  case PP_ENGINE_TORCH:
    if (zero == 0)
      return 20;
    return zero == 2 ? 16 / d + (mixed ? 2 : 4) : 16 / d;
  default: return 0;
  }
}

/* The step's and the reduction's extra bytes per parameter (n < 5e8). */
static double transient_bpp(pp_engine e, pp_precision p, int zero, double d)
{
  if (e != PP_ENGINE_DEEPSPEED)
    return 0;
  if (zero == 0) {
    double step = p == PP_PREC_FP16 ? 4 : 0;
    double red = p == PP_PREC_FP32 ? 4 : 6;
    return step > red ? step : red;
  }
  {
    double step = 4 / d, bucket = p == PP_PREC_FP32 ? 4 : 2;
    return step > bucket ? step : bucket;
  }
}

static int allowed_zero(pp_engine e, int S, uint64_t *rng)
{
  switch (e) {
  case PP_ENGINE_DEEPSPEED: return (int)tu_rand(rng, S > 1 ? 2 : 4);
  case PP_ENGINE_MEGATRON: return (int)tu_rand(rng, 2);
  default: {
    static const int z[] = {0, 2, 3};
    return z[tu_rand(rng, 3)];
  }
  }
}

struct rcase {
  pp_model *m;
  pp_cluster *c;
  pp_plan *p;
  int n, S, tp, R, mbs;
  int lo[TU_MAXOP + 1];
  pp_engine e;
  pp_precision prec;
  int zero;
};

static pp_plan *build_plan(pp_ctx *ctx, struct rcase *x, int64_t gbs,
                           pp_schedule sc)
{
  pp_plan_params pa;
  pp_plan_builder *b;
  pp_plan *p = NULL;
  int s, r, t, v;
  pp_plan_params_init(&pa);
  pa.global_batch = gbs;
  pa.micro_batch = x->mbs;
  pa.tp = x->tp;
  pa.schedule = sc;
  pa.engine = x->e;
  pa.precision = x->prec;
  pa.zero = x->zero;
  assert_int_equal(pp_plan_builder_create(ctx, &pa, "t.plan", &b), PP_OK);
  for (s = 0; s < x->S; s++) {
    int32_t ops[TU_MAXOP], n = 0, id;
    for (v = x->lo[s]; v < x->lo[s + 1]; v++)
      ops[n++] = v;
    assert_int_equal(pp_plan_builder_add_stage(b, ops, n, &id), PP_OK);
    for (r = 0; r < x->R; r++) {
      int32_t devs[TU_MAXDEV];
      for (t = 0; t < x->tp; t++)
        devs[t] = (s * x->R + r) * x->tp + t;
      assert_int_equal(pp_plan_builder_add_replica(b, s, devs), PP_OK);
    }
  }
  if (pp_plan_builder_finish(b, &p) != PP_OK)
    fail_msg("plan: %s", pp_ctx_errmsg(ctx));
  return p;
}

static void random_case(pp_ctx *ctx, uint64_t *rng, struct rcase *x)
{
  struct tu_op ops[TU_MAXOP];
  static const pp_engine eng[] = {PP_ENGINE_DEEPSPEED, PP_ENGINE_MEGATRON,
                                  PP_ENGINE_TORCH};
  static const pp_precision prec[] = {PP_PREC_FP32, PP_PREC_FP16, PP_PREC_BF16,
                                      PP_PREC_MODEL};
  int v, s;
  memset(x, 0, sizeof *x);
  x->n = 2 + (int)tu_rand(rng, 5);
  x->S = 1 + (int)tu_rand(rng, (uint32_t)(x->n < 3 ? x->n : 3));
  x->tp = 1 + (int)tu_rand(rng, 2);
  x->R = 1 + (int)tu_rand(rng, 2);
  x->mbs = 1 + (int)tu_rand(rng, 3);
  for (v = 0; v < x->n; v++)
    ops[v] = (struct tu_op){1 + tu_rand(rng, 5),
                            2 + tu_rand(rng, 5),
                            0,
                            2 * (int64_t)(1 + tu_rand(rng, 1000)) * 1000,
                            2 * (int64_t)(1 + tu_rand(rng, 100)) * 1000,
                            2 * (int64_t)(tu_rand(rng, 500)) * 1000};
  x->m = tu_model_ops(ctx, x->n, ops, NULL, 0);
  for (s = 0; s <= x->S; s++)
    x->lo[s] = s * x->n / x->S;
  x->e = eng[tu_rand(rng, 3)];
  x->prec = prec[tu_rand(rng, 4)];
  x->zero = allowed_zero(x->e, x->S, rng);
  x->c = tu_cluster(ctx, x->S * x->R * x->tp, NULL, (double[]){1}, 1, NULL,
                    NULL, 10, 0, 64);
  x->p = build_plan(ctx, x, (int64_t)x->mbs * x->R * (1 + tu_rand(rng, 4)),
                    tu_rand(rng, 2) ? PP_SCHED_1F1B : PP_SCHED_GPIPE);
}

static void free_case(struct rcase *x)
{
  pp_plan_destroy(x->p);
  pp_cluster_destroy(x->c);
  pp_model_destroy(x->m);
}

static void t_memory_random(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  uint64_t rng = 1717;
  int iter;
  for (iter = 0; iter < 300; iter++) {
    struct rcase x;
    pp_eval *e = NULL;
    pp_precision pr;
    double ratio;
    int s, r, t;
    random_case(ctx, &rng, &x);
    pr = x.prec == PP_PREC_MODEL ? PP_PREC_FP16 : x.prec; /* model: fp16 */
    ratio = pp_precision_bytes(pr) / 2.0;
    if (pp_evaluate(ctx, x.p, x.m, x.c, NULL, &e) != PP_OK)
      fail_msg("case %d: %s", iter, pp_ctx_errmsg(ctx));
    for (s = 0; s < x.S; s++) {
      pp_stage_cost sc;
      double n = 0, saved = 0, xin = 0, xout = 0, keep = 0, st, tr, live;
      double peak, want,
          split = x.e == PP_ENGINE_TORCH ? x.tp : 1; /* whole tensors */
      int v;
      assert_int_equal(pp_eval_stage(e, s, &sc), PP_OK);
      for (v = x.lo[s]; v < x.lo[s + 1]; v++) {
        pp_op_sizes z;
        assert_int_equal(pp_model_op_sizes(x.m, v, x.tp, x.mbs, &z), PP_OK);
        n += z.param_bytes / 2; /* fp16 model: 2 bytes per parameter */
        saved += z.saved_bytes * ratio;
        if (v == x.lo[s + 1] - 1 && s + 1 < x.S) {
          pp_op_sizes w; /* a boundary tensor: 1/tp of it per rank, */
          assert_int_equal(pp_model_op_sizes(x.m, v, 1, x.mbs, &w), PP_OK);
          xout = w.out_bytes * ratio / split; /* DeepSpeed, Megatron */
        }
        if (v == x.n - 1 && x.e == PP_ENGINE_DEEPSPEED)
          keep = z.out_bytes * ratio;
      }
      if (s > 0) {
        pp_op_sizes z;
        assert_int_equal(pp_model_op_sizes(x.m, x.lo[s] - 1, 1, x.mbs, &z),
                         PP_OK);
        xin = z.out_bytes * ratio / split;
      }
      st = n * state_bpp(x.e, pr, x.zero, x.R);
      tr = n * transient_bpp(x.e, pr, x.zero, x.R);
      live = sc.in_flight * saved;
      peak = st + live + 2 * (xin + xout) + keep + (tr > live ? tr - live : 0);
      want = peak * 1.11 + 1.0 * GIB; /* not a Hopper type */
      for (r = 0; r < x.R; r++)
        for (t = 0; t < x.tp; t++) {
          pp_device_memory dm;
          int d = (s * x.R + r) * x.tp + t;
          assert_int_equal(pp_eval_device(e, d, &dm), PP_OK);
          if (fabs(dm.total_bytes - want) > 1e-9 * want)
            fail_msg("case %d (%s %s zero %d, S %d R %d tp %d) device %d: "
                     "total %.17g, recomputed %.17g",
                     iter, pp_engine_name(x.e), pp_precision_name(x.prec),
                     x.zero, x.S, x.R, x.tp, d, dm.total_bytes, want);
          tu_near(dm.runtime_bytes, 1.0 * GIB, "runtime");
          tu_near(dm.slack_bytes, 0.11 * peak, "slack");
        }
    }
    pp_eval_destroy(e);
    free_case(&x);
  }
}

static void t_sim_memory(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  uint64_t rng = 99;
  int iter;
  for (iter = 0; iter < 60; iter++) {
    struct rcase x;
    pp_eval *e = NULL;
    pp_sim *sm = NULL;
    int d, nd;
    random_case(ctx, &rng, &x);
    assert_int_equal(pp_evaluate(ctx, x.p, x.m, x.c, NULL, &e), PP_OK);
    assert_int_equal(pp_simulate(ctx, x.p, x.m, x.c, NULL, &sm), PP_OK);
    nd = pp_cluster_ndev(x.c);
    for (d = 0; d < nd; d++) {
      pp_device_memory dm;
      pp_sim_device sd;
      assert_int_equal(pp_eval_device(e, d, &dm), PP_OK);
      assert_int_equal(pp_sim_device_get(sm, d, &sd), PP_OK);
      if (fabs(dm.total_bytes - sd.peak_memory_bytes) > 1e-9 * dm.total_bytes)
        fail_msg("case %d device %d: estimate %.17g, simulator %.17g", iter, d,
                 dm.total_bytes, sd.peak_memory_bytes);
    }
    pp_sim_destroy(sm);
    pp_eval_destroy(e);
    free_case(&x);
  }
}

/* Two stages of one op each on two devices at 10 GB/s: fp32 on the fp16
** model sends twice the bytes. */
static void t_precision(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  struct tu_op ops[2] = {{1, 2, 0, 2000, 20000000, 0},
                         {1, 2, 0, 2000, 1000, 0}};
  struct rcase x;
  double send[2];
  int i;
  for (i = 0; i < 2; i++) {
    pp_eval *e = NULL;
    pp_stage_cost sc;
    memset(&x, 0, sizeof x);
    x.m = tu_model_ops(ctx, 2, ops, NULL, 0);
    x.c = tu_cluster(ctx, 2, NULL, (double[]){1}, 1, NULL, NULL, 10, 0, 64);
    x.n = 2;
    x.S = 2;
    x.tp = 1;
    x.R = 1;
    x.mbs = 1;
    x.lo[1] = 1;
    x.lo[2] = 2;
    x.e = PP_ENGINE_MEGATRON;
    x.prec = i ? PP_PREC_FP32 : PP_PREC_FP16;
    x.p = build_plan(ctx, &x, 4, PP_SCHED_1F1B);
    assert_int_equal(pp_evaluate(ctx, x.p, x.m, x.c, NULL, &e), PP_OK);
    assert_int_equal(pp_eval_stage(e, 0, &sc), PP_OK);
    send[i] = sc.send_ms;
    pp_eval_destroy(e);
    free_case(&x);
  }
  tu_near(send[0], 20e6 / 10e6, "fp16 send");
  tu_near(send[1], 2 * send[0], "fp32 send");
}

/* One op, two replicas on two devices at 5 GB/s: the ring moves
** 2 (R-1)/R G; torch exposes max(T - b, T bucket / G). */
static void t_overlap(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  int64_t P[2] = {200000000, 4000000000}; /* 1e8 and 2e9 fp16 params */
  int i, k;
  for (i = 0; i < 2; i++)
    for (k = 0; k < 2; k++) {
      struct tu_op ops[1] = {{10, 20, 0, P[i], 1000, 1000}};
      struct rcase x;
      pp_eval *e = NULL;
      pp_eval_summary sum;
      double G, T, want;
      memset(&x, 0, sizeof x);
      x.m = tu_model_ops(ctx, 1, ops, NULL, 0);
      x.c = tu_cluster(ctx, 2, NULL, (double[]){1}, 1, NULL, NULL, 5, 0, 640);
      x.n = x.S = x.tp = x.mbs = 1;
      x.R = 2;
      x.lo[1] = 1;
      x.e = k ? PP_ENGINE_TORCH : PP_ENGINE_DEEPSPEED;
      x.prec = PP_PREC_BF16;
      x.p = build_plan(ctx, &x, 4, PP_SCHED_1F1B);
      assert_int_equal(pp_evaluate(ctx, x.p, x.m, x.c, NULL, &e), PP_OK);
      assert_int_equal(pp_eval_get_summary(e, &sum), PP_OK);
      /* DeepSpeed reduces fp32 (4 bytes), torch bf16 (2) */
      G = (double)P[i] / 2 * (k ? 2 : 4);
      T = 2.0 * 1 / 2 * G / 5e6;
      if (!k)
        want = T;
      else {
        double last = 25.0 * 1048576 / G, x1 = (T - 20) / T;
        want = T * (x1 > last ? x1 : last);
      }
      tu_near(sum.allreduce_ms, want, "exposed reduction");
      pp_eval_destroy(e);
      free_case(&x);
    }
}

/* A transformer block profiled at tp 1 only, at tp 2 on a 4 GB/s pair:
** two allreduces of its output forward and two backward. */
static void t_tp_comm(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model_builder *b;
  pp_model *m = NULL;
  pp_op_desc d;
  pp_cluster *c;
  struct rcase x;
  pp_eval *e = NULL;
  pp_stage_cost sc;
  double ar = 2.0 * 1 / 2 * 8e6 / 4e6; /* one ring allreduce, ms */
  assert_int_equal(pp_model_builder_create(ctx, "blk", NULL, &b), PP_OK);
  pp_op_desc_init(&d);
  d.name = "blk";
  d.kind = "transformer_layer";
  d.fwd_ms = 3;
  d.bwd_ms = 6;
  d.param_bytes = 1000000;
  d.out_bytes = 8000000;
  d.saved_bytes = 1000;
  assert_int_equal(pp_model_builder_add_op(b, &d, NULL), PP_OK);
  assert_int_equal(pp_model_builder_finish(b, &m), PP_OK);
  c = tu_cluster(ctx, 2, NULL, (double[]){1}, 1, NULL, NULL, 4, 0, 64);
  memset(&x, 0, sizeof x);
  x.m = m;
  x.c = c;
  x.n = x.S = x.R = x.mbs = 1;
  x.tp = 2;
  x.lo[1] = 1;
  x.e = PP_ENGINE_MEGATRON;
  x.prec = PP_PREC_MODEL;
  x.p = build_plan(ctx, &x, 2, PP_SCHED_1F1B);
  assert_int_equal(pp_evaluate(ctx, x.p, x.m, x.c, NULL, &e), PP_OK);
  assert_int_equal(pp_eval_stage(e, 0, &sc), PP_OK);
  tu_near(sc.fwd_ms, 3.0 / 2 + 2 * ar, "forward with two allreduces");
  tu_near(sc.bwd_ms, 6.0 / 2 + 2 * ar, "backward with two allreduces");
  pp_eval_destroy(e);
  free_case(&x);
}

/* ZeRO-3 under torch (FSDP2) on one op of n parameters, two replicas at
** 5 GB/s: the forward waits for the larger of itself and the gather of
** the bf16 weights, then the first module's gather (the op is the only
** module: the whole stage again); the backward likewise with gather +
** reduce-scatter, then the last reduce-scatter; no reduction after the
** drain.  ZeRO-2: only the reduce-scatter in the backward, and half an
** allreduce of the weights after the step. */
static void t_zero_comm(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  int z;
  for (z = 2; z <= 3; z++) {
    int64_t P = 2000000000; /* 1e9 fp16 parameters */
    struct tu_op ops[1] = {{10, 20, 0, P, 1000, 1000}};
    struct rcase x;
    pp_eval *e = NULL;
    pp_eval_summary sum;
    pp_stage_cost sc;
    double n = 1e9, one = (2 - 1.0) / 2 * n * 2 / 5e6; /* a ring, bf16 */
    memset(&x, 0, sizeof x);
    x.m = tu_model_ops(ctx, 1, ops, NULL, 0);
    x.c = tu_cluster(ctx, 2, NULL, (double[]){1}, 1, NULL, NULL, 5, 0, 640);
    x.n = x.S = x.tp = x.mbs = 1;
    x.R = 2;
    x.lo[1] = 1;
    x.e = PP_ENGINE_TORCH;
    x.prec = PP_PREC_BF16;
    x.zero = z;
    x.p = build_plan(ctx, &x, 4, PP_SCHED_1F1B);
    assert_int_equal(pp_evaluate(ctx, x.p, x.m, x.c, NULL, &e), PP_OK);
    assert_int_equal(pp_eval_get_summary(e, &sum), PP_OK);
    assert_int_equal(pp_eval_stage(e, 0, &sc), PP_OK);
    if (z == 3) {
      tu_near(sc.fwd_ms, (10 > one ? 10 : one) + one, "ZeRO-3 forward");
      tu_near(sc.bwd_ms, (20 > 2 * one ? 20 : 2 * one) + one,
              "ZeRO-3 backward");
      tu_near(sum.allreduce_ms, 0, "ZeRO-3 after the drain");
    } else {
      tu_near(sc.fwd_ms, 10, "ZeRO-2 forward");
      tu_near(sc.bwd_ms, (20 > one ? 20 : one) + one, "ZeRO-2 backward");
      /* half an allreduce of the weights (one ring pass, T), which
      ** torch overlaps with the backward b but for its last 25 MiB
      ** bucket: max(T - b, T bucket / G), G the reduced bytes */
      {
        double T = one, G = n, b = sc.bwd_ms;
        double last = 25.0 * 1048576 / G, x1 = (T - b) / T;
        tu_near(sum.allreduce_ms, T * (x1 > last ? x1 : last),
                "ZeRO-2 after the drain");
      }
    }
    pp_eval_destroy(e);
    free_case(&x);
  }
}

/* The optimizer step of a model without update times, under an engine,
** on a catalog GPU: 40 bytes per parameter in mixed precision at the
** T4's 320 GB/s. */
static void t_step_time(void **state)
{
  /* Bytes per parameter, recomputed from the engines' code
  ** (docs/COST_MODEL.md, "Optimizer step"): Adam 28; mixed precision's
  ** fp32 gradient and master copy 12; DeepSpeed's FP16_UnfusedOptimizer
  ** checks overflow, takes the norm and unscales, 28 more
  ** (unfused_optimizer.py:202-255 @ 38327e0); with data parallelism its
  ** reduction flattens, converts, scales and copies back, 28 in fp16 and
  ** 24 in fp32 (engine.py:2491-2521).  A T4 streams them at 320 GB/s x
  ** 0.8. */
  static const struct {
    pp_precision prec;
    int R;
    double bpp;
  } cs[] = {{PP_PREC_FP16, 1, 28 + 12 + 28},
            {PP_PREC_FP16, 2, 28 + 12 + 28 + 28},
            {PP_PREC_FP32, 1, 28},
            {PP_PREC_FP32, 2, 28 + 24}};
  pp_ctx *ctx = tu_fix_ctx(state);
  size_t i;
  for (i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    struct tu_op ops[1] = {{10, 20, 0, 2000000000, 1000, 1000}};
    struct rcase x;
    pp_eval *e = NULL;
    pp_stage_cost sc;
    memset(&x, 0, sizeof x);
    x.m = tu_model_ops(ctx, 1, ops, NULL, 0);
    assert_int_equal(pp_cluster_load(ctx, "hier:1x2,gpu=T4", &x.c), PP_OK);
    x.n = x.S = x.tp = x.mbs = 1;
    x.R = cs[i].R;
    x.lo[1] = 1;
    x.e = PP_ENGINE_DEEPSPEED;
    x.prec = cs[i].prec;
    x.p = build_plan(ctx, &x, 4, PP_SCHED_1F1B);
    assert_int_equal(pp_evaluate(ctx, x.p, x.m, x.c, NULL, &e), PP_OK);
    assert_int_equal(pp_eval_stage(e, 0, &sc), PP_OK);
    /* the model is fp16: 2e9 bytes are 1e9 parameters */
    tu_near(sc.update_ms, 1e9 * cs[i].bpp / (320e6 * 0.8), "memory-bound step");
    pp_eval_destroy(e);
    free_case(&x);
  }
}

/* A model of three operators, o2's parameters tied to o0's (or its own
** of the same size), the loss bytes given. */
static pp_model *tied_model(pp_ctx *ctx, int tie, double lf, double lb)
{
  pp_model_builder *b;
  pp_model *m = NULL;
  int i;
  assert_int_equal(pp_model_builder_create(ctx, "tied", NULL, &b), PP_OK);
  assert_int_equal(pp_model_builder_set_loss(b, lf, lb), PP_OK);
  for (i = 0; i < 3; i++) {
    pp_op_desc d;
    char name[8];
    pp_op_desc_init(&d);
    snprintf(name, sizeof name, "o%d", i);
    d.name = name;
    d.fwd_ms = 1;
    d.bwd_ms = 2;
    d.param_bytes = i == 1 ? 0 : 100000000;
    d.out_bytes = 1000;
    assert_int_equal(pp_model_builder_add_op(b, &d, NULL), PP_OK);
  }
  if (tie)
    assert_int_equal(pp_model_builder_tie(b, 2, 0), PP_OK);
  if (pp_model_builder_finish(b, &m) != PP_OK)
    fail_msg("model: %s", pp_ctx_errmsg(ctx));
  return m;
}

/* Two stages of 8 replicas on AMP's homogeneous cluster (4 nodes of 4
** T4s, one 50 Gb/s NIC each): stage 0 on nodes 0-1, stage 1 on nodes
** 2-3.  Replica r's copies of the tied weight reduce over the pair (r,
** 8 + r), across nodes, four pairs leaving every node through its one
** NIC: 2 x 1/2 x 1e8 bytes at 6.25 / 4 GB/s = 64 ms, under DeepSpeed
** (fp16 gradient) and Megatron (fp16 main gradient); nothing under torch
** or generic.  The estimate's step and the simulator's update carry it. */
static void t_tied_sync(void **state)
{
  static const struct {
    pp_engine e;
    double want;
  } cs[] = {{PP_ENGINE_DEEPSPEED, 64},
            {PP_ENGINE_MEGATRON, 64},
            {PP_ENGINE_TORCH, 0},
            {PP_ENGINE_GENERIC, 0}};
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_cluster *c = NULL;
  size_t i;
  int tie, s;
  assert_int_equal(pp_cluster_load(ctx, "amp-homogeneous", &c), PP_OK);
  for (i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    double upd[2][2], sim[2];
    for (tie = 0; tie < 2; tie++) {
      pp_model *m = tied_model(ctx, tie, 0, 0);
      struct rcase x;
      pp_eval *e = NULL;
      pp_sim *sm = NULL;
      pp_sim_summary ss;
      memset(&x, 0, sizeof x);
      x.m = m;
      x.c = c;
      x.n = 3;
      x.S = 2;
      x.tp = x.mbs = 1;
      x.R = 8;
      x.lo[1] = 2;
      x.lo[2] = 3;
      x.e = cs[i].e;
      x.prec = PP_PREC_FP16;
      x.p = build_plan(ctx, &x, 16, PP_SCHED_1F1B);
      assert_int_equal(pp_evaluate(ctx, x.p, m, c, NULL, &e), PP_OK);
      for (s = 0; s < 2; s++) {
        pp_stage_cost sc;
        assert_int_equal(pp_eval_stage(e, s, &sc), PP_OK);
        upd[tie][s] = sc.update_ms;
      }
      assert_int_equal(pp_simulate(ctx, x.p, m, c, NULL, &sm), PP_OK);
      pp_sim_get_summary(sm, &ss);
      sim[tie] = ss.iteration_ms;
      pp_sim_destroy(sm);
      pp_eval_destroy(e);
      pp_plan_destroy(x.p);
      pp_model_destroy(m);
    }
    for (s = 0; s < 2; s++)
      tu_near(upd[1][s] - upd[0][s], cs[i].want, "tied gradient reduction");
    tu_near(sim[1] - sim[0], cs[i].want, "simulated tied reduction");
  }
  pp_cluster_destroy(c);
}

/* The model's loss: its bytes at the type's memory bandwidth x 0.8, with
** the last operator only, scaled by micro-batch / reference over tp;
** kept through the chain view and the model JSON; AMP's conventions do
** not see it. */
static void t_loss(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = tied_model(ctx, 0, 2.56e9, 1.28e9), *m2 = NULL;
  pp_type_key k = {
      .name = "T4", .speed = 1, .peak_tflops = 65, .mem_gbps = 320};
  pp_op_time t;
  double f, b;
  char *text = NULL;
  size_t len = 0;
  assert_int_equal(pp_model_op_time(m, 2, &k, 2, 4, &t), PP_OK);
  /* 2.56e9 x 4 / 2 bytes at 256 GB/s: 20 ms; the backward 10 ms */
  tu_near(t.fwd_ms, 1 * 4 / 2.0 + 20, "loss fwd");
  tu_near(t.bwd_ms, 2 * 4 / 2.0 + 10, "loss bwd");
  assert_true(t.est & PP_EST_FLOPS);
  assert_int_equal(pp_model_op_time(m, 1, &k, 1, 1, &t), PP_OK);
  tu_near(t.fwd_ms, 1, "not the last operator");
  k.mem_gbps = 0; /* unknown bandwidth: not priced */
  assert_int_equal(pp_model_op_time(m, 2, &k, 1, 1, &t), PP_OK);
  tu_near(t.fwd_ms, 1, "no bandwidth");
  /* the model JSON keeps it */
  assert_int_equal(pp_model_write(ctx, m, tu_tmp("loss.json"), NULL), PP_OK);
  text = tu_slurp(tu_tmp("loss.json"), &len);
  assert_non_null(text);
  assert_non_null(strstr(text, "\"loss\": {\"fwd_bytes\": 2560000000"));
  assert_int_equal(pp_model_read_json(ctx, text, len, "m.json", &m2), PP_OK);
  pp_model_loss(m2, &f, &b);
  tu_near(f, 2.56e9, "read loss fwd");
  tu_near(b, 1.28e9, "read loss bwd");
  free(text);
  pp_model_destroy(m2);
  /* bad values name the field */
  {
    static const char *const bad[2] = {
        "{\"loss\": {\"fwd_bytes\": -1, \"bwd_bytes\": 0}, \"ops\": "
        "[{\"name\": \"a\", \"fwd_ms\": 1, \"bwd_ms\": 1}]}",
        "{\"loss\": 3, \"ops\": [{\"name\": \"a\", \"fwd_ms\": 1, "
        "\"bwd_ms\": 1}]}"};
    tu_expect_error(
        ctx, pp_model_read_json(ctx, bad[0], strlen(bad[0]), "m.json", &m2),
        PP_EINPUT, "m.json", "fwd_bytes", NULL);
    tu_expect_error(
        ctx, pp_model_read_json(ctx, bad[1], strlen(bad[1]), "m.json", &m2),
        PP_EINPUT, "m.json", "\"loss\" must be an object", NULL);
  }
  pp_model_destroy(m);
}

/* AMP's homogeneous cluster: 4 nodes of 4 T4s, one 50 Gb/s NIC per node.
** One stage of GPT-2 replicated over the nodes: with tp 4 each node's
** four tp rings leave through its one NIC together, so each gets a
** quarter of it; with tp 1 and 16 replicas one ring crosses each NIC
** once each way.  The estimate shares the NIC as the simulator's link
** sharing does, and the simulator's channel mode agrees. */
/* DeepSpeed's transfers between two stages of gpt2-amp on AMP's nodes
** (one 6.25 GB/s NIC each, 4 T4s): every tp rank sends 1/tp of the
** activation, and forward the attention mask whole (2 S^2 bytes, AMP's
** transformer.py:505-513, DeepSpeed pipe/engine.py:1025-1031); the
** receiver all-gathers the activation before its forward, the sender
** its output and the gradient before its backward (pipe/engine.py:
** 718-729, 824-847); all the flows of the edge share the NIC they
** leave by; the estimate equals the simulator. */
static void t_pipe_p2p(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = NULL;
  pp_cluster *c = NULL;
  int k;
  assert_int_equal(pp_model_load(ctx, "gpt2-amp", &m), PP_OK);
  assert_int_equal(pp_cluster_load(ctx, "amp-homogeneous", &c), PP_OK);
  tu_near(pp_model_pipe_extra(m), 2.0 * 1024 * 1024, "the mask, fp16");
  { /* the model JSON keeps it; bad values name the field */
    static const char bad[] = "{\"pipe_extra_bytes\": -1, \"ops\": "
                              "[{\"name\": \"a\", \"fwd_ms\": 1, "
                              "\"bwd_ms\": 1}]}";
    pp_model *m2 = NULL;
    size_t len = 0;
    char *text;
    assert_int_equal(pp_model_write(ctx, m, tu_tmp("extra.json"), NULL), PP_OK);
    text = tu_slurp(tu_tmp("extra.json"), &len);
    assert_non_null(text);
    assert_int_equal(pp_model_read_json(ctx, text, len, "m.json", &m2), PP_OK);
    tu_near(pp_model_pipe_extra(m2), 2.0 * 1024 * 1024, "read back");
    free(text);
    pp_model_destroy(m2);
    tu_expect_error(ctx,
                    pp_model_read_json(ctx, bad, strlen(bad), "m.json", &m2),
                    PP_EINPUT, "m.json", "pipe_extra_bytes", NULL);
  }
  for (k = 0; k < 4; k++) {
    static const int tp[4] = {4, 1, 2, 4}, R[4] = {2, 4, 2, 1},
                     mbs[4] = {2, 1, 4, 1};
    pp_plan_params pa;
    pp_plan_builder *b;
    pp_plan *p = NULL;
    pp_eval *e = NULL;
    pp_sim *sm = NULL;
    pp_eval_summary es;
    pp_sim_summary ss;
    pp_op_sizes z;
    int32_t ops[30], devs[4], id, v, r, t, s;
    double lat = pp_cluster_latency(c) / 1000, A, X = 2.0 * 1024 * 1024, flows,
           bw, xf, xb, g;
    pp_plan_params_init(&pa);
    pa.global_batch = 8 * R[k] * mbs[k];
    pa.micro_batch = mbs[k];
    pa.tp = tp[k];
    pa.engine = PP_ENGINE_DEEPSPEED;
    pa.precision = PP_PREC_FP16;
    assert_int_equal(pp_plan_builder_create(ctx, &pa, "p2p", &b), PP_OK);
    for (s = 0; s < 2; s++) {
      for (v = 0; v < 15; v++)
        ops[v] = 15 * s + v;
      assert_int_equal(pp_plan_builder_add_stage(b, ops, 15, &id), PP_OK);
      /* stage 0 on nodes 0-1, stage 1 on nodes 2-3 */
      for (r = 0; r < R[k]; r++) {
        for (t = 0; t < tp[k]; t++)
          devs[t] = 8 * s + r * tp[k] + t;
        assert_int_equal(pp_plan_builder_add_replica(b, id, devs), PP_OK);
      }
    }
    assert_int_equal(pp_plan_builder_finish(b, &p), PP_OK);
    assert_int_equal(pp_evaluate(ctx, p, m, c, NULL, &e), PP_OK);
    assert_int_equal(pp_model_op_sizes(m, 14, 1, mbs[k], &z), PP_OK);
    A = z.out_bytes; /* fp16 model, fp16 run */
    /* the flows of the edge leaving each node by its NIC */
    flows = (R[k] * tp[k] < 4 ? R[k] * tp[k] : 4);
    bw = 6.25 / flows * 1e6;
    if (tp[k] > 1) {
      xf = 3 * lat + (A / tp[k] + X) / bw;
      xb = 2 * lat + A / tp[k] / bw;
    } else {
      xf = 2 * lat + (A + X) / bw;
      xb = lat + A / bw;
    }
    /* a ring all-gather over the tp ranks inside a node (PCIe, 6.25) */
    g = tp[k] > 1 ? (tp[k] - 1.0) / tp[k] * A / 6.25e6 + (tp[k] - 1) * lat : 0;
    for (s = 0; s < 2; s++) {
      pp_stage_cost sc;
      pp_type_key key = pp_cluster_type_key(c, 8 * s);
      double f = 0, bw_ = 0;
      assert_int_equal(pp_eval_stage(e, s, &sc), PP_OK);
      for (v = 15 * s; v < 15 * s + 15; v++) {
        pp_op_time ot;
        assert_int_equal(pp_model_op_time(m, v, &key, tp[k], mbs[k], &ot),
                         PP_OK);
        f += ot.fwd_ms;
        bw_ += ot.bwd_ms;
      }
      if (s == 0) {
        tu_near(sc.send_ms, xf, "forward transfer");
        tu_near(sc.recv_ms, xb, "backward transfer");
        tu_near(sc.fwd_ms, f + xf, "sender's forward");
        tu_near(sc.bwd_ms, bw_ + xb + 2 * g, "sender's backward: 2 gathers");
      } else {
        tu_near(sc.fwd_ms, f + xf + g, "receiver's forward: 1 gather");
        tu_near(sc.bwd_ms, bw_ + xb, "receiver's backward");
      }
    }
    assert_int_equal(pp_eval_get_summary(e, &es), PP_OK);
    assert_int_equal(pp_simulate(ctx, p, m, c, NULL, &sm), PP_OK);
    assert_int_equal(pp_sim_get_summary(sm, &ss), PP_OK);
    /* the simulator runs the same transfers (within the estimate's
    ** fill and drain approximation of 1F1B on two stages) */
    if (fabs(ss.iteration_ms - es.iteration_ms) > 0.02 * es.iteration_ms)
      fail_msg("tp %d x %d: estimate %.9g ms, simulator %.9g ms", tp[k], R[k],
               es.iteration_ms, ss.iteration_ms);
    pp_sim_destroy(sm);
    pp_eval_destroy(e);
    pp_plan_destroy(p);
  }
  pp_cluster_destroy(c);
  pp_model_destroy(m);
}

static void t_shared_nic(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = NULL;
  pp_cluster *c = NULL;
  int k;
  assert_int_equal(pp_model_load(ctx, "gpt2-amp", &m), PP_OK);
  assert_int_equal(pp_cluster_load(ctx, "amp-homogeneous", &c), PP_OK);
  for (k = 0; k < 3; k++) {
    static const int tp[3] = {4, 1, 2}, R[3] = {4, 16, 8};
    static const pp_allreduce ar[3] = {PP_AR_RING, PP_AR_RING, PP_AR_HIER};
    pp_plan_params pa;
    pp_plan_builder *b;
    pp_plan *p = NULL;
    pp_cost_params cp;
    pp_eval *e = NULL;
    pp_sim *sm = NULL;
    pp_eval_summary es;
    pp_sim_summary ss[2];
    int32_t ops[30], devs[4], id, v, r, t, q;
    pp_plan_params_init(&pa);
    pa.global_batch = R[k];
    pa.tp = tp[k];
    pa.engine = PP_ENGINE_DEEPSPEED;
    assert_int_equal(pp_plan_builder_create(ctx, &pa, "nic", &b), PP_OK);
    for (v = 0; v < 30; v++)
      ops[v] = v;
    assert_int_equal(pp_plan_builder_add_stage(b, ops, 30, &id), PP_OK);
    for (r = 0; r < R[k]; r++) {
      for (t = 0; t < tp[k]; t++)
        devs[t] = r * tp[k] + t;
      assert_int_equal(pp_plan_builder_add_replica(b, 0, devs), PP_OK);
    }
    assert_int_equal(pp_plan_builder_finish(b, &p), PP_OK);
    pp_cost_params_init(&cp);
    cp.allreduce = ar[k];
    cp.record = 0;
    assert_int_equal(pp_evaluate(ctx, p, m, c, &cp, &e), PP_OK);
    assert_int_equal(pp_eval_get_summary(e, &es), PP_OK);
    for (q = 0; q < 2; q++) {
      cp.network = q ? PP_NET_LINKS : PP_NET_CHANNELS;
      assert_int_equal(pp_simulate(ctx, p, m, c, &cp, &sm), PP_OK);
      assert_int_equal(pp_sim_get_summary(sm, &ss[q]), PP_OK);
      pp_sim_destroy(sm);
      if (fabs(ss[q].iteration_ms - es.iteration_ms) > 1e-6 * es.iteration_ms)
        fail_msg("tp %d x %d replicas (%s): estimate %.9g ms, simulator "
                 "(%s) %.9g ms",
                 tp[k], R[k], pp_allreduce_name(ar[k]), es.iteration_ms,
                 q ? "links" : "channels", ss[q].iteration_ms);
    }
    if (k == 0) {
      /* 4 rings share 6.25 GB/s: 2 (4-1)/4 G at 6.25 / 4 GB/s, G the
      ** fp32 gradients of a quarter of the model (fp32_allreduce) */
      pp_stage_cost sc;
      assert_int_equal(pp_eval_stage(e, 0, &sc), PP_OK);
      assert_true(sc.allreduce_ms > 0);
      tu_near(sc.allreduce_ms,
              2.0 * 3 / 4 * (sc.param_bytes / 2 * 4) / (6.25 / 4 * 1e6),
              "four rings through one NIC");
    }
    pp_eval_destroy(e);
    pp_plan_destroy(p);
  }
  pp_cluster_destroy(c);
  pp_model_destroy(m);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      TU_CTX_TEST(t_memory_random), TU_CTX_TEST(t_sim_memory),
      TU_CTX_TEST(t_precision),     TU_CTX_TEST(t_overlap),
      TU_CTX_TEST(t_tp_comm),       TU_CTX_TEST(t_shared_nic),
      TU_CTX_TEST(t_zero_comm),     TU_CTX_TEST(t_step_time),
      TU_CTX_TEST(t_tied_sync),     TU_CTX_TEST(t_loss),
      TU_CTX_TEST(t_pipe_p2p),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
