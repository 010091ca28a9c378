/* SPDX-License-Identifier: MIT */
/*
** Built-in models (src/model/model_builtin.c and the tables that
** scripts/gen_builtin_models.py generates from data/) checked against
** their sources, the CSV files of data/amp and the JSON files of
** data/sailor, read here independently; the parametric transformer
** (src/model/model_transformer.c) against its formulas, and its spec
** errors (src/format/spec.c); and every
** built-in written as model JSON, read back and written again, byte for
** byte.
*/
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---------------------------------------------------------- */

#if defined(__GNUC__)
#define TU_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TU_PRINTF(a, b)
#endif

static void near(double got, double want, double tol, const char *fmt, ...)
    TU_PRINTF(4, 5);

/* got == want within a relative tol; fmt names the figure. */
static void near(double got, double want, double tol, const char *fmt, ...)
{
  if (!(fabs(got - want) <= tol * fmax(fabs(want), fabs(got)) + 1e-300)) {
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    fail_msg("%s: got %.17g, want %.17g", what, got, want);
  }
}

static pp_model *load(pp_ctx *ctx, const char *spec)
{
  pp_model *m = NULL;
  if (pp_model_load(ctx, spec, &m) != PP_OK)
    fail_msg("loading %s: %s", spec, pp_ctx_errmsg(ctx));
  assert_non_null(m);
  return m;
}

static double hyper(const pp_model *m, const char *key)
{
  int32_t i;
  for (i = 0; i < pp_model_nhyper(m); i++) {
    double v = 0;
    const char *k = pp_model_hyper(m, i, &v);
    if (k && strcmp(k, key) == 0)
      return v;
  }
  fail_msg("model %s lacks hyper-parameter %s", pp_model_name(m), key);
  return NAN;
}

static pp_op_time op_time(const pp_model *m, int32_t v, const char *type,
                          int32_t tp, int32_t mbs)
{
  pp_type_key k = {0};
  pp_op_time t;
  k.name = type;
  k.speed = 1;
  k.peak_tflops = 0;
  assert_int_equal(pp_model_op_time(m, v, &k, tp, mbs, &t), PP_OK);
  return t;
}

/* A small CSV reader: no quoting (the AMP files have none). */
#define CSV_MAXROW 128
#define CSV_MAXCOL 32
struct csv {
  char *buf;
  int nrow, ncol;
  char *hdr[CSV_MAXCOL];
  char *cell[CSV_MAXROW][CSV_MAXCOL];
};

static void csv_read(struct csv *c, const char *rel)
{
  char *line, *save = NULL;
  int r = -1;
  memset(c, 0, sizeof *c);
  c->buf = tu_slurp(tu_path(rel), NULL);
  if (!c->buf)
    fail_msg("cannot read %s", rel);
  for (line = strtok_r(c->buf, "\r\n", &save); line;
       line = strtok_r(NULL, "\r\n", &save), r++) {
    char **cells = r < 0 ? c->hdr : c->cell[r];
    int n = 0;
    char *p = line;
    assert_true(r < CSV_MAXROW);
    for (;;) {
      char *comma = strchr(p, ',');
      assert_true(n < CSV_MAXCOL);
      cells[n++] = p;
      if (!comma)
        break;
      *comma = '\0';
      p = comma + 1;
    }
    if (r < 0)
      c->ncol = n;
    else
      assert_int_equal(n, c->ncol);
  }
  c->nrow = r;
}

static const char *csv_get(const struct csv *c, int row, const char *col)
{
  int k;
  for (k = 0; k < c->ncol; k++)
    if (strcmp(c->hdr[k], col) == 0)
      return c->cell[row][k];
  fail_msg("CSV lacks column %s", col);
  return NULL;
}

static double csv_num(const struct csv *c, int row, const char *col)
{
  const char *s = csv_get(c, row, col);
  char *end;
  double x = strtod(s, &end);
  if (end == s || *end)
    fail_msg("CSV row %d column %s: '%s' is not a number", row, col, s);
  return x;
}

static json_t *json_file(const char *rel)
{
  json_error_t err;
  json_t *j = json_load_file(tu_path(rel), 0, &err);
  if (!j)
    fail_msg("%s:%d: %s", rel, err.line, err.text);
  return j;
}

static double jnum(const json_t *o, const char *key)
{
  const json_t *v = json_object_get(o, key);
  if (!json_is_number(v))
    fail_msg("JSON field %s is not a number", key);
  return json_number_value(v);
}

/* ---- the registry ----------------------------------------------------- */

static void t_registry(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  int i, j, n = 0;
  for (i = 0; pp_model_builtin_name(i); i++) {
    const char *name = pp_model_builtin_name(i);
    const char *about = pp_model_builtin_about(i);
    pp_model *m = load(ctx, name);
    char src[256];
    assert_non_null(about);
    assert_true(strlen(about) > 10);
    assert_null(strchr(about, '\n'));
    for (j = 0; j < i; j++)
      assert_string_not_equal(pp_model_builtin_name(j), name);
    assert_string_equal(pp_model_name(m), name);
    snprintf(src, sizeof src, "built-in %s", name);
    assert_string_equal(pp_model_source(m), src);
    assert_true(pp_model_nop(m) > 0);
    assert_non_null(pp_model_reference_type(m));
    assert_int_equal(pp_model_is_chain(m), 1);
    /* The dtype each source was profiled in: AMP's runs are DeepSpeed
    ** fp16 (data/amp/clusters.json "precision"), Sailor's fp32
    ** (data/sailor/README.md). */
    assert_int_equal(pp_model_dtype(m),
                     strstr(name, "-amp") ? PP_PREC_FP16 : PP_PREC_FP32);
    pp_model_destroy(m);
    n++;
  }
  assert_int_equal(n, 6);
  {
    json_t *cl = json_file("data/amp/clusters.json");
    const char *key;
    json_t *e;
    int nprec = 0;
    json_object_foreach(json_object_get(cl, "models"), key, e)
    {
      const json_t *pr = json_object_get(e, "precision");
      if (json_is_string(pr)) {
        assert_non_null(strstr(json_string_value(pr), "fp16"));
        nprec++;
      }
    }
    assert_int_equal(nprec, 2); /* gpt2 and transgan_generator */
    json_decref(cl);
  }
  assert_null(pp_model_builtin_name(n));
  assert_null(pp_model_builtin_about(n));
  assert_null(pp_model_builtin_name(-1));
  assert_null(pp_model_builtin_about(-1));
  /* A near miss is not a built-in. */
  {
    pp_model *m = NULL;
    tu_expect_error(ctx, pp_model_load(ctx, "gpt2", &m), PP_EINPUT, "'gpt2'",
                    (const char *)NULL);
    assert_null(m);
  }
}

/* ---- AMP ----------------------------------------------------------------- */

