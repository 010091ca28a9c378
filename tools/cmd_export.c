/* SPDX-License-Identifier: MIT */
/*
** export PLAN --to ENGINE: the files an engine launches a plan with (the
** library's engines), or the launch files, hostfile and a script per
** host (--to launch, the tool's own).
*/
#include "commands.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

struct export_opts {
  struct cli_common c;
  int to; /* an index of to_at, -1: none given */
};

#define EXPORT(f) CLI_FIELD(struct export_opts, f)

/* The library's engines, then launch. */
static const char *to_at(int i)
{
  int n = 0;
  while (pp_export_engine_name(n))
    n++;
  return i < n ? pp_export_engine_name(i) : i == n ? "launch" : NULL;
}

static const struct cli_opt export_opts[] = {
    {"--to", CLI_ENUM, EXPORT(to), .names = to_at,
     .help = "--to ENGINE   the engine whose files to write (required)"},
    {"-o", CLI_STRING, EXPORT(c.out),
     .help = "-o DIR        write the files into DIR, made when missing;\n"
             "              without it, print them"},
    {NULL}};

static void init_export(void *opts)
{
  struct export_opts *o = opts;
  o->to = -1;
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
    return cli_usage("export", "-o: directory name too long: %s", dir);
  return 0;
}

/* export --to launch -o DIR: DIR/hostfile and DIR/launch_HOST.sh. */
static int export_launch(pp_ctx *ctx, const struct cli_common *o)
{
  struct plan_inputs in;
  pp_launch *x = NULL;
  pp_status rc;
  int ret, h;
  char path[4096];

  if (!o->out)
    return cli_usage("export", "export --to launch needs -o DIR");
  if ((ret = load_plan(ctx, "export", o, &in)))
    return ret;
  rc = pp_export_launch(ctx, in.p, in.m, in.c, &x);
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
    ret = cli_fail(ctx, rc);
  pp_launch_destroy(x);
  free_plan(&in);
  return ret;
}

/* The engine's files in DIR, or their text on stdout (several files:
** each after a "==> NAME <==" line); warnings on stderr for what the
** engine cannot express. */
static int run_export(pp_ctx *ctx, void *opts)
{
  const struct export_opts *o = opts;
  struct plan_inputs in;
  pp_export *x = NULL;
  pp_status rc;
  int ret, i;
  char engines[256];

  if (o->to < 0) {
    cli_names(to_at, engines, sizeof engines);
    return cli_usage("export", "export needs --to %s", engines);
  }
  if (!pp_export_engine_name(o->to))
    return export_launch(ctx, &o->c);
  if ((ret = load_plan(ctx, "export", &o->c, &in)))
    return ret;
  rc = pp_export_to(ctx, to_at(o->to), in.p, in.m, in.c, &x);
  for (i = 0; rc == PP_OK && !ret && i < pp_export_nfile(x); i++) {
    const char *name = pp_export_file_name(x, i);
    char path[4096];
    if (o->c.out) {
      if (!(ret = out_path(o->c.out, name, path, sizeof path)) &&
          (rc = pp_export_write_file(ctx, x, i, path, NULL)) == PP_OK)
        printf("wrote %s\n", path);
    } else {
      if (pp_export_nfile(x) > 1)
        printf("%s==> %s <==\n", i ? "\n" : "", name);
      rc = pp_export_write_file(ctx, x, i, NULL, stdout);
    }
  }
  if (rc)
    ret = cli_fail(ctx, rc);
  for (i = 0; !rc && !ret && i < pp_export_nwarning(x); i++)
    fprintf(stderr, "parplan: warning: %s\n", pp_export_warning(x, i));
  pp_export_destroy(x);
  free_plan(&in);
  return ret;
}

static const struct cli_opt *const export_tables[] = {
    model_opts, cluster_opts, export_opts, run_opts, NULL};

const struct cli_cmd cmd_export = {
    "export",
    "PLAN",
    "export PLAN --model M --cluster C\n"
    "       --to megatron|deepspeed|torch|pipedream|launch [-o DIR]\n"
    "             the engine's files: Megatron-LM arguments and layout;\n"
    "             DeepSpeed config and stage boundaries; torch pipelining\n"
    "             schedule CSV, split points and torchtitan TOML; PipeDream\n"
    "             stage-to-rank maps; launch: hostfile and per-host\n"
    "             scripts; warnings for what the engine cannot express",
    export_tables,
    sizeof(struct export_opts),
    init_export,
    run_export};
