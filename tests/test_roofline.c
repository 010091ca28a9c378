/* SPDX-License-Identifier: MIT */
/*
** The roofline estimate (docs/COST_MODEL.md, "Roofline") and the GPU
** catalog (docs/COST_MODEL.md, "GPU catalog"): the larger of the FLOP
** and the memory term per part, the precision's peak and element size,
** a chain layer equal to the sum of its members, the parts through JSON,
** the two ResNet-50 paths on every catalog GPU, cluster types that
** are named, overridden or unknown, and fp32 convolutions on TF32
** tensor cores (PyTorch's default: aten/src/ATen/Context.h @ d0eaa6b7,
** `allow_tf32_cudnn = true` beside `float32_matmul_precision =
** HIGHEST`, so cuDNN's convolutions take TF32 and cuBLAS's matmuls do
** not), and the transposes of tensor-core convolutions on NCHW tensors
** (memory_format contiguous).
*/
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static pp_model *one_op(pp_ctx *ctx, double ffl, double fby, pp_precision dt)
{
  pp_model_builder *b = NULL;
  pp_model *m = NULL;
  pp_op_desc d;
  assert_int_equal(pp_model_builder_create(ctx, "m", "test", &b), PP_OK);
  assert_int_equal(pp_model_builder_set_efficiency(b, 0.5), PP_OK);
  assert_int_equal(pp_model_builder_set_dtype(b, dt), PP_OK);
  pp_op_desc_init(&d);
  d.name = "op";
  d.fwd_ms = 1;
  d.bwd_ms = 2;
  d.fwd_flops = ffl;
  d.bwd_flops = 2 * ffl;
  d.fwd_bytes = fby;
  d.bwd_bytes = 2 * fby;
  assert_int_equal(pp_model_builder_add_op(b, &d, NULL), PP_OK);
  assert_int_equal(pp_model_builder_finish(b, &m), PP_OK);
  return m;
}

static double fwd(const pp_model *m, int32_t v, const pp_type_key *k,
                  int32_t tp, int32_t mbs)
{
  pp_op_time t;
  assert_int_equal(pp_model_op_time(m, v, k, tp, mbs, &t), PP_OK);
  return t.fwd_ms + t.bwd_ms;
}

static void near(double got, double want, const char *what)
{
  if (!(fabs(got - want) <= 1e-9 * fmax(1, fabs(want))))
    fail_msg("%s: got %.17g, want %.17g", what, got, want);
}

/* A type "X" of 100 TFLOP/s fp16, 10 fp32 and tf32 TF32. */
static pp_type_key key_x(double tf32, double mem_gbps)
{
  pp_type_key k = {0};
  k.name = "X";
  k.speed = 1;
  k.peak_tflops = 100;
  k.peak_fp32_tflops = 10;
  k.peak_tf32_tflops = tf32;
  k.mem_gbps = mem_gbps;
  return k;
}

/* max(FLOPs / (peak eff), bytes / (bw 0.8)), fwd + bwd (3x). */
static void t_max_of_terms(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_type_key k = key_x(0, 1000);
  pp_model *m;
  /* 1e12 FLOPs at 50 TFLOP/s: 20 ms; 1e9 bytes at 800 GB/s: 1.25 ms */
  m = one_op(ctx, 1e12, 1e9, PP_PREC_FP16);
  near(fwd(m, 0, &k, 1, 1), 3 * 20.0, "compute-bound");
  /* tp 2 and micro-batch 4 scale both terms by 2 */
  near(fwd(m, 0, &k, 2, 4), 3 * 40.0, "tp 2, micro-batch 4");
  /* fp32 run of an fp16 model: the fp32 peak (200 ms) and 4-byte
  ** elements (2.5 ms) */
  k.precision = PP_PREC_FP32;
  near(fwd(m, 0, &k, 1, 1), 3 * 200.0, "fp32 peak");
  pp_model_destroy(m);
  /* memory-bound: 1e9 FLOPs (0.02 ms) and 8e9 bytes (10 ms) */
  k.precision = PP_PREC_MODEL;
  m = one_op(ctx, 1e9, 8e9, PP_PREC_FP16);
  near(fwd(m, 0, &k, 1, 1), 3 * 10.0, "memory-bound");
  k.precision = PP_PREC_FP32; /* twice the bytes */
  near(fwd(m, 0, &k, 1, 1), 3 * 20.0, "memory-bound, fp32");
  k.precision = PP_PREC_BF16; /* same class as the fp16 model: as given */
  k.mem_gbps = 0;             /* unknown bandwidth: no memory term */
  near(fwd(m, 0, &k, 1, 1), 3 * 0.02, "no bandwidth");
  pp_model_destroy(m);
  /* a profiled fp32 model run in fp16 takes the roofline, not the
  ** profile (1 + 2 ms) */
  k.mem_gbps = 1000;
  k.name = NULL;
  m = one_op(ctx, 1e12, 1e9, PP_PREC_FP32);
  k.precision = PP_PREC_FP32;
  near(fwd(m, 0, &k, 1, 1), 3.0, "profile in its own dtype");
  k.precision = PP_PREC_FP16;
  near(fwd(m, 0, &k, 1, 1), 3 * 20.0, "roofline in the other dtype");
  pp_model_destroy(m);
}

