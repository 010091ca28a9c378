/* SPDX-License-Identifier: MIT */
/*
** The DAG flow (Parmesan phase 1, [Parmesan] 4): the min-max partition of
** an operator graph on one device type, in three steps:
**   1. clustering (part_cluster.c): when the graph has more than K
**      operators (K = clusters, default max(16 S, 256)) and the exact
**      DP is not asked for, hyper-operators that stay within the memory
**      limit, contracted into a smaller DAG;
**   2. the DP (part_dag.c): over every fronted subgraph (down-set) when
**      there are at most PPI_DOWNSETS_AUTO of them (PPI_DOWNSETS_EXACT with
**      --exact), else over the prefixes of one topological order; when
**      nothing fits, the best partition without limits (fits = 0);
**   3. refinement (part_refine.c): single-operator moves between
**      neighbouring stages that strictly improve, on the full graph.
** The layer-level partition (the chain view's exact min-max) competes
** too: every layer-level partition is a fronted staging, so the flow
** never returns worse than it when it fits.
**
** Objective: max over stages of (work + boundary transfers) / R.
** Invariant: every staging kept has stage(u) <= stage(v) on every edge
** u -> v and no empty stage; the result is exact only when the DP ran
** over every down-set of the unclustered graph.
** Complexity: the clustering's, the DP's and the refinement's (their
** files); O(n + E) here.
** Source: docs/PARTITION.md, "Operator DAGs (Parmesan phase 1)".
*/
#include "part/partition.h"

#include <math.h>
#include <string.h>

/* The operator graph of m for the DP (nodes = operators). */
static pp_status build_dag(pp_ctx *ctx, struct ppi_arena *ar, const pp_model *m,
                           const pp_part_params *p, int32_t mbs,
                           const struct ppi_chain *c, struct ppi_dag *g,
                           unsigned *est)
{
  int32_t n = pp_model_nop(m), v, e;
  double scale = (double)mbs / pp_model_micro_batch(m);
  pp_type_key key = {.name = NULL, .speed = 1};
  pp_status rc;

  memset(g, 0, sizeof *g);
  g->n = n;
  g->ne = pp_model_nedge(m);
  g->S = p->stages;
  g->R = p->replicas;
  g->fac = c->fac;
  g->reserve = c->reserve;
  g->mem = c->mem;
  g->nf = c->nf;
  if (!(g->w = ppi_arena_alloc(ar, ctx, (size_t)n, sizeof *g->w)) ||
      !(g->param = ppi_arena_alloc(ar, ctx, (size_t)n, sizeof *g->param)) ||
      !(g->saved = ppi_arena_alloc(ar, ctx, (size_t)n, sizeof *g->saved)) ||
      !(g->esrc = ppi_arena_alloc(ar, ctx, (size_t)(g->ne ? g->ne : 1),
                                  sizeof *g->esrc)) ||
      !(g->edst = ppi_arena_alloc(ar, ctx, (size_t)(g->ne ? g->ne : 1),
                                  sizeof *g->edst)) ||
      !(g->ec = ppi_arena_alloc(ar, ctx, (size_t)(g->ne ? g->ne : 1),
                                sizeof *g->ec)) ||
      !(g->eb = ppi_arena_alloc(ar, ctx, (size_t)(g->ne ? g->ne : 1),
                                sizeof *g->eb)))
    return PP_ENOMEM;
  for (v = 0; v < n; v++) {
    pp_op_time t;
    pp_op_sizes z;
    if ((rc = pp_model_op_time(m, v, &key, 1, mbs, &t)) ||
        (rc = pp_model_op_sizes(m, v, 1, mbs, &z)))
      return rc;
    *est |= t.est | z.est;
    g->w[v] = t.fwd_ms + t.bwd_ms;
    g->param[v] = z.param_bytes;
    g->saved[v] = z.saved_bytes;
  }
  for (e = 0; e < g->ne; e++) {
    int64_t bytes;
    pp_model_edge(m, e, &g->esrc[e], &g->edst[e], &bytes);
    g->eb[e] = (double)bytes * scale;
    g->ec[e] = g->eb[e] > 0 ? c->lat_ms + g->eb[e] / (c->bw[0] * 1e6) : 0;
  }
  return ppi_dag_index(ctx, ar, g);
}

