/* SPDX-License-Identifier: MIT */
/*
** Writing the planner's result: the report of `parplan plan` (the best
** plan's degrees, micro-batch, schedule, stage boundaries, devices,
** memory per device against capacity, predicted time, throughput,
** bubble, lower bound and gap; then the kept plans in a table) and its
** JSON (docs/FORMATS.md, "plan --json").  Memory comes from pricing the
** plan again (pp_evaluate), so the report shows what `evaluate` would.
*/
#include "plan/plan.h"
#include "write/write.h"

#include <math.h>
#include <stdio.h>

static const char *op_name(const pp_model *m, int32_t v)
{
  pp_op_desc d;
  return pp_model_op(m, v, &d) == PP_OK && d.name ? d.name : "?";
}

static const char *dev_name(const pp_cluster *c, int32_t d)
{
  pp_device_desc dd;
  return pp_cluster_device(c, d, &dd) == PP_OK && dd.name ? dd.name : "?";
}

/* The first and last operator of stage s in the model's order. */
static void stage_span(const pp_plan *pl, int32_t s, int32_t *lo, int32_t *hi,
                       int32_t *n)
{
  const int32_t *ops = pp_plan_stage_ops(pl, s, n);
  int32_t i;
  *lo = *hi = *n ? ops[0] : -1;
  for (i = 1; i < *n; i++) {
    *lo = ops[i] < *lo ? ops[i] : *lo;
    *hi = ops[i] > *hi ? ops[i] : *hi;
  }
}

static pp_status price(pp_ctx *ctx, const pp_search *sr, const pp_plan *pl,
                       const pp_model *m, const pp_cluster *c, pp_eval **e)
{
  pp_search_summary sum;
  pp_search_get_summary(sr, &sum);
  return pp_evaluate(ctx, pl, m, c, &sum.cost, e);
}

/* The plan's precision, the model's dtype when it names none. */
static pp_precision precision_of(const pp_plan *pl, const pp_model *m)
{
  pp_plan_params q;
  pp_plan_get_params(pl, &q);
  return q.precision == PP_PREC_MODEL ? pp_model_dtype(m) : q.precision;
}

static int32_t plan_tp(const void *p, int32_t s)
{
  return pp_plan_stage_tp(p, s);
}

static void json_plan(FILE *f, const pp_search_plan *y, const pp_plan *pl,
                      const pp_model *m, const pp_cluster *c, const pp_eval *e)
{
  int32_t s, r, k, S = pp_plan_nstage(pl);
  fprintf(f,
          "{\"devices\": %d, \"pp\": %d, \"dp\": %d, \"tp\": %d, "
          "\"micro_batch\": %d, \"gas\": %lld, \"schedule\": \"%s\", "
          "\"recompute\": %s, \"madpipe\": %s, \"placement\": \"%s\",\n"
          "    ",
          (int)y->devices, (int)y->pp, (int)y->dp, (int)y->tp,
          (int)y->micro_batch, (long long)y->gas, pp_schedule_name(y->schedule),
          y->recompute ? "true" : "false", y->madpipe ? "true" : "false",
          y->mapped ? "mapped" : "megatron");
  {
    pp_plan_params q;
    pp_plan_get_params(pl, &q);
    ppi_json_run(f, precision_of(pl, m), q.engine, q.zero);
    fputs(", \"iteration_ms\": ", f);
  }
  ppi_json_num(f, y->simulated_ms > 0 ? y->simulated_ms : y->estimate_ms);
  fputs(", \"estimate_ms\": ", f);
  ppi_json_num(f, y->estimate_ms);
  fputs(", \"simulated_ms\": ", f);
  if (y->simulated_ms > 0)
    ppi_json_num(f, y->simulated_ms);
  else
    fputs("null", f);
  fputs(", \"time_spread\": ", f);
  ppi_json_num(f, y->time_spread);
  fprintf(f, ", \"calibrated\": %s", y->calibrated ? "true" : "false");
  fputs(", \"throughput\": ", f);
  ppi_json_num(f, y->throughput);
  fputs(", \"bubble\": ", f);
  ppi_json_num(f, y->bubble);
  fputs(", \"lower_bound_ms\": ", f);
  ppi_json_num(f, y->lower_bound_ms);
  fputs(", \"peak_share\": ", f);
  ppi_json_num(f, y->peak_share);
  if (e) {
    pp_eval_summary es;
    pp_eval_get_summary(e, &es);
    fputs(", \"margin_bytes\": ", f);
    ppi_json_num(f, es.margin_bytes);
  }
  fputs(",\n    \"stages\": [", f);
  for (s = 0; s < S; s++) {
    int32_t lo, hi, n;
    stage_span(pl, s, &lo, &hi, &n);
    fputs(s ? ",\n      {\"first\": " : "\n      {\"first\": ", f);
    ppi_json_str(f, n ? op_name(m, lo) : "");
    fputs(", \"last\": ", f);
    ppi_json_str(f, n ? op_name(m, hi) : "");
    fprintf(f, ", \"operators\": %d, \"replicas\": [", (int)n);
    for (r = 0; r < pp_plan_nreplica(pl, s); r++) {
      const int32_t *d = pp_plan_replica(pl, s, r);
      fputs(r ? ", [" : "[", f);
      for (k = 0; k < pp_plan_stage_tp(pl, s); k++)
        fprintf(f, "%s%d", k ? ", " : "", (int)d[k]);
      fputc(']', f);
    }
    fprintf(f,
            "], \"tp\": %d, \"memory_bytes\": ", (int)pp_plan_stage_tp(pl, s));
    {
      double worst = 0, cap = 0;
      for (r = 0; r < pp_plan_nreplica(pl, s); r++) {
        const int32_t *d = pp_plan_replica(pl, s, r);
        for (k = 0; k < pp_plan_stage_tp(pl, s); k++) {
          pp_device_memory dm;
          if (e && pp_eval_device(e, d[k], &dm) == PP_OK &&
              dm.total_bytes > worst) {
            worst = dm.total_bytes;
            cap = (double)dm.capacity_bytes;
          }
        }
      }
      ppi_json_num(f, worst);
      fputs(", \"capacity_bytes\": ", f);
      ppi_json_num(f, cap);
    }
    fputc('}', f);
  }
  fputs("]}", f);
  (void)c;
}

