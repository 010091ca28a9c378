/* SPDX-License-Identifier: MIT */
/*
** parplan: the command-line tool.  It uses only include/parplan.h, owns
** argument parsing, exit codes and everything printed to the terminal.
** This file holds main, the command table and the layout of parplan
** --help; each command is in a cmd_*.c file, the parser in cli.c.
**
** Exit status (docs/DESIGN.md, "Exit status"): 0 success; 1 bad input or
** usage; 2 internal error (including running out of memory); 3 "nothing
** fits" (a result, used by the planner commands).
*/
#include "commands.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct cli_cmd *const commands[] = {
    &cmd_plan,     &cmd_compare,   &cmd_describe, &cmd_model,  &cmd_topo,
    &cmd_evaluate, &cmd_simulate,  &cmd_export,   &cmd_report, &cmd_partition,
    &cmd_map,      &cmd_calibrate, NULL};

/* Every command takes these. */
static const struct cli_opt *const common[] = {seed_opts, help_opts, NULL};

/* parplan --help lists, after the commands, the options by where they
** apply. */
static const struct cli_section sections[] = {
    {"options:", json_opts},
    {NULL, out_opts},
    {NULL, chain_opts},
    {NULL, seed_opts},
    {NULL, cost_model_opts},
    {NULL, allreduce_opts},
    {NULL, reserve_opts},
    {NULL, calib_opts},
    {NULL, network_opts},
    {NULL, sim_opts},
    {NULL, gantt_image_opts},
    {"partition options:", part_opts},
    {NULL, optimizer_opts},
    {NULL, part_objective_opts},
    {"operator DAGs (minmax, flat network): clustering, the DP over fronted\n"
     "subgraphs, refinement (docs/PARTITION.md):",
     part_dag_opts},
    {"plan options:", search_opts},
    {"run settings (plan, compare; as overrides of the plan file's: "
     "evaluate,\nsimulate, report, export):",
     run_opts},
    {"  --optimizer   as for partition; --reserve-gb, --allreduce   as for\n"
     "                evaluate",
     help_opts},
    {NULL, NULL}};

static const struct cli_tool tool = {
    "usage: parplan [COMMAND] [OPTIONS]\n"
    "\n"
    "With no command, plan the built-in default: the model " DEFAULT_MODEL
    " on the\ncluster " DEFAULT_CLUSTER ", global batch 32 (parplan plan).\n"
    "\n"
    "commands:\n",
    "\n"
    "exit status: 0 success, 1 bad input or usage, 2 internal error,\n"
    "3 the plan does not fit in memory (evaluate, simulate, partition), or\n"
    "no plan fits (plan).\n"
    "Formats and generators: docs/FORMATS.md.\n"
    "Your own PyTorch model: python -m parplan profile FILE.py:FACTORY\n"
    "--input-shape ... -o model.json measures it (docs/PROFILE.md); the\n"
    "Python package calls the planner (docs/PYTHON.md).\n",
    commands,
    &cmd_default,
    common,
    sections};

/* What was printed must have arrived: a full disk or /dev/full under
** stdout is a failure, not a truncated report with status 0. */
static int flushed(int ret)
{
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "parplan: writing the standard output failed: %s\n",
            strerror(errno));
    return ret ? ret : 1;
  }
  return ret;
}

int main(int argc, char **argv)
{
  const struct cli_cmd *cmd;
  struct cli_common *o;
  pp_ctx_params cp;
  pp_ctx *ctx;
  pp_status rc;
  int at, ret;

  cli_clock_start();
  if ((ret = cli_command(&tool, argc, argv, &cmd, &at)) != CLI_RUN)
    return flushed(ret);
  if (!(o = calloc(1, cmd->size)))
    return cli_fail(NULL, PP_ENOMEM);
  common_init(o);
  if (cmd->init)
    cmd->init(o);
  if ((ret = cli_parse(&tool, cmd, at, argc, argv, o)) == CLI_RUN) {
    pp_ctx_params_init(&cp);
    cp.seed = o->seed;
    cli_memory_guard(&cp, o->max_memory_gib);
    if ((rc = pp_ctx_create(&cp, &ctx)))
      ret = cli_fail(NULL, rc);
    else {
      pp_calibration *cal = NULL;
      /* --calibration: loaded once, for every command that prices */
      if (o->calibration &&
          (rc = pp_calibration_load(ctx, o->calibration, &cal)))
        ret = cli_fail(ctx, rc);
      else {
        o->cost.calibration = cal;
        ret = cmd->run(ctx, o);
      }
      pp_calibration_destroy(cal);
      pp_ctx_destroy(ctx);
    }
  }
  free(o);
  return flushed(ret);
}
