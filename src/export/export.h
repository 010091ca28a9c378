/* SPDX-License-Identifier: MIT */
/*
** The export object and what every engine export shares: the files and
** warnings, the stages' operators in the model's order, and the checks of
** what engines cannot express (docs/EXPORT.md).  The exporters build
** their text in base's string buffer (strbuf.c).
*/
#ifndef PP_EXPORT_H
#define PP_EXPORT_H

#include "plan/plan.h"

#define PPI_EXPORT_MAX_FILES 8

struct pp_export {
  struct ppi_arena arena;
  int32_t nfile;
  char *name[PPI_EXPORT_MAX_FILES]; /* file names, no directory */
  char *text[PPI_EXPORT_MAX_FILES];
  int32_t nwarn;
  char *warn[PPI_EXPORT_MAX_WARN];
  pp_plan *own; /* the plan at one tp degree the exporter writes, or NULL */
};

/* Record a warning (at most PPI_EXPORT_MAX_WARN are kept). */
PP_INTERNAL pp_status ppi_export_warn(pp_ctx *ctx, pp_export *x,
                                      const char *fmt, ...) PP_PRINTF(3, 4);
/* Add a file holding b's text (b's error, if any, is returned). */
PP_INTERNAL pp_status ppi_export_add(pp_ctx *ctx, pp_export *x,
                                     const char *name,
                                     const struct ppi_sbuf *b);

/* The stages' operators in the model's (topological) order. */
struct ppi_stage_ops {
  int32_t nop, nstage, ntot; /* ntot: operators of all stages */
  int32_t *pos;    /* [nop]: operator -> position in the model's order */
  int32_t *ord;    /* stage s: ord[p->op_off[s] .. op_off[s+1]-1], sorted */
  int32_t *first;  /* [nstage]: position of the stage's first operator */
  bool contiguous; /* every stage one run of positions, in stage order */
};

/* The start every engine's exporter shares: the arguments (fn names the
** public function in the error), the plan checked against m and c, a new
** export in *x, b ready and the stage operators in o.  No engine runs
** stages of different tensor-parallel degrees (Megatron's
** initialize_model_parallel takes one, core/parallel_state.py:601-602 @
** d98e8a6; DeepSpeed's PipeModelDataParallelTopology one num_mp,
** runtime/pipe/topology.py:244-247 @ 38327e0; torchtitan's ParallelDims
** one tp, distributed/parallel_dims.py:137 @ b5bcd76): such a plan is
** written at its smallest degree, each replica on the first devices of
** its group, with a warning naming the stages that lose theirs; *p then
** points to that copy (x owns it).  On failure nothing is left to
** free. */
PP_INTERNAL pp_status ppi_export_begin(pp_ctx *ctx, const char *fn,
                                       const pp_plan **p, const pp_model *m,
                                       const pp_cluster *c, pp_export **out,
                                       pp_export **x, struct ppi_sbuf *b,
                                       struct ppi_stage_ops *o);
/* Its end: b and o freed; on rc != 0 x is destroyed and rc returned,
** else *out = x. */
PP_INTERNAL pp_status ppi_export_end(pp_ctx *ctx, pp_export *x,
                                     struct ppi_sbuf *b,
                                     struct ppi_stage_ops *o, pp_status rc,
                                     pp_export **out);

/* The checks; each records at most one warning naming engine, and
** returns only allocation failures. */
/* Every stage has stage 0's replica count. */
PP_INTERNAL pp_status ppi_export_check_uniform(pp_ctx *ctx, pp_export *x,
                                               const pp_plan *p,
                                               const char *engine);
/* Every stage is one run of the model's operators, in stage order. */
PP_INTERNAL pp_status ppi_export_check_runs(pp_ctx *ctx, pp_export *x,
                                            const pp_plan *p,
                                            const struct ppi_stage_ops *o,
                                            const char *engine);
/* No device holds two stages; `why` ends the warning. */
PP_INTERNAL pp_status ppi_export_check_shared(pp_ctx *ctx, pp_export *x,
                                              const pp_plan *p,
                                              const char *engine,
                                              const char *why);
/* Tensor-parallel groups within one node and of one device type. */
PP_INTERNAL pp_status ppi_export_check_tp(pp_ctx *ctx, pp_export *x,
                                          const pp_plan *p, const pp_cluster *c,
                                          const char *engine);
/* The placement is the rank order tp, then data, then pipeline over the
** devices in cluster order (Megatron's, DeepSpeed's, torchtitan's):
** replica r of stage s on devices (k R + r) tp + t, with k the stage's
** pipeline rank: rank_of[s] (NULL: s), np of them. */
PP_INTERNAL pp_status ppi_export_check_rank_order(pp_ctx *ctx, pp_export *x,
                                                  const pp_plan *p,
                                                  const int32_t *rank_of,
                                                  const char *engine);
/* The engine runs 1F1B: a warning for GPipe and 1F1B*. */
/* The precision to launch p in: the plan's; for a plan without one, the
** model's dtype, fp16 only with the mixed-precision optimizer (the rule
** of exports before plans had a precision; fp32 otherwise). */
PP_INTERNAL pp_precision ppi_export_precision(const pp_plan *p,
                                              const pp_model *m);
/* The plan was priced for another engine (not generic), or at a ZeRO
** stage engine e cannot run at its depth (ppi_engine_zero_mask). */
PP_INTERNAL pp_status ppi_export_check_engine(pp_ctx *ctx, pp_export *x,
                                              const pp_plan *p, pp_engine e,
                                              const char *engine);
PP_INTERNAL pp_status ppi_export_check_1f1b(pp_ctx *ctx, pp_export *x,
                                            const pp_plan *p,
                                            const char *engine);

/* An operator's role by its kind: 'E' embedding, 't' decoder layer, 'm'
** MTP layer, 'L' loss or output head, 0 none (a norm is never a layer). */
PP_INTERNAL char ppi_export_symbol(const char *kind);

#endif
