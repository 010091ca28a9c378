/* SPDX-License-Identifier: MIT */
/*
** export PLAN --to ENGINE: the files an engine launches a plan with (the
** library's engines), or the launch files, hostfile and a script per
** host (--to launch, the tool's own).
*/
#include "commands.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
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

/* After a complete export of kind `kind` into dir: the files the last
** export of that kind wrote there (its manifest, DIR/.parplan-export-KIND)
** and this one did not are removed, so the folder holds one export, not
** a mix (a 1-host launch export over a 4-host one left launch_node1..3.sh
** with the old world size, issue 22); then the new manifest.  Only names
** without a '/' are ever removed.  0 or an exit status. */
static int finish_dir(const char *dir, const char *kind, char **names, int n)
{
  char man[4096], tmp[4200], line[1024];
  FILE *f;
  int i;
  if ((size_t)snprintf(man, sizeof man, "%s/.parplan-export-%s", dir, kind) >=
      sizeof man)
    return 1;
  if ((f = fopen(man, "r"))) {
    while (fgets(line, sizeof line, f)) {
      char old[4200];
      bool kept = false;
      line[strcspn(line, "\n")] = '\0';
      if (!*line || strchr(line, '/') || !strcmp(line, ".") ||
          !strcmp(line, ".."))
        continue;
      for (i = 0; i < n && !kept; i++)
        kept = !strcmp(names[i], line);
      snprintf(old, sizeof old, "%s/%s", dir, line);
      if (!kept && !remove(old))
        printf("removed %s (from the last %s export)\n", old, kind);
    }
    fclose(f);
  }
  snprintf(tmp, sizeof tmp, "%s.tmp", man);
  if (!(f = fopen(tmp, "w"))) {
    fprintf(stderr, "parplan: %s: cannot write: %s\n", tmp, strerror(errno));
    return 1;
  }
  for (i = 0; i < n; i++)
    fprintf(f, "%s\n", names[i]);
  if (fclose(f) || rename(tmp, man)) {
    fprintf(stderr, "parplan: %s: cannot write: %s\n", man, strerror(errno));
    remove(tmp);
    return 1;
  }
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
    int nh = pp_launch_nhost(x);
    char **names = calloc((size_t)nh + 1, sizeof *names);
    char *buf = calloc((size_t)nh + 1, 256);
    if (!names || !buf)
      ret = cli_fail(NULL, PP_ENOMEM);
    for (h = 0; !ret && h <= nh; h++) {
      names[h] = buf + (size_t)h * 256;
      if (h < nh)
        snprintf(names[h], 256, "launch_%s.sh", pp_launch_host(x, h));
      else
        snprintf(names[h], 256, "hostfile");
    }
    if (!ret)
      ret = finish_dir(o->out, "launch", names, nh + 1);
    free(buf);
    free(names);
  }
  if (rc == PP_OK && !ret) {
    printf("wrote %s/hostfile and %d launch scripts\n", o->out,
           (int)pp_launch_nhost(x));
    if (!pp_launch_torchrun_ok(x))
      fprintf(stderr,
              "parplan: warning: torchrun and DeepSpeed's launcher number "
              "ranks host by host, the same count on each, on a host's GPUs "
              "0, 1, ... in order: they would not place these ranks; use "
              "the scripts, which set every rank and its GPU explicitly\n");
  }
  if (rc)
    ret = cli_fail(ctx, rc);
  pp_launch_destroy(x);
  free_plan(&in);
  return ret;
}

/* What the plan is predicted to take, on stderr (stdout may carry the
** files): the iteration time with its interval and the device with the
** least room at the upper end of its memory interval, as evaluate
** prices them (--calibration, --reserve-gb); a warning where that device
** may run out of memory.  The export goes on: the user decides. */
static int export_prediction(pp_ctx *ctx, const struct cli_common *o,
                             const struct plan_inputs *in)
{
  pp_eval *e = NULL;
  pp_eval_summary s;
  pp_status rc;
  int32_t d, worst = -1, nd = pp_cluster_ndev(in->c);
  double room = 0, gib = 1024.0 * 1024.0 * 1024.0;
  char name[256] = "";

  if ((rc = pp_evaluate(ctx, in->p, in->m, in->c, &o->cost, &e)) ||
      (rc = pp_eval_get_summary(e, &s))) {
    pp_eval_destroy(e);
    return cli_fail(ctx, rc);
  }
  for (d = 0; d < nd; d++) {
    pp_device_memory dm;
    double r;
    if (pp_eval_device(e, d, &dm) || !dm.used)
      continue;
    r = (double)dm.capacity_bytes - dm.total_bytes * (1 + 2 * dm.spread);
    if (worst < 0 || r < room) {
      worst = d;
      room = r;
    }
  }
  if (worst >= 0) {
    pp_device_desc dd;
    if (pp_cluster_device(in->c, worst, &dd) == PP_OK && dd.name)
      snprintf(name, sizeof name, " ('%s')", dd.name);
  }
  fprintf(
      stderr, "parplan: as priced (%s%s): iteration %.1f ms, %.1f to %.1f ms",
      o->calibration ? "calibration " : "uncalibrated",
      o->calibration ? o->calibration : "", s.iteration_ms,
      s.iteration_ms * (1 - 2 * s.time_spread > 0 ? 1 - 2 * s.time_spread : 0),
      s.iteration_ms * (1 + 2 * s.time_spread));
  if (worst >= 0 && room >= 0)
    fprintf(stderr,
            "; device %d%s fits with %.1f GiB to spare at the upper end of "
            "its memory interval\n",
            (int)worst, name, room / gib);
  else if (worst >= 0)
    fprintf(stderr,
            "\nparplan: warning: device %d%s needs %.1f GiB more at the "
            "upper end of its memory interval: the run may fail out of "
            "memory\n",
            (int)worst, name, -room / gib);
  else
    fputc('\n', stderr);
  pp_eval_destroy(e);
  return 0;
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
  if ((ret = export_prediction(ctx, &o->c, &in))) {
    free_plan(&in);
    return ret;
  }
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
  if (!rc && !ret && o->c.out) {
    int n = pp_export_nfile(x);
    char **names = calloc((size_t)n + 1, sizeof *names);
    if (!names)
      ret = cli_fail(NULL, PP_ENOMEM);
    for (i = 0; !ret && i < n; i++)
      names[i] = (char *)pp_export_file_name(x, i);
    if (!ret)
      ret = finish_dir(o->c.out, to_at(o->to), names, n);
    free(names);
  }
  for (i = 0; !rc && !ret && i < pp_export_nwarning(x); i++)
    fprintf(stderr, "parplan: warning: %s\n", pp_export_warning(x, i));
  pp_export_destroy(x);
  free_plan(&in);
  return ret;
}

static const struct cli_opt *const export_tables[] = {
    model_opts,   cluster_opts, export_opts, run_opts,
    reserve_opts, calib_opts,   NULL};

const struct cli_cmd cmd_export = {
    "export",
    "PLAN",
    "export PLAN --model M --cluster C\n"
    "       --to megatron|deepspeed|torch|pipedream|launch [-o DIR]\n"
    "             the engine's files: Megatron-LM arguments and layout;\n"
    "             DeepSpeed config and stage boundaries; torch pipelining\n"
    "             schedule CSV, split points and torchtitan config; PipeDream\n"
    "             stage-to-rank maps; launch: hostfile and per-host\n"
    "             scripts; warnings for what the engine cannot express;\n"
    "             on stderr the plan's predicted time and memory room\n"
    "             (with --calibration, as calibrated)",
    export_tables,
    sizeof(struct export_opts),
    init_export,
    run_export};
