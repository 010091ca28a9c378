/* SPDX-License-Identifier: MIT */
/*
** The comparison behind `parplan compare`: our plan next to the plans
** users get today, every one priced by our estimate and run in our
** simulator, with the speedup of ours over each.
**
**   - Megatron's heuristic ([AMP] 4.1; data/amp/COST_MODEL.md 3.4):
**     tensor parallelism inside a node, the smallest tp x pp whose plan
**     fits in memory (so the most data parallelism), layers balanced
**     (uniform-layers), 1F1B, every micro-batch size tried and the
**     fastest kept (a user would measure them), devices in index order;
**   - AMP's procedure ([AMP] 3; data/amp/COST_MODEL.md 3.2): its
**     space mp | GPUs per node, dp | N/mp with dp | GBS, mbs | GBS/dp,
**     pp = N/(mp dp); its DP as its code runs it (amp-original) on the
**     inputs its code builds (AMP's uniform split when B = 1), its
**     placement (rank order), its cost model (PP_COST_AMP) to choose; no
**     memory check, so its choice may not fit - reported as it is;
**   - PipeDream's DP with consecutive placement: tp 1, every pp | N, the
**     min-max partition that ignores memory, the configuration of least
**     time per sample under that objective, 1F1B;
**   - random search: as many uniformly random points and partitions of
**     our space as our search priced, the best that fits;
**   - the lower bound of our space.
** Each baseline runs in the calling thread; our search uses p->threads.
**
** Complexity: our search's, plus AMP's DP over its candidates (53 for
** GPT-2 at GBS 32 on 16 GPUs), plus a handful of estimates per baseline.
*/
#include "search/compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
  ROW_OURS,
  ROW_MEGATRON,
  ROW_AMP,
  ROW_PIPEDREAM,
  ROW_RANDOM,
  ROW_LB,
  NROW
};

struct pp_compare {
  struct ppi_alloc a;
  pp_compare_row row[NROW];
  pp_plan *plan[NROW];
};

static bool tp_in_nodes(const pp_cluster *c, int32_t tp)
{
  int32_t d, D = pp_cluster_ndev(c);
  for (d = 0; d < D; d++)
    if (pp_cluster_device_node(c, d) != pp_cluster_device_node(c, d - d % tp))
      return false;
  return true;
}

struct ctxs {
  pp_ctx *ctx;
  const pp_model *m;
  const pp_cluster *c;
  const pp_search_params *p;
  int32_t *ops, *off, *devs, *reps;
  int32_t L;
  int64_t evals; /* plans our search priced */
};

/* The plan of a partition in index order (Megatron's and AMP's
** placement, PipeDream's consecutive one). */
/* A baseline's ZeRO stage at depth pp: the least the search tries there
** (0 when the search's is -1: each engine's default); when the engine
** cannot run the stage asked for at this depth, the highest below it
** that it runs (DeepSpeed's pipeline: 1 for 2 or 3). */
static int32_t baseline_zero(const pp_search_params *p, int32_t pp)
{
  unsigned m = ppi_search_zero_mask(p, pp);
  int32_t z;
  if (m) {
    for (z = 0; !((m >> z) & 1u); z++)
      ;
    return z;
  }
  m = ppi_engine_zero_mask(p->engine, pp);
  for (z = p->zero; z > 0 && !((m >> z) & 1u); z--)
    ;
  return z;
}

static pp_status plan_of_part(struct ctxs *x, const pp_partition *pt,
                              const struct ppi_shape *sh, pp_plan **out)
{
  ppi_partition_ops(pt, sh->pp, x->ops, x->off);
  return ppi_plan_of(x->ctx, x->p, baseline_zero(x->p, sh->pp), sh, x->ops,
                     x->off, x->devs, out);
}

