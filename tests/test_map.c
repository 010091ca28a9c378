/* SPDX-License-Identifier: MIT */
/*
** Device mapping (pp_map): the exact search equals a brute force over
** every injective mapping on hundreds of random instances of up to 8
** devices, for each objective, with and without mixed speeds and with
** more devices than stage replicas; the reported objective equals an
** independent recomputation of the returned mapping; the baselines are
** valid, never better than the optimum, and CS and Megatron's rank order
** place replica r of stage s on devices r S + s and s R + r; every
** replica's time (pp_mapping_time) is priced independently, written in
** the JSON, and its largest is the objective; names round-trip through
** their parsers; a partition's stage graph has its stages; the
** stage-graph reader refuses bad input with the file and the element;
** the command line.
*/
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include "map/map.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXD 8
#define MAXS 4

struct inst {
  int S, R, D, ne;
  double compute[MAXS], param[MAXS];
  int ea[8], eb[8];
  double em[8];
  double bw[MAXD][MAXD], speed[MAXD];
  double lat_us;
};

static void random_inst(uint64_t *rng, struct inst *x, bool mixed)
{
  int i, j, n;
  memset(x, 0, sizeof *x);
  do {
    x->S = 1 + (int)tu_rand(rng, MAXS);
    x->R = 1 + (int)tu_rand(rng, 3);
  } while (x->S * x->R > MAXD);
  n = x->S * x->R;
  x->D = n + (int)tu_rand(rng, (uint32_t)(MAXD - n + 1));
  for (i = 0; i < x->S; i++) {
    x->compute[i] = 1 + tu_rand(rng, 40);
    x->param[i] = tu_rand(rng, 3) ? 1e6 * tu_rand(rng, 500) : 0;
  }
  for (i = 0; i + 1 < x->S; i++) { /* a chain and a skip */
    x->ea[x->ne] = i;
    x->eb[x->ne] = i + 1;
    x->em[x->ne++] = 1e6 * tu_rand(rng, 400);
  }
  if (x->S >= 3 && tu_rand(rng, 2)) {
    x->ea[x->ne] = 0;
    x->eb[x->ne] = x->S - 1;
    x->em[x->ne++] = 1e6 * tu_rand(rng, 400);
  }
  /* bandwidths: sometimes nodes of identical devices (twins), of 4 or of
  ** 2 (up to four nodes, which swap as a whole while unused) */
  if (tu_rand(rng, 3) == 0) {
    double in = 20 + tu_rand(rng, 100), out = 1 + tu_rand(rng, 20);
    int ns = tu_rand(rng, 2) ? 4 : 2;
    for (i = 0; i < x->D; i++)
      for (j = 0; j < x->D; j++)
        x->bw[i][j] = i == j ? 0 : (i / ns == j / ns ? in : out);
  } else {
    for (i = 0; i < x->D; i++)
      for (j = 0; j <= i; j++)
        x->bw[i][j] = x->bw[j][i] = i == j ? 0 : 1 + tu_rand(rng, 50);
  }
  for (i = 0; i < x->D; i++)
    x->speed[i] = mixed && tu_rand(rng, 2) ? 0.5 + tu_rand(rng, 4) / 2.0 : 1;
  x->lat_us = tu_rand(rng, 2) ? 0 : tu_rand(rng, 30);
}

/* The cluster: every distinct speed is its own device type. */
static pp_cluster *inst_cluster(pp_ctx *ctx, const struct inst *x)
{
  pp_cluster_builder *b;
  pp_cluster *c = NULL;
  double m[MAXD * MAXD];
  char tn[MAXD][16], dn[MAXD][16];
  int i, j, nt = 0, ti[MAXD];
  double ts[MAXD];
  assert_int_equal(pp_cluster_builder_create(ctx, "c", NULL, &b), PP_OK);
  for (i = 0; i < x->D; i++) {
    for (j = 0; j < nt && ts[j] != x->speed[i]; j++)
      ;
    if (j == nt) {
      pp_device_type_desc t;
      pp_device_type_desc_init(&t);
      snprintf(tn[nt], sizeof tn[nt], "t%d", nt);
      t.name = tn[nt];
      t.memory_gib = 16;
      t.speed = x->speed[i];
      assert_int_equal(pp_cluster_builder_add_type(b, &t), PP_OK);
      ts[nt++] = x->speed[i];
    }
    ti[i] = j;
  }
  for (i = 0; i < x->D; i++) {
    pp_device_desc d;
    pp_device_desc_init(&d);
    snprintf(dn[i], sizeof dn[i], "d%d", i);
    d.name = dn[i];
    d.type = tn[ti[i]];
    d.node = i / 4;
    assert_int_equal(pp_cluster_builder_add_device(b, &d, NULL), PP_OK);
  }
  for (i = 0; i < x->D; i++)
    for (j = 0; j < x->D; j++)
      m[i * x->D + j] = x->bw[i][j];
  if (x->D > 1)
    assert_int_equal(pp_cluster_builder_set_bandwidth(b, m, x->D), PP_OK);
  if (x->lat_us > 0)
    assert_int_equal(pp_cluster_builder_set_latency(b, x->lat_us), PP_OK);
  if (pp_cluster_builder_finish(b, &c) != PP_OK)
    fail_msg("%s", pp_ctx_errmsg(ctx));
  return c;
}