/* The GPT-2 entries' backward and larger micro-batches, recomputed from
** the rules scripts/gen_builtin_models.py states (gpt2_kb, GPT2_AR,
** gpt2_allreduce_ms, gpt2_allreduce_link, gpt2_backward): AMP's
** backward factor (1 for the layer entries, which run their forward
** twice, and for the copies: the transposes 1, 26 and the cast 29; 2
** elsewhere); Megatron's tensor-parallel all-reduces per entry, forward
** and backward (embedding 1, 0; layer 4, 2 as two forwards; logits 0,
** 1); one all-reduce = the mean over the layers of (p_t - p_1 / t) / 4. */
static int amp_kb(int v)
{
  return (v >= 2 && v <= 25) || v == 1 || v == 26 || v == 29 ? 1 : 2;
}

static void amp_ar(int v, int *kf, int *kbw)
{
  *kf = v == 0 ? 1 : v >= 2 && v <= 25 ? 4 : 0;
  *kbw = v >= 2 && v <= 25 ? 2 : v == 28 ? 1 : 0;
}

static double amp_allreduce(struct csv *c, const char *gpu, int tp)
{
  char col[32], one[32];
  double sum = 0;
  int r;
  if (tp == 1)
    return 0;
  snprintf(col, sizeof col, "fwd_s_%s_mp%d", gpu, tp);
  snprintf(one, sizeof one, "fwd_s_%s_mp1", gpu);
  for (r = 2; r <= 25; r++)
    sum += (csv_num(c, r, col) * 1000 - csv_num(c, r, one) * 1000 / tp) / 4;
  return sum / 24 > 0 ? sum / 24 : 0;
}

static void t_gpt2_amp(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = load(ctx, "gpt2-amp");
  struct csv c;
  pp_model_stats st;
  double own = 0, all = 0, link[2];
  int r, k, kb, g;
  static const int tps[3] = {1, 2, 4};
  static const char *const gpu[2] = {"G4", "P3"}, *ty[2] = {"T4", "V100"};
  csv_read(&c, "data/amp/gpt2_layers.csv");
  assert_int_equal(c.nrow, 30);
  /* The all-reduce's bandwidth inside the node, GB/s, as the profiles
  ** give it (gpt2_allreduce_link): tp 4 moves 1.5 (s, h) fp16 tensors
  ** where tp 2 moves 1, so half a tensor takes a_4 - a_2; 34 Gb/s
  ** inside a g4dn.12xlarge, 131 inside a p3.8xlarge. */
  for (g = 0; g < 2; g++)
    link[g] =
        0.5 * 2 * 1024 * 1024 /
        ((amp_allreduce(&c, gpu[g], 4) - amp_allreduce(&c, gpu[g], 2)) * 1e6);
  assert_true(link[0] > 4.2 && link[0] < 4.35);
  assert_true(link[1] > 16.3 && link[1] < 16.5);
  assert_int_equal(pp_model_nop(m), 30);
  assert_int_equal(pp_model_is_chain(m), 1);
  assert_string_equal(pp_model_reference_type(m), "V100");
  assert_int_equal(pp_model_micro_batch(m), 1);
  assert_true(hyper(m, "layers") == 24);
  assert_true(hyper(m, "hidden") == 1024);
  for (r = 0; r < c.nrow; r++) {
    int32_t v = (int32_t)csv_num(&c, r, "idx");
    pp_op_desc d;
    double f = csv_num(&c, r, "fwd_s_P3_mp1") * 1000;
    assert_int_equal(v, r);
    assert_int_equal(pp_model_op(m, v, &d), PP_OK);
    near(d.fwd_ms, f, 1e-9, "gpt2-amp op %d fwd", v);
    kb = amp_kb(v);
    near(d.bwd_ms, kb * d.fwd_ms, 1e-15, "gpt2-amp op %d bwd", v);
    assert_true(d.update_ms == 0);
    /* Parameters as trained in fp16; the logits share the embedding's
    ** word table (52256 x 1024). */
    if (v == 28)
      assert_true(d.param_bytes == 2 * 52256 * 1024);
    else
      assert_true(d.param_bytes ==
                  2 * (int64_t)csv_num(&c, r, "exact_param_elems_mp1"));
    assert_true(
        d.out_bytes ==
        (v == 29 ? 4 : 2) *
            (int64_t)csv_num(&c, r, "amp_act_out_elems_per_sample_mp1"));
    all += (double)d.param_bytes;
    if (pp_model_op_tied(m, v) < 0)
      own += (double)d.param_bytes;
    /* Profiled points: T4 at tp 1, 2, 4; V100 at tp 1 (the operator
    ** itself), 2 and 4; all at micro-batch 1.  The backward is the
    ** compute's AMP factor plus the entry's backward all-reduces. */
    for (k = 0; k < 3; k++) {
      int kf, kbw, mb;
      amp_ar(v, &kf, &kbw);
      for (g = 0; g < 2; g++) {
        char col[32];
        pp_op_time t;
        double a = amp_allreduce(&c, gpu[g], tps[k]), cm, beta;
        snprintf(col, sizeof col, "fwd_s_%s_mp%d", gpu[g], tps[k]);
        f = csv_num(&c, r, col) * 1000;
        cm = f - kf * a > 0 ? f - kf * a : 0;
        t = op_time(m, v, ty[g], tps[k], 1);
        near(t.fwd_ms, f, 1e-9, "gpt2-amp op %d %s tp %d fwd", v, ty[g],
             tps[k]);
        near(t.bwd_ms, kb * cm + kbw * a, 1e-9, "gpt2-amp op %d %s tp %d bwd",
             v, ty[g], tps[k]);
        if (t.est != 0)
          fail_msg("gpt2-amp op %d %s tp %d: est %u, want 0 (profiled)", v,
                   ty[g], tps[k], t.est);
        if (g == 1) { /* NULL type: the reference type, the same numbers */
          t = op_time(m, v, NULL, tps[k], 1);
          near(t.fwd_ms, f, 1e-9, "gpt2-amp op %d ref tp %d fwd", v, tps[k]);
          assert_int_equal(t.est, 0);
        }
        /* Larger micro-batches where the entry communicates at tp > 1:
        ** compute and the all-reduces' bytes (2 (t-1)/t of an (s, h)
        ** fp16 tensor) grow with the micro-batch, the all-reduces'
        ** fixed rest does not.  The bytes go at link[g], above. */
        if (tps[k] == 1 || kf + kbw == 0)
          continue;
        beta = 2.0 * (tps[k] - 1) / tps[k] * 2 * 1024 * 1024 / (link[g] * 1e6);
        assert_true(beta < a);
        for (mb = 2; mb <= 32; mb *= 2) {
          double one = a - beta + mb * beta;
          t = op_time(m, v, ty[g], tps[k], mb);
          near(t.fwd_ms, mb * cm + kf * one, 1e-9,
               "gpt2-amp op %d %s tp %d mbs %d fwd", v, ty[g], tps[k], mb);
          near(t.bwd_ms, kb * mb * cm + kbw * one, 1e-9,
               "gpt2-amp op %d %s tp %d mbs %d bwd", v, ty[g], tps[k], mb);
          assert_int_equal(t.est, 0);
        }
      }
    }
    /* Micro-batch 2 was not profiled where nothing communicates:
    ** estimated, never 0. */
    if (v == 1 || v == 26 || v == 27 || v == 29) {
      pp_op_time t = op_time(m, v, "T4", 2, 2);
      assert_true(t.est & PP_EST_MBS);
      near(t.fwd_ms, 2 * csv_num(&c, r, "fwd_s_G4_mp2") * 1000, 1e-9,
           "gpt2-amp op %d T4 tp 2 mbs 2", v);
    }
  }
  /* Sizes per tensor-parallel degree, recomputed from AMP's model code
  ** (scripts/gen_builtin_models.py, gpt2_sizes): a layer keeps
  ** Korthikanti's s*h*(10 + 24/t) + 5*a*s^2/t plus PyTorch 1.7's softmax
  ** input, 2*a*s^2/t; the loss keeps the fp32 softmax of the logits,
  ** 4*s*V/t; every size is profiled (a table), none estimated. */
  {
    const int64_t S = 1024, H = 1024, V = 52256, A = 16;
    for (k = 0; k < 3; k++) {
      int64_t t = tps[k];
      double sum = 0;
      for (r = 0; r < 30; r++) {
        pp_op_sizes z;
        int64_t saved = 0, out = 2 * S * H;
        assert_int_equal(pp_model_op_sizes(m, r, (int32_t)t, 1, &z), PP_OK);
        assert_int_equal(z.est, 0);
        if (r >= 2 && r <= 25) {
          saved = S * H * 10 + S * H * 24 / t + 7 * A * S * S / t;
          assert_true(z.param_bytes ==
                      (double)(2 * ((12 * H * H + 7 * H) / t + 6 * H)));
        } else if (r == 0) {
          saved = S * H;
          assert_true(z.param_bytes == (double)(2 * (V * H / t + S * H)));
        } else if (r == 27 || r == 28)
          saved = 2 * S * H;
        else if (r == 29)
          saved = out = 4 * S * V / t;
        if (r == 28) {
          out = 2 * S * V / t;
          assert_true(z.param_bytes == (double)(2 * V * H / t));
        }
        if (z.saved_bytes != (double)saved || z.out_bytes != (double)out)
          fail_msg("gpt2-amp op %d tp %d: saved %.0f out %.0f, want %lld %lld",
                   r, (int)t, z.saved_bytes, z.out_bytes, (long long)saved,
                   (long long)out);
        if (r != 28)
          sum += z.param_bytes;
      }
      /* At tp 1, the exact counts of the CSV. */
      if (t == 1) {
        double want = 0;
        for (r = 0; r < 30; r++)
          want += 2 * csv_num(&c, r, "exact_param_elems_mp1");
        near(sum, want, 1e-15, "gpt2-amp exact params");
      }
    }
  }
  assert_string_equal(pp_model_op_name(m, 28), "logits");
  assert_string_equal(pp_model_op_name(m, 0), "embedding");
  assert_int_equal(pp_model_op_tied(m, 28), 0);
  for (r = 0; r < 30; r++)
    if (r != 28)
      assert_int_equal(pp_model_op_tied(m, r), -1);
  assert_int_equal(pp_model_stats_get(ctx, m, &st), PP_OK);
  near(st.param_bytes, own, 1e-15, "gpt2-amp params, tied once");
  near(all - st.param_bytes, 2.0 * 52256 * 1024, 1e-15,
       "gpt2-amp: the tied table is not counted twice");
  free(c.buf);
  pp_model_destroy(m);
}

