/* SPDX-License-Identifier: MIT */
/*
** Part and solve: an upper end for the exact search (map_search.c) on
** machines where the replicas sit side by side.  [Parmesan] 5.1 starts
** its bisection from any mapping; ours starts from the best of the
** baselines, and on large meshes and clustered machines the pruned search
** then spends its time packing replicas that a decomposition places at
** once.
**
** Objective: the p2p objective (map_cost.c); not applied to the others,
** whose allreduce ring ties the replicas together.  Under p2p the
** replicas meet only in taking devices: once the devices are split into
** R parts of S devices (and an idle rest), the best mapping that keeps
** replica r in part r is R independent one-replica problems.  So:
**   1. split the devices with Scotch's graph partitioning (libscotch,
**      one thread, fixed seed: map_scotch.h) of a device graph into
**      parts of weight S (and one of D - S R), under two graphs: first
**      the graph of each device's fastest links (meshes and tori:
**      compact blocks), then the complete graph with edges weighted by
**      bandwidth (clustered machines: the parts pair the best-connected
**      blocks); Scotch may miss the sizes by a few devices, so the sizes
**      are restored by moving, one at a time, the device of an oversized
**      part that loses least bandwidth to its part and gains most to an
**      undersized one;
**   2. solve every part's one-replica problem with the exact search under
**      an equal share of a tenth of the budget (the best found when it
**      runs out), the parts spread over the threads (each thread with a
**      copy of the context, as the planner's workers have: no shared
**      mutable state, each part's results in its own slots);
**   3. keep the better of the two graphs' mappings, and give the rest of
**      the time to its slowest parts, one per thread, each part's time
**      doubled each round.
** It stops as soon as the value meets the goal (the search's lower
** bound): then the second split is not even tried.
** A 16 x 16 mesh splits into 16 compact blocks of 16 and a replica's best
** layout in one meets the whole problem's lower bound: proven optimal
** before the bisection starts.
**
** Invariant: the result is injective; its value is an upper bound only
** (the split is a heuristic), so the exact search stays exact.
**
** Scotch failing is not an error: part and solve then proposes nothing.
**
** Complexity: Scotch's (near-linear in the D^2 edges), O(D^2) per
** repairing move, and per part an exact search bounded by its time share
** (a part reached after the budget is spent keeps its annealed mapping,
** so the budget is exceeded by at most a part's setup).
*/
#include "map/map.h"
#include "map/map_scotch.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

enum { GRAPH_COMPLETE = 0, GRAPH_FAST = 1 };

/* TUNING: the least time a part's search gets, and the time left below
** which part and solve stops: a millisecond, about a small part's setup
** (no measurement recorded). */
#define MIN_SLICE_S 1e-3
/* TUNING: each split's first pass gets a tenth of the budget (1 /
** FIRST_PASS_DIV), its parts sharing it equally; the rest goes to the
** slow parts of the better split.  On random_blk_1:512, 16 x 32, this took
** the gap to the bound from 2.5% to 0.13% (f3d863f). */
#define FIRST_PASS_DIV 10

/* The bandwidth from device v to the devices of part k. */
static double conn(const struct ppi_map *q, const SCOTCH_Num *part, int32_t v,
                   SCOTCH_Num k)
{
  double c = 0;
  int32_t u;
  for (u = 0; u < q->D; u++)
    if (u != v && part[u] == k)
      c += q->B[(size_t)v * q->D + u];
  return c;
}

