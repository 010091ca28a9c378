/* SPDX-License-Identifier: MIT */
/*
** bench_map: device mapping on [Parmesan] Table 2's grid.
**
** Topologies: 2D/3D mesh and torus (hop-routed 25 GB/s links),
** random_blk_1, random_blk_2, uniform_dist, for Table 2's nine (S, R) from
** (4, 16) to (16, 32) (64, 256 and 512 devices); stage graphs from the
** chain partition of the FPN-like model (`fpn`: its skip connections
** become stage-graph edges), the objective chosen by the
** paper's rule (auto).  Per cell: the exact search's value, whether it is
** proven optimal (else its gap to the proven lower bound), its time
** (limit 10 s, 2 threads), and its speedup over the consecutive mapping
** (CS) and over Scotch, all measured in the same run.  Then DGX-1 (2
** nodes) and AMP's mixed cluster with a BERT stage graph.
**
** usage: bench_map [TIME_LIMIT_S]   (default 10)
*/
#define _POSIX_C_SOURCE 200809L
#include "parplan.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pp_stage_graph *stages_of(pp_ctx *ctx, const char *model, int S)
{
  pp_model *m;
  pp_part_params p;
  pp_partition *pt;
  pp_stage_graph *g;
  if (pp_model_load(ctx, model, &m))
    return NULL;
  pp_part_params_init(&p);
  p.stages = S;
  if (pp_partition_chain(ctx, m, &p, &pt)) {
    pp_model_destroy(m);
    return NULL;
  }
  if (pp_partition_stage_graph(ctx, pt, &g))
    g = NULL;
  pp_partition_destroy(pt);
  pp_model_destroy(m);
  return g;
}

static double run(pp_ctx *ctx, const pp_stage_graph *g, const pp_cluster *c,
                  int R, pp_map_algorithm alg, double limit,
                  pp_map_summary *sum)
{
  pp_map_params p;
  pp_mapping *m;
  pp_map_params_init(&p);
  p.replicas = R;
  p.algorithm = alg;
  p.time_limit_s = limit;
  p.threads = 2;
  if (pp_map(ctx, g, c, &p, &m)) {
    fprintf(stderr, "bench_map: %s\n", pp_ctx_errmsg(ctx));
    exit(2);
  }
  pp_mapping_summary(m, sum);
  pp_mapping_destroy(m);
  return sum->objective_ms;
}

static void cell(pp_ctx *ctx, const char *topo, const char *model, int S, int R,
                 double limit, int *met, int *cells)
{
  pp_cluster *c;
  pp_stage_graph *g;
  pp_map_summary ex, cs, sc;
  double vex, vcs, vsc, gap;
  bool ok;
  if (pp_cluster_load(ctx, topo, &c)) {
    fprintf(stderr, "bench_map: %s\n", pp_ctx_errmsg(ctx));
    exit(2);
  }
  if (!(g = stages_of(ctx, model, S))) {
    fprintf(stderr, "bench_map: %s\n", pp_ctx_errmsg(ctx));
    exit(2);
  }
  vex = run(ctx, g, c, R, PP_MAP_EXACT, limit, &ex);
  vcs = run(ctx, g, c, R, PP_MAP_CS, limit, &cs);
  vsc = run(ctx, g, c, R, PP_MAP_SCOTCH, limit, &sc);
  gap = ex.lower_bound_ms > 0 ? vex / ex.lower_bound_ms - 1 : 0;
  ok = ex.optimal || gap <= 0.01;
  if (pp_cluster_ndev(c) <= 256) {
    (*cells)++;
    *met += ok;
  }
  printf("%-22s %-6s %3d x %-3d %-9s %11.3f %9s %7.2f%% %8.2f s %8.2fx "
         "%8.2fx\n",
         topo, model, S, R, pp_map_objective_name(ex.objective), vex,
         ex.optimal ? "yes" : "no", 100 * gap, ex.seconds, vcs / vex,
         vsc / vex);
  pp_stage_graph_destroy(g);
  pp_cluster_destroy(c);
}

int main(int argc, char **argv)
{
  /* [Parmesan] Table 2's columns; a regular topology exists only where D
  ** is a square (2D: 8x8, 16x16) or a cube (3D: 4x4x4, 8x8x8) */
  static const int SR[9][2] = {{4, 16},  {8, 8},   {16, 4}, {4, 64}, {8, 32},
                               {16, 16}, {4, 128}, {8, 64}, {16, 32}};
  double limit = argc > 1 && atof(argv[1]) > 0 ? atof(argv[1]) : 10;
  pp_ctx *ctx;
  int i, k, met = 0, cells = 0;
  char topo[64];

  setvbuf(stdout, NULL, _IOLBF, 0);
  if (pp_ctx_create(NULL, &ctx))
    return 2;
  printf("device mapping, exact search (limit %.0f s, 2 threads) vs CS and "
         "Scotch\n",
         limit);
  printf("%-22s %-6s %-9s %-9s %11s %9s %8s %10s %9s %9s\n", "topology",
         "model", "S x R", "objective", "exact ms", "optimal", "gap", "time",
         "vs CS", "vs Scotch");
  for (k = 0; k < 7; k++)
    for (i = 0; i < 9; i++) {
      int D = SR[i][0] * SR[i][1];
      const char *side2 = D == 64 ? "8x8" : D == 256 ? "16x16" : NULL;
      const char *side3 = D == 64 ? "4x4x4" : D == 512 ? "8x8x8" : NULL;
      switch (k) {
      case 0:
      case 1:
        if (!side2)
          continue;
        snprintf(topo, sizeof topo, "%s:%s", k ? "torus2d" : "mesh2d", side2);
        break;
      case 2:
      case 3:
        if (!side3)
          continue;
        snprintf(topo, sizeof topo, "%s:%s", k == 3 ? "torus3d" : "mesh3d",
                 side3);
        break;
      case 4: snprintf(topo, sizeof topo, "random_blk_1:%d", D); break;
      case 5: snprintf(topo, sizeof topo, "random_blk_2:%d", D); break;
      default: snprintf(topo, sizeof topo, "uniform_dist:%d", D); break;
      }
      cell(ctx, topo, "fpn", SR[i][0], SR[i][1], limit, &met, &cells);
    }
  cell(ctx, "dgx1:2", "bert", 4, 4, limit, &met, &cells);
  cell(ctx, "amp-het-cluster", "bert", 4, 4, limit, &met, &cells);
  printf("\ncells of up to 256 devices proven optimal or within 1%% of the "
         "lower bound: %d of %d\n",
         met, cells);
  pp_ctx_destroy(ctx);
  return 0;
}