static void t_transgan_amp(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = load(ctx, "transgan-amp");
  struct csv c;
  int r, k;
  csv_read(&c, "data/amp/transgan_layers.csv");
  assert_int_equal(c.nrow, 56);
  assert_int_equal(pp_model_nop(m), 56);
  assert_int_equal(pp_model_is_chain(m), 1);
  assert_string_equal(pp_model_reference_type(m), "V100");
  for (r = 0; r < c.nrow; r++) {
    int32_t v = (int32_t)csv_num(&c, r, "idx");
    pp_op_desc d;
    assert_int_equal(v, r);
    assert_int_equal(pp_model_op(m, v, &d), PP_OK);
    near(d.fwd_ms, csv_num(&c, r, "fwd_s_P3_mp1") * 1000, 1e-9,
         "transgan op %d fwd", v);
    near(d.bwd_ms, 2 * d.fwd_ms, 1e-15, "transgan op %d bwd", v);
    for (k = 1; k <= 4; k *= 2) {
      char col[32];
      double f;
      pp_op_time t = op_time(m, v, "V100", k, 1);
      snprintf(col, sizeof col, "fwd_s_P3_mp%d", k);
      f = csv_num(&c, r, col) * 1000;
      near(t.fwd_ms, f, 1e-9, "transgan op %d tp %d fwd", v, k);
      near(t.bwd_ms, 2 * f, 1e-9, "transgan op %d tp %d bwd", v, k);
      assert_int_equal(t.est, 0);
    }
    /* A block's parameters are AMP's count, in fp16; its saved bytes
    ** follow trans_gan_gen.py (scripts/gen_builtin_models.py,
    ** transgan_block_saved): 8NC + 40NC/t + 8N + 4P, with P = heads * N
    ** * w attention probabilities that every tp rank keeps whole. */
    if (strncmp(csv_get(&c, r, "role"), "block", 5) == 0) {
      const double N = csv_num(&c, r, "tokens"),
                   C = csv_num(&c, r, "block_dim");
      /* Stage 1 attends over all 81 tokens; stage 6 over 18 x 18. */
      const double w = N == 81 ? 81 : 18 * 18, P = 4 * N * w;
      assert_true(d.param_bytes ==
                  2 * (int64_t)csv_num(&c, r, "amp_param_elems_mp1"));
      assert_true(
          d.out_bytes ==
          2 * (int64_t)csv_num(&c, r, "true_block_act_elems_per_sample"));
      for (k = 1; k <= 4; k *= 2) {
        pp_op_sizes z;
        assert_int_equal(pp_model_op_sizes(m, v, k, 1, &z), PP_OK);
        assert_int_equal(z.est, 0);
        near(z.saved_bytes, 8 * N * C + 40 * N * C / k + 8 * N + 4 * P, 1e-15,
             "transgan op %d tp %d saved", v, k);
        near(z.out_bytes, (double)d.out_bytes, 1e-15, "transgan op %d out", v);
        near(z.param_bytes, (double)d.param_bytes / k, 1e-15,
             "transgan op %d tp %d params", v, k);
      }
      /* The high-resolution blocks keep hundreds of MB per sample. */
      if (N == 82944)
        assert_true(d.saved_bytes > 400e6 && 4 * P > 400e6);
    } else {
      pp_op_sizes z;
      /* The input linear and the convolution keep their inputs, nothing
      ** else keeps anything; nothing but the blocks splits over tp. */
      int64_t want = v == 0 ? 2 * 512 : v == 55 ? 2 * 16 * 288 * 288 : 0;
      assert_true(d.saved_bytes == want);
      assert_int_equal(pp_model_op_sizes(m, v, 4, 1, &z), PP_OK);
      assert_true(z.saved_bytes == (double)want);
      assert_true(z.param_bytes == (double)d.param_bytes);
      assert_true(z.out_bytes == (double)d.out_bytes);
    }
  }
  /* Outputs: the tensor each entry passes on, from the generator's
  ** shapes (9 x 9 x 1024 up to 288 x 288 x 16, then 3 channels). */
  {
    pp_op_desc d;
    assert_int_equal(pp_model_op(m, 16, &d), PP_OK);
    assert_true(d.out_bytes == 2 * 18 * 18 * 1024);
    assert_int_equal(pp_model_op(m, 21, &d), PP_OK);
    assert_true(d.out_bytes == 2 * 72 * 72 * 256);
    assert_int_equal(pp_model_op(m, 55, &d), PP_OK);
    assert_true(d.out_bytes == 2 * 3 * 288 * 288);
  }
  /* No T4 profile: the V100 times over the speed, flagged. */
  {
    pp_type_key key = {.name = "T4", .speed = 0.72, .peak_tflops = 0};
    pp_op_time t;
    pp_op_desc d;
    assert_int_equal(pp_model_op(m, 5, &d), PP_OK);
    assert_int_equal(pp_model_op_time(m, 5, &key, 1, 1, &t), PP_OK);
    assert_true(t.est & PP_EST_SPEED);
    near(t.fwd_ms, d.fwd_ms / 0.72, 1e-12, "transgan on T4");
  }
  free(c.buf);
  pp_model_destroy(m);
}

