/* SPDX-License-Identifier: MIT */
/*
** parplan: the command-line tool.  It uses only include/parplan.h, owns
** argument parsing, exit codes and everything printed to the terminal.
**
** Exit status (docs/DESIGN.md, "Exit status"): 0 success; 1 bad input or
** usage; 2 internal error (including running out of memory); 3 "nothing
** fits" (a result, used by the planner commands).
*/
#include "parplan.h"

#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_MODEL "gpt2-amp"
#define DEFAULT_CLUSTER "amp-het-cluster"
#define DEFAULT_BATCH 32 /* AMP's GPT-2 experiments (data/amp) */

static const char *usage_text =
    "usage: parplan [COMMAND] [OPTIONS]\n"
    "\n"
    "With no command, plan the built-in default: the model " DEFAULT_MODEL
    " on the\ncluster " DEFAULT_CLUSTER ", global batch 32 (parplan plan).\n"
    "\n"
    "commands:\n"
    "  plan --model M --cluster C --batch GBS [--top K] [--time-limit S]\n"
    "       [-o plan.json] [--trace trace.json]\n"
    "               the best plan: devices, pipeline, data and tensor\n"
    "               parallel degrees, micro-batch, schedule, recomputation\n"
    "  compare --model M --cluster C --batch GBS\n"
    "               our plan next to Megatron's heuristic, AMP's procedure,\n"
    "               PipeDream's DP and random search, one cost model\n"
    "  describe     describe the default model and cluster\n"
    "  model SPEC   describe a model: a model JSON or PipeDream graph.txt\n"
    "               file, an ONNX file (net.onnx[:batch=B,eff=E,name=N]),\n"
    "               a built-in name, or transformer:KEY=VALUE,...\n"
    "  model --list list the built-in models and the generator\n"
    "  topo SPEC    describe a cluster: a cluster JSON file, nvidia-smi\n"
    "               topo -m output or an NCCL topology XML (FILE[:gpu=T,\n"
    "               nodes=N,inter=GBPS,...]), a built-in name, or a\n"
    "               generator spec such as hier:4x8,intra=300,inter=25\n"
    "  topo --list  list the built-in clusters and generators\n"
    "  evaluate PLAN --model M --cluster C\n"
    "               price a plan JSON analytically: iteration time and its\n"
    "               breakdown, lower bound, memory of every device\n"
    "  simulate PLAN --model M --cluster C [--trace out.json]\n"
    "               run one iteration in the discrete-event simulator\n"
    "  export PLAN --model M --cluster C\n"
    "         --to megatron|deepspeed|torch|pipedream|launch [-o DIR]\n"
    "               the engine's files: Megatron-LM arguments and layout;\n"
    "               DeepSpeed config and stage boundaries; torch pipelining\n"
    "               schedule CSV, split points and torchtitan TOML; PipeDream\n"
    "               stage-to-rank maps; launch: hostfile and per-host\n"
    "               scripts; warnings for what the engine cannot express\n"
    "  report PLAN --model M --cluster C -o report.html\n"
    "         [--gantt-image gantt.svg|gantt.png] [--no-baselines]\n"
    "               one self-contained HTML page: topology with the\n"
    "               mapping, Gantt chart, memory per device, time\n"
    "               breakdown, the baselines (--time-limit S, default 10)\n"
    "  partition --model M --stages S [--replicas R]\n"
    "            [--objective minmax|amp|madpipe] [--method NAME]\n"
    "            [--bandwidth GBPS | --cluster C --devices i,j,...]\n"
    "            [--gas G] [--memory-gb X] [-o stages.json]\n"
    "               split the model into pipeline stages\n"
    "  map --stages SG.json --replicas R --cluster C\n"
    "      [--objective p2p|allreduce|full|auto]\n"
    "      [--algorithm exact|cs|megatron|random|anneal|scotch]\n"
    "      [--time-limit S] [--threads N] [--samples N]\n"
    "               place every stage replica on a device (optimal search)\n"
    "\n"
    "options:\n"
    "  --json        print the description or the result as JSON\n"
    "  -o FILE       also write the normalized model, cluster or plan JSON\n"
    "  --chain       (model) use the layer-level chain view of a DAG\n"
    "  --chain-ops   (model) the chain view with one layer per operator\n"
    "  --seed N      seed of random generators (default 1)\n"
    "  --cost-model parplan|amp   (evaluate) AMP's conventions reproduce its\n"
    "                predictions (data/amp/COST_MODEL.md); default parplan\n"
    "  --allreduce auto|ring|hier gradient allreduce (default auto: faster)\n"
    "  --reserve-gb X  memory reserved on every device (default 0)\n"
    "  --network channels|links   (simulate) a channel per device pair, or\n"
    "                transfers sharing physical links share them\n"
    "  --trace FILE  (simulate) write a Chrome trace (opens in Perfetto)\n"
    "  --gantt COLS  (simulate) text Gantt chart width; 0 = none (default\n"
    "                100, shown for plans of up to 64 devices)\n"
    "  --gantt-image FILE  (simulate, report) the Gantt chart as SVG, or\n"
    "                PNG when FILE ends in .png (cairo)\n"
    "partition options:\n"
    "  --objective minmax|amp|madpipe  (default minmax)\n"
    "  --method optimal|uniform-layers|uniform-params|pipedream|\n"
    "           pipedream-star|amp-original      (default optimal)\n"
    "  --stages S    stages (madpipe: processors)\n"
    "  --replicas R  replicas of every stage (default 1)\n"
    "  --bandwidth GBPS, --latency US   a flat network (default 10, 0)\n"
    "  --devices LIST  stage i on the i-th device of --cluster (indices or\n"
    "                names): its type's times, memory and bandwidths\n"
    "  --gas G       micro-batches per replica per iteration (default 1)\n"
    "  --micro-batch B  samples per micro-batch (default: the model's)\n"
    "  --memory-gb X memory limit per device in GiB (default none; with\n"
    "                --devices also their capacity)\n"
    "  --schedule gpipe|1f1b   in-flight counts of the memory model\n"
    "  --optimizer sgd|adam|adam-mixed|2bw   (default adam-mixed)\n"
    "  --allreduce-term  (amp) add the slowest stage's gradient allreduce\n"
    "                over the replicas; --allreduce-gbps its bandwidth\n"
    "  --amp-inputs  (amp-original, with --cluster) the inputs AMP's code\n"
    "                gives its DP, so that on AMP's models its partition\n"
    "                is AMP's (data/amp/COST_MODEL.md 3)\n"
    "  --iterations K, --time-limit S   (madpipe) Algorithm 1, phase 2\n"
    "operator DAGs (minmax, flat network): clustering, the DP over fronted\n"
    "subgraphs, refinement (docs/PARTITION.md):\n"
    "  --clusters K  hyper-operators before the DP (default max(16 S, 256))\n"
    "  --alpha A     weight of communication when clustering (default 1)\n"
    "  --refine-steps I  refinement moves at most (default 1000)\n"
    "  --exact       the DP over every down-set, no clustering\n"
    "  --layer-level partition the chain view instead\n"
    "plan options:\n"
    "  --batch GBS   global batch in samples (required but for the default)\n"
    "  --top K       plans kept, simulated and listed (default 5)\n"
    "  --time-limit S  the whole search (default 60)\n"
    "  --threads N   (default 2)\n"
    "  --schedule gpipe|1f1b|1f1b-star   try only this schedule\n"
    "  --recompute on|off|both   (default both)\n"
    "  --max-tp N, --max-micro-batch N   bound the search\n"
    "  --all-devices use every device (no idle subsets)\n"
    "  --map-time S  exact mapping per kept plan (default 1; 0: off)\n"
    "  --madpipe N   MadPipe where memory binds (1f1b-star, one device type)\n"
    "                until N plans fit (default 4; 0: off)\n"
    "  --no-simulate rank by the estimate only\n"
    "  --optimizer, --reserve-gb, --allreduce   as for evaluate\n"
    "  -h, --help    this text;  --version  the version\n"
    "\n"
    "exit status: 0 success, 1 bad input or usage, 2 internal error,\n"
    "3 the plan does not fit in memory (evaluate, simulate, partition).\n"
    "Formats and generators: docs/FORMATS.md.\n";