static pp_stage_graph *inst_graph(pp_ctx *ctx, const struct inst *x)
{
  char buf[4096];
  size_t off = 0;
  int i;
  pp_stage_graph *g = NULL;
  off += (size_t)snprintf(buf + off, sizeof buf - off, "{\"stages\": [");
  for (i = 0; i < x->S; i++)
    off += (size_t)snprintf(buf + off, sizeof buf - off,
                            "%s{\"name\": \"s%d\", \"compute_ms\": %.17g, "
                            "\"param_bytes\": %.17g}",
                            i ? ", " : "", i, x->compute[i], x->param[i]);
  off += (size_t)snprintf(buf + off, sizeof buf - off, "], \"edges\": [");
  for (i = 0; i < x->ne; i++)
    off += (size_t)snprintf(buf + off, sizeof buf - off,
                            "%s{\"from\": %d, \"to\": \"s%d\", \"bytes\": "
                            "%.17g}",
                            i ? ", " : "", x->ea[i], x->eb[i], x->em[i]);
  snprintf(buf + off, sizeof buf - off, "]}");
  if (pp_stage_graph_read_json(ctx, buf, strlen(buf), "sg.json", &g))
    fail_msg("%s", pp_ctx_errmsg(ctx));
  return g;
}

/* ---- an independent pricing -------------------------------------------- */

static double comm(const struct inst *x, int a, int b, double m)
{
  return m > 0 ? x->lat_us / 1000 + m / (x->bw[a][b] * 1e6) : 0;
}

/* p[r][s]: device of replica r of stage s.  The allreduce term of stage
** s: the ring's slowest link (0 under p2p). */
static double ring_of(const struct inst *x, int obj, int p[][MAXS], int s)
{
  int r;
  double ring = 0;
  if (obj != 0 && x->R > 1 && x->param[s] > 0)
    for (r = 0; r < x->R; r++) {
      int a = p[r][s], b = p[(r + 1) % x->R][s];
      double y = 2.0 * (x->R - 1) / x->R * x->param[s] / (x->bw[a][b] * 1e6) +
                 2.0 * (x->R - 1) * x->lat_us / 1000;
      ring = y > ring ? y : ring;
    }
  return ring;
}

/* The time of replica r of stage s, its stage's allreduce term given. */
static double replica_time(const struct inst *x, int obj, int p[][MAXS], int s,
                           int r, double ring)
{
  int e;
  double c = x->compute[s] / x->speed[p[r][s]] + ring;
  if (obj != 1)
    for (e = 0; e < x->ne; e++) {
      if (x->ea[e] == s)
        c += comm(x, p[r][s], p[r][x->eb[e]], x->em[e]);
      if (x->eb[e] == s)
        c += comm(x, p[r][s], p[r][x->ea[e]], x->em[e]);
    }
  return c;
}

/* The objective: the slowest stage replica. */
static double value(const struct inst *x, int obj, int p[][MAXS])
{
  int s, r;
  double worst = 0;
  for (s = 0; s < x->S; s++) {
    double ring = ring_of(x, obj, p, s);
    for (r = 0; r < x->R; r++) {
      double c = replica_time(x, obj, p, s, r, ring);
      worst = c > worst ? c : worst;
    }
  }
  return worst;
}

static void brute_rec(const struct inst *x, int obj, int v, int p[][MAXS],
                      bool *used, double *best)
{
  int d, n = x->S * x->R;
  if (v == n) {
    double y = value(x, obj, p);
    if (y < *best)
      *best = y;
    return;
  }
  for (d = 0; d < x->D; d++)
    if (!used[d]) {
      used[d] = true;
      p[v / x->S][v % x->S] = d;
      brute_rec(x, obj, v + 1, p, used, best);
      used[d] = false;
    }
}

static double brute(const struct inst *x, int obj)
{
  int p[MAXD][MAXS];
  bool used[MAXD] = {false};
  double best = INFINITY;
  brute_rec(x, obj, 0, p, used, &best);
  return best;
}

static void near(double got, double want, const char *what, int iter)
{
  if (!(fabs(got - want) <= 1e-9 * (fabs(want) > 1 ? fabs(want) : 1)))
    fail_msg("iteration %d: %s: got %.12g, expected %.12g", iter, what, got,
             want);
}

static pp_mapping *run(pp_ctx *ctx, const pp_stage_graph *g,
                       const pp_cluster *c, int R, int obj,
                       pp_map_algorithm alg, int threads)
{
  pp_map_params p;
  pp_mapping *m = NULL;
  pp_map_params_init(&p);
  p.replicas = R;
  p.objective = (pp_map_objective)obj;
  p.algorithm = alg;
  p.samples = 300;
  p.threads = threads;
  if (pp_map(ctx, g, c, &p, &m) != PP_OK)
    fail_msg("map: %s", pp_ctx_errmsg(ctx));
  return m;
}

static void check(pp_ctx *ctx, bool mixed, uint64_t seed, int n_iter)
{
  uint64_t rng = seed;
  int iter, obj, spare = 0;
  for (iter = 0; iter < n_iter; iter++) {
    struct inst x;
    pp_cluster *c;
    pp_stage_graph *g;
    random_inst(&rng, &x, mixed);
    spare += x.D > x.S * x.R;
    c = inst_cluster(ctx, &x);
    g = inst_graph(ctx, &x);
    for (obj = 0; obj < 3; obj++) {
      double want = brute(&x, obj);
      int alg;
      for (alg = 0; alg <= 5; alg++) {
        /* the exact search on 1, 2 or 3 threads */
        pp_mapping *m =
            run(ctx, g, c, x.R, obj, (pp_map_algorithm)alg, 1 + iter % 3);
        pp_map_summary sum;
        int p[MAXD][MAXS], s, r;
        bool used[MAXD] = {false};
        assert_int_equal(pp_mapping_summary(m, &sum), PP_OK);
        for (s = 0; s < x.S; s++)
          for (r = 0; r < x.R; r++) {
            int d = pp_mapping_device(m, s, r);
            assert_true(d >= 0 && d < x.D && !used[d]);
            used[d] = true;
            p[r][s] = d;
            /* the baselines' documented layouts */
            if (alg == PP_MAP_CS)
              assert_int_equal(d, r * x.S + s);
            if (alg == PP_MAP_MEGATRON)
              assert_int_equal(d, s * x.R + r);
          }
        near(sum.objective_ms, value(&x, obj, p), "reported = recomputed",
             iter);
        assert_true(sum.lower_bound_ms <= want * (1 + 1e-9));
        if (alg == PP_MAP_EXACT) {
          near(sum.objective_ms, want, "exact = brute force", iter);
          assert_int_equal(sum.optimal, 1);
        } else {
          assert_true(sum.objective_ms >= want * (1 - 1e-9));
        }
        pp_mapping_destroy(m);
      }
    }
    pp_stage_graph_destroy(g);
    pp_cluster_destroy(c);
  }
  print_message("%d instances x 3 objectives = brute force (%d with spare "
                "devices, %s speeds)\n",
                n_iter, spare, mixed ? "mixed" : "equal");
  assert_true(spare > n_iter / 4);
}

