/* SPDX-License-Identifier: MIT */
/*
** "Which time applies": every branch of the lookup rule (exact point,
** nearest micro-batch, nearest tp, same family, FLOPs, speed), its
** estimate flags, and the normalisation of cluster speeds to the
** model's reference type.
*/
#include "testutil.h"

#include <math.h>

static pp_model *chain_model(pp_ctx *ctx)
{
  pp_model *m = NULL;
  assert_int_equal(pp_model_load(ctx, tu_path("examples/model-chain.json"), &m),
                   PP_OK);
  return m;
}

static void expect(const pp_model *m, int32_t v, const char *type, double speed,
                   double peak, int32_t tp, int32_t mbs, double fwd, double upd,
                   unsigned est)
{
  pp_type_key k = {0};
  pp_op_time t;
  k.name = type;
  k.speed = speed;
  k.peak_tflops = peak;
  assert_int_equal(pp_model_op_time(m, v, &k, tp, mbs, &t), PP_OK);
  if (fabs(t.fwd_ms - fwd) > 1e-12 * fmax(1, fwd) || t.est != est ||
      (upd >= 0 && fabs(t.update_ms - upd) > 1e-12))
    fail_msg("op %d on %s tp %d mbs %d: got fwd %.17g upd %.17g est %u, "
             "want fwd %.17g upd %.17g est %u",
             (int)v, type ? type : "(ref)", (int)tp, (int)mbs, t.fwd_ms,
             t.update_ms, t.est, fwd, upd, est);
  assert_true(t.bwd_ms > 0 || fwd == 0);
}

static void t_lookup_rules(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = chain_model(ctx);
  double rate = 312e12 * 0.45 / 1e3; /* A100 FLOP per ms at eff 0.45 */
  /* layer1 (index 1): reference V100, tp 1, micro-batch 2: 1.2 ms. */
  expect(m, 1, "V100", 1, 125, 1, 2, 1.2, 0.3, 0);
  expect(m, 1, NULL, 1, 0, 1, 2, 1.2, 0.3, 0);
  expect(m, 1, "V100", 1, 125, 2, 2, 0.7, 0.15, 0);
  expect(m, 1, "V100", 1, 125, 2, 4, 1.4, 0.15, PP_EST_MBS);
  expect(m, 1, "V100", 1, 125, 1, 1, 0.6, 0.3, PP_EST_MBS);
  /* tp 4: tp 2 is nearer than tp 1 (log ratio), 0.7 * 2 / 4. */
  expect(m, 1, "V100", 1, 125, 4, 2, 0.35, 0.075, PP_EST_TP);
  /* tp 3: equally near tp 2 and... no: |ln 3/2| < |ln 3|, so tp 2. */
  expect(m, 1, "V100", 1, 125, 3, 2, 0.7 * 2 / 3, -1, PP_EST_TP);
  /* T4 has its own profiles at tp 1, micro-batch 2 and 4. */
  expect(m, 1, "T4", 0.72, 65, 1, 2, 1.7, -1, 0);
  expect(m, 1, "T4", 0.72, 65, 1, 4, 3.3, 0.5, 0);
  /* micro-batch 3: linear between the profiled 2 (1.7) and 4 (3.3). */
  expect(m, 1, "T4", 0.72, 65, 1, 3, 2.5, 0.5, PP_EST_MBS);
  /* micro-batch 8, beyond the largest: the last step's cost per sample,
  ** (3.3 - 1.7) / 2 = 0.8 (under 3.3 / 4), four more samples. */
  expect(m, 1, "T4", 0.72, 65, 1, 8, 3.3 + 0.8 * 4, 0.5, PP_EST_MBS);
  /* micro-batch 1, below the smallest: proportional to micro-batch 2. */
  expect(m, 1, "T4", 0.72, 65, 1, 1, 1.7 / 2, -1, PP_EST_MBS);
  /* T4 at tp 2: only tp 1 profiles, scaled by 1/2. */
  expect(m, 1, "T4", 0.72, 65, 2, 2, 0.85, -1, PP_EST_TP);
  /* layer2 has no T4 micro-batch 4: micro-batch 2 scaled. */
  expect(m, 2, "T4", 0.72, 65, 1, 4, 3.4, -1, PP_EST_MBS);
  /* A type of the T4 family uses T4's profiles. */
  expect(m, 1, "T4-16GB", 0.72, 65, 1, 2, 1.7, -1, PP_EST_FAMILY);
  /* V100-32 is the reference's family. */
  expect(m, 1, "V100-32", 1, 125, 1, 2, 1.2, -1, PP_EST_FAMILY);
  /* A100: no profiles; layer1 has FLOPs: 1.9e9 at micro-batch 2. */
  expect(m, 1, "A100-80", 3.457, 312, 1, 2, 1.9e9 / rate, -1, PP_EST_FLOPS);
  expect(m, 1, "A100-80", 3.457, 312, 2, 4, 1.9e9 / rate, -1,
         PP_EST_FLOPS | PP_EST_TP | PP_EST_MBS);
  /* Without a known peak: the reference divided by the speed. */
  expect(m, 1, "A100-80", 3.457, 0, 1, 2, 1.2 / 3.457, -1, PP_EST_SPEED);
  /* The embedding has no FLOPs: speed rule even with a peak. */
  expect(m, 0, "A100-80", 3.457, 312, 1, 2, 0.05 / 3.457, -1, PP_EST_SPEED);
  expect(m, 0, "A100-80", 2, 312, 2, 4, 0.05 / 2, -1,
         PP_EST_SPEED | PP_EST_TP | PP_EST_MBS);
  {
    pp_op_time t;
    pp_type_key k = {.name = NULL, .speed = 1, .peak_tflops = 0};
    assert_int_equal(pp_model_op_time(m, 4, &k, 1, 1, &t), PP_EINVAL);
    assert_int_equal(pp_model_op_time(m, 0, &k, 0, 1, &t), PP_EINVAL);
    assert_int_equal(pp_model_op_time(m, 0, &k, 1, 0, &t), PP_EINVAL);
  }
  pp_model_destroy(m);
}