struct opts {
  const char *cmd, *spec, *out, *model, *cluster, *trace, *devices, *to;
  const char *gantt_image;
  int json, chain, list, gantt, baselines;
  unsigned long long seed;
  pp_cost_params cp;
  pp_part_params pp;
  pp_map_params mp;
  pp_search_params sp;
  const char *stages_file;
  double memory_gb;
  bool schedule_set, optimizer_set, time_limit_set;
};

static int fail(pp_ctx *ctx, pp_status rc)
{
  const char *msg = ctx ? pp_ctx_errmsg(ctx) : "";
  fprintf(stderr, "parplan: %s\n", *msg ? msg : pp_status_str(rc));
  return rc == PP_ENOMEM || rc == PP_EINTERNAL ? 2 : 1;
}

static int usage_error(const char *fmt, const char *arg)
{
  fprintf(stderr, "parplan: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n(see parplan --help)\n");
  return 1;
}

/* A number in [lo, hi]; 0 on success. */
static int num(const char *a, const char *v, double lo, double hi, double *x)
{
  char *end;
  errno = 0;
  *x = strtod(v, &end);
  if (end == v || *end || errno || !(*x >= lo && *x <= hi)) {
    fprintf(stderr, "parplan: %s needs a number from %g to %g, not '%s'\n", a,
            lo, hi, v);
    fprintf(stderr, "(see parplan --help)\n");
    return 1;
  }
  return 0;
}

/* An integer in [lo, hi]; 0 on success. */
static int inum(const char *a, const char *v, long long lo, long long hi,
                long long *x)
{
  char *end;
  errno = 0;
  *x = strtoll(v, &end, 10);
  if (end == v || *end || errno || *x < lo || *x > hi) {
    fprintf(stderr,
            "parplan: %s needs an integer from %lld to %lld, not "
            "'%s'\n(see parplan --help)\n",
            a, lo, hi, v);
    return 1;
  }
  return 0;
}

