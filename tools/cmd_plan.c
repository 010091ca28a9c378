/* SPDX-License-Identifier: MIT */
/*
** The planner's commands: plan (the best plans), compare (ours next to
** the baselines') and the tool run with no command, which plans the
** built-in default.  They take the same search options.
*/
#include "commands.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct plan_opts {
  struct cli_common c;
  pp_search_params sp;
  int schedule;  /* -1: try all */
  int recompute; /* an index of recompute_at */
  const char *trace;
};

#define PLAN(f) CLI_FIELD(struct plan_opts, f)

static const char *recompute_at(int i)
{
  static const char *const names[] = {"on", "off", "both"};
  return i >= 0 && i < 3 ? names[i] : NULL;
}

const struct cli_opt search_opts[] = {
    {"--batch", CLI_INT, PLAN(sp.global_batch), 1, 0x1p40,
     .help = "--batch GBS   global batch in samples (required but for the "
             "default)"},
    {"--top", CLI_INT, PLAN(sp.top_k), 1, 1000,
     .help = "--top K       plans kept, simulated and listed (default 5)"},
    {"--time-limit", CLI_DOUBLE, PLAN(sp.time_limit_s), 1e-3, 1e6,
     .help = "--time-limit S  the whole search (default 60)"},
    {"--threads", CLI_INT, PLAN(sp.threads), 1, 16,
     .help = "--threads N   (default 2)"},
    {"--schedule", CLI_ENUM, PLAN(schedule), .names = schedule_at,
     .help = "--schedule gpipe|1f1b|1f1b-star   try only this schedule"},
    {"--recompute", CLI_ENUM, PLAN(recompute), .names = recompute_at,
     .help = "--recompute on|off|both   (default both)"},
    {"--max-tp", CLI_INT, PLAN(sp.max_tp), 1, 1024,
     .help = "--max-tp N, --max-micro-batch N   bound the search"},
    {"--max-micro-batch", CLI_INT, PLAN(sp.max_micro_batch), 1, 1 << 30,
     .help = NULL /* in --max-tp's entry */},
    {"--uniform-tp", CLI_FLAG, PLAN(sp.uniform_tp), .value = 1,
     .help = "--uniform-tp  one tp degree per plan (else each device type's "
             "stages\n"
             "              may take their own on a mixed cluster)"},
    {"--all-devices", CLI_FLAG, PLAN(sp.subsets), .value = 0,
     .help = "--all-devices use every device (no idle subsets)"},
    {"--map-time", CLI_DOUBLE, PLAN(sp.map_time_s), 0, 1e6,
     .help = "--map-time S  exact mapping per kept plan (default 1; 0: off)"},
    {"--map-nodes", CLI_INT, PLAN(sp.map_nodes), 0, 1e12,
     .help = "--map-nodes N  the exact mapping's budget of search nodes per "
             "kept plan, the same placement on every machine (default "
             "20000; 0: --map-time alone)"},
    {"--madpipe", CLI_INT, PLAN(sp.madpipe), 0, 1000,
     .help = "--madpipe N   MadPipe where memory binds (1f1b-star, one device "
             "type)\n"
             "              until N plans fit (default 4; 0: off)"},
    {"--no-simulate", CLI_FLAG, PLAN(sp.simulate), .value = 0,
     .help = "--no-simulate rank by the estimate only"},
    {"--memory-margin", CLI_DOUBLE, PLAN(sp.memory_margin), 0, 0.99,
     .help = "--memory-margin F  fraction of every device's memory a plan "
             "leaves\n"
             "              free (default 0.05)"},
    {NULL}};

static const struct cli_opt trace_opts[] = {
    {"--trace", CLI_STRING, PLAN(trace),
     .help = "--trace FILE  the best plan's simulated iteration as a Chrome "
             "trace"},
    {NULL}};

static void init_plan(void *opts)
{
  struct plan_opts *o = opts;
  pp_search_params_init(&o->sp);
  o->schedule = -1;
  o->recompute = 2;
}

