/* SPDX-License-Identifier: MIT */
/*
** AMP's cost model (src/cost/cost_amp.c, `--cost-model amp`) against AMP's
** own predictions: every row of data/amp/amp_cached_trials.csv, built
** as the plan AMP scored (DeepSpeed rank order, rank r on device r),
** must evaluate to that row's pred_s within 0.5 %.  The CSV keeps
** pred_s to 4 decimals (under 5e-5 relative), so a correct model sits
** far inside that.  A small term can hide under 0.5 % (one homogeneous
** p2p boundary is about 0.1 % of its row), and the trials never cut
** after the logits, so t_boundary_volumes checks the p2p volumes alone.
**
** AMP's layer-assignment DP (src/part/part_amp_original.c, the partition
** method amp-original) against AMP's choices: for every row,
** t_amp_partitions builds the inputs AMP's DP got (data/amp/COST_MODEL.md
** 3, 3.1: e = 3 mbs fwd of the row's profile, blended on the mixed
** cluster, over AMP's work layers; the p2p costs cc in rank order; B
** micro-batches),
** runs the kernel and maps its split back to DeepSpeed entries (the
** inputs, the mapping and the uniform split are the library's,
** ppi_amp_dp_inputs and its neighbours in part.h).  Where B > 1 the
** result must be the row's ds_partition exactly.  Where B = 1 AMP's
** driver skipped the DP, so the row must be its uniform split of the 24
** layers instead, and the DP's choice is printed where it differs.
** t_amp_public asks the same of the public path (pp_partition_chain,
** amp-original with amp_inputs) on all 171 rows, and t_amp_compare of
** `parplan compare''s AMP baseline: AMP's first choice and prediction.
*/
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include "part/part.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRIALS "data/amp/amp_cached_trials.csv"
#define NTRIAL 171
#define TOL 0.005
#define MAXPP 16
#define MAXWORK 64

/* One row of the trials file. */
struct trial {
  char experiment[32];
  int rank, mbs, mp, dp, pp;
  int32_t part[MAXPP + 1]; /* pp + 1 stage boundaries over the entries */
  double pred_s;
};

/* The model, cluster and global batch of each experiment
** (data/amp/clusters.json), and the work layers AMP's uniform split
** (B = 1) adds to the first stage. */
struct setup {
  const char *experiment, *model, *cluster;
  int64_t gbs;
  int32_t head;
};
static const struct setup setups[] = {
    {"homogeneous", "gpt2-amp", "amp-homogeneous", 32, 2},
    {"het_cluster", "gpt2-amp", "amp-het-cluster", 32, 2},
    {"het_model", "transgan-amp", "amp-het-model", 64, 0},
};
#define NSETUP (int)(sizeof setups / sizeof setups[0])

static int setup_of(const char *experiment)
{
  int i;
  for (i = 0; i < NSETUP; i++)
    if (strcmp(setups[i].experiment, experiment) == 0)
      return i;
  fail_msg("unknown experiment '%s'", experiment);
  return -1;
}

