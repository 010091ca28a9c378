/* SPDX-License-Identifier: MIT */
/*
** The layer-level (chain) view of an operator DAG.
**
** Objective: a chain whose cuts are exactly the cuts of the model's
** topological order that a pipeline could make, each priced with the
** bytes that really cross it.  Layer-level planners (AMP, PipeDream's
** chain DP, MadPipe) then run unchanged on DAG models.
**
** Definition: lay the operators out in pp_model_topo_order.  A tensor
** (the output of operator u at position p) crosses the cut after
** position i when p <= i < q for some consumer at position q; it is
** sent once per cut, so it costs the largest byte count among u's edges
** to consumers beyond the cut.  By default a layer ends at every cut
** crossed by at most one tensor (a "single-tensor cut": the classic
** layer boundary, e.g. between residual blocks); with every_op each
** operator is a layer.
**
** Invariant: the chain's edge after layer l carries exactly the bytes
** crossing the cut after its last operator, and each layer's times,
** FLOPs and sizes are the sums over its operators (a profile entry is
** missing for the layer when it is missing for any member).  Ties: a
** single-operator layer tied to an operator elsewhere stays tied to
** that operator's layer; in a larger layer a tied operator's bytes are
** counted as a copy, unless its owner is in the same layer.
**
** Cost: O(n log n + e log e) time, O(n + e) memory.
*/
#include "model/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cons {
  int32_t pos;
  int64_t bytes;
};

static int cmp_cons(const void *x, const void *y)
{
  const struct cons *a = x, *b = y;
  return a->pos < b->pos ? -1 : a->pos > b->pos;
}

struct chain_run {
  pp_ctx *ctx;
  const struct pp_model *m;
  int32_t n;
  int64_t *cut_bytes; /* [0:n-2] bytes crossing the cut after position i */
  int32_t *cut_count; /* [0:n-2] tensors crossing it */
  struct cons *cons;  /* scratch, max out-degree */
  int32_t maxdeg;
};

/* Allocate a run's arrays (cut_bytes only when bytes is set) and price
** the cuts; run_close frees whatever was allocated. */
static pp_status price_cuts(struct chain_run *r);
static pp_status run_open(struct chain_run *r, pp_ctx *ctx,
                          const struct pp_model *m, bool bytes)
{
  int32_t v;
  memset(r, 0, sizeof *r);
  r->ctx = ctx;
  r->m = m;
  r->n = m->nop;
  r->maxdeg = 1;
  for (v = 0; v < r->n; v++)
    if (m->out_off[v + 1] - m->out_off[v] > r->maxdeg)
      r->maxdeg = m->out_off[v + 1] - m->out_off[v];
  r->cut_count = ppi_calloc(ctx, (size_t)r->n, sizeof *r->cut_count);
  r->cons = ppi_calloc(ctx, (size_t)r->maxdeg, sizeof *r->cons);
  if (bytes)
    r->cut_bytes = ppi_calloc(ctx, (size_t)r->n, sizeof *r->cut_bytes);
  if (!r->cut_count || !r->cons || (bytes && !r->cut_bytes))
    return ctx->err;
  return price_cuts(r);
}

static void run_close(struct chain_run *r)
{
  if (!r->ctx)
    return;
  ppi_free(r->ctx, r->cut_bytes, (size_t)r->n * sizeof *r->cut_bytes);
  ppi_free(r->ctx, r->cut_count, (size_t)r->n * sizeof *r->cut_count);
  ppi_free(r->ctx, r->cons, (size_t)r->maxdeg * sizeof *r->cons);
}

/* The model's size ceiling, PPI_MAX_BYTES, as a double. */
#define MAX_SUM ((double)PPI_MAX_BYTES)

