/* SPDX-License-Identifier: MIT */
/*
** Megatron-LM's own rules, applied to what `parplan export --to megatron`
** writes for random plans (uniform and uneven stages, tp 1-8, pp 1-16,
** data parallelism, interleaved pipelines, every precision, ZeRO 0/1,
** recomputation), through the command docs/EXPORT.md tells users to run:
**
**   . ./megatron_env.sh
**   torchrun ... pretrain_gpt.py <model and data arguments> \
**       $(cat megatron_args.txt)
**
** The argument vector is what /bin/sh makes of $(cat megatron_args.txt)
** (word splitting, no quote removal), and the environment what it has
** after sourcing the env file.  Every check below is written from
** Megatron's code (NVIDIA/Megatron-LM d98e8a64; file and line at each),
** not from the exporter's:
**   - the layout's grammar, megatron/core/transformer/
**     pipeline_parallel_layer_layout.py:283-339 (parse_str_to_list);
**   - stages divisible by pp, vpp = stages / pp: training/arguments.py:
**     941-951 and the layout class, lines 40-53;
**   - the flattened layout (virtual stage by virtual stage, rank by
**     rank, lines 75-79) starts with E and ends with L, each once, and
**     has --num-layers t's: lines 92-113;
**   - the interleaved schedule: pp > 1 (arguments.py:1000-1003, with
**     --overlap-p2p-communication on by default, line 3118) and a
**     micro-batch count that is a multiple of pp, at least pp
**     (core/pipeline_parallel/schedules.py:1161-1179, its group size
**     defaulting to pp, core/model_parallel_config.py:567-568);
**   - the world size a multiple of tp x pp (arguments.py:432) and the
**     global batch of micro-batch x dp (core/num_microbatches_
**     calculator.py:381);
**   - --fp16 / --bf16 (core/model_parallel_config.py:177, 180),
**     --use-distributed-optimizer (arguments.py:3156), recomputation's
**     values (core/transformer/transformer_config.py:1901-1930);
**   - CUDA_DEVICE_MAX_CONNECTIONS=1 with tp > 1 before Blackwell
**     (arguments.py:1452-1479).
** And the plan itself: each stage of the layout holds the plan's stage's
** layers, and each device the rank Megatron gives it (tp fastest, then
** dp, then pp; stage k on pipeline rank k mod pp).
** Each defect issue 20 lists fails one of these: the quoted layout (the
** grammar), a norm counted as a decoder layer (the t count), the
** interleaved plan refused (pp and the placement), the missing
** environment.
*/
#include "testutil.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXARG 64
#define MAXSTAGE 64

struct argv_s {
  int n;
  char *a[MAXARG];
  char env[64];
  char buf[1 << 16];
};

/* What sh makes of the files, run in dir. */
static void shell_argv(const char *dir, struct argv_s *v)
{
  char cmd[1024], *out, *err, *s;
  snprintf(cmd, sizeof cmd,
           "(cd '%s' && . ./megatron_env.sh && set -- $(cat megatron_args.txt) "
           "&& printf 'ENV=%%s\\n' \"${CUDA_DEVICE_MAX_CONNECTIONS-unset}\" "
           "&& printf '%%s\\n' \"$@\")",
           dir);
  if (tu_sh(cmd, &out, &err) != 0)
    fail_msg("sh: %s", err);
  snprintf(v->buf, sizeof v->buf, "%s", out);
  v->n = 0;
  s = strtok(v->buf, "\n");
  assert_non_null(s);
  assert_true(!strncmp(s, "ENV=", 4));
  snprintf(v->env, sizeof v->env, "%s", s + 4);
  while ((s = strtok(NULL, "\n")) && v->n < MAXARG)
    v->a[v->n++] = s;
}

/* The value of flag f, or NULL; "" for a flag without a value. */
static const char *arg(const struct argv_s *v, const char *f)
{
  int i;
  for (i = 0; i < v->n; i++)
    if (!strcmp(v->a[i], f))
      return i + 1 < v->n && strncmp(v->a[i + 1], "--", 2) ? v->a[i + 1] : "";
  return NULL;
}

