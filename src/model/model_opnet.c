/* SPDX-License-Identifier: MIT */
/*
** Operator-level model generators: ResNet (50, 101, 152), BERT, a
** Swin-like hierarchical vision transformer and an FPN segmentation
** network (ResNet backbone, top-down pathway with lateral skip
** connections, semantic head as in SemanticFPN), one operator per
** framework operation (convolution, batch norm, ReLU, add, matmul,
** softmax, layer norm, reshape, ...), with the edges of their dataflow.
**
** Costs: FLOPs from the shapes (a convolution 2 Cin Cout k^2 Ho Wo per
** sample; a matmul 2 m n k; 2 FLOPs per multiply-add), backward twice the
** forward; memory traffic the elements an operator reads and writes, 2
** bytes each, backward twice the forward; time the roofline
** (ppi_roofline_ms, docs/COST_MODEL.md "Roofline"): the larger of FLOPs
** over the reference GPU's peak at the efficiency and bytes over its
** memory bandwidth (both from the catalog), since element-wise
** operators are memory-bound.  The same fields give every other device
** type its own roofline time (pp_model_op_time), as for ONNX imports.
** Bytes:
** fp16 activations (2 per element) from the output shapes; saved bytes
** are what the operator keeps for its backward (a convolution or matmul
** its input, batch norm and layer norm their input, ReLU/GELU their
** output, softmax its output, dropout a byte mask); parameters in fp16.
** Every figure scales with the batch; the model's micro-batch is it.
**
** Complexity: O(operators).
*/
#include "model/model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

struct gb {
  pp_model_builder *b;
  const struct ppi_gpu *gpu; /* the reference type */
  double eff;
  double batch;
  bool nchw;  /* PP_MF_CONTIGUOUS: the reference times add transposes */
  double cls; /* the class of the next operator's roofline part (0: none) */
  pp_status rc;
};

void ppi_opnet_params_init(struct ppi_opnet_params *p, const char *kind)
{
  memset(p, 0, sizeof *p);
  p->kind = kind;
  p->type = "V100";
  p->efficiency = PPI_DEFAULT_EFFICIENCY;
  p->batch = 32;
  p->image = 224;
  p->depth = 50;
  p->layers = 24;
  p->hidden = 1024;
  p->heads = 16;
  p->seq = 512;
  p->vocab = 30522;
  p->embed = 192;
  p->window = 7;
  p->channels = 256;
  p->stages[0] = 2;
  p->stages[1] = 2;
  p->stages[2] = 18;
  p->stages[3] = 2;
  if (!strcmp(kind, "fpn")) {
    p->batch = 8;
    p->image = 512;
  } else if (!strcmp(kind, "bert")) {
    p->batch = 8;
  }
}

/* Add an operator; elements are per sample, FLOPs per sample; returns its
** index (or -1 after an error, which stays in g->rc). */
static int32_t op(struct gb *g, const char *name, const char *kind,
                  double flops, double params, double out, double saved,
                  double moved, const int32_t *in, int nin)
{
  pp_op_desc d;
  int32_t id = -1, i;
  double t, pk;
  if (g->rc)
    return -1;
  pp_op_desc_init(&d);
  d.name = name;
  d.kind = kind;
  d.fwd_flops = flops * g->batch;
  d.bwd_flops = 2 * d.fwd_flops;
  d.fwd_bytes = moved * 2 * g->batch;
  d.bwd_bytes = 2 * d.fwd_bytes;
  pk = ppi_conv_peak(g->cls, g->gpu->peak_tflops, g->gpu->peak_fp32_tflops);
  t = ppi_roofline_ms(d.fwd_flops, d.fwd_bytes, pk, g->eff, g->gpu->mem_gbps);
  /* the reference times are fp16, on tensor cores unless Winograd on the
  ** fp32 cores is faster: what roof_time gives the same operator on the
  ** reference type (model_time.c) */
  if (g->nchw && ppi_kind_is_conv(kind) && pk == g->gpu->peak_tflops)
    t += ppi_transpose_ms(d.fwd_bytes, g->gpu->mem_gbps);
  d.fwd_ms = t;
  d.bwd_ms = 2 * t;
  d.param_bytes = (int64_t)(params * 2);
  d.out_bytes = (int64_t)(out * 2 * g->batch);
  d.saved_bytes = (int64_t)(saved * g->batch);
  if ((g->rc = pp_model_builder_add_op(g->b, &d, &id)))
    return -1;
  if (g->cls != 0 && (g->rc = ppi_model_builder_set_class(g->b, id, g->cls)))
    return -1;
  for (i = 0; i < nin; i++)
    if ((g->rc = pp_model_builder_add_edge(g->b, in[i], id, -1)))
      return -1;
  return id;
}