/* Split the devices into parts 0..R-1 of S devices and part R of D - n. */
static pp_status split(pp_ctx *ctx, const struct ppi_map *q, int graph,
                       SCOTCH_Num *part, bool *ok)
{
  SCOTCH_Graph g, *cg;
  SCOTCH_Arch arch;
  struct ppi_scotch sc;
  SCOTCH_Strat strat;
  int32_t D = q->D, R = q->R, np = q->D > q->n ? R + 1 : R, i, j, k;
  size_t ne = (size_t)D * (D - 1);
  SCOTCH_Num *v = NULL, *e = NULL, *w = NULL, *pw = NULL, *cnt = NULL, m = 0;
  double bmax = 0;
  bool g_ok = false, a_ok = false, s_ok = false;
  pp_status rc = PP_OK;

  *ok = true;
  memset(&sc, 0, sizeof sc); /* closed in any case */
  v = ppi_alloc(ctx, ((size_t)D + 1) * sizeof *v);
  e = ppi_alloc(ctx, ne * sizeof *e);
  w = ppi_alloc(ctx, ne * sizeof *w);
  pw = ppi_alloc(ctx, (size_t)np * sizeof *pw);
  cnt = ppi_alloc(ctx, (size_t)np * sizeof *cnt);
  if (!v || !e || !w || !pw || !cnt) {
    rc = PP_ENOMEM;
    goto done;
  }
  for (i = 0; i < D * D; i++)
    bmax = q->B[i] > bmax ? q->B[i] : bmax;
  for (i = 0; i < D; i++) {
    const double *row = q->B + (size_t)i * D;
    v[i] = m;
    for (j = 0; j < D; j++) {
      double b = row[j];
      if (j == i ||
          (graph == GRAPH_FAST && b < q->bw_sorted[(size_t)i * (D - 1)] &&
           b < q->bw_sorted[(size_t)j * (D - 1)]))
        continue;
      e[m] = j;
      /* TUNING: Scotch takes integer weights: a thousandth of the
      ** fastest link is fine enough to tell NVLink, PCIe and network
      ** apart, and no edge weighs 0 */
      w[m++] =
          (SCOTCH_Num)(b / bmax * 1000 >= 1 ? llround(b / bmax * 1000) : 1);
    }
  }
  v[D] = m;
  for (k = 0; k < np; k++)
    pw[k] = k < R ? q->S : D - q->n;
  if (SCOTCH_graphInit(&g))
    goto no_split;
  g_ok = true;
  if (SCOTCH_graphBuild(&g, 0, D, v, NULL, NULL, NULL, m, e, w) ||
      ppi_scotch_open(&sc) || !(cg = ppi_scotch_bind(&sc, &g)) ||
      SCOTCH_archInit(&arch))
    goto no_split;
  a_ok = true;
  if (SCOTCH_archCmpltw(&arch, np, pw) || SCOTCH_stratInit(&strat))
    goto no_split;
  s_ok = true;
  if (SCOTCH_stratGraphMapBuild(&strat, SCOTCH_STRATQUALITY, np, 0.0) ||
      SCOTCH_graphMap(cg, &arch, &strat, part))
    goto no_split;
  /* restore the sizes */
  memset(cnt, 0, (size_t)np * sizeof *cnt);
  for (i = 0; i < D; i++) {
    if (part[i] < 0 || part[i] >= np)
      part[i] = np - 1;
    cnt[part[i]]++;
  }
  for (k = 0; k < np; k++)
    while (cnt[k] > pw[k]) {
      int32_t bv = -1;
      SCOTCH_Num bj = -1;
      double bg = -INFINITY;
      for (i = 0; i < D; i++) {
        double out;
        if (part[i] != k)
          continue;
        out = conn(q, part, i, k);
        for (j = 0; j < np; j++)
          if (cnt[j] < pw[j]) {
            double gain = conn(q, part, i, j) - out;
            if (gain > bg) {
              bg = gain;
              bv = i;
              bj = j;
            }
          }
      }
      if (bv < 0) /* every gain NaN (infinite bandwidths): no move */
        goto no_split;
      part[bv] = bj;
      cnt[k]--;
      cnt[bj]++;
    }
  goto done;
no_split: /* Scotch failed: part and solve proposes nothing */
  *ok = false;
done:
  if (s_ok)
    SCOTCH_stratExit(&strat);
  if (a_ok)
    SCOTCH_archExit(&arch);
  ppi_scotch_close(&sc);
  if (g_ok)
    SCOTCH_graphExit(&g);
  ppi_free(ctx, v, ((size_t)D + 1) * sizeof *v);
  ppi_free(ctx, e, ne * sizeof *e);
  ppi_free(ctx, w, ne * sizeof *w);
  ppi_free(ctx, pw, (size_t)np * sizeof *pw);
  ppi_free(ctx, cnt, (size_t)np * sizeof *cnt);
  return rc;
}