static int parse_part(struct opts *o, const char *a, const char *v)
{
  double x;
  long long n;
  pp_part_params *p = &o->pp;
  bool map = o->cmd && !strcmp(o->cmd, "map");
  if (map && !strcmp(a, "--stages")) {
    o->stages_file = v; /* map: a stage-graph file */
  } else if (map && !strcmp(a, "--objective")) {
    if (pp_map_objective_parse(v, &o->mp.objective))
      return usage_error("--objective is p2p, allreduce, full or auto, not "
                         "'%s'",
                         v);
  } else if (!strcmp(a, "--algorithm")) {
    if (pp_map_algorithm_parse(v, &o->mp.algorithm))
      return usage_error("--algorithm is exact, cs, megatron, random, anneal "
                         "or scotch, not '%s'",
                         v);
  } else if (!strcmp(a, "--threads")) {
    if (inum(a, v, 1, 16, &n))
      return 1;
    o->mp.threads = (int32_t)n;
    o->sp.threads = (int32_t)n;
  } else if (!strcmp(a, "--samples")) {
    if (inum(a, v, 1, 1LL << 40, &n))
      return 1;
    o->mp.samples = n;
  } else if (!strcmp(a, "--stages")) {
    if (inum(a, v, 1, 1 << 20, &n))
      return 1;
    p->stages = (int32_t)n;
  } else if (!strcmp(a, "--replicas")) {
    if (inum(a, v, 1, PP_MAX_DEVICES, &n))
      return 1;
    p->replicas = (int32_t)n;
    o->mp.replicas = (int32_t)n;
  } else if (!strcmp(a, "--gas")) {
    if (inum(a, v, 1, 1LL << 40, &n))
      return 1;
    p->gas = n;
  } else if (!strcmp(a, "--micro-batch")) {
    if (inum(a, v, 1, 1 << 30, &n))
      return 1;
    p->micro_batch = (int32_t)n;
  } else if (!strcmp(a, "--clusters")) {
    if (inum(a, v, 1, 1 << 30, &n))
      return 1;
    p->clusters = (int32_t)n;
  } else if (!strcmp(a, "--refine-steps")) {
    if (inum(a, v, 0, 1 << 30, &n))
      return 1;
    p->refine_steps = (int32_t)n;
  } else if (!strcmp(a, "--alpha")) {
    if (num(a, v, 0, 1e9, &x))
      return 1;
    p->alpha = x;
  } else if (!strcmp(a, "--iterations")) {
    if (inum(a, v, 1, 1000, &n))
      return 1;
    p->iterations = (int32_t)n;
  } else if (!strcmp(a, "--bandwidth")) {
    if (num(a, v, 1e-9, 1e9, &x))
      return 1;
    p->bandwidth_gbps = x;
  } else if (!strcmp(a, "--allreduce-gbps")) {
    if (num(a, v, 1e-9, 1e9, &x))
      return 1;
    p->allreduce_gbps = x;
  } else if (!strcmp(a, "--latency")) {
    if (num(a, v, 0, 1e9, &x))
      return 1;
    p->latency_us = x;
  } else if (!strcmp(a, "--memory-gb")) {
    if (num(a, v, 1e-9, 1e9, &x))
      return 1;
    o->memory_gb = x;
  } else if (!strcmp(a, "--time-limit")) {
    if (num(a, v, 1e-3, 1e6, &x))
      return 1;
    p->time_limit_s = x;
    o->time_limit_set = true;
    o->mp.time_limit_s = x;
    o->sp.time_limit_s = x;
  } else if (!strcmp(a, "--objective")) {
    if (pp_part_objective_parse(v, &p->objective))
      return usage_error("--objective is minmax, amp or madpipe, not '%s'", v);
  } else if (!strcmp(a, "--method")) {
    if (pp_part_method_parse(v, &p->method))
      return usage_error("--method is optimal, uniform-layers, uniform-params, "
                         "pipedream, pipedream-star or amp-original, not '%s'",
                         v);
  } else if (!strcmp(a, "--schedule")) {
    if (pp_schedule_parse(v, &p->schedule))
      return usage_error("--schedule is gpipe, 1f1b or 1f1b-star, not '%s'", v);
    o->schedule_set = true;
  } else if (!strcmp(a, "--optimizer")) {
    if (pp_optimizer_parse(v, &p->optimizer))
      return usage_error("--optimizer is sgd, adam, adam-mixed or 2bw, not "
                         "'%s'",
                         v);
    o->sp.optimizer = p->optimizer;
  } else if (!strcmp(a, "--batch")) {
    if (inum(a, v, 1, 1LL << 40, &n))
      return 1;
    o->sp.global_batch = n;
  } else if (!strcmp(a, "--top")) {
    if (inum(a, v, 1, 1000, &n))
      return 1;
    o->sp.top_k = (int32_t)n;
  } else if (!strcmp(a, "--max-tp")) {
    if (inum(a, v, 1, 1024, &n))
      return 1;
    o->sp.max_tp = (int32_t)n;
  } else if (!strcmp(a, "--max-micro-batch")) {
    if (inum(a, v, 1, 1 << 30, &n))
      return 1;
    o->sp.max_micro_batch = (int32_t)n;
  } else if (!strcmp(a, "--madpipe")) {
    if (inum(a, v, 0, 1000, &n))
      return 1;
    o->sp.madpipe = (int32_t)n;
  } else if (!strcmp(a, "--map-time")) {
    if (num(a, v, 0, 1e6, &x))
      return 1;
    o->sp.map_time_s = x;
  } else if (!strcmp(a, "--recompute")) {
    if (!strcmp(v, "on"))
      o->sp.recompute = 1;
    else if (!strcmp(v, "off"))
      o->sp.recompute = 0;
    else if (!strcmp(v, "both"))
      o->sp.recompute = -1;
    else
      return usage_error("--recompute is on, off or both, not '%s'", v);
  } else if (!strcmp(a, "--devices"))
    o->devices = v;
  return 0;
}