static void t_type_key(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = chain_model(ctx), *llama = NULL;
  pp_cluster *c = NULL, *h = NULL;
  pp_type_key k = {0};
  assert_int_equal(
      pp_cluster_load(ctx, tu_path("examples/cluster-matrix.json"), &c), PP_OK);
  /* The cluster declares V100 (speed 1): A100-80 keeps 3.457. */
  k = pp_model_type_key(m, c, 0);
  assert_string_equal(k.name, "A100-80");
  assert_true(k.speed == 3.457 && k.peak_tflops == 312);
  k = pp_model_type_key(m, c, 2);
  assert_true(k.speed == 1);
  /* llama-3-8's reference is GH-96, absent from the cluster: its catalog
  ** speed (7.026, relative to V100) is the unit. */
  assert_int_equal(pp_model_load(ctx, "llama-3-8", &llama), PP_OK);
  k = pp_model_type_key(llama, c, 2);
  assert_true(fabs(k.speed - 1 / 7.026) < 1e-12);
  assert_int_equal(pp_cluster_load(ctx, "nvswitch:1x2,gpu=GH-96", &h), PP_OK);
  k = pp_model_type_key(llama, h, 0);
  assert_true(k.speed == 1);
  {
    /* GH-96 is llama's reference: profiled, not estimated. */
    pp_op_time t;
    assert_int_equal(pp_model_op_time(llama, 1, &k, 1, 1, &t), PP_OK);
    assert_int_equal(t.est, 0);
  }
  pp_cluster_destroy(h);
  pp_cluster_destroy(c);
  pp_model_destroy(llama);
  pp_model_destroy(m);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      TU_CTX_TEST(t_lookup_rules),
      TU_CTX_TEST(t_type_key),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
