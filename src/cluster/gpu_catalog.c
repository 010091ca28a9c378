/* SPDX-License-Identifier: MIT */
/*
** Known accelerators, for cluster generators and device types named
** without numbers.
**
** memory_gib: what nvidia-smi reports as total memory, in GiB.
** speed: training throughput relative to V100, measured where data
**   exists: the mean over micro-batch 1, 2 and 4 at tp 1 of
**   sum(V100 fwd+bwd) / sum(GPU fwd+bwd) for Sailor's OPT-350 profiles
**   (data/sailor, eth-easl/sailor @ cf2c8e3), and for T4 the ratio of
**   AMP's GPT-2 V100 and T4 profiles (data/amp, 0.0981 s / 0.1363 s).
**   H100 has no profile; it takes GH-96's figure (a GH200 is an H100
**   die with faster memory), so it is an optimistic estimate.
** peak_tflops: dense fp16/bf16 tensor-core peak from the vendors' data
**   sheets (fp32 accumulate for GeForce cards).
** mem_gbps: peak memory bandwidth from the vendors' data sheets (V100
**   SXM2 900 GB/s; T4 320; A100 40 GB SXM 1,555, 80 GB SXM 2,039; H100
**   SXM 3,350; GH200 96 GB HBM3 4,000; RTX 2080 448; RTX 3090 936; Titan
**   RTX 672), for memory-bound work such as the optimizer step
**   (docs/COST_MODEL.md, "Optimizer step").
** peak_fp32_tflops: fp32 without tensor cores (what an fp32 run reaches:
**   PyTorch keeps TF32 off for matmuls by default since 1.12), vendors'
**   data sheets.  peak_tf32_tflops: the dense TF32 tensor-core peak
**   (half the data sheets' "with sparsity" figure: A100 156, H100, H200
**   and GH200 494.5, B200 1,125 and GB200 1,250 from the DGX B200 and
**   GB200 NVL72 sheets per GPU, A10 62.5, L4 60, L40S 183; GA102 and Ada
**   whitepapers for RTX 3090 35.6 and RTX 4090 82.6), which PyTorch's
**   convolutions use in fp32 runs by default (cuDNN's allow_tf32,
**   docs/COST_MODEL.md "Roofline"); 0 for Volta and Turing (no TF32)
**   and for AMD (PyTorch on ROCm does not use TF32 by default).  link /
**   link_gbps: the GPU-to-GPU link and its
**   bandwidth per GPU as the vendor states it (both directions summed).
** Types without a measured speed (H200, B200, GB200, A10, L4, L40S,
**   RTX-4090, MI250X, MI300X) take the measured speed of the nearest
**   measured architecture scaled by the ratio of dense fp16 peaks: H100
**   for Hopper, Blackwell and MI300X; A100-40 for Ampere/Ada data-centre
**   cards and MI250X; RTX-3090 for GeForce.  TUNING: the choice of the
**   reference per class is a judgement, not a measurement; the roofline
**   (model_time.c) does not use speed, and a profile of the type beats
**   both.  why says which applies.
** MI250X is one GCD (a graphics compute die): rocm-smi and RCCL show
**   each MI250X module as two GPUs of 64 GB, so the figures are halved.
** memory_gib of the new entries: the data-sheet capacity in GB taken as
**   GiB (HBM stacks are binary-sized; nvidia-smi shows H100 80GB as
**   81559 MiB, 79.6 GiB), to within 2%.
** Sources (docs/COST_MODEL.md, "GPU catalog", lists them in full): V100
**   SXM2 data sheet; T4 data sheet; A100 data sheet (2021); H100 and
**   H200 data sheets (H100 SXM5, H200 SXM); DGX B200 and GB200 NVL72
**   data sheets (per GPU, dense = half the sparse figure); A10, L4,
**   L40S data sheets; Ada (RTX 4090) and Ampere GA102 (RTX 3090)
**   architecture whitepapers, fp16 tensor with fp32 accumulate; Turing
**   whitepaper (RTX 2080, Titan RTX); AMD Instinct MI250X and MI300X
**   data sheets.
** GH-96 (the H100 of a GH200 Grace Hopper superchip, 96 GB HBM3): memory
**   as Sailor counts it, 102625181696 bytes = 95.5771484375 GiB
**   (data/sailor/simulator/basic_cluster_config.json); peak from NVIDIA's
**   GH200 data sheet (nvidia.com, data-center/grace-hopper-superchip:
**   FP16/BF16 tensor core 1,979 TFLOPS with sparsity, 989 dense), the
**   H100 SXM's figure.
*/
#include "cluster/cluster.h"

