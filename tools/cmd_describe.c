/* SPDX-License-Identifier: MIT */
/*
** The commands that describe their input: describe (the default model
** and cluster), model SPEC and topo SPEC, with their --list of what is
** built in.
*/
#include "commands.h"

#include <stdio.h>

struct describe_opts {
  struct cli_common c;
  int list, chain; /* chain: 1 the layer-level view, 2 one op a layer */
};

#define DESCRIBE(f) CLI_FIELD(struct describe_opts, f)

static const struct cli_opt list_opts[] = {
    {"--list", CLI_FLAG, DESCRIBE(list), .value = 1,
     .help = "--list        list what is built in: models, or clusters and "
             "generators"},
    {NULL}};

const struct cli_opt chain_opts[] = {
    {"--chain", CLI_FLAG, DESCRIBE(chain), .value = 1,
     .help = "--chain       (model) use the layer-level chain view of a DAG"},
    {"--chain-ops", CLI_FLAG, DESCRIBE(chain), .value = 2,
     .help = "--chain-ops   (model) the chain view with one layer per "
             "operator"},
    {NULL}};

/* Describe the default model and cluster and how the model's profiles
** apply to each device type. */
static int run_describe(pp_ctx *ctx, void *opts)
{
  const struct describe_opts *o = opts;
  int json = o->c.json;
  pp_model *m = NULL;
  pp_cluster *c = NULL;
  pp_status rc;
  int32_t t, d, v, n;

  if ((rc = pp_model_load(ctx, DEFAULT_MODEL, &m)) ||
      (rc = pp_cluster_load(ctx, DEFAULT_CLUSTER, &c))) {
    pp_model_destroy(m);
    return cli_fail(ctx, rc);
  }
  if (!json)
    printf("parplan %s: the built-in default model and cluster.\n\n",
           pp_version());
  else
    printf("{\"model\":\n");
  rc = pp_model_describe(ctx, m, json, stdout);
  if (rc == PP_OK) {
    printf(json ? ",\n\"cluster\":\n" : "\n");
    rc = pp_cluster_describe(ctx, c, json, stdout);
  }
  if (rc == PP_OK && !json) {
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
  if (json && rc == PP_OK)
    printf("}\n");
  pp_model_destroy(m);
  pp_cluster_destroy(c);
  return rc ? cli_fail(ctx, rc) : 0;
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
         "options gpu=TYPE, eff=E,\n"
         "                 memory_format=channels_last|contiguous\n");
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

static int run_model(pp_ctx *ctx, void *opts)
{
  const struct describe_opts *o = opts;
  pp_model *m = NULL, *v = NULL;
  pp_status rc;
  if (o->list)
    return list_models();
  if (!o->c.arg)
    return cli_usage("model", "model needs a SPEC (or --list)");
  if ((rc = pp_model_load(ctx, o->c.arg, &m)))
    return cli_fail(ctx, rc);
  if (o->chain) {
    rc = pp_model_chain_view(ctx, m, o->chain == 2, &v);
    pp_model_destroy(m);
    if (rc)
      return cli_fail(ctx, rc);
    m = v;
  }
  rc = pp_model_describe(ctx, m, o->c.json, stdout);
  if (rc == PP_OK && o->c.out)
    rc = pp_model_write(ctx, m, o->c.out, NULL);
  pp_model_destroy(m);
  return rc ? cli_fail(ctx, rc) : 0;
}

static int run_topo(pp_ctx *ctx, void *opts)
{
  const struct describe_opts *o = opts;
  pp_cluster *c = NULL;
  pp_status rc;
  if (o->list)
    return list_clusters();
  if (!o->c.arg)
    return cli_usage("topo", "topo needs a SPEC (or --list)");
  if ((rc = pp_cluster_load(ctx, o->c.arg, &c)))
    return cli_fail(ctx, rc);
  rc = pp_cluster_describe(ctx, c, o->c.json, stdout);
  if (rc == PP_OK && o->c.out)
    rc = pp_cluster_write(ctx, c, o->c.out, NULL);
  pp_cluster_destroy(c);
  return rc ? cli_fail(ctx, rc) : 0;
}

static const struct cli_opt *const describe_tables[] = {json_opts, NULL};
static const struct cli_opt *const model_tables[] = {list_opts, chain_opts,
                                                     json_opts, out_opts, NULL};
static const struct cli_opt *const topo_tables[] = {list_opts, json_opts,
                                                    out_opts, NULL};

const struct cli_cmd cmd_describe = {
    "describe",
    NULL,
    "describe     describe the default model and cluster",
    describe_tables,
    sizeof(struct describe_opts),
    NULL,
    run_describe};

const struct cli_cmd cmd_model = {
    "model",
    "SPEC",
    "model SPEC   describe a model: a model JSON or PipeDream graph.txt\n"
    "             file, an ONNX file (net.onnx[:batch=B,dim.NAME=N,\n"
    "             dtype=fp32|fp16|bf16,eff=E,memory_format=contiguous,\n"
    "             name=N]),\n"
    "             a built-in name, or transformer:KEY=VALUE,...\n"
    "model --list list the built-in models and the generator",
    model_tables,
    sizeof(struct describe_opts),
    NULL,
    run_model};

const struct cli_cmd cmd_topo = {
    "topo",
    "SPEC",
    "topo SPEC    describe a cluster: a cluster JSON file, nvidia-smi\n"
    "             topo -m output (FILE:gpu=T or gpus=QUERY.csv[,nic=GBITS,\n"
    "             nodes=N,...]), rocm-smi --showtopo output (FILE:gpu=T),\n"
    "             an NCCL or RCCL topology XML (FILE[:nodes=N,inter=GBPS,\n"
    "             ...]), a built-in name, or a generator spec such as\n"
    "             hier:4x8,intra=300,inter=25\n"
    "topo --list  list the built-in clusters and generators",
    topo_tables,
    sizeof(struct describe_opts),
    NULL,
    run_topo};