static void t_exact_equal(void **state)
{
  check(tu_fix_ctx(state), false, 3, 150);
}

static void t_exact_mixed(void **state)
{
  check(tu_fix_ctx(state), true, 4, 150);
}

/* The same seed, the same mapping, for the randomised baselines too. */
static void t_deterministic(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  uint64_t rng = 77;
  int alg, k;
  struct inst x;
  pp_cluster *c;
  pp_stage_graph *g;
  random_inst(&rng, &x, true);
  c = inst_cluster(ctx, &x);
  g = inst_graph(ctx, &x);
  for (alg = 0; alg <= 5; alg++) {
    int first[MAXD * MAXS], s, r;
    for (k = 0; k < 2; k++) {
      pp_mapping *m = run(ctx, g, c, x.R, 3, (pp_map_algorithm)alg, 2);
      for (s = 0; s < x.S; s++)
        for (r = 0; r < x.R; r++) {
          int d = pp_mapping_device(m, s, r);
          if (k == 0)
            first[r * x.S + s] = d;
          else
            assert_int_equal(first[r * x.S + s], d);
        }
      pp_mapping_destroy(m);
    }
  }
  pp_stage_graph_destroy(g);
  pp_cluster_destroy(c);
}

/* The stage graph of the FPN-like model cut into S stages. */
static pp_stage_graph *fpn_stages(pp_ctx *ctx, int32_t S)
{
  pp_model *m;
  pp_part_params pp;
  pp_partition *pt;
  pp_stage_graph *g;
  assert_int_equal(pp_model_load(ctx, "fpn", &m), PP_OK);
  pp_part_params_init(&pp);
  pp.stages = S;
  assert_int_equal(pp_partition_chain(ctx, m, &pp, &pt), PP_OK);
  assert_int_equal(pp_partition_stage_graph(ctx, pt, &g), PP_OK);
  pp_partition_destroy(pt);
  pp_model_destroy(m);
  return g;
}

/* Scotch on a machine large enough for its threads: the same mapping on
** every run (it differed from run to run before Scotch got a context of
** one thread), and so for part and solve, which splits with Scotch. */
static void t_scotch_repeatable(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_stage_graph *g;
  pp_cluster *c;
  int32_t first[4 * 64], k, i, alg;
  g = fpn_stages(ctx, 4);
  assert_int_equal(pp_cluster_load(ctx, "mesh2d:16x16", &c), PP_OK);
  for (alg = 0; alg < 2; alg++)
    for (k = 0; k < 4; k++) {
      int32_t p[4 * 64];
      if (alg == 0) {
        pp_mapping *mp = run(ctx, g, c, 64, PP_MAP_P2P, PP_MAP_SCOTCH, 2);
        for (i = 0; i < 4 * 64; i++)
          p[i] = pp_mapping_device(mp, i % 4, i / 4);
        pp_mapping_destroy(mp);
      } else {
        struct ppi_arena ar;
        struct ppi_map q;
        bool found;
        ppi_arena_init(&ar, ppi_ctx_alloc(ctx));
        assert_int_equal(ppi_map_build(ctx, &ar, g, c, 64, MAP_P2P, &q), PP_OK);
        assert_int_equal(
            ppi_map_parts(ctx, &q, 60, 0, 2, ppi_map_exact, p, &found), PP_OK);
        assert_true(found);
        ppi_arena_free(&ar);
      }
      for (i = 0; i < 4 * 64; i++)
        if (k == 0)
          first[i] = p[i];
        else if (first[i] != p[i])
          fail_msg("%s: run %d differs at stage replica %d",
                   alg ? "part and solve" : "scotch", k, i);
    }
  pp_cluster_destroy(c);
  pp_stage_graph_destroy(g);
}