static long iarg(const struct argv_s *v, const char *f)
{
  const char *s = arg(v, f);
  char *e;
  long x;
  if (!s || !*s)
    fail_msg("%s missing", f);
  x = strtol(s, &e, 10);
  if (*e)
    fail_msg("%s %s: not an integer", f, s);
  return x;
}

/* Megatron's parse_str_to_list (pipeline_parallel_layer_layout.py:
** 283-339): commas out, then re.sub(r'\(([^)]+)\)\*(\d+)') and
** re.sub(r'(.)\*(\d+)') once each, left to right, then '|' splits and
** only E L t m may remain.  Returns the stage count, -1 if refused;
** st[k] the k-th stage's symbols. */
static int mg_parse(const char *in, char st[MAXSTAGE][512])
{
  static char a[1 << 15], b[1 << 15];
  size_t n = 0, m = 0, i, j;
  int ns = 0;
  for (i = 0; in[i]; i++)
    if (in[i] != ',')
      a[n++] = in[i];
  a[n] = 0;
  for (i = 0; i < n;) { /* (group)*k */
    const char *close = a[i] == '(' ? strchr(a + i + 1, ')') : NULL;
    if (close && close > a + i + 1 && close[1] == '*' &&
        isdigit((unsigned char)close[2])) {
      long k = strtol(close + 2, NULL, 10), r;
      size_t len = (size_t)(close - a - i - 1);
      for (r = 0; r < k; r++) {
        memcpy(b + m, a + i + 1, len);
        m += len;
      }
      i = (size_t)(close + 2 - a);
      while (isdigit((unsigned char)a[i]))
        i++;
    } else {
      b[m++] = a[i++];
    }
  }
  b[m] = 0;
  for (i = 0, n = 0; i < m;) { /* x*k */
    if (i + 2 < m + 1 && b[i + 1] == '*' && isdigit((unsigned char)b[i + 2])) {
      long k = strtol(b + i + 2, NULL, 10), r;
      for (r = 0; r < k; r++)
        a[n++] = b[i];
      i += 2;
      while (isdigit((unsigned char)b[i]))
        i++;
    } else {
      a[n++] = b[i++];
    }
  }
  a[n] = 0;
  st[0][0] = 0;
  for (i = 0, j = 0; i < n; i++) {
    if (a[i] == '|') {
      st[ns][j] = 0;
      if (++ns >= MAXSTAGE)
        return -1;
      j = 0;
    } else if (strchr("ELtm", a[i]) && a[i]) {
      st[ns][j++] = a[i];
    } else {
      return -1;
    }
  }
  st[ns][j] = 0;
  return ns + 1;
}

static int count(const char *s, char c)
{
  int n = 0;
  for (; *s; s++)
    n += *s == c;
  return n;
}

/* The symbol a test gives an operator kind (the kinds of gpt2-amp and
** the transformer: generator). */
static char kind_sym(const char *k)
{
  if (!strcmp(k, "embed2h") || !strcmp(k, "embedding"))
    return 'E';
  if (!strcmp(k, "embed2v") || !strcmp(k, "logits"))
    return 'L';
  if (!strcmp(k, "transformer_layer"))
    return 't';
  return 0;
}

