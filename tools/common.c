/* SPDX-License-Identifier: MIT */
/*
** The options several commands take, written once: each sets a field of
** struct cli_common, the head of every command's options.  And the
** helpers that load what the plan commands (evaluate, simulate, export,
** report) work on.
*/
#include "commands.h"

#include <stdio.h>
#include <string.h>

#define COMMON(f) CLI_FIELD(struct cli_common, f)

/* The library's name functions, called with an index. */
static const char *cost_kind_at(int i)
{
  return pp_cost_kind_name((pp_cost_kind)i);
}

static const char *allreduce_at(int i)
{
  return pp_allreduce_name((pp_allreduce)i);
}

static const char *network_at(int i)
{
  return pp_sim_network_name((pp_sim_network)i);
}

static const char *optimizer_at(int i)
{
  return pp_optimizer_name((pp_optimizer)i);
}

/* The precisions a run names: the library's, less "model" (the plan's
** default, never given). */
static const char *precision_at(int i)
{
  return i >= 0 ? pp_precision_name((pp_precision)(i + 1)) : NULL;
}

pp_precision precision_at_index(int i)
{
  return (pp_precision)(i + 1);
}

static const char *engine_at(int i)
{
  return pp_engine_name((pp_engine)i);
}

static const char *zero_at(int i)
{
  static const char *const names[] = {"0", "1", "2", "3", "auto"};
  return i >= 0 && i <= ZERO_AUTO ? names[i] : NULL;
}

const char *schedule_at(int i)
{
  return pp_schedule_name((pp_schedule)i);
}

const struct cli_opt model_opts[] = {
    {"--model", CLI_STRING, COMMON(model),
     .help = "--model M     the model: a file, a built-in name or a generator "
             "spec\n"
             "              (as for parplan model SPEC)"},
    {NULL}};

const struct cli_opt cluster_opts[] = {
    {"--cluster", CLI_STRING, COMMON(cluster),
     .help = "--cluster C   the cluster: a file, a built-in name or a "
             "generator spec\n"
             "              (as for parplan topo SPEC)"},
    {NULL}};

const struct cli_opt json_opts[] = {
    {"--json", CLI_FLAG, COMMON(json), .value = 1,
     .help = "--json        print the description or the result as JSON"},
    {NULL}};

const struct cli_opt out_opts[] = {
    {"-o", CLI_STRING, COMMON(out),
     .help = "-o FILE       also write the normalized model, cluster or plan "
             "JSON"},
    {NULL}};

const struct cli_opt seed_opts[] = {
    {"--seed", CLI_SEED, COMMON(seed),
     .help = "--seed N      seed of random generators (default 1)"},
    {"--max-memory", CLI_DOUBLE, COMMON(max_memory_gib), 1e-3, 1e6,
     .help = "--max-memory GB  stop with an error, or fall back, before "
             "the library holds more (default: no limit)"},
    {NULL}};

const struct cli_opt help_opts[] = {
    {"--help", CLI_HELP,
     .help = "-h, --help    this text;  --version  the version"},
    {"-h", CLI_HELP, .help = NULL /* in --help's entry */},
    {"--version", CLI_VERSION, .help = NULL /* in --help's entry */},
    {NULL}};

const struct cli_opt cost_model_opts[] = {
    {"--cost-model", CLI_ENUM, COMMON(cost.kind), .names = cost_kind_at,
     .help = "--cost-model parplan|amp   (evaluate) AMP's conventions "
             "reproduce its\n"
             "              predictions (data/amp/COST_MODEL.md); default "
             "parplan"},
    {NULL}};

const struct cli_opt allreduce_opts[] = {
    {"--allreduce", CLI_ENUM, COMMON(cost.allreduce), .names = allreduce_at,
     .help = "--allreduce auto|ring|hier gradient allreduce (default auto: "
             "faster)"},
    {NULL}};

const struct cli_opt reserve_opts[] = {
    {"--reserve-gb", CLI_GIB, COMMON(cost.reserve_bytes), 0, 1e6,
     .help = "--reserve-gb X  memory reserved on every device (default 0)"},
    {NULL}};

const struct cli_opt calib_opts[] = {
    {"--calibration", CLI_STRING, COMMON(calibration),
     .help = "--calibration FILE   price with a calibration (parplan "
             "calibrate): each\n"
             "              device type's runtime memory, slack, compute "
             "scale and\n"
             "              cost per micro-batch, as its runs measured "
             "them"},
    {NULL}};

const struct cli_opt network_opts[] = {
    {"--network", CLI_ENUM, COMMON(cost.network), .names = network_at,
     .help = "--network channels|links   (simulate) a channel per device "
             "pair, or\n"
             "              transfers sharing physical links share them"},
    {NULL}};

const struct cli_opt gantt_image_opts[] = {
    {"--gantt-image", CLI_STRING, COMMON(gantt_image),
     .help = "--gantt-image FILE  (simulate, report) the Gantt chart as SVG, "
             "or\n"
             "              PNG when FILE ends in .png (cairo)"},
    {NULL}};

const struct cli_opt optimizer_opts[] = {
    {"--optimizer", CLI_ENUM, COMMON(optimizer), .names = optimizer_at,
     .help = "--optimizer sgd|adam|adam-mixed|2bw   (default adam-mixed)"},
    {NULL}};

