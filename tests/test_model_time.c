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

/* The least-squares line in relative error through (x[i], y[i]),
** recomputed the other way round: minimising sum ((a + b x) / y - 1)^2 is
** the ordinary least squares of 1 on the features (1/y, x/y). */
static void rel_line(const double *x, const double *y, int n, double *a,
                     double *b)
{
  double p = 0, q = 0, r = 0, s = 0, t = 0;
  int i;
  for (i = 0; i < n; i++) {
    double u = 1 / y[i], w = x[i] / y[i];
    p += u * u;
    q += u * w;
    r += w * w;
    s += u;
    t += w;
  }
  *a = (s * r - q * t) / (p * r - q * q);
  *b = (p * t - q * s) / (p * r - q * q);
}

/* Profile series of three sizes or more are read through their line
** (ppi_model_fit_profiles; docs/FORMATS.md "Which time applies"): the
** relative least-squares line at every profiled point; an exactly affine
** series, a series of two and one whose line is not positive keep their
** points; each (type, tp) is its own series, the reference point is in
** its type's tp-1 series; the model file keeps the measurements; the
** chain view costs what the operators cost. */
static void t_profile_fit(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model_builder *b = NULL;
  pp_model *m = NULL, *back = NULL, *cv = NULL;
  pp_op_desc d;
  /* the reference (V100, tp 1, mbs 1) and V100 tp 1 at 2, 4 and 8 */
  static const double x[4] = {1, 2, 4, 8}, y[4] = {10, 11, 19, 35},
                      lin[4] = {5, 7, 11, 19}, falls[3] = {10, 1, 0.1},
                      dips[3] = {1, 0.05, 1};
  double a, sl, want;
  int32_t id[2], i;
  char path[512];
  assert_int_equal(pp_model_builder_create(ctx, "fit", "test", &b), PP_OK);
  assert_int_equal(pp_model_builder_set_reference_type(b, "V100"), PP_OK);
  pp_op_desc_init(&d);
  d.name = "noisy";
  d.fwd_ms = y[0];
  d.bwd_ms = 2 * lin[0];
  assert_int_equal(pp_model_builder_add_op(b, &d, &id[0]), PP_OK);
  d.name = "affine";
  d.fwd_ms = lin[0];
  d.bwd_ms = lin[0];
  assert_int_equal(pp_model_builder_add_op(b, &d, &id[1]), PP_OK);
  assert_int_equal(pp_model_builder_add_edge(b, id[0], id[1], 8), PP_OK);
  for (i = 1; i < 4; i++) {
    assert_int_equal(pp_model_builder_add_time(b, id[0], NULL, 1, (int)x[i],
                                               y[i], 2 * lin[i], -1),
                     PP_OK);
    assert_int_equal(pp_model_builder_add_time(b, id[1], NULL, 1, (int)x[i],
                                               lin[i], lin[i], -1),
                     PP_OK);
  }
  /* T4 tp 1: two sizes only; tp 2: a line that falls; tp 4: one that
  ** is negative at 1 (-0.13): all kept as measured */
  assert_int_equal(pp_model_builder_add_time(b, id[0], "T4", 1, 1, 3, 6, -1),
                   PP_OK);
  assert_int_equal(pp_model_builder_add_time(b, id[0], "T4", 1, 2, 7, 14, -1),
                   PP_OK);
  for (i = 0; i < 3; i++) {
    assert_int_equal(pp_model_builder_add_time(b, id[0], "T4", 2, 1 << i,
                                               falls[i], falls[i], -1),
                     PP_OK);
    assert_int_equal(pp_model_builder_add_time(b, id[0], "T4", 4, 1 << i,
                                               dips[i], dips[i], -1),
                     PP_OK);
  }
  assert_int_equal(pp_model_builder_finish(b, &m), PP_OK);
  rel_line(x, y, 4, &a, &sl);
  for (i = 0; i < 4; i++) {
    expect(m, id[0], "V100", 1, 0, 1, (int32_t)x[i], a + sl * x[i], -1, 0);
    expect(m, id[1], "V100", 1, 0, 1, (int32_t)x[i], lin[i], -1, 0);
  }
  { /* the measured points stay readable */
    double pf = 0, pb = 0;
    assert_true(pp_model_profile_point(m, id[0], NULL, 1, 1, &pf, &pb));
    tu_near(pf, y[0], "the reference point");
    assert_true(pp_model_profile_point(m, id[0], "V100", 1, 4, &pf, NULL));
    tu_near(pf, y[2], "V100 at micro-batch 4");
    assert_true(pp_model_profile_point(m, id[0], "T4", 4, 2, NULL, &pb));
    tu_near(pb, dips[1], "T4 tp 4 at micro-batch 2");
    assert_false(pp_model_profile_point(m, id[0], "T4", 1, 4, &pf, &pb));
    assert_false(pp_model_profile_point(m, id[0], "A100", 1, 1, &pf, &pb));
    assert_false(pp_model_profile_point(m, 7, NULL, 1, 1, &pf, &pb));
  }
  /* between profiled sizes: linear between the fitted points */
  expect(m, id[0], "V100", 1, 0, 1, 3, a + sl * 3, -1, PP_EST_MBS);
  expect(m, id[0], "T4", 1, 0, 1, 2, 7, -1, 0);
  expect(m, id[0], "T4", 1, 0, 2, 2, 1, -1, 0);
  expect(m, id[0], "T4", 1, 0, 4, 2, 0.05, -1, 0);
  /* the file keeps the measurements */
  snprintf(path, sizeof path, "%s", tu_tmp("fit.json"));
  assert_int_equal(pp_model_write(ctx, m, path, NULL), PP_OK);
  assert_int_equal(pp_model_load(ctx, path, &back), PP_OK);
  {
    pp_op_desc r;
    assert_int_equal(pp_model_op(back, id[0], &r), PP_OK);
    tu_near(r.fwd_ms, y[0], "the reference point as measured");
  }
  for (i = 0; i < 4; i++)
    expect(back, id[0], "V100", 1, 0, 1, (int32_t)x[i], a + sl * x[i], -1, 0);
  /* the chain view holds the fitted points, which its own fit keeps */
  assert_int_equal(pp_model_chain_view(ctx, m, 1, &cv), PP_OK);
  assert_int_equal(pp_model_nop(cv), 2);
  for (i = 0; i < 4; i++) {
    want = a + sl * x[i];
    expect(cv, 0, "V100", 1, 0, 1, (int32_t)x[i], want, -1, 0);
    expect(cv, 1, "V100", 1, 0, 1, (int32_t)x[i], lin[i], -1, 0);
  }
  pp_model_destroy(cv);
  pp_model_destroy(back);
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
      TU_CTX_TEST(t_profile_fit),
      TU_CTX_TEST(t_type_key),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
