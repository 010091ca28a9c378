/* SPDX-License-Identifier: MIT */
/*
** The comparison's random search (docs/PLANNER.md, "parplan compare"):
** as many evaluations as our search priced, each a uniformly random
** point of our space (search_space.c), a uniformly random contiguous
** partition of the chain view (a uniform (pp-1)-subset of the L-1 cut
** positions, drawn in order) and Megatron's rank order; the best plan
** that fits by our estimate.  It shows what the planner's pruning,
** partitioning and placement add over luck in the same space.
**
** Objective: the random baseline's best estimate that fits.
** Invariant: the draws come from the context's seed only, so the same
** inputs and seed give the same plan.
** Complexity: O(evals x (L + estimate)).
** Source: docs/PLANNER.md, "`parplan compare`".
*/
#include "search/compare.h"
#include "search/search.h"

#include <math.h>
#include <string.h>

pp_status ppi_compare_random(pp_ctx *ctx, const pp_model *m,
                             const pp_cluster *c, const pp_search_params *p,
                             int64_t evals, pp_plan **out,
                             struct ppi_shape *shape)
{
  struct space sp;
  struct ppi_vec pts;
  struct ppi_rng rng;
  double lb, best = INFINITY;
  int32_t *ops = NULL, *off = NULL, *first = NULL, nop = pp_model_nop(m);
  int64_t e;
  pp_status rc;

  *out = NULL;
  memset(&sp, 0, sizeof sp);
  ppi_vec_init(&pts, sizeof(struct point));
  sp.m = m;
  sp.c = c;
  sp.p = p;
  ppi_rng_seed(&rng, pp_ctx_seed(ctx));
  if ((rc = ppi_space_open(ctx, &sp, &pts, &lb)))
    goto done;
  if (!(ops = ppi_alloc(ctx, (size_t)(nop > 0 ? nop : 1) * sizeof *ops)) ||
      !(off = ppi_alloc(ctx, (size_t)(sp.L + 1) * sizeof *off)) ||
      !(first = ppi_alloc(ctx, (size_t)(sp.L + 1) * sizeof *first))) {
    rc = PP_ENOMEM;
    goto done;
  }
  for (e = 0; e < evals && pts.n; e++) {
    const struct point *pt =
        &PPI_VEC_AT(&pts, struct point, ppi_rng_below(&rng, pts.n));
    struct ppi_shape sh = ppi_shape_of(&sp, pt);
    int32_t i, chosen = 0;
    struct ppi_price x;
    pp_plan *pl = NULL;
    /* a uniform (pp-1)-subset of the L-1 cut positions, in order */
    first[0] = 0;
    for (i = 1; i < sp.L && chosen < pt->pp - 1; i++)
      if (ppi_rng_below(&rng, (uint64_t)(sp.L - i)) <
          (uint64_t)(pt->pp - 1 - chosen))
        first[++chosen] = i;
    first[pt->pp] = sp.L;
    ppi_chain_ops(sp.view, first, pt->pp, ops, off);
    if ((rc = ppi_search_build_plan(ctx, &sp, pt, ops, off,
                                    sp.sets[pt->set].dev, &pl)) ||
        (rc = ppi_search_price(ctx, &sp, pl, NULL, &x))) {
      pp_plan_destroy(pl);
      goto done;
    }
    if (x.fits && x.est < best) {
      best = x.est;
      pp_plan_destroy(*out);
      *out = pl;
      *shape = sh;
      shape->stp = NULL; /* the space's, freed below: the plan has them */
      if (pt->tpv >= 0)
        shape->tp = 0;
    } else {
      pp_plan_destroy(pl);
    }
  }
done:
  if (rc) {
    pp_plan_destroy(*out);
    *out = NULL;
  }
  ppi_free(ctx, ops, (size_t)(nop > 0 ? nop : 1) * sizeof *ops);
  ppi_free(ctx, off, (size_t)(sp.L + 1) * sizeof *off);
  ppi_free(ctx, first, (size_t)(sp.L + 1) * sizeof *first);
  ppi_space_close(ctx, &sp, &pts);
  return rc;
}
