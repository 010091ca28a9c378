/* SPDX-License-Identifier: MIT */
/*
** parplan: the command-line tool.  It uses only include/parplan.h, owns
** argument parsing, exit codes and everything printed to the terminal.
**
** Exit status (DESIGN.md): 0 success; 1 bad input or usage; 2 internal
** error (including running out of memory); 3 "nothing fits" (a result,
** used by the planner commands).
*/
#include "parplan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MODEL "gpt2-amp"
#define DEFAULT_CLUSTER "amp-het-cluster"

static const char *usage_text =
    "usage: parplan [COMMAND] [OPTIONS]\n"
    "\n"
    "With no command, describe the built-in default: the model " DEFAULT_MODEL
    " on\nthe cluster " DEFAULT_CLUSTER ".\n"
    "\n"
    "commands:\n"
    "  model SPEC   describe a model: a model JSON or PipeDream graph.txt "
    "file,\n"
    "               a built-in name, or transformer:KEY=VALUE,...\n"
    "  model --list list the built-in models and the generator\n"
    "  topo SPEC    describe a cluster: a cluster JSON file, a built-in "
    "name,\n"
    "               or a generator spec such as hier:4x8,intra=300,inter=25\n"
    "  topo --list  list the built-in clusters and generators\n"
    "\n"
    "options:\n"
    "  --json        print the description as JSON\n"
    "  -o FILE       also write the normalized model or cluster JSON to FILE\n"
    "  --chain       (model) use the layer-level chain view of a DAG\n"
    "  --chain-ops   (model) the chain view with one layer per operator\n"
    "  --seed N      seed of random generators (default 1)\n"
    "  -h, --help    this text;  --version  the version\n"
    "\n"
    "exit status: 0 success, 1 bad input or usage, 2 internal error.\n"
    "Formats and generators: docs/FORMATS.md.\n";

struct opts {
  const char *cmd, *spec, *out;
  int json, chain, list;
  unsigned long long seed;
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

static int parse(int argc, char **argv, struct opts *o)
{
  int i;
  memset(o, 0, sizeof *o);
  o->seed = 1;
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
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
    else if (!strcmp(a, "-o") || !strcmp(a, "--seed")) {
      if (i + 1 >= argc)
        return usage_error("%s needs a value", a);
      if (a[1] == 'o')
        o->out = argv[++i];
      else {
        char *end;
        const char *v = argv[++i];
        errno = 0;
        o->seed = strtoull(v, &end, 10);
        if (end == v || *end || errno || *v == '-')
          return usage_error("--seed needs a non-negative integer, not '%s'",
                             v);
      }
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
         "FLOPs\n");
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

/* The default job: describe the default model and cluster and how the
** model's profiles apply to each device type. */
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
    printf("parplan %s: the built-in default (planning arrives with "
           "'parplan plan').\n\n",
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
    ret = cmd_default(ctx, &o);
  else if (!strcmp(o.cmd, "model"))
    ret = cmd_model(ctx, &o);
  else if (!strcmp(o.cmd, "topo"))
    ret = cmd_topo(ctx, &o);
  else
    ret = usage_error("unknown command '%s'", o.cmd);
  pp_ctx_destroy(ctx);
  return ret;
}