/* Fill cut_count, and cut_bytes when it is not NULL, with difference
** arrays: each tensor adds its suffix-maximum byte count over the ranges
** between its consumers.  Bytes add in unsigned arithmetic (no undefined
** overflow) with a double alongside to detect sums above 2^62. */
static pp_status price_cuts(struct chain_run *r)
{
  const struct pp_model *m = r->m;
  int32_t n = r->n, v, k, i, deg;
  uint64_t *db = ppi_calloc(r->ctx, (size_t)n + 1, sizeof *db);
  double *dd = ppi_calloc(r->ctx, (size_t)n + 1, sizeof *dd);
  int32_t *dc = ppi_calloc(r->ctx, (size_t)n + 1, sizeof *dc);
  pp_status rc = PP_OK;
  if (!db || !dd || !dc) {
    rc = r->ctx->err;
    goto done;
  }
  for (v = 0; v < n; v++) {
    int32_t p = m->topo_pos[v];
    int64_t suffix = 0;
    deg = m->out_off[v + 1] - m->out_off[v];
    if (deg == 0)
      continue;
    for (k = 0; k < deg; k++) {
      int32_t e = m->out_e[m->out_off[v] + k];
      r->cons[k].pos = m->topo_pos[m->edst[e]];
      r->cons[k].bytes = m->ebytes[e];
    }
    qsort(r->cons, (size_t)deg, sizeof *r->cons, cmp_cons);
    /* Walk consumers from the last: the range of cuts before consumer k
    ** and after consumer k-1 pays the max over consumers k.. */
    for (k = deg - 1; k >= 0; k--) {
      int32_t hi = r->cons[k].pos - 1; /* last cut this consumer needs */
      int32_t lo = k > 0 ? r->cons[k - 1].pos : p;
      if (r->cons[k].bytes > suffix)
        suffix = r->cons[k].bytes;
      if (lo < p)
        lo = p;
      if (hi < lo)
        continue;
      db[lo] += (uint64_t)suffix;
      db[hi + 1] -= (uint64_t)suffix;
      dd[lo] += (double)suffix;
      dd[hi + 1] -= (double)suffix;
    }
    dc[p]++;
    dc[r->cons[deg - 1].pos]--;
  }
  {
    uint64_t sb = 0;
    double sd = 0;
    int32_t sc = 0;
    for (i = 0; i + 1 < n; i++) {
      sb += db[i];
      sd += dd[i];
      sc += dc[i];
      r->cut_count[i] = sc;
      if (!r->cut_bytes)
        continue;
      if (sd > MAX_SUM) {
        rc = ppi_fail_at(r->ctx, PP_ELIMIT, m->source, 0, 0,
                         "the tensors crossing the cut after operator '%s' "
                         "exceed 2^62 bytes",
                         m->op_name[m->topo[i]]);
        goto done;
      }
      r->cut_bytes[i] = (int64_t)sb;
    }
  }
done:
  ppi_free(r->ctx, db, ((size_t)n + 1) * sizeof *db);
  ppi_free(r->ctx, dd, ((size_t)n + 1) * sizeof *dd);
  ppi_free(r->ctx, dc, ((size_t)n + 1) * sizeof *dc);
  return rc;
}

/* Sum non-negative byte counts, refusing sums above 2^62. */
static bool add_bytes(int64_t *sum, int64_t x)
{
  if ((double)*sum + (double)x > MAX_SUM)
    return false;
  *sum += x;
  return true;
}

