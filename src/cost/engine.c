/* SPDX-License-Identifier: MIT */
/*
** What each engine keeps in memory and how it moves gradients: the rules
** the engine-aware cost model applies (docs/COST_MODEL.md, "Engines",
** gives each rule with the file and line of the engine's source it comes
** from; docs/REFERENCES.md lists the commits read).
**
** Objective: for a stage replica rank holding n parameters (its share
** under tensor parallelism) in a data-parallel group of d replicas, the
** bytes its weights, gradients and optimizer state take between steps,
** the short-lived extra the optimizer step and the gradient reduction
** allocate, and the bytes per gradient element the reduction moves.
**
** Invariant: "generic" has no rule here (cost_model.c keeps the
** engine-free formula for it, so old plans price as before): its
** figures are 0.  Adam is the
** optimizer of every engine rule (the plan's "optimizer" applies to
** "generic" only): m and v in fp32, 8 bytes per parameter.
**
** Complexity: O(1) per call.
*/
#include "cost/cost.h"

#include <string.h>

/* DeepSpeed's flat gradient bucket of the non-ZeRO reduction:
** MEMORY_OPT_ALLREDUCE_SIZE = 500000000 elements
** (deepspeed/runtime/engine.py:111, DeepSpeed @ 38327e0; the same
** constant in AMP's fork, engine.py:1266). */
#define DS_BUCKET_ELEMS 5e8
/* DeepSpeed ZeRO's reduce_bucket_size default, elements
** (deepspeed/runtime/zero/config.py:109 @ 38327e0). */
#define DS_ZERO_BUCKET_ELEMS 5e8

static int mixed(pp_precision p)
{
  return p == PP_PREC_FP16 || p == PP_PREC_BF16;
}

void ppi_engine_state(pp_engine e, pp_precision prec, int32_t zero, int32_t d,
                      double n, struct ppi_engine_mem *out)
{
  double dd = d > 0 ? d : 1, bucket;
  memset(out, 0, sizeof *out);
  if (n <= 0)
    return;
  switch (e) {
  case PP_ENGINE_DEEPSPEED:
    if (zero == 0) {
      /* fp16: fp16 weights 2 + fp16 grads 2 + fp32 master 4 + Adam 8
      ** (fused_optimizer.py:77-86, unfused_optimizer.py:63); the step
      ** makes fp32 grads of every parameter (unfused_optimizer.py:221,
      ** fused_optimizer.py:285): +4.  fp32: weights, grads 4 + 4, Adam
      ** 8.  bf16 without ZeRO is BF16_Optimizer: a full fp32 gradient
      ** accumulation buffer and a ZeRO-1-like partition of master and
      ** Adam (bf16_optimizer.py:148-162): 2 + 2 + 4 + 12 / d. */
      if (prec == PP_PREC_BF16)
        out->state = n * (8 + 12 / dd);
      else
        out->state = 16 * n;
      out->step = prec == PP_PREC_FP16 ? 4 * n : 0;
      /* the reduction flattens each bucket of up to 5e8 elements
      ** (engine.py:2492) and, when the communication dtype differs
      ** (fp32_allreduce, AMP's fork engine.py:1236), converts it. */
      bucket = n < DS_BUCKET_ELEMS ? n : DS_BUCKET_ELEMS;
      out->reduce = bucket * (mixed(prec) ? 2 + 4 : 4);
    } else {
      /* ZeRO-1: 2 (weights) + 2 (grads) + 12 / d; ZeRO-2: grads
      ** partitioned too; ZeRO-3: everything partitioned
      ** (stage_1_and_2.py:377-409, stage3.py:905); fp32 runs keep
      ** 4-byte weights and grads. */
      double w = mixed(prec) ? 2 : 4, g = w;
      double master = mixed(prec) ? 12 : 8;
      if (zero == 1 && prec == PP_PREC_BF16) /* BF16_Optimizer again, */
        out->state = n * (8 + 12 / dd);      /* engine.py:1316-1318 */
      else if (zero == 1)
        out->state = n * (w + g + master / dd);
      else if (zero == 2)
        out->state = n * (w + (g + master) / dd);
      else
        out->state = n * (w + g + master) / dd;
      out->step = 4 * n / dd; /* the fp32 grad partition (:1896) */
      /* the contiguous-gradient bucket of reduce_bucket_size elements
      ** in the grad dtype (stage_1_and_2.py:2048) */
      bucket = n < DS_ZERO_BUCKET_ELEMS ? n : DS_ZERO_BUCKET_ELEMS;
      out->reduce = bucket * g;
    }
    break;
  case PP_ENGINE_MEGATRON:
    /* Megatron's table of bytes per parameter (docs/COST_MODEL.md,
    ** "Engines", cites it): fp16 params and grads 20, or 4 + 16 / d
    ** with the distributed optimizer; bf16 params with fp32 main grads
    ** (grad_reduce_in_fp32, on for bf16) 18, or 6 + 12 / d; fp32 16, or
    ** 8 + 8 / d. */
    if (prec == PP_PREC_FP16)
      out->state = zero >= 1 ? n * (4 + 16 / dd) : 20 * n;
    else if (prec == PP_PREC_BF16)
      out->state = zero >= 1 ? n * (6 + 12 / dd) : 18 * n;
    else
      out->state = zero >= 1 ? n * (8 + 8 / dd) : 16 * n;
    break;
  case PP_ENGINE_TORCH:
    /* DDP (zero 0): fp32 parameters (autocast keeps them), their grads,
    ** DDP's own buckets (gradient_as_bucket_view false) and Adam: 4 + 4
    ** + 4 + 8.  FSDP2 shards parameters, grads and optimizer state
    ** (zero 3: 16 / d); reshard_after_forward=False (zero 2) keeps the
    ** unsharded low-precision parameters between forward and backward:
    ** + 2 (mixed) or 4. */
    if (zero == 0)
      out->state = 20 * n;
    else if (zero == 2)
      out->state = n * (16 / dd + (mixed(prec) ? 2 : 4));
    else
      out->state = 16 * n / dd;
    break;
  default: break;
  }
}

