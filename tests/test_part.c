/* SPDX-License-Identifier: MIT */
/*
** Partitioning layer chains (pp_partition_chain) against brute force:
** on hundreds of random small chains (varied times, bytes, speeds, S, R,
** gas, memory limits, flat networks and device sequences of mixed types)
** every exact algorithm's value equals the best over all compositions,
** priced here independently from the model and cluster queries, and the
** returned partition has that value; when nothing fits, the result says
** so and its worst stage is the brute-force least-bad one.  Baselines
** are checked for their rule.  Objective and method names round-trip
** through their parsers.  The command line: JSON fields, the stage
** graph, exit status 3, bad arguments.
*/
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXL 12
#define MAXS 6
#define MAXD 8

struct inst {
  int L, S, R, ndev;
  double f[MAXL], b[MAXL];
  double param[MAXL], saved[MAXL], out[MAXL];
  double speed[MAXD];
  int type[MAXD];
  double bw[MAXD][MAXD];
  double lat_us;
  double flat_bw;
  int devs[MAXS]; /* -1: flat */
  double mem;     /* 0: none */
  double memcap[2];
  int64_t gas;
  int gpipe;
  int allreduce;
  double ar_gbps;
  pp_optimizer opt;
};

static pp_model *inst_model(pp_ctx *ctx, const struct inst *x)
{
  struct tu_op ops[MAXL];
  int i;
  for (i = 0; i < x->L; i++) {
    ops[i].f = x->f[i];
    ops[i].b = x->b[i];
    ops[i].u = 0;
    ops[i].param = (int64_t)x->param[i];
    ops[i].saved = (int64_t)x->saved[i];
    ops[i].out = (int64_t)x->out[i];
  }
  return tu_model_ops(ctx, x->L, ops, NULL, 0);
}

static pp_cluster *inst_cluster(pp_ctx *ctx, const struct inst *x)
{
  pp_cluster_builder *b;
  pp_cluster *c = NULL;
  double m[MAXD * MAXD];
  char names[MAXD][16];
  int i, j;
  assert_int_equal(pp_cluster_builder_create(ctx, "c", NULL, &b), PP_OK);
  for (i = 0; i < 2; i++) {
    pp_device_type_desc t;
    pp_device_type_desc_init(&t);
    t.name = i ? "slow" : "fast";
    t.memory_gib = x->memcap[i];
    t.speed = x->speed[i];
    assert_int_equal(pp_cluster_builder_add_type(b, &t), PP_OK);
  }
  for (i = 0; i < x->ndev; i++) {
    pp_device_desc d;
    pp_device_desc_init(&d);
    snprintf(names[i], sizeof names[i], "d%d", i);
    d.name = names[i];
    d.type = x->type[i] ? "slow" : "fast";
    d.node = i;
    assert_int_equal(pp_cluster_builder_add_device(b, &d, NULL), PP_OK);
  }
  for (i = 0; i < x->ndev; i++)
    for (j = 0; j < x->ndev; j++)
      m[i * x->ndev + j] = x->bw[i][j];
  assert_int_equal(pp_cluster_builder_set_bandwidth(b, m, x->ndev), PP_OK);
  if (x->lat_us > 0)
    assert_int_equal(pp_cluster_builder_set_latency(b, x->lat_us), PP_OK);
  if (pp_cluster_builder_finish(b, &c) != PP_OK)
    fail_msg("%s", pp_ctx_errmsg(ctx));
  return c;
}

/* ---- brute force ------------------------------------------------------- */

static double speed_of(const struct inst *x, int s)
{
  return x->devs[0] < 0 ? 1 : x->speed[x->type[x->devs[s]]];
}

static double comm(const struct inst *x, int s, double bytes)
{
  double bw, lat = x->lat_us;
  if (bytes <= 0)
    return 0;
  if (x->devs[0] < 0)
    bw = x->flat_bw;
  else if (x->devs[s] == x->devs[s + 1])
    return 0;
  else
    bw = x->bw[x->devs[s]][x->devs[s + 1]];
  return lat / 1000 + bytes / (bw * 1e6);
}