/* A model JSON of one Conv2d operator with the roofline part part
** ("[fwd FLOPs, fwd bytes, bwd FLOPs, bwd bytes, class]"), read as src. */
static pp_status one_part(pp_ctx *ctx, const char *part, const char *src,
                          pp_model **m)
{
  char text[512];
  snprintf(text, sizeof text,
           "{\"name\": \"w\", \"efficiency\": 0.5, \"ops\": [{\"name\": "
           "\"c\", \"kind\": \"Conv2d\", \"fwd_ms\": 1, \"bwd_ms\": 2, "
           "\"param_bytes\": 0, \"out_bytes\": 1, \"saved_bytes\": 0, "
           "\"roofline\": [%s]}], \"edges\": []}",
           part);
  return pp_model_read_json(ctx, text, strlen(text), src, m);
}

static pp_type_key key_of(pp_ctx *ctx, const char *gpu)
{
  char spec[64];
  pp_cluster *c = NULL;
  pp_type_key k;
  snprintf(spec, sizeof spec, "hier:1x1,gpu=%s", gpu);
  assert_int_equal(pp_cluster_load(ctx, spec, &c), PP_OK);
  k = pp_cluster_type_key(c, 0);
  k.name = "no-such-type"; /* outlives the cluster; matches no profile */
  pp_cluster_destroy(c);
  return k;
}

static double total(const pp_model *m, const pp_type_key *k)
{
  double s = 0;
  int32_t v;
  for (v = 0; v < pp_model_nop(m); v++)
    s += fwd(m, v, k, 1, pp_model_micro_batch(m));
  return s;
}

/* A chain layer keeps its members' parts: the chain view, and the chain
** view written to JSON and read back, cost what the DAG costs, on every
** catalog GPU and in both precision classes. */
static void t_chain_keeps_parts(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  static const char *const specs[] = {
      "resnet:depth=50", "bert:layers=2,seq=128",
      "transformer:layers=2,hidden=256,heads=4,seq=128,vocab=1000"};
  static const char *const gpus[] = {"V100", "T4", "A100-80", "H100",
                                     "B200", "L4", "MI300X"};
  size_t i, g;
  char path[512];
  snprintf(path, sizeof path, "%s", tu_tmp("roofline_chain.json"));
  for (i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    pp_model *m = NULL, *v = NULL, *back = NULL;
    assert_int_equal(pp_model_load(ctx, specs[i], &m), PP_OK);
    assert_int_equal(pp_model_chain_view(ctx, m, 0, &v), PP_OK);
    assert_true(pp_model_nop(v) > 1);
    assert_int_equal(pp_model_write(ctx, v, path, NULL), PP_OK);
    assert_int_equal(pp_model_load(ctx, path, &back), PP_OK);
    for (g = 0; g < sizeof gpus / sizeof gpus[0]; g++) {
      pp_type_key k = key_of(ctx, gpus[g]);
      double dag, chain, json, sums = 0;
      int32_t l;
      k.precision = PP_PREC_FP16;
      dag = total(m, &k);
      chain = total(v, &k);
      json = total(back, &k);
      if (fabs(chain - dag) > 1e-9 * dag || fabs(json - dag) > 1e-9 * dag)
        fail_msg("%s on %s: DAG %.17g ms, chain %.17g, chain via JSON %.17g",
                 specs[i], gpus[g], dag, chain, json);
      /* ResNet's layers mix convolutions and memory-bound operators:
      ** the roofline of a layer's sums would be clearly less than the
      ** sum of its members' rooflines, so the parts matter */
      for (l = 0; l < pp_model_nop(v); l++) {
        pp_op_desc o;
        assert_int_equal(pp_model_op(v, l, &o), PP_OK);
        sums +=
            fmax(o.fwd_flops / (k.peak_tflops * 1e9 * pp_model_efficiency(v)),
                 o.fwd_bytes / (k.mem_gbps * 0.8e6));
      }
      if (i == 0 && !(sums < 0.98 * dag / 3))
        fail_msg("%s on %s: the sums' roofline %.17g is not below the "
                 "parts' %.17g",
                 specs[i], gpus[g], sums, dag / 3);
      k.precision = PP_PREC_FP32;
      assert_true(total(v, &k) > chain);
      /* in fp32 too, where a part's class (convolution or not) picks
      ** the TF32 or the fp32 peak: the chain keeps the classes */
      dag = total(m, &k);
      chain = total(v, &k);
      json = total(back, &k);
      if (fabs(chain - dag) > 1e-9 * dag || fabs(json - dag) > 1e-9 * dag)
        fail_msg("%s on %s, fp32: DAG %.17g ms, chain %.17g, chain via JSON "
                 "%.17g",
                 specs[i], gpus[g], dag, chain, json);
    }
    pp_model_destroy(back);
    pp_model_destroy(v);
    pp_model_destroy(m);
  }
}