static pp_status estimate(struct ctxs *x, const pp_plan *pl, pp_cost_kind kind,
                          double *ms, bool *fits)
{
  pp_cost_params cp;
  pp_eval *e;
  pp_eval_summary es;
  pp_status rc;
  pp_cost_params_init(&cp);
  cp.kind = kind;
  cp.allreduce = x->p->allreduce;
  cp.reserve_bytes = x->p->reserve_bytes;
  cp.calibration = x->p->calibration;
  cp.record = 0;
  if ((rc = pp_evaluate(x->ctx, pl, x->m, x->c, &cp, &e)))
    return rc;
  pp_eval_get_summary(e, &es);
  *ms = es.iteration_ms;
  *fits = ppi_eval_fits(e, x->c, x->p->memory_margin);
  pp_eval_destroy(e);
  return PP_OK;
}

static void set_shape(pp_compare_row *r, const struct ppi_shape *sh)
{
  r->found = 1;
  r->devices = sh->pp * sh->dp * sh->tp;
  r->pp = sh->pp;
  r->dp = sh->dp;
  r->tp = sh->tp;
  r->micro_batch = sh->mbs;
  r->schedule = sh->sched;
  r->recompute = sh->rec;
}

static pp_status partition(struct ctxs *x, pp_part_objective obj,
                           pp_part_method meth, const struct ppi_shape *sh,
                           pp_partition **out)
{
  pp_part_params pa;
  int32_t s;
  pp_part_params_init(&pa);
  pa.objective = obj;
  pa.method = meth;
  pa.stages = sh->pp;
  pa.replicas = sh->dp;
  pa.tp = sh->tp;
  pa.cluster = x->c;
  for (s = 0; s < sh->pp; s++)
    x->reps[s] = x->devs[(size_t)s * sh->dp * sh->tp];
  pa.devices = x->reps;
  pa.micro_batch = sh->mbs;
  pa.gas = x->p->global_batch / sh->dp / sh->mbs;
  pa.optimizer = x->p->optimizer;
  pa.reserve_bytes = x->p->reserve_bytes;
  /* AMP's DP sees what AMP's code gives it, so that on AMP's own models
  ** and clusters the baseline is AMP's partition */
  pa.amp_inputs = meth == PP_PART_AMP_ORIGINAL;
  if (sh->pp > 1) { /* else, or without a link, the partitioner's default */
    double b = pp_cluster_bandwidth(x->c, x->reps[0], x->reps[1]);
    if (b > 0)
      pa.bandwidth_gbps = b;
  }
  return pp_partition_chain(x->ctx, x->m, &pa, out);
}

/* Megatron: the smallest tp x pp that fits, the fastest micro-batch. */
static pp_status megatron(struct ctxs *x, pp_compare_row *r, pp_plan **best)
{
  int32_t N = pp_cluster_ndev(x->c), maxtp = ppi_node_size(x->c), prod;
  double bt = INFINITY;
  pp_status rc = PP_OK;
  r->about = "tp inside a node, the smallest tp x pp that fits, balanced "
             "layers, 1F1B, the fastest micro-batch";
  for (prod = 1; prod <= N && !*best; prod++) {
    int32_t tp;
    if (N % prod)
      continue;
    for (tp = 1; tp <= maxtp && tp <= prod; tp++) {
      int32_t pp = prod / tp, dp = N / prod, mbs;
      if (prod % tp || maxtp % tp || pp > x->L || !tp_in_nodes(x->c, tp) ||
          x->p->global_batch % dp)
        continue;
      for (mbs = 1; mbs <= x->p->global_batch / dp; mbs++) {
        struct ppi_shape sh = {pp, dp, tp, mbs, PP_SCHED_1F1B, 0, NULL};
        pp_partition *pt = NULL;
        pp_plan *pl = NULL;
        double ms;
        bool fits;
        if ((x->p->global_batch / dp) % mbs ||
            (x->p->max_micro_batch && mbs > x->p->max_micro_batch))
          continue;
        if ((rc = partition(x, PP_OBJ_MINMAX, PP_PART_UNIFORM_LAYERS, &sh,
                            &pt)) ||
            (rc = plan_of_part(x, pt, &sh, &pl)) ||
            (rc = estimate(x, pl, PP_COST_PARPLAN, &ms, &fits))) {
          pp_partition_destroy(pt);
          pp_plan_destroy(pl);
          return rc;
        }
        pp_partition_destroy(pt);
        r->evaluations++;
        if (fits && ms < bt) {
          bt = ms;
          pp_plan_destroy(*best);
          *best = pl;
          set_shape(r, &sh);
        } else {
          pp_plan_destroy(pl);
        }
      }
    }
  }
  return PP_OK;
}