/* Parse the trials file (no quoting; the columns are fixed by the
** header, checked here so that a reordered file fails loudly).  Returns
** the number of rows; *out is malloc'd. */
static int read_trials(struct trial **out)
{
  static const char header[] =
      "experiment,pred_rank,mbs,mp,dp,pp,ds_partition,pred_s,real_s";
  char *buf = tu_slurp(tu_path(TRIALS), NULL), *line, *save = NULL;
  struct trial *t = calloc(NTRIAL + 1, sizeof *t);
  int n = -1;
  if (!buf)
    fail_msg("cannot read %s", tu_path(TRIALS));
  assert_non_null(t);
  for (line = strtok_r(buf, "\r\n", &save); line;
       line = strtok_r(NULL, "\r\n", &save), n++) {
    char *f[9], *p = line, *end;
    int k = 0, j;
    if (n < 0) {
      assert_string_equal(line, header);
      continue;
    }
    assert_true(n < NTRIAL);
    for (;;) {
      char *comma = strchr(p, ',');
      assert_true(k < 9);
      f[k++] = p;
      if (!comma)
        break;
      *comma = '\0';
      p = comma + 1;
    }
    assert_int_equal(k, 9);
    assert_true(strlen(f[0]) < sizeof t[n].experiment);
    strcpy(t[n].experiment, f[0]);
    t[n].rank = atoi(f[1]);
    t[n].mbs = atoi(f[2]);
    t[n].mp = atoi(f[3]);
    t[n].dp = atoi(f[4]);
    t[n].pp = atoi(f[5]);
    assert_true(t[n].pp >= 1 && t[n].pp <= MAXPP);
    assert_int_equal(t[n].mp * t[n].dp * t[n].pp, 16);
    for (j = 0, p = f[6]; j <= t[n].pp; j++) {
      long b = strtol(p, &end, 10);
      if (end == p)
        fail_msg("row %d: partition '%s' is short", n, f[6]);
      t[n].part[j] = (int32_t)b;
      p = end;
    }
    while (*p == ' ')
      p++;
    if (*p)
      fail_msg("row %d: partition has more than pp + 1 boundaries", n);
    t[n].pred_s = strtod(f[7], &end);
    assert_true(end != f[7] && !*end && t[n].pred_s > 0);
  }
  free(buf);
  *out = t;
  return n;
}

static pp_model *load_model(pp_ctx *ctx, const char *spec)
{
  pp_model *m = NULL;
  if (pp_model_load(ctx, spec, &m) != PP_OK)
    fail_msg("loading %s: %s", spec, pp_ctx_errmsg(ctx));
  return m;
}

static pp_cluster *load_cluster(pp_ctx *ctx, const char *spec)
{
  pp_cluster *c = NULL;
  if (pp_cluster_load(ctx, spec, &c) != PP_OK)
    fail_msg("loading %s: %s", spec, pp_ctx_errmsg(ctx));
  return c;
}

/* The plan AMP scores for row t: stage p holds entries
** [part[p], part[p+1]); its replica d runs on the devices of DeepSpeed
** ranks k + mp d + mp dp p, k < mp.  With uneven = true, stage 0 gets
** one replica fewer than the others (the bad-input case). */
static pp_plan *trial_plan(pp_ctx *ctx, const struct trial *t, int64_t gbs,
                           bool uneven)
{
  pp_plan_params pa;
  pp_plan_builder *b = NULL;
  pp_plan *p = NULL;
  int32_t ops[64], devs[16];
  int s, d, k, v;
  pp_plan_params_init(&pa);
  pa.global_batch = gbs;
  pa.micro_batch = t->mbs;
  pa.tp = t->mp;
  assert_int_equal(pp_plan_builder_create(ctx, &pa, "amp trial", &b), PP_OK);
  for (s = 0; s < t->pp; s++) {
    int32_t id = -1, n = t->part[s + 1] - t->part[s];
    int ndp = uneven && s == 0 ? t->dp / 2 : t->dp;
    assert_true(n > 0 && n <= 64);
    for (v = 0; v < n; v++)
      ops[v] = t->part[s] + v;
    assert_int_equal(pp_plan_builder_add_stage(b, ops, n, &id), PP_OK);
    assert_int_equal(id, s);
    for (d = 0; d < ndp; d++) {
      for (k = 0; k < t->mp; k++)
        devs[k] = k + t->mp * d + t->mp * t->dp * s;
      assert_int_equal(pp_plan_builder_add_replica(b, s, devs), PP_OK);
    }
  }
  if (pp_plan_builder_finish(b, &p) != PP_OK)
    fail_msg("building the plan: %s", pp_ctx_errmsg(ctx));
  return p;
}

static pp_status evaluate(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                          const pp_cluster *c, pp_cost_kind kind,
                          pp_eval_summary *out)
{
  pp_cost_params cp;
  pp_eval *e = NULL;
  pp_status rc;
  pp_cost_params_init(&cp);
  cp.kind = kind;
  rc = pp_evaluate(ctx, p, m, c, &cp, &e);
  if (rc == PP_OK) {
    assert_non_null(e);
    assert_int_equal(pp_eval_get_summary(e, out), PP_OK);
  } else {
    assert_null(e);
  }
  pp_eval_destroy(e);
  return rc;
}