static void t_random(void **state)
{
  pp_ctx *ctx = tu_fix_ctx(state);
  static const char *const models[2] = {
      "gpt2-amp", "transformer:layers=24,hidden=1024,heads=16,seq=1024,"
                  "vocab=50257"};
  static const char *const clusters[2] = {"hier:16x8,gpu=H100",
                                          "hier:16x8,gpu=B200"};
  static const pp_precision precs[3] = {PP_PREC_FP32, PP_PREC_FP16,
                                        PP_PREC_BF16};
  pp_model *mm[2];
  pp_cluster *cc[2];
  uint64_t rng = 2020;
  int iter, interleaved = 0, flagged = 0, broken = 0;
  char dir[512];
  snprintf(dir, sizeof dir, "%s", tu_tmp("megatron_rules"));
  for (iter = 0; iter < 2; iter++) {
    assert_int_equal(pp_model_load(ctx, models[iter], &mm[iter]), PP_OK);
    if (pp_cluster_load(ctx, clusters[iter], &cc[iter]) != PP_OK)
      fail_msg("%s: %s", clusters[iter], pp_ctx_errmsg(ctx));
  }
  {
    char mk[600];
    snprintf(mk, sizeof mk, "mkdir -p '%s'", dir);
    assert_int_equal(tu_sh(mk, NULL, NULL), 0);
  }
  for (iter = 0; iter < 150; iter++) {
    const pp_model *m = mm[tu_rand(&rng, 2)];
    int ci = (int)tu_rand(&rng, 2);
    const pp_cluster *c = cc[ci];
    int nop = pp_model_nop(m), tp = 1 << tu_rand(&rng, 4), P, V, S, R, s, i,
        cut[MAXSTAGE + 1], Rs[MAXSTAGE], nst;
    int64_t M;
    pp_plan_params pa;
    pp_plan *p;
    pp_export *x;
    struct argv_s v;
    char st[MAXSTAGE][512];
    const char *lay;
    /* pp ranks P, virtual stages V each, R replicas: P V <= 16 stages,
    ** P R tp <= 128 devices */
    P = 1 + (int)tu_rand(&rng, 8);
    V = tu_rand(&rng, 3) == 0 ? 2 : 1;
    S = P * V;
    if (S > nop - 1 || S > 16)
      continue;
    R = 1 +
        (int)tu_rand(&rng, (uint32_t)(128 / (P * tp) < 4 ? 128 / (P * tp) : 4));
    if (P * R * tp > 128)
      continue;
    /* uneven cuts: S - 1 distinct in 1..nop-1 */
    tu_random_cuts(&rng, nop, S, cut);
    pp_plan_params_init(&pa);
    pa.tp = tp;
    pa.micro_batch = 1 + (int)tu_rand(&rng, 2);
    /* micro-batches per replica: sometimes not a multiple of P */
    M = (int64_t)P * (1 + tu_rand(&rng, 3)) + (tu_rand(&rng, 4) == 0);
    pa.global_batch = M * pa.micro_batch * R;
    pa.precision = precs[tu_rand(&rng, 3)];
    pa.engine = PP_ENGINE_MEGATRON;
    pa.zero = (int)tu_rand(&rng, 2);
    pa.recompute = tu_rand(&rng, 2) == 0;
    for (s = 0; s < S; s++)
      Rs[s] = R;
    /* Megatron's rank order */
    if (tu_cut_plan(ctx, &pa, S, cut, Rs, P, &p) != PP_OK)
      fail_msg("plan %d: %s", iter, pp_ctx_errmsg(ctx));
    assert_int_equal(pp_export_megatron(ctx, p, m, c, &x), PP_OK);
    for (i = 0; i < pp_export_nfile(x); i++) {
      char path[700];
      snprintf(path, sizeof path, "%s/%s", dir, pp_export_file_name(x, i));
      assert_int_equal(pp_export_write_file(ctx, x, i, path, NULL), PP_OK);
    }
    shell_argv(dir, &v);
    /* every token a flag or a flag's value */
    for (i = 0; i < v.n; i++)
      if (strncmp(v.a[i], "--", 2) && (i == 0 || strncmp(v.a[i - 1], "--", 2)))
        fail_msg("plan %d: '%s' is neither a flag nor a value", iter, v.a[i]);
    /* the layout's grammar */
    lay = arg(&v, "--pipeline-model-parallel-layout");
    assert_non_null(lay);
    nst = mg_parse(lay, st);
    if (nst < 0)
      fail_msg("plan %d: Megatron refuses the layout %s", iter, lay);
    /* pp, vpp and the interleaved schedule */
    assert_int_equal(iarg(&v, "--pipeline-model-parallel-size"), P);
    assert_int_equal(nst % P, 0);
    assert_int_equal(nst, S);
    if (nst / P > 1) {
      bool bad = P < 2 || M < P || M % P;
      interleaved++;
      if (bad != tu_export_warned(x, "interleaved schedule"))
        fail_msg("plan %d (pp %d, M %lld): the interleaved warning is %s", iter,
                 P, (long long)M, bad ? "missing" : "wrong");
      flagged += bad;
    }
    assert_false(tu_export_warned(x, "holds stages"));
    assert_false(tu_export_warned(x, "rank order"));
    /* each stage holds the plan's stage's layers */
    {
      int nE = 0, nL = 0, nt = 0;
      for (s = 0; s < S; s++) {
        char want[512];
        int w = 0;
        for (i = cut[s]; i < cut[s + 1]; i++) {
          pp_op_desc od;
          char sym;
          pp_model_op(m, i, &od);
          if ((sym = kind_sym(od.kind)))
            want[w++] = sym;
        }
        want[w] = 0;
        if (strcmp(st[s], want))
          fail_msg("plan %d stage %d: layout '%s', the plan's layers '%s'",
                   iter, s, st[s], want);
        nE += count(st[s], 'E');
        nL += count(st[s], 'L');
        nt += count(st[s], 't');
      }
      /* validate_layer_layout (lines 92-113) on the flattened layout:
      ** where the plan breaks it (a last stage of no-ops after the head),
      ** the export says so */
      {
        char flat[4096] = "";
        size_t fl;
        bool ok;
        for (s = 0; s < S; s++)
          strcat(flat, st[s]);
        fl = strlen(flat);
        ok = nE == 1 && nL == 1 && fl && flat[0] == 'E' && flat[fl - 1] == 'L';
        if (ok == (tu_export_warned(x, "start with") ||
                   tu_export_warned(x, "end with")))
          fail_msg("plan %d: layout %s, the E/L warning is %s", iter, flat,
                   ok ? "wrong" : "missing");
        broken += !ok;
      }
      assert_int_equal(iarg(&v, "--num-layers"), nt);
      assert_int_equal(nt, 24);
    }
    /* sizes and batches */
    assert_int_equal(iarg(&v, "--tensor-model-parallel-size"), tp);
    { /* the plan's devices are the world: tp x pp x dp (arguments.py:432,
      ** 448), with dp the plan's replicas */
      char used[128] = {0};
      int world = 0, q;
      for (s = 0; s < S; s++)
        for (q = 0; q < pp_plan_nreplica(p, s); q++)
          for (i = 0; i < tp; i++)
            world += !used[pp_plan_replica(p, s, q)[i]]++;
      assert_int_equal(world % (iarg(&v, "--tensor-model-parallel-size") *
                                iarg(&v, "--pipeline-model-parallel-size")),
                       0);
      assert_int_equal(world / (tp * P), R);
    }
    assert_int_equal(iarg(&v, "--micro-batch-size"), pa.micro_batch);
    assert_int_equal(iarg(&v, "--global-batch-size") %
                         (iarg(&v, "--micro-batch-size") * R),
                     0);
    /* the run's settings */
    assert_int_equal(arg(&v, "--fp16") != NULL, pa.precision == PP_PREC_FP16);
    assert_int_equal(arg(&v, "--bf16") != NULL, pa.precision == PP_PREC_BF16);
    assert_int_equal(arg(&v, "--use-distributed-optimizer") != NULL,
                     pa.zero == 1);
    if (pa.recompute) {
      const char *g = arg(&v, "--recompute-granularity"),
                 *meth = arg(&v, "--recompute-method");
      assert_non_null(g);
      assert_true(!strcmp(g, "full") || !strcmp(g, "selective"));
      if (!strcmp(g, "full")) {
        assert_non_null(meth);
        assert_true(!strcmp(meth, "uniform") || !strcmp(meth, "block"));
        assert_true(iarg(&v, "--recompute-num-layers") >= 1);
      }
    } else {
      assert_null(arg(&v, "--recompute-granularity"));
    }
    /* the environment: tp > 1 before Blackwell */
    if (tp > 1 && ci == 0)
      assert_string_equal(v.env, "1");
    else
      assert_string_equal(v.env, "unset");
    pp_export_destroy(x);
    pp_plan_destroy(p);
  }
  print_message("%d interleaved plans, %d of them warned; %d layouts Megatron "
                "refuses, warned\n",
                interleaved, flagged, broken);
  assert_true(interleaved >= 10 && flagged >= 1 && flagged < interleaved);
  for (iter = 0; iter < 2; iter++) {
    pp_model_destroy(mm[iter]);
    pp_cluster_destroy(cc[iter]);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {TU_CTX_TEST(t_random)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
