/* SPDX-License-Identifier: MIT */
/*
** Operator-level partitioning of a DAG by dynamic programming over
** fronted subgraphs (Parmesan phase 1, [Parmesan] 4.1, Eq. 2-3).
**
** Objective: stages s_0 .. s_{S-1} whose prefix unions are fronted
** (down-closed: every predecessor of a member is a member), minimising
** max_s t(s), t(s) = (sum of its operators' work + sum over the edges
** with exactly one end in s of their transfer time) / R, with every
** stage's memory within its position's limit (part.h's memory model,
** edge by edge).
**
** Two DPs, the same recurrence T[F][s] = min over fronted F' < F of
** max(T[F'][s-1], t(F - F')):
**   - over every fronted subgraph (down-set), when there are at most
**     `limit' of them: exact.  Down-sets are enumerated breadth-first
**     from the empty set (add one operator whose predecessors are all in),
**     as bitsets, deduplicated by hashing.  O(N^2 (n + E) / 64 + N^2 w)
**     for N down-sets;
**   - over the prefixes of one topological order otherwise (exact when
**     the order is unique: then the prefixes are all the down-sets,
**     Theorem 4.5).  The order is "good" for this: among the ready
**     operators it takes the one that adds the least transfer time to the
**     cut (its out-edges minus its in-edges, fixed once it is ready), so
**     prefixes cut few bytes.  Stage costs of an interval are updated
**     operator by operator as it grows to the left (O(degree)), and the
**     scan stops when the work alone reaches the best value: O(S K w d).
**
** Invariant: every stage_of produced has stage(u) <= stage(v) on every
** edge u -> v and no empty stage.
*/
#include "part/part.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ppi_dag_eval(const struct ppi_dag *g, const int32_t *stage_of, double *t,
                  double *mem)
{
  int32_t v, e, s;
  for (s = 0; s < g->S; s++) {
    t[s] = 0;
    if (mem)
      mem[s] = 0;
  }
  for (v = 0; v < g->n; v++) {
    s = stage_of[v];
    t[s] += g->w[v];
    if (mem)
      mem[s] += g->fac * g->param[v] + g->nf[s] * g->saved[v];
  }
  for (e = 0; e < g->ne; e++) {
    int32_t a = stage_of[g->esrc[e]], b = stage_of[g->edst[e]];
    if (a == b)
      continue;
    t[a] += g->ec[e];
    t[b] += g->ec[e];
    if (mem) {
      mem[a] += 2 * g->eb[e];
      mem[b] += 2 * g->eb[e];
    }
  }
  for (s = 0; s < g->S; s++) {
    t[s] /= g->R;
    if (mem)
      mem[s] += g->reserve;
  }
}

double ppi_dag_objective(const struct ppi_dag *g, const int32_t *stage_of,
                         double *scratch)
{
  double worst = 0;
  int32_t s;
  ppi_dag_eval(g, stage_of, scratch, NULL);
  for (s = 0; s < g->S; s++)
    worst = scratch[s] > worst ? scratch[s] : worst;
  return worst;
}

/* ---- the good topological order ---------------------------------------- */

struct hitem {
  double key;
  int32_t v;
};

static bool hbefore(const struct hitem *a, const struct hitem *b)
{
  return a->key < b->key || (a->key == b->key && a->v < b->v);
}