static void t_bad_graphs(void **state)
{
  static const struct {
    const char *text, *msg;
    pp_status rc;
  } bad[] = {
      {"", "sg.json", PP_EPARSE},
      {"[]", "sg.json", PP_EPARSE},
      {"{\"edges\": []}", "stages", PP_EINPUT},
      {"{\"stages\": []}", "empty", PP_EINPUT},
      {"{\"stages\": [{\"name\": \"a\"}]}", "compute_ms", PP_EINPUT},
      {"{\"stages\": [{\"compute_ms\": -1}]}", "compute_ms", PP_EINPUT},
      {"{\"stages\": [{\"compute_ms\": 1, \"param_bytes\": \"x\"}]}",
       "param_bytes", PP_EINPUT},
      {"{\"stages\": [{\"name\": \"a\", \"compute_ms\": 1}, {\"name\": \"a\", "
       "\"compute_ms\": 1}]}",
       "taken", PP_EINPUT},
      {"{\"stages\": [{\"compute_ms\": 1}], \"edges\": [{\"from\": 0, \"to\": "
       "0, \"bytes\": 1}]}",
       "itself", PP_EINPUT},
      {"{\"stages\": [{\"compute_ms\": 1}], \"edges\": [{\"from\": 0, \"to\": "
       "5, \"bytes\": 1}]}",
       "out of range", PP_EINPUT},
      {"{\"stages\": [{\"compute_ms\": 1}, {\"compute_ms\": 1}], \"edges\": "
       "[{\"from\": 0, \"to\": \"zz\", \"bytes\": 1}]}",
       "zz", PP_EINPUT},
      {"{\"stages\": [{\"compute_ms\": 1}, {\"compute_ms\": 1}], \"edges\": "
       "[{\"from\": 0, \"bytes\": 1}]}",
       "edge 0", PP_EINPUT},
      {"{\"stages\": [{\"compute_ms\": 1}, {\"compute_ms\": 1}], \"edges\": "
       "[{\"from\": 0, \"to\": 1, \"bytes\": -5}]}",
       "bytes", PP_EINPUT},
      {"{\"stages\": [{\"compute_ms\": 1e999}]}", "sg.json", PP_EPARSE},
      /* one pair of stages twice, either way: Scotch's inconsistent
      ** graph before (exit 2), an input error naming both edges now */
      {"{\"stages\": [{\"compute_ms\": 1}, {\"compute_ms\": 1}], \"edges\": "
       "[{\"from\": 0, \"to\": 1, \"bytes\": 1}, {\"from\": 1, \"to\": 0, "
       "\"bytes\": 2}]}",
       "edges 0 and 1 both join stages 0 and 1", PP_EINPUT},
      {"{\"stages\": [{\"compute_ms\": 1}, {\"compute_ms\": 1}, "
       "{\"compute_ms\": 1}], \"edges\": [{\"from\": 0, \"to\": 1, "
       "\"bytes\": 1}, {\"from\": 1, \"to\": 2, \"bytes\": 1}, {\"from\": 0, "
       "\"to\": 1, \"bytes\": 3}]}",
       "edges 0 and 2 both join", PP_EINPUT},
  };
  pp_ctx *ctx = tu_fix_ctx(state);
  size_t i;
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    pp_stage_graph *g = NULL;
    pp_status rc = pp_stage_graph_read_json(ctx, bad[i].text,
                                            strlen(bad[i].text), "sg.json", &g);
    if (rc == PP_OK || !strstr(pp_ctx_errmsg(ctx), bad[i].msg))
      fail_msg("'%s': status %d, message: %s", bad[i].text, (int)rc,
               pp_ctx_errmsg(ctx));
    assert_null(g);
    pp_ctx_clear_error(ctx);
  }
}

/* A stage with 40 neighbours: the group bound's table of 2^deg masks is
** skipped past its limit, and no int is shifted by the degree on the way
** (UBSan caught 1 << 40 in map_bound.c under the sanitizer build). */
static void t_high_degree(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  char buf[8192];
  size_t off = 0;
  int i, alg;
  pp_stage_graph *g = NULL;
  pp_cluster *c = NULL;
  off += (size_t)snprintf(buf + off, sizeof buf - off, "{\"stages\": [");
  for (i = 0; i <= 40; i++)
    off += (size_t)snprintf(buf + off, sizeof buf - off,
                            "%s{\"compute_ms\": 1, \"param_bytes\": 1000}",
                            i ? ", " : "");
  off += (size_t)snprintf(buf + off, sizeof buf - off, "], \"edges\": [");
  for (i = 1; i <= 40; i++)
    off += (size_t)snprintf(buf + off, sizeof buf - off,
                            "%s{\"from\": 0, \"to\": %d, \"bytes\": 1e6}",
                            i > 1 ? ", " : "", i);
  snprintf(buf + off, sizeof buf - off, "]}");
  assert_int_equal(
      pp_stage_graph_read_json(ctx, buf, strlen(buf), "star.json", &g), PP_OK);
  assert_int_equal(pp_cluster_load(ctx, "hier:6x8", &c), PP_OK);
  for (alg = 0; alg < 2; alg++) {
    pp_mapping *m =
        run(ctx, g, c, 1, PP_MAP_P2P, alg ? PP_MAP_SCOTCH : PP_MAP_EXACT, 1);
    pp_mapping_destroy(m);
  }
  pp_cluster_destroy(c);
  pp_stage_graph_destroy(g);
}

/* pp_map_params.stop (a signal handler's flag, set here before the
** call): the exact search on a problem it cannot prove in its 30 s stops
** at once, keeping its start mapping, timed out, not optimal. */
static void t_stop(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  char buf[4096];
  size_t off = 0;
  int i;
  volatile sig_atomic_t flag = 1;
  pp_stage_graph *g = NULL;
  pp_cluster *c = NULL;
  pp_mapping *m = NULL;
  pp_map_params p;
  pp_map_summary sum;
  off += (size_t)snprintf(buf + off, sizeof buf - off, "{\"stages\": [");
  for (i = 0; i < 16; i++)
    off += (size_t)snprintf(buf + off, sizeof buf - off,
                            "%s{\"compute_ms\": %d, \"param_bytes\": 1e8}",
                            i ? ", " : "", 10 + (i * 7) % 5);
  off += (size_t)snprintf(buf + off, sizeof buf - off, "], \"edges\": [");
  for (i = 1; i < 16; i++)
    off += (size_t)snprintf(buf + off, sizeof buf - off,
                            "%s{\"from\": %d, \"to\": %d, \"bytes\": 1e7}",
                            i > 1 ? ", " : "", i - 1, i);
  snprintf(buf + off, sizeof buf - off, "]}");
  assert_int_equal(
      pp_stage_graph_read_json(ctx, buf, strlen(buf), "chain.json", &g), PP_OK);
  assert_int_equal(pp_cluster_load(ctx, "random_blk_1:512", &c), PP_OK);
  pp_map_params_init(&p);
  p.replicas = 32;
  p.time_limit_s = 30;
  p.stop = &flag;
  assert_int_equal(pp_map(ctx, g, c, &p, &m), PP_OK);
  assert_int_equal(pp_mapping_summary(m, &sum), PP_OK);
  assert_true(sum.timed_out && !sum.optimal);
  assert_true(sum.objective_ms >= sum.lower_bound_ms);
  if (sum.seconds > 10) /* the 30 s limit ran: the flag was not read */
    fail_msg("stopped map took %.1f s", sum.seconds);
  {
    bool used[512] = {false};
    int s, r;
    for (s = 0; s < 16; s++)
      for (r = 0; r < 32; r++) {
        int32_t d = pp_mapping_device(m, s, r);
        assert_true(d >= 0 && d < 512 && !used[d]);
        used[d] = true;
      }
  }
  pp_mapping_destroy(m);
  pp_cluster_destroy(c);
  pp_stage_graph_destroy(g);
}

