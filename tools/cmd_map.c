/* SPDX-License-Identifier: MIT */
/*
** map --stages SG.json --cluster C: place every replica of every stage
** of a stage graph (what partition -o writes) on a device.
*/
#include "commands.h"

#include <stdio.h>

struct map_opts {
  struct cli_common c;
  pp_map_params mp;
  const char *stages;
};

#define MAP(f) CLI_FIELD(struct map_opts, f)

static const char *objective_at(int i)
{
  return pp_map_objective_name((pp_map_objective)i);
}

static const char *algorithm_at(int i)
{
  return pp_map_algorithm_name((pp_map_algorithm)i);
}

static const struct cli_opt map_opts[] = {
    {"--stages", CLI_STRING, MAP(stages),
     .help = "--stages SG.json  the stage graph (what partition -o writes)"},
    {"--replicas", CLI_INT, MAP(mp.replicas), 1, PP_MAX_DEVICES,
     .help = "--replicas R  replicas of every stage (default 1)"},
    {"--objective", CLI_ENUM, MAP(mp.objective), .names = objective_at,
     .help = "--objective p2p|allreduce|full|auto  what a stage replica's "
             "time counts\n"
             "              besides compute (default auto)"},
    {"--algorithm", CLI_ENUM, MAP(mp.algorithm), .names = algorithm_at,
     .help = "--algorithm exact|cs|megatron|random|anneal|scotch\n"
             "              the search, or a baseline (default exact)"},
    {"--time-limit", CLI_DOUBLE, MAP(mp.time_limit_s), 1e-3, 1e6,
     .help = "--time-limit S  the exact search (default 10)"},
    {"--threads", CLI_INT, MAP(mp.threads), 1, 16,
     .help = "--threads N   the exact search (default 2)"},
    {"--samples", CLI_INT, MAP(mp.samples), 1, 0x1p40,
     .help = "--samples N   random: mappings tried; anneal: steps (default "
             "10000)"},
    {NULL}};

static void init_map(void *opts)
{
  struct map_opts *o = opts;
  pp_map_params_init(&o->mp);
}

static int run_map(pp_ctx *ctx, void *opts)
{
  const struct map_opts *o = opts;
  pp_stage_graph *g = NULL;
  pp_cluster *c = NULL;
  pp_mapping *m = NULL;
  pp_map_params mp = o->mp;
  pp_status rc;
  int ret = 0, sig = 0;
  if (!o->stages || !o->c.cluster)
    return cli_usage("map", "map needs --stages SG.json and --cluster C");
  if (!(rc = pp_stage_graph_load(ctx, o->stages, &g)) &&
      !(rc = pp_cluster_load(ctx, o->c.cluster, &c))) {
    /* Ctrl-C or SIGTERM: the best mapping so far, exit 128 + signal */
    mp.stop = cli_catch_stop();
    mp.time_limit_s = cli_clock_left(mp.time_limit_s); /* since the start */
    rc = pp_map(ctx, g, c, &mp, &m);
    sig = cli_release_stop();
  }
  if (rc || (rc = pp_mapping_write(ctx, m, o->c.json, stdout)))
    ret = cli_fail(ctx, rc);
  else if (sig) {
    fprintf(stderr,
            "parplan: interrupted by signal %d: the mapping above is the "
            "best found so far\n",
            sig);
    ret = 128 + sig;
  }
  pp_mapping_destroy(m);
  pp_cluster_destroy(c);
  pp_stage_graph_destroy(g);
  return ret;
}

static const struct cli_opt *const map_tables[] = {map_opts, cluster_opts,
                                                   json_opts, NULL};

const struct cli_cmd cmd_map = {
    "map",
    NULL,
    "map --stages SG.json --replicas R --cluster C\n"
    "    [--objective p2p|allreduce|full|auto]\n"
    "    [--algorithm exact|cs|megatron|random|anneal|scotch]\n"
    "    [--time-limit S] [--threads N] [--samples N]\n"
    "             place every stage replica on a device (optimal search)",
    map_tables,
    sizeof(struct map_opts),
    init_map,
    run_map};
