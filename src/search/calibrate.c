/* SPDX-License-Identifier: MIT */
/*
** Calibration: the cost model's free parameters fitted to a cluster's own
** measured runs (docs/COST_MODEL.md, "Calibration").
**
** Objective: per (device type, engine, precision) of the runs, the
** parameters that best explain the measurements under a prior that keeps
** the defaults where the runs say nothing (a regularised fit, maximum a
** posteriori with Gaussian prior and noise):
**   - memory, linear: nvidia-smi's peak y = live x (1 + slack) + runtime,
**     live the estimate's live bytes on the run's fullest device (weights,
**     state, activations, buffers, transients); priors slack ~ N(the
**     engine's, 0.1^2), runtime ~ N(the engine's, (2 GiB)^2); noise
**     relative to y, its spread estimated from the residuals;
**   - time, non-linear (the iteration is a max over resources): the
**     measured iteration time against the estimate with compute scaled by
**     s and a fixed cost c per micro-batch and stage replica; priors
**     s ~ N(1, 0.5^2), c ~ N(0, (5 ms)^2); relative residuals; solved by
**     Gauss-Newton on finite differences, the noise spread re-estimated
**     from the residuals.
** The standard deviations reported are the posterior's, (J'J / t^2 +
** P^-1)^-1, with t the residuals' spread: what the runs determine shrinks,
** what they do not keeps its prior spread.
** Invariant: the result depends on the runs only (no randomness; runs in
** the order given).
** Complexity: per group, memory O(runs) evaluations; time O(GN_ITERS x 3
** x runs) evaluations.
** Source: the model is the one docs/COST_MODEL.md describes; the fit is
** the textbook Gauss-Newton MAP estimate (Nocedal & Wright, Numerical
** Optimization, ch. 10).
*/
#include "search/search.h"

#include <math.h>
#include <string.h>

/* TUNING: prior spreads, wide enough that a few runs move the value:
** the allocator's slack 0.1 (the default 0.11 was measured on GH200,
** docs/COST_MODEL.md "Fixed runtime memory"); runtime memory 2 GiB (the
** measured platforms differ by 3 GiB); compute scale 0.5; fixed cost
** per micro-batch 5 ms (a slow Python step); Gauss-Newton steps 30. */
#define PRIOR_SLACK_SD 0.1
#define PRIOR_RUNTIME_SD (2.0 * 1073741824.0)
#define PRIOR_SCALE_SD 0.5
#define PRIOR_STEP_SD 5.0
#define GN_ITERS 30

void pp_calibrate_params_init(pp_calibrate_params *p)
{
  if (!p)
    return;
  memset(p, 0, sizeof *p);
  pp_cost_params_init(&p->cost);
  p->cost.record = 0;
}

/* The run's key: its plan's settings and its devices' one type (-1 when
** its devices have several types: such a run is not fitted). */
static int32_t run_type(const pp_run_record *r)
{
  int32_t s, q, t, ty = -1;
  for (s = 0; s < pp_plan_nstage(r->plan); s++)
    for (q = 0; q < pp_plan_nreplica(r->plan, s); q++) {
      const int32_t *d = pp_plan_replica(r->plan, s, q);
      for (t = 0; t < r->plan->p.tp; t++) {
        int32_t x = pp_cluster_device_type(r->cluster, d[t]);
        if (ty >= 0 && x != ty)
          return -1;
        ty = x;
      }
    }
  return ty;
}

static pp_precision run_precision(const pp_run_record *r)
{
  pp_plan_params pa;
  pp_plan_get_params(r->plan, &pa);
  return pa.precision == PP_PREC_MODEL ? pp_model_dtype(r->model)
                                       : pa.precision;
}

static pp_engine run_engine(const pp_run_record *r)
{
  pp_plan_params pa;
  pp_plan_get_params(r->plan, &pa);
  return pa.engine;
}