static void write_json(pp_ctx *ctx, const pp_search *sr, const pp_model *m,
                       const pp_cluster *c, FILE *f)
{
  pp_search_summary sum;
  int32_t i;
  pp_search_get_summary(sr, &sum);
  fputs("{\"model\": ", f);
  ppi_json_str(f, pp_model_name(m));
  fputs(", \"cluster\": ", f);
  ppi_json_str(f, pp_cluster_name(c));
  fprintf(f, ", \"cluster_devices\": %d", (int)pp_cluster_ndev(c));
  fputs(",\n \"lower_bound_ms\": ", f);
  ppi_json_num(f, sum.lower_bound_ms);
  fprintf(f,
          ", \"fits\": %s,\n \"search\": {\"points\": %lld, \"pruned\": %lld, "
          "\"evaluated\": %lld, \"fitting\": %lld, \"madpipe\": %lld, "
          "\"timed_out\": %s, \"interrupted\": %s, \"simulated\": %d, "
          "\"by_estimate\": %d, \"seconds\": ",
          sum.nplans ? "true" : "false", (long long)sum.points,
          (long long)sum.pruned, (long long)sum.evaluated,
          (long long)sum.fitting, (long long)sum.madpipe,
          sum.timed_out ? "true" : "false", sum.interrupted ? "true" : "false",
          (int)sum.simulated, sum.by_estimate);
  ppi_json_num(f, sum.seconds);
  fputs("}", f);
  if (!sum.nplans && sum.closest_device >= 0) {
    fputs(",\n \"closest\": {\"device\": ", f);
    ppi_json_str(f, dev_name(c, sum.closest_device));
    fputs(", \"need_bytes\": ", f);
    ppi_json_num(f, sum.closest_need_bytes);
    fputs(", \"capacity_bytes\": ", f);
    ppi_json_num(f, sum.closest_capacity_bytes);
    fputs("}", f);
  }
  fputs(",\n \"plans\": [", f);
  for (i = 0; i < sum.nplans; i++) {
    pp_search_plan y;
    pp_eval *e = NULL;
    const pp_plan *pl = pp_search_plan_at(sr, i);
    pp_search_plan_get(sr, i, &y);
    if (price(ctx, sr, pl, m, c, &e))
      e = NULL;
    fputs(i ? ",\n  " : "\n  ", f);
    json_plan(f, &y, pl, m, c, e);
    pp_eval_destroy(e);
  }
  fputs("]}\n", f);
}