/* AMP: its space, its DP, its placement and its cost model. */
static pp_status amp(struct ctxs *x, pp_compare_row *r, pp_plan **best)
{
  int32_t N = pp_cluster_ndev(x->c), M = ppi_node_size(x->c), mp;
  double bt = INFINITY;
  pp_status rc = PP_OK;
  r->about = "AMP's space and DP (amp-original), rank-order placement, "
             "chosen by AMP's cost model, no memory check";
  for (mp = 1; mp <= M; mp++) {
    int32_t dp;
    if (M % mp || N % mp || !tp_in_nodes(x->c, mp))
      continue;
    for (dp = 1; dp <= N / mp; dp++) {
      int32_t pp = N / mp / dp, mbs;
      if ((N / mp) % dp || x->p->global_batch % dp || pp > x->L)
        continue;
      for (mbs = 1; mbs <= x->p->global_batch / dp; mbs++) {
        struct ppi_shape sh = {pp, dp, mp, mbs, PP_SCHED_1F1B, 0, NULL};
        pp_partition *pt = NULL;
        pp_plan *pl = NULL;
        double ms;
        bool fits;
        if ((x->p->global_batch / dp) % mbs)
          continue;
        rc = partition(x, PP_OBJ_AMP, PP_PART_AMP_ORIGINAL, &sh, &pt);
        if (rc == PP_EINPUT) { /* fewer AMP work layers than stages */
          pp_ctx_clear_error(x->ctx);
          continue;
        }
        if (rc || (rc = plan_of_part(x, pt, &sh, &pl))) {
          pp_partition_destroy(pt);
          return rc;
        }
        pp_partition_destroy(pt);
        rc = estimate(x, pl, PP_COST_AMP, &ms, &fits);
        if (rc == PP_EINPUT) { /* a plan AMP's model cannot price */
          pp_ctx_clear_error(x->ctx);
          pp_plan_destroy(pl);
          continue;
        }
        if (rc) {
          pp_plan_destroy(pl);
          return rc;
        }
        r->evaluations++;
        if (ms < bt) {
          bt = ms;
          r->own_ms = ms;
          pp_plan_destroy(*best);
          *best = pl;
          set_shape(r, &sh);
        } else {
          pp_plan_destroy(pl);
        }
      }
    }
  }
  return PP_OK;
}

/* PipeDream: tp 1, its min-max DP (memory ignored), the configuration of
** least time per sample under that objective, consecutive placement. */
static pp_status pipedream(struct ctxs *x, pp_compare_row *r, pp_plan **best)
{
  int32_t N = pp_cluster_ndev(x->c), pp, ref = pp_model_micro_batch(x->m);
  double bt = INFINITY;
  pp_status rc = PP_OK;
  r->about = "tp 1, PipeDream's min-max DP without memory, the least time "
             "per sample, consecutive placement, 1F1B";
  for (pp = 1; pp <= N && pp <= x->L; pp++) {
    int32_t dp = N / pp, mbs;
    struct ppi_shape sh = {0};
    pp_partition *pt = NULL;
    pp_part_summary ps;
    double per;
    if (N % pp || x->p->global_batch % dp)
      continue;
    mbs = ref > 0 && (x->p->global_batch / dp) % ref == 0 ? ref : 1;
    sh.pp = pp;
    sh.dp = dp;
    sh.tp = 1;
    sh.mbs = mbs;
    sh.sched = PP_SCHED_1F1B;
    sh.rec = 0;
    if ((rc = partition(x, PP_OBJ_MINMAX, PP_PART_PIPEDREAM, &sh, &pt)))
      return rc;
    pp_partition_summary(pt, &ps);
    r->evaluations++;
    per = ps.objective_ms / mbs;
    if (per < bt) {
      pp_plan *pl = NULL;
      if ((rc = plan_of_part(x, pt, &sh, &pl))) {
        pp_partition_destroy(pt);
        return rc;
      }
      bt = per;
      pp_plan_destroy(*best);
      *best = pl;
      set_shape(r, &sh);
    }
    pp_partition_destroy(pt);
  }
  return PP_OK;
}