static void t_cli(void **state)
{
  char *out, *err, args[1024];
  json_t *j;
  int rc;
  (void)state;
  snprintf(args, sizeof args, "partition --model gpt2-amp --stages 4 -o %s",
           tu_tmp("sg.json"));
  assert_int_equal(tu_run(args, &out, &err), 0);
  snprintf(args, sizeof args,
           "map --stages %s --replicas 4 --cluster torus2d:4x4 --json",
           tu_tmp("sg.json"));
  rc = tu_run(args, &out, &err);
  if (rc)
    fail_msg("exit %d: %s", rc, err);
  j = json_loads(out, 0, NULL);
  assert_non_null(j);
  assert_true(json_is_number(json_object_get(j, "objective")));
  assert_true(json_is_number(json_object_get(j, "lower_bound")));
  assert_true(json_is_boolean(json_object_get(j, "optimal")));
  assert_int_equal(json_array_size(json_object_get(j, "mapping")), 4);
  assert_int_equal(
      json_array_size(json_array_get(json_object_get(j, "mapping"), 0)), 4);
  assert_non_null(json_object_get(json_object_get(j, "search"), "nodes"));
  json_decref(j);
  snprintf(args, sizeof args,
           "map --stages %s --replicas 5 --cluster torus2d:4x4",
           tu_tmp("sg.json"));
  rc = tu_run(args, &out, &err);
  assert_int_equal(rc, 1);
  assert_non_null(strstr(err, "16 devices"));
  snprintf(args, sizeof args,
           "map --stages %s --replicas 2 --cluster torus2d:4x4 --algorithm "
           "best",
           tu_tmp("sg.json"));
  assert_int_equal(tu_run(args, &out, &err), 1);
  assert_int_equal(
      tu_run("map --stages /no/such.json --cluster torus2d:4x4", &out, &err),
      1);
  assert_non_null(strstr(err, "/no/such.json"));
}

/* ---- the mapping's accessors ------------------------------------------- */

/* Objective and algorithm names round-trip through their parsers; past
** the last value there is no name; an unknown name (or none) is
** PP_EINVAL and leaves *out alone. */
/* Edges by stage name on a 20,000-stage graph whose names run backwards
** ("s19999" is stage 0): every edge resolves to the right index (issue
** 22: the lookup was a linear search, 60k stages took 31 s). */
static void t_many_names(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  enum { S = 20000 };
  size_t cap = (size_t)S * 128, off = 0;
  char *buf = malloc(cap);
  pp_stage_graph *g = NULL;
  int i;
  assert_non_null(buf);
  off += (size_t)snprintf(buf + off, cap - off, "{\"stages\": [");
  for (i = 0; i < S; i++)
    off += (size_t)snprintf(buf + off, cap - off,
                            "%s{\"name\": \"s%d\", \"compute_ms\": 1}",
                            i ? ", " : "", S - 1 - i);
  off += (size_t)snprintf(buf + off, cap - off, "], \"edges\": [");
  for (i = 0; i + 1 < S; i++) /* stage i -> i + 1, by name */
    off += (size_t)snprintf(buf + off, cap - off,
                            "%s{\"from\": \"s%d\", \"to\": \"s%d\", "
                            "\"bytes\": 1}",
                            i ? ", " : "", S - 1 - i, S - 2 - i);
  snprintf(buf + off, cap - off, "]}");
  assert_int_equal(
      pp_stage_graph_read_json(ctx, buf, strlen(buf), "names.json", &g), PP_OK);
  assert_int_equal(g->ne, S - 1);
  for (i = 0; i + 1 < S; i++)
    if (g->from[i] != i || g->to[i] != i + 1)
      fail_msg("edge %d: %d -> %d", i, (int)g->from[i], (int)g->to[i]);
  pp_stage_graph_destroy(g);
  free(buf);
}

