/* SPDX-License-Identifier: MIT */
/*
** A read-only view of an evaluation for the writers (eval_write.c).
*/
#ifndef PP_COST_EVAL_H
#define PP_COST_EVAL_H

#include "plan/plan.h"

struct ppi_eval_view {
  int32_t S, ndev;
  pp_schedule sched;
  const pp_stage_cost *st;
  const pp_device_memory *mem;
  const char *plan_src, *model_name, *cluster_name;
  const char *const *dev_name;
  int32_t tp, micro_batch;
  int64_t global_batch;
  int recompute;
  pp_cost_kind kind;
  pp_optimizer opt;
  pp_precision precision; /* the run's: the model's dtype for PREC_MODEL */
  pp_engine engine;
  int32_t zero;
  double period_ms;
  const pp_eval_summary *sum;
};

PP_INTERNAL const struct ppi_eval_view *ppi_eval_view(const pp_eval *e,
                                                      struct ppi_eval_view *v);

#endif /* PP_COST_EVAL_H */