/* Price run r with entry e as the only calibration: the iteration time
** and, of the fullest device, its memory parts. */
static pp_status price(pp_ctx *ctx, const pp_run_record *r,
                       const pp_calibrate_params *p, const pp_calib_entry *e,
                       double *ms, pp_device_memory *worst)
{
  pp_calibration *c = NULL;
  pp_cost_params cp = p->cost;
  pp_eval *ev = NULL;
  pp_eval_summary s;
  pp_status rc;
  if ((rc = pp_calibration_create(ctx, &c)) ||
      (e && (rc = pp_calibration_add(c, e))))
    goto done;
  cp.calibration = c;
  if ((rc = pp_evaluate(ctx, r->plan, r->model, r->cluster, &cp, &ev)) ||
      (rc = pp_eval_get_summary(ev, &s)))
    goto done;
  *ms = s.iteration_ms;
  if (worst) {
    int32_t d;
    double best = -1;
    for (d = 0; d < pp_cluster_ndev(r->cluster); d++) {
      pp_device_memory x;
      if (pp_eval_device(ev, d, &x) == PP_OK && x.used &&
          x.total_bytes > best) {
        best = x.total_bytes;
        *worst = x;
      }
    }
  }
done:
  pp_eval_destroy(ev);
  pp_calibration_destroy(c);
  return rc;
}

/* Solve the 2 x 2 system A x = b; A symmetric positive definite (the
** prior makes it so); inv receives A^-1. */
static void solve2(const double A[3], const double b[2], double x[2],
                   double inv[3])
{
  double det = A[0] * A[2] - A[1] * A[1];
  inv[0] = A[2] / det;
  inv[1] = -A[1] / det;
  inv[2] = A[0] / det;
  x[0] = inv[0] * b[0] + inv[1] * b[1];
  x[1] = inv[1] * b[0] + inv[2] * b[1];
}

/* Memory: y = live (1 + slack) + runtime, linear in (slack, runtime). */
static pp_status fit_memory(pp_ctx *ctx, const pp_run_record *runs,
                            const int32_t *idx, int32_t n,
                            const pp_calibrate_params *p, pp_calib_entry *e)
{
  double *live, *y, th0[2], psd[2] = {PRIOR_SLACK_SD, PRIOR_RUNTIME_SD};
  double th[2] = {0, 0}, inv[3] = {0, 0, 0}, tau = 0.02, ss = 0;
  int32_t i, m = 0, it;
  pp_status rc = PP_OK;
  if (!PPI_NEW(ctx, live, n) || !PPI_NEW(ctx, y, n)) {
    ppi_free(ctx, live, (size_t)(n > 0 ? n : 1) * sizeof *live);
    return PP_ENOMEM;
  }
  th0[0] = th0[1] = NAN;
  for (i = 0; i < n && !rc; i++) {
    const pp_run_record *r = &runs[idx[i]];
    pp_device_memory w;
    double ms;
    memset(&w, 0, sizeof w);
    if (r->failed || !(r->peak_memory_bytes > 0))
      continue;
    if ((rc = price(ctx, r, p, NULL, &ms, &w)))
      break;
    live[m] = w.total_bytes - w.slack_bytes - w.runtime_bytes -
              w.reserve_bytes;
    y[m] = r->peak_memory_bytes - w.reserve_bytes;
    if (isnan(th0[0])) { /* the defaults the cost model applies */
      th0[0] = live[m] > 0 ? w.slack_bytes / live[m] : 0;
      th0[1] = w.runtime_bytes;
    }
    m++;
  }
  for (it = 0; it < 4 && m > 0 && !rc; it++) {
    double A[3], b[2];
    A[0] = 1 / (psd[0] * psd[0]);
    A[1] = 0;
    A[2] = 1 / (psd[1] * psd[1]);
    b[0] = th0[0] * A[0];
    b[1] = th0[1] * A[2];
    for (i = 0; i < m; i++) {
      double w = 1 / (tau * y[i] * tau * y[i]);
      A[0] += live[i] * live[i] * w;
      A[1] += live[i] * w;
      A[2] += w;
      b[0] += live[i] * (y[i] - live[i]) * w;
      b[1] += (y[i] - live[i]) * w;
    }
    solve2(A, b, th, inv);
    for (i = 0, ss = 0; i < m; i++) {
      double res = (live[i] * (1 + th[0]) + th[1] - y[i]) / y[i];
      ss += res * res;
    }
    /* the spread of the residuals, floored at 0.5% (nvidia-smi's MiB
    ** granularity and run-to-run noise) */
    tau = m > 2 ? sqrt(ss / (m - 2)) : tau;
    if (tau < 0.005)
      tau = 0.005;
  }
  if (m > 0) {
    e->slack = th[0] > 0 ? th[0] : 0;
    e->runtime_bytes = th[1] > 0 ? th[1] : 0;
    e->slack_sd = sqrt(inv[0]);
    e->runtime_sd = sqrt(inv[2]);
    e->memory_runs = m;
    e->memory_rel_sd = sqrt(ss / m);
  }
  ppi_free(ctx, live, (size_t)(n > 0 ? n : 1) * sizeof *live);
  ppi_free(ctx, y, (size_t)(n > 0 ? n : 1) * sizeof *y);
  return rc;
}