static void t_names(void **state)
{
  static const char *const unknown[] = {"", "nosuch", "exact ", NULL};
  int i, j;
  size_t k;
  (void)state;
  for (i = PP_MAP_P2P; i <= PP_MAP_AUTO; i++) {
    const char *name = pp_map_objective_name((pp_map_objective)i);
    pp_map_objective o = (pp_map_objective)-1;
    assert_non_null(name);
    assert_true(name[0] != '\0');
    assert_int_equal(pp_map_objective_parse(name, &o), PP_OK);
    assert_int_equal(o, i);
    for (j = PP_MAP_P2P; j < i; j++)
      assert_string_not_equal(name, pp_map_objective_name((pp_map_objective)j));
  }
  assert_null(pp_map_objective_name((pp_map_objective)(PP_MAP_AUTO + 1)));
  assert_null(pp_map_objective_name((pp_map_objective)-1));
  for (i = PP_MAP_EXACT; i <= PP_MAP_SCOTCH; i++) {
    const char *name = pp_map_algorithm_name((pp_map_algorithm)i);
    pp_map_algorithm a = (pp_map_algorithm)-1;
    assert_non_null(name);
    assert_true(name[0] != '\0');
    assert_int_equal(pp_map_algorithm_parse(name, &a), PP_OK);
    assert_int_equal(a, i);
    for (j = PP_MAP_EXACT; j < i; j++)
      assert_string_not_equal(name, pp_map_algorithm_name((pp_map_algorithm)j));
  }
  assert_null(pp_map_algorithm_name((pp_map_algorithm)(PP_MAP_SCOTCH + 1)));
  assert_string_equal(pp_map_objective_name(PP_MAP_ALLREDUCE), "allreduce");
  assert_string_equal(pp_map_algorithm_name(PP_MAP_MEGATRON), "megatron");
  for (k = 0; k < sizeof unknown / sizeof unknown[0]; k++) {
    pp_map_objective o = PP_MAP_FULL;
    pp_map_algorithm a = PP_MAP_ANNEAL;
    assert_int_equal(pp_map_objective_parse(unknown[k], &o), PP_EINVAL);
    assert_int_equal(o, PP_MAP_FULL);
    assert_int_equal(pp_map_algorithm_parse(unknown[k], &a), PP_EINVAL);
    assert_int_equal(a, PP_MAP_ANNEAL);
  }
  {
    pp_map_objective o = PP_MAP_FULL;
    pp_map_algorithm a = PP_MAP_ANNEAL;
    assert_int_equal(pp_map_objective_parse("exact", &o), PP_EINVAL);
    assert_int_equal(pp_map_algorithm_parse("p2p", &a), PP_EINVAL);
  }
}

/* A mapping's JSON (pp_mapping_write), parsed. */
static json_t *mapping_json(pp_ctx *ctx, const pp_mapping *m)
{
  char *buf = NULL;
  size_t len = 0;
  json_error_t e;
  json_t *j;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  assert_int_equal(pp_mapping_write(ctx, m, 1, f), PP_OK);
  fclose(f);
  j = json_loads(buf, 0, &e);
  if (!j)
    fail_msg("not JSON (%s): %s", e.text, buf);
  free(buf);
  return j;
}

/* pp_mapping_time of every stage replica: the time priced here
** independently under the objective used, and exactly the JSON's
** stage_times[s][r]; the summary's objective (and the JSON's) is the
** largest of them, under every objective (map.c: ppi_map_value); out of
** range it is NaN. */
static void t_mapping_time(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  uint64_t rng = 23;
  int iter, obj, alg, checked = 0;
  for (iter = 0; iter < 40; iter++) {
    struct inst x;
    pp_cluster *c;
    pp_stage_graph *g;
    random_inst(&rng, &x, iter % 2);
    c = inst_cluster(ctx, &x);
    g = inst_graph(ctx, &x);
    assert_int_equal(pp_stage_graph_nstage(g), x.S);
    for (obj = PP_MAP_P2P; obj <= PP_MAP_AUTO; obj++)
      for (alg = PP_MAP_EXACT; alg <= PP_MAP_MEGATRON; alg++) {
        pp_mapping *m = run(ctx, g, c, x.R, obj, (pp_map_algorithm)alg, 1);
        pp_map_summary sum;
        pp_map_objective used;
        json_t *j = mapping_json(ctx, m), *times, *kind;
        int p[MAXD][MAXS], s, r;
        double worst = 0;
        assert_int_equal(pp_mapping_summary(m, &sum), PP_OK);
        if (obj != PP_MAP_AUTO)
          assert_int_equal(sum.objective, obj);
        else
          assert_true(sum.objective <= PP_MAP_FULL);
        kind = json_object_get(j, "objective_kind");
        assert_true(json_is_string(kind));
        assert_int_equal(pp_map_objective_parse(json_string_value(kind), &used),
                         PP_OK);
        assert_int_equal(used, sum.objective);
        for (s = 0; s < x.S; s++)
          for (r = 0; r < x.R; r++)
            p[r][s] = pp_mapping_device(m, s, r);
        times = json_object_get(j, "stage_times");
        assert_int_equal(json_array_size(times), x.S);
        for (s = 0; s < x.S; s++) {
          double ring = ring_of(&x, sum.objective, p, s);
          const json_t *row = json_array_get(times, (size_t)s);
          assert_int_equal(json_array_size(row), x.R);
          for (r = 0; r < x.R; r++) {
            double t = pp_mapping_time(m, s, r);
            const json_t *jt = json_array_get(row, (size_t)r);
            near(t, replica_time(&x, sum.objective, p, s, r, ring),
                 "time = recomputed", iter);
            assert_true(json_is_number(jt));
            if (json_number_value(jt) != t)
              fail_msg("iteration %d: stage %d replica %d: JSON %.17g, "
                       "pp_mapping_time %.17g",
                       iter, s, r, json_number_value(jt), t);
            worst = t > worst ? t : worst;
          }
        }
        assert_true(sum.objective_ms == worst);
        assert_true(json_number_value(json_object_get(j, "objective")) ==
                    worst);
        assert_true(isnan(pp_mapping_time(m, x.S, 0)));
        assert_true(isnan(pp_mapping_time(m, 0, x.R)));
        assert_true(isnan(pp_mapping_time(m, -1, 0)));
        assert_true(isnan(pp_mapping_time(m, 0, -1)));
        json_decref(j);
        pp_mapping_destroy(m);
        checked++;
      }
    pp_stage_graph_destroy(g);
    pp_cluster_destroy(c);
  }
  assert_true(isnan(pp_mapping_time(NULL, 0, 0)));
  print_message("%d mappings: every replica's time as priced and as written\n",
                checked);
}