/* Every experiment's model and cluster, and the trials. */
struct amp_env {
  struct tu_alloc a;
  pp_ctx *ctx;
  pp_model *m[NSETUP];
  pp_cluster *c[NSETUP];
  struct trial *t;
  int n;
};

static void env_open(struct amp_env *e)
{
  int i;
  e->ctx = tu_ctx(&e->a);
  for (i = 0; i < NSETUP; i++) {
    e->m[i] = load_model(e->ctx, setups[i].model);
    e->c[i] = load_cluster(e->ctx, setups[i].cluster);
  }
  e->n = read_trials(&e->t);
  assert_int_equal(e->n, NTRIAL);
}

/* Free everything; then, with the rows printed above flushed before
** cmocka's report on stderr, fail when `bad' rows differ. */
static void env_close(struct amp_env *e, int bad, const char *what)
{
  int i;
  for (i = 0; i < NSETUP; i++) {
    pp_model_destroy(e->m[i]);
    pp_cluster_destroy(e->c[i]);
  }
  free(e->t);
  pp_ctx_destroy(e->ctx);
  assert_int_equal(e->a.live, 0);
  fflush(stdout);
  if (bad)
    fail_msg("%d of %d rows %s", bad, e->n, what);
}

/* ---- tests ------------------------------------------------------------ */

static void t_amp_trials(void **state)
{
  struct amp_env e;
  double worst[NSETUP] = {0};
  int worst_row[NSETUP], nrow[NSETUP] = {0};
  int i, bad = 0;
  (void)state;
  env_open(&e);
  for (i = 0; i < NSETUP; i++)
    worst_row[i] = -1;
  for (i = 0; i < e.n; i++) {
    const struct trial *t = e.t;
    pp_ctx *ctx = e.ctx;
    int x = setup_of(t[i].experiment);
    pp_plan *p = trial_plan(ctx, &t[i], setups[x].gbs, false);
    pp_eval_summary sum;
    double got, err;
    if (evaluate(ctx, p, e.m[x], e.c[x], PP_COST_AMP, &sum) != PP_OK)
      fail_msg("row %d (%s #%d): %s", i + 1, t[i].experiment, t[i].rank,
               pp_ctx_errmsg(ctx));
    got = sum.iteration_ms / 1000;
    err = fabs(got - t[i].pred_s) / t[i].pred_s;
    nrow[x]++;
    if (err > worst[x] || worst_row[x] < 0) {
      worst[x] = err;
      worst_row[x] = i;
    }
    if (!(err <= TOL)) {
      int j;
      printf("row %d: %s #%d mbs %d mp %d dp %d pp %d partition", i + 1,
             t[i].experiment, t[i].rank, t[i].mbs, t[i].mp, t[i].dp, t[i].pp);
      for (j = 0; j <= t[i].pp; j++)
        printf(" %d", (int)t[i].part[j]);
      printf(": got %.6f s, AMP %.4f s (%.3f %%)\n", got, t[i].pred_s,
             100 * err);
      bad++;
    }
    pp_plan_destroy(p);
  }
  for (i = 0; i < NSETUP; i++) {
    assert_true(nrow[i] > 0);
    printf("%s: %d rows, max relative error %.2e (row %d)\n",
           setups[i].experiment, nrow[i], worst[i], worst_row[i] + 1);
  }
  {
    char what[64];
    snprintf(what, sizeof what, "are off AMP's pred_s by more than %.1f %%",
             100 * TOL);
    env_close(&e, bad, what);
  }
}

