/* SPDX-License-Identifier: MIT */
/*
** The plan layer's internal header: the plan object behind the public
** pp_plan handle.
*/
#ifndef PP_PLAN_H
#define PP_PLAN_H

#include "model/model.h"

/* ---- the plan --------------------------------------------------------- */

struct pp_plan {
  struct ppi_arena arena;
  char *source;
  pp_plan_params p;
  int32_t nstage;
  int32_t *op_off, *ops; /* stage s: ops[op_off[s] .. op_off[s+1]-1] */
  int32_t *rep_off;      /* stage s: replicas rep_off[s] .. rep_off[s+1]-1 */
  int32_t *stp;          /* [nstage] stage s's tensor-parallel degree */
  int32_t *dev_off;      /* [nrep + 1] replica q (of stage s):
                            dev[dev_off[q] .. dev_off[q] + stp[s] - 1] */
  int32_t *dev;          /* the replicas' tp groups, in replica order */
  int32_t *inflight;     /* [nstage]: fixed in-flight counts, 0: none */
  double *pat;           /* [4 nstage]: sigma of F, B, activation out,
                            gradient in; NaN: none */
  bool pattern;          /* every stage has one: the simulator follows it */
};

/* Stage s's tensor-parallel degree, and the devices of replica q (an
** index into the plan's replicas), stp[s] of them in rank order. */
static inline int32_t ppi_plan_tp(const struct pp_plan *p, int32_t s)
{
  return p->stp[s];
}
static inline const int32_t *ppi_plan_rep_devs(const struct pp_plan *p,
                                               int32_t q)
{
  return p->dev + p->dev_off[q];
}
/* The stage of replica q (binary search over rep_off). */
PP_INTERNAL int32_t ppi_plan_rep_stage(const struct pp_plan *p, int32_t q);

/* The largest device index the plan names (-1 when none). */
PP_INTERNAL int32_t ppi_plan_max_device(const struct pp_plan *p);

/* The ZeRO stages engine e can run with a pipeline of pp stages: bit z
** set when stage z is allowed (plan.c, docs/FORMATS.md, "Plan JSON"). */
PP_INTERNAL unsigned ppi_engine_zero_mask(pp_engine e, int32_t pp);
/* PP_OK when engine e runs ZeRO stage zero with pp pipeline stages,
** else PP_EINPUT recorded at src:line (line 0: none) with the stages it
** takes. */
PP_INTERNAL pp_status ppi_engine_zero_check(pp_ctx *ctx, const char *src,
                                            long line, pp_engine e,
                                            int32_t zero, int32_t pp);
/* A copy of p with other run settings (p's stages, replicas and devices;
** q's batch sizes must be p's, q's tp is ignored: every stage keeps its
** own): the planner prices one
** partition under several ZeRO stages. */
PP_INTERNAL pp_status ppi_plan_with_params(pp_ctx *ctx, const pp_plan *p,
                                           const pp_plan_params *q,
                                           pp_plan **out);

/* A copy of p with every stage at tensor-parallel degree tp, at most
** each stage's own: each replica keeps the first tp devices of its
** group (the exports of engines that run one degree, export.c). */
PP_INTERNAL pp_status ppi_plan_one_tp(pp_ctx *ctx, const pp_plan *p, int32_t tp,
                                      pp_plan **out);

/* Entry e's factor on the compute of a plan at micro-batch mbs and
** tensor-parallel degree tp: compute_scale x (mbs / ref_mbs)^g x tp^h,
** each where fitted; 1 for NULL (calib.c). */
PP_INTERNAL double ppi_calib_compute_factor(const pp_calib_entry *e,
                                            int32_t mbs, int32_t ref_mbs,
                                            int32_t tp);
/* The smallest factor a calibration can make a term of a plan at
** micro-batch mbs and tensor-parallel degree tp faster by (calib.c): its
** entries' compute factors scale x (mbs / ref_mbs)^g x tp^h and 1 / n of
** a network share (across or inside nodes) above 1; 1 when none is
** below.  Lower bounds multiplied by it stay bounds. */
PP_INTERNAL double ppi_calib_speedup(const pp_calibration *c, int32_t mbs,
                                     int32_t ref_mbs, int32_t tp);

#endif /* PP_PLAN_H */