static int parse_value(struct opts *o, const char *a, const char *v)
{
  char *end;
  if (!strcmp(a, "-o"))
    o->out = v;
  else if (!strcmp(a, "--model"))
    o->model = v;
  else if (!strcmp(a, "--cluster"))
    o->cluster = v;
  else if (!strcmp(a, "--trace"))
    o->trace = v;
  else if (!strcmp(a, "--to"))
    o->to = v;
  else if (!strcmp(a, "--gantt-image"))
    o->gantt_image = v;
  else if (!strcmp(a, "--seed")) {
    errno = 0;
    o->seed = strtoull(v, &end, 10);
    if (end == v || *end || errno || *v == '-')
      return usage_error("--seed needs a non-negative integer, not '%s'", v);
  } else if (!strcmp(a, "--gantt")) {
    long x;
    errno = 0;
    x = strtol(v, &end, 10);
    if (end == v || *end || errno || x < 0 || x > 10000)
      return usage_error("--gantt needs a width from 0 to 10000, not '%s'", v);
    o->gantt = (int)x;
  } else if (!strcmp(a, "--reserve-gb")) {
    double x;
    errno = 0;
    x = strtod(v, &end);
    if (end == v || *end || errno || !(x >= 0) || x > 1e6)
      return usage_error("--reserve-gb needs a number of GiB >= 0, not '%s'",
                         v);
    o->cp.reserve_bytes = (int64_t)(x * 1073741824.0);
  } else if (!strcmp(a, "--cost-model")) {
    if (!strcmp(v, "parplan"))
      o->cp.kind = PP_COST_PARPLAN;
    else if (!strcmp(v, "amp"))
      o->cp.kind = PP_COST_AMP;
    else
      return usage_error("--cost-model is parplan or amp, not '%s'", v);
  } else if (!strcmp(a, "--allreduce")) {
    if (!strcmp(v, "auto"))
      o->cp.allreduce = PP_AR_AUTO;
    else if (!strcmp(v, "ring"))
      o->cp.allreduce = PP_AR_RING;
    else if (!strcmp(v, "hier"))
      o->cp.allreduce = PP_AR_HIER;
    else
      return usage_error("--allreduce is auto, ring or hier, not '%s'", v);
  } else if (!strcmp(a, "--network")) {
    if (!strcmp(v, "channels"))
      o->cp.network = PP_NET_CHANNELS;
    else if (!strcmp(v, "links"))
      o->cp.network = PP_NET_LINKS;
    else
      return usage_error("--network is channels or links, not '%s'", v);
  }
  return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
  static const char *const valued[] = {
      "-o",          "--seed",    "--model",      "--cluster",
      "--trace",     "--gantt",   "--reserve-gb", "--cost-model",
      "--allreduce", "--network", "--to",         "--gantt-image",
      NULL};
  static const char *const part_valued[] = {"--stages",
                                            "--replicas",
                                            "--gas",
                                            "--micro-batch",
                                            "--iterations",
                                            "--bandwidth",
                                            "--allreduce-gbps",
                                            "--latency",
                                            "--memory-gb",
                                            "--time-limit",
                                            "--objective",
                                            "--method",
                                            "--schedule",
                                            "--optimizer",
                                            "--devices",
                                            "--clusters",
                                            "--refine-steps",
                                            "--alpha",
                                            "--algorithm",
                                            "--threads",
                                            "--samples",
                                            "--batch",
                                            "--top",
                                            "--max-tp",
                                            "--max-micro-batch",
                                            "--map-time",
                                            "--madpipe",
                                            "--recompute",
                                            NULL};
  int kp;
  int i, k, ret;
  memset(o, 0, sizeof *o);
  o->seed = 1;
  o->gantt = 100;
  o->baselines = 1;
  pp_cost_params_init(&o->cp);
  pp_part_params_init(&o->pp);
  pp_map_params_init(&o->mp);
  pp_search_params_init(&o->sp);
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    for (k = 0; valued[k] && strcmp(a, valued[k]); k++)
      ;
    for (kp = 0; part_valued[kp] && strcmp(a, part_valued[kp]); kp++)
      ;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      fputs(usage_text, stdout);
      exit(0);
    } else if (!strcmp(a, "--version")) {
      printf("parplan %s\n", pp_version());
      exit(0);
    } else if (!strcmp(a, "--json"))
      o->json = 1;
    else if (!strcmp(a, "--chain"))
      o->chain = 1;
    else if (!strcmp(a, "--chain-ops"))
      o->chain = 2;
    else if (!strcmp(a, "--list"))
      o->list = 1;
    else if (!strcmp(a, "--allreduce-term"))
      o->pp.allreduce = 1;
    else if (!strcmp(a, "--amp-inputs"))
      o->pp.amp_inputs = 1;
    else if (!strcmp(a, "--exact"))
      o->pp.exact = 1;
    else if (!strcmp(a, "--layer-level"))
      o->pp.layer_level = 1;
    else if (!strcmp(a, "--all-devices"))
      o->sp.subsets = 0;
    else if (!strcmp(a, "--no-simulate"))
      o->sp.simulate = 0;
    else if (!strcmp(a, "--no-baselines"))
      o->baselines = 0;
    else if (part_valued[kp]) {
      if (i + 1 >= argc)
        return usage_error("%s needs a value", a);
      if ((ret = parse_part(o, a, argv[++i])))
        return ret;
    } else if (valued[k]) {
      if (i + 1 >= argc)
        return usage_error("%s needs a value", a);
      if ((ret = parse_value(o, a, argv[++i])))
        return ret;
    } else if (a[0] == '-' && a[1])
      return usage_error("unknown option '%s'", a);
    else if (!o->cmd)
      o->cmd = a;
    else if (!o->spec)
      o->spec = a;
    else
      return usage_error("unexpected argument '%s'", a);
  }
  return 0;
}

static int list_models(void)
{
  int i;
  printf("built-in models:\n");
  for (i = 0; pp_model_builtin_name(i); i++)
    printf("  %-14s %s\n", pp_model_builtin_name(i), pp_model_builtin_about(i));
  printf("generator:\n  transformer:layers=L,hidden=H,heads=A,seq=S,vocab=V"
         "[,ffn=F][,mbs=B][,gpu=TYPE][,eff=E][,bytes=2][,tie=1]\n"
         "                 a GPT-style decoder from its sizes; times from "
         "FLOPs\n"
         "  resnet:depth=50|101|152[,batch=B][,image=I]\n"
         "  bert:layers=L,hidden=H,heads=A,seq=S[,batch=B]\n"
         "  swin:embed=C,stages=a-b-c-d,window=W[,image=I][,batch=B]\n"
         "  fpn:depth=50[,image=I][,channels=C][,batch=B]\n"
         "                 operator-level DAGs (docs/FORMATS.md); common "
         "options gpu=TYPE, eff=E\n");
  return 0;
}