/* ---- Sailor -------------------------------------------------------------- */

static const struct {
  const char *builtin, *sailor, *ref;
} sailor_models[] = {
    {"opt-350", "OPT-350", "V100-16"},
    {"gpt-neo-2.7", "GPT-Neo-2.7", "V100-16"},
    {"opt-30", "OPT-30", "A100-40"},
    {"llama-3-8", "LLAMA-3-8", "GH-96"},
};

/* The simulator's GH-96 profiles (data/sailor/simulator, extracted by
** scripts/extract_sailor_simulator.py from the file Sailor validated
** with): the built-ins take GH-96 from there where the model has one
** (profiles/GPT-Neo-2.7/GH-96 is defective, profiles/OPT-350/GH-96
** disagrees). */
static json_t *sim_gh96(const char *sailor)
{
  json_t *all = json_file("data/sailor/simulator/profiles_tmp_gh96.json");
  json_t *p = json_object_get(json_object_get(all, sailor), "GH-96");
  json_incref(p);
  json_decref(all);
  return p; /* NULL: the simulator has no GH-96 profile of the model */
}

/* A profiles/ file the generator leaves out: GH-96 where the simulator
** has the model. */
static bool replaced(const char *sailor, const char *gpu)
{
  json_t *p;
  if (strcmp(gpu, "GH-96") != 0)
    return false;
  p = sim_gh96(sailor);
  json_decref(p);
  return p != NULL;
}

/* Check every point of one profile (mbs -> tp -> layer); returns how
** many (mbs, tp) points it holds. */
static int check_points(const pp_model *m, const json_t *prof,
                        const char *sailor, const char *gpu, int nlayer)
{
  json_t *by_tp, *layers;
  const char *mbs_key, *tp_key;
  int npt = 0;
  json_object_foreach((json_t *)prof, mbs_key, by_tp)
  {
    json_object_foreach(by_tp, tp_key, layers)
    {
      int32_t mbs = atoi(mbs_key), tp = atoi(tp_key), l;
      double upd_sum = 0, upd_want = 0;
      assert_true(mbs >= 1 && tp >= 1);
      assert_int_equal((int)json_object_size(layers), nlayer);
      for (l = 0; l < nlayer; l++) {
        char lk[16];
        const json_t *p;
        pp_op_time t;
        snprintf(lk, sizeof lk, "%d", (int)l);
        p = json_object_get(layers, lk);
        assert_true(json_is_array(p) && json_array_size(p) == 3);
        double pf = NAN, pb = NAN;
        t = op_time(m, l, gpu, tp, mbs);
        /* the model holds the point as measured (the times read it
        ** through its series' line, test_model_time.c) */
        if (!pp_model_profile_point(m, l, gpu, tp, mbs, &pf, &pb))
          fail_msg("%s %s mbs %d tp %d layer %d: not a profile point", sailor,
                   gpu, mbs, tp, l);
        near(pf, json_number_value(json_array_get(p, 0)) * 1000, 1e-9,
             "%s %s mbs %d tp %d layer %d fwd", sailor, gpu, mbs, tp, l);
        near(pb, json_number_value(json_array_get(p, 1)) * 1000, 1e-9,
             "%s %s mbs %d tp %d layer %d bwd", sailor, gpu, mbs, tp, l);
        if (t.est != 0)
          fail_msg("%s %s mbs %d tp %d layer %d: est %u, want 0", sailor, gpu,
                   mbs, tp, l, t.est);
        upd_sum += t.update_ms;
        if (l == 0)
          upd_want = json_number_value(json_array_get(p, 2)) * 1000;
      }
      /* update_s is the whole model's step, shared out over layers. */
      near(upd_sum, upd_want, 1e-9, "%s %s mbs %d tp %d: update sum", sailor,
           gpu, mbs, tp);
      npt++;
    }
  }
  return npt;
}

static int check_profile(const pp_model *m, const char *sailor, const char *gpu,
                         int nlayer)
{
  char rel[512];
  json_t *prof;
  int npt;
  snprintf(rel, sizeof rel, "data/sailor/profiles/%s/%s/profile.json", sailor,
           gpu);
  prof = json_file(rel);
  npt = check_points(m, prof, sailor, gpu, nlayer);
  json_decref(prof);
  return npt;
}