/* One part: the replica alone on the S devices dev[], searched from sp
** (sub-problem indices) when warm, else from an annealed mapping, until
** `limit' seconds pass (limit <= 0: the annealed mapping, not searched);
** the best mapping found goes to sp. */
static pp_status solve_one(pp_ctx *ctx, const struct ppi_map *q,
                           ppi_map_solver solve, const int32_t *dev, bool warm,
                           double limit, int32_t *sp, double *val, bool *opt)
{
  int32_t S = q->S, D = q->D, i, j, s;
  struct ppi_arena ar;
  struct ppi_map sub = *q;
  struct ppi_map_search sr;
  double *cu, *B;
  pp_status rc;

  ppi_arena_init(&ar, ppi_ctx_alloc(ctx));
  sub.R = 1;
  sub.D = S;
  sub.n = S;
  sub.obj = MAP_P2P;
  cu = ppi_arena_alloc(&ar, ctx, (size_t)S * S, sizeof *cu);
  B = ppi_arena_alloc(&ar, ctx, (size_t)S * S, sizeof *B);
  if (!cu || !B) {
    ppi_arena_free(&ar);
    return PP_ENOMEM;
  }
  for (i = 0; i < S; i++) {
    for (s = 0; s < S; s++)
      cu[(size_t)s * S + i] = q->cu[(size_t)s * D + dev[i]];
    for (j = 0; j < S; j++)
      B[(size_t)i * S + j] = q->B[(size_t)dev[i] * D + dev[j]];
  }
  sub.cu = cu;
  sub.B = B;
  memset(&sr, 0, sizeof sr);
  sr.time_limit = limit > MIN_SLICE_S ? limit : MIN_SLICE_S;
  sr.threads = 1;
  if (!warm)
    for (i = 0; i < S; i++)
      sp[i] = i;
  if ((rc = ppi_map_finish(ctx, &ar, &sub)) ||
      (!warm && (rc = ppi_map_anneal(ctx, &sub, ppi_map_anneal_steps(S),
                                     pp_ctx_seed(ctx), sp, sp))))
    goto done;
  *val = ppi_map_value(&sub, sp, NULL);
  *opt = false;
  if (limit > 0 && !(rc = solve(ctx, &sub, sp, sp, &sr))) {
    *val = sr.value;
    *opt = sr.optimal;
  }
done:
  ppi_arena_free(&ar);
  return rc;
}

/* A split and its parts' solutions. */
struct parts {
  int32_t *dev; /* [R S] part r's devices, ascending */
  int32_t *sol; /* [R S] its replica's mapping, indices into dev */
  double *val, *spent;
  bool *opt;
};

/* A thread's share of a round: parts which[0..n-1], one after another,
** on its own copy of the context (ppi_fanout). */
struct pjob {
  pp_ctx ctx;
  const struct ppi_map *q;
  ppi_map_solver solve;
  struct parts *x;
  const int32_t *which;
  int32_t n;
  bool warm;    /* refine from the part's best, for its `spent' seconds */
  double until; /* cold: the parts share the time left until then */
};

static pp_status run_pjob(pp_ctx *ctx, void *arg)
{
  struct pjob *j = arg;
  int32_t S = j->q->S, k;
  pp_status rc = PP_OK;
  for (k = 0; k < j->n && !rc; k++) {
    int32_t r = j->which[k];
    double lim =
        j->warm ? j->x->spent[r] : (j->until - ppi_now_s()) / (j->n - k);
    rc = solve_one(ctx, j->q, j->solve, j->x->dev + r * S, j->warm, lim,
                   j->x->sol + r * S, &j->x->val[r], &j->x->opt[r]);
    if (!j->warm)
      j->x->spent[r] = lim > MIN_SLICE_S ? lim : MIN_SLICE_S; /* doubled */
  }
  return rc;
}

/* Solve the parts which[0..n-1] on T threads, part k on thread k mod T
** (each writes only its parts' slots). */
static pp_status solve_parts(pp_ctx *ctx, const struct ppi_map *q,
                             ppi_map_solver solve, struct parts *x,
                             int32_t *which, int32_t n, bool warm, double until,
                             int32_t T)
{
  struct pjob jobs[PPI_MAX_MAP_THREADS];
  int32_t i, k, *lists = which + n; /* room for n more */
  if (T > n)
    T = n;
  for (i = 0; i < T; i++) { /* thread i's parts, contiguous in lists */
    struct pjob *j = &jobs[i];
    j->q = q;
    j->solve = solve;
    j->x = x;
    j->which = lists;
    j->n = 0;
    for (k = i; k < n; k += T)
      lists[j->n++] = which[k];
    lists += j->n;
    j->warm = warm;
    j->until = until;
  }
  return ppi_fanout(ctx, "map", run_pjob, jobs, sizeof *jobs,
                    offsetof(struct pjob, ctx), T);
}

/* Solve every part of the split `part' within `until'. */
static pp_status solve_all(pp_ctx *ctx, const struct ppi_map *q,
                           ppi_map_solver solve, const SCOTCH_Num *part,
                           double until, struct parts *x, int32_t *which,
                           int32_t T)
{
  int32_t S = q->S, r, i, k;
  for (r = 0; r < q->R; r++) {
    for (i = 0, k = 0; i < q->D; i++)
      if (part[i] == r)
        x->dev[r * S + k++] = i;
    which[r] = r;
  }
  return solve_parts(ctx, q, solve, x, which, q->R, false, until, T);
}

