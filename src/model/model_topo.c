/* SPDX-License-Identifier: MIT */
/*
** Topological order, its uniqueness, cycle reporting, and the DAG
** figures (depth, width, widest cut).
**
** Order: Kahn's algorithm with a binary min-heap of ready operators, so
** among ready operators the smallest index goes first.  The order is
** therefore deterministic, and it is the listed order whenever the
** listed order is topological.  The order is unique exactly when the
** ready set never holds two operators at once.  O((n + e) log n).
**
** Cycles: when Kahn stops early, every remaining operator has a
** remaining predecessor, so walking predecessors from any of them must
** revisit one; the walk between the two visits is a cycle, which the
** error message lists.  O(n + e).
*/
#include "model/model.h"
#include "base/heap.h"

#include <string.h>

/* Operator v is ready: the heap orders by index alone, so the smallest
** leaves first. */
static pp_status ready(pp_ctx *ctx, struct ppi_heap *h, int32_t v)
{
  struct ppi_heap_el e;
  memset(&e, 0, sizeof e);
  e.tie = (uint64_t)v;
  return ppi_heap_push(ctx, h, e);
}

/* Describe one cycle among the operators Kahn could not order. */
static pp_status report_cycle(pp_ctx *ctx, const struct pp_model *m,
                              const int32_t *indeg)
{
  int32_t n = m->nop, v, start = -1, len = 0, k;
  int32_t *seen = NULL, *path = NULL;
  char msg[700];
  size_t off = 0;
  pp_status rc;

  for (v = 0; v < n && start < 0; v++)
    if (indeg[v] > 0)
      start = v;
  seen = ppi_calloc(ctx, (size_t)n, sizeof *seen); /* position + 1 */
  path = ppi_calloc(ctx, (size_t)n + 1, sizeof *path);
  if (!seen || !path) {
    rc = ctx->err;
    goto done;
  }
  /* Walk backwards through remaining predecessors until one repeats. */
  v = start;
  while (!seen[v]) {
    seen[v] = ++len;
    path[len - 1] = v;
    for (k = m->in_off[v]; k < m->in_off[v + 1]; k++) {
      int32_t u = m->esrc[m->in_e[k]];
      if (indeg[u] > 0) {
        v = u;
        break;
      }
    }
  }
  /* path[seen[v]-1 .. len-1] is the cycle, in reverse edge direction;
  ** print it forwards, starting from its smallest operator index so the
  ** message does not depend on where the walk began. */
  {
    int32_t first = seen[v] - 1, ncyc = len - first, lo = 0, j;
    for (j = 1; j < ncyc; j++)
      if (path[len - 1 - j] < path[len - 1 - lo])
        lo = j;
    msg[0] = '\0';
    for (k = 0; k <= ncyc && off < sizeof msg - 64; k++) {
      int32_t u = path[len - 1 - (lo + k) % ncyc];
      int w = snprintf(msg + off, sizeof msg - off, "%s'%s'", k ? " -> " : "",
                       m->op_name[u]);
      if (w < 0)
        break;
      off += (size_t)w;
    }
    if (k <= ncyc)
      snprintf(msg + sizeof msg - 64, 64, " -> ...");
  }
  rc = ppi_fail_at(ctx, PP_EINPUT, m->source, 0, 0,
                   "the edges form a cycle: %s", msg);
done:
  ppi_free(ctx, seen, (size_t)n * sizeof *seen);
  ppi_free(ctx, path, ((size_t)n + 1) * sizeof *path);
  return rc;
}

pp_status ppi_model_index(pp_ctx *ctx, struct pp_model *m)
{
  int32_t n = m->nop, v, k, done = 0, e;
  int32_t *indeg;
  struct ppi_heap heap;
  bool unique = true;
  pp_status rc = PP_OK;

  ppi_heap_init(&heap);
  m->topo = ppi_arena_alloc(&m->arena, ctx, (size_t)n, sizeof(int32_t));
  m->topo_pos = ppi_arena_alloc(&m->arena, ctx, (size_t)n, sizeof(int32_t));
  indeg = ppi_calloc(ctx, (size_t)n, sizeof *indeg);
  if (!m->topo || !m->topo_pos || !indeg) {
    rc = ctx->err;
    goto out;
  }
  for (v = 0; v < n; v++) {
    indeg[v] = m->in_off[v + 1] - m->in_off[v];
    if (indeg[v] == 0 && (rc = ready(ctx, &heap, v)))
      goto out;
  }
  while (heap.n > 0) {
    if (heap.n > 1)
      unique = false;
    v = (int32_t)ppi_heap_pop(&heap).tie;
    m->topo_pos[v] = done;
    m->topo[done++] = v;
    for (k = m->out_off[v]; k < m->out_off[v + 1]; k++) {
      int32_t w = m->edst[m->out_e[k]];
      if (--indeg[w] == 0 && (rc = ready(ctx, &heap, w)))
        goto out;
    }
  }
  if (done < n) {
    rc = report_cycle(ctx, m, indeg);
    goto out;
  }
  m->topo_unique = unique;
  m->is_chain = m->nedge == n - 1;
  for (e = 0; e < m->nedge && m->is_chain; e++)
    if (m->edst[e] != m->esrc[e] + 1)
      m->is_chain = false;
out:
  ppi_free(ctx, indeg, (size_t)n * sizeof *indeg);
  ppi_heap_free(ctx, &heap);
  return rc;
}

const int32_t *pp_model_topo_order(const pp_model *m)
{
  return m ? m->topo : NULL;
}

int pp_model_topo_unique(const pp_model *m)
{
  return m ? m->topo_unique : 0;
}

int pp_model_is_chain(const pp_model *m)
{
  return m ? m->is_chain : 0;
}