/* ---- convolutional nets ----------------------------------------------- */

struct fmap {
  int32_t id;
  double c, h, w;
};

static struct fmap conv(struct gb *g, const char *pre, struct fmap x,
                        double cout, int k, int stride)
{
  char name[256];
  struct fmap y = {0, cout, ceil(x.h / stride), ceil(x.w / stride)};
  double in = x.c * x.h * x.w, out = cout * y.h * y.w;
  snprintf(name, sizeof name, "%s.conv%dx%d", pre, k, k);
  g->cls = k == 3 && stride == 1 ? PPI_CONV_WINOGRAD : 0;
  y.id = op(g, name, "Conv2d", 2 * x.c * cout * k * k * y.h * y.w,
            x.c * cout * k * k, out, 2 * in, in + out, &x.id, 1);
  g->cls = 0;
  return y;
}

static struct fmap unary(struct gb *g, const char *pre, const char *kind,
                         struct fmap x, double params, double flops_per,
                         double saved_per)
{
  char name[256];
  double n = x.c * x.h * x.w;
  struct fmap y = x;
  snprintf(name, sizeof name, "%s.%s", pre, kind);
  y.id = op(g, name, kind, flops_per * n, params, n, saved_per * n, 2 * n,
            &x.id, 1);
  return y;
}

static struct fmap bn(struct gb *g, const char *pre, struct fmap x)
{
  return unary(g, pre, "BatchNorm2d", x, 2 * x.c, 8, 2);
}

static struct fmap relu(struct gb *g, const char *pre, struct fmap x)
{
  return unary(g, pre, "ReLU", x, 0, 1, 2);
}

static struct fmap add2(struct gb *g, const char *pre, struct fmap a,
                        struct fmap b)
{
  char name[256];
  int32_t in[2] = {a.id, b.id};
  double n = a.c * a.h * a.w;
  struct fmap y = a;
  snprintf(name, sizeof name, "%s.add", pre);
  y.id = op(g, name, "Add", n, 0, n, 0, 3 * n, in, 2);
  return y;
}

/* conv -> bn [-> relu] */
static struct fmap cbr(struct gb *g, const char *pre, struct fmap x, double c,
                       int k, int s, bool act)
{
  x = bn(g, pre, conv(g, pre, x, c, k, s));
  return act ? relu(g, pre, x) : x;
}

/* A ResNet-50/101/152 backbone; c2..c5 get the stage outputs. */
static struct fmap resnet(struct gb *g, int depth, double image,
                          struct fmap *cs)
{
  static const int blocks50[4] = {3, 4, 6, 3}, blocks101[4] = {3, 4, 23, 3},
                   blocks152[4] = {3, 8, 36, 3};
  const int *nb = depth == 152   ? blocks152
                  : depth == 101 ? blocks101
                                 : blocks50;
  char pre[64];
  struct fmap x = {0, 3, image, image};
  int st, b;
  x.id = op(g, "input", "input", 0, 0, 3 * image * image, 0, 0, NULL, 0);
  x = cbr(g, "stem", x, 64, 7, 2, true);
  {
    struct fmap y = {0, 64, ceil(x.h / 2), ceil(x.w / 2)};
    double n = 64 * y.h * y.w;
    y.id = op(g, "stem.maxpool", "MaxPool2d", 9 * n, 0, n, x.c * x.h * x.w,
              x.c * x.h * x.w + n, &x.id, 1);
    x = y;
  }
  for (st = 0; st < 4; st++) {
    double width = 64 << st, out = 4 * width;
    for (b = 0; b < nb[st]; b++) {
      struct fmap y, sc = x;
      int stride = b == 0 && st > 0 ? 2 : 1;
      snprintf(pre, sizeof pre, "layer%d.%d.a", st + 1, b);
      y = cbr(g, pre, x, width, 1, 1, true);
      snprintf(pre, sizeof pre, "layer%d.%d.b", st + 1, b);
      y = cbr(g, pre, y, width, 3, stride, true);
      snprintf(pre, sizeof pre, "layer%d.%d.c", st + 1, b);
      y = cbr(g, pre, y, out, 1, 1, false);
      if (b == 0) {
        snprintf(pre, sizeof pre, "layer%d.%d.downsample", st + 1, b);
        sc = cbr(g, pre, x, out, 1, stride, false);
      }
      snprintf(pre, sizeof pre, "layer%d.%d", st + 1, b);
      x = relu(g, pre, add2(g, pre, y, sc));
    }
    if (cs)
      cs[st] = x;
  }
  return x;
}