/* Plans built for AMP are ordinary plans: our own cost model prices
** them too (a finite, positive time; nothing is compared with AMP). */
static void t_parplan_model(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  struct trial *t = NULL;
  int n, i, seen[NSETUP] = {0};
  n = read_trials(&t);
  assert_int_equal(n, NTRIAL);
  /* The first row of each experiment, and one with tp and pp > 1. */
  for (i = 0; i < n; i++) {
    int x = setup_of(t[i].experiment);
    bool deep = t[i].mp > 1 && t[i].pp > 1;
    pp_model *m;
    pp_cluster *c;
    pp_plan *p;
    pp_eval_summary sum;
    if (seen[x] & (deep ? 2 : 1))
      continue;
    seen[x] |= deep ? 2 : 1;
    m = load_model(ctx, setups[x].model);
    c = load_cluster(ctx, setups[x].cluster);
    p = trial_plan(ctx, &t[i], setups[x].gbs, false);
    if (evaluate(ctx, p, m, c, PP_COST_PARPLAN, &sum) != PP_OK)
      fail_msg("row %d (%s #%d): %s", i + 1, t[i].experiment, t[i].rank,
               pp_ctx_errmsg(ctx));
    if (!(isfinite(sum.iteration_ms) && sum.iteration_ms > 0))
      fail_msg("row %d (%s #%d): iteration %g ms", i + 1, t[i].experiment,
               t[i].rank, sum.iteration_ms);
    pp_plan_destroy(p);
    pp_model_destroy(m);
    pp_cluster_destroy(c);
  }
  for (i = 0; i < NSETUP; i++)
    assert_int_equal(seen[i], 3);
  free(t);
}

/* The shipped trials never cut after the logits (entry 28) nor inside a
** TransGAN dim-16 run, so the p2p volumes AMP uses there are checked
** here by hand: S V / mp elements after embed2v, S H after a
** pass-through entry, and 1024 x 81 after every TransGAN entry whatever
** its real output (16x that for a dim-16 block).  AMP counts 32-bit
** elements at Gbps x 1e9 / 32 elements/s; dp = 1, so no gradient sync. */
static void t_boundary_volumes(void **state)
{
  static const struct {
    const char *model, *cluster;
    int mbs, mp, cut, nentry;
    double elems, elems_per_s;
  } cases[] = {
      /* every link of amp-homogeneous is 50 Gbps */
      {"gpt2-amp", "amp-homogeneous", 2, 2, 29, 30, 2 * 1024.0 * 52256 / 2,
       50e9 / 32},
      {"gpt2-amp", "amp-homogeneous", 2, 4, 29, 30, 2 * 1024.0 * 52256 / 4,
       50e9 / 32},
      {"gpt2-amp", "amp-homogeneous", 2, 2, 28, 30, 2 * 1024.0 * 1024,
       50e9 / 32},
      /* ranks 0 and 1 share a p3.8xlarge: 170 Gbps */
      {"transgan-amp", "amp-het-model", 2, 1, 46, 56, 2 * 1024.0 * 81,
       170e9 / 32},
  };
  pp_ctx *ctx = tu_fix_ctx(state);
  size_t i;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    pp_model *m = load_model(ctx, cases[i].model);
    pp_cluster *c = load_cluster(ctx, cases[i].cluster);
    struct trial t = {.mbs = cases[i].mbs,
                      .mp = cases[i].mp,
                      .dp = 1,
                      .pp = 2,
                      .part = {0, cases[i].cut, cases[i].nentry}};
    pp_plan *p = trial_plan(ctx, &t, 32, false);
    pp_eval_summary sum;
    double want = cases[i].elems / cases[i].elems_per_s * 1000;
    if (evaluate(ctx, p, m, c, PP_COST_AMP, &sum) != PP_OK)
      fail_msg("case %zu: %s", i, pp_ctx_errmsg(ctx));
    if (!(fabs(sum.p2p_ms - want) <= 1e-9 * want))
      fail_msg("case %zu (%s, cut %d, mp %d): p2p %.12g ms, want %.12g", i,
               cases[i].model, cases[i].cut, cases[i].mp, sum.p2p_ms, want);
    assert_true(sum.allreduce_ms == 0);
    pp_plan_destroy(p);
    pp_model_destroy(m);
    pp_cluster_destroy(c);
  }
}

