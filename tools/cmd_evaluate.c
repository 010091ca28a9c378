/* SPDX-License-Identifier: MIT */
/*
** The commands that price a plan file: evaluate (the analytic estimate)
** and simulate (one iteration in the discrete-event simulator).
*/
#include "commands.h"

#include <stdio.h>

struct sim_opts {
  struct cli_common c;
  const char *trace;
  int gantt;
};

#define SIM(f) CLI_FIELD(struct sim_opts, f)

const struct cli_opt sim_opts[] = {
    {"--trace", CLI_STRING, SIM(trace),
     .help = "--trace FILE  (simulate) write a Chrome trace (opens in "
             "Perfetto)"},
    {"--gantt", CLI_INT, SIM(gantt), 0, 10000,
     .help = "--gantt COLS  (simulate) text Gantt chart width; 0 = none "
             "(default\n"
             "              100, shown for plans of up to 64 devices)"},
    {NULL}};

static int run_evaluate(pp_ctx *ctx, void *opts)
{
  const struct cli_common *o = opts;
  struct plan_inputs in;
  pp_eval *e = NULL;
  pp_eval_summary s = {0};
  pp_status rc;
  int ret;

  if ((ret = load_plan(ctx, "evaluate", o, &in)))
    return ret;
  rc = pp_evaluate(ctx, in.p, in.m, in.c, &o->cost, &e);
  if (rc == PP_OK)
    rc = pp_eval_write(ctx, e, o->json, stdout);
  if (rc == PP_OK && o->out)
    rc = pp_plan_write(ctx, in.p, o->out, NULL);
  if (rc == PP_OK)
    rc = pp_eval_get_summary(e, &s);
  ret = rc ? cli_fail(ctx, rc) : s.fits ? 0 : 3;
  pp_eval_destroy(e);
  free_plan(&in);
  return ret;
}

static void init_simulate(void *opts)
{
  struct sim_opts *o = opts;
  o->gantt = 100;
}

static int run_simulate(pp_ctx *ctx, void *opts)
{
  const struct sim_opts *o = opts;
  const char *image = o->c.gantt_image;
  struct plan_inputs in;
  pp_sim *s = NULL;
  pp_sim_summary sum = {0};
  pp_cost_params cp = o->c.cost;
  pp_status rc;
  int ret;

  if (cp.kind != PP_COST_PARPLAN)
    return cli_usage("simulate", "the simulator uses parplan's cost model; "
                                 "--cost-model amp is for evaluate");
  if ((ret = load_plan(ctx, "simulate", &o->c, &in)))
    return ret;
  cp.record = 1;
  rc = pp_simulate(ctx, in.p, in.m, in.c, &cp, &s);
  if (rc == PP_OK)
    rc = pp_sim_write(ctx, s, o->c.json, o->c.json ? 0 : o->gantt, stdout);
  if (rc == PP_OK && o->trace)
    rc = pp_sim_write_trace(ctx, s, o->trace, NULL);
  if (rc == PP_OK && image)
    rc = pp_gantt_write(ctx, s, in.c, image_format(image), image, NULL);
  if (rc == PP_OK && o->c.out)
    rc = pp_plan_write(ctx, in.p, o->c.out, NULL);
  if (rc == PP_OK)
    rc = pp_sim_get_summary(s, &sum);
  ret = rc ? cli_fail(ctx, rc) : sum.fits ? 0 : 3;
  pp_sim_destroy(s);
  free_plan(&in);
  return ret;
}

static const struct cli_opt *const evaluate_tables[] = {
    model_opts,   cluster_opts, run_opts,  cost_model_opts, allreduce_opts,
    reserve_opts, calib_opts,   json_opts, out_opts,        NULL};
static const struct cli_opt *const simulate_tables[] = {
    model_opts,   cluster_opts, run_opts,     cost_model_opts, allreduce_opts,
    reserve_opts, calib_opts,   network_opts, sim_opts,        gantt_image_opts,
    json_opts,    out_opts,     NULL};

const struct cli_cmd cmd_evaluate = {
    "evaluate",
    "PLAN",
    "evaluate PLAN --model M --cluster C\n"
    "             price a plan JSON analytically: iteration time and its\n"
    "             breakdown, lower bound, memory of every device",
    evaluate_tables,
    sizeof(struct cli_common),
    NULL,
    run_evaluate};

const struct cli_cmd cmd_simulate = {
    "simulate",
    "PLAN",
    "simulate PLAN --model M --cluster C [--trace out.json]\n"
    "             run one iteration in the discrete-event simulator",
    simulate_tables,
    sizeof(struct sim_opts),
    init_simulate,
    run_simulate};
