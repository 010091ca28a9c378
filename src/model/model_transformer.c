/* SPDX-License-Identifier: MIT */
/*
** The parametric transformer: a GPT-style decoder described by its
** hyper-parameters, turned into an operator chain (embedding, L layers,
** final norm, logits) with FLOPs, parameters and activation bytes, and
** times from FLOPs over the reference GPU's peak times an efficiency.
**
** Per sample of s tokens, hidden h, FFN width f, heads a, vocab V
** (Narayanan et al., SC'21, with f = 4h this is 24sh^2 + 4s^2h):
**   layer forward FLOPs   8sh^2 + 4shf + 4s^2h; backward twice that;
**   layer parameters      4h^2 + 2hf + 9h + f (weights, biases, 2 LNs);
**   layer saved bytes     sh(18 + 5as/h) + 4sf in fp16 (Korthikanti et
**                         al., MLSys'23, eq. 1 with the MLP width kept);
**   logits forward FLOPs  2shV; saved: its fp16 input and fp32 logits.
** Every figure scales with the micro-batch b.  Because ops carry FLOPs,
** a device type with a known peak gets its own roofline times
** (pp_model_op_time, PP_EST_FLOPS) instead of a speed ratio.
**
** Roofline (docs/COST_MODEL.md, "Roofline"): a layer is two parts, its
** matmuls and its memory-bound operators, each timed by the larger of
** FLOPs over the peak and bytes over the memory bandwidth, and added.
** Memory traffic per sample, in elements (e bytes each), of the eager
** PyTorch/Megatron layer (Korthikanti et al. list the same tensors):
**   matmuls: QKV reads sh writes 3sh; QK^T reads 2sh writes as^2; AV
**     reads as^2 + sh writes sh; projection sh -> sh; FC1 sh -> sf;
**     FC2 sf -> sh; weights 4h^2 + 2hf: 12sh + 2as^2 + 2sf + 4h^2 + 2hf;
**   memory-bound: two LayerNorms (read and write sh each), scale-mask-
**     softmax (as^2 -> as^2), attention dropout (as^2 -> as^2, plus a
**     1-byte mask), GELU (sf -> sf), two dropout + residual adds (read
**     2sh, write sh, plus a mask): e(10sh + 4as^2 + 2sf) + as^2 + 2sh
**     bytes (their FLOPs, a few per element, are left out, so the
**     layer's FLOPs are the matmuls', the usual model-FLOPs count);
**   backward: twice the FLOPs and twice the traffic of each part (it
**     reads the output gradient and the saved inputs and writes the
**     input and weight gradients).
** The logits are one matmul part (reads sh and hV, writes sV fp32).
*/
#include "model/model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void ppi_transformer_params_init(struct ppi_transformer_params *p)
{
  memset(p, 0, sizeof *p);
  p->layers = 24;
  p->hidden = 1024;
  p->heads = 16;
  p->seq = 1024;
  p->vocab = 50257;
  p->micro_batch = 1;
  p->bytes_per_elem = 2;
  p->type = "V100";
  p->efficiency = PPI_DEFAULT_EFFICIENCY;
  p->tie_embeddings = true;
}