static double limit_of(const struct inst *x, int s)
{
  double lim = x->mem > 0 ? x->mem : INFINITY;
  if (x->devs[0] >= 0) {
    double cap = floor(x->memcap[x->type[x->devs[s]]] * 1073741824.0);
    lim = cap < lim ? cap : lim;
  }
  return lim;
}

static double factor(pp_optimizer o)
{
  return o == PP_OPT_SGD ? 2 : o == PP_OPT_ADAM ? 4 : o == PP_OPT_2BW ? 3 : 8;
}

/* Stage s = layers i..j. */
static double st_work(const struct inst *x, int s, int i, int j)
{
  double w = 0;
  int l;
  for (l = i; l <= j; l++)
    w += (x->f[l] + x->b[l]) / speed_of(x, s);
  return w;
}

static double st_mem(const struct inst *x, int s, int i, int j)
{
  double p = 0, a = 0, nf;
  int l;
  for (l = i; l <= j; l++) {
    p += x->param[l];
    a += x->saved[l];
  }
  nf = x->gpipe ? (double)x->gas
                : (double)(x->S - s < x->gas ? x->S - s : x->gas);
  return factor(x->opt) * p + nf * a +
         2 * ((i > 0 ? x->out[i - 1] : 0) + (j < x->L - 1 ? x->out[j] : 0));
}

static double st_minmax(const struct inst *x, int s, int i, int j)
{
  double t = st_work(x, s, i, j);
  if (i > 0)
    t += comm(x, s - 1, x->out[i - 1]);
  if (j < x->L - 1)
    t += comm(x, s, x->out[j]);
  return t / x->R;
}

static double amp_of(const struct inst *x, const int *first)
{
  double m = 0, sig = 0, r = 0;
  int s;
  for (s = 0; s < x->S; s++) {
    int i = first[s], j = first[s + 1] - 1, l;
    double t = st_work(x, s, i, j), p = 0;
    m = t > m ? t : m;
    sig += t + (s + 1 < x->S ? comm(x, s, x->out[j]) : 0);
    if (x->allreduce && x->R > 1) {
      double lat = x->devs[0] >= 0 ? x->lat_us : x->lat_us;
      for (l = i; l <= j; l++)
        p += x->param[l];
      p = 2.0 * (x->R - 1) / x->R * p / (x->ar_gbps * 1e6) +
          2.0 * (x->R - 1) * lat / 1000;
      r = p > r ? p : r;
    }
  }
  return (double)(x->gas - 1) * m + sig + r;
}

static double minmax_of(const struct inst *x, const int *first)
{
  double m = 0;
  int s;
  for (s = 0; s < x->S; s++) {
    double t = st_minmax(x, s, first[s], first[s + 1] - 1);
    m = t > m ? t : m;
  }
  return m;
}

static double memratio_of(const struct inst *x, const int *first)
{
  double m = 0;
  int s;
  for (s = 0; s < x->S; s++) {
    double t = st_mem(x, s, first[s], first[s + 1] - 1) / limit_of(x, s);
    m = t > m ? t : m;
  }
  return m;
}

static bool fits(const struct inst *x, const int *first)
{
  int s;
  for (s = 0; s < x->S; s++)
    if (st_mem(x, s, first[s], first[s + 1] - 1) > limit_of(x, s))
      return false;
  return true;
}

/* The next composition of L into S positive parts (as first[]): the
** next combination of S-1 cut positions from 1..L-1. */
static bool next_comp(int *first, int S, int L)
{
  int k, q;
  for (k = S - 1; k >= 1; k--)
    if (first[k] < L - (S - k)) {
      first[k]++;
      for (q = k + 1; q < S; q++)
        first[q] = first[q - 1] + 1;
      return true;
    }
  return false;
}

