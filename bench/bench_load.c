/* SPDX-License-Identifier: MIT */
/*
** bench_load: how long it takes to load and validate big inputs.
**
** Figures (median of R runs, wall clock, this machine):
**   - a 100,000-operator DAG from a model JSON file (read, parse, check,
**     CSR, topological order), then its figures and its chain view;
**   - 4,096-device clusters: a link-graph cluster JSON file (512 nodes of
**     8 GPUs with switches, widest-path routing), the hier:512x8,
**     nvswitch:512 and torus3d:16x16x16 generators (hop routing), and
**     uniform_dist:4096 (a dense random matrix);
**   - a dense 1,024-device bandwidth matrix from JSON (1M numbers);
**   - PipeDream's largest profile (NASNet-A large) from graph.txt.
** The foundation issue's target is under 1 s for the 100,000-operator
** DAG and the 4,096-device cluster.
**
** usage: bench_load [RUNS]   (default 5)
*/
#define _POSIX_C_SOURCE 200809L
#include "parplan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void die(pp_ctx *ctx, const char *what)
{
  fprintf(stderr, "bench_load: %s: %s\n", what, pp_ctx_errmsg(ctx));
  exit(2);
}

/* A DAG of n operators: a chain with a skip edge every 4 and a branch
** every 16, as residual networks have. */
static void write_dag(const char *path, int n)
{
  FILE *f = fopen(path, "w");
  int i;
  if (!f) {
    perror(path);
    exit(2);
  }
  fprintf(f, "{\"name\": \"bench-dag\", \"micro_batch\": 8, \"ops\": [\n");
  for (i = 0; i < n; i++)
    fprintf(f,
            "%s{\"name\": \"op%d\", \"kind\": \"%s\", \"fwd_ms\": %.3f, "
            "\"bwd_ms\": %.3f, \"param_bytes\": %d, \"out_bytes\": %d, "
            "\"saved_bytes\": %d}\n",
            i ? "," : "", i, i % 4 ? "Conv2d" : "Add", 0.1 + (i % 7) * 0.05,
            0.2 + (i % 5) * 0.1, (i % 4) * 4096, 1 << 20, 1 << 19);
  fprintf(f, "], \"edges\": [\n");
  for (i = 0; i + 1 < n; i++)
    fprintf(f, "%s{\"from\": %d, \"to\": %d}\n", i ? "," : "", i, i + 1);
  for (i = 0; i + 4 < n; i += 4)
    fprintf(f, ",{\"from\": %d, \"to\": %d, \"bytes\": 1048576}\n", i, i + 4);
  for (i = 1; i + 3 < n; i += 16)
    fprintf(f, ",{\"from\": %d, \"to\": %d}\n", i, i + 2);
  fprintf(f, "]}\n");
  fclose(f);
}

typedef int (*job_fn)(pp_ctx *ctx, const char *arg);

static int job_model(pp_ctx *ctx, const char *arg)
{
  pp_model *m = NULL;
  if (pp_model_load(ctx, arg, &m))
    die(ctx, arg);
  pp_model_destroy(m);
  return 0;
}

static int job_cluster(pp_ctx *ctx, const char *arg)
{
  pp_cluster *c = NULL;
  if (pp_cluster_load(ctx, arg, &c))
    die(ctx, arg);
  pp_cluster_destroy(c);
  return 0;
}

static pp_model *keep_model;
static int job_stats(pp_ctx *ctx, const char *arg)
{
  pp_model_stats st;
  (void)arg;
  if (pp_model_stats_get(ctx, keep_model, &st))
    die(ctx, "stats");
  return 0;
}

static int job_chain(pp_ctx *ctx, const char *arg)
{
  pp_model *c = NULL;
  (void)arg;
  if (pp_model_chain_view(ctx, keep_model, 0, &c))
    die(ctx, "chain view");
  pp_model_destroy(c);
  return 0;
}

