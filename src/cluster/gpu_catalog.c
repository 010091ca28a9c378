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
    {"V100", 15.78, 1.0, 125, "reference (V100-SXM2-16GB)", 900},
    {"V100-16", 15.78, 1.0, 125, "reference (V100-SXM2-16GB)", 900},
    {"V100-32", 31.75, 1.0, 125, "same speed as V100-16", 900},
    {"T4", 15.0, 0.720, 65, "AMP GPT-2 profiles, V100/T4", 320},
    {"A100-40", 40.0, 3.206, 312, "Sailor OPT-350 profiles", 1555},
    {"A100-80", 80.0, 3.457, 312, "Sailor OPT-350 profiles", 2039},
    {"H100", 79.65, 7.026, 989, "GH-96's figure (no H100 profile)", 3350},
    {"GH-96", 95.5771484375, 7.026, 989, "Sailor OPT-350 profiles", 4000},
    {"RTX-2080", 7.79, 0.835, 40, "Sailor OPT-350 profiles", 448},
    {"RTX-3090", 24.0, 1.545, 71, "Sailor OPT-350 profiles", 936},
    {"Titan-RTX", 24.0, 0.888, 130, "Sailor OPT-350 profiles", 672},
};

const struct ppi_gpu *ppi_gpu_find(const char *name)
{
  size_t i;
  if (!name)
    return NULL;
  for (i = 0; i < sizeof catalog / sizeof catalog[0]; i++)
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
  for (i = 0; i < sizeof catalog / sizeof catalog[0] && off + 32 < n; i++)
    off += (size_t)snprintf(buf + off, n - off, "%s%s", i ? ", " : "",
                            catalog[i].name);
}