static pp_status build_resnet(struct gb *g, const struct ppi_opnet_params *p)
{
  struct fmap x = resnet(g, p->depth, p->image, NULL);
  int32_t pool, fc;
  pool = op(g, "avgpool", "AvgPool2d", x.c * x.h * x.w, 0, x.c, 0,
            x.c * x.h * x.w, &x.id, 1);
  fc = op(g, "fc", "Linear", 2 * x.c * 1000, x.c * 1000 + 1000, 1000, 2 * x.c,
          x.c + 1000, &pool, 1);
  (void)fc;
  return g->rc;
}

/* SemanticFPN: lateral 1x1 convs on c2..c5, top-down upsample + add,
** 3x3 output convs, a semantic head that brings every level to 1/4 and
** sums them. */
static pp_status build_fpn(struct gb *g, const struct ppi_opnet_params *p)
{
  struct fmap cs[4], lat[4], pn[4], head[4], sum;
  char pre[64];
  int i, k;
  double C = p->channels;
  resnet(g, p->depth, p->image, cs);
  for (i = 3; i >= 0; i--) {
    snprintf(pre, sizeof pre, "fpn.lateral%d", i + 2);
    lat[i] = conv(g, pre, cs[i], C, 1, 1);
    if (i < 3) {
      struct fmap up = lat[i];
      double n = C * lat[i].h * lat[i].w;
      snprintf(pre, sizeof pre, "fpn.up%d", i + 3);
      up.id = op(g, pre, "Upsample", n, 0, n, 0, 2 * n, &pn[i + 1].id, 1);
      snprintf(pre, sizeof pre, "fpn.merge%d", i + 2);
      lat[i] = add2(g, pre, lat[i], up);
    }
    pn[i] = lat[i];
  }
  for (i = 0; i < 4; i++) {
    snprintf(pre, sizeof pre, "fpn.out%d", i + 2);
    head[i] = conv(g, pre, pn[i], C, 3, 1);
    /* semantic head: i up-sampling steps (conv, norm, relu, x2) */
    for (k = 0; k < (i > 0 ? i : 1); k++) {
      struct fmap y;
      snprintf(pre, sizeof pre, "sem.p%d.%d", i + 2, k);
      y = cbr(g, pre, head[i], C / 2, 3, 1, true);
      if (i > 0) {
        double n = y.c * y.h * y.w * 4;
        struct fmap u = {0, y.c, y.h * 2, y.w * 2};
        snprintf(pre, sizeof pre, "sem.p%d.%d.up", i + 2, k);
        u.id = op(g, pre, "Upsample", n, 0, n, 0, 1.25 * n, &y.id, 1);
        y = u;
      }
      head[i] = y;
    }
  }
  sum = head[0];
  for (i = 1; i < 4; i++) {
    snprintf(pre, sizeof pre, "sem.sum%d", i);
    sum = add2(g, pre, sum, head[i]);
  }
  sum = conv(g, "sem.logits", sum, 150, 1, 1);
  {
    /* in doubles: 150 x 8192^2 overflows an int (fuzz_spec's finding) */
    double n = 150.0 * p->image * p->image;
    op(g, "sem.upsample", "Upsample", n, 0, n, 0, 1.06 * n, &sum.id, 1);
  }
  return g->rc;
}

