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
**     relative to y, its spread estimated from the residuals; runs
**     without a measured peak are bounds (fit_memory);
**   - time, non-linear (the iteration is a max over resources): the
**     measured iteration time against the estimate with compute scaled by
**     s, a fixed cost c per micro-batch and stage replica, the
**     bandwidth between nodes scaled by n and inside them by i, compute
**     further by (micro-batch / reference)^g and by tp^h; priors
**     s ~ N(1, 0.5^2), c ~ N(0, (5 ms)^2), n and i ~ N(1, 0.3^2), g and
**     h ~ N(0, 0.2^2); nccl-tests figures observe n or i directly;
**     relative residuals; solved by
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
** per micro-batch 5 ms (a slow Python step); delivered share of the
** inter-node bandwidth 0.3 (NCCL over TCP delivers 40-60% of wire speed,
** NVIDIA/nccl issues 209 and 450; over RDMA near all); the micro-batch
** exponent 0.2 (x 0.76 to x 1.3 between micro-batch 1 and 4, the range
** of Sailor's measured per-sample times, docs/FORMATS.md "Which time
** applies"); the tensor-parallel exponent 0.2 likewise (x 0.76 to x 1.3
** from tp 1 to 4); the delivered share of the bandwidth inside a node
** 0.3, as across nodes; Gauss-Newton steps 30. */
#define PRIOR_SLACK_SD 0.1
#define PRIOR_RUNTIME_SD (2.0 * 1073741824.0)
#define PRIOR_SCALE_SD 0.5
#define PRIOR_STEP_SD 5.0
#define PRIOR_NET_SD 0.3
#define PRIOR_MBS_SD 0.2
#define PRIOR_TP_SD 0.2
#define PRIOR_INTRA_SD 0.3
/* TUNING: the relative spread of one nccl-tests figure of the bus
** bandwidth, 0.05 (repeated nccl-tests runs of one cluster differ by a
** few per cent; the largest of a sweep is taken). */
#define LINK_REL_SD 0.05
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
      for (t = 0; t < pp_plan_stage_tp(r->plan, s); t++) {
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
** and, of the fullest device, its memory parts; of the device with the
** least room (capacity - total), into *tight. */
static pp_status price(pp_ctx *ctx, const pp_run_record *r,
                       const pp_calibrate_params *p, const pp_calib_entry *e,
                       double *ms, pp_device_memory *worst,
                       pp_device_memory *tight)
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
    double best = -1, room = INFINITY;
    for (d = 0; d < pp_cluster_ndev(r->cluster); d++) {
      pp_device_memory x;
      if (pp_eval_device(ev, d, &x) != PP_OK || !x.used)
        continue;
      if (x.total_bytes > best) {
        best = x.total_bytes;
        *worst = x;
      }
      if (tight && (double)x.capacity_bytes - x.total_bytes < room) {
        room = (double)x.capacity_bytes - x.total_bytes;
        *tight = x;
      }
    }
  }
done:
  pp_eval_destroy(ev);
  pp_calibration_destroy(c);
  return rc;
}

/* Solve A x = b for a small symmetric positive definite A (n x n, row
** major; the prior makes it so) by Gauss-Jordan elimination; inv
** receives A^-1.  n <= 8. */
static void solve(int n, const double *A, const double *b, double *x,
                  double *inv)
{
  double m[8][16];
  int i, j, k;
  for (i = 0; i < n; i++)
    for (j = 0; j < 2 * n; j++)
      m[i][j] = j < n ? A[i * n + j] : (j - n == i);
  for (k = 0; k < n; k++) {
    double piv = m[k][k];
    for (j = 0; j < 2 * n; j++)
      m[k][j] /= piv;
    for (i = 0; i < n; i++)
      if (i != k) {
        double f = m[i][k];
        for (j = 0; j < 2 * n; j++)
          m[i][j] -= f * m[k][j];
      }
  }
  for (i = 0; i < n; i++) {
    x[i] = 0;
    for (j = 0; j < n; j++) {
      inv[i * n + j] = m[i][n + j];
      x[i] += m[i][n + j] * b[j];
    }
  }
}

/* Memory: y = live (1 + slack) + runtime, linear in (slack, runtime).
** The runs without a measured peak bound it: one that failed out of
** memory needed at least its tightest device's capacity there, one that
** finished at most every device's.  A bound the fit violates joins the
** observations at the bound (an active set: once in, it stays), and the
** fit is repeated until none is violated; each bound takes the device
** with the least room under the defaults. */
struct mobs {
  double live, y; /* the run's live bytes, the peak or the bound */
  int bound;      /* 0 measured; +1 at least y (OOM); -1 at most y */
  int active;     /* in the fit */
};

