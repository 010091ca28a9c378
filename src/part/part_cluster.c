/* SPDX-License-Identifier: MIT */
/*
** Operator clustering (Parmesan phase 1, [Parmesan] 4.2, Eq. 4;
** docs/ALGORITHMS.md 1.1).
**
** Objective: merge adjacent hyper-operators, always the pair with the
** least cost(u, v) = c_u(u) + c_u(v) - alpha c_m(u, v) (work of both minus
** alpha times the transfer time between them) whose union is convex (no
** other path u ~> v, so the graph stays acyclic) and fits in memory,
** until K hyper-operators remain or no pair qualifies.
**
** Method: a min-heap of candidate pairs with version stamps (lazy
** deletion): a popped pair whose ends changed since is dropped.  This is
** exact, since merging only ever adds reachability and memory: a pair that
** fails convexity or memory once fails forever, and the costs of pairs not
** touching the merge do not change.  Convexity of u -> v is a depth-first
** search from u's other successors for v, pruned by a topological order
** (nothing placed after v can reach it); that order is kept valid across
** merges as Pearce and Kelly keep theirs: the nodes of the window between
** u and v that reach v (found backwards from v) move before the merged
** node, those u reaches (the forward search) after it, in the slots they
** held.  Adjacency lists are merged by concatenation and deduplicated.
**
** Invariant: after every merge the hyper-operator graph is acyclic and
** pos[] is one of its topological orders; every hyper-operator is convex
** in the operator graph (tests/test_dag.c checks both independently).
**
** Complexity: O(E log E) heap work plus, per merge, the two searches
** (bounded by the window between u and v, small when merges are local)
** and the deduplication of the merged adjacency: near O(V log V) on
** network graphs, O(V E) in the worst case as the paper states.
*/
#include "part/part.h"
#include "base/heap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct adj {
  int32_t to;
  double c, b; /* transfer time, bytes */
};

/* A candidate u -> v and the version stamps of its ends when pushed. */
struct pair {
  double key;
  int32_t u, v;
  int32_t vu, vv;
};

struct crun {
  pp_ctx *ctx;
  const struct ppi_dag *g;
  int32_t n;
  int32_t *parent; /* union-find */
  int32_t *ver;    /* merges of each node (fewer than its operators) */
  double *w, *param, *saved;
  int32_t *pos;             /* topological position of a live representative */
  struct ppi_vec *out, *in; /* struct adj per node */
  struct ppi_heap heap;
  int32_t *stack, *mark, markno;
  int32_t *fw, *bw; /* the window's forward and backward sets */
  double alpha, mlimit, nfmax;
};

static int32_t find(struct crun *r, int32_t x)
{
  while (r->parent[x] != x) {
    r->parent[x] = r->parent[r->parent[x]];
    x = r->parent[x];
  }
  return x;
}

/* The heap orders by (key, u, v): the tie u << 32 | v, both >= 0. */
static pp_status hpush(struct crun *r, struct pair p)
{
  struct ppi_heap_el e;
  e.key = p.key;
  e.tie = (uint64_t)p.u << 32 | (uint32_t)p.v;
  e.id = 0;
  e.a = p.vu;
  e.b = p.vv;
  return ppi_heap_push(r->ctx, &r->heap, e);
}

static struct pair hpop(struct crun *r)
{
  struct ppi_heap_el e = ppi_heap_pop(&r->heap);
  struct pair p;
  p.key = e.key;
  p.u = (int32_t)(e.tie >> 32);
  p.v = (int32_t)(e.tie & 0xffffffffu);
  p.vu = e.a;
  p.vv = e.b;
  return p;
}

static int cmp_adj(const void *x, const void *y)
{
  const struct adj *a = x, *b = y;
  return (a->to > b->to) - (a->to < b->to);
}

/* Resolve, drop self-loops and combine duplicates of u's list. */
static void dedupe(struct crun *r, struct ppi_vec *v, int32_t self)
{
  struct adj *a = v->data;
  size_t i, k = 0;
  for (i = 0; i < v->n; i++) {
    a[i].to = find(r, a[i].to);
  }
  if (v->n > 1)
    qsort(a, v->n, sizeof *a, cmp_adj);
  for (i = 0; i < v->n; i++) {
    if (a[i].to == self)
      continue;
    if (k > 0 && a[k - 1].to == a[i].to) {
      a[k - 1].c += a[i].c;
      a[k - 1].b += a[i].b;
      continue;
    }
    a[k++] = a[i];
  }
  v->n = k;
}