enum { BF_MINMAX, BF_AMP, BF_MEM, BF_PARAMS };

/* The best value of kind over all compositions (feasible in memory when
** mem is set); INFINITY when none is. */
static double brute(const struct inst *x, int kind, bool mem)
{
  int first[MAXS + 1], s;
  double best = INFINITY;
  for (s = 0; s < x->S; s++)
    first[s] = s;
  first[x->S] = x->L;
  do {
    double v;
    if (mem && !fits(x, first))
      continue;
    if (kind == BF_MINMAX)
      v = minmax_of(x, first);
    else if (kind == BF_AMP)
      v = amp_of(x, first);
    else if (kind == BF_MEM)
      v = memratio_of(x, first);
    else {
      v = 0;
      for (s = 0; s < x->S; s++) {
        double p = 0;
        for (int l = first[s]; l < first[s + 1]; l++)
          p += x->param[l];
        v = p > v ? p : v;
      }
    }
    if (v < best)
      best = v;
  } while (next_comp(first, x->S, x->L));
  return best;
}

/* ---- random instances ------------------------------------------------- */

static void random_inst(uint64_t *rng, struct inst *x, bool hetero)
{
  int i, j;
  memset(x, 0, sizeof *x);
  x->L = 1 + (int)tu_rand(rng, 10);
  x->S = 1 + (int)tu_rand(rng, (uint32_t)(x->L < MAXS ? x->L : MAXS));
  x->R = 1 + (int)tu_rand(rng, 3);
  for (i = 0; i < x->L; i++) {
    x->f[i] = 0.25 * tu_rand(rng, 40);
    x->b[i] = 0.25 * tu_rand(rng, 80);
    x->param[i] = 1e6 * tu_rand(rng, 200);
    x->saved[i] = 1e6 * tu_rand(rng, 300);
    x->out[i] = tu_rand(rng, 4) ? 1e6 * tu_rand(rng, 200) : 0;
  }
  x->gas = 1 + tu_rand(rng, 12);
  x->gpipe = (int)tu_rand(rng, 2);
  x->opt = (pp_optimizer)tu_rand(rng, 4);
  x->lat_us = tu_rand(rng, 2) ? 0 : tu_rand(rng, 50);
  x->flat_bw = 1 + tu_rand(rng, 30);
  x->allreduce = (int)tu_rand(rng, 2);
  x->ar_gbps = 1 + tu_rand(rng, 20);
  x->speed[0] = 1 + tu_rand(rng, 3);
  x->speed[1] = 0.25 + tu_rand(rng, 4) / 4.0;
  x->memcap[0] = 4 + tu_rand(rng, 16);
  x->memcap[1] = 2 + tu_rand(rng, 16);
  x->ndev = 2 + (int)tu_rand(rng, MAXD - 1);
  for (i = 0; i < x->ndev; i++) {
    x->type[i] = (int)tu_rand(rng, 2);
    for (j = 0; j <= i; j++)
      x->bw[i][j] = x->bw[j][i] = i == j ? 0 : 1 + tu_rand(rng, 40);
  }
  for (i = 0; i < MAXS; i++)
    x->devs[i] = hetero ? (int)tu_rand(rng, (uint32_t)x->ndev) : -1;
  /* a limit that binds sometimes: between the smallest and the largest
  ** a stage could need */
  if (tu_rand(rng, 3)) {
    /* around the least memory any partition needs */
    double least;
    x->mem = 1;
    least = brute(x, BF_MEM, false);
    x->mem = least * (0.9 + tu_rand(rng, 60) / 100.0);
  }
}