static void fit_linear(const struct mobs *o, int32_t n, const double th0[2],
                       double th[2], double inv[4], double *tau, double *ss,
                       int32_t *m)
{
  const double psd[2] = {PRIOR_SLACK_SD, PRIOR_RUNTIME_SD};
  int32_t i, it;
  for (i = 0, *m = 0; i < n; i++)
    *m += o[i].active;
  for (it = 0; it < 4 && *m > 0; it++) {
    double A[4], b[2];
    A[0] = 1 / (psd[0] * psd[0]);
    A[1] = A[2] = 0;
    A[3] = 1 / (psd[1] * psd[1]);
    b[0] = th0[0] * A[0];
    b[1] = th0[1] * A[3];
    for (i = 0; i < n; i++) {
      double w = 1 / (*tau * o[i].y * *tau * o[i].y);
      if (!o[i].active)
        continue;
      A[0] += o[i].live * o[i].live * w;
      A[1] += o[i].live * w;
      A[2] += o[i].live * w;
      A[3] += w;
      b[0] += o[i].live * (o[i].y - o[i].live) * w;
      b[1] += (o[i].y - o[i].live) * w;
    }
    solve(2, A, b, th, inv);
    for (i = 0, *ss = 0; i < n; i++) {
      double res = (o[i].live * (1 + th[0]) + th[1] - o[i].y) / o[i].y;
      if (o[i].active)
        *ss += res * res;
    }
    /* the spread of the residuals, floored at 0.5% (nvidia-smi's MiB
    ** granularity and run-to-run noise) */
    *tau = *m > 2 ? sqrt(*ss / (*m - 2)) : *tau;
    if (*tau < 0.005)
      *tau = 0.005;
  }
}

static pp_status fit_memory(pp_ctx *ctx, const pp_run_record *runs,
                            const int32_t *idx, int32_t n,
                            const pp_calibrate_params *p, pp_calib_entry *e)
{
  struct mobs *o;
  double th0[2], th[2] = {0, 0}, inv[4] = {0, 0, 0, 0}, tau = 0.02, ss = 0;
  int32_t i, m = 0, k = 0, measured = 0, again;
  pp_status rc = PP_OK;
  if (!PPI_NEW(ctx, o, n))
    return PP_ENOMEM;
  th0[0] = th0[1] = NAN;
  for (i = 0; i < n && !rc; i++) {
    const pp_run_record *r = &runs[idx[i]];
    pp_device_memory w, t;
    double ms, live;
    int meas = !r->failed && r->peak_memory_bytes > 0;
    memset(&w, 0, sizeof w);
    memset(&t, 0, sizeof t);
    if (!r->plan || r->failed == 2)
      continue; /* a time-out says nothing of memory */
    if ((rc = price(ctx, r, p, NULL, &ms, &w, &t)))
      break;
    if (isnan(th0[0])) { /* the defaults the cost model applies */
      live = w.total_bytes - w.slack_bytes - w.runtime_bytes - w.reserve_bytes;
      th0[0] = live > 0 ? w.slack_bytes / live : 0;
      th0[1] = w.runtime_bytes;
    }
    if (meas) {
      o[k].live =
          w.total_bytes - w.slack_bytes - w.runtime_bytes - w.reserve_bytes;
      o[k].y = r->peak_memory_bytes - w.reserve_bytes;
      o[k].bound = 0;
      o[k].active = 1;
      measured++;
    } else {
      o[k].live =
          t.total_bytes - t.slack_bytes - t.runtime_bytes - t.reserve_bytes;
      o[k].y = (double)t.capacity_bytes - t.reserve_bytes;
      o[k].bound = r->failed == 1 ? 1 : -1;
      o[k].active = 0;
      if (!(o[k].y > 0 && o[k].live > 0))
        continue;
    }
    k++;
  }
  /* the bounds only refine what measured peaks fit */
  for (again = measured > 0 && !rc; again;) {
    fit_linear(o, k, th0, th, inv, &tau, &ss, &m);
    again = 0;
    for (i = 0; i < k; i++) {
      double pred = o[i].live * (1 + th[0]) + th[1];
      if (!o[i].active && o[i].bound * (pred - o[i].y) < 0) {
        o[i].active = 1;
        again = 1;
      }
    }
  }
  if (measured > 0) {
    e->slack = th[0] > 0 ? th[0] : 0;
    e->runtime_bytes = th[1] > 0 ? th[1] : 0;
    e->slack_sd = sqrt(inv[0]);
    e->runtime_sd = sqrt(inv[3]);
    e->memory_runs = m;
    e->memory_rel_sd = sqrt(ss / m);
  }
  ppi_free(ctx, o, (size_t)(n > 0 ? n : 1) * sizeof *o);
  return rc;
}