/* ---- transformers ----------------------------------------------------- */

struct tok {
  int32_t id;
  double n, h; /* tokens, width */
};

static struct tok tun(struct gb *g, const char *pre, const char *kind,
                      struct tok x, double params, double flops_per,
                      double saved_per)
{
  char name[256];
  double n = x.n * x.h;
  snprintf(name, sizeof name, "%s.%s", pre, kind);
  x.id = op(g, name, kind, flops_per * n, params, n, saved_per * n, 2 * n,
            &x.id, 1);
  return x;
}

static struct tok linear(struct gb *g, const char *pre, struct tok x,
                         double out)
{
  char name[256];
  struct tok y = {0, x.n, out};
  snprintf(name, sizeof name, "%s", pre);
  y.id = op(g, name, "Linear", 2 * x.n * x.h * out, x.h * out + out, x.n * out,
            2 * x.n * x.h, x.n * (x.h + out), &x.id, 1);
  return y;
}

static struct tok tadd(struct gb *g, const char *pre, struct tok a,
                       struct tok b)
{
  char name[256];
  int32_t in[2] = {a.id, b.id};
  double n = a.n * a.h;
  snprintf(name, sizeof name, "%s.add", pre);
  a.id = op(g, name, "Add", n, 0, n, 0, 3 * n, in, 2);
  return a;
}

/* One transformer block over x (n tokens of width h, attention within
** windows of `win' tokens, heads a): pre- or post-norm. */
static struct tok block(struct gb *g, const char *pre, struct tok x, double a,
                        double win, bool prenorm, double mlp)
{
  char n1[128];
  struct tok q, k, v, s, ctx, o, h1, y = x;
  double h = x.h, nwin = x.n / win;
  int32_t in2[2];
  if (prenorm) {
    snprintf(n1, sizeof n1, "%s.norm1", pre);
    y = tun(g, n1, "LayerNorm", x, 2 * h, 8, 2);
  }
  snprintf(n1, sizeof n1, "%s.attn.q", pre);
  q = linear(g, n1, y, h);
  snprintf(n1, sizeof n1, "%s.attn.k", pre);
  k = linear(g, n1, y, h);
  snprintf(n1, sizeof n1, "%s.attn.v", pre);
  v = linear(g, n1, y, h);
  /* scores: per window and head, win x win */
  in2[0] = q.id;
  in2[1] = k.id;
  snprintf(n1, sizeof n1, "%s.attn.scores", pre);
  s.n = nwin * a * win;
  s.h = win;
  s.id = op(g, n1, "MatMul", 2 * x.n * win * h, 0, s.n * s.h, 2 * 2 * x.n * h,
            2 * x.n * h + s.n * s.h, in2, 2);
  s = tun(g, n1, "Softmax", s, 0, 5, 2);
  s = tun(g, n1, "Dropout", s, 0, 1, 1);
  in2[0] = s.id;
  in2[1] = v.id;
  snprintf(n1, sizeof n1, "%s.attn.context", pre);
  ctx.n = x.n;
  ctx.h = h;
  ctx.id = op(g, n1, "MatMul", 2 * x.n * win * h, 0, x.n * h,
              2 * (s.n * s.h + x.n * h), s.n * s.h + 2 * x.n * h, in2, 2);
  snprintf(n1, sizeof n1, "%s.attn.proj", pre);
  o = linear(g, n1, ctx, h);
  o = tun(g, n1, "Dropout", o, 0, 1, 1);
  h1 = tadd(g, pre, x, o);
  if (!prenorm) {
    snprintf(n1, sizeof n1, "%s.norm1", pre);
    h1 = tun(g, n1, "LayerNorm", h1, 2 * h, 8, 2);
  }
  y = h1;
  if (prenorm) {
    snprintf(n1, sizeof n1, "%s.norm2", pre);
    y = tun(g, n1, "LayerNorm", h1, 2 * h, 8, 2);
  }
  snprintf(n1, sizeof n1, "%s.mlp.fc1", pre);
  y = linear(g, n1, y, mlp * h);
  y = tun(g, n1, "GELU", y, 0, 8, 2);
  snprintf(n1, sizeof n1, "%s.mlp.fc2", pre);
  y = linear(g, n1, y, h);
  y = tun(g, n1, "Dropout", y, 0, 1, 1);
  snprintf(n1, sizeof n1, "%s.mlp", pre);
  y = tadd(g, n1, h1, y);
  if (!prenorm) {
    snprintf(n1, sizeof n1, "%s.norm2", pre);
    y = tun(g, n1, "LayerNorm", y, 2 * h, 8, 2);
  }
  return y;
}