static void write_text(pp_ctx *ctx, const pp_search *sr, const pp_model *m,
                       const pp_cluster *c, FILE *f)
{
  pp_search_summary sum;
  pp_search_plan y;
  const pp_plan *pl;
  pp_eval *e = NULL;
  int32_t i, s, r, k, S;
  char b1[32], b2[32];
  pp_search_get_summary(sr, &sum);
  fprintf(f,
          "plan for %s on %s (%d devices): %lld points, %lld pruned by the "
          "lower bound, %lld priced, %lld fit in memory, %lld MadPipe runs "
          "where memory bound; %.3g s%s\n",
          pp_model_name(m), pp_cluster_name(c), (int)pp_cluster_ndev(c),
          (long long)sum.points, (long long)sum.pruned,
          (long long)sum.evaluated, (long long)sum.fitting,
          (long long)sum.madpipe, sum.seconds,
          sum.interrupted ? " (interrupted: the best plans found so far)"
          : sum.timed_out ? " (time limit reached: the search is incomplete)"
                          : "");
  if (sum.nplans && sum.by_estimate == 2)
    fprintf(f,
            "%d of the %d plans simulated before the simulator hit its size "
            "limit or ran out of memory: all are ranked by the estimate\n",
            (int)sum.simulated, (int)sum.nplans);
  else if (sum.nplans && sum.by_estimate && sum.timed_out)
    fprintf(f,
            "%d of the %d plans simulated before the time ran out: all are "
            "ranked by the estimate\n",
            (int)sum.simulated, (int)sum.nplans);
  if (!sum.nplans && (sum.timed_out || sum.interrupted)) {
    /* The search stopped before a plan that fits was priced: saying
    ** that none fits would be false, since most points were never tried. */
    fprintf(f,
            "no plan found before the search stopped (%lld of %lld points "
            "priced, none fitting): %s\n",
            (long long)sum.evaluated, (long long)sum.points,
            sum.interrupted ? "run it to the end"
                            : "raise the time limit (--time-limit)");
    return;
  }
  if (!sum.nplans) {
    fputs("no plan fits in memory", f);
    if (sum.closest_device >= 0) {
      ppi_fmt_bytes(b1, sizeof b1, sum.closest_need_bytes);
      ppi_fmt_bytes(b2, sizeof b2, sum.closest_capacity_bytes);
      fprintf(f, ": the closest needs %s on device %s, which has %s", b1,
              dev_name(c, sum.closest_device), b2);
    }
    fputc('\n', f);
    return;
  }
  pp_search_plan_get(sr, 0, &y);
  pl = pp_search_plan_at(sr, 0);
  ppi_tp_words(b1, sizeof b1, plan_tp, pl, pp_plan_nstage(pl));
  fprintf(f,
          "\nbest: %d devices = pp %d x dp %d x tp %s%s; micro-batch %d, %lld "
          "per replica; %s%s%s; placement: %s\n",
          (int)y.devices, (int)y.pp, (int)y.dp, b1, y.tp ? "" : " (per stage)",
          (int)y.micro_batch, (long long)y.gas, pp_schedule_name(y.schedule),
          y.madpipe ? " with MadPipe's partition and in-flight counts "
                      "(memory binds)"
                    : "",
          y.recompute ? ", recomputation" : "",
          y.mapped ? "exact mapper" : "Megatron's rank order");
  {
    pp_plan_params q;
    char words[96];
    pp_plan_get_params(pl, &q);
    ppi_run_words(words, sizeof words, precision_of(pl, m), q.engine, q.zero);
    fprintf(f, "%s\n", words);
  }
  {
    double t = y.simulated_ms > 0 ? y.simulated_ms : y.estimate_ms;
    fprintf(f,
            "iteration %.2f ms (%s; estimate %.2f ms), %.2f samples/s, "
            "bubble %.1f%%\n",
            t, y.simulated_ms > 0 ? "simulated" : "estimate", y.estimate_ms,
            y.throughput, 100 * y.bubble);
    {
      char iv[192];
      ppi_interval_words(iv, sizeof iv, t, y.time_spread, y.calibrated);
      fprintf(f, "  interval %s\n", iv);
    }
    fprintf(f,
            "lower bound %.2f ms (%.2f ms at this plan's tp, micro-batch, "
            "recomputation, pp and dp): gap %.1f%%\n",
            sum.lower_bound_ms, y.lower_bound_ms,
            sum.lower_bound_ms > 0 ? 100 * (t / sum.lower_bound_ms - 1) : 0.0);
  }
  if (price(ctx, sr, pl, m, c, &e))
    e = NULL;
  S = pp_plan_nstage(pl);
  fputs("\nstage  operators  first .. last                      devices"
        "                        memory / capacity\n",
        f);
  for (s = 0; s < S; s++) {
    int32_t lo, hi, n, col;
    double worst = 0, cap = 0;
    char span[64], devs[40];
    stage_span(pl, s, &lo, &hi, &n);
    snprintf(span, sizeof span, "%s .. %s", n ? op_name(m, lo) : "",
             n ? op_name(m, hi) : "");
    devs[0] = 0;
    for (r = 0, col = 0; r < pp_plan_nreplica(pl, s); r++) {
      const int32_t *d = pp_plan_replica(pl, s, r);
      for (k = 0; k < pp_plan_stage_tp(pl, s); k++) {
        pp_device_memory dm;
        if (col < (int32_t)sizeof devs - 8)
          col += snprintf(devs + col, sizeof devs - (size_t)col, "%s%s",
                          col ? "," : "", dev_name(c, d[k]));
        if (e && pp_eval_device(e, d[k], &dm) == PP_OK &&
            dm.total_bytes > worst) {
          worst = dm.total_bytes;
          cap = (double)dm.capacity_bytes;
        }
      }
    }
    if (col >= (int32_t)sizeof devs - 8)
      snprintf(devs + sizeof devs - 5, 5, "...");
    ppi_fmt_bytes(b1, sizeof b1, worst);
    ppi_fmt_bytes(b2, sizeof b2, cap);
    fprintf(f, "%5d  %9d  %-34.34s %-30s %s / %s\n", (int)s, (int)n, span, devs,
            b1, b2);
  }
  if (e) {
    pp_eval_summary es;
    char words[64];
    pp_eval_get_summary(e, &es);
    ppi_margin_words(words, sizeof words, es.margin_bytes);
    fprintf(f, "tightest device: %s\n", words);
  }
  pp_eval_destroy(e);
  if (sum.nplans > 1) {
    fputs("\nrank  devices  pp  dp  tp  mbs   gas  schedule   recomp  "
          "estimate ms  simulated ms  samples/s  placement\n",
          f);
    for (i = 0; i < sum.nplans; i++) {
      char tw[16];
      pp_search_plan_get(sr, i, &y);
      /* per-stage degrees: "var" (the best plan's line above lists
      ** them; --json has every stage's) */
      if (y.tp)
        snprintf(tw, sizeof tw, "%d", (int)y.tp);
      else
        snprintf(tw, sizeof tw, "var");
      fprintf(f,
              "%4d  %7d %3d %3d %3s %4d %5lld  %-9s  %-6s  %11.2f  %12.2f  "
              "%9.2f  %s\n",
              (int)i + 1, (int)y.devices, (int)y.pp, (int)y.dp, tw,
              (int)y.micro_batch, (long long)y.gas,
              y.madpipe ? "madpipe" : pp_schedule_name(y.schedule),
              y.recompute ? "yes" : "no", y.estimate_ms, y.simulated_ms,
              y.throughput, y.mapped ? "mapped" : "megatron");
    }
  }
}