/* Two operators of 1e12 FLOPs each, a convolution and a matmul. */
static pp_model *conv_and_matmul_in(pp_ctx *ctx, const char *conv_kind,
                                    pp_memory_format mf)
{
  pp_model_builder *b = NULL;
  pp_model *m = NULL;
  pp_op_desc d;
  int32_t a, c;
  assert_int_equal(pp_model_builder_create(ctx, "m", "test", &b), PP_OK);
  assert_int_equal(pp_model_builder_set_efficiency(b, 0.5), PP_OK);
  assert_int_equal(pp_model_builder_set_dtype(b, PP_PREC_FP16), PP_OK);
  assert_int_equal(pp_model_builder_set_memory_format(b, mf), PP_OK);
  pp_op_desc_init(&d);
  d.name = "conv";
  d.kind = conv_kind;
  d.fwd_ms = 1;
  d.bwd_ms = 2;
  d.fwd_flops = 1e12;
  d.bwd_flops = 2e12;
  d.fwd_bytes = 1e6;
  d.bwd_bytes = 2e6;
  assert_int_equal(pp_model_builder_add_op(b, &d, &a), PP_OK);
  d.name = "mm";
  d.kind = "MatMul";
  assert_int_equal(pp_model_builder_add_op(b, &d, &c), PP_OK);
  assert_int_equal(pp_model_builder_add_edge(b, a, c, 1000), PP_OK);
  assert_int_equal(pp_model_builder_finish(b, &m), PP_OK);
  return m;
}

static pp_model *conv_and_matmul(pp_ctx *ctx, const char *conv_kind)
{
  return conv_and_matmul_in(ctx, conv_kind, PP_MF_CHANNELS_LAST);
}