static int list_clusters(void)
{
  int i;
  printf("built-in clusters and generators:\n");
  for (i = 0; pp_cluster_generator_name(i); i++)
    printf("  %s\n", pp_cluster_generator_about(i));
  printf("common options: gpu=TYPE, mem=GIB, speed=X, peak=TFLOPS, "
         "latency=US\n");
  return 0;
}

static int cmd_model(pp_ctx *ctx, const struct opts *o)
{
  pp_model *m = NULL, *v = NULL;
  pp_status rc;
  if (o->list)
    return list_models();
  if (!o->spec)
    return usage_error("%s", "model needs a SPEC (or --list)");
  if ((rc = pp_model_load(ctx, o->spec, &m)))
    return fail(ctx, rc);
  if (o->chain) {
    rc = pp_model_chain_view(ctx, m, o->chain == 2, &v);
    pp_model_destroy(m);
    if (rc)
      return fail(ctx, rc);
    m = v;
  }
  rc = pp_model_describe(ctx, m, o->json, stdout);
  if (rc == PP_OK && o->out)
    rc = pp_model_write(ctx, m, o->out, NULL);
  pp_model_destroy(m);
  return rc ? fail(ctx, rc) : 0;
}

static int cmd_topo(pp_ctx *ctx, const struct opts *o)
{
  pp_cluster *c = NULL;
  pp_status rc;
  if (o->list)
    return list_clusters();
  if (!o->spec)
    return usage_error("%s", "topo needs a SPEC (or --list)");
  if ((rc = pp_cluster_load(ctx, o->spec, &c)))
    return fail(ctx, rc);
  rc = pp_cluster_describe(ctx, c, o->json, stdout);
  if (rc == PP_OK && o->out)
    rc = pp_cluster_write(ctx, c, o->out, NULL);
  pp_cluster_destroy(c);
  return rc ? fail(ctx, rc) : 0;
}

/* Load the model, the cluster and the plan that evaluate and simulate
** need. */
static int load_plan(pp_ctx *ctx, const struct opts *o, pp_model **m,
                     pp_cluster **c, pp_plan **p)
{
  pp_status rc;
  *m = NULL;
  *c = NULL;
  *p = NULL;
  if (!o->spec)
    return usage_error("%s needs a PLAN file", o->cmd);
  if (!o->model || !o->cluster)
    return usage_error("%s needs --model M and --cluster C", o->cmd);
  if ((rc = pp_model_load(ctx, o->model, m)) ||
      (rc = pp_cluster_load(ctx, o->cluster, c)) ||
      (rc = pp_plan_load(ctx, o->spec, *m, *c, p))) {
    pp_model_destroy(*m);
    pp_cluster_destroy(*c);
    *m = NULL;
    *c = NULL;
    return fail(ctx, rc);
  }
  return 0;
}

/* DIR/NAME into path, creating DIR when it is missing; 0 or the exit
** status of the error it reported. */
static int out_path(const char *dir, const char *name, char *path, size_t n)
{
  if (mkdir(dir, 0777) && errno != EEXIST) {
    fprintf(stderr, "parplan: %s: cannot create the directory: %s\n", dir,
            strerror(errno));
    return 1;
  }
  if ((size_t)snprintf(path, n, "%s/%s", dir, name) >= n)
    return usage_error("-o: directory name too long: %s", dir);
  return 0;
}

/* export --to launch -o DIR: DIR/hostfile and DIR/launch_HOST.sh. */
static int export_launch(pp_ctx *ctx, const struct opts *o)
{
  pp_model *m;
  pp_cluster *c;
  pp_plan *p;
  pp_launch *x = NULL;
  pp_status rc;
  int ret, h;
  char path[4096];

  if (!o->out)
    return usage_error("export --to launch needs -o %s", "DIR");
  if ((ret = load_plan(ctx, o, &m, &c, &p)))
    return ret;
  rc = pp_export_launch(ctx, p, m, c, &x);
  if (rc == PP_OK && !(ret = out_path(o->out, "hostfile", path, sizeof path)))
    rc = pp_launch_write_hostfile(ctx, x, path, NULL);
  for (h = 0; rc == PP_OK && !ret && h < pp_launch_nhost(x); h++) {
    char name[256];
    snprintf(name, sizeof name, "launch_%s.sh", pp_launch_host(x, h));
    if (!(ret = out_path(o->out, name, path, sizeof path)))
      rc = pp_launch_write_script(ctx, x, h, path, NULL);
  }
  if (rc == PP_OK && !ret) {
    printf("wrote %s/hostfile and %d launch scripts\n", o->out,
           (int)pp_launch_nhost(x));
    if (!pp_launch_torchrun_ok(x))
      fprintf(stderr,
              "parplan: warning: torchrun's rank numbering (host by host, "
              "the same count on each) would not place these ranks; use "
              "the scripts, which set every rank explicitly\n");
  }
  if (rc)
    ret = fail(ctx, rc);
  pp_launch_destroy(x);
  pp_plan_destroy(p);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
  return ret;
}