/* A progress bar on stderr, only when it is a terminal. */
static int progress_bar(void *ud, double done)
{
  int i, n = (int)(done * 40 + 0.5);
  (void)ud;
  fputs("\rplanning [", stderr);
  for (i = 0; i < 40; i++)
    fputc(i < n ? '#' : ' ', stderr);
  fprintf(stderr, "] %3d%%", (int)(done * 100 + 0.5));
  if (done >= 1) /* "planning [" + 40 + "] 100%" */
    fprintf(stderr, "\r%*s\r", 10 + 40 + 6, "");
  fflush(stderr);
  return 0;
}

/* The search's parameters from the options. */
static pp_search_params search_params(const struct plan_opts *o)
{
  static const int recompute[] = {1, 0, -1}; /* recompute_at's order */
  pp_search_params sp = o->sp;
  if (o->schedule >= 0)
    sp.schedules = 1u << o->schedule;
  if (o->c.optimizer >= 0)
    sp.optimizer = (pp_optimizer)o->c.optimizer;
  sp.recompute = recompute[o->recompute];
  sp.precision =
      o->c.precision >= 0 ? precision_at_index(o->c.precision) : PP_PREC_MODEL;
  sp.engine = o->c.engine >= 0 ? (pp_engine)o->c.engine : DEFAULT_ENGINE;
  /* unless --zero says: every stage the engine runs */
  sp.zero = o->c.zero >= 0 && o->c.zero != ZERO_AUTO ? o->c.zero : -1;
  sp.reserve_bytes = o->c.cost.reserve_bytes;
  sp.allreduce = o->c.cost.allreduce;
  sp.calibration = o->c.cost.calibration;
  if (isatty(2))
    sp.progress = progress_bar;
  return sp;
}

/* What the options do not give is the built-in default's. */
static void use_default(struct plan_opts *o)
{
  if (!o->c.model)
    o->c.model = DEFAULT_MODEL;
  if (!o->c.cluster)
    o->c.cluster = DEFAULT_CLUSTER;
  if (!o->sp.global_batch)
    o->sp.global_batch = DEFAULT_BATCH;
}

/* Whether the folder path would be written in exists (a NULL path: yes);
** says so when not. */
static bool dir_of_exists(const char *path)
{
  char dir[4096];
  const char *slash;
  struct stat st;
  size_t n;
  if (!path || !(slash = strrchr(path, '/')))
    return true;
  n = (size_t)(slash - path);
  if (n == 0)
    return true; /* the root */
  if (n >= sizeof dir)
    n = sizeof dir - 1;
  memcpy(dir, path, n);
  dir[n] = '\0';
  if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
    return true;
  fprintf(stderr, "parplan: %s: cannot write: %s is not a folder\n", path, dir);
  return false;
}

static int plan(pp_ctx *ctx, const struct plan_opts *o)
{
  pp_model *m = NULL;
  pp_cluster *c = NULL;
  pp_search *sr = NULL;
  pp_search_params sp = search_params(o);
  pp_search_summary sum;
  pp_status rc;
  int ret = 0, sig;
  if (!o->c.model || !o->c.cluster || !sp.global_batch)
    return cli_usage("plan", "plan needs --model M --cluster C --batch GBS");
  /* both outputs or neither: a folder that is not there fails now, before
  ** the search and before -o is written */
  if (!dir_of_exists(o->c.out) || !dir_of_exists(o->trace))
    return 1;
  if ((rc = pp_model_load(ctx, o->c.model, &m)) ||
      (rc = pp_cluster_load(ctx, o->c.cluster, &c))) {
    ret = cli_fail(ctx, rc);
    goto done;
  }
  warn_uncalibrated(&o->c, c, NULL, sp.engine,
                    sp.precision == PP_PREC_MODEL ? pp_model_dtype(m)
                                                  : sp.precision);
  /* Ctrl-C or SIGTERM: the best plans so far, then exit 128 + signal.
  ** Caught until the outputs are written, so one arriving while they are
  ** leaves them complete (and no temporary), not cut off. */
  sp.stop = cli_catch_stop();
  sp.time_limit_s = cli_clock_left(sp.time_limit_s); /* since the start */
  rc = pp_plan_search(ctx, m, c, &sp, &sr);
  sig = (int)*sp.stop;
  if (rc || (rc = pp_search_write(ctx, sr, m, c, o->c.json, stdout))) {
    ret = cli_fail(ctx, rc);
    goto done;
  }
  if (sig) {
    fprintf(stderr,
            "parplan: interrupted by signal %d: the plans above are the "
            "best found so far\n",
            sig);
    ret = 128 + sig;
  }
  if ((rc = pp_search_get_summary(sr, &sum))) {
    ret = cli_fail(ctx, rc);
    goto done;
  }
  if (!sum.nplans) {
    ret = ret ? ret : 3;
    goto done;
  }
  if (o->c.out &&
      (rc = pp_plan_write(ctx, pp_search_plan_at(sr, 0), o->c.out, NULL))) {
    ret = cli_fail(ctx, rc);
    goto done;
  }
  if (o->trace && sig) /* a second simulation would not stop */
    fprintf(stderr, "parplan: interrupted: no trace written\n");
  else if (o->trace) {
    pp_sim *sim = NULL;
    pp_cost_params cp = sum.cost;
    cp.record = 1;
    if ((rc = pp_simulate(ctx, pp_search_plan_at(sr, 0), m, c, &cp, &sim)) ||
        (rc = pp_sim_write_trace(ctx, sim, o->trace, NULL)))
      ret = cli_fail(ctx, rc);
    pp_sim_destroy(sim);
  }
done:
  if (sp.stop && (sig = cli_release_stop()) && !ret)
    ret = 128 + sig; /* arrived while writing: the outputs are complete */
  pp_search_destroy(sr);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
  return ret;
}

