/* SPDX-License-Identifier: MIT */
/*
** bench_sim: how fast plans are priced.
**
** Figures (median of R runs, wall clock, this machine):
**   - the discrete-event simulator on a 1,024-device plan (hier:128x8,
**     a 64-layer transformer in 16 stages x 64 replicas, 64 micro-batches
**     per replica, 1F1B, ring allreduce): tasks simulated per second, with
**     events recorded (trace, Gantt, critical path) and without;
**   - the same with tp 8 (8 stages x 16 replicas x 8 ranks);
**   - link sharing (PP_NET_LINKS) on a 256-device torus3d:8x8x4 plan;
**   - analytic evaluations per second (pp_evaluate, plan check included)
**     of the 1,024-device plan and of a 16-device plan of AMP's GPT-2.
** The ratio simulated/analytic iteration time is printed for each plan,
** side by side in the same run.
**
** usage: bench_sim [RUNS]   (default 3)
*/
#define _POSIX_C_SOURCE 200809L
#include "parplan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
  fprintf(stderr, "bench_sim: %s: %s\n", what, pp_ctx_errmsg(ctx));
  exit(2);
}

/* S stages of an L-op chain split evenly, R replicas, tp ranks; replica
** r of stage s on devices (s * R + r) * tp + k, so a replica's tp group
** sits in one node and a stage's replicas spread over nodes. */
static pp_plan *make_plan(pp_ctx *ctx, int32_t nop, int32_t S, int32_t R,
                          int32_t tp, int64_t gas)
{
  pp_plan_params pp;
  pp_plan_builder *b;
  pp_plan *p;
  int32_t s, r, k, *ops = malloc(sizeof *ops * (size_t)nop), devs[64];
  pp_plan_params_init(&pp);
  pp.tp = tp;
  pp.global_batch = gas * R;
  pp.schedule = PP_SCHED_1F1B;
  if (!ops || pp_plan_builder_create(ctx, &pp, "bench plan", &b))
    die(ctx, "plan");
  for (s = 0; s < S; s++) {
    int32_t a = (int32_t)((int64_t)nop * s / S),
            z = (int32_t)((int64_t)nop * (s + 1) / S), i;
    for (i = a; i < z; i++)
      ops[i - a] = i;
    if (pp_plan_builder_add_stage(b, ops, z - a, NULL))
      die(ctx, "stage");
    for (r = 0; r < R; r++) {
      for (k = 0; k < tp; k++)
        devs[k] = (s * R + r) * tp + k;
      if (pp_plan_builder_add_replica(b, s, devs))
        die(ctx, "replica");
    }
  }
  if (pp_plan_builder_finish(b, &p))
    die(ctx, "finish");
  free(ops);
  return p;
}

static void bench_sim(pp_ctx *ctx, const char *label, const pp_model *m,
                      const pp_cluster *c, const pp_plan *p, pp_sim_network net,
                      int runs)
{
  double t[2][16], sim_ms = 0, ana_ms = 0;
  int64_t ntask = 0;
  int rec, i;
  for (rec = 0; rec < 2; rec++)
    for (i = 0; i < runs; i++) {
      pp_cost_params cp;
      pp_sim *s;
      pp_sim_summary sum;
      double t0;
      pp_cost_params_init(&cp);
      cp.record = rec;
      cp.network = net;
      t0 = now();
      if (pp_simulate(ctx, p, m, c, &cp, &s))
        die(ctx, label);
      t[rec][i] = now() - t0;
      pp_sim_get_summary(s, &sum);
      ntask = sum.nevents;
      sim_ms = sum.iteration_ms;
      ana_ms = sum.analytic_ms;
      pp_sim_destroy(s);
    }
  qsort(t[0], (size_t)runs, sizeof(double), cmp_d);
  qsort(t[1], (size_t)runs, sizeof(double), cmp_d);
  printf("%-44s %9lld tasks  %8.1f ms  %6.2f M tasks/s  (recording: %7.1f "
         "ms, %5.2f M/s)\n",
         label, (long long)ntask, t[0][runs / 2] * 1e3,
         ntask / t[0][runs / 2] / 1e6, t[1][runs / 2] * 1e3,
         ntask / t[1][runs / 2] / 1e6);
  printf("%-44s simulated %.1f ms / analytic %.1f ms = %.3f\n", "", sim_ms,
         ana_ms, sim_ms / ana_ms);
}