/* AMP builds one pipeline averaged over dp replicas; a plan whose stages
** have different replica counts has no such pipeline. */
static void t_uneven_replicas(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = load_model(ctx, "gpt2-amp");
  pp_cluster *c = load_cluster(ctx, "amp-homogeneous");
  /* dp 4 x pp 4 (homogeneous #3); stage 0 gets 2 replicas, which still
  ** divide the batch, so only the AMP model objects. */
  struct trial t = {
      .mbs = 1, .mp = 1, .dp = 4, .pp = 4, .part = {0, 9, 15, 21, 30}};
  pp_plan *p = trial_plan(ctx, &t, 32, true);
  pp_eval_summary sum;
  assert_int_equal(pp_plan_nreplica(p, 0), 2);
  assert_int_equal(pp_plan_nreplica(p, 1), 4);
  tu_expect_error(ctx, evaluate(ctx, p, m, c, PP_COST_AMP, &sum), PP_EINPUT,
                  "replica count", (const char *)NULL);
  pp_ctx_clear_error(ctx);
  assert_int_equal(evaluate(ctx, p, m, c, PP_COST_PARPLAN, &sum), PP_OK);
  pp_plan_destroy(p);
  pp_model_destroy(m);
  pp_cluster_destroy(c);
}

/* ---- AMP's layer-assignment DP -------------------------------------- */

/* The inputs AMP's DP got for row t (the library's ppi_amp_dp_inputs,
** which the partition method amp-original uses with amp_inputs set), in
** ar; B is returned. */
static int64_t dp_inputs(pp_ctx *ctx, struct ppi_arena *ar, const pp_model *m,
                         const pp_cluster *c, const struct trial *t,
                         int64_t gbs, struct ppi_amp_dp *in)
{
  if (ppi_amp_dp_inputs(ctx, ar, m, c, NULL, t->pp, t->dp, t->mp, t->mbs, in))
    fail_msg("AMP's inputs: %s", pp_ctx_errmsg(ctx));
  return gbs / ((int64_t)t->dp * t->mbs);
}

static bool same_part(const int32_t *a, const int32_t *b, int pp)
{
  int p;
  for (p = 0; p <= pp; p++)
    if (a[p] != b[p])
      return false;
  return true;
}

static void print_part(const char *what, const int32_t *ds, int pp)
{
  int p;
  printf(" %s", what);
  for (p = 0; p <= pp; p++)
    printf(" %d", (int)ds[p]);
}

/* Our amp-original kernel, given for every row the inputs AMP's DP got,
** returns that row's partition.  Where B = 1 AMP never ran its DP: the
** row must be its uniform split, and the DP's choice is printed when it
** differs. */
static void t_amp_partitions(void **state)
{
  struct amp_env e;
  pp_ctx *ctx;
  pp_model **m = e.m;
  pp_cluster **c = e.c;
  const struct trial *t;
  int i, ndp = 0, nexact = 0, nuni = 0, nagree = 0, bad = 0;
  (void)state;
  env_open(&e);
  ctx = e.ctx;
  t = e.t;
  for (i = 0; i < e.n; i++) {
    int x = setup_of(t[i].experiment), pp = t[i].pp;
    int32_t nop = pp_model_nop(m[x]), first[MAXPP + 1], got[MAXPP + 1];
    int32_t uni[MAXPP + 1];
    struct ppi_arena ar;
    struct ppi_amp_dp in;
    int64_t B;
    ppi_arena_init(&ar, ppi_ctx_alloc(ctx));
    B = dp_inputs(ctx, &ar, m[x], c[x], &t[i], setups[x].gbs, &in);
    assert_int_equal(in.nblock, 24);
    assert_int_equal(in.head, setups[x].head);
    if (ppi_part_amp_original(ctx, in.e, in.cc, in.L, pp, B, first))
      fail_msg("row %d (%s #%d): %s", i + 1, t[i].experiment, t[i].rank,
               pp_ctx_errmsg(ctx));
    ppi_amp_dp_layers(&in, pp, nop, first, got);
    ppi_amp_uniform(&in, pp, first);
    ppi_amp_dp_layers(&in, pp, nop, first, uni);
    ppi_arena_free(&ar);
    if (B > 1) {
      ndp++;
      if (same_part(got, t[i].part, pp)) {
        nexact++;
        continue;
      }
      printf("row %d: %s #%d mbs %d mp %d dp %d pp %d B %d:", i + 1,
             t[i].experiment, t[i].rank, t[i].mbs, t[i].mp, t[i].dp, pp,
             (int)B);
      print_part("AMP", t[i].part, pp);
      print_part("ours", got, pp);
      printf("\n");
      bad++;
      continue;
    }
    nuni++;
    if (!same_part(uni, t[i].part, pp)) {
      printf("row %d: %s #%d pp %d B = 1 but not AMP's uniform split:", i + 1,
             t[i].experiment, t[i].rank, pp);
      print_part("AMP", t[i].part, pp);
      print_part("uniform", uni, pp);
      printf("\n");
      bad++;
    } else if (same_part(got, t[i].part, pp)) {
      nagree++;
    } else {
      printf("row %d: %s #%d mbs %d mp %d dp %d pp %d: B = 1, AMP's driver "
             "split its %d layers uniformly instead of running the DP:",
             i + 1, t[i].experiment, t[i].rank, t[i].mbs, t[i].mp, t[i].dp, pp,
             (int)in.nblock);
      print_part("AMP", t[i].part, pp);
      print_part("DP", got, pp);
      printf("\n");
    }
  }
  printf("amp-original: %d rows with B > 1 checked, %d of them AMP's "
         "partition; %d rows with B = 1 are AMP's uniform split (the DP "
         "gives it on %d)\n",
         ndp, nexact, nuni, nagree);
  env_close(&e, bad, "differ from AMP's partition");
}