pp_status ppi_dag_order(pp_ctx *ctx, const struct ppi_dag *g, int32_t *order)
{
  int32_t n = g->n, i, k, nh = 0, placed = 0;
  int32_t *indeg = ppi_calloc(ctx, (size_t)n, sizeof *indeg);
  struct hitem *h = ppi_alloc(ctx, (size_t)(n > 0 ? n : 1) * sizeof *h);
  pp_status rc = PP_OK;

  if (!indeg || !h) {
    rc = PP_ENOMEM;
    goto done;
  }
  for (i = 0; i < n; i++)
    indeg[i] = g->in_off[i + 1] - g->in_off[i];
  for (i = 0; i < n; i++)
    if (!indeg[i]) {
      struct hitem x;
      int32_t j;
      x.v = i;
      x.key = 0;
      for (k = g->out_off[i]; k < g->out_off[i + 1]; k++)
        x.key += g->ec[g->out_e[k]];
      j = nh++;
      while (j > 0 && hbefore(&x, &h[(j - 1) / 2])) {
        h[j] = h[(j - 1) / 2];
        j = (j - 1) / 2;
      }
      h[j] = x;
    }
  while (nh > 0) {
    struct hitem top = h[0], last = h[--nh];
    int32_t j = 0;
    for (;;) {
      int32_t c = 2 * j + 1;
      if (c >= nh)
        break;
      if (c + 1 < nh && hbefore(&h[c + 1], &h[c]))
        c++;
      if (!hbefore(&h[c], &last))
        break;
      h[j] = h[c];
      j = c;
    }
    if (nh > 0)
      h[j] = last;
    order[placed++] = top.v;
    for (k = g->out_off[top.v]; k < g->out_off[top.v + 1]; k++) {
      int32_t y = g->edst[g->out_e[k]], q;
      if (--indeg[y] == 0) {
        struct hitem x;
        x.v = y;
        x.key = 0;
        for (q = g->out_off[y]; q < g->out_off[y + 1]; q++)
          x.key += g->ec[g->out_e[q]];
        for (q = g->in_off[y]; q < g->in_off[y + 1]; q++)
          x.key -= g->ec[g->in_e[q]];
        j = nh++;
        while (j > 0 && hbefore(&x, &h[(j - 1) / 2])) {
          h[j] = h[(j - 1) / 2];
          j = (j - 1) / 2;
        }
        h[j] = x;
      }
    }
  }
  if (placed != n)
    rc = ppi_fail(ctx, PP_EINTERNAL, "partition: the graph has a cycle");
done:
  ppi_free(ctx, indeg, (size_t)n * sizeof *indeg);
  ppi_free(ctx, h, (size_t)(n > 0 ? n : 1) * sizeof *h);
  return rc;
}

/* ---- the DP over prefixes of an order ------------------------------------ */

pp_status ppi_dag_dp_prefix(pp_ctx *ctx, const struct ppi_dag *g,
                            const int32_t *order, int mem, int32_t *stage_of,
                            double *obj)
{
  int32_t n = g->n, S = g->S, s, i, j, k;
  int32_t *pos = ppi_alloc(ctx, (size_t)n * sizeof *pos);
  double *f = ppi_alloc(ctx, (size_t)S * n * sizeof *f);
  int32_t *from = ppi_alloc(ctx, (size_t)S * n * sizeof *from);
  pp_status rc = PP_OK;

  if (!pos || !f || !from) {
    rc = PP_ENOMEM;
    goto done;
  }
  if (S > n) {
    rc = PP_EINPUT;
    goto done;
  }
  for (i = 0; i < n; i++)
    pos[order[i]] = i;
  for (i = 0; i < S * n; i++) {
    f[i] = INFINITY;
    from[i] = -1;
  }
  for (s = 0; s < S; s++)
    for (j = s; j <= n - S + s; j++) {
      double best = INFINITY, W = 0, cc = 0, cb = 0, P = 0, A = 0;
      int32_t arg = -1;
      for (i = j; i >= (s ? s : 0); i--) {
        int32_t x = order[i];
        double prev, t;
        /* x joins the stage [i+1, j]: its edges to members become internal,
        ** the others cross */
        W += g->w[x];
        P += g->param[x];
        A += g->saved[x];
        for (k = g->out_off[x]; k < g->out_off[x + 1]; k++) {
          int32_t e = g->out_e[k], p = pos[g->edst[e]];
          double sign = p > i && p <= j ? -1 : 1;
          cc += sign * g->ec[e];
          cb += sign * g->eb[e];
        }
        for (k = g->in_off[x]; k < g->in_off[x + 1]; k++) {
          int32_t e = g->in_e[k], p = pos[g->esrc[e]];
          double sign = p > i && p <= j ? -1 : 1;
          cc += sign * g->ec[e];
          cb += sign * g->eb[e];
        }
        if (s == 0 && i > 0)
          continue; /* the first stage starts at position 0 */
        if (W / g->R >= best)
          break;
        prev = s ? f[(size_t)(s - 1) * n + i - 1] : 0;
        if (prev >= best)
          continue;
        if (mem && g->fac * P + g->nf[s] * A + 2 * cb + g->reserve > g->mem[s])
          continue;
        t = (W + cc) / g->R;
        if (t < prev)
          t = prev;
        if (t < best) {
          best = t;
          arg = i;
        }
      }
      f[(size_t)s * n + j] = best;
      from[(size_t)s * n + j] = arg;
    }
  if (!isfinite(f[(size_t)(S - 1) * n + n - 1])) {
    rc = PP_EINPUT;
    goto done;
  }
  *obj = f[(size_t)(S - 1) * n + n - 1];
  for (s = S - 1, j = n - 1; s >= 0; s--) {
    int32_t a = from[(size_t)s * n + j];
    for (i = a; i <= j; i++)
      stage_of[order[i]] = s;
    j = a - 1;
  }
done:
  ppi_free(ctx, pos, (size_t)n * sizeof *pos);
  ppi_free(ctx, f, (size_t)S * n * sizeof *f);
  ppi_free(ctx, from, (size_t)S * n * sizeof *from);
  return rc;
}

