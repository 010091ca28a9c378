/* SPDX-License-Identifier: MIT */
/*
** The figures of a model (pp_model_stats_get): sums of times, bytes and
** FLOPs, sources and sinks, depth and width of the DAG, the largest
** number of tensors crossing a cut of the topological order, and the
** chain view's layer count.  Above the topological index (model_topo.c)
** and the chain view (model_chain.c), which it reads.
**
** Complexity: O(operators + edges) plus the chain view's count.
*/
#include "model/model.h"

#include <string.h>

pp_status pp_model_stats_get(pp_ctx *ctx, const pp_model *m, pp_model_stats *st)
{
  int32_t n, v, k, i, *depth = NULL, *count = NULL, *last_use = NULL;
  int32_t crossing = 0;
  pp_status rc = PP_OK;

  if (!ctx || !m || !st)
    return PP_EINVAL;
  n = m->nop;
  memset(st, 0, sizeof *st);
  st->nop = n;
  st->nedge = m->nedge;
  for (v = 0; v < n; v++) {
    double f, b, t;
    ppi_model_point_times(m, v, -1, &f, &b); /* as the times read them */
    t = f + b;
    st->fwd_ms += f;
    st->bwd_ms += b;
    st->update_ms += m->upd[v];
    if (t > st->max_op_ms)
      st->max_op_ms = t;
    if (m->tied[v] < 0)
      st->param_bytes += (double)m->param[v];
    st->out_bytes += (double)m->out[v];
    st->saved_bytes += (double)m->saved[v];
    st->fwd_flops += m->fflops[v];
    st->fwd_bytes += m->fbytes[v];
    st->bwd_flops += m->bflops[v];
    st->bwd_bytes += m->bbytes[v];
    if (m->in_off[v + 1] == m->in_off[v])
      st->nsource++;
    if (m->out_off[v + 1] == m->out_off[v])
      st->nsink++;
  }
  depth = ppi_calloc(ctx, (size_t)n, sizeof *depth);
  count = ppi_calloc(ctx, (size_t)n + 1, sizeof *count);
  last_use = ppi_calloc(ctx, (size_t)n, sizeof *last_use);
  if (!depth || !count || !last_use) {
    rc = ctx->err;
    goto done;
  }
  /* Depth = operators on the longest path ending here; operators of one
  ** depth are pairwise unordered, so the largest such set is an
  ** antichain. */
  for (i = 0; i < n; i++) {
    int32_t d = 1;
    v = m->topo[i];
    for (k = m->in_off[v]; k < m->in_off[v + 1]; k++) {
      int32_t u = m->esrc[m->in_e[k]];
      if (depth[u] + 1 > d)
        d = depth[u] + 1;
    }
    depth[v] = d;
    if (d > st->depth)
      st->depth = d;
    if (++count[d] > st->width)
      st->width = count[d];
  }
  /* Tensors crossing the cut after position i of the order: operators
  ** before the cut with a consumer after it. */
  for (i = 0; i < n; i++) {
    v = m->topo[i];
    last_use[v] = i;
    for (k = m->out_off[v]; k < m->out_off[v + 1]; k++) {
      int32_t p = m->topo_pos[m->edst[m->out_e[k]]];
      if (p > last_use[v])
        last_use[v] = p;
    }
  }
  /* count[] is reused as "tensors that stop crossing at position i". */
  memset(count, 0, ((size_t)n + 1) * sizeof *count);
  for (i = 0; i < n; i++) {
    v = m->topo[i];
    crossing -= count[i];
    if (last_use[v] > i) {
      crossing++;
      count[last_use[v]]++;
    }
    if (crossing > st->max_cut)
      st->max_cut = crossing;
  }
  /* The chain view's layer count, by the same cuts. */
  rc = ppi_chain_nlayer(ctx, m, &st->nlayer);
done:
  ppi_free(ctx, depth, (size_t)n * sizeof *depth);
  ppi_free(ctx, count, ((size_t)n + 1) * sizeof *count);
  ppi_free(ctx, last_use, (size_t)n * sizeof *last_use);
  return rc;
}