/* The public path: pp_partition_chain with amp-original on AMP's inputs
** (amp_inputs, as `parplan compare' runs its AMP baseline: the stage
** positions are the first rank of each stage in rank order) returns
** every row's partition, AMP's DP choice where B > 1 and its uniform
** split where B = 1. */
/* A chain partition as DeepSpeed boundaries: each stage's first operator,
** then the operator count. */
static void bounds_of(const pp_partition *pt, const pp_model *m, int pp,
                      int32_t *out)
{
  int s;
  for (s = 0; s < pp; s++) {
    int32_t k;
    const int32_t *ops = pp_partition_stage_ops(pt, s, &k);
    assert_true(k > 0);
    out[s] = ops[0];
  }
  out[pp] = pp_model_nop(m);
}

static void t_amp_public(void **state)
{
  struct amp_env e;
  pp_ctx *ctx;
  pp_model **m = e.m;
  pp_cluster **c = e.c;
  const struct trial *t;
  int i, nmulti = 0, none = 0, bad = 0, nchain = 0;
  (void)state;
  env_open(&e);
  ctx = e.ctx;
  t = e.t;
  for (i = 0; i < e.n; i++) {
    int x = setup_of(t[i].experiment), pp = t[i].pp, s;
    int32_t dev0[MAXPP], got[MAXPP + 1], chain[MAXPP + 1];
    pp_part_params pa;
    pp_partition *pt = NULL;
    pp_part_params_init(&pa);
    pa.objective = PP_OBJ_AMP;
    pa.method = PP_PART_AMP_ORIGINAL;
    pa.amp_inputs = 1;
    pa.stages = pp;
    pa.replicas = t[i].dp;
    pa.tp = t[i].mp;
    pa.micro_batch = t[i].mbs;
    pa.gas = setups[x].gbs / ((int64_t)t[i].dp * t[i].mbs);
    pa.cluster = c[x];
    for (s = 0; s < pp; s++)
      dev0[s] = s * t[i].dp * t[i].mp;
    pa.devices = dev0;
    if (pa.gas > 1) { /* the chain's own inputs, for the record */
      pa.amp_inputs = 0;
      if (pp_partition_chain(ctx, m[x], &pa, &pt) != PP_OK)
        fail_msg("row %d (%s #%d): %s", i + 1, t[i].experiment, t[i].rank,
                 pp_ctx_errmsg(ctx));
      bounds_of(pt, m[x], pp, chain);
      nchain += !same_part(chain, t[i].part, pp);
      pp_partition_destroy(pt);
      pt = NULL;
      pa.amp_inputs = 1;
    }
    if (pp_partition_chain(ctx, m[x], &pa, &pt) != PP_OK)
      fail_msg("row %d (%s #%d): %s", i + 1, t[i].experiment, t[i].rank,
               pp_ctx_errmsg(ctx));
    bounds_of(pt, m[x], pp, got);
    pp_partition_destroy(pt);
    if (pa.gas > 1)
      nmulti++;
    else
      none++;
    if (!same_part(got, t[i].part, pp)) {
      printf("row %d: %s #%d mbs %d mp %d dp %d pp %d B %d:", i + 1,
             t[i].experiment, t[i].rank, t[i].mbs, t[i].mp, t[i].dp, pp,
             (int)pa.gas);
      print_part("AMP", t[i].part, pp);
      print_part("public path", got, pp);
      printf("\n");
      bad++;
    }
  }
  printf("amp-original through pp_partition_chain: %d of %d rows (%d with "
         "B > 1, %d with B = 1) are AMP's partition\n",
         e.n - bad, e.n, nmulti, none);
  printf("amp-original on the chain's own inputs: %d of the %d rows with "
         "B > 1 differ\n",
         nchain, nmulti);
  assert_int_equal(nmulti, 135);
  assert_int_equal(none, 36);
  env_close(&e, bad, "differ from AMP's partition");
}