/* The layer-level partition (the chain view's exact min-max) as an
** operator staging, if it fits: a candidate the operator-level flow must
** beat, since every layer-level partition is a fronted staging. */
static pp_status layer_candidate(pp_ctx *ctx, struct ppi_arena *tmp,
                                 const struct ppi_chain *c, const pp_model *v,
                                 bool mem, int32_t *stage_of, bool *ok)
{
  int32_t *first, s, l, k, n;
  double obj;
  pp_status rc;
  *ok = false;
  if (c->S > c->L)
    return PP_OK;
  if (!(first = ppi_arena_alloc(tmp, ctx, (size_t)c->S + 1, sizeof *first)))
    return PP_ENOMEM;
  rc = ppi_part_minmax(ctx, c, mem, first, &obj);
  if (rc == PP_EINPUT)
    return PP_OK;
  if (rc)
    return rc;
  for (s = 0; s < c->S; s++)
    for (l = first[s]; l < first[s + 1]; l++) {
      const int32_t *mb = pp_model_layer_members(v, l, &n);
      for (k = 0; k < n; k++)
        stage_of[mb[k]] = s;
    }
  *ok = true;
  return PP_OK;
}

pp_status ppi_part_flow_dag(const struct ppi_part_job *j)
{
  pp_ctx *ctx = j->ctx;
  struct pp_partition *pt = j->pt;
  const pp_model *m = j->m, *view = j->v;
  const pp_part_params *p = j->p;
  const struct ppi_chain *c = j->c;
  int32_t mbs = j->mbs;
  struct ppi_arena *tmp = j->tmp;
  struct ppi_dag g, h;
  int32_t n = pp_model_nop(m), S = p->stages, K, k, v, s, *of, *hstage,
          *stage_of, moves = 0;
  double obj, t0 = ppi_now_s(), *scr;
  bool mem = false, done = false, clustered;
  pp_status rc;

  if ((rc = build_dag(ctx, tmp, m, p, mbs, c, &g, &pt->est)))
    return rc;
  for (s = 0; s < S; s++)
    mem = mem || isfinite(c->mem[s]);
  /* TUNING: clustering stops at 16 hyper-operators per stage, at least
  ** 256: few enough for the down-set DP, enough for each stage's boundary
  ** to move (46c8c19; docs/PARTITION.md) */
  K = p->clusters > 0 ? p->clusters : (16 * S > 256 ? 16 * S : 256);
  if (K < S)
    K = S;
  if (!(of = ppi_arena_alloc(tmp, ctx, (size_t)n, sizeof *of)) ||
      !(stage_of = ppi_arena_alloc(tmp, ctx, (size_t)n, sizeof *stage_of)) ||
      !(scr = ppi_arena_alloc(tmp, ctx, (size_t)S, sizeof *scr)))
    return PP_ENOMEM;
  clustered = !p->exact && n > K;
  if (clustered) {
    double nfmax = 0, lim = INFINITY;
    for (s = 0; s < S; s++) {
      nfmax = c->nf[s] > nfmax ? c->nf[s] : nfmax;
      lim = c->mem[s] < lim ? c->mem[s] : lim;
    }
    if ((rc = ppi_dag_cluster(ctx, &g, K, p->alpha, lim, nfmax, of, &k)) ||
        (rc = ppi_dag_contract(ctx, tmp, &g, of, k, &h)))
      return rc;
  } else {
    for (v = 0; v < n; v++)
      of[v] = v;
    h = g;
    k = n;
  }
  if (k < S)
    return ppi_fail(ctx, PP_EINPUT,
                    "partition: %d stages for %d operators of '%s'; at most "
                    "one stage per operator",
                    (int)S, (int)k, pp_model_name(m));
  if (!(hstage = ppi_arena_alloc(tmp, ctx, (size_t)k, sizeof *hstage)))
    return PP_ENOMEM;
  rc = ppi_dag_dp_ideals(ctx, &h,
                         p->exact ? PPI_DOWNSETS_EXACT : PPI_DOWNSETS_AUTO, mem,
                         hstage, &obj, &done);
  if (rc == PP_EINPUT && mem) { /* nothing fits: the best without limits */
    pt->sum.fits = 0;
    rc = ppi_dag_dp_ideals(ctx, &h,
                           p->exact ? PPI_DOWNSETS_EXACT : PPI_DOWNSETS_AUTO, 0,
                           hstage, &obj, &done);
    mem = false;
  }
  if (rc)
    return rc;
  if (!done) {
    int32_t *order;
    if (p->exact)
      return ppi_fail(ctx, PP_ELIMIT,
                      "partition: model '%s' has more than %lld fronted "
                      "subgraphs (down-sets); the exact DP is out of reach, "
                      "drop --exact for clustering and the DP over one "
                      "topological order",
                      pp_model_name(m), (long long)PPI_DOWNSETS_EXACT);
    if (!(order = ppi_arena_alloc(tmp, ctx, (size_t)k, sizeof *order)))
      return PP_ENOMEM;
    if ((rc = ppi_dag_order(ctx, &h, order)))
      return rc;
    rc = ppi_dag_dp_prefix(ctx, &h, order, mem, hstage, &obj);
    if (rc == PP_EINPUT && mem) {
      rc = ppi_dag_dp_prefix(ctx, &h, order, 0, hstage, &obj);
      mem = false;
    }
    if (rc)
      return rc;
  }
  for (v = 0; v < n; v++)
    stage_of[v] = hstage[of[v]];
  {
    /* the layer-level partition, when it is better and fits */
    int32_t *alt;
    bool ok;
    if (!(alt = ppi_arena_alloc(tmp, ctx, (size_t)n, sizeof *alt)))
      return PP_ENOMEM;
    if ((rc = layer_candidate(ctx, tmp, c, view, mem, alt, &ok)))
      return rc;
    if (ok) {
      double *ta, *ma;
      bool fits = true;
      if (!(ta = ppi_arena_alloc(tmp, ctx, (size_t)S, sizeof *ta)) ||
          !(ma = ppi_arena_alloc(tmp, ctx, (size_t)S, sizeof *ma)))
        return PP_ENOMEM;
      ppi_dag_eval(&g, alt, ta, ma);
      for (s = 0; s < S && mem; s++)
        fits = fits && ma[s] <= c->mem[s];
      pt->sum.dag_layer_ms = ppi_dag_objective(&g, alt, scr);
      if (fits && ppi_dag_objective(&g, alt, scr) <
                      ppi_dag_objective(&g, stage_of, scr)) {
        memcpy(stage_of, alt, (size_t)n * sizeof *alt);
        pt->sum.dag_layer_start = 1;
      }
    }
  }
  if (p->refine_steps > 0 &&
      (rc = ppi_dag_refine(ctx, &g, p->refine_steps, mem, stage_of, &moves)))
    return rc;
  pt->sum.seconds = ppi_now_s() - t0;
  pt->sum.dag_ops = n;
  pt->sum.dag_clusters = k;
  pt->sum.dag_moves = moves;
  pt->sum.dag_downsets = done;
  pt->sum.exact = done && !clustered;
  pt->sum.objective_ms = ppi_dag_objective(&g, stage_of, scr);
  return ppi_partition_fill_dag(ctx, pt, &g, m, stage_of, mbs);
}