/* A partition's stage graph has the partition's stages. */
static void t_stage_graph_nstage(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m;
  int32_t S;
  assert_int_equal(pp_model_load(ctx, "fpn", &m), PP_OK);
  for (S = 1; S <= 6; S++) {
    pp_part_params pp;
    pp_part_summary sum;
    pp_partition *pt;
    pp_stage_graph *g;
    pp_part_params_init(&pp);
    pp.stages = S;
    pp.method = S % 2 ? PP_PART_OPTIMAL : PP_PART_UNIFORM_LAYERS;
    assert_int_equal(pp_partition_chain(ctx, m, &pp, &pt), PP_OK);
    assert_int_equal(pp_partition_summary(pt, &sum), PP_OK);
    assert_int_equal(sum.nstage, S);
    assert_int_equal(pp_partition_stage_graph(ctx, pt, &g), PP_OK);
    assert_int_equal(pp_stage_graph_nstage(g), sum.nstage);
    pp_stage_graph_destroy(g);
    pp_partition_destroy(pt);
  }
  assert_int_equal(pp_stage_graph_nstage(NULL), 0);
  pp_model_destroy(m);
}

/* ---- the group bound (map_bound.c) ------------------------------------- */

/* A structured instance: a grid with hop bandwidths (25 / hops) or blocks
** of fast links joined by slow ones; a chain with skips (odd cycles). */
static void structured_inst(uint64_t *rng, struct inst *x, bool mixed)
{
  int i, j, n;
  memset(x, 0, sizeof *x);
  x->S = 2 + (int)tu_rand(rng, MAXS - 1);
  x->R = 1 + (int)tu_rand(rng, 2);
  n = x->S * x->R;
  if (tu_rand(rng, 2)) { /* a 2 x c grid */
    int cols = (n + 1) / 2 + (int)tu_rand(rng, 2);
    if (cols < 2)
      cols = 2;
    if (2 * cols > MAXD)
      cols = MAXD / 2;
    x->D = 2 * cols;
    for (i = 0; i < x->D; i++)
      for (j = 0; j < x->D; j++) {
        int h = abs(i / cols - j / cols) + abs(i % cols - j % cols);
        x->bw[i][j] = i == j ? 0 : 25.0 / h;
      }
  } else { /* blocks of b */
    int b = 2 + (int)tu_rand(rng, 3);
    x->D = b * ((n + b - 1) / b);
    if (x->D < 4)
      x->D = 4 - 4 % b + (4 % b ? b : 0);
    if (x->D > MAXD)
      x->D = MAXD - MAXD % b;
    for (i = 0; i < x->D; i++)
      for (j = 0; j < i; j++)
        x->bw[i][j] = x->bw[j][i] =
            i / b == j / b ? 40 + tu_rand(rng, 11) : 2 + tu_rand(rng, 9);
  }
  for (i = 0; i < x->S; i++) {
    x->compute[i] = 1 + tu_rand(rng, 20);
    x->param[i] = tu_rand(rng, 2) ? 1e6 * tu_rand(rng, 100) : 0;
  }
  for (i = 0; i + 1 < x->S; i++) {
    x->ea[x->ne] = i;
    x->eb[x->ne] = i + 1;
    x->em[x->ne++] = 1e6 * (1 + tu_rand(rng, 400));
  }
  for (i = 0; i + 2 < x->S; i++)
    if (tu_rand(rng, 2)) {
      x->ea[x->ne] = i;
      x->eb[x->ne] = i + 2;
      x->em[x->ne++] = 1e6 * (1 + tu_rand(rng, 400));
    }
  for (i = 0; i < x->D; i++)
    x->speed[i] = mixed && tu_rand(rng, 2) ? 0.5 + tu_rand(rng, 4) / 2.0 : 1;
  x->lat_us = tu_rand(rng, 2) ? 0 : tu_rand(rng, 30);
}

/* Every group bound (each partition found, and random partitions) is <=
** the brute-force optimum, for p2p and full, equal and mixed speeds; the
** group bound beats the matching bound on some instances. */
static void t_group_bound(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  uint64_t rng = 11;
  int iter, obj, tighter = 0, found = 0, n_iter = 400;
  for (iter = 0; iter < n_iter; iter++) {
    struct inst x;
    pp_cluster *c;
    pp_stage_graph *g;
    if (iter % 4 == 3)
      random_inst(&rng, &x, iter % 2);
    else
      structured_inst(&rng, &x, iter % 2);
    c = inst_cluster(ctx, &x);
    g = inst_graph(ctx, &x);
    for (obj = 0; obj < 3; obj += 2) {
      struct ppi_arena ar;
      struct ppi_map q;
      int32_t grp[4 * MAXD], np, i, d;
      double want = brute(&x, obj), old, gb, lb;
      ppi_arena_init(&ar, ppi_ctx_alloc(ctx));
      assert_int_equal(ppi_map_build(ctx, &ar, g, c, x.R, obj, &q), PP_OK);
      old = ppi_map_matching_bound(ctx, &q);
      gb = ppi_map_group_bounds(ctx, &q, MAP_GROUP_BUDGET);
      lb = ppi_map_lower_bound(ctx, &q);
      assert_true(old <= want * (1 + 1e-9));
      if (!(gb <= want * (1 + 1e-9)))
        fail_msg("iteration %d: group bound %.12g > optimum %.12g", iter, gb,
                 want);
      assert_true(lb <= want * (1 + 1e-9));
      assert_true(lb >= old && lb >= gb);
      tighter += gb > old * (1 + 1e-9);
      np = ppi_map_groups(ctx, &q, grp, 4);
      found += np > 0;
      for (i = 0; i < np; i++)
        assert_true(ppi_map_group_bound(ctx, &q, grp + i * x.D, 1000000) <=
                    want * (1 + 1e-9));
      for (i = 0; i < 3; i++) { /* any partition: still a bound */
        for (d = 0; d < x.D; d++)
          grp[d] = (int32_t)tu_rand(&rng, 3);
        assert_true(ppi_map_group_bound(ctx, &q, grp, 1000000) <=
                    want * (1 + 1e-9));
        /* a tiny budget: weaker, never wrong */
        assert_true(ppi_map_group_bound(ctx, &q, grp, 3) <= want * (1 + 1e-9));
      }
      ppi_arena_free(&ar);
    }
    pp_stage_graph_destroy(g);
    pp_cluster_destroy(c);
  }
  print_message("group bound: tighter than the matching bound on %d of %d "
                "(instance, objective) pairs; groups found on %d\n",
                tighter, 2 * n_iter, found);
  assert_true(tighter > 0);
  assert_true(found > n_iter / 2);
}

