/* SPDX-License-Identifier: MIT */
/*
** The comparison's own pieces (plan_compare.c runs them): the random
** search over the planner's space (compare_random.c).
** Source: docs/PLANNER.md, "`parplan compare`".
*/
#ifndef PP_COMPARE_H
#define PP_COMPARE_H

#include "search/plan_search.h"

/* Random search over the planner's space with evals evaluations: a
** uniformly random point, a uniformly random contiguous partition of the
** chain view, rank order; the best plan that fits (*out NULL when none
** did), with its shape. */
PP_INTERNAL pp_status ppi_compare_random(pp_ctx *ctx, const pp_model *m,
                                         const pp_cluster *c,
                                         const pp_search_params *p,
                                         int64_t evals, pp_plan **out,
                                         struct ppi_shape *shape);

#endif