static double mem_of(const struct crun *r, int32_t u)
{
  return r->g->fac * r->param[u] + r->nfmax * r->saved[u];
}

/* The candidate pairs of u with its (deduplicated) neighbours. */
static pp_status push_pairs(struct crun *r, int32_t u)
{
  size_t i;
  pp_status rc;
  for (i = 0; i < r->out[u].n; i++) {
    const struct adj *a = &PPI_VEC_AT(&r->out[u], struct adj, i);
    struct pair p = {r->w[u] + r->w[a->to] - r->alpha * a->c, u, a->to,
                     r->ver[u], r->ver[a->to]};
    if ((rc = hpush(r, p)))
      return rc;
  }
  for (i = 0; i < r->in[u].n; i++) {
    const struct adj *a = &PPI_VEC_AT(&r->in[u], struct adj, i);
    struct pair p = {r->w[u] + r->w[a->to] - r->alpha * a->c, a->to, u,
                     r->ver[a->to], r->ver[u]};
    if ((rc = hpush(r, p)))
      return rc;
  }
  return PP_OK;
}

/* Forward search from u (not along the edge to v) for v, within pos <
** pos(v); fills r->fw with what it reaches.  Returns true when v is
** reached (u -> v is not convex). */
static bool forward(struct crun *r, int32_t u, int32_t v, int32_t *nf)
{
  int32_t top = 0, lim = r->pos[v];
  size_t i;
  r->markno++;
  *nf = 0;
  r->mark[u] = r->markno;
  for (i = 0; i < r->out[u].n; i++) {
    int32_t x = find(r, PPI_VEC_AT(&r->out[u], struct adj, i).to);
    if (x == v || x == u || r->mark[x] == r->markno || r->pos[x] > lim)
      continue;
    r->mark[x] = r->markno;
    r->stack[top++] = x;
  }
  while (top > 0) {
    int32_t x = r->stack[--top];
    r->fw[(*nf)++] = x;
    for (i = 0; i < r->out[x].n; i++) {
      int32_t y = find(r, PPI_VEC_AT(&r->out[x], struct adj, i).to);
      if (y == v)
        return true;
      if (r->mark[y] == r->markno || r->pos[y] > lim)
        continue;
      r->mark[y] = r->markno;
      r->stack[top++] = y;
    }
  }
  return false;
}

/* Backward search from v (not along the edge from u) within pos > pos(u). */
static void backward(struct crun *r, int32_t u, int32_t v, int32_t *nb)
{
  int32_t top = 0, lim = r->pos[u];
  size_t i;
  r->markno++;
  *nb = 0;
  r->mark[v] = r->markno;
  r->stack[top++] = v;
  while (top > 0) {
    int32_t x = r->stack[--top];
    if (x != v)
      r->bw[(*nb)++] = x;
    for (i = 0; i < r->in[x].n; i++) {
      int32_t y = find(r, PPI_VEC_AT(&r->in[x], struct adj, i).to);
      if (y == u || r->mark[y] == r->markno || r->pos[y] < lim)
        continue;
      r->mark[y] = r->markno;
      r->stack[top++] = y;
    }
  }
}

static int cmp_i32(const void *x, const void *y)
{
  int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
  return (a > b) - (a < b);
}

struct idpos {
  int32_t pos, id;
};

static int cmp_idpos(const void *x, const void *y)
{
  const struct idpos *a = x, *b = y;
  return (a->pos > b->pos) - (a->pos < b->pos);
}

