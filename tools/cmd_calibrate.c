/* SPDX-License-Identifier: MIT */
/*
** calibrate RUNS.json: fit the cost model to measured runs
** (docs/COST_MODEL.md, "Calibration"; the file, docs/FORMATS.md "Runs")
** and write the calibration that --calibration applies.
*/
#include "commands.h"

#include <math.h>
#include <stdio.h>

static void print_entry(const pp_calib_entry *e)
{
  printf("%s under %s, %s:\n", e->type, pp_engine_name(e->engine),
         pp_precision_name(e->precision));
  if (e->time_runs) {
    printf("  time     from %d runs: compute x %.3f +- %.3f, %.2f +- %.2f ms "
           "per micro-batch\n"
           "           and stage replica; residuals %.1f%% (relative spread)\n",
           (int)e->time_runs, e->compute_scale, e->compute_sd, e->step_ms,
           e->step_sd, 100 * e->time_rel_sd);
    if (!isnan(e->mbs_exponent))
      printf("           compute x (micro-batch / reference)^%.3f +- %.3f\n",
             e->mbs_exponent, e->mbs_sd);
    if (!isnan(e->tp_exponent))
      printf("           compute x (tensor-parallel degree)^%.3f +- %.3f\n",
             e->tp_exponent, e->tp_sd);
  } else
    printf("  time     no finished run measured it: the defaults apply\n");
  if (!isnan(e->net_scale))
    printf("  links    bandwidth across nodes x %.3f +- %.3f%s\n", e->net_scale,
           e->net_sd, e->link_runs ? " (with nccl-tests)" : "");
  if (!isnan(e->intra_scale))
    printf("  links    bandwidth inside a node x %.3f +- %.3f%s\n",
           e->intra_scale, e->intra_sd,
           e->link_runs ? " (with nccl-tests)" : "");
  if (e->memory_runs)
    printf("  memory   from %d runs: runtime %.2f +- %.2f GiB, allocator "
           "slack %.3f +- %.3f\n"
           "           of the live peak; residuals %.1f%%\n",
           (int)e->memory_runs, e->runtime_bytes / 1073741824.0,
           e->runtime_sd / 1073741824.0, e->slack, e->slack_sd,
           100 * e->memory_rel_sd);
  else
    printf("  memory   no run measured it: the defaults apply\n");
}

static int run_calibrate(pp_ctx *ctx, void *opts)
{
  const struct cli_common *o = opts;
  pp_runs *runs = NULL;
  pp_calibration *cal = NULL;
  pp_calibrate_params cp;
  const pp_run_record *rec;
  int32_t i, n, skipped = 0;
  pp_status rc;
  int ret = 0;
  if (!o->arg)
    return cli_usage("calibrate", "calibrate needs a RUNS.json file");
  pp_calibrate_params_init(&cp);
  cp.cost.allreduce = o->cost.allreduce;
  cp.cost.reserve_bytes = o->cost.reserve_bytes;
  if ((rc = pp_runs_load(ctx, o->arg, &runs)) ||
      (rc = pp_calibrate(ctx, pp_runs_records(runs), pp_runs_count(runs), &cp,
                         &cal))) {
    ret = cli_fail(ctx, rc);
    goto done;
  }
  n = pp_runs_count(runs);
  rec = pp_runs_records(runs);
  if (o->json) {
    if ((rc = pp_calibration_write(ctx, cal, NULL, stdout)))
      ret = cli_fail(ctx, rc);
  } else {
    printf("calibration from %s: %d runs\n", o->arg, (int)n);
    for (i = 0; i < pp_calibration_count(cal); i++) {
      pp_calib_entry e;
      pp_calibration_get(cal, i, &e);
      print_entry(&e);
    }
    for (i = 0; i < n; i++)
      if (rec[i].failed)
        skipped++;
    if (skipped)
      printf("%d failed runs (not fitted; a failed run tells only that "
             "the plan did not run)\n",
             (int)skipped);
    if (!pp_calibration_count(cal))
      printf("nothing fitted: no run measured anything on devices of one "
             "type\n");
  }
  if (!ret && o->out && (rc = pp_calibration_write(ctx, cal, o->out, NULL)))
    ret = cli_fail(ctx, rc);
done:
  pp_calibration_destroy(cal);
  pp_runs_destroy(runs);
  return ret;
}

static const struct cli_opt *const calibrate_tables[] = {
    allreduce_opts, reserve_opts, json_opts, out_opts, NULL};

const struct cli_cmd cmd_calibrate = {
    "calibrate",
    "RUNS",
    "calibrate RUNS.json [-o calib.json]\n"
    "             fit the cost model to measured runs (time, nvidia-smi\n"
    "             peak) per device type, engine and precision; apply\n"
    "             with --calibration",
    calibrate_tables,
    sizeof(struct cli_common),
    NULL,
    run_calibrate};