/* Part and solve (map_parts.c): on random instances an injective mapping
** never better than the optimum (its gap printed), not applied where it
** does not apply; on a mesh, compact parts reach the lower bound. */
static void t_parts(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  uint64_t rng = 19;
  int iter, obj, ran[2] = {0, 0}, hit[2] = {0, 0}, n_iter = 300, k;
  double gap_sum[2] = {0, 0}, gap_max[2] = {0, 0};
  for (iter = 0; iter < n_iter; iter++) {
    struct inst x;
    pp_cluster *c;
    pp_stage_graph *g;
    random_inst(&rng, &x, iter % 2);
    c = inst_cluster(ctx, &x);
    g = inst_graph(ctx, &x);
    for (obj = 0; obj < 3; obj++) {
      struct ppi_arena ar;
      struct ppi_map q;
      int32_t p[MAXD * MAXS];
      int pv[MAXD][MAXS], s, r;
      bool found, used[MAXD] = {false};
      double want = brute(&x, obj), got;
      ppi_arena_init(&ar, ppi_ctx_alloc(ctx));
      assert_int_equal(ppi_map_build(ctx, &ar, g, c, x.R, obj, &q), PP_OK);
      assert_int_equal(ppi_map_parts(ctx, &q, 0.05, 0, 1 + iter % 2,
                                     ppi_map_exact, p, &found),
                       PP_OK);
      assert_int_equal(found, obj == MAP_P2P && x.R >= 2 && x.S >= 2);
      if (found) {
        for (r = 0; r < x.R; r++)
          for (s = 0; s < x.S; s++) {
            int32_t d = p[r * x.S + s];
            assert_true(d >= 0 && d < x.D && !used[d]);
            used[d] = true;
            pv[r][s] = d;
          }
        got = ppi_map_value(&q, p, NULL);
        near(got, value(&x, obj, pv), "parts: value = recomputed", iter);
        assert_true(got >= want * (1 - 1e-9));
        /* k = 1: p2p with every device used, where it is meant to work */
        for (k = 0; k < 1 + (obj == MAP_P2P && x.D == x.S * x.R); k++) {
          ran[k]++;
          hit[k] += got <= want * (1 + 1e-9);
          gap_sum[k] += got / want - 1;
          if (got / want - 1 > gap_max[k])
            gap_max[k] = got / want - 1;
        }
      }
      ppi_arena_free(&ar);
    }
    pp_stage_graph_destroy(g);
    pp_cluster_destroy(c);
  }
  for (k = 0; k < 2; k++)
    print_message("part and solve, %s: optimal on %d of %d, mean gap %.2f%%, "
                  "largest %.2f%%\n",
                  k ? "p2p, every device used" : "all", hit[k], ran[k],
                  100 * gap_sum[k] / ran[k], 100 * gap_max[k]);
  assert_true(ran[0] > n_iter / 4 && ran[1] > 10);
  {
    /* 16 stages of the FPN-like model, 8 replicas on a 16 x 8 mesh */
    struct ppi_arena ar;
    struct ppi_map q;
    pp_stage_graph *g = fpn_stages(ctx, 16);
    pp_cluster *c;
    int32_t *p;
    bool found;
    assert_int_equal(pp_cluster_load(ctx, "mesh2d:16x8", &c), PP_OK);
    ppi_arena_init(&ar, ppi_ctx_alloc(ctx));
    assert_int_equal(ppi_map_build(ctx, &ar, g, c, 8, MAP_P2P, &q), PP_OK);
    assert_non_null(p = ppi_arena_alloc(&ar, ctx, (size_t)q.n, sizeof *p));
    assert_int_equal(ppi_map_parts(ctx, &q, 60, 0, 2, ppi_map_exact, p, &found),
                     PP_OK);
    assert_true(found);
    near(ppi_map_value(&q, p, NULL), ppi_map_lower_bound(ctx, &q),
         "mesh parts = lower bound", 0);
    ppi_arena_free(&ar);
    pp_cluster_destroy(c);
    pp_stage_graph_destroy(g);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      TU_CTX_TEST(t_exact_equal),
      TU_CTX_TEST(t_exact_mixed),
      TU_CTX_TEST(t_deterministic),
      TU_CTX_TEST(t_bad_graphs),
      TU_CTX_TEST(t_high_degree),
      cmocka_unit_test(t_cli),
      TU_CTX_TEST(t_group_bound),
      TU_CTX_TEST(t_parts),
      TU_CTX_TEST(t_scotch_repeatable),
      cmocka_unit_test(t_names),
      TU_CTX_TEST(t_mapping_time),
      TU_CTX_TEST(t_stage_graph_nstage),
      TU_CTX_TEST(t_stop),
      TU_CTX_TEST(t_many_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