static void t_sailor(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  json_t *info = json_file("data/sailor/llm_info.json");
  size_t i;
  for (i = 0; i < sizeof sailor_models / sizeof sailor_models[0]; i++) {
    const char *sname = sailor_models[i].sailor;
    pp_model *m = load(ctx, sailor_models[i].builtin);
    const json_t *mi = json_object_get(info, sname), *by_layer;
    const char *tp_key;
    int32_t nlayer, l, t;
    int npt = 0, ngpu = 0;
    char dirpath[4096], rel[256];
    DIR *dir;
    struct dirent *de;

    assert_non_null(mi);
    nlayer = (int32_t)json_object_size(json_object_get(mi, "1"));
    assert_true(nlayer > 2);
    assert_int_equal(pp_model_nop(m), nlayer);
    assert_int_equal(pp_model_is_chain(m), 1);
    assert_string_equal(pp_model_reference_type(m), sailor_models[i].ref);
    assert_int_equal(pp_model_micro_batch(m), 1);
    assert_string_equal(pp_model_op_name(m, 0), "embedding");
    assert_string_equal(pp_model_op_name(m, nlayer - 1), "head");

    /* Sizes: Sailor's bytes as measured, in fp32 (4 bytes per float),
    ** per tensor-parallel degree. */
    assert_int_equal(pp_model_dtype(m), PP_PREC_FP32);
    json_object_foreach((json_t *)mi, tp_key, by_layer)
    {
      int32_t tp = atoi(tp_key);
      assert_int_equal((int)json_object_size(by_layer), nlayer);
      for (l = 0; l < nlayer; l++) {
        char lk[16];
        const json_t *e;
        pp_op_sizes s;
        snprintf(lk, sizeof lk, "%d", (int)l);
        e = json_object_get(by_layer, lk);
        assert_non_null(e);
        assert_int_equal(pp_model_op_sizes(m, l, tp, 1, &s), PP_OK);
        near(s.param_bytes, jnum(e, "params_bytes"), 1e-15,
             "%s layer %d tp %d params", sname, l, tp);
        near(s.out_bytes, jnum(e, "act_output_bytes"), 1e-15,
             "%s layer %d tp %d out", sname, l, tp);
        near(s.saved_bytes, jnum(e, "act_mem_bytes"), 1e-15,
             "%s layer %d tp %d saved", sname, l, tp);
        assert_int_equal(s.est, 0);
        /* Activations scale with the micro-batch, parameters do not. */
        assert_int_equal(pp_model_op_sizes(m, l, tp, 4, &s), PP_OK);
        near(s.param_bytes, jnum(e, "params_bytes"), 1e-15,
             "%s layer %d tp %d mbs 4 params", sname, l, tp);
        near(s.saved_bytes, 4 * jnum(e, "act_mem_bytes"), 1e-15,
             "%s layer %d tp %d mbs 4 saved", sname, l, tp);
        near(s.saved_bytes, 16 * jnum(e, "act_mem_floats"), 1e-15,
             "%s layer %d tp %d mbs 4: 4 bytes per float", sname, l, tp);
        if (tp == 1) {
          pp_op_desc d;
          assert_int_equal(pp_model_op(m, l, &d), PP_OK);
          assert_true(d.param_bytes == (int64_t)(jnum(e, "params_bytes")));
          assert_true(d.out_bytes == (int64_t)(jnum(e, "act_output_bytes")));
          assert_true(d.saved_bytes == (int64_t)(jnum(e, "act_mem_bytes")));
        }
      }
    }

    /* Times: every profiled point of every GPU, GH-96 from the
    ** simulator's file where it has the model. */
    snprintf(rel, sizeof rel, "data/sailor/profiles/%s", sname);
    snprintf(dirpath, sizeof dirpath, "%s", tu_path(rel));
    dir = opendir(dirpath);
    assert_non_null(dir);
    while ((de = readdir(dir)) != NULL) {
      if (de->d_name[0] == '.' || replaced(sname, de->d_name))
        continue;
      npt += check_profile(m, sname, de->d_name, nlayer);
      ngpu++;
    }
    closedir(dir);
    {
      json_t *sim = sim_gh96(sname);
      if (sim) {
        npt += check_points(m, sim, sname, "GH-96", nlayer);
        ngpu++;
      }
      json_decref(sim);
    }
    assert_true(ngpu >= 3);
    /* Every point is a table, but the reference point, which is the
    ** operators' own fields. */
    assert_int_equal(pp_model_ntable(m), npt - 1);
    for (t = 0; t < pp_model_ntable(m); t++) {
      const char *type = NULL;
      int32_t tp, mbs;
      pp_model_table_key(m, t, &type, &tp, &mbs);
      assert_non_null(type);
    }
    pp_model_destroy(m);
  }
  json_decref(info);
}

/* GPT-Neo's GH-96 profile in profiles/ is defective (26 layers, not
** 34); the simulator's file has a real 34-layer one, which the built-in
** uses: GH-96 lookups are profiled, not estimated. */
static void t_gpt_neo_gh96(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = load(ctx, "gpt-neo-2.7");
  pp_type_key key = {.name = "GH-96", .speed = 7.026, .peak_tflops = 989};
  json_t *bad = json_file("data/sailor/profiles/GPT-Neo-2.7/GH-96/"
                          "profile.json");
  json_t *sim = sim_gh96("GPT-Neo-2.7");
  const json_t *p1 = json_object_get(json_object_get(sim, "1"), "1");
  int32_t v;
  /* The file really is the defective one; the simulator's is whole. */
  assert_int_equal(
      (int)json_object_size(json_object_get(json_object_get(bad, "1"), "1")),
      26);
  assert_int_equal((int)json_object_size(p1), 34);
  assert_int_equal(pp_model_nop(m), 34);
  for (v = 0; pp_model_builtin_name(v); v++)
    if (strcmp(pp_model_builtin_name(v), "gpt-neo-2.7") == 0)
      assert_non_null(strstr(pp_model_builtin_about(v), "GH-96"));
  for (v = 0; v < pp_model_nop(m); v++) {
    char lk[16];
    pp_op_time t;
    snprintf(lk, sizeof lk, "%d", (int)v);
    double pf = NAN, pb = NAN;
    assert_int_equal(pp_model_op_time(m, v, &key, 1, 1, &t), PP_OK);
    assert_int_equal(t.est, 0);
    assert_true(pp_model_profile_point(m, v, key.name, 1, 1, &pf, &pb));
    near(pf,
         json_number_value(json_array_get(json_object_get(p1, lk), 0)) * 1000,
         1e-9, "gpt-neo op %d GH-96 fwd", v);
    near(pb,
         json_number_value(json_array_get(json_object_get(p1, lk), 1)) * 1000,
         1e-9, "gpt-neo op %d GH-96 bwd", v);
  }
  json_decref(sim);
  json_decref(bad);
  pp_model_destroy(m);
}

/* A point the profiles lack is estimated and flagged, never 0. */
static void t_missing_points(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  pp_model *m = load(ctx, "llama-3-8");
  json_t *p = json_file("data/sailor/profiles/LLAMA-3-8/A100-40/"
                        "profile.json");
  const json_t *tp2 = json_object_get(json_object_get(p, "1"), "2");
  int32_t v;
  /* Llama-3 8B on A100-40 has tp 2 and 4 only: tp 1 scales tp 2's time
  ** by 2 / 1. */
  assert_null(json_object_get(json_object_get(p, "1"), "1"));
  assert_non_null(tp2);
  for (v = 0; v < pp_model_nop(m); v++) {
    char lk[16];
    pp_op_time t = op_time(m, v, "A100-40", 1, 1);
    const json_t *e;
    snprintf(lk, sizeof lk, "%d", (int)v);
    e = json_object_get(tp2, lk);
    /* (Some backward times are measured as 0: the embedding's.) */
    assert_true(t.fwd_ms > 0);
    assert_true(t.bwd_ms > 0 || json_number_value(json_array_get(e, 1)) == 0);
    assert_true(t.est & PP_EST_TP);
    assert_int_equal(t.est, PP_EST_TP);
    near(t.fwd_ms, 2 * json_number_value(json_array_get(e, 0)) * 1000, 1e-9,
         "llama op %d A100-40 tp 1", v);
    near(t.bwd_ms, 2 * json_number_value(json_array_get(e, 1)) * 1000, 1e-9,
         "llama op %d A100-40 tp 1 bwd", v);
    /* mbs 8 was not profiled either: at tp 4, mbs 1 and 2 were; beyond
    ** the largest, mbs 2's time plus 6 x the last step's cost per
    ** sample (t2 - t1), kept within [0, t2 / 2]. */
    t = op_time(m, v, "A100-40", 4, 8);
    assert_int_equal(t.est, PP_EST_MBS);
    {
      double t1 = json_number_value(json_array_get(
                      json_object_get(
                          json_object_get(json_object_get(p, "1"), "4"), lk),
                      0)) *
                  1000,
             t2 = json_number_value(json_array_get(
                      json_object_get(
                          json_object_get(json_object_get(p, "2"), "4"), lk),
                      0)) *
                  1000,
             slope = t2 - t1;
      slope = slope < 0 ? 0 : slope > t2 / 2 ? t2 / 2 : slope;
      near(t.fwd_ms, t2 + 6 * slope, 1e-9, "llama op %d A100-40 tp 4 mbs 8", v);
    }
  }
  json_decref(p);
  pp_model_destroy(m);

  /* OPT-30 on V100-16 has tp 4 and 8 only: tp 1 is tp 4's time (as the
  ** times read it, through its series' line) times 4. */
  m = load(ctx, "opt-30");
  p = json_file("data/sailor/profiles/OPT-30/V100-16/profile.json");
  assert_null(json_object_get(json_object_get(p, "1"), "1"));
  assert_non_null(json_object_get(json_object_get(p, "1"), "4"));
  for (v = 0; v < pp_model_nop(m); v++) {
    pp_op_time t = op_time(m, v, "V100-16", 1, 1),
               t4 = op_time(m, v, "V100-16", 4, 1);
    assert_int_equal(t.est, PP_EST_TP);
    assert_int_equal(t4.est, 0);
    near(t.fwd_ms, 4 * t4.fwd_ms, 1e-9, "opt-30 op %d V100-16 tp 1", v);
  }
  json_decref(p);
  pp_model_destroy(m);
}

