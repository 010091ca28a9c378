/* SPDX-License-Identifier: MIT */
/*
** What the planner (search.h's files) shares with its comparison
** (plan_compare.c, compare_random.c): the shape of a plan, building a
** plan in rank order, the size of a node, and taking a plan out of a
** search's result.
*/
#ifndef PP_PLAN_SEARCH_H
#define PP_PLAN_SEARCH_H

#include "plan/plan.h"

/* The shape of a plan: degrees, micro-batch, schedule, recomputation. */
struct ppi_shape {
  int32_t pp, dp, tp, mbs;
  pp_schedule sched;
  int rec;
  const int32_t *stp; /* [pp] each stage's degree, or NULL: tp */
};

/* The ZeRO stages a search tries at pipeline depth pp (bit z: stage z):
** its own stage when it runs there, else none; with zero -1, those its
** engine runs (ppi_engine_zero_mask), stage 0 alone for the generic
** engine (search_price.c; docs/PLANNER.md, "Run settings"). */
PP_INTERNAL unsigned ppi_search_zero_mask(const pp_search_params *p,
                                          int32_t pp);
/* The plan parameters every plan of a search carries: the global batch,
** the optimizer, precision, engine, and ZeRO stage zero (search_price.c). */
PP_INTERNAL void ppi_search_plan_params(const pp_search_params *p, int32_t zero,
                                        pp_plan_params *pl);
/* Whether every device of e fits with the search's memory margin: total
** at most capacity x (1 - margin) (search_price.c). */
PP_INTERNAL bool ppi_eval_fits(const pp_eval *e, const pp_cluster *c,
                               double margin);
/* The same of a simulation's peaks. */
PP_INTERNAL bool ppi_sim_fits(const pp_sim *s, const pp_cluster *c,
                              double margin);

/* Build a plan of search p's settings at ZeRO stage zero: stage s holds
** ops[off[s]:off[s+1]], its replica r the tp devices
** devs[(s dp + r) tp ...], or with per-stage degrees the stp[s] devices
** devs[o_s + r stp[s] ...], o_s the devices of the stages before
** (search_price.c). */
PP_INTERNAL pp_status ppi_plan_of(pp_ctx *ctx, const pp_search_params *p,
                                  int32_t zero, const struct ppi_shape *sh,
                                  const int32_t *ops, const int32_t *off,
                                  const int32_t *devs, pp_plan **out);

/* The operators of partition part's S stages in order: stage s holds
** ops[off[s]:off[s+1]] (search_price.c). */
PP_INTERNAL void ppi_partition_ops(const pp_partition *part, int32_t S,
                                   int32_t *ops, int32_t *off);

/* The most devices of one node listed together: the largest tp group
** that can stay inside a node (search_space.c). */
PP_INTERNAL int32_t ppi_node_size(const pp_cluster *c);

/* Take plan i out of s (the caller owns it; s keeps its figures;
** search_result.c). */
PP_INTERNAL pp_plan *ppi_search_take_plan(pp_search *s, int32_t i);

#endif
