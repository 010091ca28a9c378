/* SPDX-License-Identifier: MIT */
/*
** bench_dag: operator-level partitioning of DAGs (Parmesan phase 1).
**
** For each generated model (resnet:depth=50, resnet:depth=152, bert
** (BERT-Large), swin (Swin-L-like), fpn (SemanticFPN on ResNet-50)) and
** each PipeDream DAG (data/pipedream), for S = 4, 8, 16, 32 on a flat
** 10 GB/s network: the time of the whole flow (clustering, DP,
** refinement; median of RUNS), the objective, and its ratio to (a) the
** layer-level DP on the same model grouped by layers (the chain view's
** exact min-max partition, priced with the same operator-level formula)
** and (b) the lower bound max(total / S, heaviest operator).  Then the
** two speed targets: a 20,000-operator graph (BERT with 1,180 layers)
** under 5 s, and raw Inception-v3 and NASNet-A-Large (where PipeDream's
** optimizer does not finish) under 1 s; and the flow on 100,000
** operators (BERT with 5,900 layers).
**
** usage: bench_dag [RUNS]   (default 3)
*/
#define _POSIX_C_SOURCE 200809L
#include "parplan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_d(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void one(pp_ctx *ctx, const char *label, const pp_model *m, int S,
                int runs, double target)
{
  double t[16];
  pp_part_summary sum;
  int i;
  for (i = 0; i < runs; i++) {
    pp_part_params p;
    pp_partition *pt;
    pp_part_params_init(&p);
    p.stages = S;
    if (pp_partition_chain(ctx, m, &p, &pt)) {
      printf("%-28s %3d  %s\n", label, S, pp_ctx_errmsg(ctx));
      pp_ctx_clear_error(ctx);
      return;
    }
    pp_partition_summary(pt, &sum);
    t[i] = sum.seconds;
    pp_partition_destroy(pt);
  }
  qsort(t, (size_t)runs, sizeof *t, cmp_d);
  printf("%-28s %3d %7d %9.3f s %12.3f %9s %8.3f  %-9s%s\n", label, S,
         (int)sum.dag_ops, t[runs / 2], sum.objective_ms,
         sum.dag_layer_ms > 0 ? "" : "-", sum.objective_ms / sum.lower_bound_ms,
         sum.dag_downsets ? "down-sets" : "prefixes",
         target > 0
             ? (t[runs / 2] < target ? "  (target met)" : "  (TARGET MISSED)")
             : "");
  if (sum.dag_layer_ms > 0)
    printf("%-28s %3s %7s %11s %12s %9.3f\n", "", "", "", "",
           "vs layer-level:", sum.objective_ms / sum.dag_layer_ms);
}

int main(int argc, char **argv)
{
  static const char *const gen[] = {"resnet:depth=50", "resnet:depth=152",
                                    "bert", "swin", "fpn"};
  static const char *const pd[] = {
      "alexnet",      "vgg16",         "resnet18",      "resnet50",
      "resnet101",    "resnext50",     "resnext101",    "densenet121",
      "inception_v3", "squeezenet1_0", "nasnetamobile", "nasnetalarge",
      "gnmt",         "gnmt_large"};
  static const int Ss[] = {4, 8, 16, 32};
  int runs = argc > 1 && atoi(argv[1]) > 0 ? atoi(argv[1]) : 3, i, k;
  pp_ctx *ctx;
  pp_model *m;
  char path[512];

  if (runs > 16)
    runs = 16;
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (pp_ctx_create(NULL, &ctx))
    return 2;
  printf("operator-level partitioning, flat 10 GB/s, R = 1 (median of %d)\n",
         runs);
  printf("%-28s %3s %7s %11s %12s %9s %8s  %s\n", "model", "S", "ops", "time",
         "objective ms", "", "vs bound", "DP");
  for (i = 0; i < 5; i++) {
    if (pp_model_load(ctx, gen[i], &m)) {
      fprintf(stderr, "%s\n", pp_ctx_errmsg(ctx));
      return 2;
    }
    for (k = 0; k < 4; k++)
      one(ctx, gen[i], m, Ss[k], runs, 0);
    pp_model_destroy(m);
  }
  for (i = 0; i < (int)(sizeof pd / sizeof pd[0]); i++) {
    char label[64];
    snprintf(path, sizeof path, "%s/data/pipedream/%s/graph.txt", PP_SOURCE_DIR,
             pd[i]);
    if (pp_model_load(ctx, path, &m)) {
      fprintf(stderr, "%s\n", pp_ctx_errmsg(ctx));
      return 2;
    }
    snprintf(label, sizeof label, "pipedream/%s", pd[i]);
    for (k = 0; k < 4; k++)
      one(ctx, label, m, Ss[k], runs, 0);
    pp_model_destroy(m);
  }
  printf("\nspeed targets\n");
  if (pp_model_load(ctx, "bert:layers=1180", &m))
    return 2;
  for (k = 0; k < 4; k++)
    one(ctx, "bert:layers=1180 (20k ops)", m, Ss[k], runs, 5);
  pp_model_destroy(m);
  /* clustering at 100,000 operators */
  if (pp_model_load(ctx, "bert:layers=5900", &m))
    return 2;
  one(ctx, "bert:layers=5900 (100k ops)", m, 32, 1, 0);
  pp_model_destroy(m);
  for (i = 0; i < 2; i++) {
    const char *name = i ? "nasnetalarge" : "inception_v3";
    snprintf(path, sizeof path, "%s/data/pipedream/%s/graph.txt", PP_SOURCE_DIR,
             name);
    if (pp_model_load(ctx, path, &m))
      return 2;
    for (k = 0; k < 4; k++)
      one(ctx, name, m, Ss[k], runs, 1);
    pp_model_destroy(m);
  }
  pp_ctx_destroy(ctx);
  return 0;
}