pp_status pp_search_write(pp_ctx *ctx, const pp_search *s, const pp_model *m,
                          const pp_cluster *c, int json, FILE *f)
{
  if (!s || !m || !c || !f)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_search_write: NULL argument")
               : PP_EINVAL;
  if (json)
    write_json(ctx, s, m, c, f);
  else
    write_text(ctx, s, m, c, f);
  return ferror(f) ? (ctx ? ppi_fail(ctx, PP_EIO, "plan: write error") : PP_EIO)
                   : PP_OK;
}

/* ---- compare ------------------------------------------------------------ */

pp_status pp_compare_write(pp_ctx *ctx, const pp_compare *x, int json, FILE *f)
{
  int32_t i, n = pp_compare_nrow(x);
  pp_compare_row r;
  if (!x || !f)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_compare_write: NULL argument")
               : PP_EINVAL;
  if (json) {
    fputs("{\"rows\": [", f);
    for (i = 0; i < n; i++) {
      pp_compare_row_get(x, i, &r);
      fputs(i ? ",\n  {\"method\": " : "\n  {\"method\": ", f);
      ppi_json_str(f, r.method);
      fputs(", \"about\": ", f);
      ppi_json_str(f, r.about);
      fprintf(f, ", \"found\": %s", r.found ? "true" : "false");
      if (r.found)
        fprintf(f,
                ", \"fits\": %s, \"devices\": %d, \"pp\": %d, \"dp\": %d, "
                "\"tp\": %d, \"micro_batch\": %d, \"schedule\": \"%s\", "
                "\"recompute\": %s",
                r.fits ? "true" : "false", (int)r.devices, (int)r.pp, (int)r.dp,
                (int)r.tp, (int)r.micro_batch, pp_schedule_name(r.schedule),
                r.recompute ? "true" : "false");
      if (r.found && pp_compare_plan(x, i)) {
        pp_plan_params q;
        pp_plan_get_params(pp_compare_plan(x, i), &q);
        fprintf(f, ", \"precision\": \"%s\", \"engine\": \"%s\", \"zero\": %d",
                pp_precision_name(q.precision), pp_engine_name(q.engine),
                (int)q.zero);
      }
      fputs(", \"estimate_ms\": ", f);
      ppi_json_num(f, r.estimate_ms);
      fputs(", \"simulated_ms\": ", f);
      ppi_json_num(f, r.simulated_ms);
      fputs(", \"own_ms\": ", f);
      if (r.own_ms > 0)
        ppi_json_num(f, r.own_ms);
      else
        fputs("null", f);
      fputs(", \"speedup_of_ours\": ", f);
      if (r.speedup > 0)
        ppi_json_num(f, r.speedup);
      else
        fputs("null", f);
      fprintf(f, ", \"evaluations\": %lld, \"seconds\": ",
              (long long)r.evaluations);
      ppi_json_num(f, r.seconds);
      fputc('}', f);
    }
    fputs("]}\n", f);
  } else {
    /* the run's settings, the search's (every row shares its engine and
    ** precision; the ZeRO stage is per row) */
    for (i = 0; i < n; i++)
      if (pp_compare_plan(x, i)) {
        pp_plan_params q;
        pp_plan_get_params(pp_compare_plan(x, i), &q);
        fprintf(f, "precision %s, engine %s\n",
                q.precision == PP_PREC_MODEL ? "the model's dtype"
                                             : pp_precision_name(q.precision),
                pp_engine_name(q.engine));
        break;
      }
    fputs("method        devices  pp  dp  tp  mbs  schedule   recomp  zero  "
          "estimate ms  simulated ms  fits  ours faster  evaluations  "
          "seconds\n",
          f);
    for (i = 0; i < n; i++) {
      pp_compare_row_get(x, i, &r);
      if (!r.found) {
        if (r.simulated_ms > 0) /* the lower bound */
          fprintf(f, "%-12s  %74.2f\n", r.method, r.simulated_ms);
        else
          fprintf(f, "%-12s  no plan\n", r.method);
        continue;
      }
      {
        pp_plan_params q;
        pp_plan_params_init(&q);
        if (pp_compare_plan(x, i))
          pp_plan_get_params(pp_compare_plan(x, i), &q);
        fprintf(f,
                "%-12s  %7d %3d %3d %3d %4d  %-9s  %-6s  %4d  %11.2f  %12.2f  "
                "%-4s  %10.2fx  %11lld  %7.3f\n",
                r.method, (int)r.devices, (int)r.pp, (int)r.dp, (int)r.tp,
                (int)r.micro_batch, pp_schedule_name(r.schedule),
                r.recompute ? "yes" : "no", (int)q.zero, r.estimate_ms,
                r.simulated_ms, r.fits ? "yes" : "NO", r.speedup,
                (long long)r.evaluations, r.seconds);
      }
    }
    for (i = 0; i < n; i++) {
      pp_compare_row_get(x, i, &r);
      fprintf(f, "%s%s: %s", i ? "" : "\n", r.method, r.about ? r.about : "");
      if (r.own_ms > 0)
        fprintf(f, " (its own prediction: %.2f ms)", r.own_ms);
      fputc('\n', f);
    }
  }
  return ferror(f)
             ? (ctx ? ppi_fail(ctx, PP_EIO, "compare: write error") : PP_EIO)
             : PP_OK;
}