/* Add layer [lo, hi] (positions of the order) to the builder. */
static pp_status add_layer(struct chain_run *r, pp_model_builder *b, int32_t lo,
                           int32_t hi, const int32_t *layer_of, int32_t l)
{
  const struct pp_model *m = r->m;
  pp_op_desc d;
  char name[2 * PP_MAX_NAME + 8];
  const char *kind = m->op_kind[m->topo[lo]];
  int32_t i, v, t, id;
  pp_status rc;

  pp_op_desc_init(&d);
  for (i = lo; i <= hi; i++) {
    double f, bw;
    v = m->topo[i];
    /* the times as the cost model reads them: the fitted profile
    ** (ppi_model_fit_profiles), whose sums a line fits exactly again */
    ppi_model_point_times(m, v, -1, &f, &bw);
    d.fwd_ms += f;
    d.bwd_ms += bw;
    d.update_ms += m->upd[v];
    d.fwd_flops += m->fflops[v];
    d.bwd_flops += m->bflops[v];
    d.fwd_bytes += m->fbytes[v];
    d.bwd_bytes += m->bbytes[v];
    /* A tied operator whose owner shares this layer adds nothing. */
    if ((m->tied[v] < 0 || layer_of[m->tied[v]] != l) &&
        !add_bytes(&d.param_bytes, m->param[v]))
      break;
    if (!add_bytes(&d.saved_bytes, m->saved[v]))
      break;
    if (kind && (!m->op_kind[v] || strcmp(kind, m->op_kind[v]) != 0))
      kind = NULL;
  }
  if (i <= hi)
    return ppi_fail_at(r->ctx, PP_ELIMIT, m->source, 0, 0,
                       "the operators from '%s' to '%s' hold more than 2^62 "
                       "bytes",
                       m->op_name[m->topo[lo]], m->op_name[m->topo[hi]]);
  d.out_bytes = hi + 1 < r->n ? r->cut_bytes[hi] : m->out[m->topo[hi]];
  if (lo == hi)
    snprintf(name, sizeof name, "%s", m->op_name[m->topo[lo]]);
  else
    snprintf(name, sizeof name, "%s..%s", m->op_name[m->topo[lo]],
             m->op_name[m->topo[hi]]);
  d.name = name;
  d.kind = kind;
  if ((rc = pp_model_builder_add_op(b, &d, &id)) != PP_OK)
    return rc;
  /* The members' roofline parts, since the roofline of the sums is not
  ** the sum of the rooflines (model.h, rf_off). */
  if (d.fwd_flops + d.bwd_flops + d.fwd_bytes + d.bwd_bytes > 0)
    for (i = lo; i <= hi; i++) {
      double one[PPI_PART];
      int32_t np, k;
      const double *q = ppi_model_parts(m, m->topo[i], &np, one);
      for (k = 0; k < np; k++, q += PPI_PART)
        if (q[0] + q[1] + q[2] + q[3] > 0 &&
            (rc = ppi_model_builder_add_part(b, id, q)) != PP_OK)
          return rc;
    }
  for (t = 0; t < m->ntable; t++) {
    double f = 0, bw = 0, u = 0;
    for (i = lo; i <= hi; i++) {
      size_t c = (size_t)t * (size_t)r->n + (size_t)m->topo[i];
      double pf, pb;
      ppi_model_point_times(m, m->topo[i], t, &pf, &pb);
      f += isnan(m->tab_fwd[c]) ? NAN : pf;
      bw += pb;
      u += isnan(m->tab_upd[c]) ? 0 : m->tab_upd[c];
    }
    if (isnan(f))
      continue;
    rc = pp_model_builder_add_time(b, l, m->tab_type[t], m->tab_tp[t],
                                   m->tab_mbs[t], f, bw, u);
    if (rc != PP_OK)
      return rc;
  }
  for (t = 0; t < m->ntps; t++) {
    int64_t pb = 0, ob = 0, sb = 0;
    bool all = true;
    for (i = lo; i <= hi && all; i++) {
      size_t c = (size_t)t * (size_t)r->n + (size_t)m->topo[i];
      if (m->tps_param[c] < 0 || !add_bytes(&pb, m->tps_param[c]) ||
          !add_bytes(&sb, m->tps_saved[c]))
        all = false; /* absent, or too large to sum: left out */
      ob = m->tps_out[c];
    }
    if (!all)
      continue;
    rc = pp_model_builder_add_tp_sizes(b, l, m->tps_tp[t], pb, ob, sb);
    if (rc != PP_OK)
      return rc;
  }
  return PP_OK;
}