/* ---- the parametric transformer --------------------------------------- */

/* A transformer layer's forward ms by the roofline of its two parts on
** a GPU of rate FLOP/s (peak x efficiency) and bw bytes/s (at 0.8):
** matmuls, then the memory-bound operators, with the traffic that
** model_transformer.c's header derives (e bytes per element). */
static double layer_ms(double s, double h, double A, double f, double e,
                       double flops, double rate, double bw)
{
  double mmb = e * (12 * s * h + 2 * A * s * s + 2 * s * f) +
               e * (4 * h * h + 2 * h * f);
  double elb =
      e * (10 * s * h + 4 * A * s * s + 2 * s * f) + A * s * s + 2 * s * h;
  return (fmax(flops / rate, mmb / (bw * 0.8)) + elb / (bw * 0.8)) * 1e3;
}

static void t_transformer(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  const char *spec = "transformer:layers=2,hidden=1024,heads=16,seq=1024,"
                     "vocab=50257,gpu=V100,eff=0.5";
  pp_model *m = load(ctx, spec), *m4;
  const double s = 1024, h = 1024, A = 16, V = 50257, f = 4 * h;
  const double rate = 125e12 * 0.5 / 1e3; /* V100 FLOP per ms at 0.5 */
  double lflops = 24 * s * h * h + 4 * s * s * h;
  pp_op_desc d, d4;
  pp_model_stats st;
  int32_t v;
  char spec4[256];

  assert_int_equal(pp_model_nop(m), 5); /* embedding, 2 layers, LN, logits */
  assert_int_equal(pp_model_is_chain(m), 1);
  assert_string_equal(pp_model_name(m), "transformer");
  assert_string_equal(pp_model_source(m), spec);
  assert_string_equal(pp_model_reference_type(m), "V100");
  near(pp_model_efficiency(m), 0.5, 0, "efficiency");
  assert_int_equal(pp_model_micro_batch(m), 1);
  assert_true(hyper(m, "layers") == 2);
  assert_true(hyper(m, "hidden") == 1024);
  assert_true(hyper(m, "heads") == 16);
  assert_true(hyper(m, "seq") == 1024);
  assert_true(hyper(m, "vocab") == 50257);
  assert_true(hyper(m, "ffn") == 4096);

  /* The embedding: word and position tables, fp16. */
  assert_int_equal(pp_model_op(m, 0, &d), PP_OK);
  assert_string_equal(d.name, "embedding");
  assert_true(d.param_bytes == (int64_t)((V * h + s * h) * 2));
  assert_true(d.out_bytes == (int64_t)(s * h * 2));
  /* The layers: Narayanan et al., 24sh^2 + 4s^2h with f = 4h. */
  for (v = 1; v <= 2; v++) {
    pp_op_time t;
    assert_int_equal(pp_model_op(m, v, &d), PP_OK);
    assert_string_equal(d.kind, "transformer_layer");
    near(d.fwd_flops, lflops, 1e-15, "layer fwd_flops");
    near(d.fwd_flops, 8 * s * h * h + 4 * s * h * f + 4 * s * s * h, 1e-15,
         "layer fwd_flops, general form");
    near(d.bwd_flops, 2 * lflops, 1e-15, "layer bwd_flops");
    near(d.fwd_ms, layer_ms(s, h, A, f, 2, lflops, 125e12 * 0.5, 900e9), 1e-12,
         "layer fwd_ms");
    near(d.bwd_ms, 2 * d.fwd_ms, 1e-12, "layer bwd_ms");
    assert_true(d.param_bytes ==
                (int64_t)((4 * h * h + 2 * h * f + 9 * h + f) * 2));
    assert_true(d.param_bytes == (int64_t)(12 * h * h + 13 * h) * 2);
    assert_true(d.out_bytes == (int64_t)(s * h * 2));
    /* Korthikanti et al.: sh(18 + 5as/h) + 4sf bytes = sh(34 + 5as/h)
    ** with f = 4h. */
    assert_true(d.saved_bytes ==
                (int64_t)(s * h * (18 + 5 * A * s / h) + 4 * s * f));
    assert_true(d.saved_bytes == (int64_t)(s * h * (34 + 5 * A * s / h)));
    assert_int_equal(pp_model_op_tied(m, v), -1);
    /* The reference device: as given, not estimated. */
    t = op_time(m, v, "V100", 1, 1);
    assert_int_equal(t.est, 0);
    near(t.fwd_ms, d.fwd_ms, 1e-15, "V100 fwd");
    /* A device with a known peak gets FLOP-based times. */
    {
      pp_type_key k = {.name = "A100-80", .speed = 3.457, .peak_tflops = 312};
      assert_int_equal(pp_model_op_time(m, v, &k, 2, 1, &t), PP_OK);
      assert_true(t.est & PP_EST_FLOPS);
      near(t.fwd_ms, lflops / 2 / (312e12 * 0.5 / 1e3), 1e-12,
           "A100 fwd at tp 2");
    }
  }
  assert_int_equal(pp_model_op(m, 3, &d), PP_OK);
  assert_string_equal(d.name, "final_layernorm");
  assert_true(d.param_bytes == (int64_t)(2 * h * 2));
  /* The logits: 2shV FLOPs, the embedding's word table, tied. */
  assert_int_equal(pp_model_op(m, 4, &d), PP_OK);
  assert_string_equal(d.name, "logits");
  near(d.fwd_flops, 2 * s * h * V, 1e-15, "logits fwd_flops");
  near(d.fwd_ms, 2 * s * h * V / rate, 1e-12, "logits fwd_ms");
  assert_true(d.param_bytes == (int64_t)(V * h * 2));
  assert_true(d.out_bytes == (int64_t)(s * V * 2));
  assert_true(d.saved_bytes == (int64_t)(s * h * 2 + s * V * 4));
  assert_int_equal(pp_model_op_tied(m, 4), 0);
  assert_int_equal(pp_model_stats_get(ctx, m, &st), PP_OK);
  near(st.param_bytes,
       (V * h + s * h) * 2 + 2 * (12 * h * h + 13 * h) * 2 + 2 * h * 2, 1e-15,
       "params with the tied logits counted once");
  near(st.fwd_flops, 2 * lflops + 2 * s * h * V + 8 * s * h, 1e-15,
       "model fwd_flops (layers, logits, final LayerNorm)");

  /* Micro-batch 4: FLOPs, times and activations times 4. */
  snprintf(spec4, sizeof spec4, "%s,mbs=4", spec);
  m4 = load(ctx, spec4);
  assert_int_equal(pp_model_micro_batch(m4), 4);
  assert_int_equal(pp_model_nop(m4), 5);
  for (v = 0; v < 5; v++) {
    assert_int_equal(pp_model_op(m, v, &d), PP_OK);
    assert_int_equal(pp_model_op(m4, v, &d4), PP_OK);
    near(d4.fwd_flops, 4 * d.fwd_flops, 1e-15, "mbs 4 op %d flops", v);
    near(d4.bwd_flops, 4 * d.bwd_flops, 1e-15, "mbs 4 op %d bwd flops", v);
    near(d4.fwd_ms, 4 * d.fwd_ms, 1e-12, "mbs 4 op %d fwd_ms", v);
    assert_true(d4.param_bytes == d.param_bytes);
    assert_true(d4.out_bytes == 4 * d.out_bytes);
    assert_true(d4.saved_bytes == 4 * d.saved_bytes);
  }
  /* Looking m up at micro-batch 4 gives m4's reference times. */
  {
    pp_op_time t = op_time(m, 1, "V100", 1, 4);
    assert_int_equal(pp_model_op(m4, 1, &d4), PP_OK);
    near(t.fwd_ms, d4.fwd_ms, 1e-12, "mbs scaling");
    assert_int_equal(t.est, PP_EST_MBS);
  }
  pp_model_destroy(m4);
  pp_model_destroy(m);

  /* Other options: ffn width, no tie, bytes per element, GPU. */
  m = load(ctx, "transformer:layers=3,hidden=512,heads=8,seq=256,vocab=1000,"
                "ffn=1000,tie=0,bytes=4,gpu=A100-40,eff=0.25");
  assert_int_equal(pp_model_nop(m), 6);
  assert_string_equal(pp_model_reference_type(m), "A100-40");
  assert_int_equal(pp_model_op_tied(m, 5), -1);
  assert_int_equal(pp_model_op(m, 2, &d), PP_OK);
  near(d.fwd_flops,
       8 * 256.0 * 512 * 512 + 4 * 256.0 * 512 * 1000 + 4 * 256.0 * 256 * 512,
       1e-15, "ffn=1000 flops");
  near(d.fwd_ms,
       layer_ms(256, 512, 8, 1000, 4, d.fwd_flops, 312e12 * 0.25, 1555e9),
       1e-12, "A100 fwd_ms");
  assert_true(d.param_bytes ==
              (int64_t)(4.0 * 512 * 512 + 2.0 * 512 * 1000 + 9 * 512 + 1000) *
                  4);
  pp_model_destroy(m);

  /* "transformer" alone: the defaults (24 layers, hidden 1024, heads
  ** 16, seq 1024, vocab 50257, V100). */
  m = load(ctx, "transformer");
  assert_int_equal(pp_model_nop(m), 24 + 3);
  assert_true(hyper(m, "layers") == 24);
  assert_true(hyper(m, "hidden") == 1024);
  assert_true(hyper(m, "heads") == 16);
  assert_true(hyper(m, "seq") == 1024);
  assert_true(hyper(m, "vocab") == 50257);
  assert_true(hyper(m, "ffn") == 4096);
  assert_string_equal(pp_model_reference_type(m), "V100");
  assert_int_equal(pp_model_micro_batch(m), 1);
  assert_true(pp_model_efficiency(m) > 0 && pp_model_efficiency(m) <= 1);
  assert_int_equal(pp_model_op_tied(m, 26), 0);
  assert_int_equal(pp_model_op(m, 1, &d), PP_OK);
  near(d.fwd_flops, lflops, 1e-15, "default layer flops");
  near(d.fwd_ms,
       layer_ms(1024, 1024, 16, 4096, 2, lflops,
                125e12 * pp_model_efficiency(m), 900e9),
       1e-12, "default layer fwd_ms");
  pp_model_destroy(m);
}