/* ---- the DP over every down-set ----------------------------------------- */

struct ideals {
  int32_t words;
  int64_t n, cap;
  uint64_t *bits; /* n x words */
  int64_t *hslot; /* hash table of indices, -1 empty */
  int64_t hcap;
};

static uint64_t hash_bits(const uint64_t *b, int32_t words)
{
  uint64_t h = 1469598103934665603ull;
  int32_t i;
  for (i = 0; i < words; i++) {
    h ^= b[i];
    h *= 1099511628211ull;
    h ^= h >> 29;
  }
  return h;
}

/* Add b if new; *added says whether it was. */
static pp_status ideal_add(pp_ctx *ctx, struct ideals *d, const uint64_t *b,
                           bool *added)
{
  int64_t i;
  uint64_t h;
  *added = false;
  if (2 * (d->n + 1) > d->hcap) { /* grow and rehash */
    /* TUNING: the first table has 1024 slots (a power of two, kept at most
    ** half full) and doubles; 46c8c19, no sweep recorded. */
    int64_t cap = d->hcap ? 2 * d->hcap : 1024, k;
    int64_t *slot = ppi_alloc(ctx, (size_t)cap * sizeof *slot);
    if (!slot)
      return PP_ENOMEM;
    for (k = 0; k < cap; k++)
      slot[k] = -1;
    for (k = 0; k < d->n; k++) {
      uint64_t hh = hash_bits(d->bits + (size_t)k * d->words, d->words);
      int64_t at = (int64_t)(hh & (uint64_t)(cap - 1));
      while (slot[at] >= 0)
        at = (at + 1) & (cap - 1);
      slot[at] = k;
    }
    ppi_free(ctx, d->hslot, (size_t)d->hcap * sizeof *d->hslot);
    d->hslot = slot;
    d->hcap = cap;
  }
  h = hash_bits(b, d->words);
  for (i = (int64_t)(h & (uint64_t)(d->hcap - 1)); d->hslot[i] >= 0;
       i = (i + 1) & (d->hcap - 1))
    if (!memcmp(d->bits + (size_t)d->hslot[i] * d->words, b,
                (size_t)d->words * sizeof *b))
      return PP_OK;
  if (d->n == d->cap) {
    /* TUNING: room for 256 down-sets first, doubling; 46c8c19, no sweep
    ** recorded. */
    int64_t cap = d->cap ? 2 * d->cap : 256;
    uint64_t *nb = ppi_raw_realloc(ppi_ctx_alloc(ctx), d->bits,
                                   (size_t)d->cap * d->words * sizeof *nb,
                                   (size_t)cap * d->words * sizeof *nb);
    if (!nb)
      return ppi_nomem(ctx);
    d->bits = nb;
    d->cap = cap;
  }
  memcpy(d->bits + (size_t)d->n * d->words, b, (size_t)d->words * sizeof *b);
  d->hslot[i] = d->n++;
  *added = true;
  return PP_OK;
}