/* export PLAN --model M --cluster C --to ENGINE [-o DIR]: the engine's
** files in DIR, or their text on stdout (several files: each after a
** "==> NAME <==" line); warnings on stderr for what the engine cannot
** express. */
static int cmd_export(pp_ctx *ctx, const struct opts *o)
{
  pp_model *m;
  pp_cluster *c;
  pp_plan *p;
  pp_export *x = NULL;
  pp_status rc;
  int ret, i;
  static const char *engines = "megatron|deepspeed|torch|pipedream|launch";

  if (!o->to)
    return usage_error("export needs --to %s", engines);
  if (!strcmp(o->to, "launch"))
    return export_launch(ctx, o);
  if (strcmp(o->to, "megatron") && strcmp(o->to, "deepspeed") &&
      strcmp(o->to, "torch") && strcmp(o->to, "pipedream")) {
    fprintf(stderr, "parplan: export --to: one of %s, not '%s'\n", engines,
            o->to);
    return 1;
  }
  if ((ret = load_plan(ctx, o, &m, &c, &p)))
    return ret;
  rc = pp_export_to(ctx, o->to, p, m, c, &x);
  for (i = 0; rc == PP_OK && !ret && i < pp_export_nfile(x); i++) {
    const char *name = pp_export_file_name(x, i);
    char path[4096];
    if (o->out) {
      if (!(ret = out_path(o->out, name, path, sizeof path)) &&
          (rc = pp_export_write_file(ctx, x, i, path, NULL)) == PP_OK)
        printf("wrote %s\n", path);
    } else {
      if (pp_export_nfile(x) > 1)
        printf("%s==> %s <==\n", i ? "\n" : "", name);
      rc = pp_export_write_file(ctx, x, i, NULL, stdout);
    }
  }
  if (rc)
    ret = fail(ctx, rc);
  for (i = 0; !rc && !ret && i < pp_export_nwarning(x); i++)
    fprintf(stderr, "parplan: warning: %s\n", pp_export_warning(x, i));
  pp_export_destroy(x);
  pp_plan_destroy(p);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
  return ret;
}

static int cmd_evaluate(pp_ctx *ctx, const struct opts *o)
{
  pp_model *m;
  pp_cluster *c;
  pp_plan *p;
  pp_eval *e = NULL;
  pp_eval_summary s;
  pp_status rc;
  int ret;

  if ((ret = load_plan(ctx, o, &m, &c, &p)))
    return ret;
  rc = pp_evaluate(ctx, p, m, c, &o->cp, &e);
  if (rc == PP_OK)
    rc = pp_eval_write(ctx, e, o->json, stdout);
  if (rc == PP_OK && o->out)
    rc = pp_plan_write(ctx, p, o->out, NULL);
  ret = rc ? fail(ctx, rc) : 0;
  if (!rc) {
    pp_eval_get_summary(e, &s);
    if (!s.fits)
      ret = 3;
  }
  pp_eval_destroy(e);
  pp_plan_destroy(p);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
  return ret;
}

/* .png: PNG, anything else SVG. */
static pp_image_format image_format(const char *path)
{
  size_t n = strlen(path);
  return n >= 4 && !strcmp(path + n - 4, ".png") ? PP_IMAGE_PNG : PP_IMAGE_SVG;
}

/* report PLAN --model M --cluster C -o report.html [--gantt-image F]
** [--no-baselines] [--time-limit S] [--threads N] */
static int cmd_report(pp_ctx *ctx, const struct opts *o)
{
  pp_model *m;
  pp_cluster *c;
  pp_plan *p;
  pp_report_params rp;
  pp_status rc;
  int ret;

  if (!o->out)
    return usage_error("report needs -o %s", "report.html");
  if (o->cp.kind != PP_COST_PARPLAN)
    return usage_error("%s", "the report uses parplan's cost model");
  if ((ret = load_plan(ctx, o, &m, &c, &p)))
    return ret;
  pp_report_params_init(&rp);
  rp.baselines = o->baselines;
  rp.threads = o->sp.threads;
  if (o->time_limit_set)
    rp.time_limit_s = o->sp.time_limit_s;
  rc = pp_report_write(ctx, p, m, c, &o->cp, &rp, o->out, NULL);
  if (rc == PP_OK && o->gantt_image) {
    pp_sim *s = NULL;
    pp_cost_params cp = o->cp;
    cp.record = 1;
    if ((rc = pp_simulate(ctx, p, m, c, &cp, &s)) == PP_OK)
      rc = pp_gantt_write(ctx, s, c, image_format(o->gantt_image),
                          o->gantt_image, NULL);
    pp_sim_destroy(s);
  }
  if (rc == PP_OK)
    printf("wrote %s%s%s\n", o->out, o->gantt_image ? " and " : "",
           o->gantt_image ? o->gantt_image : "");
  ret = rc ? fail(ctx, rc) : 0;
  pp_plan_destroy(p);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
  return ret;
}