static pp_partition *run(pp_ctx *ctx, const struct inst *x, const pp_model *m,
                         const pp_cluster *c, pp_part_objective o,
                         pp_part_method meth)
{
  pp_part_params p;
  pp_partition *pt = NULL;
  int32_t devs[MAXS];
  int s;
  pp_part_params_init(&p);
  p.objective = o;
  p.method = meth;
  p.stages = x->S;
  p.replicas = x->R;
  p.bandwidth_gbps = x->flat_bw;
  p.latency_us = x->lat_us;
  p.gas = x->gas;
  p.memory_bytes = x->mem;
  p.schedule = x->gpipe ? PP_SCHED_GPIPE : PP_SCHED_1F1B;
  p.optimizer = x->opt;
  p.allreduce = x->allreduce;
  p.allreduce_gbps = x->ar_gbps;
  if (x->devs[0] >= 0) {
    for (s = 0; s < x->S; s++)
      devs[s] = x->devs[s];
    p.cluster = c;
    p.devices = devs;
  }
  if (pp_partition_chain(ctx, m, &p, &pt) != PP_OK)
    fail_msg("partition: %s", pp_ctx_errmsg(ctx));
  return pt;
}

/* The partition as first[]; checks that its stages list the layers in
** order. */
static void first_of(const pp_partition *pt, int S, int L, int *first)
{
  int s, n = 0;
  for (s = 0; s < S; s++) {
    int32_t k;
    const int32_t *ops = pp_partition_stage_ops(pt, s, &k);
    assert_true(k > 0);
    first[s] = ops[0];
    for (int a = 0; a < k; a++)
      assert_int_equal(ops[a], n++);
  }
  assert_int_equal(n, L);
  first[S] = L;
}

static void near(double got, double want, const char *what, int iter)
{
  if (!(fabs(got - want) <= 1e-9 * (fabs(want) > 1 ? fabs(want) : 1)))
    fail_msg("iteration %d: %s: got %.12g, brute force %.12g", iter, what, got,
             want);
}

static void check_exact(pp_part_objective o, bool hetero, int n_iter,
                        uint64_t seed)
{
  struct tu_alloc a;
  pp_ctx *ctx = tu_ctx(&a);
  uint64_t rng = seed;
  int iter, infeasible = 0, binding = 0;
  for (iter = 0; iter < n_iter; iter++) {
    struct inst x;
    pp_model *m;
    pp_cluster *c;
    pp_partition *pt;
    pp_part_summary sum;
    int first[MAXS + 1];
    double want, free_best;
    random_inst(&rng, &x, hetero);
    m = inst_model(ctx, &x);
    c = inst_cluster(ctx, &x);
    pt = run(ctx, &x, m, c, o, PP_PART_OPTIMAL);
    assert_int_equal(pp_partition_summary(pt, &sum), PP_OK);
    assert_int_equal(sum.nstage, x.S);
    first_of(pt, x.S, x.L, first);
    want = brute(&x, o == PP_OBJ_MINMAX ? BF_MINMAX : BF_AMP, true);
    free_best = brute(&x, o == PP_OBJ_MINMAX ? BF_MINMAX : BF_AMP, false);
    if (isinf(want)) {
      /* nothing fits: the closest, with its worst stage */
      double r = brute(&x, BF_MEM, false);
      infeasible++;
      assert_int_equal(sum.fits, 0);
      assert_int_equal(sum.exact, 0);
      near(memratio_of(&x, first), r, "least-bad memory ratio", iter);
      {
        pp_part_stage st;
        int w = sum.worst_stage;
        assert_int_equal(pp_partition_stage(pt, w, &st), PP_OK);
        near(st.memory_bytes / st.memory_limit_bytes, r, "worst stage", iter);
      }
    } else {
      assert_int_equal(sum.fits, 1);
      assert_int_equal(sum.exact, 1);
      assert_true(fits(&x, first));
      near(sum.objective_ms, want, pp_part_objective_name(o), iter);
      near(o == PP_OBJ_MINMAX ? minmax_of(&x, first) : amp_of(&x, first), want,
           "the partition's own value", iter);
      assert_true(sum.lower_bound_ms <= want * (1 + 1e-9));
      if (want > free_best * (1 + 1e-9))
        binding++;
      /* per-stage figures agree with the independent pricing */
      for (int s = 0; s < x.S; s++) {
        pp_part_stage st;
        assert_int_equal(pp_partition_stage(pt, s, &st), PP_OK);
        near(st.compute_ms, st_work(&x, s, first[s], first[s + 1] - 1),
             "stage compute", iter);
        near(st.memory_bytes, st_mem(&x, s, first[s], first[s + 1] - 1),
             "stage memory", iter);
      }
    }
    pp_partition_destroy(pt);
    pp_cluster_destroy(c);
    pp_model_destroy(m);
  }
  print_message("%s %s: %d instances, %d where memory binds, %d where "
                "nothing fits\n",
                pp_part_objective_name(o), hetero ? "device sequences" : "flat",
                n_iter, binding, infeasible);
  assert_true(binding > n_iter / 20);
  assert_true(infeasible > n_iter / 50);
  pp_ctx_destroy(ctx);
  assert_int_equal(a.live, 0);
}