#define BIT(b, v) (((b)[(v) >> 6] >> ((v)&63)) & 1)

pp_status ppi_dag_dp_ideals(pp_ctx *ctx, const struct ppi_dag *g, int64_t limit,
                            int mem, int32_t *stage_of, double *obj, bool *done)
{
  struct ideals d;
  int32_t n = g->n, S = g->S, words = (n + 63) / 64, v, k, s;
  uint64_t *cur = NULL, *diff = NULL;
  int32_t *cnt = NULL, *order = NULL;
  double *T = NULL;
  int64_t *from = NULL, i, a, b, N;
  pp_status rc = PP_OK;

  *done = false;
  memset(&d, 0, sizeof d);
  d.words = words;
  cur = ppi_calloc(ctx, (size_t)words, sizeof *cur);
  diff = ppi_calloc(ctx, (size_t)words, sizeof *diff);
  if (!cur || !diff) {
    rc = PP_ENOMEM;
    goto out;
  }
  {
    bool added;
    if ((rc = ideal_add(ctx, &d, cur, &added)))
      goto out;
  }
  /* breadth first: the i-th down-set grows by one ready operator */
  for (i = 0; i < d.n; i++) {
    for (v = 0; v < n; v++) {
      const uint64_t *base = d.bits + (size_t)i * words;
      bool ready = !BIT(base, v), added;
      for (k = g->in_off[v]; k < g->in_off[v + 1] && ready; k++)
        ready = BIT(base, g->esrc[g->in_e[k]]);
      if (!ready)
        continue;
      memcpy(cur, base, (size_t)words * sizeof *cur);
      cur[v >> 6] |= (uint64_t)1 << (v & 63);
      if ((rc = ideal_add(ctx, &d, cur, &added)))
        goto out;
      if (d.n > limit)
        goto out; /* too many: *done stays false */
    }
  }
  N = d.n; /* in breadth-first order: by size, the empty set first */
  cnt = ppi_calloc(ctx, (size_t)N, sizeof *cnt);
  T = ppi_alloc(ctx, (size_t)N * S * sizeof *T);
  from = ppi_alloc(ctx, (size_t)N * S * sizeof *from);
  if (!cnt || !T || !from) {
    rc = PP_ENOMEM;
    goto out;
  }
  for (i = 0; i < N; i++)
    for (k = 0; k < words; k++)
      cnt[i] += __builtin_popcountll(d.bits[(size_t)i * words + k]);
  for (i = 0; i < N * S; i++) {
    T[i] = INFINITY;
    from[i] = -1;
  }
  for (b = 1; b < N; b++) {
    const uint64_t *B = d.bits + (size_t)b * words;
    for (a = 0; a < b; a++) {
      const uint64_t *A = d.bits + (size_t)a * words;
      double W = 0, cc = 0, cb = 0, P = 0, Ac = 0;
      bool sub = cnt[a] < cnt[b];
      for (k = 0; k < words && sub; k++) {
        sub = (A[k] & ~B[k]) == 0;
        diff[k] = B[k] & ~A[k];
      }
      if (!sub)
        continue;
      /* the stage F_b - F_a */
      for (k = 0; k < words; k++) {
        uint64_t x = diff[k];
        while (x) {
          int32_t u = k * 64 + __builtin_ctzll(x), q;
          x &= x - 1;
          W += g->w[u];
          P += g->param[u];
          Ac += g->saved[u];
          for (q = g->out_off[u]; q < g->out_off[u + 1]; q++) {
            int32_t e = g->out_e[q];
            if (!BIT(diff, g->edst[e])) {
              cc += g->ec[e];
              cb += g->eb[e];
            }
          }
          for (q = g->in_off[u]; q < g->in_off[u + 1]; q++) {
            int32_t e = g->in_e[q];
            if (!BIT(diff, g->esrc[e])) {
              cc += g->ec[e];
              cb += g->eb[e];
            }
          }
        }
      }
      for (s = 0; s < S; s++) {
        double prev = s ? T[(size_t)a * S + s - 1] : (a == 0 ? 0 : INFINITY);
        double t = (W + cc) / g->R;
        if (!isfinite(prev))
          continue;
        if (mem && g->fac * P + g->nf[s] * Ac + 2 * cb + g->reserve > g->mem[s])
          continue;
        if (t < prev)
          t = prev;
        if (t < T[(size_t)b * S + s]) {
          T[(size_t)b * S + s] = t;
          from[(size_t)b * S + s] = a;
        }
      }
    }
  }
  *done = true;
  b = N - 1; /* the whole graph: the largest down-set comes last */
  if (cnt[b] != n || !isfinite(T[(size_t)b * S + S - 1])) {
    rc = cnt[b] != n ? ppi_fail(ctx, PP_EINTERNAL, "down-sets: no full set")
                     : PP_EINPUT;
    goto out;
  }
  *obj = T[(size_t)b * S + S - 1];
  for (s = S - 1; s >= 0; s--) {
    int64_t p = from[(size_t)b * S + s];
    const uint64_t *Bb = d.bits + (size_t)b * words,
                   *Ab = d.bits + (size_t)p * words;
    for (v = 0; v < n; v++)
      if (BIT(Bb, v) && !BIT(Ab, v))
        stage_of[v] = s;
    b = p;
  }
out:
  ppi_free(ctx, cur, (size_t)words * sizeof *cur);
  ppi_free(ctx, diff, (size_t)words * sizeof *diff);
  if (cnt)
    ppi_free(ctx, cnt, (size_t)d.n * sizeof *cnt);
  if (T)
    ppi_free(ctx, T, (size_t)d.n * S * sizeof *T);
  if (from)
    ppi_free(ctx, from, (size_t)d.n * S * sizeof *from);
  ppi_raw_free(ppi_ctx_alloc(ctx), d.bits,
               (size_t)d.cap * d.words * sizeof *d.bits);
  ppi_free(ctx, d.hslot, (size_t)d.hcap * sizeof *d.hslot);
  (void)order;
  return rc;
}

