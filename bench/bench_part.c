/* SPDX-License-Identifier: MIT */
/*
** bench_part: how fast and how good the chain partitioners are.
**
** (a) Time per call (median of RUNS, the algorithm alone: the summary's
**     seconds) of every partitioner on AMP's GPT-2 profile (L = 30) and on
**     chains of 1,000 and 10,000 layers derived from it (its 24
**     transformer layers repeated with +-20 % seeded jitter; labelled
**     "derived"), for S up to 64, next to the C version of AMP's own DP
**     (part_amp_original.c, written from data/amp/COST_MODEL.md 3.1) in
**     the same run, with the ratio.  AMP's DP is O(k L^4): beyond L = 30
**     its table alone is printed, not run.
** (b) MadPipe against PipeDream + 1F1B* ([MadPipe] Figure 7): the
**     periods on the PipeDream profiles of ResNet-50, ResNet-101,
**     DenseNet-121 and Inception-v3 (their chain views), as given (224 x
**     224, the profiled batch) and rescaled to 1000 x 1000, batch 8
**     (docs/ALGORITHMS.md 2.2: activations and times x (1000/224)^2 x 8 /
**     batch, parameters kept; labelled "derived"), P = 2..8, memory 3..16
**     GB, bandwidth 12 and 24 GB/s, 2BW weights (3 x parameters).  For
**     each memory size: the geometric mean of period(PipeDream + 1F1B*) /
**     period(MadPipe) where both fit, and how often only one fits.  Every
**     result that fits has been run in the simulator (part_verify.c), whose
**     period and peak memory are checked here too.
**
** usage: bench_part [RUNS] [--quick]   (default 5; --quick: part (b) on
**        fewer points)
*/
#define _POSIX_C_SOURCE 200809L
#include "parplan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(pp_ctx *ctx, const char *what)
{
  fprintf(stderr, "bench_part: %s: %s\n", what, pp_ctx_errmsg(ctx));
  exit(2);
}