static void t_minmax_flat(void **state)
{
  (void)state;
  check_exact(PP_OBJ_MINMAX, false, 400, 11);
}

static void t_minmax_hetero(void **state)
{
  (void)state;
  check_exact(PP_OBJ_MINMAX, true, 400, 12);
}

static void t_amp_flat(void **state)
{
  (void)state;
  check_exact(PP_OBJ_AMP, false, 400, 13);
}

static void t_amp_hetero(void **state)
{
  (void)state;
  check_exact(PP_OBJ_AMP, true, 400, 14);
}

/* Baselines follow their rules; PipeDream's DP is the min-max optimum
** without memory. */
static void t_baselines(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  uint64_t rng = 99;
  int iter;
  for (iter = 0; iter < 200; iter++) {
    struct inst x;
    pp_model *m;
    pp_cluster *c;
    pp_partition *pt;
    pp_part_summary sum;
    int first[MAXS + 1], s;
    random_inst(&rng, &x, iter % 2);
    m = inst_model(ctx, &x);
    c = inst_cluster(ctx, &x);
    pt = run(ctx, &x, m, c, PP_OBJ_MINMAX, PP_PART_UNIFORM_LAYERS);
    first_of(pt, x.S, x.L, first);
    for (s = 0; s < x.S; s++)
      assert_int_equal(first[s + 1] - first[s],
                       x.L / x.S + (s < x.L % x.S ? 1 : 0));
    pp_partition_destroy(pt);
    pt = run(ctx, &x, m, c, PP_OBJ_MINMAX, PP_PART_UNIFORM_PARAMS);
    first_of(pt, x.S, x.L, first);
    {
      double most = 0;
      for (s = 0; s < x.S; s++) {
        double p = 0;
        for (int l = first[s]; l < first[s + 1]; l++)
          p += x.param[l];
        most = p > most ? p : most;
      }
      near(most, brute(&x, BF_PARAMS, false), "balanced parameters", iter);
    }
    pp_partition_destroy(pt);
    pt = run(ctx, &x, m, c, PP_OBJ_MINMAX, PP_PART_PIPEDREAM);
    first_of(pt, x.S, x.L, first);
    assert_int_equal(pp_partition_summary(pt, &sum), PP_OK);
    near(sum.objective_ms, brute(&x, BF_MINMAX, false), "pipedream", iter);
    assert_int_equal(sum.fits, fits(&x, first));
    pp_partition_destroy(pt);
    pt = run(ctx, &x, m, c, PP_OBJ_AMP, PP_PART_AMP_ORIGINAL);
    first_of(pt, x.S, x.L, first);
    assert_int_equal(pp_partition_summary(pt, &sum), PP_OK);
    near(sum.objective_ms, amp_of(&x, first), "amp-original priced", iter);
    assert_true(sum.objective_ms >=
                brute(&x, BF_AMP, false) * (1 - 1e-9)); /* never better */
    pp_partition_destroy(pt);
    pp_cluster_destroy(c);
    pp_model_destroy(m);
  }
}

