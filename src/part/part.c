/* SPDX-License-Identifier: MIT */
/*
** The partition object: the names of the objectives and methods, the
** parameters' defaults, the result and its queries, and the builders the
** flows fill it with (partition.h): from a chain partition first[0..S]
** or from an operator staging, each giving the stages as original
** operators, their costs and memory, and the stage graph.
**
** "Nothing fits" is a result: when no partition fits the memory limits,
** the one whose worst stage comes closest (the min-max of memory / limit)
** is returned with fits = 0, so the user learns which stage needs how
** much against how much.
**
** Invariant: a filled partition lists every operator of the model once,
** each stage's in topological order for a staging and in layer order for
** a chain; the summary's worst_stage is the stage of the largest memory
** / limit ratio.
** Complexity: filling is linear in the operators and edges of the model
** (plus the stage graph's edges, ppi_stage_edges); queries O(1).
** Source: docs/PARTITION.md.
*/
#include "map/map.h"
#include "part/part_view.h"
#include "part/partition.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const obj_names[] = {"minmax", "amp", "madpipe"};

static const char *const meth_names[] = {"optimal",        "uniform-layers",
                                         "uniform-params", "pipedream",
                                         "pipedream-star", "amp-original"};

const char *pp_part_objective_name(pp_part_objective o)
{
  return ppi_enum_name(obj_names, PPI_COUNT(obj_names), (int)o);
}

pp_status pp_part_objective_parse(const char *name, pp_part_objective *out)
{
  int v;
  pp_status rc = ppi_enum_parse(obj_names, PPI_COUNT(obj_names), name, &v);
  if (rc == PP_OK)
    *out = (pp_part_objective)v;
  return rc;
}

const char *pp_part_method_name(pp_part_method m)
{
  return ppi_enum_name(meth_names, PPI_COUNT(meth_names), (int)m);
}

pp_status pp_part_method_parse(const char *name, pp_part_method *out)
{
  int v;
  pp_status rc = ppi_enum_parse(meth_names, PPI_COUNT(meth_names), name, &v);
  if (rc == PP_OK)
    *out = (pp_part_method)v;
  return rc;
}

void pp_part_params_init(pp_part_params *p)
{
  if (!p)
    return;
  memset(p, 0, sizeof *p);
  p->objective = PP_OBJ_MINMAX;
  p->method = PP_PART_OPTIMAL;
  p->replicas = 1;
  p->tp = 1;
  /* TUNING: the defaults (docs/PARTITION.md): a 10 GB/s flat network,
  ** MadPipe's 10 bisection iterations, a minute and 20,000 branch-and-bound
  ** nodes for its ILP, 1,000 refinement steps (refinement strictly
  ** lowers its potential each step, so the cap only bounds the time); set
  ** with the partitioners (ffad48c, 46c8c19), no sweep recorded */
  p->bandwidth_gbps = 10;
  p->gas = 1;
  p->schedule = PP_SCHED_1F1B;
  p->optimizer = PP_OPT_ADAM_MIXED;
  p->iterations = 10;
  p->time_limit_s = 60;
  p->max_nodes = 20000;
  p->flat_device = -1;
  p->alpha = 1;
  p->refine_steps = 1000;
}

/* ---- the result ------------------------------------------------------- */

int ppi_partition_pattern(const pp_partition *pt, int32_t s, double sig[4])
{
  if (!pt || !pt->sig || s < 0 || s >= pt->S)
    return 0;
  memcpy(sig, pt->sig + 4 * (size_t)s, 4 * sizeof *sig);
  return 1;
}

/* What the writers (part_write.c) see. */
const struct ppi_part_view *ppi_part_view(const pp_partition *pt,
                                          struct ppi_part_view *v)
{
  v->sum = &pt->sum;
  v->S = pt->S;
  v->st = pt->st;
  v->op_off = pt->op_off;
  v->ops = pt->ops;
  v->model_name = pt->model_name;
  v->sg_compute = pt->sg_compute;
  v->sg_param = pt->sg_param;
  v->ne = pt->ne;
  v->e = pt->e;
  v->dev = pt->dev;
  v->dev_name = (const char *const *)pt->dev_name;
  v->bandwidth_gbps = pt->bandwidth_gbps;
  v->latency_us = pt->latency_us;
  v->replicas = pt->replicas;
  v->micro_batch = pt->micro_batch;
  v->gas = pt->gas;
  v->schedule = pt->schedule;
  v->optimizer = pt->optimizer;
  v->phase1 = pt->phase1;
  v->est = pt->est;
  return v;
}