/* The time parameters: compute scale, fixed cost per micro-batch (ms),
** delivered share of the bandwidth across nodes, micro-batch exponent,
** tensor-parallel exponent, delivered share inside a node. */
#define NT 6
_Static_assert(NT <= 8, "solve() takes at most 8 parameters");

/* Relative residuals of the timed runs at th[NT] into res[]. */
static pp_status time_residuals(pp_ctx *ctx, const pp_run_record *runs,
                                const int32_t *idx, int32_t m,
                                const pp_calibrate_params *p,
                                const pp_calib_entry *key, const double *th,
                                double *res)
{
  pp_calib_entry e = *key;
  int32_t i;
  pp_status rc;
  e.compute_scale = th[0];
  e.step_ms = th[1];
  e.net_scale = th[2];
  e.mbs_exponent = th[3];
  e.tp_exponent = th[4];
  e.intra_scale = th[5];
  e.runtime_bytes = e.slack = NAN; /* time does not depend on them */
  for (i = 0; i < m; i++) {
    const pp_run_record *r = &runs[idx[i]];
    double ms;
    if ((rc = price(ctx, r, p, &e, &ms, NULL, NULL)))
      return rc;
    res[i] = (ms - r->iteration_ms) / r->iteration_ms;
  }
  return PP_OK;
}

/* A link measurement's delivered share of the nominal bandwidth: the
** measured bus bandwidth over the nominal bottleneck between nodes, the
** slowest hop that leaves a node on the ring in the devices' order
** (all_reduce: NCCL's bus bandwidth of a ring is its slowest hop's, and
** a ring over whole nodes crosses each NIC once each way) or the pair's
** (sendrecv); *cls 0.  A measurement inside one node: over its slowest
** hop, *cls 1.  -1 with an error when the devices are of several
** types. */
static double link_share(pp_ctx *ctx, const pp_run_record *r, int32_t *type,
                         int32_t *cls)
{
  const pp_cluster *c = r->cluster;
  double bmin = INFINITY, bin = INFINITY;
  int32_t k, n = r->link == 1 ? 1 : r->ndevices;
  *type = c->dev_type[r->devices[0]];
  for (k = 0; k < r->ndevices; k++)
    if (c->dev_type[r->devices[k]] != *type) {
      ppi_fail(ctx, PP_EINPUT,
               "%s: its devices are of several types; a link measurement "
               "calibrates one",
               r->name ? r->name : "nccl-tests run");
      return -1;
    }
  for (k = 0; k < n; k++) {
    int32_t a = r->devices[k], b = r->devices[(k + 1) % r->ndevices];
    double bw = c->bw[(size_t)a * c->ndev + b];
    if (a == b)
      continue;
    if (c->dev_node[a] != c->dev_node[b] && bw < bmin)
      bmin = bw;
    if (c->dev_node[a] == c->dev_node[b] && bw < bin)
      bin = bw;
  }
  *cls = !(bmin < INFINITY);
  if (*cls && !(bin < INFINITY)) {
    ppi_fail(ctx, PP_EINPUT, "%s: its devices are one device",
             r->name ? r->name : "nccl-tests run");
    return -1;
  }
  return r->busbw_gbps / (*cls ? bin : bmin);
}