/* ---- names ----------------------------------------------------------------
 */

/* Every objective and method round-trips through its name; the names are
** distinct; past the last value there is no name; an unknown name (or
** none) is PP_EINVAL and leaves *out alone. */
static void t_names(void **state)
{
  static const char *const unknown[] = {"", "nosuch", "optimal ", NULL};
  const char *seen[16];
  int i, j, n = 0, nobj;
  size_t k;
  (void)state;
  for (i = PP_OBJ_MINMAX; i <= PP_OBJ_MADPIPE; i++) {
    const char *name = pp_part_objective_name((pp_part_objective)i);
    pp_part_objective o = (pp_part_objective)-1;
    assert_non_null(name);
    assert_int_equal(pp_part_objective_parse(name, &o), PP_OK);
    assert_int_equal(o, i);
    seen[n++] = name;
  }
  assert_null(pp_part_objective_name((pp_part_objective)(PP_OBJ_MADPIPE + 1)));
  assert_null(pp_part_objective_name((pp_part_objective)-1));
  nobj = n;
  for (i = PP_PART_OPTIMAL; i <= PP_PART_AMP_ORIGINAL; i++) {
    const char *name = pp_part_method_name((pp_part_method)i);
    pp_part_method me = (pp_part_method)-1;
    assert_non_null(name);
    assert_int_equal(pp_part_method_parse(name, &me), PP_OK);
    assert_int_equal(me, i);
    seen[n++] = name;
  }
  assert_null(pp_part_method_name((pp_part_method)(PP_PART_AMP_ORIGINAL + 1)));
  for (i = 0; i < n; i++) { /* distinct among the objectives, the methods */
    assert_true(seen[i][0] != '\0');
    for (j = i < nobj ? 0 : nobj; j < i; j++)
      assert_string_not_equal(seen[i], seen[j]);
  }
  assert_string_equal(pp_part_objective_name(PP_OBJ_MADPIPE), "madpipe");
  assert_string_equal(pp_part_method_name(PP_PART_PIPEDREAM_STAR),
                      "pipedream-star");
  for (k = 0; k < sizeof unknown / sizeof unknown[0]; k++) {
    pp_part_objective o = PP_OBJ_AMP;
    pp_part_method me = PP_PART_PIPEDREAM;
    assert_int_equal(pp_part_objective_parse(unknown[k], &o), PP_EINVAL);
    assert_int_equal(o, PP_OBJ_AMP);
    assert_int_equal(pp_part_method_parse(unknown[k], &me), PP_EINVAL);
    assert_int_equal(me, PP_PART_PIPEDREAM);
  }
  /* an objective is not a method, nor the other way round */
  {
    pp_part_objective o = PP_OBJ_AMP;
    pp_part_method me = PP_PART_PIPEDREAM;
    assert_int_equal(pp_part_objective_parse("optimal", &o), PP_EINVAL);
    assert_int_equal(pp_part_method_parse("minmax", &me), PP_EINVAL);
  }
}

/* ---- the command line ---------------------------------------------------- */

static int run_tool(const char *args, char **out, char **err)
{
  return tu_run(args, out, err);
}

static json_t *parse(const char *text)
{
  json_error_t e;
  json_t *j = json_loads(text, 0, &e);
  if (!j)
    fail_msg("not JSON (%s): %s", e.text, text);
  return j;
}

