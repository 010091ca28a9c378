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
};

/* Build a plan: stage s holds ops[off[s]:off[s+1]], its replica r the tp
** devices devs[(s dp + r) tp ...] (search_price.c). */
PP_INTERNAL pp_status ppi_plan_of(pp_ctx *ctx, int64_t gbs, pp_optimizer opt,
                                  const struct ppi_shape *sh,
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