/* fp32 runs: a convolution (its kind, or its part's class) takes the
** TF32 tensor peak where the type has one, a matmul the fp32 peak;
** fp16 runs take the tensor peak for both; Volta, Turing and AMD have
** no TF32 entry, every NVIDIA GPU from Ampere on half its fp16 peak (the
** data sheets' dense figures). */
static void t_tf32_convolutions(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  static const char *const kinds[] = {"Conv2d", "Conv", "ConvTranspose",
                                      "conv1d"};
  pp_type_key k = key_x(50, 1e6);
  size_t i;
  for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    pp_model *m = conv_and_matmul(ctx, kinds[i]), *v = NULL, *back = NULL;
    char path[512];
    k.precision = PP_PREC_FP32;
    /* 1e12 FLOPs at 0.5 x 50: 40 ms; at 0.5 x 10: 200 ms; x3 fwd+bwd */
    near(fwd(m, 0, &k, 1, 1), 3 * 40.0, kinds[i]);
    near(fwd(m, 1, &k, 1, 1), 3 * 200.0, "matmul, fp32");
    /* the chain view and its JSON keep the classes (ResNet's layers,
    ** which mix convolutions with the rest, in t_chain_keeps_parts) */
    assert_int_equal(pp_model_chain_view(ctx, m, 0, &v), PP_OK);
    near(total(v, &k), 3 * 240.0, "chain view, fp32");
    snprintf(path, sizeof path, "%s", tu_tmp("roofline_tf32.json"));
    assert_int_equal(pp_model_write(ctx, v, path, NULL), PP_OK);
    assert_int_equal(pp_model_load(ctx, path, &back), PP_OK);
    near(total(back, &k), 3 * 240.0, "chain view via JSON, fp32");
    k.precision = PP_PREC_FP16; /* the model's dtype: the tensor peak */
    near(fwd(m, 0, &k, 1, 1), 3 * 20.0, "conv, fp16");
    near(fwd(m, 1, &k, 1, 1), 3 * 20.0, "matmul, fp16");
    k.precision = PP_PREC_FP32;
    k.peak_tf32_tflops = 0; /* no TF32 (Volta): the fp32 peak */
    near(fwd(m, 0, &k, 1, 1), 3 * 200.0, "conv without TF32");
    k.peak_tf32_tflops = 50;
    pp_model_destroy(back);
    pp_model_destroy(v);
    pp_model_destroy(m);
  }
  {
    static const char *const none[] = {"V100",      "T4",     "RTX-2080",
                                       "Titan-RTX", "MI250X", "MI300X"};
    static const char *const half[] = {
        "A100-40", "A100-80", "H100", "H200", "GH-96",    "B200",
        "GB200",   "A10",     "L4",   "L40S", "RTX-3090", "RTX-4090"};
    for (i = 0; i < sizeof none / sizeof none[0]; i++)
      near(key_of(ctx, none[i]).peak_tf32_tflops, 0, none[i]);
    for (i = 0; i < sizeof half / sizeof half[0]; i++) {
      pp_type_key g = key_of(ctx, half[i]);
      /* L4's data sheet gives 121 fp16 and 120 TF32 with sparsity */
      if (!(fabs(g.peak_tf32_tflops - g.peak_tflops / 2) <=
            0.01 * g.peak_tflops))
        fail_msg("%s: TF32 %g, fp16 %g", half[i], g.peak_tf32_tflops,
                 g.peak_tflops);
    }
  }
  { /* a part's class must be 0, 1 or 2 */
    pp_model *m = NULL;
    assert_int_equal(one_part(ctx, "[1, 1, 2, 2, 3]", "p.json", &m), PP_EINPUT);
    assert_non_null(strstr(pp_ctx_errmsg(ctx), "p.json"));
    assert_non_null(strstr(pp_ctx_errmsg(ctx), "class"));
    pp_ctx_clear_error(ctx);
  }
}