/* Relative residuals of the timed runs at (scale, step) into res[]. */
static pp_status time_residuals(pp_ctx *ctx, const pp_run_record *runs,
                                const int32_t *idx, int32_t m,
                                const pp_calibrate_params *p,
                                const pp_calib_entry *key, double scale,
                                double step, double *res)
{
  pp_calib_entry e = *key;
  int32_t i;
  pp_status rc;
  e.compute_scale = scale;
  e.step_ms = step;
  e.runtime_bytes = e.slack = NAN; /* time does not depend on them */
  for (i = 0; i < m; i++) {
    const pp_run_record *r = &runs[idx[i]];
    double ms;
    if ((rc = price(ctx, r, p, &e, &ms, NULL)))
      return rc;
    res[i] = (ms - r->iteration_ms) / r->iteration_ms;
  }
  return PP_OK;
}

static pp_status fit_time(pp_ctx *ctx, const pp_run_record *runs,
                          const int32_t *idx, int32_t n,
                          const pp_calibrate_params *p, pp_calib_entry *e)
{
  int32_t *t, i, m = 0, it;
  double *r0, *r1, *r2, th[2] = {1, 0}, th0[2] = {1, 0};
  double psd[2] = {PRIOR_SCALE_SD, PRIOR_STEP_SD}, inv[3] = {0, 0, 0};
  double tau = 0.05, ss = 0;
  pp_status rc = PP_OK;
  size_t cnt = (size_t)(n > 0 ? n : 1);
  t = ppi_calloc(ctx, cnt, sizeof *t);
  r0 = ppi_calloc(ctx, cnt, sizeof *r0);
  r1 = ppi_calloc(ctx, cnt, sizeof *r1);
  r2 = ppi_calloc(ctx, cnt, sizeof *r2);
  if (!t || !r0 || !r1 || !r2) {
    rc = PP_ENOMEM;
    goto done;
  }
  for (i = 0; i < n; i++)
    if (!runs[idx[i]].failed && runs[idx[i]].iteration_ms > 0)
      t[m++] = idx[i];
  for (it = 0; it < GN_ITERS && m > 0; it++) {
    /* TUNING: finite-difference steps, small against the parameters'
    ** scales (1 and milliseconds) and large against rounding */
    const double hs = 1e-4, hc = 1e-3;
    double A[3], b[2], dx[2];
    int32_t j;
    if ((rc = time_residuals(ctx, runs, t, m, p, e, th[0], th[1], r0)) ||
        (rc = time_residuals(ctx, runs, t, m, p, e, th[0] + hs, th[1], r1)) ||
        (rc = time_residuals(ctx, runs, t, m, p, e, th[0], th[1] + hc, r2)))
      goto done;
    A[0] = 1 / (psd[0] * psd[0]);
    A[1] = 0;
    A[2] = 1 / (psd[1] * psd[1]);
    b[0] = -(th[0] - th0[0]) * A[0];
    b[1] = -(th[1] - th0[1]) * A[2];
    for (j = 0, ss = 0; j < m; j++) {
      double js = (r1[j] - r0[j]) / hs, jc = (r2[j] - r0[j]) / hc;
      double w = 1 / (tau * tau);
      A[0] += js * js * w;
      A[1] += js * jc * w;
      A[2] += jc * jc * w;
      b[0] -= js * r0[j] * w;
      b[1] -= jc * r0[j] * w;
      ss += r0[j] * r0[j];
    }
    solve2(A, b, dx, inv);
    th[0] += dx[0];
    th[1] += dx[1];
    if (th[0] < 0.01)
      th[0] = 0.01;
    if (th[1] < 0)
      th[1] = 0;
    /* the noise: the residuals' spread, floored at 0.5% */
    tau = m > 2 ? sqrt(ss / (m - 2)) : tau;
    if (tau < 0.005)
      tau = 0.005;
    if (fabs(dx[0]) < 1e-7 && fabs(dx[1]) < 1e-5 && it > 2)
      break;
  }
  if (m > 0) {
    if ((rc = time_residuals(ctx, runs, t, m, p, e, th[0], th[1], r0)))
      goto done;
    for (i = 0, ss = 0; i < m; i++)
      ss += r0[i] * r0[i];
    e->compute_scale = th[0];
    e->step_ms = th[1];
    e->compute_sd = sqrt(inv[0]);
    e->step_sd = sqrt(inv[2]);
    e->time_runs = m;
    e->time_rel_sd = sqrt(ss / m);
  }
done:
  ppi_free(ctx, t, cnt * sizeof *t);
  ppi_free(ctx, r0, cnt * sizeof *r0);
  ppi_free(ctx, r1, cnt * sizeof *r1);
  ppi_free(ctx, r2, cnt * sizeof *r2);
  return rc;
}

