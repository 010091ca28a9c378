/* SPDX-License-Identifier: MIT */
/*
** Iterative refinement of an operator-level staging (Parmesan phase 1,
** [Parmesan] 4.3; the move rule of docs/ALGORITHMS.md 1.2).
**
** Objective: lower the min-max stage time of part_dag.c's formula by
** moving single operators on a stage boundary to a neighbouring stage.
**
** Legal moves keep every prefix of stages down-closed (stage(u) <=
** stage(v) on every edge u -> v): v leaves stage s for s + 1 only when all
** its successors are in stages > s, for s - 1 only when all its
** predecessors are in stages < s; the source stage must keep an operator
** and, with limits, both stages their memory.  A move changes the times of
** its two stages only (an edge to any third stage crosses before and
** after), so it is priced in O(degree + S).
**
** Selection and termination: the potential Phi = (t_max, the number of
** stages at t_max, sum_s t_s^2), compared lexicographically (times equal
** within 1e-12 relative count as equal).  Each step makes the legal move
** with the smallest Phi after it, if that is strictly smaller than Phi
** now (ties: the larger drop in crossing bytes, then the lower operator).
** Phi takes finitely many values (one per staging) and strictly falls, so
** no staging repeats and the loop ends; it also stops after `steps' moves.
** Since t_max never rises, refinement never worsens the objective.
**
** Complexity: O(n + E + B S) per step for B boundary operators.
*/
#include "part/part.h"

#include <math.h>
#include <string.h>

struct phi {
  double tmax;
  int32_t nmax;
  double sq;
};

static struct phi phi_of(const double *t, int32_t S)
{
  struct phi p = {0, 0, 0};
  int32_t s;
  for (s = 0; s < S; s++) {
    p.tmax = t[s] > p.tmax ? t[s] : p.tmax;
    p.sq += t[s] * t[s];
  }
  for (s = 0; s < S; s++)
    p.nmax += t[s] >= p.tmax * (1 - PPI_REL_ROUNDING);
  return p;
}

/* a < b? */
static bool phi_less(struct phi a, struct phi b)
{
  if (a.tmax < b.tmax * (1 - PPI_REL_ROUNDING))
    return true;
  if (a.tmax > b.tmax * (1 + PPI_REL_ROUNDING))
    return false;
  if (a.nmax != b.nmax)
    return a.nmax < b.nmax;
  return a.sq < b.sq * (1 - PPI_REL_ROUNDING);
}

/* The change a move of one operator from stage `from' to `to' makes to
** the two stages' times (x R), memory, and the bytes crossing stages. */
struct delta {
  double t_from, t_to, m_from, m_to, cut;
};

/* Edge e to an operator in stage q: crossing before iff q != from, after
** iff q != to. */
static void edge_delta(const struct ppi_dag *g, int32_t e, int32_t q,
                       int32_t from, int32_t to, struct delta *d)
{
  double c = g->ec[e], b = g->eb[e];
  if (q != from) {
    d->t_from -= c;
    d->m_from -= 2 * b;
    d->cut -= b;
  } else {
    d->t_from += c;
    d->m_from += 2 * b;
  }
  if (q != to) {
    d->t_to += c;
    d->m_to += 2 * b;
    d->cut += b;
  } else {
    d->t_to -= c;
    d->m_to -= 2 * b;
  }
}

pp_status ppi_dag_refine(pp_ctx *ctx, const struct ppi_dag *g, int32_t steps,
                         int mem, int32_t *stage_of, int32_t *moves)
{
  int32_t S = g->S, n = g->n, v, k, s, step;
  double *t = ppi_alloc(ctx, (size_t)S * sizeof *t);
  double *m = ppi_alloc(ctx, (size_t)S * sizeof *m);
  double *tt = ppi_alloc(ctx, (size_t)S * sizeof *tt);
  int32_t *cnt = ppi_calloc(ctx, (size_t)S, sizeof *cnt);
  pp_status rc = PP_OK;

  *moves = 0;
  if (!t || !m || !tt || !cnt) {
    rc = PP_ENOMEM;
    goto done;
  }
  /* t in work units (x R): the division is the same for every stage */
  ppi_dag_eval(g, stage_of, t, m);
  for (s = 0; s < S; s++)
    t[s] *= g->R;
  for (v = 0; v < n; v++)
    cnt[stage_of[v]]++;
  for (step = 0; step < steps; step++) {
    struct phi now = phi_of(t, S), best = now;
    int32_t bv = -1, bto = -1;
    double bcut = 0, bdt[2] = {0, 0}, bdm[2] = {0, 0};
    for (v = 0; v < n; v++) {
      int32_t from = stage_of[v], dir;
      if (cnt[from] < 2)
        continue;
      for (dir = -1; dir <= 1; dir += 2) {
        int32_t to = from + dir;
        bool ok = to >= 0 && to < S, boundary = false;
        struct delta d;
        struct phi after;
        if (!ok)
          continue;
        d.t_from = -g->w[v];
        d.t_to = g->w[v];
        d.cut = 0;
        d.m_from = -(g->fac * g->param[v] + g->nf[from] * g->saved[v]);
        d.m_to = g->fac * g->param[v] + g->nf[to] * g->saved[v];
        /* legality and the change of the two stages' crossing edges */
        for (k = g->out_off[v]; k < g->out_off[v + 1] && ok; k++) {
          int32_t e = g->out_e[k], q = stage_of[g->edst[e]];
          if (dir > 0 && q < to)
            ok = false;
          boundary = boundary || q != from;
          edge_delta(g, e, q, from, to, &d);
        }
        for (k = g->in_off[v]; k < g->in_off[v + 1] && ok; k++) {
          int32_t e = g->in_e[k], q = stage_of[g->esrc[e]];
          if (dir < 0 && q > to)
            ok = false;
          boundary = boundary || q != from;
          edge_delta(g, e, q, from, to, &d);
        }
        if (!ok || !boundary)
          continue;
        if (mem &&
            (m[from] + d.m_from > g->mem[from] || m[to] + d.m_to > g->mem[to]))
          continue;
        memcpy(tt, t, (size_t)S * sizeof *tt);
        tt[from] += d.t_from;
        tt[to] += d.t_to;
        after = phi_of(tt, S);
        if (phi_less(after, best) ||
            (bv >= 0 && !phi_less(best, after) && d.cut < bcut)) {
          best = after;
          bv = v;
          bto = to;
          bcut = d.cut;
          bdt[0] = d.t_from;
          bdt[1] = d.t_to;
          bdm[0] = d.m_from;
          bdm[1] = d.m_to;
        }
      }
    }
    if (bv < 0 || !phi_less(best, now))
      break;
    s = stage_of[bv];
    t[s] += bdt[0];
    t[bto] += bdt[1];
    m[s] += bdm[0];
    m[bto] += bdm[1];
    cnt[s]--;
    cnt[bto]++;
    stage_of[bv] = bto;
    (*moves)++;
  }
done:
  ppi_free(ctx, t, (size_t)S * sizeof *t);
  ppi_free(ctx, m, (size_t)S * sizeof *m);
  ppi_free(ctx, tt, (size_t)S * sizeof *tt);
  ppi_free(ctx, cnt, (size_t)S * sizeof *cnt);
  return rc;
}