/* Random search: as many plans of our space as our search priced. */
static pp_status random_search(struct ctxs *x, pp_compare_row *r,
                               pp_plan **best)
{
  struct ppi_shape sh = {0};
  pp_status rc;
  r->about = "uniform points and partitions of our space, as many as "
             "ours priced";
  if ((rc = ppi_compare_random(x->ctx, x->m, x->c, x->p, x->evals, best, &sh)))
    return rc;
  if (*best) {
    int32_t st;
    set_shape(r, &sh);
    r->devices = 0; /* per-stage degrees too */
    for (st = 0; st < pp_plan_nstage(*best); st++)
      r->devices += pp_plan_nreplica(*best, st) * pp_plan_stage_tp(*best, st);
  }
  r->evaluations = x->evals;
  return PP_OK;
}

/* The baselines, run in this order, each into its row. */
static const struct baseline {
  int row;
  const char *method;
  pp_status (*run)(struct ctxs *x, pp_compare_row *r, pp_plan **best);
} baselines[] = {
    {ROW_MEGATRON, "megatron", megatron},
    {ROW_AMP, "amp", amp},
    {ROW_PIPEDREAM, "pipedream", pipedream},
    {ROW_RANDOM, "random", random_search},
};

/* Our estimate and simulation of a baseline's plan. */
static pp_status rescore(struct ctxs *x, pp_compare_row *r, const pp_plan *pl)
{
  pp_cost_params cp;
  pp_sim *sim;
  pp_sim_summary ss;
  bool fits;
  pp_status rc;
  if ((rc = estimate(x, pl, PP_COST_PARPLAN, &r->estimate_ms, &fits)))
    return rc;
  pp_cost_params_init(&cp);
  cp.allreduce = x->p->allreduce;
  cp.reserve_bytes = x->p->reserve_bytes;
  cp.calibration = x->p->calibration;
  cp.record = 0;
  if ((rc = pp_simulate(x->ctx, pl, x->m, x->c, &cp, &sim)))
    return rc;
  pp_sim_get_summary(sim, &ss);
  r->simulated_ms = ss.iteration_ms;
  r->fits = fits && ppi_sim_fits(sim, x->c, x->p->memory_margin);
  pp_sim_destroy(sim);
  return PP_OK;
}

void pp_compare_destroy(pp_compare *x)
{
  int i;
  if (!x)
    return;
  for (i = 0; i < NROW; i++)
    pp_plan_destroy(x->plan[i]);
  ppi_raw_free(x->a, x, sizeof *x);
}

