/* SPDX-License-Identifier: MIT */
/*
** What the command files (cmd_*.c) share: the commands themselves, for
** main's command table; the option tables that several commands take
** (common.c); the tables the tool's --help lists; and the helpers that
** load a command's inputs.
*/
#ifndef PARPLAN_COMMANDS_H
#define PARPLAN_COMMANDS_H

#include "cli.h"

#define DEFAULT_MODEL "gpt2-amp"
#define DEFAULT_CLUSTER "amp-het-cluster"
#define DEFAULT_BATCH 32 /* AMP's GPT-2 experiments (data/amp) */
/* The engine plan and compare plan for unless --engine says:
** torch.distributed (pipelining with DDP or FSDP2), the one that runs
** every model (docs/PLANNER.md, "Run settings"). */
#define DEFAULT_ENGINE PP_ENGINE_TORCH
/* --zero auto: the value of struct cli_common's zero. */
#define ZERO_AUTO 4

extern const struct cli_cmd cmd_plan, cmd_compare, cmd_default, cmd_describe,
    cmd_model, cmd_topo, cmd_evaluate, cmd_simulate, cmd_export, cmd_report,
    cmd_partition, cmd_map, cmd_calibrate;

/* Warn on stderr about each device type of c (or of the devices a plan
** uses, when p is given) that the calibration has no entry for under the
** engine and precision (its defaults apply there). */
void warn_uncalibrated(const struct cli_common *o, const pp_cluster *c,
                       const pp_plan *p, pp_engine engine,
                       pp_precision precision);

/* Shared by several commands; they set struct cli_common's fields. */
extern const struct cli_opt model_opts[], cluster_opts[], json_opts[],
    out_opts[], seed_opts[], help_opts[], cost_model_opts[], allreduce_opts[],
    reserve_opts[], network_opts[], gantt_image_opts[], optimizer_opts[],
    run_opts[], calib_opts[];

/* One command's, listed in the tool's --help. */
extern const struct cli_opt chain_opts[], sim_opts[], part_opts[],
    part_objective_opts[], part_dag_opts[], search_opts[];

/* pp_schedule_name by index, for the --schedule of partition and plan. */
const char *schedule_at(int i);

/* Set up the struct cli_common that opts begins with (main does, for
** every command). */
void common_init(void *opts);

/* The precision --precision names by index (fp32, fp16, bf16). */
pp_precision precision_at_index(int i);

/* What the commands that take a PLAN (o->arg) work on. */
struct plan_inputs {
  pp_model *m;
  pp_cluster *c;
  pp_plan *p;
};
/* 0, or the exit status of the error it reported, leaving nothing to
** free. */
int load_plan(pp_ctx *ctx, const char *cmd, const struct cli_common *o,
              struct plan_inputs *in);
void free_plan(struct plan_inputs *in);

/* .png: PNG, anything else SVG. */
pp_image_format image_format(const char *path);

#endif