/* Sort ids[0:n] by their topological positions. */
static pp_status sort_by_pos(struct crun *r, int32_t *ids, int32_t n)
{
  struct idpos *t;
  int32_t i;
  if (n < 2)
    return PP_OK;
  if (!(t = ppi_alloc(r->ctx, (size_t)n * sizeof *t)))
    return PP_ENOMEM;
  for (i = 0; i < n; i++) {
    t[i].id = ids[i];
    t[i].pos = r->pos[ids[i]];
  }
  qsort(t, (size_t)n, sizeof *t, cmp_idpos);
  for (i = 0; i < n; i++)
    ids[i] = t[i].id;
  ppi_free(r->ctx, t, (size_t)n * sizeof *t);
  return PP_OK;
}

/* Merge v into u (u -> v convex), reordering the window. */
static pp_status merge(struct crun *r, int32_t u, int32_t v, int32_t nf,
                       int32_t nb)
{
  int32_t nl = nb + nf + 2, i, k, *slots;
  size_t j;
  pp_status rc;
  /* slots of the window's movers, in order: B, then u (the merged node),
  ** then F; v's slot is given up */
  if (!(slots = ppi_alloc(r->ctx, (size_t)nl * sizeof *slots)))
    return PP_ENOMEM;
  k = 0;
  for (i = 0; i < nb; i++)
    slots[k++] = r->pos[r->bw[i]];
  for (i = 0; i < nf; i++)
    slots[k++] = r->pos[r->fw[i]];
  slots[k++] = r->pos[u];
  slots[k++] = r->pos[v];
  qsort(slots, (size_t)nl, sizeof *slots, cmp_i32);
  if ((rc = sort_by_pos(r, r->bw, nb)) || (rc = sort_by_pos(r, r->fw, nf))) {
    ppi_free(r->ctx, slots, (size_t)nl * sizeof *slots);
    return rc;
  }
  k = 0;
  for (i = 0; i < nb; i++)
    r->pos[r->bw[i]] = slots[k++];
  r->pos[u] = slots[k++];
  k++; /* v's former share of the window: unused */
  for (i = 0; i < nf; i++)
    r->pos[r->fw[i]] = slots[k++];
  ppi_free(r->ctx, slots, (size_t)nl * sizeof *slots);
  /* u absorbs v */
  r->parent[v] = u;
  r->w[u] += r->w[v];
  r->param[u] += r->param[v];
  r->saved[u] += r->saved[v];
  r->ver[u]++;
  r->ver[v]++;
  for (j = 0; j < r->out[v].n; j++)
    if ((rc = ppi_vec_push(r->ctx, &r->out[u],
                           &PPI_VEC_AT(&r->out[v], struct adj, j))))
      return rc;
  for (j = 0; j < r->in[v].n; j++)
    if ((rc = ppi_vec_push(r->ctx, &r->in[u],
                           &PPI_VEC_AT(&r->in[v], struct adj, j))))
      return rc;
  ppi_vec_free(r->ctx, &r->out[v]);
  ppi_vec_free(r->ctx, &r->in[v]);
  dedupe(r, &r->out[u], u);
  dedupe(r, &r->in[u], u);
  return push_pairs(r, u);
}