/* plan alone plans the default, as the tool with no command does; given
** any of the model, the cluster and the batch, it needs all three. */
static int run_plan(pp_ctx *ctx, void *opts)
{
  struct plan_opts *o = opts;
  if (!o->c.model && !o->c.cluster && !o->sp.global_batch)
    use_default(o);
  return plan(ctx, o);
}

static int run_default(pp_ctx *ctx, void *opts)
{
  struct plan_opts *o = opts;
  use_default(o);
  return plan(ctx, o);
}

static int run_compare(pp_ctx *ctx, void *opts)
{
  const struct plan_opts *o = opts;
  pp_model *m = NULL;
  pp_cluster *c = NULL;
  pp_compare *x = NULL;
  pp_search_params sp = search_params(o);
  pp_status rc;
  int ret = 0;
  if (!o->c.model || !o->c.cluster || !sp.global_batch)
    return cli_usage("compare",
                     "compare needs --model M --cluster C --batch GBS");
  if ((rc = pp_model_load(ctx, o->c.model, &m)) ||
      (rc = pp_cluster_load(ctx, o->c.cluster, &c)) ||
      (rc = pp_plan_compare(ctx, m, c, &sp, &x)) ||
      (rc = pp_compare_write(ctx, x, o->c.json, stdout)))
    ret = cli_fail(ctx, rc);
  pp_compare_destroy(x);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
  return ret;
}

static const struct cli_opt *const plan_tables[] = {
    model_opts,     cluster_opts,   search_opts,  run_opts,
    optimizer_opts, allreduce_opts, reserve_opts, calib_opts,
    json_opts,      out_opts,       trace_opts,   NULL};
static const struct cli_opt *const compare_tables[] = {
    model_opts,     cluster_opts, search_opts, run_opts,  optimizer_opts,
    allreduce_opts, reserve_opts, calib_opts,  json_opts, NULL};

const struct cli_cmd cmd_plan = {
    "plan",
    NULL,
    "plan --model M --cluster C --batch GBS [--top K] [--time-limit S]\n"
    "     [-o plan.json] [--trace trace.json]\n"
    "             the best plan: devices, pipeline, data and tensor\n"
    "             parallel degrees, micro-batch, schedule, recomputation",
    plan_tables,
    sizeof(struct plan_opts),
    init_plan,
    run_plan};

const struct cli_cmd cmd_compare = {
    "compare",
    NULL,
    "compare --model M --cluster C --batch GBS\n"
    "             our plan next to Megatron's heuristic, AMP's procedure,\n"
    "             PipeDream's DP and random search, one cost model",
    compare_tables,
    sizeof(struct plan_opts),
    init_plan,
    run_compare};

/* Not in the command list: main runs it when no command is named. */
const struct cli_cmd cmd_default = {
    "plan",    NULL,       NULL, plan_tables, sizeof(struct plan_opts),
    init_plan, run_default};