/* One MAP fit of the time parameters th[] (from th0) with those of
** fixed[] held at their defaults; inv: the posterior covariance; *tau:
** the residuals' spread; res: the residuals at the result. */
static pp_status gauss_newton(pp_ctx *ctx, const pp_run_record *runs,
                              const int32_t *t, int32_t m,
                              const pp_calibrate_params *p, const double *links,
                              const int32_t *lcls, int32_t nlinks,
                              const pp_calib_entry *e, const int *fixed,
                              double *th, double *inv, double *tau, double *r0,
                              double **rj)
{
  /* priors (TUNING above) and the bounds a step may not leave, less the
  ** finite difference so that no priced point leaves them either */
  static const double th0[NT] = {1, 0, 1, 0, 0, 1};
  static const double psd[NT] = {PRIOR_SCALE_SD, PRIOR_STEP_SD, PRIOR_NET_SD,
                                 PRIOR_MBS_SD,   PRIOR_TP_SD,   PRIOR_INTRA_SD};
  /* TUNING: finite-difference steps, small against the parameters'
  ** scales (1, milliseconds, 1) and large against rounding */
  static const double h[NT] = {1e-4, 1e-3, 1e-4, 1e-4, 1e-4, 1e-4};
  static const double lo[NT] = {0.01, 0, 0.02, -1, -1, 0.02};
  static const double hi[NT] = {100, 1e5, 10, 1 - 1e-4, 1 - 1e-4, 10};
  double ss = 0;
  int32_t it, a, b, j;
  pp_status rc;
  memcpy(th, th0, sizeof th0);
  *tau = 0.05;
  for (it = 0; it < GN_ITERS && (m > 0 || nlinks > 0); it++) {
    double A[NT * NT], g[NT], dx[NT], big = 0;
    if ((rc = time_residuals(ctx, runs, t, m, p, e, th, r0)))
      return rc;
    for (a = 0; a < NT; a++) {
      double tt[NT];
      memcpy(tt, th, sizeof tt);
      tt[a] += h[a];
      if ((rc = time_residuals(ctx, runs, t, m, p, e, tt, rj[a])))
        return rc;
    }
    for (a = 0; a < NT; a++) {
      /* a parameter held fixed has no Jacobian column (below) and a unit
      ** row here: its step is 0 */
      g[a] = fixed[a] ? 0 : -(th[a] - th0[a]) / (psd[a] * psd[a]);
      for (b = 0; b < NT; b++)
        A[a * NT + b] = a != b ? 0 : fixed[a] ? 1 : 1 / (psd[a] * psd[a]);
    }
    /* nccl-tests: direct observations of the shares across nodes (2)
    ** and inside them (5) */
    for (j = 0; j < nlinks; j++) {
      double sl = LINK_REL_SD * links[j];
      int q = lcls[j] ? 5 : 2;
      if (fixed[q])
        continue;
      A[q * NT + q] += 1 / (sl * sl);
      g[q] -= (th[q] - links[j]) / (sl * sl);
    }
    for (j = 0, ss = 0; j < m; j++) {
      double J[NT], w = 1 / (*tau * *tau);
      for (a = 0; a < NT; a++)
        J[a] = fixed[a] ? 0 : (rj[a][j] - r0[j]) / h[a];
      for (a = 0; a < NT; a++) {
        g[a] -= J[a] * r0[j] * w;
        for (b = 0; b < NT; b++)
          A[a * NT + b] += J[a] * J[b] * w;
      }
      ss += r0[j] * r0[j];
    }
    solve(NT, A, g, dx, inv);
    for (a = 0; a < NT; a++) {
      th[a] += dx[a];
      th[a] = th[a] < lo[a] ? lo[a] : th[a] > hi[a] ? hi[a] : th[a];
      if (!fixed[a] && fabs(dx[a]) / psd[a] > big)
        big = fabs(dx[a]) / psd[a];
    }
    /* the noise: the residuals' spread, floored at 0.5% */
    *tau = m > NT ? sqrt(ss / (m - NT)) : *tau;
    if (*tau < 0.005)
      *tau = 0.005;
    if (big < 1e-6 && it > 2)
      break;
  }
  return m > 0 ? time_residuals(ctx, runs, t, m, p, e, th, r0) : PP_OK;
}