double ppi_engine_grad_bytes(pp_engine e, pp_precision prec)
{
  switch (e) {
  case PP_ENGINE_DEEPSPEED:
    /* fp32_allreduce: the reduction runs on an fp32 copy (AMP's
    ** configuration and the DeepSpeed export's) */
    return 4;
  case PP_ENGINE_MEGATRON:
    /* fp16 runs reduce fp16 grads; bf16 runs fp32 main grads
    ** (grad_reduce_in_fp32, set for bf16) */
    return prec == PP_PREC_FP16 ? 2 : 4;
  case PP_ENGINE_TORCH:
    /* DDP reduces the fp32 grads of fp32 parameters; FSDP2's
    ** reduce_dtype follows param_dtype by default */
    return mixed(prec) ? 2 : 4;
  default: return 0;
  }
}

/* The fixed behaviours of each engine, in pp_engine's order:
**   overlap, bucket: DeepSpeed's PipelineEngine reduces after the last
**     micro-batch (pipe/schedule.py:237-241); Megatron with
**     --overlap-grad-reduce (written by the Megatron export) and
**     DDP/FSDP reduce bucket by bucket during the last backward, all but
**     the last bucket hidden: DDP's bucket_cap_mb = 25
**     (torch/nn/parallel/distributed.py), Megatron's max(40M, 1M x dp)
**     elements of fp32 grads (core/distributed/
**     distributed_data_parallel.py:133-134; 40M taken);
**   blocking, whole, partitioned: DeepSpeed's p2p.send/recv block both
**     ends (pipe/p2p.py:48, 59-60); with tp > 1 every rank sends 1/tp
**     of the activation and of its gradient and the stages all-gather
**     them over their tp ranks (pipe_partitioned, grad_partitioned:
**     runtime/config.py:467-468, pipe/engine.py:144-145; priced in
**     cost_model.c, blocking_p2p), while each rank's memory holds the
**     whole received input (engine.py:718-729), so "whole" for the
**     buffers; Megatron without sequence parallelism
**     (its export does not turn it on) sends the whole (seq, mbs, hidden)
**     tensor from every rank, the sequence divided by tp only with it
**     (core/pipeline_parallel/schedules.py:2140-2141 @d98e8a64); torch's
**     stages send their local, sequence-parallel shards (1/tp), as
**     "generic" always assumed;
**   keeps: DeepSpeed's last stage returns from backward before freeing
**     its outputs (pipe/engine.py:811-814) and keeps at least two pipe
**     buffers (schedule.py:247-256: max(2, ...)), so the previous
**     micro-batch's output stays while the next is computed;
**   slack: ALLOC_SLACK below under an engine, none under "generic". */
/* TUNING: what PyTorch's caching allocator holds beyond the live peak
** (rounded blocks, split segments it cannot return), as a fraction of
** the peak of live tensors: 0.11, measured with the runtime memory
** below on the clariden runs (the slope of nvidia-smi's figure against
** the predicted live bytes is 1.11 across micro-batch sizes 1 to 8 and
** 1 to 4 stages). */
#define ALLOC_SLACK 0.11
static const struct ppi_engine_rules rules[] = {
    /* overlap bucket     blocking whole partitioned keeps slack */
    {0, 0, 0, 0, 0, 0, 0},                       /* generic */
    {0, 0, 1, 1, 1, 1, ALLOC_SLACK},             /* deepspeed */
    {1, 40e6 * 4, 0, 1, 0, 0, ALLOC_SLACK},      /* megatron */
    {1, 25.0 * 1048576, 0, 0, 0, 0, ALLOC_SLACK} /* torch */
};

const struct ppi_engine_rules *ppi_engine_rules(pp_engine e)
{
  return (unsigned)e < PPI_COUNT(rules) ? &rules[e] : &rules[0];
}

