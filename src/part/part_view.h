/* SPDX-License-Identifier: MIT */
/*
** A read-only view of a partition for its writers (part_write.c).
*/
#ifndef PP_PART_VIEW_H
#define PP_PART_VIEW_H

#include "cost/cost.h"

struct ppi_part_view {
  const pp_part_summary *sum;
  int32_t S;
  const pp_part_stage *st;
  const int32_t *op_off, *ops;
  const char *model_name;
  const double *sg_compute, *sg_param;
  int32_t ne;
  const struct ppi_sedge *e;
  const int32_t *dev; /* NULL: a flat network */
  const char *const *dev_name;
  double bandwidth_gbps, latency_us;
  int32_t replicas, micro_batch;
  int64_t gas;
  pp_schedule schedule;
  pp_optimizer optimizer;
  int32_t phase1; /* MadPipe's phase 1 alone (pp_part_params) */
  unsigned est;
};

PP_INTERNAL const struct ppi_part_view *ppi_part_view(const pp_partition *pt,
                                                      struct ppi_part_view *v);

#endif /* PP_PART_VIEW_H */