pp_status ppi_dag_cluster(pp_ctx *ctx, const struct ppi_dag *g, int32_t K,
                          double alpha, double mlimit, double nfmax,
                          int32_t *of, int32_t *nclusters)
{
  struct crun r;
  int32_t n = g->n, v, e, alive = n, *order = NULL, i;
  pp_status rc = PP_OK;

  memset(&r, 0, sizeof r);
  r.ctx = ctx;
  ppi_heap_init(&r.heap);
  r.g = g;
  r.n = n;
  r.alpha = alpha;
  r.mlimit = mlimit;
  r.nfmax = nfmax;
  r.parent = ppi_alloc(ctx, (size_t)n * sizeof *r.parent);
  r.ver = ppi_calloc(ctx, (size_t)n, sizeof *r.ver);
  r.w = ppi_alloc(ctx, (size_t)n * sizeof *r.w);
  r.param = ppi_alloc(ctx, (size_t)n * sizeof *r.param);
  r.saved = ppi_alloc(ctx, (size_t)n * sizeof *r.saved);
  r.pos = ppi_alloc(ctx, (size_t)n * sizeof *r.pos);
  r.out = ppi_calloc(ctx, (size_t)n, sizeof *r.out);
  r.in = ppi_calloc(ctx, (size_t)n, sizeof *r.in);
  r.stack = ppi_alloc(ctx, (size_t)n * sizeof *r.stack);
  r.mark = ppi_calloc(ctx, (size_t)n, sizeof *r.mark);
  r.fw = ppi_alloc(ctx, (size_t)n * sizeof *r.fw);
  r.bw = ppi_alloc(ctx, (size_t)n * sizeof *r.bw);
  order = ppi_alloc(ctx, (size_t)n * sizeof *order);
  if (!r.parent || !r.ver || !r.w || !r.param || !r.saved || !r.pos || !r.out ||
      !r.in || !r.stack || !r.mark || !r.fw || !r.bw || !order) {
    rc = PP_ENOMEM;
    goto done;
  }
  if ((rc = ppi_dag_order(ctx, g, order)))
    goto done;
  for (v = 0; v < n; v++) {
    r.parent[v] = v;
    r.w[v] = g->w[v];
    r.param[v] = g->param[v];
    r.saved[v] = g->saved[v];
    ppi_vec_init(&r.out[v], sizeof(struct adj));
    ppi_vec_init(&r.in[v], sizeof(struct adj));
  }
  for (i = 0; i < n; i++)
    r.pos[order[i]] = i;
  for (e = 0; e < g->ne; e++) {
    struct adj a = {g->edst[e], g->ec[e], g->eb[e]};
    struct adj b = {g->esrc[e], g->ec[e], g->eb[e]};
    if ((rc = ppi_vec_push(ctx, &r.out[g->esrc[e]], &a)) ||
        (rc = ppi_vec_push(ctx, &r.in[g->edst[e]], &b)))
      goto done;
  }
  for (v = 0; v < n; v++) {
    dedupe(&r, &r.out[v], v);
    dedupe(&r, &r.in[v], v);
  }
  for (v = 0; v < n; v++) { /* each pair once, from its source */
    size_t j;
    for (j = 0; j < r.out[v].n; j++) {
      const struct adj *a = &PPI_VEC_AT(&r.out[v], struct adj, j);
      struct pair p = {r.w[v] + r.w[a->to] - alpha * a->c, v, a->to, 0, 0};
      if ((rc = hpush(&r, p)))
        goto done;
    }
  }
  while (alive > K && r.heap.n > 0) {
    struct pair p = hpop(&r);
    int32_t nf, nb;
    if (r.parent[p.u] != p.u || r.parent[p.v] != p.v || r.ver[p.u] != p.vu ||
        r.ver[p.v] != p.vv)
      continue; /* stale */
    if (r.mlimit < INFINITY && mem_of(&r, p.u) + mem_of(&r, p.v) > r.mlimit)
      continue; /* fails forever: memory only grows */
    if (forward(&r, p.u, p.v, &nf))
      continue; /* not convex, forever */
    backward(&r, p.u, p.v, &nb);
    if ((rc = merge(&r, p.u, p.v, nf, nb)))
      goto done;
    alive--;
  }
  /* number the clusters by their topological position */
  {
    int32_t k = 0;
    for (v = 0; v < n; v++)
      order[v] = -1;
    /* representatives sorted by position */
    for (v = 0, k = 0; v < n; v++)
      if (r.parent[v] == v)
        r.fw[k++] = v;
    if ((rc = sort_by_pos(&r, r.fw, k)))
      goto done;
    for (i = 0; i < k; i++)
      order[r.fw[i]] = i;
    for (v = 0; v < n; v++)
      of[v] = order[find(&r, v)];
    *nclusters = k;
  }
done:
  if (r.out)
    for (v = 0; v < n; v++) {
      ppi_vec_free(ctx, &r.out[v]);
      ppi_vec_free(ctx, &r.in[v]);
    }
  ppi_free(ctx, r.parent, (size_t)n * sizeof *r.parent);
  ppi_free(ctx, r.ver, (size_t)n * sizeof *r.ver);
  ppi_free(ctx, r.w, (size_t)n * sizeof *r.w);
  ppi_free(ctx, r.param, (size_t)n * sizeof *r.param);
  ppi_free(ctx, r.saved, (size_t)n * sizeof *r.saved);
  ppi_free(ctx, r.pos, (size_t)n * sizeof *r.pos);
  ppi_free(ctx, r.out, (size_t)n * sizeof *r.out);
  ppi_free(ctx, r.in, (size_t)n * sizeof *r.in);
  ppi_free(ctx, r.stack, (size_t)n * sizeof *r.stack);
  ppi_free(ctx, r.mark, (size_t)n * sizeof *r.mark);
  ppi_free(ctx, r.fw, (size_t)n * sizeof *r.fw);
  ppi_free(ctx, r.bw, (size_t)n * sizeof *r.bw);
  ppi_free(ctx, order, (size_t)n * sizeof *order);
  ppi_heap_free(ctx, &r.heap);
  return rc;
}