void pp_partition_destroy(pp_partition *pt)
{
  if (pt)
    ppi_arena_free_owner(&pt->arena, pt, sizeof *pt);
}

pp_status pp_partition_summary(const pp_partition *pt, pp_part_summary *out)
{
  if (!pt || !out)
    return PP_EINVAL;
  *out = pt->sum;
  return PP_OK;
}

pp_status pp_partition_stage(const pp_partition *pt, int32_t s,
                             pp_part_stage *out)
{
  if (!pt || !out || s < 0 || s >= pt->S)
    return PP_EINVAL;
  *out = pt->st[s];
  return PP_OK;
}

const int32_t *pp_partition_stage_ops(const pp_partition *pt, int32_t s,
                                      int32_t *n)
{
  if (!pt || s < 0 || s >= pt->S) {
    if (n)
      *n = 0;
    return NULL;
  }
  if (n)
    *n = pt->op_off[s + 1] - pt->op_off[s];
  return pt->ops + pt->op_off[s];
}

/* ---- building it --------------------------------------------------------- */

pp_status ppi_partition_new(pp_ctx *ctx, const pp_model *m,
                            const pp_part_params *p, int32_t mbs,
                            struct pp_partition **out)
{
  struct pp_partition *pt;
  int32_t s, S = p->stages;

  *out = NULL;
  if (!(pt = ppi_calloc(ctx, 1, sizeof *pt)))
    return PP_ENOMEM;
  ppi_arena_init(&pt->arena, ppi_ctx_alloc(ctx));
  *out = pt;
  pt->micro_batch = mbs;
  pt->replicas = p->replicas;
  pt->gas = p->gas;
  pt->schedule = p->schedule;
  pt->optimizer = p->optimizer;
  pt->phase1 = p->madpipe_phase1;
  pt->bandwidth_gbps = p->bandwidth_gbps;
  pt->latency_us = p->latency_us;
  if (!(pt->model_name = ppi_arena_strdup(&pt->arena, ctx, pp_model_name(m))))
    return PP_ENOMEM;
  if (p->devices) {
    struct ppi_arena *ar = &pt->arena;
    if (!PPI_ARENA_NEW(ar, ctx, pt->dev, S) ||
        !PPI_ARENA_NEW(ar, ctx, pt->dev_name, S))
      return PP_ENOMEM;
    for (s = 0; s < S; s++) {
      pp_device_desc d;
      pt->dev[s] = p->devices[s];
      pp_cluster_device(p->cluster, p->devices[s], &d);
      if (!(pt->dev_name[s] = ppi_arena_strdup(ar, ctx, d.name)))
        return PP_ENOMEM;
    }
    pt->latency_us = pp_cluster_latency(p->cluster);
  }
  pt->sum.objective = p->objective;
  pt->sum.method = p->method;
  pt->sum.nproc = S;
  return PP_OK;
}

/* ---- filling it ---------------------------------------------------------- */