static void t_cli(void **state)
{
  char *out, *err, args[1024];
  json_t *j, *st, *sg;
  size_t i, k, n = 0;
  int rc;
  FILE *f;
  (void)state;
  /* --json: objective, stages as operator lists covering every operator
  ** once, in order, per-stage costs; -o writes the stage graph */
  snprintf(args, sizeof args,
           "partition --model gpt2-amp --stages 4 --json -o %s",
           tu_tmp("sg.json"));
  rc = run_tool(args, &out, &err);
  if (rc != 0)
    fail_msg("exit %d: %s", rc, err);
  j = parse(out);
  assert_true(json_is_number(json_object_get(j, "objective")));
  assert_true(json_is_true(json_object_get(j, "exact")));
  st = json_object_get(j, "stages");
  assert_int_equal(json_array_size(st), 4);
  for (i = 0; i < 4; i++)
    for (k = 0; k < json_array_size(json_array_get(st, i)); k++)
      assert_int_equal(
          json_integer_value(json_array_get(json_array_get(st, i), k)),
          (json_int_t)n++);
  assert_int_equal(n, 30);
  assert_int_equal(json_array_size(json_object_get(j, "stage_costs")), 4);
  assert_true(json_is_number(json_object_get(
      json_array_get(json_object_get(j, "stage_costs"), 0), "memory_bytes")));
  json_decref(j);
  {
    char *text = tu_slurp(tu_tmp("sg.json"), NULL);
    assert_non_null(text);
    sg = parse(text);
    free(text);
    assert_int_equal(json_array_size(json_object_get(sg, "stages")), 4);
    assert_int_equal(json_array_size(json_object_get(sg, "edges")), 3);
    assert_true(json_is_number(json_object_get(
        json_array_get(json_object_get(sg, "stages"), 0), "compute_ms")));
    assert_int_equal(
        json_integer_value(json_object_get(
            json_array_get(json_object_get(sg, "edges"), 2), "from")),
        2);
    json_decref(sg);
  }
  /* the same inputs give the same stage graph, byte for byte */
  {
    char *a = tu_slurp(tu_tmp("sg.json"), NULL), *b;
    snprintf(args, sizeof args, "partition --model gpt2-amp --stages 4 -o %s",
             tu_tmp("sg.json"));
    assert_int_equal(run_tool(args, &out, &err), 0);
    b = tu_slurp(tu_tmp("sg.json"), NULL);
    assert_string_equal(a, b);
    free(a);
    free(b);
  }
  /* devices by name on AMP's mixed cluster, AMP's objective */
  rc = run_tool("partition --model gpt2-amp --stages 4 --objective amp "
                "--gas 8 --cluster amp-het-cluster --devices n0g0,n1g0,4,"
                "n3g0 --json",
                &out, &err);
  if (rc != 0)
    fail_msg("exit %d: %s", rc, err);
  j = parse(out);
  assert_int_equal(
      json_integer_value(json_array_get(json_object_get(j, "devices"), 3)), 12);
  json_decref(j);
  /* --amp-inputs: AMP's own choice for its mixed cluster at mbs 4, dp 4,
  ** pp 4 (data/amp/amp_cached_trials.csv: 0 6 13 20 30), which the
  ** chain's own inputs miss */
  rc = run_tool("partition --model gpt2-amp --stages 4 --replicas 4 "
                "--method amp-original --objective amp --cluster "
                "amp-het-cluster --devices 0,4,8,12 --gas 2 --micro-batch 4 "
                "--amp-inputs --json",
                &out, &err);
  if (rc != 0)
    fail_msg("exit %d: %s", rc, err);
  j = parse(out);
  {
    static const int first[4] = {0, 6, 13, 20};
    for (i = 0; i < 4; i++)
      assert_int_equal(json_integer_value(json_array_get(
                           json_array_get(json_object_get(j, "stages"), i), 0)),
                       first[i]);
  }
  json_decref(j);
  assert_int_equal(run_tool("partition --model gpt2-amp --stages 4 --method "
                            "amp-original --amp-inputs",
                            &out, &err),
                   1);
  if (!strstr(err, "amp-original method on a cluster"))
    fail_msg("--amp-inputs without a cluster: %s", err);
  /* nothing fits: exit 3, the stage, its need and the limit */
  rc = run_tool("partition --model gpt2-amp --stages 2 --memory-gb 0.5", &out,
                &err);
  assert_int_equal(rc, 3);
  if (!strstr(out, "does not fit") || !strstr(out, "stage") ||
      !strstr(out, "512.00 MiB"))
    fail_msg("the report must name the stage, its need and the limit:\n%s",
             out);
  /* MadPipe on a PipeDream profile: the simulator's confirmation */
  snprintf(args, sizeof args,
           "partition --model %s --stages 3 --objective madpipe --memory-gb "
           "8 --bandwidth 12 --optimizer 2bw --json",
           tu_path("data/pipedream/resnet50/graph.txt"));
  rc = run_tool(args, &out, &err);
  if (rc != 0)
    fail_msg("exit %d: %s", rc, err);
  j = parse(out);
  {
    json_t *sim = json_object_get(j, "simulated");
    double T = json_number_value(json_object_get(j, "period_ms"));
    assert_non_null(sim);
    assert_true(json_is_true(json_object_get(sim, "fits")));
    assert_true(json_number_value(json_object_get(sim, "period_ms")) <=
                T * (1 + 1e-6));
  }
  json_decref(j);
  /* bad arguments: clear messages, exit 1 */
  {
    static const struct {
      const char *args, *msg;
    } bad[] = {
        {"partition --model gpt2-amp", "--stages"},
        {"partition --stages 4", "--model"},
        {"partition --model gpt2-amp --stages 31", "31 stages"},
        {"partition --model gpt2-amp --stages 0", "--stages"},
        {"partition --model gpt2-amp --stages 2 --objective best",
         "--objective"},
        {"partition --model gpt2-amp --stages 2 --bandwidth -3", "--bandwidth"},
        {"partition --model gpt2-amp --stages 2 --bandwidth nan",
         "--bandwidth"},
        {"partition --model gpt2-amp --stages 2 --devices 0,1", "--cluster"},
        {"partition --model gpt2-amp --stages 2 --cluster amp-het-cluster "
         "--devices 0",
         "1 devices for 2 stages"},
        {"partition --model gpt2-amp --stages 2 --cluster amp-het-cluster "
         "--devices 0,99",
         "out of range"},
        {"partition --model gpt2-amp --stages 2 --cluster amp-het-cluster "
         "--devices 0,nope",
         "'nope'"},
        {"partition --model gpt2-amp --stages 2 --schedule 1f1b-star",
         "1f1b-star"},
        {"partition --model gpt2-amp --stages 2 --objective madpipe "
         "--cluster amp-het-cluster --devices 0,1",
         "flat network"},
        {"partition --model gpt2-amp --stages 2 --objective madpipe "
         "--method uniform-layers",
         "uniform-layers"},
        {"partition --model no/such/file.json --stages 2", "no/such"},
    };
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
      rc = run_tool(bad[i].args, &out, &err);
      if (rc != 1 || !strstr(err, bad[i].msg))
        fail_msg("'%s': exit %d, stderr: %s", bad[i].args, rc, err);
    }
  }
  /* a failed run leaves no stage graph behind */
  remove(tu_tmp("none.json"));
  snprintf(args, sizeof args, "partition --model gpt2-amp --stages 40 -o %s",
           tu_tmp("none.json"));
  assert_int_equal(run_tool(args, &out, &err), 1);
  f = fopen(tu_tmp("none.json"), "r");
  assert_null(f);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_minmax_flat), cmocka_unit_test(t_minmax_hetero),
      cmocka_unit_test(t_amp_flat),    cmocka_unit_test(t_amp_hetero),
      TU_CTX_TEST(t_baselines),        cmocka_unit_test(t_cli),
      cmocka_unit_test(t_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