static int cmd_simulate(pp_ctx *ctx, const struct opts *o)
{
  pp_model *m;
  pp_cluster *c;
  pp_plan *p;
  pp_sim *s = NULL;
  pp_sim_summary sum;
  pp_cost_params cp = o->cp;
  pp_status rc;
  int ret;

  if (o->cp.kind != PP_COST_PARPLAN)
    return usage_error("%s", "the simulator uses parplan's cost model; "
                             "--cost-model amp is for evaluate");
  if ((ret = load_plan(ctx, o, &m, &c, &p)))
    return ret;
  cp.record = 1;
  rc = pp_simulate(ctx, p, m, c, &cp, &s);
  if (rc == PP_OK)
    rc = pp_sim_write(ctx, s, o->json, o->json ? 0 : o->gantt, stdout);
  if (rc == PP_OK && o->trace)
    rc = pp_sim_write_trace(ctx, s, o->trace, NULL);
  if (rc == PP_OK && o->gantt_image)
    rc = pp_gantt_write(ctx, s, c, image_format(o->gantt_image), o->gantt_image,
                        NULL);
  if (rc == PP_OK && o->out)
    rc = pp_plan_write(ctx, p, o->out, NULL);
  ret = rc ? fail(ctx, rc) : 0;
  if (!rc) {
    pp_sim_get_summary(s, &sum);
    if (!sum.fits)
      ret = 3;
  }
  pp_sim_destroy(s);
  pp_plan_destroy(p);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
  return ret;
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
      return usage_error("--devices: bad list '%s'", list);
    memcpy(buf, p, len);
    buf[len] = 0;
    errno = 0;
    x = strtol(buf, &end, 10);
    if (*end || errno || end == buf) {
      x = pp_cluster_find_device(c, buf);
      if (x < 0)
        return usage_error("--devices: '%s' is not a device of the cluster",
                           buf);
    }
    if (x < 0 || x >= pp_cluster_ndev(c)) {
      fprintf(stderr,
              "parplan: --devices: index %ld is out of range (the cluster "
              "has %d devices)\n",
              x, (int)pp_cluster_ndev(c));
      return 1;
    }
    if (*n >= cap)
      return usage_error("--devices: more devices than --stages (%s)", list);
    devs[(*n)++] = (int32_t)x;
    p += len;
    if (*p == ',')
      p++;
  }
  return 0;
}

