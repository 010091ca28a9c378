/* SPDX-License-Identifier: MIT */
/*
** Calibrations: what a cluster's own measured runs taught the cost model
** (docs/COST_MODEL.md, "Calibration").  An entry is keyed by device type,
** engine and precision, the settings a measurement holds for, and
** carries the parameters fitted there, each with its standard deviation
** (0: not fitted, the default applies): the fixed runtime memory, the
** allocator's slack, a compute scale and a fixed cost per micro-batch.
** The cost model looks an entry up per device type of a plan
** (pp_calibration_find); the fit is src/search/calibrate.c, the file
** format src/format/calib_json.c.  It lives with the plan, whose
** settings (engine, precision) key it.
**
** Invariant: at most one entry per key; a value is NaN where not set.
** Complexity: O(entries) per lookup (a handful: one per device type,
** engine and precision a user has measured).
*/
#include "plan/plan.h"

#include <math.h>
#include <string.h>

struct pp_calibration {
  pp_ctx *ctx;
  struct ppi_vec e; /* pp_calib_entry; type strings owned (ppi_alloc) */
};

void pp_calib_entry_init(pp_calib_entry *e)
{
  memset(e, 0, sizeof *e);
  e->runtime_bytes = e->slack = e->compute_scale = e->step_ms = NAN;
  e->net_scale = e->mbs_exponent = e->tp_exponent = e->intra_scale = NAN;
}

pp_status pp_calibration_create(pp_ctx *ctx, pp_calibration **out)
{
  pp_calibration *c;
  if (!ctx || !out)
    return ctx ? ppi_fail(ctx, PP_EINVAL,
                          "pp_calibration_create: NULL argument")
               : PP_EINVAL;
  *out = NULL;
  if (!(c = ppi_calloc(ctx, 1, sizeof *c)))
    return PP_ENOMEM;
  c->ctx = ctx;
  ppi_vec_init(&c->e, sizeof(pp_calib_entry));
  *out = c;
  return PP_OK;
}

void pp_calibration_destroy(pp_calibration *c)
{
  size_t i;
  if (!c)
    return;
  for (i = 0; i < c->e.n; i++) {
    pp_calib_entry *x = &PPI_VEC_AT(&c->e, pp_calib_entry, i);
    ppi_free(c->ctx, (char *)x->type, strlen(x->type) + 1);
  }
  ppi_vec_free(c->ctx, &c->e);
  ppi_free(c->ctx, c, sizeof *c);
}

static bool bad_value(double x, double lo, double hi)
{
  return !isnan(x) && !(x >= lo && x <= hi);
}

pp_status pp_calibration_add(pp_calibration *c, const pp_calib_entry *e)
{
  pp_calib_entry x;
  const char *why;
  size_t n;
  if (!c || !e)
    return PP_EINVAL;
  if (!e->type || (why = ppi_name_problem(e->type)))
    return ppi_fail(c->ctx, PP_EINPUT, "calibration entry: device type %s",
                    e->type ? why : "missing");
  if (!pp_engine_name(e->engine) || !pp_precision_name(e->precision) ||
      e->precision == PP_PREC_MODEL)
    return ppi_fail(c->ctx, PP_EINPUT,
                    "calibration entry %s: engine or precision not valid",
                    e->type);
  if (bad_value(e->runtime_bytes, 0, 1e15) || bad_value(e->slack, 0, 10) ||
      bad_value(e->compute_scale, 1e-3, 1e3) || bad_value(e->step_ms, 0, 1e6) ||
      bad_value(e->net_scale, 1e-3, 1e3) || bad_value(e->mbs_exponent, -1, 1) ||
      bad_value(e->tp_exponent, -1, 1) || bad_value(e->intra_scale, 1e-3, 1e3))
    return ppi_fail(c->ctx, PP_EINPUT,
                    "calibration entry %s/%s/%s: a value out of range "
                    "(runtime_bytes >= 0, slack in [0, 10], compute_scale, "
                    "net_scale and intra_scale in [0.001, 1000], step_ms in "
                    "[0, 1e6], mbs_exponent and tp_exponent in [-1, 1])",
                    e->type, pp_engine_name(e->engine),
                    pp_precision_name(e->precision));
  if (pp_calibration_find(c, e->type, e->engine, e->precision))
    return ppi_fail(c->ctx, PP_EINPUT, "calibration: two entries for %s/%s/%s",
                    e->type, pp_engine_name(e->engine),
                    pp_precision_name(e->precision));
  x = *e;
  n = strlen(e->type) + 1;
  if (!(x.type = ppi_alloc(c->ctx, n)))
    return PP_ENOMEM;
  memcpy((char *)x.type, e->type, n);
  if (ppi_vec_push(c->ctx, &c->e, &x)) {
    ppi_free(c->ctx, (char *)x.type, n);
    return c->ctx->err;
  }
  return PP_OK;
}

int32_t pp_calibration_count(const pp_calibration *c)
{
  return c ? (int32_t)c->e.n : 0;
}

pp_status pp_calibration_get(const pp_calibration *c, int32_t i,
                             pp_calib_entry *out)
{
  if (!c || !out || i < 0 || (size_t)i >= c->e.n)
    return PP_EINVAL;
  *out = PPI_VEC_AT(&c->e, pp_calib_entry, i);
  return PP_OK;
}

double ppi_calib_compute_factor(const pp_calib_entry *e, int32_t mbs,
                                int32_t ref_mbs, int32_t tp)
{
  double f;
  if (!e)
    return 1;
  f = isnan(e->compute_scale) ? 1 : e->compute_scale;
  if (!isnan(e->mbs_exponent) && ref_mbs > 0)
    f *= pow((double)mbs / ref_mbs, e->mbs_exponent);
  if (!isnan(e->tp_exponent) && tp > 1)
    f *= pow((double)tp, e->tp_exponent);
  return f;
}

double ppi_calib_speedup(const pp_calibration *c, int32_t mbs, int32_t ref_mbs,
                         int32_t tp)
{
  double smin = 1;
  size_t i;
  for (i = 0; c && i < c->e.n; i++) {
    const pp_calib_entry *e = &PPI_VEC_AT(&c->e, pp_calib_entry, i);
    double f = ppi_calib_compute_factor(e, mbs, ref_mbs, tp);
    if (f < smin)
      smin = f;
    if (e->net_scale > 1 && 1 / e->net_scale < smin)
      smin = 1 / e->net_scale;
    if (e->intra_scale > 1 && 1 / e->intra_scale < smin)
      smin = 1 / e->intra_scale;
  }
  return smin;
}

const pp_calib_entry *pp_calibration_find(const pp_calibration *c,
                                          const char *type, pp_engine engine,
                                          pp_precision precision)
{
  size_t i;
  if (!c || !type)
    return NULL;
  for (i = 0; i < c->e.n; i++) {
    const pp_calib_entry *x = &PPI_VEC_AT(&c->e, pp_calib_entry, i);
    if (x->engine == engine && x->precision == precision &&
        strcmp(x->type, type) == 0)
      return x;
  }
  return NULL;
}