/* NCHW (memory_format contiguous): cuDNN transposes every operand of a
** tensor-core convolution into NHWC and its result back ("The cuDNN
** library may use padding, folding, and NCHW-to-NHWC transformations to
** call the Tensor Core operations", cuDNN's Legacy API guide; PyTorch's
** default layout is NCHW, channels_last opt-in), so such a convolution's
** bytes move twice more; convolutions on SIMT cores (fp32 without TF32)
** and matmuls do not.  The flag survives the chain view and JSON, the
** generator's reference times include it, and bad values are refused. */
static void t_memory_format(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_type_key k = key_x(50, 1000);
  pp_model *m = conv_and_matmul_in(ctx, "Conv2d", PP_MF_CONTIGUOUS);
  pp_model *cl = conv_and_matmul(ctx, "Conv2d"), *v = NULL, *back = NULL;
  /* 2 x (1e6 fwd + 2e6 bwd bytes) at 1,000 GB/s x 0.8, in the model's
  ** fp16; an fp32 run moves twice the bytes */
  double tr = 2 * 3e6 / (1000 * 0.8 * 1e6);
  char path[512];
  size_t len;
  char *text;
  assert_int_equal(pp_model_memory_format(m), PP_MF_CONTIGUOUS);
  assert_int_equal(pp_model_memory_format(cl), PP_MF_CHANNELS_LAST);
  k.precision = PP_PREC_FP32; /* TF32 convolution, fp32 matmul */
  near(fwd(m, 0, &k, 1, 1), 3 * 40.0 + 2 * tr, "conv, TF32, NCHW");
  near(fwd(cl, 0, &k, 1, 1), 3 * 40.0, "conv, TF32, NHWC");
  near(fwd(m, 1, &k, 1, 1), 3 * 200.0, "matmul, fp32, NCHW");
  near(fwd(m, 0, &k, 2, 4), (3 * 40.0 + 2 * tr) * 2, "conv, tp 2, mbs 4");
  k.precision = PP_PREC_FP16;
  near(fwd(m, 0, &k, 1, 1), 3 * 20.0 + tr, "conv, fp16, NCHW");
  near(fwd(m, 1, &k, 1, 1), 3 * 20.0, "matmul, fp16, NCHW");
  k.precision = PP_PREC_BF16;
  near(fwd(m, 0, &k, 1, 1), 3 * 20.0 + tr, "conv, bf16, NCHW");
  k.precision = PP_PREC_FP32;
  k.peak_tf32_tflops = 0; /* Volta: SIMT kernels read NCHW as it is */
  near(fwd(m, 0, &k, 1, 1), 3 * 200.0, "conv, fp32 without TF32, NCHW");
  k.peak_tf32_tflops = 50;
  /* the chain view and its JSON keep the layout */
  assert_int_equal(pp_model_chain_view(ctx, m, 0, &v), PP_OK);
  assert_int_equal(pp_model_memory_format(v), PP_MF_CONTIGUOUS);
  near(total(v, &k), 3 * 240.0 + 2 * tr, "chain view, NCHW");
  snprintf(path, sizeof path, "%s", tu_tmp("roofline_nchw.json"));
  assert_int_equal(pp_model_write(ctx, v, path, NULL), PP_OK);
  text = tu_slurp(path, &len);
  assert_non_null(strstr(text, "\"memory_format\": \"contiguous\""));
  free(text);
  assert_int_equal(pp_model_load(ctx, path, &back), PP_OK);
  near(total(back, &k), 3 * 240.0 + 2 * tr, "chain view via JSON, NCHW");
  pp_model_destroy(back);
  pp_model_destroy(v);
  /* a channels_last model writes no field (older readers keep working) */
  assert_int_equal(pp_model_write(ctx, cl, path, NULL), PP_OK);
  text = tu_slurp(path, &len);
  assert_null(strstr(text, "memory_format"));
  free(text);
  pp_model_destroy(cl);
  pp_model_destroy(m);
  { /* the generator: its reference times (a key without a peak) agree
    ** with the roofline on its reference V100 in NCHW too, and the
    ** transposes cost on tensor cores, not on a V100 in fp32 */
    pp_model *a = NULL, *b = NULL;
    pp_type_key r = {0}, g = key_of(ctx, "V100");
    r.speed = 1;
    assert_int_equal(pp_model_load(ctx, "resnet:depth=50", &a), PP_OK);
    assert_int_equal(
        pp_model_load(ctx, "resnet:depth=50,memory_format=contiguous", &b),
        PP_OK);
    near(total(b, &g), total(b, &r), "resnet-50 NCHW on its reference V100");
    if (!(total(b, &g) > 1.1 * total(a, &g)))
      fail_msg("NCHW %g ms against NHWC %g ms on a V100 in fp16", total(b, &g),
               total(a, &g));
    g.precision = PP_PREC_FP32;
    near(total(b, &g), total(a, &g), "resnet-50 in fp32 on a V100");
    g = key_of(ctx, "A100-80");
    g.precision = PP_PREC_FP32; /* TF32 convolutions transpose */
    if (!(total(b, &g) > 1.1 * total(a, &g)))
      fail_msg("NCHW %g ms against NHWC %g ms on an A100 in fp32", total(b, &g),
               total(a, &g));
    pp_model_destroy(b);
    pp_model_destroy(a);
  }
  { /* the ONNX reader takes the option */
    char spec[1024];
    pp_model *o = NULL;
    snprintf(spec, sizeof spec, "%s:memory_format=contiguous",
             tu_path("tests/data/onnx/resnet50.onnx"));
    assert_int_equal(pp_model_load(ctx, spec, &o), PP_OK);
    assert_int_equal(pp_model_memory_format(o), PP_MF_CONTIGUOUS);
    pp_model_destroy(o);
  }
  { /* bad values name the file or the spec and the choices */
    pp_model *o = NULL;
    const char *text2 = "{\"name\": \"m\", \"memory_format\": \"nhwc\", "
                        "\"ops\": [{\"name\": \"a\", \"fwd_ms\": 1, "
                        "\"bwd_ms\": 2, \"param_bytes\": 0, \"out_bytes\": 1, "
                        "\"saved_bytes\": 0}], \"edges\": []}";
    tu_expect_error(
        ctx, pp_model_read_json(ctx, text2, strlen(text2), "q.json", &o),
        PP_EINPUT, "q.json", "memory_format", "\"nhwc\"", "contiguous", NULL);
    tu_expect_error(
        ctx, pp_model_load(ctx, "resnet:depth=50,memory_format=nhwc", &o),
        PP_EPARSE, "memory_format", "channels_last or contiguous", NULL);
    assert_null(pp_memory_format_name((pp_memory_format)2));
  }
}

