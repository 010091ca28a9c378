/* SPDX-License-Identifier: MIT */
/*
** report PLAN: one self-contained HTML page on a plan (and, on request,
** its Gantt chart as an image).
*/
#include "commands.h"

#include <stdio.h>

struct report_opts {
  struct cli_common c;
  pp_report_params rp;
};

#define REPORT(f) CLI_FIELD(struct report_opts, f)

static const struct cli_opt report_opts[] = {
    {"-o", CLI_STRING, REPORT(c.out),
     .help = "-o FILE       the HTML page to write (required)"},
    {"--no-baselines", CLI_FLAG, REPORT(rp.baselines), .value = 0,
     .help = "--no-baselines  leave out the comparison with the baselines"},
    {"--time-limit", CLI_DOUBLE, REPORT(rp.time_limit_s), 1e-3, 1e6,
     .help = "--time-limit S  the baselines' search (default 10)"},
    {"--threads", CLI_INT, REPORT(rp.threads), 1, 16,
     .help = "--threads N   the baselines' search (default 2)"},
    {NULL}};

static void init_report(void *opts)
{
  struct report_opts *o = opts;
  pp_report_params_init(&o->rp);
}

static int run_report(pp_ctx *ctx, void *opts)
{
  const struct report_opts *o = opts;
  const char *image = o->c.gantt_image;
  struct plan_inputs in;
  pp_status rc;
  int ret;

  if (!o->c.out)
    return cli_usage("report", "report needs -o report.html");
  if (o->c.cost.kind != PP_COST_PARPLAN)
    return cli_usage("report", "the report uses parplan's cost model");
  if ((ret = load_plan(ctx, "report", &o->c, &in)))
    return ret;
  rc = pp_report_write(ctx, in.p, in.m, in.c, &o->c.cost, &o->rp, o->c.out,
                       NULL);
  if (rc == PP_OK && image) {
    pp_sim *s = NULL;
    pp_cost_params cp = o->c.cost;
    cp.record = 1;
    if ((rc = pp_simulate(ctx, in.p, in.m, in.c, &cp, &s)) == PP_OK)
      rc = pp_gantt_write(ctx, s, in.c, image_format(image), image, NULL);
    pp_sim_destroy(s);
  }
  if (rc == PP_OK)
    printf("wrote %s%s%s\n", o->c.out, image ? " and " : "",
           image ? image : "");
  ret = rc ? cli_fail(ctx, rc) : 0;
  free_plan(&in);
  return ret;
}

static const struct cli_opt *const report_tables[] = {model_opts,
                                                      cluster_opts,
                                                      report_opts,
                                                      run_opts,
                                                      gantt_image_opts,
                                                      cost_model_opts,
                                                      allreduce_opts,
                                                      reserve_opts,
                                                      calib_opts,
                                                      network_opts,
                                                      NULL};

const struct cli_cmd cmd_report = {
    "report",
    "PLAN",
    "report PLAN --model M --cluster C -o report.html\n"
    "       [--gantt-image gantt.svg|gantt.png] [--no-baselines]\n"
    "             one self-contained HTML page: topology with the\n"
    "             mapping, Gantt chart, memory per device, time\n"
    "             breakdown, the baselines (--time-limit S, default 10)",
    report_tables,
    sizeof(struct report_opts),
    init_report,
    run_report};