pp_status ppi_partition_fill_chain(pp_ctx *ctx, struct pp_partition *pt,
                                   const struct ppi_chain *c, const pp_model *m,
                                   const pp_model *v, const int32_t *first,
                                   int32_t S, const int32_t *proc,
                                   const uint8_t *special,
                                   const int32_t *inflight)
{
  struct ppi_arena *ar = &pt->arena;
  int32_t s, l, k, n, nop = pp_model_nop(m), *stage_of;
  pp_status rc;

  pt->S = S;
  if (!PPI_ARENA_NEW(ar, ctx, pt->st, S) ||
      !PPI_ARENA_NEW(ar, ctx, pt->op_off, S + 1) ||
      !PPI_ARENA_NEW(ar, ctx, pt->ops, nop) ||
      !PPI_ARENA_NEW(ar, ctx, pt->sg_compute, S) ||
      !PPI_ARENA_NEW(ar, ctx, pt->sg_param, S) ||
      !(stage_of = ppi_calloc(ctx, (size_t)nop, sizeof *stage_of)))
    return PP_ENOMEM;
  for (s = 0, n = 0; s < S; s++) {
    pp_part_stage *x = &pt->st[s];
    int32_t i = first[s], j = first[s + 1] - 1, pos = proc ? proc[s] : s;
    pt->op_off[s] = n;
    for (l = i; l <= j; l++) {
      int32_t nm;
      const int32_t *mem = pp_model_layer_members(v, l, &nm);
      for (k = 0; k < nm; k++) {
        pt->ops[n++] = mem[k];
        stage_of[mem[k]] = s;
      }
    }
    x->first_layer = i;
    x->nlayer = j - i + 1;
    x->proc = pos;
    x->special = special ? special[s] : 0;
    x->compute_ms = ppi_ch_work(c, pos, i, j);
    x->comm_ms = (i > 0 ? ppi_ch_comm(c, proc ? pos : s - 1, i - 1) : 0) +
                 (j < c->L - 1 ? ppi_ch_comm(c, pos, j) : 0);
    x->param_bytes = ppi_ch_pp(c, pos)[j + 1] - ppi_ch_pp(c, pos)[i];
    x->in_flight = inflight ? inflight[s] : (int32_t)c->nf[pos];
    x->memory_bytes = ppi_ch_mem_sg(c, pos, i, j, x->in_flight);
    x->memory_limit_bytes = c->mem[pos];
  }
  pt->op_off[S] = n;
  /* the stage graph, at speed 1 */
  for (s = 0; s < S; s++) {
    pp_type_key key = {.name = NULL, .speed = 1};
    pt->sg_param[s] = pt->st[s].param_bytes;
    for (l = first[s]; l < first[s + 1]; l++) {
      pp_op_time t;
      if ((rc = pp_model_op_time(v, l, &key, 1, pt->micro_batch, &t))) {
        ppi_free(ctx, stage_of, (size_t)nop * sizeof *stage_of);
        return rc;
      }
      pt->sg_compute[s] += t.fwd_ms + t.bwd_ms;
    }
  }
  {
    struct ppi_sedge *e;
    rc = ppi_stage_edges(ctx, m, stage_of,
                         (double)pt->micro_batch / pp_model_micro_batch(m), &e,
                         &pt->ne);
    if (rc == PP_OK) {
      if (PPI_ARENA_NEW(ar, ctx, pt->e, pt->ne))
        memcpy(pt->e, e, (size_t)pt->ne * sizeof *e);
      else
        rc = PP_ENOMEM;
      ppi_stage_edges_free(ctx, m, e);
    }
  }
  ppi_free(ctx, stage_of, (size_t)nop * sizeof *stage_of);
  if (rc)
    return rc;
  /* memory: the worst share */
  pt->sum.fits = 1;
  pt->sum.worst_stage = 0;
  {
    double worst = -1;
    for (s = 0; s < S; s++) {
      double r = pt->st[s].memory_bytes / pt->st[s].memory_limit_bytes;
      if (r > 1)
        pt->sum.fits = 0;
      if (r > worst) {
        worst = r;
        pt->sum.worst_stage = s;
      }
    }
  }
  return PP_OK;
}