pp_status pp_plan_compare(pp_ctx *ctx, const pp_model *m, const pp_cluster *c,
                          const pp_search_params *p, pp_compare **out)
{
  struct ctxs x;
  pp_compare *res = NULL;
  pp_search *sr = NULL;
  pp_search_summary sum;
  pp_search_plan y;
  int32_t N, nop, i;
  size_t k;
  double t0;
  pp_status rc;

  if (!ctx)
    return PP_EINVAL;
  if (!m || !c || !p || !out)
    return ppi_fail(ctx, PP_EINVAL, "pp_plan_compare: NULL argument");
  *out = NULL;
  N = pp_cluster_ndev(c);
  nop = pp_model_nop(m);
  memset(&x, 0, sizeof x);
  x.ctx = ctx;
  x.m = m;
  x.c = c;
  x.p = p;
  if (!(res = ppi_calloc(ctx, 1, sizeof *res)))
    return PP_ENOMEM;
  res->a = ppi_ctx_alloc(ctx);
  t0 = ppi_now_s();
  if ((rc = pp_plan_search(ctx, m, c, p, &sr)))
    goto done;
  pp_search_get_summary(sr, &sum);
  res->row[ROW_OURS].method = "parplan";
  res->row[ROW_OURS].about = "our search (docs/PLANNER.md)";
  res->row[ROW_OURS].evaluations = sum.evaluated;
  res->row[ROW_OURS].seconds = ppi_now_s() - t0;
  if (sum.nplans) {
    struct ppi_shape sh = {0};
    pp_search_plan_get(sr, 0, &y);
    sh.pp = y.pp;
    sh.dp = y.dp;
    sh.tp = y.tp;
    sh.mbs = y.micro_batch;
    sh.sched = y.schedule;
    sh.rec = y.recompute;
    set_shape(&res->row[ROW_OURS], &sh);
    res->row[ROW_OURS].devices = y.devices;
    res->plan[ROW_OURS] = ppi_search_take_plan(sr, 0);
  }
  for (k = 0; k < sizeof baselines / sizeof baselines[0]; k++)
    res->row[baselines[k].row].method = baselines[k].method;
  res->row[ROW_LB].method = "lower bound";
  res->row[ROW_LB].about = "no plan of our space can be faster";
  res->row[ROW_LB].simulated_ms = sum.lower_bound_ms;
  res->row[ROW_LB].estimate_ms = sum.lower_bound_ms;
  {
    pp_model *view = NULL;
    if ((rc = pp_model_chain_view(ctx, m, 0, &view)))
      goto done;
    x.L = pp_model_nop(view);
    pp_model_destroy(view);
  }
  if (!(x.ops = ppi_alloc(ctx, (size_t)(nop > 0 ? nop : 1) * sizeof *x.ops)) ||
      !(x.off = ppi_alloc(ctx, (size_t)(N + 1) * sizeof *x.off)) ||
      !(x.devs = ppi_alloc(ctx, (size_t)N * sizeof *x.devs)) ||
      !(x.reps = ppi_alloc(ctx, (size_t)N * sizeof *x.reps))) {
    rc = PP_ENOMEM;
    goto done;
  }
  for (i = 0; i < N; i++)
    x.devs[i] = i; /* index order: the placement users get */
  x.evals = sum.evaluated;
  for (k = 0; k < sizeof baselines / sizeof baselines[0]; k++) {
    int row = baselines[k].row;
    t0 = ppi_now_s();
    if ((rc = baselines[k].run(&x, &res->row[row], &res->plan[row])))
      goto done;
    res->row[row].seconds = ppi_now_s() - t0;
  }
  for (i = 0; i < ROW_LB; i++)
    if (res->plan[i] && (rc = rescore(&x, &res->row[i], res->plan[i])))
      goto done;
  for (i = 0; i < NROW; i++)
    if (res->row[i].found && res->row[ROW_OURS].found)
      res->row[i].speedup =
          res->row[i].simulated_ms / res->row[ROW_OURS].simulated_ms;
  *out = res;
  res = NULL;
done:
  ppi_free(ctx, x.ops, (size_t)(nop > 0 ? nop : 1) * sizeof *x.ops);
  ppi_free(ctx, x.off, (size_t)(N + 1) * sizeof *x.off);
  ppi_free(ctx, x.devs, (size_t)N * sizeof *x.devs);
  ppi_free(ctx, x.reps, (size_t)N * sizeof *x.reps);
  pp_search_destroy(sr);
  pp_compare_destroy(res);
  return rc;
}

int32_t pp_compare_nrow(const pp_compare *x)
{
  return x ? NROW : 0;
}

pp_status pp_compare_row_get(const pp_compare *x, int32_t i,
                             pp_compare_row *out)
{
  if (!x || !out || i < 0 || i >= NROW)
    return PP_EINVAL;
  *out = x->row[i];
  return PP_OK;
}

const pp_plan *pp_compare_plan(const pp_compare *x, int32_t i)
{
  return x && i >= 0 && i < NROW ? x->plan[i] : NULL;
}