/* How many roofline parts of class cls model m writes to JSON. */
static int count_class(pp_ctx *ctx, const pp_model *m, int cls)
{
  char path[512], needle[16];
  size_t len;
  char *text, *p;
  int n = 0;
  snprintf(path, sizeof path, "%s", tu_tmp("roofline_classes.json"));
  assert_int_equal(pp_model_write(ctx, m, path, NULL), PP_OK);
  text = tu_slurp(path, &len);
  snprintf(needle, sizeof needle, ", %d]", cls);
  for (p = text; (p = strstr(p, needle)) != NULL; p++)
    n++;
  free(text);
  return n;
}

/* A 3x3 stride-1 convolution (class 2) runs at least as fast as
** Winograd's F(2x2, 3x3) on the SIMT fp32 cores: 2.25 times fewer
** multiplications (Lavin and Gray, CVPR 2016), which cuDNN picks where it
** is the faster algorithm: in fp32 without TF32, not on tensor cores.
** Both ResNet-50 paths mark the same 13 convolutions (torchvision's v1.5:
** the 3x3 of every bottleneck but the three that stride). */
static void t_winograd(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = NULL, *back = NULL;
  pp_type_key k = key_x(50, 1e6);
  char path[512];
  /* the model JSON is the public way in for a part's class */
  assert_int_equal(one_part(ctx, "[1e12, 1e6, 2e12, 2e6, 2]", "w.json", &m),
                   PP_OK);
  k.precision = PP_PREC_FP32; /* TF32 (50) beats Winograd (22.5) */
  near(fwd(m, 0, &k, 1, 1), 3 * 40.0, "3x3 conv, TF32");
  k.peak_tf32_tflops = 0; /* Volta: Winograd, 2.25 x 10 */
  near(fwd(m, 0, &k, 1, 1), 3 * 1e12 / (0.5 * 22.5e12) * 1e3,
       "3x3 conv, fp32 without TF32");
  k.precision = PP_PREC_FP16; /* the tensor peak (100) */
  near(fwd(m, 0, &k, 1, 1), 3 * 20.0, "3x3 conv, fp16");
  k.precision = PP_PREC_FP32;
  k.peak_fp32_tflops = 0; /* no fp32 figure: no Winograd either */
  near(fwd(m, 0, &k, 1, 1), 3 * 1e12 / (0.5 * 100e12) * 1e3,
       "3x3 conv, fp32 peak unknown");
  k.peak_fp32_tflops = 10;
  /* the class goes through JSON */
  snprintf(path, sizeof path, "%s", tu_tmp("roofline_winograd.json"));
  assert_int_equal(pp_model_write(ctx, m, path, NULL), PP_OK);
  assert_int_equal(pp_model_load(ctx, path, &back), PP_OK);
  near(fwd(back, 0, &k, 1, 1), 3 * 1e12 / (0.5 * 22.5e12) * 1e3,
       "3x3 conv via JSON");
  assert_int_equal(count_class(ctx, back, 2), 1);
  pp_model_destroy(back);
  pp_model_destroy(m);
  { /* the two ResNet-50 paths */
    char spec[1024];
    pp_model *g = NULL, *o = NULL, *cv = NULL;
    snprintf(spec, sizeof spec, "%s", tu_path("tests/data/onnx/resnet50.onnx"));
    assert_int_equal(pp_model_load(ctx, "resnet:depth=50", &g), PP_OK);
    assert_int_equal(pp_model_load(ctx, spec, &o), PP_OK);
    assert_int_equal(count_class(ctx, g, 2), 13);
    assert_int_equal(count_class(ctx, o, 2), 13);
    /* the chain view keeps them */
    assert_int_equal(pp_model_chain_view(ctx, g, 0, &cv), PP_OK);
    assert_int_equal(count_class(ctx, cv, 2), 13);
    pp_model_destroy(cv);
    pp_model_destroy(o);
    pp_model_destroy(g);
  }
}

