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

/* The slowest hops of every stage's gradient reduction depend on the
** plan's devices (which replicas and ranks each stage has, where), the
** stages that reduce anything, the engine, the precision, the cluster
** and the calibration, not on which operators a stage holds: plans that
** differ only there (the planner's partitions of one point) share them.
** One entry, the last layout priced (cost_model.c). */
struct ppi_share_cache;
PP_INTERNAL struct ppi_share_cache *ppi_share_cache_new(pp_ctx *ctx);
PP_INTERNAL void ppi_share_cache_free(pp_ctx *ctx, struct ppi_share_cache *x);
/* pp_evaluate with the cache (NULL: none); the same result. */
PP_INTERNAL pp_status ppi_evaluate_cached(
    pp_ctx *ctx, const pp_plan *p, const pp_model *m, const pp_cluster *c,
    const pp_cost_params *cp, struct ppi_share_cache *cache, pp_eval **out);

/* pp_lower_bound over plans whose stages take any of the ntp degrees
** tps (each operator at the one of least device time), or on device
** type t only degree type_tp[t] where it is above 0 (type_tp NULL: none),
** at the run's precision prec (PP_PREC_MODEL: the model's). */
PP_INTERNAL pp_status ppi_lower_bound_tps(pp_ctx *ctx, const pp_model *m,
                                          const pp_cluster *c, int64_t gbs,
                                          const int32_t *tps, int32_t ntp,
                                          const int32_t *type_tp, int32_t mbs,
                                          int recompute, pp_precision prec,
                                          double *out_ms);

#endif /* PP_COST_EVAL_H */