#include <stdio.h>
#include <string.h>

static const struct ppi_gpu catalog[] = {
    /* name, GiB, speed, fp16 TFLOP/s, why, GB/s, fp32 TFLOP/s, link,
    ** link GB/s, source, TF32 TFLOP/s */
    {"V100", 15.78, 1.0, 125, "reference (V100-SXM2-16GB)", 900, 15.7,
     "NVLink 2", 300, "NVIDIA V100 data sheet (SXM2)", 0},
    {"V100-16", 15.78, 1.0, 125, "reference (V100-SXM2-16GB)", 900, 15.7,
     "NVLink 2", 300, "NVIDIA V100 data sheet (SXM2)", 0},
    {"V100-32", 31.75, 1.0, 125, "same speed as V100-16", 900, 15.7, "NVLink 2",
     300, "NVIDIA V100 data sheet (SXM2)", 0},
    {"T4", 15.0, 0.720, 65, "AMP GPT-2 profiles, V100/T4", 320, 8.1, "", 0,
     "NVIDIA T4 data sheet", 0},
    {"A100-40", 40.0, 3.206, 312, "Sailor OPT-350 profiles", 1555, 19.5,
     "NVLink 3", 600, "NVIDIA A100 data sheet (SXM4 40GB)", 156},
    {"A100-80", 80.0, 3.457, 312, "Sailor OPT-350 profiles", 2039, 19.5,
     "NVLink 3", 600, "NVIDIA A100 data sheet (SXM4 80GB)", 156},
    {"H100", 79.65, 7.026, 989, "GH-96's figure (no H100 profile)", 3350, 67,
     "NVLink 4", 900, "NVIDIA H100 data sheet (SXM5)", 494.5},
    {"H200", 141, 7.026, 989, "H100's, peak ratio 1.0 (no profile)", 4800, 67,
     "NVLink 4", 900, "NVIDIA H200 data sheet (SXM)", 494.5},
    {"GH-96", 95.5771484375, 7.026, 989, "Sailor OPT-350 profiles", 4000, 67,
     "NVLink 4", 900, "NVIDIA GH200 data sheet", 494.5},
    {"B200", 180, 15.98, 2250, "H100's x peak ratio 2.28 (no profile)", 8000,
     75, "NVLink 5", 1800, "NVIDIA DGX B200 data sheet (per GPU)", 1125},
    {"GB200", 186, 17.76, 2500, "H100's x peak ratio 2.53 (no profile)", 8000,
     80, "NVLink 5", 1800, "NVIDIA GB200 NVL72 data sheet (per GPU)", 1250},
    {"A10", 24, 1.284, 125, "A100-40's x peak ratio 0.40 (no profile)", 600,
     31.2, "", 0, "NVIDIA A10 data sheet", 62.5},
    {"L4", 24, 1.243, 121, "A100-40's x peak ratio 0.39 (no profile)", 300,
     30.3, "", 0, "NVIDIA L4 data sheet", 60},
    {"L40S", 48, 3.720, 362, "A100-40's x peak ratio 1.16 (no profile)", 864,
     91.6, "", 0, "NVIDIA L40S data sheet", 183},
    {"RTX-2080", 7.79, 0.835, 40, "Sailor OPT-350 profiles", 448, 10.1, "", 0,
     "NVIDIA Turing architecture whitepaper", 0},
    {"RTX-3090", 24.0, 1.545, 71, "Sailor OPT-350 profiles", 936, 35.6,
     "NVLink 3 bridge", 112.5, "NVIDIA Ampere GA102 whitepaper", 35.6},
    {"RTX-4090", 24, 3.595, 165.2, "RTX-3090's x peak ratio 2.33 (no profile)",
     1008, 82.6, "", 0, "NVIDIA Ada Lovelace architecture whitepaper", 82.6},
    {"Titan-RTX", 24.0, 0.888, 130, "Sailor OPT-350 profiles", 672, 16.3, "", 0,
     "NVIDIA Turing architecture whitepaper", 0},
    {"MI250X", 64, 1.968, 191.5, "A100-40's x peak ratio 0.61 (no profile)",
     1638.4, 23.95, "Infinity Fabric 3", 400,
     "AMD Instinct MI250X data sheet (per GCD: half the module)", 0},
    {"MI300X", 192, 9.288, 1307.4, "H100's x peak ratio 1.32 (no profile)",
     5300, 163.4, "Infinity Fabric 4", 896, "AMD Instinct MI300X data sheet",
     0},
};

