/* SPDX-License-Identifier: MIT */
/*
** bench_throughput: parplan's estimated single-GPU training throughput
** against published measurements (docs/COST_MODEL.md, "Roofline").
**
** Each case is one network on one GPU at the batch and precision of a
** published figure, planned as one stage on one device with one
** micro-batch (global batch = the published per-GPU batch), priced by
** pp_evaluate: forward, backward and the optimizer step, from the
** roofline of the model's FLOPs and memory traffic on the catalog's
** figures for that GPU.  Two paths where both exist: the built-in
** generator (resnet:, bert:, transformer:) and the ONNX export of the
** same network (data/onnx/, made by scripts/make_onnx_models.py --bench:
** every case has both); a missing ONNX file is reported, not skipped
** silently.
**
** Published figures (docs/REFERENCES.md lists the sources: [DLE],
** [Megatron-LM], [nanoGPT]):
**   ResNet-50 v1.5: NVIDIA DeepLearningExamples PyTorch README
**     (PyTorch/Classification/ConvNets/resnet50v1.5/README.md @
**     729963dd, lines 598-614): 1 x V100 16GB mixed 1200 img/s, FP32
**     367 (batch 256 / 112); 1 x A100 80GB mixed 2470, TF32 938 (batch
**     256 both, PyTorch/Classification/ConvNets/configs.yml lines
**     152-161): an fp32 run whose convolutions PyTorch hands to cuDNN
**     with TF32 allowed, the default (README line 197, "TF32 ... is
**     enabled by default").
**   BERT-Large pre-training phase 1 (seq 128) and 2 (seq 512): NVIDIA
**     DeepLearningExamples PyTorch/LanguageModeling/BERT/README.md @
**     729963dd, lines 813-815 and 853-855: A100 80GB fp16 580 / 210
**     seq/s, V100 32GB fp16 224 / 75 seq/s.  Phase 2 was measured on
**     binned data, not on sequences of 512 tokens: the tables come
**     from the pytorch:21.11-py3 container (README lines 807, 845),
**     the release that added "Binned pretraining for phase2 with LDDL
**     using a bin size of 64" (README line 895; its run script,
**     NVIDIA/DeepLearningExamples:PyTorch/LanguageModeling/BERT/
**     scripts/run_pretraining.sh lines 41 and 54, defaults to
**     bin_size_64), and LDDL pads each mini-batch only to its longest
**     sequence within a bin (NVIDIA/LDDL @ e4006d2, README.md lines
**     148-163).  LDDL's own measurement of BERT phase 2 on 32 DGX A100
**     nodes (Selene) gives bin size 64 a speed-up of 1.73 over no
**     binning (README.md line 171,
**     NVIDIA/LDDL:docs/images/binning_perf.gif: 1,483 s end to end).
**     The estimate prices every sequence at 512 tokens, so it is
**     compared with the published figure divided by 1.73, the
**     throughput at full length (a lower bound on the compute speed-up:
**     the end-to-end time also holds the gradient all-reduce, which
**     binning does not shorten).
**   GPT-2 1.2B (h 1536, 40 layers, seq 1024) on one V100, fp16: 39
**     TFLOP/s sustained (Shoeybi et al., Megatron-LM, arXiv:1909.08053,
**     abstract), 3.61 seq/s by the FLOP count of Narayanan et al.
**     (96 s l h^2 (1 + s/6h + V/16lh) per sequence, 1.079e13 FLOPs at
**     s 1024, l 40, h 1536, V 51200), which includes the
**     activation recomputation Megatron's runs used: planned with it.
**     GPT-2 124M (seq 1024) on A100 40GB, bf16: about 104 seq/s per
**     GPU (karpathy/nanoGPT @ 3adf61e README lines 115-121 and
**     config/train_gpt2.py: 600,000 iterations of 491,520 tokens in
**     about 4 days on 8 GPUs; flash attention and torch.compile, so
**     faster than the eager layer the generator models).
**
** Printed per case: estimated and published samples/s, the published
** figure at full length (the same unless the run binned its sequences),
** their ratio, and the worst ratio per path.  The target (issue 18) is
** within 25%.  Then the estimate's speed-up of channels_last over NCHW
** for the mixed-precision ResNet-50 cases, against the published "about
** 30%" (MosaicML Composer's channels_last method card, [Composer]).
**
** Usage: bench_throughput [SOURCE_DIR]
*/
#define _POSIX_C_SOURCE 200809L
#include "parplan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PP_SOURCE_DIR
#define PP_SOURCE_DIR "."
#endif