pp_status ppi_partition_fill_dag(pp_ctx *ctx, struct pp_partition *pt,
                                 const struct ppi_dag *g, const pp_model *m,
                                 const int32_t *stage_of, int32_t mbs)
{
  struct ppi_arena *ar = &pt->arena;
  int32_t S = g->S, n = g->n, s, i, e, *fill_at;
  const int32_t *topo = pp_model_topo_order(m);
  double *t, *mem;
  pp_status rc;

  pt->S = S;
  if (!PPI_ARENA_NEW(ar, ctx, pt->st, S) ||
      !PPI_ARENA_NEW(ar, ctx, pt->op_off, S + 1) ||
      !PPI_ARENA_NEW(ar, ctx, pt->ops, n) ||
      !PPI_ARENA_NEW(ar, ctx, pt->sg_compute, S) ||
      !PPI_ARENA_NEW(ar, ctx, pt->sg_param, S) ||
      !PPI_ARENA_NEW(ar, ctx, t, S) || !PPI_ARENA_NEW(ar, ctx, mem, S) ||
      !PPI_ARENA_NEW(ar, ctx, fill_at, S))
    return PP_ENOMEM;
  ppi_dag_eval(g, stage_of, t, mem);
  for (i = 0; i < n; i++)
    pt->op_off[stage_of[i] + 1]++;
  for (s = 0; s < S; s++)
    pt->op_off[s + 1] += pt->op_off[s];
  for (i = 0; i < n; i++) { /* each stage in topological order */
    int32_t v = topo[i], st = stage_of[v];
    pt->ops[pt->op_off[st] + fill_at[st]++] = v;
  }
  for (s = 0; s < S; s++) {
    pp_part_stage *x = &pt->st[s];
    x->first_layer = -1; /* operators, not layers */
    x->nlayer = pt->op_off[s + 1] - pt->op_off[s];
    x->proc = s;
    x->time_ms = t[s];
    x->memory_bytes = mem[s];
    x->memory_limit_bytes = g->mem[s];
    x->in_flight = (int32_t)g->nf[s];
  }
  for (i = 0; i < n; i++) {
    pp_part_stage *x = &pt->st[stage_of[i]];
    x->compute_ms += g->w[i];
    x->param_bytes += g->param[i];
  }
  for (e = 0; e < g->ne; e++) {
    int32_t a = stage_of[g->esrc[e]], b = stage_of[g->edst[e]];
    if (a != b) {
      pt->st[a].comm_ms += g->ec[e];
      pt->st[b].comm_ms += g->ec[e];
    }
  }
  for (s = 0; s < S; s++) {
    pt->sg_compute[s] = pt->st[s].compute_ms;
    pt->sg_param[s] = pt->st[s].param_bytes;
  }
  {
    struct ppi_sedge *se;
    rc = ppi_stage_edges(ctx, m, stage_of,
                         (double)mbs / pp_model_micro_batch(m), &se, &pt->ne);
    if (rc)
      return rc;
    if (PPI_ARENA_NEW(ar, ctx, pt->e, pt->ne))
      memcpy(pt->e, se, (size_t)pt->ne * sizeof *se);
    else
      rc = PP_ENOMEM;
    ppi_stage_edges_free(ctx, m, se);
    if (rc)
      return rc;
  }
  {
    double worst = -1;
    for (s = 0; s < S; s++) {
      double r = mem[s] / g->mem[s];
      if (r > 1)
        pt->sum.fits = 0;
      if (r > worst) {
        worst = r;
        pt->sum.worst_stage = s;
      }
    }
  }
  pt->sum.nstage = S;
  pt->sum.nlayer = n;
  {
    double tot = 0, big = 0;
    for (i = 0; i < n; i++) {
      tot += g->w[i];
      big = g->w[i] > big ? g->w[i] : big;
    }
    pt->sum.lower_bound_ms = (tot / S > big ? tot / S : big) / g->R;
  }
  if (!pt->sum.fits)
    pt->sum.exact = 0;
  return PP_OK;
}

pp_status pp_partition_stage_graph(pp_ctx *ctx, const pp_partition *pt,
                                   pp_stage_graph **out)
{
  struct pp_stage_graph *g;
  struct ppi_arena *ar;
  int32_t s, e;
  if (!ctx || !pt || !out)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_partition_stage_graph: NULL")
               : PP_EINVAL;
  *out = NULL;
  if (!(g = ppi_calloc(ctx, 1, sizeof *g)))
    return PP_ENOMEM;
  ppi_arena_init(&g->arena, ppi_ctx_alloc(ctx));
  ar = &g->arena;
  g->S = pt->S;
  g->ne = pt->ne;
  if (!(g->source = ppi_arena_strdup(ar, ctx, pt->model_name)) ||
      !PPI_ARENA_NEW(ar, ctx, g->name, g->S) ||
      !PPI_ARENA_NEW(ar, ctx, g->compute, g->S) ||
      !PPI_ARENA_NEW(ar, ctx, g->param, g->S) ||
      !PPI_ARENA_NEW(ar, ctx, g->from, g->ne) ||
      !PPI_ARENA_NEW(ar, ctx, g->to, g->ne) ||
      !PPI_ARENA_NEW(ar, ctx, g->bytes, g->ne)) {
    pp_stage_graph_destroy(g);
    return PP_ENOMEM;
  }
  for (s = 0; s < g->S; s++) {
    char buf[32];
    snprintf(buf, sizeof buf, "stage%d", (int)s);
    if (!(g->name[s] = ppi_arena_strdup(ar, ctx, buf))) {
      pp_stage_graph_destroy(g);
      return PP_ENOMEM;
    }
    g->compute[s] = pt->sg_compute[s];
    g->param[s] = pt->sg_param[s];
  }
  for (e = 0; e < g->ne; e++) {
    g->from[e] = pt->e[e].a;
    g->to[e] = pt->e[e].b;
    g->bytes[e] = pt->e[e].bytes;
  }
  *out = g;
  return PP_OK;
}