static void bad_spec(pp_ctx *ctx, const char *spec, pp_status rc,
                     const char *s1, const char *s2)
{
  pp_model *m = (pp_model *)&m; /* must be reset to NULL */
  pp_status got = pp_model_load(ctx, spec, &m);
  assert_null(m);
  tu_expect_error(ctx, got, rc, s1, s2, (const char *)NULL);
}

static void t_transformer_errors(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  bad_spec(ctx, "transformer:layers=2,foo=3", PP_EPARSE,
           "transformer:layers=2,foo=3", "unknown option 'foo'");
  bad_spec(ctx, "transformer:layers=abc", PP_EPARSE, "layers", "'abc'");
  bad_spec(ctx, "transformer:hidden=1e3", PP_EPARSE, "hidden", "'1e3'");
  bad_spec(ctx, "transformer:layers=0", PP_EPARSE, "layers", "'0'");
  bad_spec(ctx, "transformer:heads=-4", PP_EPARSE, "heads", "'-4'");
  bad_spec(ctx, "transformer:seq=99999999999", PP_EPARSE, "seq", NULL);
  bad_spec(ctx, "transformer:hidden=1000,heads=16", PP_EINPUT, "hidden 1000",
           "heads 16");
  bad_spec(ctx, "transformer:eff=2", PP_EPARSE, "eff", "'2'");
  bad_spec(ctx, "transformer:eff=0", PP_EPARSE, "eff", "'0'");
  bad_spec(ctx, "transformer:eff=nan", PP_EPARSE, "eff", "'nan'");
  bad_spec(ctx, "transformer:eff=x", PP_EPARSE, "eff", "'x'");
  bad_spec(ctx, "transformer:gpu=NOPE", PP_EINPUT, "GPU", "'NOPE'");
  bad_spec(ctx, "transformer:tie=2", PP_EPARSE, "tie", "'2'");
  bad_spec(ctx, "transformer:", PP_EPARSE, "transformer:", "nothing after");
  bad_spec(ctx, "transformer:layers", PP_EPARSE, "'layers'", "key=value");
  bad_spec(ctx, "transformer:layers=", PP_EPARSE, "layers", "value");
  bad_spec(ctx, "transformer:=3", PP_EPARSE, "key", NULL);
  bad_spec(ctx, "transformer:layers=2,,heads=8", PP_EPARSE, "empty", NULL);
  bad_spec(ctx, "transformer:layers=2,", PP_EPARSE, "empty argument", NULL);
  bad_spec(ctx, "transformer:layers=100001", PP_ELIMIT, "100000", NULL);
  bad_spec(ctx, "transformer:hidden=1073741824,heads=1", PP_ELIMIT, "4e18",
           NULL);
  /* Not the generator's name: not a spec at all. */
  bad_spec(ctx, "transformers", PP_EINPUT, "'transformers'", NULL);
}