pp_status ppi_model_transformer(pp_ctx *ctx,
                                const struct ppi_transformer_params *p,
                                const char *source, pp_model **out)
{
  const struct ppi_gpu *gpu = ppi_gpu_find(p->type);
  double s = p->seq, h = p->hidden, a = p->heads, V = p->vocab,
         b = p->micro_batch, e = p->bytes_per_elem;
  double f = p->ffn > 0 ? p->ffn : 4.0 * p->hidden;
  double biggest, mm[PPI_PART] = {0}, el[PPI_PART] = {0}; /* not convs */
  pp_model_builder *bld = NULL;
  pp_op_desc d;
  char name[32];
  int32_t i, emb = 0, id;
  pp_status rc;

  *out = NULL;
  if (!gpu) {
    char list[512];
    ppi_gpu_names(list, sizeof list);
    return ppi_fail_at(ctx, PP_EINPUT, source, 0, 0,
                       "unknown GPU '%s' for the reference times (known: %s)",
                       p->type, list);
  }
  if (p->layers < 1 || p->hidden < 1 || p->heads < 1 || p->seq < 1 ||
      p->vocab < 1 || p->micro_batch < 1 || p->bytes_per_elem < 1)
    return ppi_fail_at(ctx, PP_EINPUT, source, 0, 0,
                       "layers, hidden, heads, seq, vocab, mbs and bytes "
                       "must be positive");
  if (p->bytes_per_elem != 2 && p->bytes_per_elem != 4)
    return ppi_fail_at(ctx, PP_EINPUT, source, 0, 0,
                       "bytes=%d: an element is 2 bytes (fp16) or 4 (fp32)",
                       (int)p->bytes_per_elem);
  if (p->hidden % p->heads != 0)
    return ppi_fail_at(ctx, PP_EINPUT, source, 0, 0,
                       "hidden %d is not a multiple of heads %d",
                       (int)p->hidden, (int)p->heads);
  if (!(p->efficiency > 0 && p->efficiency <= 1))
    return ppi_fail_at(ctx, PP_EINPUT, source, 0, 0,
                       "efficiency must be in (0, 1], not %g", p->efficiency);
  if (p->layers > 100000)
    return ppi_fail_at(ctx, PP_ELIMIT, source, 0, 0, "more than 100000 layers");
  /* The largest byte count must fit the model's 63-bit sizes. */
  biggest = fmax(b * s * (4 * V + 18 * h + 5 * a * s + 4 * f) * e,
                 (4 * h * h + 2 * h * f + V * h) * e);
  if (!(biggest < 4e18))
    return ppi_fail_at(ctx, PP_ELIMIT, source, 0, 0, "sizes exceed 4e18 bytes");

  if ((rc = pp_model_builder_create(ctx, "transformer", source, &bld)) ||
      (rc = pp_model_builder_set_micro_batch(bld, p->micro_batch)) ||
      (rc = pp_model_builder_set_reference_type(bld, gpu->name)) ||
      (rc = pp_model_builder_set_efficiency(bld, p->efficiency)) ||
      (rc = pp_model_builder_set_dtype(
           bld, p->bytes_per_elem == 4 ? PP_PREC_FP32 : PP_PREC_FP16)) ||
      (rc = pp_model_builder_set_hyper(bld, "layers", p->layers)) ||
      (rc = pp_model_builder_set_hyper(bld, "hidden", p->hidden)) ||
      (rc = pp_model_builder_set_hyper(bld, "heads", p->heads)) ||
      (rc = pp_model_builder_set_hyper(bld, "seq", p->seq)) ||
      (rc = pp_model_builder_set_hyper(bld, "vocab", p->vocab)) ||
      (rc = pp_model_builder_set_hyper(bld, "ffn", f)))
    goto done;

  pp_op_desc_init(&d);
  d.name = "embedding";
  d.kind = "embedding";
  d.param_bytes = (int64_t)((V * h + s * h) * e);
  d.out_bytes = (int64_t)(b * s * h * e);
  d.saved_bytes = (int64_t)(b * s * h); /* dropout mask */
  /* gather word and position rows, add, dropout: reads 2sh, writes sh */
  d.fwd_bytes = b * (3 * s * h * e + s * h);
  d.bwd_bytes = 2 * d.fwd_bytes;
  d.fwd_ms = ppi_roofline_ms(0, d.fwd_bytes, gpu->peak_tflops, p->efficiency,
                             gpu->mem_gbps);
  d.bwd_ms = 2 * d.fwd_ms;
  if ((rc = pp_model_builder_add_op(bld, &d, &emb)))
    goto done;
  for (i = 1; i <= p->layers; i++) {
    pp_op_desc_init(&d);
    snprintf(name, sizeof name, "layer%d", (int)i);
    d.name = name;
    d.kind = "transformer_layer";
    mm[0] = b * (8 * s * h * h + 4 * s * h * f + 4 * s * s * h);
    mm[1] = e * (b * (12 * s * h + 2 * a * s * s + 2 * s * f) + 4 * h * h +
                 2 * h * f);
    el[0] = 0; /* their FLOPs are negligible beside their traffic */
    el[1] = b * (e * (10 * s * h + 4 * a * s * s + 2 * s * f) + a * s * s +
                 2 * s * h);
    mm[2] = 2 * mm[0], mm[3] = 2 * mm[1], el[2] = 2 * el[0], el[3] = 2 * el[1];
    d.fwd_ms = ppi_roofline_ms(mm[0], mm[1], gpu->peak_tflops, p->efficiency,
                               gpu->mem_gbps) +
               ppi_roofline_ms(el[0], el[1], gpu->peak_tflops, p->efficiency,
                               gpu->mem_gbps);
    d.bwd_ms = ppi_roofline_ms(mm[2], mm[3], gpu->peak_tflops, p->efficiency,
                               gpu->mem_gbps) +
               ppi_roofline_ms(el[2], el[3], gpu->peak_tflops, p->efficiency,
                               gpu->mem_gbps);
    d.param_bytes = (int64_t)((4 * h * h + 2 * h * f + 9 * h + f) * e);
    d.out_bytes = (int64_t)(b * s * h * e);
    d.saved_bytes = (int64_t)(b * (s * h * (18 + 5 * a * s / h) + 4 * s * f));
    if ((rc = pp_model_builder_add_op(bld, &d, &id)) ||
        (rc = ppi_model_builder_add_part(bld, id, mm)) ||
        (rc = ppi_model_builder_add_part(bld, id, el)))
      goto done;
  }
  pp_op_desc_init(&d);
  d.name = "final_layernorm";
  d.kind = "layernorm";
  d.param_bytes = (int64_t)(2 * h * e);
  d.out_bytes = (int64_t)(b * s * h * e);
  d.saved_bytes = (int64_t)(b * s * h * e);
  d.fwd_flops = b * 8 * s * h;
  d.bwd_flops = 2 * d.fwd_flops;
  d.fwd_bytes = b * 2 * s * h * e;
  d.bwd_bytes = 2 * d.fwd_bytes;
  d.fwd_ms = ppi_roofline_ms(d.fwd_flops, d.fwd_bytes, gpu->peak_tflops,
                             p->efficiency, gpu->mem_gbps);
  d.bwd_ms = 2 * d.fwd_ms;
  if ((rc = pp_model_builder_add_op(bld, &d, NULL)))
    goto done;
  pp_op_desc_init(&d);
  d.name = "logits";
  d.kind = "logits";
  d.fwd_flops = b * 2 * s * h * V;
  d.bwd_flops = 2 * d.fwd_flops;
  d.fwd_bytes = b * s * (h * e + V * 4) + h * V * e;
  d.bwd_bytes = 2 * d.fwd_bytes;
  d.fwd_ms = ppi_roofline_ms(d.fwd_flops, d.fwd_bytes, gpu->peak_tflops,
                             p->efficiency, gpu->mem_gbps);
  d.bwd_ms = ppi_roofline_ms(d.bwd_flops, d.bwd_bytes, gpu->peak_tflops,
                             p->efficiency, gpu->mem_gbps);
  d.param_bytes = (int64_t)(V * h * e);
  d.out_bytes = (int64_t)(b * s * V * e);
  d.saved_bytes = (int64_t)(b * s * h * e + b * s * V * 4);
  if ((rc = pp_model_builder_add_op(bld, &d, &id)))
    goto done;
  if (p->tie_embeddings && (rc = pp_model_builder_tie(bld, id, emb)))
    goto done;
  rc = pp_model_builder_finish(bld, out);
  bld = NULL;
done:
  pp_model_builder_destroy(bld);
  return rc;
}