static void measure(pp_ctx *ctx, int runs, const char *label, job_fn fn,
                    const char *arg, double target)
{
  double t[64], med;
  int r;
  if (runs > 64)
    runs = 64;
  for (r = 0; r < runs; r++) {
    double t0 = now();
    fn(ctx, arg);
    t[r] = now() - t0;
  }
  qsort(t, (size_t)runs, sizeof t[0], cmp_d);
  med = t[runs / 2];
  printf("  %-52s %9.1f ms  (min %.1f, max %.1f)", label, med * 1e3, t[0] * 1e3,
         t[runs - 1] * 1e3);
  if (target > 0)
    printf("  %s 1 s target", med < target ? "within" : "MISSES");
  printf("\n");
}

int main(int argc, char **argv)
{
  int runs = argc > 1 ? atoi(argv[1]) : 5;
  pp_ctx *ctx = NULL;
  char dir[] = "/tmp/parplan-bench-XXXXXX", dag[256], links[256], dense[256];
  pp_cluster *c = NULL;
  long size;
  FILE *f;

  if (runs < 1)
    runs = 1;
  if (pp_ctx_create(NULL, &ctx) || !mkdtemp(dir))
    return 2;
  snprintf(dag, sizeof dag, "%s/dag100k.json", dir);
  snprintf(links, sizeof links, "%s/links4096.json", dir);
  snprintf(dense, sizeof dense, "%s/dense1024.json", dir);
  write_dag(dag, 100000);
  if (pp_cluster_load(ctx, "hier:512x8,intra=300,inter=25,gpu=A100-80", &c) ||
      pp_cluster_write(ctx, c, links, NULL))
    die(ctx, "writing the link-graph cluster");
  pp_cluster_destroy(c);
  if (pp_cluster_load(ctx, "uniform_dist:1024", &c) ||
      pp_cluster_write(ctx, c, dense, NULL))
    die(ctx, "writing the dense cluster");
  pp_cluster_destroy(c);
  f = fopen(dag, "r");
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  fclose(f);

  printf("bench_load: median of %d runs (wall clock; the machine is shared, "
         "so expect noise)\n",
         runs);
  printf("models\n");
  {
    char label[96];
    snprintf(label, sizeof label,
             "100,000-op DAG, JSON file (%.1f MB): load + validate",
             size / 1e6);
    measure(ctx, runs, label, job_model, dag, 1.0);
  }
  if (pp_model_load(ctx, dag, &keep_model))
    die(ctx, dag);
  measure(ctx, runs, "  its figures (depth, width, cuts, layer count)",
          job_stats, NULL, 0);
  measure(ctx, runs, "  its layer-level chain view", job_chain, NULL, 0);
  pp_model_destroy(keep_model);
  measure(ctx, runs, "PipeDream nasnetalarge graph.txt", job_model,
          "data/pipedream/nasnetalarge/graph.txt", 0);
  measure(ctx, runs, "built-in opt-350 (Sailor, 5,000+ profile points)",
          job_model, "opt-350", 0);
  printf("clusters\n");
  measure(ctx, runs, "4,096 devices, link-graph JSON file (widest path)",
          job_cluster, links, 1.0);
  measure(ctx, runs, "4,096 devices, hier:512x8 (widest path)", job_cluster,
          "hier:512x8", 1.0);
  measure(ctx, runs, "4,096 devices, nvswitch:512,gpu=H100", job_cluster,
          "nvswitch:512,gpu=H100", 1.0);
  measure(ctx, runs, "4,096 devices, torus3d:16x16x16 (hop routing)",
          job_cluster, "torus3d:16x16x16", 1.0);
  measure(ctx, runs, "4,096 devices, uniform_dist:4096 (dense random)",
          job_cluster, "uniform_dist:4096", 1.0);
  measure(ctx, runs, "1,024 devices, dense bandwidth matrix JSON file",
          job_cluster, dense, 0);
  remove(dag);
  remove(links);
  remove(dense);
  rmdir(dir);
  pp_ctx_destroy(ctx);
  return 0;
}