pp_status pp_model_chain_view(pp_ctx *ctx, const pp_model *m, int every_op,
                              pp_model **out)
{
  struct chain_run r;
  pp_model_builder *b = NULL;
  pp_model *cm = NULL;
  int32_t n, i, nlayer = 0, lo, *layer_of = NULL;
  int32_t *bound = NULL; /* bound[l] = first position of layer l */
  char src[600];
  pp_status rc;

  if (!ctx || !m || !out)
    return PP_EINVAL;
  *out = NULL;
  n = m->nop;
  memset(&r, 0, sizeof r); /* run_close is safe on a run never opened */
  bound = ppi_calloc(ctx, (size_t)n + 1, sizeof *bound);
  layer_of = ppi_calloc(ctx, (size_t)n, sizeof *layer_of);
  rc = bound && layer_of ? run_open(&r, ctx, m, true) : ctx->err;
  if (rc != PP_OK)
    goto done;
  for (i = 0; i < n; i++) {
    if (i == 0 || every_op || r.cut_count[i - 1] <= 1)
      bound[nlayer++] = i;
    layer_of[m->topo[i]] = nlayer - 1;
  }
  bound[nlayer] = n;

  snprintf(src, sizeof src, "%s (chain view)", m->source);
  if ((rc = pp_model_builder_create(ctx, m->name, src, &b)) != PP_OK)
    goto done;
  if ((rc = pp_model_builder_set_micro_batch(b, m->micro_batch)) != PP_OK ||
      (rc = pp_model_builder_set_reference_type(b, m->reftype)) != PP_OK ||
      (rc = pp_model_builder_set_efficiency(b, m->efficiency)) != PP_OK ||
      (rc = pp_model_builder_set_loss(b, m->loss_fbytes, m->loss_bbytes)) !=
          PP_OK ||
      (rc = pp_model_builder_set_pipe_extra(b, m->pipe_extra)) != PP_OK ||
      (rc = pp_model_builder_set_dtype(b, m->dtype)) != PP_OK ||
      (rc = pp_model_builder_set_memory_format(
           b, m->nchw ? PP_MF_CONTIGUOUS : PP_MF_CHANNELS_LAST)) != PP_OK)
    goto done;
  for (i = 0; i < m->nhyper; i++)
    if ((rc = pp_model_builder_set_hyper(b, m->hyper_key[i],
                                         m->hyper_val[i])) != PP_OK)
      goto done;
  for (lo = 0; lo < nlayer; lo++)
    if ((rc = add_layer(&r, b, bound[lo], bound[lo + 1] - 1, layer_of, lo)) !=
        PP_OK)
      goto done;
  for (lo = 0; lo < nlayer; lo++) {
    int32_t first = m->topo[bound[lo]];
    if (bound[lo + 1] - bound[lo] == 1 && m->tied[first] >= 0 &&
        layer_of[m->tied[first]] != lo &&
        bound[layer_of[m->tied[first]] + 1] - bound[layer_of[m->tied[first]]] ==
            1)
      if ((rc = pp_model_builder_tie(b, lo, layer_of[m->tied[first]])) != PP_OK)
        goto done;
  }
  for (lo = 0; lo + 1 < nlayer; lo++)
    if ((rc = pp_model_builder_add_edge(
             b, lo, lo + 1, r.cut_bytes[bound[lo + 1] - 1])) != PP_OK)
      goto done;
  rc = pp_model_builder_finish(b, &cm);
  b = NULL;
  if (rc != PP_OK)
    goto done;
  cm->member_off =
      ppi_arena_alloc(&cm->arena, ctx, (size_t)nlayer + 1, sizeof(int32_t));
  cm->member_op = ppi_arena_alloc(&cm->arena, ctx, (size_t)n, sizeof(int32_t));
  if (!cm->member_off || !cm->member_op) {
    rc = ctx->err;
    goto done;
  }
  memcpy(cm->member_off, bound, ((size_t)nlayer + 1) * sizeof(int32_t));
  memcpy(cm->member_op, m->topo, (size_t)n * sizeof(int32_t));
  *out = cm;
  cm = NULL;
done:
  pp_model_builder_destroy(b);
  pp_model_destroy(cm);
  run_close(&r);
  ppi_free(ctx, bound, ((size_t)n + 1) * sizeof *bound);
  ppi_free(ctx, layer_of, (size_t)n * sizeof *layer_of);
  return rc;
}

pp_status ppi_chain_nlayer(pp_ctx *ctx, const struct pp_model *m,
                           int32_t *nlayer)
{
  struct chain_run r;
  int32_t i;
  pp_status rc = run_open(&r, ctx, m, false);
  if (rc == PP_OK) {
    *nlayer = 1;
    for (i = 0; i + 1 < r.n; i++)
      *nlayer += r.cut_count[i] <= 1;
  }
  run_close(&r);
  return rc;
}

const int32_t *pp_model_layer_members(const pp_model *m, int32_t l, int32_t *n)
{
  if (n)
    *n = 0;
  if (!m || !m->member_off || l < 0 || l >= m->nop)
    return NULL;
  if (n)
    *n = m->member_off[l + 1] - m->member_off[l];
  return m->member_op + m->member_off[l];
}