struct tcase {
  const char *what;
  const char *builtin; /* model spec */
  const char *onnx;    /* file under data/onnx and its options, or NULL */
  const char *gpu;
  pp_precision prec;
  int mbs;
  int recompute;    /* the published run recomputed activations */
  double published; /* samples/s */
  const char *source;
  /* The published run's speed-up from sequence binning (1: none): the
  ** estimate, at full length, is compared with published / binning. */
  double binning;
  /* The run kept PyTorch's NCHW layout (memory_format=contiguous): DLE's
  ** main.py defaults --memory-format to nchw (line 330), configs.yml
  ** sets nhwc for its mixed-precision runs only (lines 134-161). */
  int nchw;
};

static const struct tcase cases[] = {
    {"ResNet-50, V100, fp16", "resnet:depth=50,batch=256", "resnet50.onnx",
     "V100-16", PP_PREC_FP16, 256, 0, 1200, "DLE RN50 PyTorch :606", 1, 0},
    {"ResNet-50, V100, fp32", "resnet:depth=50,batch=112", "resnet50.onnx",
     "V100-16", PP_PREC_FP32, 112, 0, 367, "DLE RN50 PyTorch :606", 1, 1},
    {"ResNet-50, A100, fp16", "resnet:depth=50,batch=256", "resnet50.onnx",
     "A100-80", PP_PREC_FP16, 256, 0, 2470, "DLE RN50 PyTorch :598", 1, 0},
    {"ResNet-50, A100, fp32 (TF32)", "resnet:depth=50,batch=256",
     "resnet50.onnx", "A100-80", PP_PREC_FP32, 256, 0, 938,
     "DLE RN50 PyTorch :598", 1, 1},
    {"BERT-Large s128, V100, fp16",
     "bert:layers=24,hidden=1024,heads=16,seq=128,batch=64",
     "bert_large_s128.onnx", "V100-32", PP_PREC_FP16, 64, 0, 224,
     "DLE BERT PyTorch :853", 1, 0},
    {"BERT-Large s512, V100, fp16",
     "bert:layers=24,hidden=1024,heads=16,seq=512,batch=8",
     "bert_large_s512.onnx", "V100-32", PP_PREC_FP16, 8, 0, 75,
     "DLE BERT PyTorch :855; LDDL binning", 1.73, 0},
    {"BERT-Large s128, A100, fp16",
     "bert:layers=24,hidden=1024,heads=16,seq=128,batch=256",
     "bert_large_s128.onnx", "A100-80", PP_PREC_FP16, 256, 0, 580,
     "DLE BERT PyTorch :813", 1, 0},
    {"BERT-Large s512, A100, fp16",
     "bert:layers=24,hidden=1024,heads=16,seq=512,batch=32",
     "bert_large_s512.onnx", "A100-80", PP_PREC_FP16, 32, 0, 210,
     "DLE BERT PyTorch :815; LDDL binning", 1.73, 0},
    {"GPT-2 1.2B, V100, fp16",
     "transformer:layers=40,hidden=1536,heads=16,seq=1024,vocab=51200,mbs=8",
     "gpt2_1p2b.onnx", "V100-32", PP_PREC_FP16, 8, 1, 3.61,
     "Megatron-LM paper", 1, 0},
    {"GPT-2 124M, A100, bf16",
     "transformer:layers=12,hidden=768,heads=12,seq=1024,vocab=50257,mbs=12",
     "gpt2_small.onnx", "A100-40", PP_PREC_BF16, 12, 0, 104, "nanoGPT README",
     1, 0},
};

