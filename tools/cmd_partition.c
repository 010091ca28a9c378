/* SPDX-License-Identifier: MIT */
/*
** partition --model M --stages S: split a model into pipeline stages
** (min-max, AMP's or MadPipe's objective; operator DAGs at the operator
** level), on a flat network or on devices of a cluster.
*/
#include "commands.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct part_opts {
  struct cli_common c;
  pp_part_params pp;
  const char *devices;
  double memory_gb;
};

#define PART(f) CLI_FIELD(struct part_opts, f)

static const char *objective_at(int i)
{
  return pp_part_objective_name((pp_part_objective)i);
}

static const char *method_at(int i)
{
  return pp_part_method_name((pp_part_method)i);
}

const struct cli_opt part_opts[] = {
    {"--objective", CLI_ENUM, PART(pp.objective), .names = objective_at,
     .help = "--objective minmax|amp|madpipe  (default minmax)"},
    {"--method", CLI_ENUM, PART(pp.method), .names = method_at,
     .help = "--method optimal|uniform-layers|uniform-params|pipedream|\n"
             "         pipedream-star|amp-original      (default optimal)"},
    {"--stages", CLI_INT, PART(pp.stages), 1, 1 << 20,
     .help = "--stages S    stages (madpipe: processors)"},
    {"--replicas", CLI_INT, PART(pp.replicas), 1, PP_MAX_DEVICES,
     .help = "--replicas R  replicas of every stage (default 1)"},
    {"--bandwidth", CLI_DOUBLE, PART(pp.bandwidth_gbps), 1e-9, 1e9,
     .help = "--bandwidth GBPS, --latency US   a flat network (default 10, "
             "0)"},
    {"--latency", CLI_DOUBLE, PART(pp.latency_us), 0, 1e9,
     .help = NULL /* in --bandwidth's entry */},
    {"--devices", CLI_STRING, PART(devices),
     .help = "--devices LIST  stage i on the i-th device of --cluster "
             "(indices or\n"
             "              names): its type's times, memory and bandwidths"},
    {"--gas", CLI_INT, PART(pp.gas), 1, 0x1p40,
     .help = "--gas G       micro-batches per replica per iteration (default "
             "1)"},
    {"--micro-batch", CLI_INT, PART(pp.micro_batch), 1, 1 << 30,
     .help = "--micro-batch B  samples per micro-batch (default: the model's)"},
    {"--memory-gb", CLI_DOUBLE, PART(memory_gb), 1e-9, 1e9,
     .help = "--memory-gb X memory limit per device in GiB (default none; "
             "with\n"
             "              --devices also their capacity)"},
    {"--schedule", CLI_ENUM, PART(pp.schedule), .names = schedule_at,
     .help = "--schedule gpipe|1f1b   in-flight counts of the memory model"},
    {NULL}};

/* What only some objectives or methods read. */
const struct cli_opt part_objective_opts[] = {
    {"--allreduce-term", CLI_FLAG, PART(pp.allreduce), .value = 1,
     .help = "--allreduce-term  (amp) add the slowest stage's gradient "
             "allreduce\n"
             "              over the replicas; --allreduce-gbps its "
             "bandwidth"},
    {"--allreduce-gbps", CLI_DOUBLE, PART(pp.allreduce_gbps), 1e-9, 1e9,
     .help = NULL /* in --allreduce-term's entry */},
    {"--amp-inputs", CLI_FLAG, PART(pp.amp_inputs), .value = 1,
     .help = "--amp-inputs  (amp-original, with --cluster) the inputs AMP's "
             "code\n"
             "              gives its DP, so that on AMP's models its "
             "partition\n"
             "              is AMP's (data/amp/COST_MODEL.md 3)"},
    {"--iterations", CLI_INT, PART(pp.iterations), 1, 1000,
     .help = "--iterations K, --time-limit S   (madpipe) Algorithm 1, phase "
             "2"},
    {"--time-limit", CLI_DOUBLE, PART(pp.time_limit_s), 1e-3, 1e6,
     .help = NULL /* in --iterations' entry */},
    {"--phase1", CLI_INT, PART(pp.madpipe_phase1), 1, 2,
     .help = "--phase1 1|2  (madpipe) phase 1 alone, with the optimistic "
             "(1) or\n"
             "              pessimistic (2) count: the allocation, before "
             "phase 2"},
    {NULL}};

const struct cli_opt part_dag_opts[] = {
    {"--clusters", CLI_INT, PART(pp.clusters), 1, 1 << 30,
     .help = "--clusters K  hyper-operators before the DP (default max(16 "
             "S, 256))"},
    {"--alpha", CLI_DOUBLE, PART(pp.alpha), 0, 1e9,
     .help = "--alpha A     weight of communication when clustering "
             "(default 1)"},
    {"--refine-steps", CLI_INT, PART(pp.refine_steps), 0, 1 << 30,
     .help = "--refine-steps I  refinement moves at most (default 1000)"},
    {"--exact", CLI_FLAG, PART(pp.exact), .value = 1,
     .help = "--exact       the DP over every down-set, no clustering"},
    {"--layer-level", CLI_FLAG, PART(pp.layer_level), .value = 1,
     .help = "--layer-level partition the chain view instead"},
    {NULL}};