static pp_status fit_time(pp_ctx *ctx, const pp_run_record *runs,
                          const int32_t *idx, int32_t n,
                          const pp_calibrate_params *p, const double *links,
                          const int32_t *lcls, int32_t nlinks,
                          pp_calib_entry *e)
{
  int32_t *t, i, m = 0, a, nmbs = 0, mbs0 = 0, ntp = 0, tp0 = 0, nl[2] = {0, 0};
  double *r0, *rj[NT], th[NT], inv[NT * NT], tau, ss = 0;
  int fixed[NT] = {0, 0, 0, 0, 0, 0};
  pp_status rc = PP_OK;
  size_t cnt = (size_t)(n > 0 ? n : 1);
  t = ppi_calloc(ctx, cnt, sizeof *t);
  r0 = ppi_calloc(ctx, cnt, sizeof *r0);
  for (a = 0; a < NT; a++)
    rj[a] = ppi_calloc(ctx, cnt, sizeof *rj[a]);
  memset(inv, 0, sizeof inv);
  if (!t || !r0 || !rj[0] || !rj[1] || !rj[2] || !rj[3] || !rj[4] || !rj[5]) {
    rc = PP_ENOMEM;
    goto done;
  }
  for (i = 0; i < n; i++)
    if (!runs[idx[i]].failed && runs[idx[i]].iteration_ms > 0) {
      int32_t mb = runs[idx[i]].plan->p.micro_batch;
      int32_t tp = runs[idx[i]].plan->p.tp;
      t[m++] = idx[i];
      if (nmbs == 0 || (nmbs == 1 && mb != mbs0))
        nmbs++;
      mbs0 = nmbs == 1 ? mb : mbs0;
      if (ntp == 0 || (ntp == 1 && tp != tp0))
        ntp++;
      tp0 = ntp == 1 ? tp : tp0;
    }
  for (i = 0; i < nlinks; i++)
    nl[lcls[i] ? 1 : 0]++;
  /* an exponent needs runs of two sizes (degrees) at least: with one,
  ** it and the compute scale are one parameter */
  fixed[3] = nmbs < 2;
  fixed[4] = ntp < 2;
  if ((rc = gauss_newton(ctx, runs, t, m, p, links, lcls, nlinks, e, fixed, th,
                         inv, &tau, r0, rj)))
    goto done;
  /* the networks and the exponents only where the runs determine them
  ** (posterior spread below 0.9 of the prior's); else held at their
  ** defaults and the rest fitted again without them */
  {
    static const double prior[NT] = {
        0, 0, PRIOR_NET_SD, PRIOR_MBS_SD, PRIOR_TP_SD, PRIOR_INTRA_SD};
    int again = 0;
    for (a = 2; a < NT; a++)
      if (!fixed[a] && !(sqrt(inv[a * NT + a]) < 0.9 * prior[a])) {
        fixed[a] = 2;
        again = 1;
      }
    if (again && (rc = gauss_newton(ctx, runs, t, m, p, links, lcls, nlinks, e,
                                    fixed, th, inv, &tau, r0, rj)))
      goto done;
  }
  if (!fixed[2] && (m > 0 || nl[0] > 0)) {
    e->net_scale = th[2];
    e->net_sd = sqrt(inv[2 * NT + 2]);
    e->link_runs += nl[0];
  }
  if (!fixed[5] && (m > 0 || nl[1] > 0)) {
    e->intra_scale = th[5];
    e->intra_sd = sqrt(inv[5 * NT + 5]);
    e->link_runs += nl[1];
  }
  if (m > 0) {
    for (i = 0, ss = 0; i < m; i++)
      ss += r0[i] * r0[i];
    e->compute_scale = th[0];
    e->step_ms = th[1];
    e->compute_sd = sqrt(inv[0]);
    e->step_sd = sqrt(inv[NT + 1]);
    if (!fixed[3]) {
      e->mbs_exponent = th[3];
      e->mbs_sd = sqrt(inv[3 * NT + 3]);
    }
    if (!fixed[4]) {
      e->tp_exponent = th[4];
      e->tp_sd = sqrt(inv[4 * NT + 4]);
    }
    e->time_runs = m;
    e->time_rel_sd = sqrt(ss / m);
  }
done:
  ppi_free(ctx, t, cnt * sizeof *t);
  ppi_free(ctx, r0, cnt * sizeof *r0);
  for (a = 0; a < NT; a++)
    ppi_free(ctx, rj[a], cnt * sizeof *rj[a]);
  return rc;
}

