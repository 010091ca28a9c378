/* SPDX-License-Identifier: MIT */
/*
** MadPipe ([MadPipe]) where memory binds.  During the enumeration, a
** 1F1B* point on one device type (tp 1, no recomputation) whose best plan
** does not fit or fills a device past MADPIPE_SHARE is recorded.  After
** it, MadPipe runs on the recorded points whose bound still leaves them a
** chance, lowest bound first, until p->madpipe of them gave a plan that
** fits (MADPIPE_TRIES x p->madpipe tried at most); its period cap (the
** best estimate / gas) stops runs that cannot win.  MadPipe may give a
** processor (its special one) several stages and keeps per-stage
** in-flight counts below 1F1B's; the plan carries both, and the estimate
** and the simulator price it like any other.
**
** Objective: plans that fit where 1F1B's in-flight counts do not, or
** barely do, at a lower estimate than the enumeration's.
** Invariant: which points are tried depends on the results only, not on
** timing: the ILP is bounded by nodes (MADPIPE_NODES), not time, and the
** points are taken in (bound, index) order.
** Complexity: one MadPipe run per point tried (part_madpipe.c: phase 1's
** bisection and DP, phase 2's bounded ILP), at most MADPIPE_TRIES x
** p->madpipe of them.
** Source: docs/PLANNER.md, "Per point"; docs/PARTITION.md, "MadPipe".
*/
#include "cost/cost.h"
#include "part/part.h"
#include "search/search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* TUNING: MadPipe runs where memory binds: where the best plan fills a
** device past this share (docs/PLANNER.md: 90%). */
#define MADPIPE_SHARE 0.9
/* TUNING: MadPipe's ILP is bounded by branch-and-bound nodes, not time,
** so the result is deterministic: 50 nodes per ILP, and 120 s for a whole
** MadPipe run (both phases, every ILP) as a safety net the node limit
** reaches first (8a30765: the determinism test under ASan). */
#define MADPIPE_ILP_S 120
#define MADPIPE_NODES 50
/* TUNING: points MadPipe tries per plan asked for (--madpipe N: at most
** 3N tried), so a memory-bound space does not spend the run on it. */
#define MADPIPE_TRIES 3

bool ppi_madpipe_may(const struct space *sp, const struct point *pt)
{
  return sp->p->madpipe > 0 && pt->sched == PP_SCHED_1F1B_STAR && pt->tp == 1 &&
         pt->tpv < 0 && !pt->rec && !sp->sets[pt->set].mixed && pt->pp >= 2 &&
         sp->L <= PPI_MADPIPE_MAX_LAYERS;
}

bool ppi_madpipe_binds(const struct space *sp, const struct point *pt,
                       bool have, double peak)
{
  return ppi_madpipe_may(sp, pt) && (!have || peak >= MADPIPE_SHARE);
}

/* The plan of a MadPipe partition at the point: its stages on the
** set's devices (the special processor's stages share its devices),
** its in-flight counts, and, where it holds, its periodic pattern. */
static pp_status madpipe_plan(struct worker *w, const struct point *pt,
                              const int32_t *devs, const pp_partition *part,
                              const pp_part_summary *ps, pp_plan **out)
{
  const pp_search_params *p = w->sp->p;
  pp_plan_params pl;
  pp_plan_builder *b = NULL;
  int32_t s, r, z;
  unsigned zmask = ppi_search_zero_mask(p, ps->nstage);
  bool periodic;
  double sig[4];
  pp_status rc;

  *out = NULL;
  if (!zmask) /* a depth the engine cannot run at the stage asked for */
    return PP_OK;
  for (z = 0; !((zmask >> z) & 1u); z++) /* the least: offer tries the rest */
    ;
  ppi_search_plan_params(p, z, &pl);
  pl.micro_batch = pt->mbs;
  pl.schedule = PP_SCHED_1F1B_STAR;
  /* MadPipe's period and patterns hold on its flat network, where
  ** transfers overlap compute, with the profile's times; an engine whose
  ** point-to-point blocks (DeepSpeed) puts them inside the stages'
  ** compute, and a calibration rescales them, so the loads may exceed
  ** MadPipe's and the schedule takes its period from them */
  periodic = pt->dp == 1 && !ppi_engine_rules(pl.engine)->blocking &&
             !p->calibration; /* its period is of the uncalibrated times */
  pl.period_ms = periodic ? ps->period_ms : 0;
  if ((rc = pp_plan_builder_create(&w->ctx, &pl, "parplan plan (madpipe)", &b)))
    return rc;
  for (s = 0; s < ps->nstage; s++) {
    pp_part_stage st;
    int32_t id, n;
    const int32_t *ops = pp_partition_stage_ops(part, s, &n);
    pp_partition_stage(part, s, &st);
    if ((rc = pp_plan_builder_add_stage(b, ops, n, &id)))
      goto done;
    for (r = 0; r < pt->dp; r++)
      if ((rc = pp_plan_builder_add_replica(
               b, id, devs + (size_t)st.proc * pt->dp + r)))
        goto done;
    if ((rc = pp_plan_builder_set_in_flight(b, id, st.in_flight)))
      goto done;
    /* the pattern is one replica's (the plan checker's rule); replicated
    ** stages keep the counts and run 1F1B* order */
    if (periodic && ppi_partition_pattern(part, s, sig) &&
        (rc = pp_plan_builder_set_pattern(b, id, sig)))
      goto done;
  }
  rc = pp_plan_builder_finish(b, out);
  b = NULL;
done:
  pp_plan_builder_destroy(b);
  return rc;
}