static int cmd_partition(pp_ctx *ctx, const struct opts *o)
{
  pp_model *m = NULL;
  pp_cluster *c = NULL;
  pp_partition *pt = NULL;
  pp_part_params p = o->pp;
  pp_part_summary sum;
  int32_t *devs = NULL, n = 0;
  pp_status rc;
  int ret = 0;

  if (!o->model)
    return usage_error("%s", "partition needs --model M");
  if (o->spec)
    return usage_error("partition takes no argument '%s' (use --model)",
                       o->spec);
  if (p.stages < 1)
    return usage_error("%s", "partition needs --stages S");
  if (!!o->devices != !!o->cluster)
    return usage_error("%s", "partition: --devices and --cluster go together");
  p.memory_bytes = o->memory_gb * 1073741824.0;
  p.reserve_bytes = o->cp.reserve_bytes;
  if ((rc = pp_model_load(ctx, o->model, &m)))
    return fail(ctx, rc);
  if (o->cluster && (rc = pp_cluster_load(ctx, o->cluster, &c))) {
    ret = fail(ctx, rc);
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
  rc = pp_partition_chain(ctx, m, &p, &pt);
  if (rc == PP_OK)
    rc = pp_partition_write(ctx, pt, o->json, stdout);
  if (rc == PP_OK && o->out)
    rc = pp_partition_write_stage_graph(ctx, pt, o->out, NULL);
  if (rc) {
    ret = fail(ctx, rc);
    goto done;
  }
  pp_partition_summary(pt, &sum);
  if (!sum.fits)
    ret = 3;
done:
  free(devs);
  pp_partition_destroy(pt);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
  return ret;
}

static int cmd_map(pp_ctx *ctx, const struct opts *o)
{
  pp_stage_graph *g = NULL;
  pp_cluster *c = NULL;
  pp_mapping *m = NULL;
  pp_status rc;
  int ret = 0;
  if (!o->stages_file || !o->cluster)
    return usage_error("%s", "map needs --stages SG.json and --cluster C");
  if (o->spec)
    return usage_error("map takes no argument '%s'", o->spec);
  if ((rc = pp_stage_graph_load(ctx, o->stages_file, &g)) ||
      (rc = pp_cluster_load(ctx, o->cluster, &c)) ||
      (rc = pp_map(ctx, g, c, &o->mp, &m)) ||
      (rc = pp_mapping_write(ctx, m, o->json, stdout)))
    ret = fail(ctx, rc);
  pp_mapping_destroy(m);
  pp_cluster_destroy(c);
  pp_stage_graph_destroy(g);
  return ret;
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
  if (done >= 1)
    fputs("\r                                                      \r", stderr);
  fflush(stderr);
  return 0;
}

static int cmd_plan(pp_ctx *ctx, const struct opts *o, bool dflt)
{
  pp_model *m = NULL;
  pp_cluster *c = NULL;
  pp_search *sr = NULL;
  pp_search_params sp = o->sp;
  pp_search_summary sum;
  pp_status rc;
  int ret = 0;
  const char *model = o->model, *cluster = o->cluster;
  if (dflt) {
    model = model ? model : DEFAULT_MODEL;
    cluster = cluster ? cluster : DEFAULT_CLUSTER;
    if (!sp.global_batch)
      sp.global_batch = DEFAULT_BATCH;
  }
  if (!model || !cluster || !sp.global_batch)
    return usage_error("%s", "plan needs --model M --cluster C --batch GBS");
  if (o->spec)
    return usage_error("plan takes no argument '%s'", o->spec);
  if (o->schedule_set)
    sp.schedules = 1u << o->pp.schedule;
  sp.reserve_bytes = o->cp.reserve_bytes;
  sp.allreduce = o->cp.allreduce;
  if (isatty(2))
    sp.progress = progress_bar;
  if ((rc = pp_model_load(ctx, model, &m)) ||
      (rc = pp_cluster_load(ctx, cluster, &c)) ||
      (rc = pp_plan_search(ctx, m, c, &sp, &sr)) ||
      (rc = pp_search_write(ctx, sr, m, c, o->json, stdout))) {
    ret = fail(ctx, rc);
    goto done;
  }
  pp_search_get_summary(sr, &sum);
  if (!sum.nplans) {
    ret = 3;
    goto done;
  }
  if (o->out &&
      (rc = pp_plan_write(ctx, pp_search_plan_at(sr, 0), o->out, NULL))) {
    ret = fail(ctx, rc);
    goto done;
  }
  if (o->trace) {
    pp_sim *sim = NULL;
    pp_cost_params cp = sum.cost;
    cp.record = 1;
    if ((rc = pp_simulate(ctx, pp_search_plan_at(sr, 0), m, c, &cp, &sim)) ||
        (rc = pp_sim_write_trace(ctx, sim, o->trace, NULL)))
      ret = fail(ctx, rc);
    pp_sim_destroy(sim);
  }
done:
  pp_search_destroy(sr);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
  return ret;
}

static int cmd_compare(pp_ctx *ctx, const struct opts *o)
{
  pp_model *m = NULL;
  pp_cluster *c = NULL;
  pp_compare *x = NULL;
  pp_search_params sp = o->sp;
  pp_status rc;
  int ret = 0;
  if (!o->model || !o->cluster || !sp.global_batch)
    return usage_error("%s", "compare needs --model M --cluster C --batch GBS");
  if (o->spec)
    return usage_error("compare takes no argument '%s'", o->spec);
  if (o->schedule_set)
    sp.schedules = 1u << o->pp.schedule;
  sp.reserve_bytes = o->cp.reserve_bytes;
  sp.allreduce = o->cp.allreduce;
  if (isatty(2))
    sp.progress = progress_bar;
  if ((rc = pp_model_load(ctx, o->model, &m)) ||
      (rc = pp_cluster_load(ctx, o->cluster, &c)) ||
      (rc = pp_plan_compare(ctx, m, c, &sp, &x)) ||
      (rc = pp_compare_write(ctx, x, o->json, stdout)))
    ret = fail(ctx, rc);
  pp_compare_destroy(x);
  pp_cluster_destroy(c);
  pp_model_destroy(m);
  return ret;
}

/* Describe the default model and cluster and how the model's profiles
** apply to each device type. */
static int cmd_default(pp_ctx *ctx, const struct opts *o)
{
  pp_model *m = NULL;
  pp_cluster *c = NULL;
  pp_status rc;
  int32_t t, d, v, n;

  if ((rc = pp_model_load(ctx, DEFAULT_MODEL, &m)) ||
      (rc = pp_cluster_load(ctx, DEFAULT_CLUSTER, &c))) {
    pp_model_destroy(m);
    return fail(ctx, rc);
  }
  if (!o->json)
    printf("parplan %s: the built-in default model and cluster.\n\n",
           pp_version());
  else
    printf("{\"model\":\n");
  rc = pp_model_describe(ctx, m, o->json, stdout);
  if (rc == PP_OK) {
    printf(o->json ? ",\n\"cluster\":\n" : "\n");
    rc = pp_cluster_describe(ctx, c, o->json, stdout);
  }
  if (rc == PP_OK && !o->json) {
    printf("\nper device type, fwd + bwd of one micro-batch at tp 1:\n");
    for (t = 0; t < pp_cluster_ntype(c); t++) {
      double ms = 0;
      unsigned est = 0;
      pp_device_type_desc td;
      pp_cluster_type(c, t, &td);
      for (d = 0; d < pp_cluster_ndev(c) && pp_cluster_device_type(c, d) != t;
           d++)
        ;
      if (d == pp_cluster_ndev(c))
        continue; /* a declared type no device has */
      n = pp_model_nop(m);
      for (v = 0; v < n; v++) {
        pp_type_key k = pp_model_type_key(m, c, d);
        pp_op_time ot;
        pp_model_op_time(m, v, &k, 1, 1, &ot);
        ms += ot.fwd_ms + ot.bwd_ms;
        est |= ot.est;
      }
      printf("  %-6s %.3f ms (%s)\n", td.name, ms,
             est ? "estimated" : "profiled");
    }
  }
  if (o->json && rc == PP_OK)
    printf("}\n");
  pp_model_destroy(m);
  pp_cluster_destroy(c);
  return rc ? fail(ctx, rc) : 0;
}

int main(int argc, char **argv)
{
  struct opts o;
  pp_ctx_params cp;
  pp_ctx *ctx = NULL;
  int ret;
  pp_status rc;

  if ((ret = parse(argc, argv, &o)))
    return ret;
  pp_ctx_params_init(&cp);
  cp.seed = o.seed;
  if ((rc = pp_ctx_create(&cp, &ctx)))
    return fail(NULL, rc);
  if (!o.cmd)
    ret = cmd_plan(ctx, &o, true);
  else if (!strcmp(o.cmd, "plan"))
    ret = cmd_plan(ctx, &o, false);
  else if (!strcmp(o.cmd, "compare"))
    ret = cmd_compare(ctx, &o);
  else if (!strcmp(o.cmd, "describe"))
    ret = cmd_default(ctx, &o);
  else if (!strcmp(o.cmd, "model"))
    ret = cmd_model(ctx, &o);
  else if (!strcmp(o.cmd, "topo"))
    ret = cmd_topo(ctx, &o);
  else if (!strcmp(o.cmd, "evaluate"))
    ret = cmd_evaluate(ctx, &o);
  else if (!strcmp(o.cmd, "simulate"))
    ret = cmd_simulate(ctx, &o);
  else if (!strcmp(o.cmd, "partition"))
    ret = cmd_partition(ctx, &o);
  else if (!strcmp(o.cmd, "map"))
    ret = cmd_map(ctx, &o);
  else if (!strcmp(o.cmd, "export"))
    ret = cmd_export(ctx, &o);
  else if (!strcmp(o.cmd, "report"))
    ret = cmd_report(ctx, &o);
  else
    ret = usage_error("unknown command '%s'", o.cmd);
  pp_ctx_destroy(ctx);
  return ret;
}
