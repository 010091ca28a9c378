/* SPDX-License-Identifier: MIT */
/*
** A periodic pattern for a fixed allocation, by integer linear
** programming (MadPipe phase 2, [MadPipe] 4.3; the ILP of its reference
** [BeaumontILP] as docs/ALGORITHMS.md 2.1 reconstructs it: stages and
** processors fixed), solved with CBC.
**
** Objective: at a given period T, the least activation memory
** sum_i abar_i n_i over periodic patterns that fit every processor's
** memory, or "none".  Operations: F_i and B_i of every stage on its
** processor; CF_i and CB_i of every cut between two processors on their
** link (half-duplex, as [MadPipe]'s link load 2a/beta).  Each operation o
** gets an offset t_o in [0, T] and an integer shift h_o (batch j runs o
** at (j + h_o) T + t_o; sigma_o = h_o T + t_o, h_{F_0} = 0).
**
**   dependencies (Figure 1): sigma_CF_i >= sigma_F_i + uF_i,
**     sigma_F_{i+1} >= sigma_CF_i + c_i, sigma_B_{N-1} >= sigma_F_{N-1} +
**     uF_{N-1}, sigma_CB_i >= sigma_B_{i+1} + uB_{i+1}, sigma_B_i >=
**     sigma_CB_i + c_i;
**   no overlap modulo T of two operations o, o' on one resource, with a
**     binary q: u_o <= t_o' - t_o + T q <= T - u_o';
**   live activations: n_i T >= sigma_B_i + uB_i - sigma_F_i (the live
**     intervals of consecutive batches are T apart, so at most n_i
**     overlap; 1F1B*'s group count on contiguous allocations,
**     Proposition 1);
**   memory: sum over the stages of processor p of abar_i n_i <= room_p.
**
** The pattern comes back as sigma of F_i, B_i, CF_i and CB_i for every
** stage (batch j starts F_i at j T + sigma_F_i): the simulator runs it
** with those start times (sim.c).
**
** Invariant: a returned pattern satisfies every row above; with the
** allocation contiguous, the optimum equals 1F1B*'s counts (the tests
** check Proposition 1 this way).
**
** Complexity: the ILP has 4N - 2 operations, 2 variables each, N live
** counts and one binary per pair of operations sharing a resource; CBC
** is exponential in the worst case, so the solve has a time limit and a
** node limit (the node limit keeps results deterministic).
**
** Stopping: CBC's C interface has no stop call, and its own time limit
** is fixed when the solve starts.  A cut generator called at every
** branch-and-bound node (Cbc_addCutCallback) reads the caller's stop
** (its deadline or the flag a Ctrl-C sets) and, once it says stop, adds
** the contradictory pair x_0 >= 1, x_0 <= 0 at every node: each node's
** LP becomes infeasible, the tree empties within a node, and the solve
** returns its best pattern so far, which is reported as not proven
** (status 2), or none (status -2).
*/
#include "part/part.h"

#include <coin/Cbc_C_Interface.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

struct ilp {
  Cbc_Model *m;
  int ncol;
  double T;
  const struct ppi_stop *stop;
  int cut; /* the stop cut the tree */
};

/* The stop as a cut generator (header). */
static void stop_cuts(void *osi, void *cuts, void *app)
{
  struct ilp *x = app;
  int idx = 0;
  double one = 1;
  (void)osi;
  if (!x->cut && !ppi_stopped(x->stop))
    return;
  x->cut = 1;
  OsiCuts_addRowCut(cuts, 1, &idx, &one, 'G', 1);
  OsiCuts_addRowCut(cuts, 1, &idx, &one, 'L', 0);
}

static int col(struct ilp *x, double lb, double ub, int integer)
{
  Cbc_addCol(x->m, "", lb, ub, 0, (char)integer, 0, NULL, NULL);
  return x->ncol++;
}