pp_status ppi_dag_index(pp_ctx *ctx, struct ppi_arena *ar, struct ppi_dag *g)
{
  int32_t n = g->n, e, *fo, *fi;
  if (!(g->out_off =
            ppi_arena_alloc(ar, ctx, (size_t)n + 1, sizeof(int32_t))) ||
      !(g->in_off = ppi_arena_alloc(ar, ctx, (size_t)n + 1, sizeof(int32_t))) ||
      !(g->out_e = ppi_arena_alloc(ar, ctx, (size_t)(g->ne ? g->ne : 1),
                                   sizeof(int32_t))) ||
      !(g->in_e = ppi_arena_alloc(ar, ctx, (size_t)(g->ne ? g->ne : 1),
                                  sizeof(int32_t))) ||
      !(fo = ppi_arena_alloc(ar, ctx, (size_t)n + 1, sizeof(int32_t))) ||
      !(fi = ppi_arena_alloc(ar, ctx, (size_t)n + 1, sizeof(int32_t))))
    return PP_ENOMEM;
  for (e = 0; e < g->ne; e++) {
    g->out_off[g->esrc[e] + 1]++;
    g->in_off[g->edst[e] + 1]++;
  }
  for (e = 0; e < n; e++) {
    g->out_off[e + 1] += g->out_off[e];
    g->in_off[e + 1] += g->in_off[e];
  }
  for (e = 0; e < g->ne; e++) {
    g->out_e[g->out_off[g->esrc[e]] + fo[g->esrc[e]]++] = e;
    g->in_e[g->in_off[g->edst[e]] + fi[g->edst[e]]++] = e;
  }
  return PP_OK;
}