/* ---- the hyper-operator graph -------------------------------------------- */

static int cmp_sedge2(const void *x, const void *y)
{
  const int32_t *a = x, *b = y;
  if (a[0] != b[0])
    return (a[0] > b[0]) - (a[0] < b[0]);
  return (a[1] > b[1]) - (a[1] < b[1]);
}

pp_status ppi_dag_contract(pp_ctx *ctx, struct ppi_arena *ar,
                           const struct ppi_dag *g, const int32_t *of,
                           int32_t K, struct ppi_dag *h)
{
  int32_t e, v, ne = 0, i, (*key)[3];
  pp_status rc = PP_OK;

  memset(h, 0, sizeof *h);
  h->n = K;
  h->S = g->S;
  h->R = g->R;
  h->fac = g->fac;
  h->reserve = g->reserve;
  h->mem = g->mem;
  h->nf = g->nf;
  if (!(h->w = ppi_arena_alloc(ar, ctx, (size_t)K, sizeof *h->w)) ||
      !(h->param = ppi_arena_alloc(ar, ctx, (size_t)K, sizeof *h->param)) ||
      !(h->saved = ppi_arena_alloc(ar, ctx, (size_t)K, sizeof *h->saved)))
    return PP_ENOMEM;
  for (v = 0; v < g->n; v++) {
    h->w[of[v]] += g->w[v];
    h->param[of[v]] += g->param[v];
    h->saved[of[v]] += g->saved[v];
  }
  /* edges between clusters: (a, b, original edge), sorted by (a, b) */
  if (!(key = ppi_alloc(ctx, (size_t)(g->ne > 0 ? g->ne : 1) * sizeof *key)))
    return PP_ENOMEM;
  for (e = 0; e < g->ne; e++) {
    int32_t a = of[g->esrc[e]], b = of[g->edst[e]];
    if (a == b)
      continue;
    key[ne][0] = a;
    key[ne][1] = b;
    key[ne++][2] = e;
  }
  qsort(key, (size_t)ne, sizeof *key, cmp_sedge2);
  {
    int32_t m = 0;
    for (i = 0; i < ne; i++)
      if (i == 0 || key[i][0] != key[i - 1][0] || key[i][1] != key[i - 1][1])
        m++;
    h->ne = m;
    if (!(h->esrc = ppi_arena_alloc(ar, ctx, (size_t)m, sizeof *h->esrc)) ||
        !(h->edst = ppi_arena_alloc(ar, ctx, (size_t)m, sizeof *h->edst)) ||
        !(h->ec = ppi_arena_alloc(ar, ctx, (size_t)m, sizeof *h->ec)) ||
        !(h->eb = ppi_arena_alloc(ar, ctx, (size_t)m, sizeof *h->eb))) {
      rc = PP_ENOMEM;
      goto done;
    }
    for (i = 0, m = -1; i < ne; i++) {
      if (i == 0 || key[i][0] != key[i - 1][0] || key[i][1] != key[i - 1][1]) {
        m++;
        h->esrc[m] = key[i][0];
        h->edst[m] = key[i][1];
      }
      h->ec[m] += g->ec[key[i][2]];
      h->eb[m] += g->eb[key[i][2]];
    }
  }
  rc = ppi_dag_index(ctx, ar, h);
done:
  ppi_free(ctx, key, (size_t)(g->ne > 0 ? g->ne : 1) * sizeof *key);
  return rc;
}