/* Estimated samples/s of spec on one gpu; 0 with a message on failure. */
static double estimate(pp_ctx *ctx, const char *spec, const struct tcase *t)
{
  char cl[96];
  pp_model *m = NULL;
  pp_cluster *c = NULL;
  pp_plan_builder *b = NULL;
  pp_plan *p = NULL;
  pp_eval *e = NULL;
  pp_plan_params pa;
  pp_cost_params cp;
  pp_eval_summary es;
  int32_t *ops = NULL, n, v, id, dev = 0, mb;
  double out = 0;

  snprintf(cl, sizeof cl, "hier:1x1,gpu=%s", t->gpu);
  if (pp_model_load(ctx, spec, &m) || pp_cluster_load(ctx, cl, &c))
    goto fail;
  n = pp_model_nop(m);
  mb = pp_model_micro_batch(m);
  if (!(ops = malloc((size_t)n * sizeof *ops)))
    goto fail;
  for (v = 0; v < n; v++)
    ops[v] = v;
  pp_plan_params_init(&pa);
  pa.global_batch = mb;
  pa.micro_batch = mb;
  pa.tp = 1;
  pa.precision = t->prec;
  pa.recompute = t->recompute;
  if (pp_plan_builder_create(ctx, &pa, t->what, &b) ||
      pp_plan_builder_add_stage(b, ops, n, &id) ||
      pp_plan_builder_add_replica(b, id, &dev) || pp_plan_builder_finish(b, &p))
    goto fail;
  b = NULL;
  pp_cost_params_init(&cp);
  cp.record = 0;
  if (pp_evaluate(ctx, p, m, c, &cp, &e) || pp_eval_get_summary(e, &es))
    goto fail;
  out = es.throughput;
  goto done;
fail:
  printf("   %-30s %s: %s\n", t->what, spec, pp_ctx_errmsg(ctx));
done:
  free(ops);
  pp_eval_destroy(e);
  pp_plan_destroy(p);
  pp_plan_builder_destroy(b);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
  return out;
}

int main(int argc, char **argv)
{
  const char *dir = argc > 1 ? argv[1] : PP_SOURCE_DIR;
  pp_ctx *ctx = NULL;
  size_t i;
  double worst[2] = {1, 1};
  int have[2] = {0, 0};
  if (pp_ctx_create(NULL, &ctx))
    return 1;
  printf("bench_throughput: estimated single-GPU training throughput "
         "against published figures\n");
  printf("   full length: the published figure at full sequence length "
         "(where the run binned\n   its sequences, the published one over "
         "the binning's speed-up; see the source)\n");
  printf("   %-30s %-8s %10s %10s %11s %7s  %s\n", "case", "path", "estimate",
         "published", "full length", "ratio", "source");
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const struct tcase *t = &cases[i];
    int k;
    for (k = 0; k < 2; k++) {
      char spec[1024];
      double est, r, full;
      FILE *f;
      if (k == 0)
        snprintf(spec, sizeof spec, "%s%s", t->builtin,
                 t->nchw ? ",memory_format=contiguous" : "");
      else if (!t->onnx)
        continue;
      else {
        snprintf(spec, sizeof spec, "%s/data/onnx/%s", dir, t->onnx);
        if (!(f = fopen(spec, "rb"))) {
          printf("   %-30s %-8s missing %s\n", t->what, "onnx", spec);
          continue;
        }
        fclose(f);
        snprintf(spec + strlen(spec), sizeof spec - strlen(spec), ":batch=%d%s",
                 t->mbs, t->nchw ? ",memory_format=contiguous" : "");
      }
      if (!((est = estimate(ctx, spec, t)) > 0))
        continue;
      full = t->published / (t->binning > 0 ? t->binning : 1);
      r = est / full;
      have[k] = 1;
      if (fabs(log(r)) > fabs(log(worst[k])))
        worst[k] = r;
      printf("   %-30s %-8s %10.2f %10.2f %11.2f %7.3f  %s\n", t->what,
             k ? "onnx" : "built-in", est, t->published, full, r, t->source);
    }
  }
  for (i = 0; i < 2; i++)
    if (have[i])
      printf("   worst ratio, %-8s %.2f (%+.0f%%)\n", i ? "onnx" : "built-in",
             worst[i], 100 * (worst[i] - 1));
  /* The NCHW transposes against an independent figure: channels_last's
  ** speed-up of mixed-precision ResNet-50 training, "about 30% on NVIDIA
  ** V100 and A100" ([Composer], the channels_last method card). */
  printf("   channels_last speed-up over NCHW, ResNet-50 mixed precision "
         "(published: about 1.3, [Composer])\n");
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const struct tcase *t = &cases[i];
    char nhwc[256], nchw[256];
    double a, b;
    if (strncmp(t->builtin, "resnet:", 7) || t->prec == PP_PREC_FP32)
      continue;
    snprintf(nhwc, sizeof nhwc, "%s", t->builtin);
    snprintf(nchw, sizeof nchw, "%s,memory_format=contiguous", t->builtin);
    if ((a = estimate(ctx, nhwc, t)) > 0 && (b = estimate(ctx, nchw, t)) > 0)
      printf("   %-30s %-8s %10.3f\n", t->what, "built-in", a / b);
  }
  pp_ctx_destroy(ctx);
  return 0;
}
