/* SPDX-License-Identifier: MIT */
/*
** What the planner (plan_search.c) shares with its comparison
** (plan_compare.c): building a plan in rank order, and random search over
** the planner's own space.
*/
#ifndef PP_PLAN_SEARCH_H
#define PP_PLAN_SEARCH_H

#include "base/pp_int.h"

/* The shape of a plan: degrees, micro-batch, schedule, recomputation. */
struct ppi_shape {
  int32_t pp, dp, tp, mbs;
  pp_schedule sched;
  int rec;
};

/* Build a plan: stage s holds ops[off[s]:off[s+1]], its replica r the tp
** devices devs[(s dp + r) tp ...]. */
PP_INTERNAL pp_status ppi_plan_of(pp_ctx *ctx, int64_t gbs, pp_optimizer opt,
                                  const struct ppi_shape *sh,
                                  const int32_t *ops, const int32_t *off,
                                  const int32_t *devs, pp_plan **out);

/* Random search over the planner's space with evals evaluations: a
** uniformly random point, a uniformly random contiguous partition of the
** chain view, rank order; the best plan that fits (*out NULL when none
** did), with its shape. */
PP_INTERNAL pp_status ppi_search_random(pp_ctx *ctx, const pp_model *m,
                                        const pp_cluster *c,
                                        const pp_search_params *p,
                                        int64_t evals, pp_plan **out,
                                        struct ppi_shape *shape);

/* The most devices of one node listed together: the largest tp group
** that can stay inside a node. */
PP_INTERNAL int32_t ppi_node_size(const pp_cluster *c);

/* Take plan i out of s (the caller owns it; s keeps its figures). */
PP_INTERNAL pp_plan *ppi_search_take_plan(pp_search *s, int32_t i);

#endif