static int cmp_d(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static double unit(void)
{
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* A chain of L layers from the transformer layers of m (ops 1..24 of
** GPT-2's 30 entries), each scaled by a seeded factor in [0.8, 1.2], and
** the same model cut finer: parameters and activations x 24 / L. */
static pp_model *derived_chain(pp_ctx *ctx, const pp_model *m, int32_t L)
{
  pp_model_builder *b;
  pp_model *out;
  int32_t i;
  if (pp_model_builder_create(ctx, "gpt2-derived", "derived from gpt2-amp", &b))
    die(ctx, "builder");
  for (i = 0; i < L; i++) {
    pp_op_desc d, x;
    char name[32];
    double f = 0.8 + 0.4 * unit();
    pp_model_op(m, 1 + i % 24, &x);
    pp_op_desc_init(&d);
    snprintf(name, sizeof name, "layer%d", (int)i);
    d.name = name;
    d.fwd_ms = x.fwd_ms * f;
    d.bwd_ms = x.bwd_ms * f;
    d.param_bytes = (int64_t)((double)x.param_bytes * 24 / L);
    d.out_bytes = x.out_bytes;
    d.saved_bytes = (int64_t)((double)x.saved_bytes * f * 24 / L);
    if (pp_model_builder_add_op(b, &d, NULL))
      die(ctx, "op");
  }
  if (pp_model_builder_finish(b, &out))
    die(ctx, "model");
  return out;
}

/* Median algorithm seconds over runs; *sum gets the last summary. */
static double time_part(pp_ctx *ctx, const pp_model *m, const pp_part_params *p,
                        int runs, pp_part_summary *sum)
{
  double t[64];
  int i;
  for (i = 0; i < runs; i++) {
    pp_partition *pt;
    if (pp_partition_chain(ctx, m, p, &pt))
      die(ctx, "partition");
    pp_partition_summary(pt, sum);
    t[i] = sum->seconds;
    pp_partition_destroy(pt);
  }
  qsort(t, (size_t)runs, sizeof *t, cmp_d);
  return t[runs / 2];
}

static void fmt_time(char *buf, size_t n, double s)
{
  if (s < 1e-3)
    snprintf(buf, n, "%7.1f us", s * 1e6);
  else if (s < 1)
    snprintf(buf, n, "%7.2f ms", s * 1e3);
  else
    snprintf(buf, n, "%7.2f s ", s);
}

static void part_a(pp_ctx *ctx, int runs)
{
  static const int32_t Ls[] = {30, 1000, 10000};
  static const int32_t Ss[] = {2, 4, 8, 16, 32, 64};
  pp_model *gpt;
  int li, si;
  char b1[32], b2[32];

  if (pp_model_load(ctx, "gpt2-amp", &gpt))
    die(ctx, "gpt2-amp");
  printf("(a) time per call, the algorithm alone (median of %d); flat 10 "
         "GB/s network, gas 8, R 4 where it matters\n",
         runs);
  printf("%-22s %4s  %-34s %12s %14s %10s\n", "model", "S", "algorithm", "time",
         "objective ms", "vs AMP DP");
  for (li = 0; li < 3; li++) {
    int32_t L = Ls[li];
    pp_model *m = L == 30 ? gpt : derived_chain(ctx, gpt, L);
    const char *name = L == 30     ? "gpt2-amp (L=30)"
                       : L == 1000 ? "derived, L=1,000"
                                   : "derived, L=10,000";
    if (L > 30)
      printf("(derived: GPT-2's 24 layers as %d, times x U(0.8, 1.2), the "
             "model's bytes spread over them)\n",
             (int)L);
    for (si = 0; si < 6; si++) {
      int32_t S = Ss[si];
      pp_part_params p;
      pp_part_summary sum;
      double t_orig = -1, t;
      int k;
      static const struct {
        const char *label;
        pp_part_objective o;
        pp_part_method meth;
        int allreduce;
        double mem;
      } algs[] = {
          {"amp-original (AMP's DP, in C)", PP_OBJ_AMP, PP_PART_AMP_ORIGINAL, 0,
           0},
          {"amp exact", PP_OBJ_AMP, PP_PART_OPTIMAL, 0, 0},
          {"amp exact + allreduce term", PP_OBJ_AMP, PP_PART_OPTIMAL, 1, 0},
          {"minmax exact", PP_OBJ_MINMAX, PP_PART_OPTIMAL, 0, 0},
          {"minmax exact, 12 GiB limit", PP_OBJ_MINMAX, PP_PART_OPTIMAL, 0,
           12.0 * 1073741824},
          {"uniform parameters", PP_OBJ_MINMAX, PP_PART_UNIFORM_PARAMS, 0, 0},
          {"madpipe (P = S, 16 GiB, 12 GB/s)", PP_OBJ_MADPIPE, PP_PART_OPTIMAL,
           0, 16.0 * 1073741824},
          {"pipedream + 1F1B* (same)", PP_OBJ_MADPIPE, PP_PART_PIPEDREAM_STAR,
           0, 16.0 * 1073741824},
      };
      if ((L == 30 && S > 16) || (L > 30 && S < 4))
        continue;
      for (k = 0; k < (int)(sizeof algs / sizeof algs[0]); k++) {
        int r = runs;
        pp_part_params_init(&p);
        p.objective = algs[k].o;
        p.method = algs[k].meth;
        p.stages = S;
        p.replicas = 4;
        p.gas = 8;
        p.allreduce = algs[k].allreduce;
        p.memory_bytes = algs[k].mem;
        if (p.objective == PP_OBJ_MADPIPE) {
          p.bandwidth_gbps = 12;
          p.optimizer = PP_OPT_2BW;
          p.replicas = 1;
          p.time_limit_s = 10;
          if (L > 30)
            continue; /* MadPipe takes chains of <= 512 layers */
        }
        if (algs[k].meth == PP_PART_AMP_ORIGINAL && L > 30) {
          double P = (double)L * (L + 1) / 2 + 1;
          printf("%-22s %4d  %-34s %12s   (O(k L^4): a table of %.2g "
                 "entries)\n",
                 name, (int)S, algs[k].label, "not run", P * L * S);
          continue;
        }
        if (L == 10000 && r > 3)
          r = 3;
        t = time_part(ctx, m, &p, r, &sum);
        if (algs[k].meth == PP_PART_AMP_ORIGINAL)
          t_orig = t;
        fmt_time(b1, sizeof b1, t);
        if (t_orig > 0 && algs[k].o == PP_OBJ_AMP &&
            algs[k].meth != PP_PART_AMP_ORIGINAL)
          snprintf(b2, sizeof b2, "%9.0fx", t_orig / t);
        else
          b2[0] = 0;
        printf("%-22s %4d  %-34s %12s %14.3f %10s%s\n", name, (int)S,
               algs[k].label, b1, sum.objective_ms, b2,
               sum.fits ? "" : "  (does not fit)");
      }
    }
    if (m != gpt)
      pp_model_destroy(m);
  }
  pp_model_destroy(gpt);
}

/* A network's chain view, rescaled by f (times, activations, outputs). */
static pp_model *rescaled(pp_ctx *ctx, const pp_model *m, double f,
                          const char *name)
{
  pp_model *v, *out;
  pp_model_builder *b;
  int32_t i, n;
  if (pp_model_chain_view(ctx, m, 0, &v))
    die(ctx, "chain view");
  if (f == 1)
    return v;
  if (pp_model_builder_create(ctx, name, "derived: 1000 x 1000, batch 8", &b))
    die(ctx, "builder");
  n = pp_model_nop(v);
  for (i = 0; i < n; i++) {
    pp_op_desc d;
    pp_model_op(v, i, &d);
    d.fwd_ms *= f;
    d.bwd_ms *= f;
    d.update_ms = 0;
    d.fwd_flops = d.bwd_flops = 0;
    d.saved_bytes = (int64_t)((double)d.saved_bytes * f);
    d.out_bytes = (int64_t)((double)d.out_bytes * f);
    if (pp_model_builder_add_op(b, &d, NULL))
      die(ctx, "op");
  }
  if (pp_model_builder_finish(b, &out))
    die(ctx, "rescaled");
  pp_model_destroy(v);
  return out;
}

static void part_b(pp_ctx *ctx, int quick)
{
  static const char *const nets[] = {"resnet50", "resnet101", "densenet121",
                                     "inception_v3"};
  static const double mems[] = {3, 4, 6, 8, 12, 16};
  static const double bws[] = {12, 24};
  int scale, ni, mi, P, bi;
  printf("\n(b) MadPipe vs PipeDream + 1F1B* (MadPipe's Figure 7): period "
         "ratio PipeDream+1F1B* / MadPipe\n");
  for (scale = 0; scale < 2; scale++) {
    double lsum[6] = {0};
    int both[6] = {0}, only_mad[6] = {0}, only_pd[6] = {0}, none[6] = {0},
        slower[6] = {0};
    double secs = 0;
    int runs = 0;
    printf("  %s\n", scale ? "rescaled to 1000 x 1000, batch 8 (derived "
                             "from the PipeDream profiles)"
                           : "as profiled (224 x 224, PipeDream's batch)");
    for (ni = 0; ni < 4; ni++) {
      char path[256];
      pp_model *raw, *m;
      snprintf(path, sizeof path, "%s/data/pipedream/%s/graph.txt",
               PP_SOURCE_DIR, nets[ni]);
      if (pp_model_load(ctx, path, &raw))
        die(ctx, path);
      m = rescaled(ctx, raw,
                   scale ? (1000.0 / 224) * (1000.0 / 224) * 8 /
                               pp_model_micro_batch(raw)
                         : 1,
                   nets[ni]);
      pp_model_destroy(raw);
      for (mi = 0; mi < 6; mi++)
        for (P = 2; P <= 8; P += quick ? 3 : 1)
          for (bi = 0; bi < 2; bi++) {
            pp_part_params p;
            pp_partition *a, *b;
            pp_part_summary sa, sb;
            pp_part_params_init(&p);
            p.objective = PP_OBJ_MADPIPE;
            p.stages = P;
            p.bandwidth_gbps = bws[bi];
            p.memory_bytes = mems[mi] * 1e9;
            p.optimizer = PP_OPT_2BW;
            p.time_limit_s = 10;
            if (pp_partition_chain(ctx, m, &p, &a))
              die(ctx, "madpipe");
            p.method = PP_PART_PIPEDREAM_STAR;
            if (pp_partition_chain(ctx, m, &p, &b))
              die(ctx, "pipedream-star");
            pp_partition_summary(a, &sa);
            pp_partition_summary(b, &sb);
            secs += sa.seconds;
            runs++;
            if (sa.fits &&
                (!sa.sim_fits || sa.sim_period_ms > sa.period_ms * (1 + 1e-6)))
              fprintf(stderr,
                      "bench_part: %s P %d %g GB: the simulator "
                      "does not confirm MadPipe's schedule\n",
                      nets[ni], P, mems[mi]);
            if (sa.fits && sb.fits) {
              both[mi]++;
              lsum[mi] += log(sb.period_ms / sa.period_ms);
              slower[mi] += sa.period_ms > sb.period_ms * (1 + 1e-9);
            } else if (sa.fits) {
              only_mad[mi]++;
            } else if (sb.fits) {
              only_pd[mi]++;
            } else {
              none[mi]++;
            }
            pp_partition_destroy(a);
            pp_partition_destroy(b);
          }
      pp_model_destroy(m);
    }
    printf("  %-8s %12s %6s %9s %14s %16s %8s\n", "memory", "geo-mean", "both",
           "slower", "only MadPipe", "only PipeDream*", "neither");
    for (mi = 0; mi < 6; mi++)
      printf("  %5.0f GB %12.3f %6d %9d %14d %16d %8d\n", mems[mi],
             both[mi] ? exp(lsum[mi] / both[mi]) : NAN, both[mi], slower[mi],
             only_mad[mi], only_pd[mi], none[mi]);
    printf("  MadPipe (phase 1 + phase 2 + the simulator check): %.3f s per "
           "call on average over %d calls\n",
           runs ? secs / runs : 0, runs);
  }
}

int main(int argc, char **argv)
{
  pp_ctx *ctx;
  int runs = 5, quick = 0, i;
  for (i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--quick"))
      quick = 1;
    else
      runs = atoi(argv[i]) > 0 ? atoi(argv[i]) : 5;
  if (runs > 64)
    runs = 64;
  setvbuf(stdout, NULL, _IOLBF, 0); /* progress as it comes */
  if (pp_ctx_create(NULL, &ctx))
    return 2;
  part_a(ctx, runs);
  part_b(ctx, quick);
  pp_ctx_destroy(ctx);
  return 0;
}