const struct cli_opt run_opts[] = {
    {"--precision", CLI_ENUM, COMMON(precision), .names = precision_at,
     .help = "--precision fp32|fp16|bf16   the run's precision (plan, "
             "compare: default\n"
             "              the model's dtype)"},
    {"--engine", CLI_ENUM, COMMON(engine), .names = engine_at,
     .help = "--engine generic|deepspeed|megatron|torch   the engine that "
             "runs the\n"
             "              plan (plan, compare: default torch)"},
    {"--zero", CLI_ENUM, COMMON(zero), .names = zero_at,
     .help = "--zero 0|1|2|3|auto   ZeRO stage (plan, compare: default "
             "auto: the\n"
             "              best the engine runs at each pipeline depth; "
             "plan and\n"
             "              compare only)"},
    {NULL}};

void common_init(void *opts)
{
  struct cli_common *c = opts;
  c->seed = 1;
  c->optimizer = -1;
  c->precision = c->engine = c->zero = -1;
  pp_cost_params_init(&c->cost);
}

/* The plan *p with the settings --precision, --engine and --zero give
** in place of its own (a new plan through the builder: plans are
** immutable); untouched when none is given. */
static pp_status override_plan(pp_ctx *ctx, const struct cli_common *o,
                               pp_plan **p)
{
  pp_plan_params pp;
  pp_plan_builder *b = NULL;
  pp_plan *q = NULL;
  int32_t s, r, S = pp_plan_nstage(*p);
  pp_status rc;
  if (o->precision < 0 && o->engine < 0 && o->zero < 0)
    return PP_OK;
  pp_plan_get_params(*p, &pp);
  if (o->precision >= 0)
    pp.precision = precision_at_index(o->precision);
  if (o->engine >= 0)
    pp.engine = (pp_engine)o->engine;
  if (o->zero >= 0)
    pp.zero = o->zero;
  if ((rc = pp_plan_builder_create(ctx, &pp, pp_plan_source(*p), &b)))
    return rc;
  for (s = 0; s < S && !rc; s++) {
    int32_t n, id;
    double sig[4];
    const int32_t *ops = pp_plan_stage_ops(*p, s, &n);
    rc = pp_plan_builder_add_stage(b, ops, n, &id);
    for (r = 0; r < pp_plan_nreplica(*p, s) && !rc; r++)
      rc = pp_plan_builder_add_replica(b, id, pp_plan_replica(*p, s, r));
    if (!rc && pp_plan_stage_in_flight(*p, s) > 0)
      rc = pp_plan_builder_set_in_flight(b, id, pp_plan_stage_in_flight(*p, s));
    if (!rc && pp_plan_stage_pattern(*p, s, sig))
      rc = pp_plan_builder_set_pattern(b, id, sig);
  }
  if (rc) {
    pp_plan_builder_destroy(b);
    return rc;
  }
  if ((rc = pp_plan_builder_finish(b, &q)))
    return rc;
  pp_plan_destroy(*p);
  *p = q;
  return PP_OK;
}

void warn_uncalibrated(const struct cli_common *o, const pp_cluster *c,
                       const pp_plan *p, pp_engine engine,
                       pp_precision precision)
{
  int32_t t, s, r, k, nt = pp_cluster_ntype(c);
  if (!o->cost.calibration)
    return;
  for (t = 0; t < nt; t++) {
    pp_device_type_desc td;
    int used = !p;
    for (s = 0; p && s < pp_plan_nstage(p) && !used; s++)
      for (r = 0; r < pp_plan_nreplica(p, s) && !used; r++) {
        const int32_t *dv = pp_plan_replica(p, s, r);
        pp_plan_params pa;
        pp_plan_get_params(p, &pa);
        for (k = 0; k < pa.tp; k++)
          used |= pp_cluster_device_type(c, dv[k]) == t;
      }
    if (!used || pp_cluster_type(c, t, &td) != PP_OK)
      continue;
    if (!pp_calibration_find(o->cost.calibration, td.name, engine, precision))
      fprintf(stderr,
              "parplan: warning: %s has no calibration for %s under %s, %s; "
              "the defaults apply there\n",
              o->calibration, td.name, pp_engine_name(engine),
              pp_precision_name(precision));
  }
}

int load_plan(pp_ctx *ctx, const char *cmd, const struct cli_common *o,
              struct plan_inputs *in)
{
  pp_status rc;
  memset(in, 0, sizeof *in);
  if (!o->arg)
    return cli_usage(cmd, "%s needs a PLAN file", cmd);
  if (!o->model || !o->cluster)
    return cli_usage(cmd, "%s needs --model M and --cluster C", cmd);
  if (o->zero == ZERO_AUTO)
    return cli_usage(cmd,
                     "--zero auto is for plan and compare; %s takes "
                     "0, 1, 2 or 3",
                     cmd);
  if ((rc = pp_model_load(ctx, o->model, &in->m)) ||
      (rc = pp_cluster_load(ctx, o->cluster, &in->c)) ||
      (rc = pp_plan_load(ctx, o->arg, in->m, in->c, &in->p)) ||
      (rc = override_plan(ctx, o, &in->p))) {
    free_plan(in);
    return cli_fail(ctx, rc);
  }
  {
    pp_plan_params pa;
    pp_plan_get_params(in->p, &pa);
    warn_uncalibrated(o, in->c, in->p, pa.engine,
                      pa.precision == PP_PREC_MODEL ? pp_model_dtype(in->m)
                                                    : pa.precision);
  }
  return 0;
}

void free_plan(struct plan_inputs *in)
{
  pp_plan_destroy(in->p);
  pp_cluster_destroy(in->c);
  pp_model_destroy(in->m);
  memset(in, 0, sizeof *in);
}

pp_image_format image_format(const char *path)
{
  size_t n = strlen(path);
  return n >= 4 && !strcmp(path + n - 4, ".png") ? PP_IMAGE_PNG : PP_IMAGE_SVG;
}