static double worst(const struct ppi_map *q, const struct parts *x)
{
  double w = 0;
  int32_t r;
  for (r = 0; r < q->R; r++)
    w = x->val[r] > w ? x->val[r] : w;
  return w;
}

pp_status ppi_map_parts(pp_ctx *ctx, const struct ppi_map *q, double budget_s,
                        double goal, int32_t threads, ppi_map_solver solve,
                        int32_t *p, bool *found)
{
  struct ppi_arena ar;
  struct parts x[2];
  SCOTCH_Num *part;
  int32_t S = q->S, R = q->R, n = q->n, r, s, g, b, *which;
  int32_t T = threads < 1                     ? 1
              : threads > PPI_MAX_MAP_THREADS ? PPI_MAX_MAP_THREADS
                                              : threads;
  double t0 = ppi_now_s(), until = t0 + budget_s;
  pp_status rc = PP_OK;

  *found = false;
  if (q->obj != MAP_P2P || R < 2 || S < 2 || q->D > PPI_MAP_PARTS_MAX_DEVICES)
    return PP_OK;
  ppi_arena_init(&ar, ppi_ctx_alloc(ctx));
  if (!(part = ppi_arena_alloc(&ar, ctx, (size_t)q->D, sizeof *part)) ||
      !(which = ppi_arena_alloc(&ar, ctx, 2 * (size_t)R, sizeof *which))) {
    rc = PP_ENOMEM;
    goto done;
  }
  for (g = 0; g < 2; g++)
    if (!(x[g].dev = ppi_arena_alloc(&ar, ctx, (size_t)n, sizeof(int32_t))) ||
        !(x[g].sol = ppi_arena_alloc(&ar, ctx, (size_t)n, sizeof(int32_t))) ||
        !(x[g].val = ppi_arena_alloc(&ar, ctx, (size_t)R, sizeof(double))) ||
        !(x[g].spent = ppi_arena_alloc(&ar, ctx, (size_t)R, sizeof(double))) ||
        !(x[g].opt = ppi_arena_alloc(&ar, ctx, (size_t)R, sizeof(bool)))) {
      rc = PP_ENOMEM;
      goto done;
    }
  /* a tenth of the budget for each split's first solution (a split whose
  ** parts are poor wastes little; the good one's slow parts get the rest
  ** below); the fastest links first: on meshes and tori its compact
  ** blocks meet the bound */
  for (g = 0; g < 2; g++) {
    bool ok;
    if ((rc = split(ctx, q, g ? GRAPH_COMPLETE : GRAPH_FAST, part, &ok)))
      goto done;
    for (r = 0; r < R && !ok; r++)
      x[g].val[r] = INFINITY;
    if (ok && (rc = solve_all(ctx, q, solve, part,
                              t0 + budget_s * (g + 1) / FIRST_PASS_DIV, &x[g],
                              which, T)))
      goto done;
    if (ppi_map_meets(worst(q, &x[g]), goal))
      break;
  }
  b = g == 2 ? worst(q, &x[1]) < worst(q, &x[0]) : g;
  if (worst(q, &x[b]) == INFINITY) /* Scotch failed twice */
    goto done;
  /* the rest to the better split's slowest parts, one per thread, whose
  ** time is doubled each round (each starts from its best mapping) until
  ** the slowest is optimal or meets the goal */
  for (;;) {
    double left = until - ppi_now_s();
    int32_t k, m = 0;
    if (ppi_stopped(&q->stop))
      break;
    /* the T slowest parts, slowest first; a proven one ends the list:
    ** faster parts cannot lower the maximum */
    for (k = 0; k < T; k++) {
      int32_t w = -1;
      for (r = 0; r < R; r++) {
        bool taken = false;
        int32_t i;
        for (i = 0; i < m; i++)
          taken |= which[i] == r;
        if (!taken && (w < 0 || x[b].val[r] > x[b].val[w]))
          w = r;
      }
      if (w < 0 || x[b].opt[w] || ppi_map_meets(x[b].val[w], goal))
        break;
      x[b].spent[w] = 2 * x[b].spent[w] < left ? 2 * x[b].spent[w] : left;
      which[m++] = w;
    }
    if (m == 0 || left <= MIN_SLICE_S)
      break;
    if ((rc = solve_parts(ctx, q, solve, &x[b], which, m, true, until, T)))
      goto done;
  }
  for (r = 0; r < R; r++)
    for (s = 0; s < S; s++)
      p[r * S + s] = x[b].dev[r * S + x[b].sol[r * S + s]];
  *found = true;
done:
  ppi_arena_free(&ar);
  return rc;
}