/* The least estimate any MadPipe plan at the point can have (*floor;
** -infinity: not known, INFINITY: none).  Phase 2 keeps phase 1's
** allocation and sets only in-flight counts and the pattern, which the
** estimate's time does not read (cost_eval.c: steady, fill, allreduce
** and update come from the stages' devices and sizes), and a ZeRO stage
** changes it: so the least, over ZeRO stages, of the estimate of phase
** 1's allocation in each memory mode phase 2 may end in bounds the plan.
** The optimistic mode first: when it stops at the cap, so does the run;
** when it gives an allocation, the run ends in it or, when no pattern
** fits, in the pessimistic one. */
static pp_status madpipe_floor(struct worker *w, const struct point *pt,
                               const pp_part_params *pa0, const int32_t *devs,
                               double *floor)
{
  const struct space *sp = w->sp;
  pp_part_params pa = *pa0;
  int mode;
  pp_status rc = PP_OK;
  *floor = INFINITY;
  for (mode = 1; mode <= 2 && rc == PP_OK; mode++) {
    pp_partition *part = NULL;
    pp_part_summary ps;
    pp_plan *plan = NULL;
    pp_plan_params q;
    unsigned zmask;
    int32_t z;
    pa.madpipe_phase1 = mode;
    rc = pp_partition_chain(&w->ctx, sp->m, &pa, &part);
    if (rc == PP_ELIMIT && mode == 1) { /* the run stops at the cap too */
      pp_ctx_clear_error(&w->ctx);
      return PP_OK;
    }
    if (rc) { /* not known: the run decides */
      if (ppi_search_skippable(rc) || rc == PP_ECANCELED) {
        pp_ctx_clear_error(&w->ctx);
        rc = PP_OK;
        *floor = -INFINITY;
      }
      return rc;
    }
    pp_partition_summary(part, &ps);
    if (!ps.fits) { /* phase 1 found no allocation in this mode */
      pp_partition_destroy(part);
      continue;
    }
    rc = madpipe_plan(w, pt, devs, part, &ps, &plan);
    pp_partition_destroy(part);
    if (rc)
      return rc;
    if (!plan) /* no ZeRO stage runs this depth; the other mode's may */
      continue;
    pp_plan_get_params(plan, &q);
    zmask = ppi_search_zero_mask(sp->p, ps.nstage);
    for (z = 0; z < 4 && rc == PP_OK; z++) {
      pp_plan *alt = NULL;
      struct ppi_price y;
      if (!((zmask >> z) & 1u))
        continue;
      q.zero = z;
      if ((rc = ppi_plan_with_params(&w->ctx, plan, &q, &alt)) == PP_OK)
        rc = ppi_search_price(&w->ctx, sp, alt, w->share, &y);
      pp_plan_destroy(alt);
      if (rc == PP_OK && y.est < *floor)
        *floor = y.est;
    }
    pp_plan_destroy(plan);
    if (rc && ppi_search_skippable(rc)) { /* not priced: not known */
      pp_ctx_clear_error(&w->ctx);
      *floor = -INFINITY;
      return PP_OK;
    }
  }
  return rc;
}

/* The point's MadPipe plan offered to its best: a flat network at the
** point's slowest link between stages (the model MadPipe assumes). */
static pp_status try_madpipe(struct worker *w, const struct point *pt,
                             const int32_t *devs, double linkbw, int64_t gas,
                             struct cand *best, bool *have)
{
  const struct space *sp = w->sp;
  pp_part_params pa;
  pp_partition *part = NULL;
  pp_part_summary ps;
  pp_plan *plan = NULL;
  pp_status rc;

