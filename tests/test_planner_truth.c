/* SPDX-License-Identifier: MIT */
/*
** The planner under the engine-aware cost model (issue 17's acceptance):
**   - t_margin_16gb: on clusters of 16 GB GPUs, no plan the search keeps
**     has a device past capacity x (1 - memory margin) by the memory
**     model (re-priced here with pp_evaluate, every device);
**   - t_pure_dp: ResNet-50 and a 124M-parameter GPT on one 8-GPU node,
**     NVSwitch or PCIe, are planned as pure data parallelism (pp 1, tp 1,
**     no sharding), as practitioners run them;
**   - t_split_when_needed: a model whose replica does not fit one GPU
**     gets pipeline or tensor parallelism (or sharding), and the plan
**     fits.
*/
#include "testutil.h"

#include <string.h>

static pp_search *search(pp_ctx *ctx, const char *model, const char *cluster,
                         int64_t gbs, pp_engine e, int32_t zero, pp_model **mo,
                         pp_cluster **co)
{
  pp_search_params sp;
  pp_search *s = NULL;
  assert_int_equal(pp_model_load(ctx, model, mo), PP_OK);
  assert_int_equal(pp_cluster_load(ctx, cluster, co), PP_OK);
  pp_search_params_init(&sp);
  sp.global_batch = gbs;
  sp.engine = e;
  sp.zero = zero;
  sp.time_limit_s = 60;
  if (pp_plan_search(ctx, *mo, *co, &sp, &s) != PP_OK)
    fail_msg("%s on %s: %s", model, cluster, pp_ctx_errmsg(ctx));
  return s;
}

static void t_margin_16gb(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  static const char *const models[] = {"gpt2-amp", "opt-350", "transgan-amp"};
  static const char *const clusters[] = {"hier:2x4,gpu=V100-16",
                                         "amp-homogeneous"};
  static const pp_engine engines[] = {PP_ENGINE_TORCH, PP_ENGINE_DEEPSPEED,
                                      PP_ENGINE_MEGATRON};
  size_t a, b, e;
  int checked = 0;
  for (a = 0; a < 3; a++)
    for (b = 0; b < 2; b++)
      for (e = 0; e < 3; e++) {
        pp_model *m = NULL;
        pp_cluster *c = NULL;
        pp_search *s =
            search(ctx, models[a], clusters[b], 64, engines[e], -1, &m, &c);
        pp_search_summary sum;
        int32_t i, d;
        assert_int_equal(pp_search_get_summary(s, &sum), PP_OK);
        for (i = 0; i < sum.nplans; i++) {
          pp_eval *ev = NULL;
          assert_int_equal(
              pp_evaluate(ctx, pp_search_plan_at(s, i), m, c, NULL, &ev),
              PP_OK);
          for (d = 0; d < pp_cluster_ndev(c); d++) {
            pp_device_memory dm;
            assert_int_equal(pp_eval_device(ev, d, &dm), PP_OK);
            if (dm.used && dm.total_bytes > 0.95 * (double)dm.capacity_bytes)
              fail_msg("%s on %s (%s) plan %d device %d: %.3f GiB of "
                       "%.3f, past the 5%% margin",
                       models[a], clusters[b], pp_engine_name(engines[e]),
                       (int)i, (int)d, dm.total_bytes / 1073741824.0,
                       (double)dm.capacity_bytes / 1073741824.0);
            checked += dm.used;
          }
          pp_eval_destroy(ev);
        }
        pp_search_destroy(s);
        pp_cluster_destroy(c);
        pp_model_destroy(m);
      }
  assert_true(checked > 100);
}

static void t_pure_dp(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  static const char *const models[] = {
      "resnet:depth=50",
      "transformer:layers=12,hidden=768,heads=12,seq=1024,vocab=50257"};
  /* NVSwitch, and eight GPUs behind PCIe 3.0 x16 (about 12 GB/s) */
  static const char *const clusters[] = {"nvswitch:1x8",
                                         "hier:1x8,intra=12,gpu=A100-80",
                                         "hier:1x8,intra=12,gpu=V100-32"};
  size_t a, b;
  for (a = 0; a < 2; a++)
    for (b = 0; b < 3; b++) {
      pp_model *m = NULL;
      pp_cluster *c = NULL;
      pp_search *s =
          search(ctx, models[a], clusters[b], 256, PP_ENGINE_TORCH, -1, &m, &c);
      pp_search_plan best;
      assert_int_equal(pp_search_plan_get(s, 0, &best), PP_OK);
      if (best.pp != 1 || best.tp != 1 || best.dp != 8 || best.zero != 0)
        fail_msg("%s on %s: pp %d dp %d tp %d ZeRO %d, want pure data "
                 "parallelism",
                 models[a], clusters[b], (int)best.pp, (int)best.dp,
                 (int)best.tp, (int)best.zero);
      pp_search_destroy(s);
      pp_cluster_destroy(c);
      pp_model_destroy(m);
    }
}

static void t_split_when_needed(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = NULL;
  pp_cluster *c = NULL;
  /* GPT-Neo 2.7B in fp32 under DDP: 20 bytes per parameter, 54 GB. */
  pp_search *s = search(ctx, "gpt-neo-2.7", "hier:2x4,gpu=V100-16", 64,
                        PP_ENGINE_TORCH, 0, &m, &c);
  pp_search_plan best;
  pp_search_summary sum;
  assert_int_equal(pp_search_get_summary(s, &sum), PP_OK);
  assert_true(sum.nplans > 0);
  assert_int_equal(pp_search_plan_get(s, 0, &best), PP_OK);
  assert_true(best.pp > 1 || best.tp > 1);
  assert_true(best.peak_share <= 0.95);
  pp_search_destroy(s);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      TU_CTX_TEST(t_margin_16gb),
      TU_CTX_TEST(t_pure_dp),
      TU_CTX_TEST(t_split_when_needed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
