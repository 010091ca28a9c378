/* SPDX-License-Identifier: MIT */
/*
** The planner's result (pp_search): the summary of the search and its K
** best plans, best first, each with its shape and figures
** (pp_search_plan); the comparison takes plans out of it
** (ppi_search_take_plan).
**
** Objective: what the caller asks of a search, without its insides.
** Invariant: plans are ordered by simulated time (the estimate without
** the simulator), then by enumeration index; the candidate array keeps
** the capacity it was allocated with, which destroy gives back.
** Complexity: O(K) to build, O(1) per query.
** Source: include/parplan.h (pp_search); docs/PLANNER.md.
*/
#include "search/search.h"

struct pp_search {
  pp_search_summary sum;
  struct ppi_alloc a;
  int32_t n, cap; /* plans; entries of c */
  struct cand *c;
  pp_search_plan *info;
};

pp_status ppi_search_new(pp_ctx *ctx, const pp_search_params *p,
                         const pp_search_summary *sum, struct cand *kept,
                         int32_t n, int32_t cap, pp_search **out)
{
  pp_search *res;
  int32_t i;
  *out = NULL;
  if (!(res = ppi_calloc(ctx, 1, sizeof *res)))
    return PP_ENOMEM;
  res->a = ppi_ctx_alloc(ctx);
  if (!(res->info = ppi_calloc(ctx, (size_t)(n ? n : 1), sizeof *res->info))) {
    pp_search_destroy(res);
    return PP_ENOMEM;
  }
  res->c = kept;
  res->n = n;
  res->cap = cap;
  res->sum = *sum;
  res->sum.nplans = n;
  for (i = 0; i < res->n; i++) {
    const struct cand *x = &res->c[i];
    pp_search_plan *y = &res->info[i];
    y->devices = x->pt.pp * x->pt.dp * x->pt.tp;
    y->pp = x->pt.pp;
    y->dp = x->pt.dp;
    y->tp = x->pt.tp;
    if (x->pt.tpv >= 0) { /* per-stage degrees: the plan has them */
      int32_t s;
      y->tp = 0;
      y->devices = 0;
      for (s = 0; s < pp_plan_nstage(x->plan); s++)
        y->devices +=
            pp_plan_nreplica(x->plan, s) * pp_plan_stage_tp(x->plan, s);
    }
    y->micro_batch = x->pt.mbs;
    y->gas = p->global_batch / x->pt.dp / x->pt.mbs;
    y->schedule = (pp_schedule)x->pt.sched;
    y->recompute = x->pt.rec;
    y->estimate_ms = x->est;
    y->simulated_ms = x->sim;
    y->lower_bound_ms = x->pt.lb;
    y->throughput =
        (double)p->global_batch * 1000 / (x->sim > 0 ? x->sim : x->est);
    y->bubble = x->bubble;
    y->mapped = x->mapped;
    y->peak_share = x->peak;
    y->madpipe = x->madpipe;
    y->time_spread = x->spread;
    y->calibrated = x->calibrated;
    {
      pp_plan_params q;
      pp_plan_get_params(x->plan, &q);
      y->zero = q.zero;
    }
  }
  *out = res;
  return PP_OK;
}

void pp_search_destroy(pp_search *s)
{
  int32_t i;
  if (!s)
    return;
  for (i = 0; i < s->n; i++)
    ppi_cand_free(&s->c[i]);
  if (s->c) /* allocated for cap entries */
    ppi_raw_free(s->a, s->c, (size_t)s->cap * sizeof *s->c);
  if (s->info)
    ppi_raw_free(s->a, s->info, (size_t)(s->n ? s->n : 1) * sizeof *s->info);
  ppi_raw_free(s->a, s, sizeof *s);
}

pp_status pp_search_get_summary(const pp_search *s, pp_search_summary *out)
{
  if (!s || !out)
    return PP_EINVAL;
  *out = s->sum;
  return PP_OK;
}

pp_status pp_search_plan_get(const pp_search *s, int32_t i, pp_search_plan *out)
{
  if (!s || !out || i < 0 || i >= s->n)
    return PP_EINVAL;
  *out = s->info[i];
  return PP_OK;
}

pp_plan *ppi_search_take_plan(pp_search *s, int32_t i)
{
  pp_plan *p = NULL;
  if (s && i >= 0 && i < s->n) {
    p = s->c[i].plan;
    s->c[i].plan = NULL;
  }
  return p;
}

const pp_plan *pp_search_plan_at(const pp_search *s, int32_t i)
{
  return s && i >= 0 && i < s->n ? s->c[i].plan : NULL;
}