static pp_status build_bert(struct gb *g, const struct ppi_opnet_params *p)
{
  struct tok x = {0, p->seq, p->hidden}, pos, typ;
  double h = p->hidden;
  char pre[64];
  int l;
  int32_t in3[3];
  x.id = op(g, "embeddings.word", "Embedding", 0, p->vocab * h, p->seq * h,
            p->seq * 8, p->seq * h, NULL, 0);
  pos.id = op(g, "embeddings.position", "Embedding", 0, 512 * h, p->seq * h, 0,
              p->seq * h, NULL, 0);
  typ.id = op(g, "embeddings.token_type", "Embedding", 0, 2 * h, p->seq * h, 0,
              p->seq * h, NULL, 0);
  in3[0] = x.id;
  in3[1] = pos.id;
  in3[2] = typ.id;
  x.id = op(g, "embeddings.add", "Add", 2 * p->seq * h, 0, p->seq * h, 0,
            4 * p->seq * h, in3, 3);
  x = tun(g, "embeddings", "LayerNorm", x, 2 * h, 8, 2);
  x = tun(g, "embeddings", "Dropout", x, 0, 1, 1);
  for (l = 0; l < p->layers; l++) {
    snprintf(pre, sizeof pre, "encoder.layer%d", l);
    x = block(g, pre, x, p->heads, p->seq, false, 4);
  }
  {
    struct tok cls = {0, 1, h};
    cls.id = op(g, "pooler.select", "Select", 0, 0, h, 0, h, &x.id, 1);
    cls = linear(g, "pooler.dense", cls, h);
    cls = tun(g, "pooler", "Tanh", cls, 0, 4, 2);
    linear(g, "classifier", cls, 2);
  }
  return g->rc;
}

static pp_status build_swin(struct gb *g, const struct ppi_opnet_params *p)
{
  double img = p->image, side = p->image / 4, C = p->embed,
         win = (double)p->window * p->window;
  struct tok x = {0, side * side, C};
  char pre[64];
  int st, b;
  int32_t in;
  in = op(g, "input", "input", 0, 0, 3 * img * img, 0, 0, NULL, 0);
  x.id = op(g, "patch_embed.conv4x4", "Conv2d", 2 * 3 * C * 16 * x.n,
            3 * C * 16 + C, x.n * C, 2 * 3 * img * img, 3 * img * img + x.n * C,
            &in, 1);
  x = tun(g, "patch_embed", "LayerNorm", x, 2 * C, 8, 2);
  for (st = 0; st < 4; st++) {
    double heads = C / 32; /* Swin-L: 6, 12, 24, 48 heads at embed 192 */
    for (b = 0; b < p->stages[st]; b++) {
      snprintf(pre, sizeof pre, "stage%d.block%d", st + 1, b);
      if (b % 2) { /* shifted windows: a roll before and after */
        x = tun(g, pre, "Roll", x, 0, 0, 0);
      }
      x = block(g, pre, x, heads, win < x.n ? win : x.n, true, 4);
      if (b % 2) {
        snprintf(pre, sizeof pre, "stage%d.block%d.unroll", st + 1, b);
        x = tun(g, pre, "Roll", x, 0, 0, 0);
      }
    }
    if (st < 3) { /* patch merging: 2x2 tokens -> 1, width x2 */
      struct tok y = {0, x.n / 4, 4 * C};
      snprintf(pre, sizeof pre, "stage%d.merge", st + 1);
      y.id = op(g, pre, "Reshape", 0, 0, y.n * y.h, 0, 2 * x.n * x.h, &x.id, 1);
      y = tun(g, pre, "LayerNorm", y, 2 * y.h, 8, 2);
      snprintf(pre, sizeof pre, "stage%d.merge.reduction", st + 1);
      x = linear(g, pre, y, 2 * C);
      C *= 2;
    }
  }
  x = tun(g, "head", "LayerNorm", x, 2 * C, 8, 2);
  {
    struct tok pooled = {0, 1, C};
    pooled.id =
        op(g, "head.avgpool", "AvgPool", x.n * C, 0, C, 0, x.n * C, &x.id, 1);
    linear(g, "head.fc", pooled, 1000);
  }
  return g->rc;
}