/* `parplan compare''s AMP baseline (pp_plan_compare) on each of AMP's
** experiments picks AMP's own first choice: the row of pred_rank 0, its
** shape and partition, with AMP's prediction as its own_ms. */
static void t_amp_compare(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  struct trial *t = NULL;
  int n, i, seen = 0;
  n = read_trials(&t);
  assert_int_equal(n, NTRIAL);
  for (i = 0; i < n; i++) {
    int x = setup_of(t[i].experiment), r, s;
    pp_model *m;
    pp_cluster *c;
    pp_search_params sp;
    pp_compare *cmp = NULL;
    pp_compare_row row;
    const pp_plan *pl = NULL;
    if (t[i].rank != 0)
      continue;
    seen++;
    m = load_model(ctx, setups[x].model);
    c = load_cluster(ctx, setups[x].cluster);
    pp_search_params_init(&sp);
    sp.global_batch = setups[x].gbs;
    if (pp_plan_compare(ctx, m, c, &sp, &cmp) != PP_OK)
      fail_msg("%s: %s", t[i].experiment, pp_ctx_errmsg(ctx));
    for (r = 0; r < pp_compare_nrow(cmp); r++) {
      assert_int_equal(pp_compare_row_get(cmp, r, &row), PP_OK);
      if (strcmp(row.method, "amp") == 0) {
        pl = pp_compare_plan(cmp, r);
        break;
      }
    }
    assert_non_null(pl);
    assert_int_equal(row.pp, t[i].pp);
    assert_int_equal(row.dp, t[i].dp);
    assert_int_equal(row.tp, t[i].mp);
    assert_int_equal(row.micro_batch, t[i].mbs);
    /* pred_s is kept to 4 decimals */
    if (!(fabs(row.own_ms / 1000 - t[i].pred_s) <= 5.001e-5))
      fail_msg("%s: AMP's own prediction %.6f s, AMP %.4f s", t[i].experiment,
               row.own_ms / 1000, t[i].pred_s);
    for (s = 0; s < t[i].pp; s++) {
      int32_t k;
      const int32_t *ops = pp_plan_stage_ops(pl, s, &k);
      assert_int_equal(k, t[i].part[s + 1] - t[i].part[s]);
      assert_int_equal(ops[0], t[i].part[s]);
    }
    pp_compare_destroy(cmp);
    pp_model_destroy(m);
    pp_cluster_destroy(c);
  }
  assert_int_equal(seen, NSETUP);
  free(t);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_amp_trials),     TU_CTX_TEST(t_parplan_model),
      TU_CTX_TEST(t_boundary_volumes),    TU_CTX_TEST(t_uneven_replicas),
      cmocka_unit_test(t_amp_partitions), cmocka_unit_test(t_amp_public),
      TU_CTX_TEST(t_amp_compare),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