/* ---- write, read back, write again ------------------------------------ */

static bool same_bytes(const char *p1, const char *p2)
{
  size_t n1, n2;
  char *a = tu_slurp(p1, &n1), *b = tu_slurp(p2, &n2);
  bool same;
  assert_non_null(a);
  assert_non_null(b);
  same = n1 == n2 && memcmp(a, b, n1) == 0;
  free(a);
  free(b);
  return same;
}

static void same_model(const pp_model *x, const pp_model *y)
{
  int32_t v, t;
  assert_int_equal(pp_model_nop(x), pp_model_nop(y));
  assert_int_equal(pp_model_nedge(x), pp_model_nedge(y));
  assert_int_equal(pp_model_ntable(x), pp_model_ntable(y));
  assert_int_equal(pp_model_ntp_sizes(x), pp_model_ntp_sizes(y));
  assert_int_equal(pp_model_nhyper(x), pp_model_nhyper(y));
  assert_int_equal(pp_model_micro_batch(x), pp_model_micro_batch(y));
  assert_string_equal(pp_model_name(x), pp_model_name(y));
  assert_string_equal(pp_model_reference_type(x), pp_model_reference_type(y));
  assert_true(pp_model_efficiency(x) == pp_model_efficiency(y));
  assert_int_equal(pp_model_is_chain(x), pp_model_is_chain(y));
  for (v = 0; v < pp_model_nop(x); v++) {
    pp_op_desc a, b;
    assert_int_equal(pp_model_op(x, v, &a), PP_OK);
    assert_int_equal(pp_model_op(y, v, &b), PP_OK);
    assert_string_equal(a.name, b.name);
    /* Exact: the writer prints the shortest form that reads back. */
    assert_true(a.fwd_ms == b.fwd_ms && a.bwd_ms == b.bwd_ms &&
                a.update_ms == b.update_ms);
    assert_true(a.fwd_flops == b.fwd_flops && a.bwd_flops == b.bwd_flops);
    assert_true(a.param_bytes == b.param_bytes && a.out_bytes == b.out_bytes &&
                a.saved_bytes == b.saved_bytes);
    assert_int_equal(pp_model_op_tied(x, v), pp_model_op_tied(y, v));
    for (t = 0; t < pp_model_ntable(x); t++) {
      const char *type;
      int32_t tp, mbs;
      pp_op_time tx, ty;
      pp_model_table_key(x, t, &type, &tp, &mbs);
      tx = op_time(x, v, type, tp, mbs);
      ty = op_time(y, v, type, tp, mbs);
      assert_true(tx.fwd_ms == ty.fwd_ms && tx.bwd_ms == ty.bwd_ms &&
                  tx.update_ms == ty.update_ms);
      assert_int_equal(tx.est, ty.est);
    }
  }
}

static void t_roundtrip(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  char p1[512], p2[512], p3[512], p4[512];
  int i;
  snprintf(p1, sizeof p1, "%s", tu_tmp("rt1.json"));
  snprintf(p2, sizeof p2, "%s", tu_tmp("rt2.json"));
  snprintf(p3, sizeof p3, "%s", tu_tmp("rt3.json"));
  snprintf(p4, sizeof p4, "%s", tu_tmp("rt4.json"));
  for (i = -1; pp_model_builtin_name(i < 0 ? 0 : i); i++) {
    const char *spec =
        i < 0 ? "transformer:layers=3,hidden=256,heads=4,seq=128,vocab=999"
              : pp_model_builtin_name(i);
    pp_model *m = load(ctx, spec), *r = NULL;
    FILE *f;
    if (pp_model_write(ctx, m, p1, NULL) != PP_OK)
      fail_msg("writing %s: %s", spec, pp_ctx_errmsg(ctx));
    /* Writing the same model twice gives the same bytes, to a path or
    ** to a stream. */
    assert_int_equal(pp_model_write(ctx, m, p3, NULL), PP_OK);
    assert_true(same_bytes(p1, p3));
    f = fopen(p4, "wb");
    assert_non_null(f);
    assert_int_equal(pp_model_write(ctx, m, NULL, f), PP_OK);
    assert_int_equal(fclose(f), 0);
    assert_true(same_bytes(p1, p4));
    /* Read back: the same model. */
    r = load(ctx, p1);
    same_model(m, r);
    /* And written again: the same bytes. */
    assert_int_equal(pp_model_write(ctx, r, p2, NULL), PP_OK);
    if (!same_bytes(p1, p2))
      fail_msg("%s: writing the re-read model gives other bytes (%s, %s)", spec,
               p1, p2);
    pp_model_destroy(r);
    pp_model_destroy(m);
  }
  remove(p1);
  remove(p2);
  remove(p3);
  remove(p4);
}

/* Building a built-in under allocation failures: PP_ENOMEM, no leak. */
static void t_alloc_failures(void **state)
{
  struct tu_fix *fx = *state;
  pp_ctx *ctx = fx->ctx;
  static const char *const specs[] = {
      "llama-3-8", "transformer:layers=2,hidden=64,heads=4,seq=32,vocab=100"};
  size_t s;
  for (s = 0; s < sizeof specs / sizeof specs[0]; s++) {
    pp_model *m = NULL;
    long k, total;
    tu_reset(&fx->a, 0);
    assert_int_equal(pp_model_load(ctx, specs[s], &m), PP_OK);
    total = fx->a.count;
    pp_model_destroy(m);
    for (k = 1; k <= total; k++) {
      pp_status rc;
      m = NULL;
      tu_reset(&fx->a, k);
      rc = pp_model_load(ctx, specs[s], &m);
      if (rc == PP_OK) {
        pp_model_destroy(m);
        continue;
      }
      tu_expect_error(ctx, rc, PP_ENOMEM, (const char *)NULL);
      assert_null(m);
      assert_int_equal(fx->a.live, 1); /* the context itself */
    }
  }
  tu_reset(&fx->a, 0);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      TU_CTX_TEST(t_registry),     TU_CTX_TEST(t_gpt2_amp),
      TU_CTX_TEST(t_transgan_amp), TU_CTX_TEST(t_sailor),
      TU_CTX_TEST(t_gpt_neo_gh96), TU_CTX_TEST(t_missing_points),
      TU_CTX_TEST(t_transformer),  TU_CTX_TEST(t_transformer_errors),
      TU_CTX_TEST(t_roundtrip),    TU_CTX_TEST(t_alloc_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