  ppi_point_part_params(sp, pt, gas, linkbw, PP_OBJ_MADPIPE, &pa);
  pa.latency_us = pp_cluster_latency(sp->c);
  pa.cluster = sp->c;
  pa.flat_device = devs[0]; /* the set's one type: its times and memory */
  /* the ILP's limit, within what the search has left */
  pa.time_limit_s = ppi_stop_left(&w->stop);
  if (pa.time_limit_s > MADPIPE_ILP_S)
    pa.time_limit_s = MADPIPE_ILP_S;
  if (!(pa.time_limit_s > 0)) {
    w->timed_out = true;
    return PP_OK;
  }
  /* its plan runs gas periods at least: not worth phase 2 when that alone
  ** is slower than the best plan found */
  if (isfinite(w->mp_cap))
    pa.period_cap_ms = w->mp_cap / (double)gas;
  pa.max_nodes = MADPIPE_NODES;
  pa.stop = w->stop.flag; /* Ctrl-C ends the ILP within a node */
  if (isfinite(w->mp_cap)) {
    /* nor when no plan of phase 1's allocations can beat the best: phase
    ** 2's ILPs (most of MadPipe's time) are not run */
    double floor;
    if ((rc = madpipe_floor(w, pt, &pa, devs, &floor)))
      return rc;
    if (floor >= w->mp_cap)
      return PP_OK;
  }
  rc = pp_partition_chain(&w->ctx, sp->m, &pa, &part);
  if (rc) {
    if (ppi_search_skippable(rc) || rc == PP_ECANCELED) {
      w->timed_out = w->timed_out || rc == PP_ECANCELED;
      pp_ctx_clear_error(&w->ctx);
      rc = PP_OK;
    }
    return rc;
  }
  w->madpipe++;
  pp_partition_summary(part, &ps);
  w->timed_out = w->timed_out || ps.timed_out;
  if (!ps.fits) {
    pp_partition_destroy(part);
    return PP_OK;
  }
  rc = madpipe_plan(w, pt, devs, part, &ps, &plan);
  pp_partition_destroy(part);
  if (rc == PP_OK && plan) {
    w->offer_madpipe = true;
    rc = ppi_search_offer(w, pt, plan, NULL, best, have);
    w->offer_madpipe = false;
  }
  return rc;
}

pp_status ppi_madpipe_points(pp_ctx *ctx, const struct worker *ws, int32_t T,
                             const struct cand *kept, int32_t nkept, int32_t K,
                             int32_t runs, struct point **bpts, size_t *nbpts,
                             size_t *nb)
{
  size_t n = 0, k;
  int32_t i;
  *bpts = NULL;
  *nbpts = *nb = 0;
  for (i = 0; i < T; i++)
    n += ws[i].bound.n;
  if (n == 0)
    return PP_OK;
  if (!(*bpts = ppi_alloc(ctx, n * sizeof **bpts)))
    return PP_ENOMEM;
  *nbpts = n;
  n = 0;
  for (i = 0; i < T; i++)
    for (k = 0; k < ws[i].bound.n; k++) {
      const struct point *q = &PPI_VEC_AT(&ws[i].bound, struct point, k);
      /* where MadPipe can win: its bound below the best kept plan (the
      ** cap its ILP's period gets, mp_cap), or the list not full */
      if (nkept < K || q->mlb <= kept[0].est)
        (*bpts)[n++] = *q;
    }
  qsort(*bpts, n, sizeof **bpts, ppi_point_cmp);
  /* how many are tried depends on the results only */
  if (n > (size_t)MADPIPE_TRIES * (size_t)runs)
    n = (size_t)MADPIPE_TRIES * (size_t)runs;
  *nb = n;
  return PP_OK;
}

pp_status ppi_madpipe_point(struct worker *w, const struct point *pt)
{
  const struct space *sp = w->sp;
  struct cand best;
  bool have = false;
  double arbw, linkbw;
  int64_t gas = sp->p->global_batch / pt->dp / pt->mbs;
  pp_status rc;
  if (pt->mlb > w->bar) /* a better plan came since it was recorded */
    return PP_OK;
  memset(&best, 0, sizeof best);
  ppi_point_net(w, pt, &arbw, &linkbw);
  rc = try_madpipe(w, pt, sp->sets[pt->set].dev, linkbw, gas, &best, &have);
  if (rc == PP_OK && have)
    w->madpipe_fit++;
  return ppi_search_keep_best(w, rc, &best, have);
}