static const struct cli_opt part_out_opts[] = {
    {"-o", CLI_STRING, PART(c.out),
     .help = "-o FILE       also write the stage graph (what map --stages "
             "reads)"},
    {NULL}};

static void init_partition(void *opts)
{
  struct part_opts *o = opts;
  pp_part_params_init(&o->pp);
}

/* Parse a device list "i,j,name,..." against c into devs[0:*n]. */
static int parse_devices(const pp_cluster *c, const char *list, int32_t *devs,
                         int32_t cap, int32_t *n)
{
  char buf[256];
  const char *p = list;
  *n = 0;
  while (*p) {
    size_t len = strcspn(p, ",");
    char *end;
    long x;
    if (len == 0 || len >= sizeof buf)
      return cli_usage("partition", "--devices: bad list '%s'", list);
    memcpy(buf, p, len);
    buf[len] = 0;
    errno = 0;
    x = strtol(buf, &end, 10);
    if (*end || errno || end == buf) {
      x = pp_cluster_find_device(c, buf);
      if (x < 0)
        return cli_usage("partition",
                         "--devices: '%s' is not a device of the cluster", buf);
    }
    if (x < 0 || x >= pp_cluster_ndev(c)) {
      fprintf(stderr,
              "parplan: --devices: index %ld is out of range (the cluster "
              "has %d devices)\n",
              x, (int)pp_cluster_ndev(c));
      return 1;
    }
    if (*n >= cap)
      return cli_usage("partition",
                       "--devices: more devices than --stages (%s)", list);
    devs[(*n)++] = (int32_t)x;
    p += len;
    if (*p == ',')
      p++;
  }
  return 0;
}

static int run_partition(pp_ctx *ctx, void *opts)
{
  const struct part_opts *o = opts;
  pp_model *m = NULL;
  pp_cluster *c = NULL;
  pp_partition *pt = NULL;
  pp_part_params p = o->pp;
  pp_part_summary sum;
  int32_t *devs = NULL, n = 0;
  pp_status rc;
  int ret = 0, sig = 0;

  if (!o->c.model)
    return cli_usage("partition", "partition needs --model M");
  if (p.stages < 1)
    return cli_usage("partition", "partition needs --stages S");
  if (!!o->devices != !!o->c.cluster)
    return cli_usage("partition",
                     "partition: --devices and --cluster go together");
  p.memory_bytes = o->memory_gb * 1073741824.0;
  p.reserve_bytes = o->c.cost.reserve_bytes;
  if (o->c.optimizer >= 0)
    p.optimizer = (pp_optimizer)o->c.optimizer;
  if ((rc = pp_model_load(ctx, o->c.model, &m)))
    return cli_fail(ctx, rc);
  if (o->c.cluster && (rc = pp_cluster_load(ctx, o->c.cluster, &c))) {
    ret = cli_fail(ctx, rc);
    goto done;
  }
  if (o->devices) {
    if (!(devs = malloc(sizeof *devs * (size_t)p.stages))) {
      ret = 2;
      goto done;
    }
    if ((ret = parse_devices(c, o->devices, devs, p.stages, &n)))
      goto done;
    if (n != p.stages) {
      fprintf(stderr,
              "parplan: --devices lists %d devices for %d stages; give one "
              "per stage\n",
              (int)n, (int)p.stages);
      ret = 1;
      goto done;
    }
    p.cluster = c;
    p.devices = devs;
  }
  p.time_limit_s = cli_clock_left(p.time_limit_s); /* since the start */
  /* Ctrl-C or SIGTERM: MadPipe's best schedule so far, exit 128 + signal */
  p.stop = cli_catch_stop();
  rc = pp_partition_chain(ctx, m, &p, &pt);
  sig = (int)*p.stop;
  if (rc == PP_OK)
    rc = pp_partition_write(ctx, pt, o->c.json, stdout);
  if (rc == PP_OK && o->c.out)
    rc = pp_partition_write_stage_graph(ctx, pt, o->c.out, NULL);
  if (rc) {
    ret = cli_fail(ctx, rc);
    if (sig) /* stopped before any schedule: said, and 128 + signal */
      ret = 128 + sig;
    goto done;
  }
  if ((rc = pp_partition_summary(pt, &sum)))
    ret = cli_fail(ctx, rc);
  else if (sig)
    ret = 128 + sig;
  else if (!sum.fits)
    ret = 3;
done:
  if (p.stop && (sig = cli_release_stop()) && !ret)
    ret = 128 + sig; /* arrived while writing: the outputs are complete */
  free(devs);
  pp_partition_destroy(pt);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
  return ret;
}

static const struct cli_opt *const partition_tables[] = {
    model_opts,    part_opts,    optimizer_opts, part_objective_opts,
    part_dag_opts, cluster_opts, reserve_opts,   json_opts,
    part_out_opts, NULL};

const struct cli_cmd cmd_partition = {
    "partition",
    NULL,
    "partition --model M --stages S [--replicas R]\n"
    "          [--objective minmax|amp|madpipe] [--method NAME]\n"
    "          [--bandwidth GBPS | --cluster C --devices i,j,...]\n"
    "          [--gas G] [--memory-gb X] [-o stages.json]\n"
    "             split the model into pipeline stages",
    partition_tables,
    sizeof(struct part_opts),
    init_partition,
    run_partition};