pp_status pp_calibrate(pp_ctx *ctx, const pp_run_record *runs, int32_t n,
                       const pp_calibrate_params *p, pp_calibration **out)
{
  pp_calibrate_params def;
  pp_calibration *c = NULL;
  int32_t *idx = NULL, *done = NULL, i, j, m;
  pp_status rc;
  if (!ctx || (!runs && n > 0) || n < 0 || !out)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_calibrate: bad argument")
               : PP_EINVAL;
  *out = NULL;
  if (!p) {
    pp_calibrate_params_init(&def);
    p = &def;
  }
  for (i = 0; i < n; i++)
    if (!runs[i].plan || !runs[i].model || !runs[i].cluster)
      return ppi_fail(ctx, PP_EINVAL, "pp_calibrate: run %d lacks its plan, "
                      "model or cluster", (int)i);
  if ((rc = pp_calibration_create(ctx, &c)))
    return rc;
  idx = ppi_calloc(ctx, (size_t)(n > 0 ? n : 1), sizeof *idx);
  done = ppi_calloc(ctx, (size_t)(n > 0 ? n : 1), sizeof *done);
  if (!idx || !done) {
    rc = PP_ENOMEM;
    goto fail;
  }
  for (i = 0; i < n && !rc; i++) {
    int32_t ty = run_type(&runs[i]);
    pp_calib_entry e;
    if (done[i] || ty < 0)
      continue;
    /* the group of run i: the same type, engine and precision */
    for (j = i, m = 0; j < n; j++)
      if (!done[j] && run_type(&runs[j]) >= 0 &&
          run_engine(&runs[j]) == run_engine(&runs[i]) &&
          run_precision(&runs[j]) == run_precision(&runs[i]) &&
          strcmp(runs[j].cluster->type_name[run_type(&runs[j])],
                 runs[i].cluster->type_name[ty]) == 0) {
        idx[m++] = j;
        done[j] = 1;
      }
    pp_calib_entry_init(&e);
    e.type = runs[i].cluster->type_name[ty];
    e.engine = run_engine(&runs[i]);
    e.precision = run_precision(&runs[i]);
    if ((rc = fit_memory(ctx, runs, idx, m, p, &e)) ||
        (rc = fit_time(ctx, runs, idx, m, p, &e)))
      break;
    if (e.memory_runs + e.time_runs > 0)
      rc = pp_calibration_add(c, &e);
  }
  if (rc)
    goto fail;
  ppi_free(ctx, idx, (size_t)(n > 0 ? n : 1) * sizeof *idx);
  ppi_free(ctx, done, (size_t)(n > 0 ? n : 1) * sizeof *done);
  *out = c;
  return PP_OK;
fail:
  ppi_free(ctx, idx, (size_t)(n > 0 ? n : 1) * sizeof *idx);
  ppi_free(ctx, done, (size_t)(n > 0 ? n : 1) * sizeof *done);
  pp_calibration_destroy(c);
  return rc;
}