/* sigma(b) - sigma(a) >= d: (hb - ha) T + tb - ta >= d */
static void after(struct ilp *x, const int *t, const int *h, int a, int b,
                  double d)
{
  int cols[4] = {t[b], t[a], h[b], h[a]};
  double co[4] = {1, -1, x->T, -x->T};
  Cbc_addRow(x->m, "", 4, cols, co, 'G', d);
}

/* No overlap modulo T of operations a and b (durations ua, ub). */
static void apart(struct ilp *x, const int *t, int a, int b, double ua,
                  double ub)
{
  int q = col(x, 0, 1, 1);
  int cols[3] = {t[b], t[a], q};
  double co[3] = {1, -1, x->T};
  Cbc_addRow(x->m, "", 3, cols, co, 'G', ua);
  Cbc_addRow(x->m, "", 3, cols, co, 'L', x->T - ub);
}

pp_status ppi_ilp_pattern(pp_ctx *ctx, const struct ppi_ilp_in *in,
                          int32_t *n_out, double *sig, int *status)
{
  int32_t N = in->N, P = in->P, i, j, k;
  int nop = 4 * N - 2, *t, *h, *n, H = 2 * N + P + 2, *mcol;
  double *dur, *mco;
  int32_t *res; /* resource of each operation: processor, P + link, -1 */
  struct ilp x;
  pp_status rc = PP_OK;

  *status = 0;
  t = ppi_calloc(ctx, (size_t)nop, sizeof *t);
  h = ppi_calloc(ctx, (size_t)nop, sizeof *h);
  n = ppi_calloc(ctx, (size_t)N, sizeof *n);
  dur = ppi_calloc(ctx, (size_t)nop, sizeof *dur);
  res = ppi_calloc(ctx, (size_t)nop, sizeof *res);
  mcol = ppi_calloc(ctx, (size_t)N, sizeof *mcol);
  mco = ppi_calloc(ctx, (size_t)N, sizeof *mco);
  if (!t || !h || !n || !dur || !res || !mcol || !mco) {
    rc = PP_ENOMEM;
    goto done;
  }
  /* operations: F_i = i, B_i = N + i, CF_i = 2N + i, CB_i = 3N - 1 + i */
  for (i = 0; i < N; i++) {
    dur[i] = in->uf[i];
    dur[N + i] = in->ub[i];
    res[i] = res[N + i] = in->proc[i];
    if (dur[i] > in->T || dur[N + i] > in->T)
      goto done; /* infeasible at this period */
  }
  for (i = 0; i + 1 < N; i++) {
    int32_t a = in->proc[i], b = in->proc[i + 1];
    int32_t lo = a < b ? a : b, hi = a ^ b ^ lo;
    dur[2 * N + i] = dur[3 * N - 1 + i] = a == b ? 0 : in->c[i];
    res[2 * N + i] = res[3 * N - 1 + i] = a == b ? -1 : P + lo * P + hi;
  }
  /* load of every resource within the period */
  {
    double *load = ppi_calloc(ctx, (size_t)(P + P * P), sizeof *load);
    bool over = false;
    if (!load) {
      rc = PP_ENOMEM;
      goto done;
    }
    for (i = 0; i < nop; i++)
      if (res[i] >= 0)
        load[res[i]] += dur[i];
    for (i = 0; i < P + P * P; i++)
      over = over || load[i] > in->T * (1 + PPI_REL_ROUNDING);
    ppi_free(ctx, load, (size_t)(P + P * P) * sizeof *load);
    if (over)
      goto done;
  }
  memset(&x, 0, sizeof x);
  x.m = Cbc_newModel();
  x.T = in->T;
  if (!x.m) {
    rc = ppi_nomem(ctx);
    goto done;
  }
  Cbc_setLogLevel(x.m, 0);
  for (i = 0; i < nop; i++) {
    t[i] = col(&x, 0, in->T, 0);
    h[i] = col(&x, 0, i == 0 ? 0 : H, 1);
  }
  for (i = 0; i < N; i++) {
    n[i] = col(&x, 1, H + 1, 1);
    if (in->minimize)
      Cbc_setObjCoeff(x.m, n[i], in->abar[i] / in->scale);
  }
  for (i = 0; i + 1 < N; i++) {
    after(&x, t, h, i, 2 * N + i, dur[i]);                     /* F_i, CF_i */
    after(&x, t, h, 2 * N + i, i + 1, dur[2 * N + i]);         /* CF_i, F */
    after(&x, t, h, N + i + 1, 3 * N - 1 + i, dur[N + i + 1]); /* B, CB_i */
    after(&x, t, h, 3 * N - 1 + i, N + i, dur[3 * N - 1 + i]); /* CB_i, B_i */
  }
  after(&x, t, h, N - 1, 2 * N - 1, dur[N - 1]); /* F_{N-1} before B_{N-1} */
  for (i = 0; i < nop; i++)
    for (j = i + 1; j < nop; j++)
      if (res[i] >= 0 && res[i] == res[j] && dur[i] > 0 && dur[j] > 0)
        apart(&x, t, i, j, dur[i], dur[j]);
  for (i = 0; i < N; i++) {
    /* n_i T - (h_B T + t_B) + (h_F T + t_F) >= uB_i */
    int cols[5] = {n[i], t[N + i], h[N + i], t[i], h[i]};
    double co[5] = {in->T, -1, -in->T, 1, in->T};
    Cbc_addRow(x.m, "", 5, cols, co, 'G', dur[N + i]);
  }
  for (k = 0; k < P; k++) {
    int cnt = 0;
    for (i = 0; i < N; i++)
      if (in->proc[i] == k) {
        mcol[cnt] = n[i];
        mco[cnt++] = in->abar[i] / in->scale;
      }
    if (cnt > 0)
      Cbc_addRow(x.m, "", cnt, mcol, mco, 'L', in->room[k] / in->scale);
  }
  {
    double left = ppi_stop_left(in->stop);
    Cbc_setMaximumSeconds(x.m, left < in->time_limit ? left : in->time_limit);
  }
  Cbc_setMaximumNodes(x.m, in->max_nodes);
  if (in->stop) {
    x.stop = in->stop;
    Cbc_addCutCallback(x.m, stop_cuts, "parplan-stop", &x);
  }
  Cbc_solve(x.m);
  if (Cbc_bestSolution(x.m) && !Cbc_isProvenInfeasible(x.m)) {
    const double *sol = Cbc_bestSolution(x.m);
    for (i = 0; i < N; i++) {
      n_out[i] = (int32_t)llround(sol[n[i]]);
      if (!sig)
        continue;
      /* sigma of F_i, B_i, CF_i, CB_i (NaN: no cut after the last) */
      for (j = 0; j < 4; j++) {
        int o = j == 0   ? i
                : j == 1 ? N + i
                : j == 2 ? 2 * N + i
                         : 3 * N - 1 + i;
        double y =
            j >= 2 && i + 1 >= N ? NAN : llround(sol[h[o]]) * in->T + sol[t[o]];
        /* TUNING: a start above -1e-6 is the solver's tolerance around 0,
        ** not a negative time, and reads as 0; 25d7df7, no sweep recorded. */
        sig[4 * i + j] = y < 0 && y > -1e-6 ? 0 : y;
      }
    }
    *status = Cbc_isProvenOptimal(x.m) && !x.cut ? 1 : 2;
  } else if (x.cut) {
    *status = -2; /* the stop ended it before any pattern */
  } else if (!Cbc_isProvenInfeasible(x.m)) {
    *status = -1; /* a limit stopped it before any pattern */
  }
  Cbc_deleteModel(x.m);
done:
  ppi_free(ctx, t, (size_t)nop * sizeof *t);
  ppi_free(ctx, h, (size_t)nop * sizeof *h);
  ppi_free(ctx, n, (size_t)N * sizeof *n);
  ppi_free(ctx, dur, (size_t)nop * sizeof *dur);
  ppi_free(ctx, res, (size_t)nop * sizeof *res);
  ppi_free(ctx, mcol, (size_t)N * sizeof *mcol);
  ppi_free(ctx, mco, (size_t)N * sizeof *mco);
  return rc;
}