pp_status ppi_model_opnet(pp_ctx *ctx, const struct ppi_opnet_params *p,
                          const char *source, pp_model **out)
{
  const struct ppi_gpu *gpu = ppi_gpu_find(p->type);
  struct gb g;
  pp_status rc;
  int st;

  *out = NULL;
  if (!gpu) {
    char list[512];
    ppi_gpu_names(list, sizeof list);
    return ppi_fail_at(ctx, PP_EINPUT, source, 0, 0,
                       "unknown GPU '%s' for the reference times (known: %s)",
                       p->type, list);
  }
  if (!(p->efficiency > 0 && p->efficiency <= 1))
    return ppi_fail_at(ctx, PP_EINPUT, source, 0, 0,
                       "efficiency must be in (0, 1], not %g", p->efficiency);
  if (p->batch < 1 || p->image < 32 || p->image > 8192 || p->layers < 1 ||
      p->layers > 10000 || p->hidden < 1 || p->heads < 1 || p->seq < 1 ||
      p->seq > 65536 || p->embed < 32 || p->window < 1 || p->channels < 1 ||
      p->vocab < 1)
    return ppi_fail_at(ctx, PP_EINPUT, source, 0, 0,
                       "sizes out of range (batch >= 1, image 32..8192, "
                       "layers 1..10000, seq 1..65536, embed >= 32)");
  if (!strcmp(p->kind, "resnet") || !strcmp(p->kind, "fpn")) {
    if (p->depth != 50 && p->depth != 101 && p->depth != 152)
      return ppi_fail_at(ctx, PP_EINPUT, source, 0, 0,
                         "depth is 50, 101 or 152, not %d", (int)p->depth);
  }
  if (!strcmp(p->kind, "bert") && p->hidden % p->heads)
    return ppi_fail_at(ctx, PP_EINPUT, source, 0, 0,
                       "hidden %d is not a multiple of heads %d",
                       (int)p->hidden, (int)p->heads);
  if (!strcmp(p->kind, "swin"))
    for (st = 0; st < 4; st++)
      if (p->stages[st] < 1 || p->stages[st] > 500)
        return ppi_fail_at(ctx, PP_EINPUT, source, 0, 0,
                           "swin stages take 1..500 blocks each");
  memset(&g, 0, sizeof g);
  g.gpu = gpu;
  g.eff = p->efficiency;
  g.batch = p->batch;
  g.nchw = p->memory_format == PP_MF_CONTIGUOUS;
  if ((rc = pp_model_builder_create(ctx, p->kind, source, &g.b)) ||
      (rc = pp_model_builder_set_memory_format(g.b, p->memory_format)) ||
      (rc = pp_model_builder_set_micro_batch(g.b, p->batch)) ||
      (rc = pp_model_builder_set_reference_type(g.b, gpu->name)) ||
      (rc = pp_model_builder_set_efficiency(g.b, p->efficiency)) ||
      (rc = pp_model_builder_set_dtype(g.b, PP_PREC_FP16))) /* 2 bytes */
    goto done;
  if (!strcmp(p->kind, "resnet"))
    rc = build_resnet(&g, p);
  else if (!strcmp(p->kind, "fpn"))
    rc = build_fpn(&g, p);
  else if (!strcmp(p->kind, "bert"))
    rc = build_bert(&g, p);
  else if (!strcmp(p->kind, "swin"))
    rc = build_swin(&g, p);
  else
    rc = ppi_fail(ctx, PP_EINVAL, "unknown generator '%s'", p->kind);
  if (rc)
    goto done;
  rc = pp_model_builder_finish(g.b, out);
  g.b = NULL;
done:
  pp_model_builder_destroy(g.b);
  return rc;
}