pp_status pp_calibrate(pp_ctx *ctx, const pp_run_record *runs, int32_t n,
                       const pp_calibrate_params *p, pp_calibration **out)
{
  pp_calibrate_params def;
  pp_calibration *c = NULL;
  int32_t *idx = NULL, *done = NULL, *ltype = NULL, *lcls = NULL, *lselc = NULL,
          i, j, m;
  double *lshare = NULL, *lsel = NULL;
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
    if (!runs[i].cluster || (runs[i].plan && !runs[i].model) ||
        (!runs[i].plan && (!runs[i].devices || runs[i].ndevices < 2 ||
                           !(runs[i].busbw_gbps > 0))))
      return ppi_fail(ctx, PP_EINVAL,
                      "pp_calibrate: run %d lacks its plan, model or cluster "
                      "(or, measuring links, its devices and bandwidth)",
                      (int)i);
    else if (!runs[i].plan)
      for (j = 0; j < runs[i].ndevices; j++)
        if (runs[i].devices[j] < 0 ||
            runs[i].devices[j] >= runs[i].cluster->ndev)
          return ppi_fail(ctx, PP_EINVAL,
                          "pp_calibrate: run %d: device %d is not one of "
                          "the cluster's %d",
                          (int)i, (int)runs[i].devices[j],
                          (int)runs[i].cluster->ndev);
  if ((rc = pp_calibration_create(ctx, &c)))
    return rc;
  idx = ppi_calloc(ctx, (size_t)(n > 0 ? n : 1), sizeof *idx);
  done = ppi_calloc(ctx, (size_t)(n > 0 ? n : 1), sizeof *done);
  ltype = ppi_calloc(ctx, (size_t)(n > 0 ? n : 1), sizeof *ltype);
  lshare = ppi_calloc(ctx, (size_t)(n > 0 ? n : 1), sizeof *lshare);
  lsel = ppi_calloc(ctx, (size_t)(n > 0 ? n : 1), sizeof *lsel);
  lcls = ppi_calloc(ctx, (size_t)(n > 0 ? n : 1), sizeof *lcls);
  lselc = ppi_calloc(ctx, (size_t)(n > 0 ? n : 1), sizeof *lselc);
  if (!idx || !done || !ltype || !lshare || !lsel || !lcls || !lselc) {
    rc = PP_ENOMEM;
    goto fail;
  }
  for (i = 0; i < n; i++)
    if (!runs[i].plan &&
        (lshare[i] = link_share(ctx, &runs[i], &ltype[i], &lcls[i])) < 0) {
      rc = PP_EINPUT;
      goto fail;
    }
  for (i = 0; i < n && !rc; i++) {
    int32_t ty, nl = 0;
    pp_calib_entry e;
    if (done[i] || !runs[i].plan || (ty = run_type(&runs[i])) < 0)
      continue;
    /* the group of run i: the same type, engine and precision */
    for (j = i, m = 0; j < n; j++)
      if (!done[j] && runs[j].plan && run_type(&runs[j]) >= 0 &&
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
    /* the links of this type that nccl-tests measured */
    for (j = 0; j < n; j++)
      if (!runs[j].plan &&
          strcmp(runs[j].cluster->type_name[ltype[j]], e.type) == 0) {
        lselc[nl] = lcls[j];
        lsel[nl++] = lshare[j];
        done[j] |= 2;
      }
    if ((rc = fit_memory(ctx, runs, idx, m, p, &e)) ||
        (rc = fit_time(ctx, runs, idx, m, p, lsel, lselc, nl, &e)))
      break;
    if (e.memory_runs + e.time_runs > 0)
      rc = pp_calibration_add(c, &e);
  }
  /* a link measurement of a type no run trained on has nothing to join,
  ** and one the fit could not use is not dropped silently */
  for (i = 0; i < n && !rc; i++) {
    const char *ty = runs[i].plan ? NULL : runs[i].cluster->type_name[ltype[i]];
    int32_t q, used = 0;
    for (q = 0; ty && q < pp_calibration_count(c) && !used; q++) {
      pp_calib_entry y;
      pp_calibration_get(c, q, &y);
      used = y.link_runs > 0 && strcmp(y.type, ty) == 0;
    }
    if (ty && !used)
      rc = ppi_fail(ctx, PP_EINPUT,
                    "%s: nccl-tests on %s, but %s to calibrate with it",
                    runs[i].name ? runs[i].name : "a link measurement", ty,
                    done[i] & 2 ? "no run of that type with a time"
                                : "no training run of that type");
  }
fail:
  ppi_free(ctx, idx, (size_t)(n > 0 ? n : 1) * sizeof *idx);
  ppi_free(ctx, done, (size_t)(n > 0 ? n : 1) * sizeof *done);
  ppi_free(ctx, ltype, (size_t)(n > 0 ? n : 1) * sizeof *ltype);
  ppi_free(ctx, lshare, (size_t)(n > 0 ? n : 1) * sizeof *lshare);
  ppi_free(ctx, lsel, (size_t)(n > 0 ? n : 1) * sizeof *lsel);
  ppi_free(ctx, lcls, (size_t)(n > 0 ? n : 1) * sizeof *lcls);
  ppi_free(ctx, lselc, (size_t)(n > 0 ? n : 1) * sizeof *lselc);
  if (rc) {
    pp_calibration_destroy(c);
    return rc;
  }
  *out = c;
  return PP_OK;
}