double ppi_engine_step_bytes(pp_engine e, pp_precision prec, int32_t zero,
                             int32_t d)
{
  /* Adam on fp32 master weights reads weight, gradient, m and v and
  ** writes weight, m and v: 28 bytes per parameter of the rank's share;
  ** mixed precision also makes the fp32 gradient from the low-precision
  ** one (2 read, 4 written; unfused_optimizer.py:221) and copies the
  ** master back (4 read, 2 written; unfused_optimizer.py:239): 12 more,
  ** on every parameter the rank holds whole.  ZeRO (any stage) and
  ** FSDP step only the rank's 1/d shard. */
  double dd = d > 0 ? d : 1, adam = 28, conv = prec == PP_PREC_FP32 ? 0 : 12;
  if (e == PP_ENGINE_GENERIC)
    return 0;
  if (zero >= 1 || (e == PP_ENGINE_DEEPSPEED && prec == PP_PREC_BF16))
    return (adam + conv) / dd;
  /* DeepSpeed's fp16 step without ZeRO is FP16_UnfusedOptimizer.step
  ** (runtime/fp16/unfused_optimizer.py @ 38327e0; the same in AMP's
  ** fork): before Adam it checks every fp16 gradient for overflow with
  ** x.float().sum() (line 202; runtime/utils.py:277: 2 bytes read, 4
  ** written, 4 read), takes the gradients' norm through the same
  ** float copy (lines 213-216, get_weight_norm: 10 again) and unscales
  ** the fp32 gradients in place (line 228, unscale_and_clip_grads'
  ** mul_, line 255: 4 read, 4 written): 28 more per parameter. */
  if (e == PP_ENGINE_DEEPSPEED && prec == PP_PREC_FP16)
    return adam + conv + 28;
  return adam + conv;
}

double ppi_engine_reduce_pass_bytes(pp_engine e, pp_precision prec,
                                    int32_t zero, int32_t d)
{
  /* DeepSpeed without ZeRO reduces a data-parallel stage's gradients
  ** through allreduce_bucket and allreduce_and_copy
  ** (runtime/engine.py:2491-2521 @ 38327e0; AMP's fork
  ** engine.py:1231-1261): the bucket is flattened (read and write the
  ** gradient), converted to the communication type (fp32 for mixed
  ** precision: 2 read, 4 written), scaled by 1/d in place (4 + 4),
  ** copied back to the fp16 bucket (4 read, 2 written) and unflattened
  ** into the gradients (2 + 2): 28 bytes per element; fp32 has no
  ** conversion and no copy back: 8 + 8 + 8 = 24.  Nothing without data
  ** parallelism (the pipe engine reduces only is_data_parallel,
  ** runtime/pipe/engine.py).  The other engines reduce their gradient
  ** buffers in place (Megatron's contiguous buffer; DDP's buckets are
  ** views of the gradients with gradient_as_bucket_view, else one copy
  ** in and out that is not priced here). */
  if (e != PP_ENGINE_DEEPSPEED || zero != 0 || d <= 1)
    return 0;
  return prec == PP_PREC_FP32 ? 24 : 28;
}

/* TUNING: the fixed memory of a training process on a GPU before its
** first tensor: the CUDA context with PyTorch's kernels loaded (PyTorch
** PR #86509 measured 667 MB without lazy loading, 287 MB with it), NCCL's
** buffers (4 MiB per channel, peer and protocol for the Simple protocol
** alone, NVIDIA/nccl src/init.cc @ 5067397 line 813; NVLink systems open
** many more channels than PCIe ones), cuBLAS workspaces (32 MiB on
** Hopper, 8 MiB + 128 KiB elsewhere) and the engine's fused kernels.  No
** source gives the sum, so it is measured, per platform
** (docs/COST_MODEL.md, "Fixed runtime memory"):
**   - Hopper (GH200, H100, H200): 4.1 GiB, the intercept of nvidia-smi's
**     memory.used on Sailor's 15 clariden runs of OPT-350M (GH200, CUDA
**     12, Megatron-DeepSpeed, fp32; data/sailor/validation/
**     clariden_opt350.csv) once weights, optimizer state, activations,
**     buffers and the allocator's slack are accounted for
**     (bench/bench_fidelity.c);
**   - every other GPU: 1.0 GiB, from AMP's 52 runs on T4s (CUDA 11.0,
**     PyTorch 1.7, DeepSpeed fp16): the finished runs need at most 1.4
**     GiB of runtime to fit and the out-of-memory ones at least 0.35
**     GiB to fail; 1.0 GiB is PyTorch's eager context and kernels plus
**     NCCL's few PCIe channels.
** `parplan calibrate` fits a cluster's own (docs/COST_MODEL.md,
** "Calibration"). */
#define RUNTIME_HOPPER_GIB 4.1
#define RUNTIME_OTHER_GIB 1.0

static int hopper(const char *type)
{
  return type &&
         (strncmp(type, "GH", 2) == 0 || strncmp(type, "H100", 4) == 0 ||
          strncmp(type, "H200", 4) == 0);
}

double ppi_engine_runtime_bytes(pp_engine e, const char *type)
{
  if (e == PP_ENGINE_GENERIC)
    return 0;
  return (hopper(type) ? RUNTIME_HOPPER_GIB : RUNTIME_OTHER_GIB) * 1073741824.0;
}