static void bench_eval(pp_ctx *ctx, const char *label, const pp_model *m,
                       const pp_cluster *c, const pp_plan *p, double secs)
{
  int64_t n = 0;
  double t0 = now(), el;
  pp_cost_params cp;
  pp_cost_params_init(&cp);
  do {
    pp_eval *e;
    if (pp_evaluate(ctx, p, m, c, &cp, &e))
      die(ctx, label);
    pp_eval_destroy(e);
    n++;
    el = now() - t0;
  } while (el < secs);
  printf("%-44s %9lld evaluations in %.2f s: %10.0f per second\n", label,
         (long long)n, el, n / el);
}

int main(int argc, char **argv)
{
  int runs = argc > 1 ? atoi(argv[1]) : 3;
  pp_ctx *ctx;
  pp_model *m, *g;
  pp_cluster *c, *tor, *amp;
  pp_plan *p1, *p2, *p3, *pa;

  if (runs < 1 || runs > 16)
    runs = 3;
  if (pp_ctx_create(NULL, &ctx))
    return 2;
  if (pp_model_load(ctx,
                    "transformer:layers=64,hidden=4096,heads=32,seq=2048,"
                    "vocab=50257,gpu=A100-80",
                    &m) ||
      pp_model_load(ctx, "gpt2-amp", &g) ||
      pp_cluster_load(ctx, "hier:128x8,intra=300,inter=25,gpu=A100-80", &c) ||
      pp_cluster_load(ctx, "torus3d:8x8x4,gpu=A100-80", &tor) ||
      pp_cluster_load(ctx, "amp-het-cluster", &amp))
    die(ctx, "load");
  printf("bench_sim: median of %d runs; model %s (%d operators)\n", runs,
         pp_model_name(m), (int)pp_model_nop(m));
  p1 = make_plan(ctx, pp_model_nop(m), 16, 64, 1, 64);
  p2 = make_plan(ctx, pp_model_nop(m), 8, 16, 8, 64);
  p3 = make_plan(ctx, pp_model_nop(m), 8, 32, 1, 16);
  pa = make_plan(ctx, pp_model_nop(g), 4, 4, 1, 8);
  bench_sim(ctx, "1,024 devices: 16 stages x 64 replicas, gas 64", m, c, p1,
            PP_NET_CHANNELS, runs);
  bench_sim(ctx, "1,024 devices: 8 x 16 x tp 8, gas 64", m, c, p2,
            PP_NET_CHANNELS, runs);
  bench_sim(ctx, "256-device torus, shared links: 8 x 32, gas 16", m, tor, p3,
            PP_NET_LINKS, runs);
  bench_sim(ctx, "256-device torus, channels:     8 x 32, gas 16", m, tor, p3,
            PP_NET_CHANNELS, runs);
  bench_eval(ctx, "analytic, 1,024 devices (16 x 64, gas 64)", m, c, p1, 1.0);
  bench_eval(ctx, "analytic, 1,024 devices (8 x 16 x tp 8)", m, c, p2, 1.0);
  bench_eval(ctx, "analytic, gpt2-amp on amp-het-cluster 4 x 4", g, amp, pa,
             1.0);
  pp_plan_destroy(p1);
  pp_plan_destroy(p2);
  pp_plan_destroy(p3);
  pp_plan_destroy(pa);
  pp_model_destroy(m);
  pp_model_destroy(g);
  pp_cluster_destroy(c);
  pp_cluster_destroy(tor);
  pp_cluster_destroy(amp);
  pp_ctx_destroy(ctx);
  return 0;
}