#define NCAT ((int32_t)(sizeof catalog / sizeof catalog[0]))

void ppi_gpu_type_desc(const struct ppi_gpu *g, pp_device_type_desc *d)
{
  pp_device_type_desc_init(d);
  d->name = g->name;
  d->memory_gib = g->memory_gib;
  d->speed = g->speed;
  d->peak_tflops = g->peak_tflops;
  d->peak_fp32_tflops = g->peak_fp32_tflops;
  d->mem_gbps = g->mem_gbps;
  d->peak_tf32_tflops = g->peak_tf32_tflops;
}

int32_t ppi_gpu_count(void)
{
  return NCAT;
}

const struct ppi_gpu *ppi_gpu_at(int32_t i)
{
  return i >= 0 && i < NCAT ? &catalog[i] : NULL;
}

size_t ppi_gpu_family_len(const char *s)
{
  const char *d = strchr(s, '-');
  return d ? (size_t)(d - s) : strlen(s);
}

bool ppi_gpu_blackwell(const char *s)
{
  return s && (!strncmp(s, "B1", 2) || !strncmp(s, "B2", 2) ||
               !strncmp(s, "B3", 2) || !strncmp(s, "GB2", 3) ||
               !strncmp(s, "GB3", 3) || !strncmp(s, "RTX-50", 6));
}

int32_t ppi_gpu_family(const char *name, char *buf, size_t n)
{
  size_t off = 0, lf;
  int32_t i, k = 0;
  if (n)
    buf[0] = '\0';
  if (!name)
    return 0;
  lf = ppi_gpu_family_len(name);
  for (i = 0; i < NCAT; i++) {
    const char *c = catalog[i].name;
    if (ppi_gpu_family_len(c) != lf || strncmp(c, name, lf) != 0)
      continue;
    k++;
    if (n && off + strlen(c) + 3 < n)
      off += (size_t)snprintf(buf + off, n - off, "%s%s", off ? ", " : "", c);
  }
  return k;
}

const struct ppi_gpu *ppi_gpu_find(const char *name)
{
  size_t i;
  if (!name)
    return NULL;
  for (i = 0; i < (size_t)NCAT; i++)
    if (strcmp(catalog[i].name, name) == 0)
      return &catalog[i];
  return NULL;
}

void ppi_gpu_names(char *buf, size_t n)
{
  size_t off = 0, i;
  if (!n)
    return;
  buf[0] = '\0';
  for (i = 0; i < (size_t)NCAT && off + 32 < n; i++)
    off += (size_t)snprintf(buf + off, n - off, "%s%s", i ? ", " : "",
                            catalog[i].name);
}
