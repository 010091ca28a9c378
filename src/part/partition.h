/* SPDX-License-Identifier: MIT */
/*
** The partition object's insides, for the files of part/ that build one:
** the object (part.c), the method table and its dispatch
** (part_methods.c), the flows that fill it (part_flow_dag.c,
** part_flow_periodic.c) and the check by simulation (part_verify.c).
** Everything outside part/ sees a partition through parplan.h and
** part_view.h only.
**
** Objective: one definition of the partition for the files that fill
** it, so that part.c's builders and the flows agree on it.
** Invariant: a partition handed to a caller has S stages, op_off[0..S]
** over ops (every operator of the model once), and a summary whose fits
** and worst_stage describe its stages' memory against their limits.
** Source: docs/PARTITION.md.
*/
#ifndef PP_PARTITION_H
#define PP_PARTITION_H

#include "part/part.h"

struct pp_partition {
  struct ppi_arena arena;
  pp_part_summary sum;
  int32_t S;
  pp_part_stage *st;
  int32_t *op_off, *ops;
  char *model_name, *model_source;
  double *sg_compute, *sg_param; /* stage graph: speed-1 compute, params */
  int32_t ne;
  struct ppi_sedge *e;
  int32_t *dev; /* positions' devices, or NULL */
  char **dev_name;
  double bandwidth_gbps, latency_us;
  int32_t replicas, micro_batch;
  int64_t gas;
  pp_schedule schedule;
  pp_optimizer optimizer;
  int32_t phase1; /* pp_part_params.madpipe_phase1 */
  unsigned est;
  double *sig; /* MadPipe's pattern, 4 offsets per stage, or NULL */
};

/* One call of pp_partition_chain as its flows see it. */
struct ppi_part_job {
  pp_ctx *ctx;
  struct pp_partition *pt;   /* the result being filled */
  const pp_model *m;         /* the model */
  const pp_model *v;         /* its chain view */
  const pp_part_params *p;   /* checked */
  const struct ppi_chain *c; /* v on the positions of p */
  int32_t mbs;               /* the micro-batch size */
  struct ppi_arena *tmp;     /* scratch, freed after the call */
};

/* A partition of m for p with micro-batch size mbs and nothing
** partitioned yet: what it records of p, the model's name, the devices'
** names (part.c). */
PP_INTERNAL pp_status ppi_partition_new(pp_ctx *ctx, const pp_model *m,
                                        const pp_part_params *p, int32_t mbs,
                                        struct pp_partition **out);

/* Fill pt from a partition first[0..S] of chain c of view v of model m;
** proc/special/inflight per stage (NULL: stage s on position s, no
** special processor, the position's in-flight count).  Sets the stages,
** the stage graph and the summary's fits and worst stage (part.c). */
PP_INTERNAL pp_status ppi_partition_fill_chain(
    pp_ctx *ctx, struct pp_partition *pt, const struct ppi_chain *c,
    const pp_model *m, const pp_model *v, const int32_t *first, int32_t S,
    const int32_t *proc, const uint8_t *special, const int32_t *inflight);

/* Fill pt from an operator-level staging of model m (graph g of m, the
** micro-batch size mbs): the stages, the stage graph, the summary's
** memory fit, stage and layer counts and lower bound (part.c). */
PP_INTERNAL pp_status ppi_partition_fill_dag(
    pp_ctx *ctx, struct pp_partition *pt, const struct ppi_dag *g,
    const pp_model *m, const int32_t *stage_of, int32_t mbs);

/* The flows that partition other than by a chain kernel (the method
** table in part_methods.c picks them).  The periodic flow runs kernel,
** MadPipe or PipeDream + 1F1B*, on P processors (part_flow_periodic.c);
** the DAG flow partitions the operator graph (part_flow_dag.c). */
typedef pp_status (*ppi_periodic_kernel)(const struct ppi_part_job *j,
                                         struct ppi_madpipe *r);
PP_INTERNAL pp_status ppi_part_flow_periodic(const struct ppi_part_job *j,
                                             ppi_periodic_kernel kernel);
PP_INTERNAL pp_status ppi_part_flow_dag(const struct ppi_part_job *j);

/* Run periodic result r of pt in the simulator and record its period,
** peak memory share and fit in pt's summary (part_verify.c). */
PP_INTERNAL pp_status ppi_part_verify(pp_ctx *ctx, struct pp_partition *pt,
                                      const pp_model *m,
                                      const struct ppi_madpipe *r,
                                      const pp_part_params *p,
                                      double mem_bytes);

#endif /* PP_PARTITION_H */
