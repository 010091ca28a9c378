/* SPDX-License-Identifier: MIT */
/*
** Cluster generators: the typed kernels behind the one-line specs that
** spec.c parses.  Each builds its cluster through the public builder.
*/
#ifndef PP_CLUSTER_GEN_H
#define PP_CLUSTER_GEN_H

#include "cluster/cluster.h"

enum ppi_gen_kind {
  PPI_GEN_HIER,
  PPI_GEN_DGX1,
  PPI_GEN_NVSWITCH,
  PPI_GEN_MESH2D,
  PPI_GEN_TORUS2D,
  PPI_GEN_MESH3D,
  PPI_GEN_TORUS3D,
  PPI_GEN_RANDOM_BLK_1,
  PPI_GEN_RANDOM_BLK_2,
  PPI_GEN_UNIFORM_DIST,
  PPI_GEN_AMP_HOMOGENEOUS,
  PPI_GEN_AMP_HET_CLUSTER,
  PPI_GEN_AMP_HET_MODEL,
  PPI_GEN_CLARIDEN
};

struct ppi_gen_params {
  int kind;
  const char *name; /* the cluster's name: the spec text */
  int32_t dims[3];  /* nodes x gpus; mesh sides; devices */
  int ndims;
  double intra, inter;     /* GB/s inside and between nodes */
  double link;             /* GB/s of one mesh/torus link */
  double pcie;             /* GB/s of DGX-1 pairs without NVLink */
  double lo, hi;           /* uniform_dist range, GB/s */
  int32_t block, super;    /* random_blk block size; blocks per super-block */
  const char *gpu;         /* catalog device type */
  double mem, speed, peak; /* overrides of the catalog; 0 = keep */
  double peak32, membw;    /* fp32 peak, memory GB/s; 0 = keep */
  double tf32;             /* TF32 tensor peak; 0 = keep */
  double latency;          /* us */
  uint64_t seed;
  pp_routing routing;
};

/* Defaults of one generator kind (documented in docs/FORMATS.md). */
PP_INTERNAL void ppi_gen_params_init(struct ppi_gen_params *p, int kind,
                                     uint64_t seed);
PP_INTERNAL pp_status ppi_cluster_generate(pp_ctx *ctx,
                                           const struct ppi_gen_params *p,
                                           pp_cluster **out);

#endif /* PP_CLUSTER_GEN_H */