/* The two ResNet-50 paths: the generator's stored reference times are
** the roofline on its reference GPU, so the lookup on that GPU (the
** reference set) and the roofline on a copy of the type (a name without
** profiles) agree. */
static void t_reference_is_roofline(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = NULL;
  pp_type_key k = key_of(ctx, "V100");
  double ref, roof;
  pp_type_key r = {0};
  assert_int_equal(pp_model_load(ctx, "resnet:depth=50", &m), PP_OK);
  r.speed = 1;
  ref = total(m, &r); /* no peak: the stored reference times */
  roof = total(m, &k);
  near(roof, ref, "resnet-50 on its reference V100");
  pp_model_destroy(m);
  assert_int_equal(pp_model_load(ctx, "transformer:layers=4", &m), PP_OK);
  near(total(m, &k), total(m, &r), "transformer on its reference V100");
  pp_model_destroy(m);
}

/* Every catalog GPU has the figures the roofline needs. */
static void t_catalog(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  static const char *const all[] = {
      "V100",     "V100-16",  "V100-32",   "T4",     "A100-40",
      "A100-80",  "H100",     "H200",      "GH-96",  "B200",
      "GB200",    "A10",      "L4",        "L40S",   "RTX-2080",
      "RTX-3090", "RTX-4090", "Titan-RTX", "MI250X", "MI300X"};
  size_t i;
  for (i = 0; i < sizeof all / sizeof all[0]; i++) {
    pp_type_key k = key_of(ctx, all[i]);
    if (!(k.peak_tflops > k.peak_fp32_tflops && k.peak_fp32_tflops > 0 &&
          k.mem_gbps > 0 && k.speed > 0))
      fail_msg("%s: peak %g, fp32 %g, memory %g GB/s, speed %g", all[i],
               k.peak_tflops, k.peak_fp32_tflops, k.mem_gbps, k.speed);
  }
}

static pp_status load_text(pp_ctx *ctx, const char *text, pp_cluster **c)
{
  return pp_cluster_read_json(ctx, text, strlen(text), "c.json", c);
}

/* Cluster types: a catalog name takes its figures, a family name that is
** no member is refused, any other name is the user's own type, and the
** generators and machine-dump specs take mem=, speed=, peak=, peak32=
** and membw= overrides. */
static void t_cluster_types(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_cluster *c = NULL;
  pp_type_key k;
  const char *dev = "\"devices\": [{\"name\": \"d0\", \"type\": \"%s\", "
                    "\"node\": 0}], \"bandwidth_GBps\": [[0]]}";
  char text[512];
  snprintf(text, sizeof text, "{\"device_types\": {\"H200\": {}}, ");
  snprintf(text + strlen(text), sizeof text - strlen(text), dev, "H200");
  assert_int_equal(load_text(ctx, text, &c), PP_OK);
  k = pp_cluster_type_key(c, 0);
  near(k.mem_gbps, 4800, "H200 bandwidth");
  near(k.peak_tflops, 989, "H200 peak");
  assert_true(pp_cluster_type_memory(c, 0) > (int64_t)140 << 30);
  pp_cluster_destroy(c);
  c = NULL;
  snprintf(text, sizeof text,
           "{\"device_types\": {\"A100\": {\"memory_gb\": 40}}, ");
  snprintf(text + strlen(text), sizeof text - strlen(text), dev, "A100");
  assert_int_equal(load_text(ctx, text, &c), PP_EINPUT);
  assert_non_null(strstr(pp_ctx_errmsg(ctx), "A100-40, A100-80"));
  assert_non_null(strstr(pp_ctx_errmsg(ctx), "c.json"));
  pp_ctx_clear_error(ctx);
  snprintf(text, sizeof text,
           "{\"device_types\": {\"mygpu\": {\"memory_gb\": 40, \"speed\": 2, "
           "\"mem_gbps\": 700, \"peak_fp32_tflops\": 20}}, ");
  snprintf(text + strlen(text), sizeof text - strlen(text), dev, "mygpu");
  assert_int_equal(load_text(ctx, text, &c), PP_OK);
  k = pp_cluster_type_key(c, 0);
  near(k.mem_gbps, 700, "given bandwidth");
  near(k.peak_fp32_tflops, 20, "given fp32 peak");
  near(k.peak_tf32_tflops, 0, "no TF32 peak given");
  pp_cluster_destroy(c);
  c = NULL;
  { /* the TF32 peak: given, or refused when negative */
    static const char *const given[] = {"100", "-1"};
    int g;
    for (g = 0; g < 2; g++) {
      snprintf(text, sizeof text,
               "{\"device_types\": {\"A100-80\": {\"peak_tf32_tflops\": "
               "%s}}, ",
               given[g]);
      snprintf(text + strlen(text), sizeof text - strlen(text), dev, "A100-80");
      assert_int_equal(load_text(ctx, text, &c), g ? PP_EINPUT : PP_OK);
      if (g) {
        assert_non_null(strstr(pp_ctx_errmsg(ctx), "peak_tf32_tflops"));
        pp_ctx_clear_error(ctx);
        continue;
      }
      k = pp_cluster_type_key(c, 0);
      near(k.peak_tf32_tflops, 100, "given TF32 peak");
      near(k.peak_fp32_tflops, 19.5, "A100 fp32 peak kept");
      pp_cluster_destroy(c);
      c = NULL;
    }
  }
  assert_int_equal(
      pp_cluster_load(ctx, "hier:1x1,gpu=A100-40,peak_tf32=77", &c), PP_OK);
  near(pp_cluster_type_key(c, 0).peak_tf32_tflops, 77, "peak_tf32=");
  pp_cluster_destroy(c);
  c = NULL;
  assert_int_equal(
      pp_cluster_load(ctx, "hier:1x2,gpu=L40S,membw=900,peak32=80", &c), PP_OK);
  k = pp_cluster_type_key(c, 1);
  near(k.mem_gbps, 900, "membw=");
  near(k.peak_fp32_tflops, 80, "peak32=");
  near(k.peak_tflops, 362, "L40S peak");
  pp_cluster_destroy(c);
  c = NULL;
  {
    char spec[512];
    snprintf(spec, sizeof spec,
             "%s:gpu=V100,mem=30,membw=1000,peak32=14,peak=120,speed=1.5",
             tu_path("examples/nvsmi-dgx1.txt"));
    assert_int_equal(pp_cluster_load(ctx, spec, &c), PP_OK);
    k = pp_cluster_type_key(c, 0);
    near(k.mem_gbps, 1000, "file spec membw=");
    near(k.peak_fp32_tflops, 14, "file spec peak32=");
    near(k.peak_tflops, 120, "file spec peak=");
    near(k.speed, 1.5, "file spec speed=");
    assert_true(pp_cluster_type_memory(c, 0) == (int64_t)30 << 30);
    pp_cluster_destroy(c);
    c = NULL;
  }
  assert_int_equal(pp_cluster_load(ctx, "hier:1x2,gpu=A100", &c), PP_EINPUT);
  assert_non_null(strstr(pp_ctx_errmsg(ctx), "known:"));
  pp_ctx_clear_error(ctx);
  {
    pp_model *m = NULL;
    assert_int_equal(pp_model_load(ctx, "transformer:layers=1,gpu=A100", &m),
                     PP_EINPUT);
    assert_non_null(strstr(pp_ctx_errmsg(ctx), "A100-40, A100-80"));
    pp_ctx_clear_error(ctx);
    assert_int_equal(pp_model_load(ctx, "resnet:depth=50,gpu=H300", &m),
                     PP_EINPUT);
    assert_non_null(strstr(pp_ctx_errmsg(ctx), "MI300X"));
    pp_ctx_clear_error(ctx);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      TU_CTX_TEST(t_max_of_terms),          TU_CTX_TEST(t_chain_keeps_parts),
      TU_CTX_TEST(t_reference_is_roofline), TU_CTX_TEST(t_catalog),
      TU_CTX_TEST(t_cluster_types),         TU_CTX_TEST(t_tf32_convolutions),
      TU_CTX_TEST(t_memory_format),         TU_CTX_TEST(t_winograd),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
