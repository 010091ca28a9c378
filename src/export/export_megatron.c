/* SPDX-License-Identifier: MIT */
/*
** Export a plan to Megatron-LM / Megatron-Core (docs/EXPORT.md; read at
** NVIDIA/Megatron-LM d98e8a64; the layout argument exists from
** Megatron-Core v0.13.0 on):
**   megatron_args.txt, one line for $(cat megatron_args.txt):
**     --tensor-model-parallel-size TP --pipeline-model-parallel-size PP
**     --micro-batch-size MBS --global-batch-size GBS --num-layers N
**     [--fp16 | --bf16] [--use-distributed-optimizer]
**     --overlap-grad-reduce [recomputation]
**     --pipeline-model-parallel-layout Ettt|tttt|...|ttL
**   megatron_env.sh, to source before the launch: the environment
**     Megatron requires (CUDA_DEVICE_MAX_CONNECTIONS=1 with tp > 1 before
**     Blackwell, megatron/training/arguments.py:1452-1479) and the
**     versions this export targets.
** The layout is written expanded, with no quotes, groups or '*': the
** shell's word splitting of $(cat ...) keeps '|' and passes quotes and
** glob characters through unchanged, and Megatron's parser takes only E
** t m L and '|' after unrolling (core/transformer/
** pipeline_parallel_layer_layout.py:283-339), so quotes would reach it.
** One symbol per operator by its kind: E embedding, t decoder layer, m
** MTP layer, L loss / output head; operators of other kinds (norms,
** casts, no-ops) have no symbol and travel with their stage.
** --num-layers is the count of t: Megatron checks the layout against it
** (pipeline_parallel_layer_layout.py:99-113).
**
** A plan whose stages go round-robin over P groups of devices (stage s on
** stage s mod P's devices) is Megatron's interleaved (virtual) pipeline:
** pp = P, and the layout's S stages are taken in that order
** (pipeline_parallel_layer_layout.py:40-53: stage v P + p is virtual
** stage v of pipeline rank p); Megatron derives vpp = S / P from it
** (arguments.py:941-951).
**
** What Megatron cannot express becomes a warning, never a silent change:
** stages with different replica counts (its data parallelism is uniform),
** devices shared other than round-robin, stages whose operators are not
** one run of the model's order, a layout Megatron's checks refuse (E
** first, L last, each once: pipeline_parallel_layer_layout.py:92-103), a
** placement other than Megatron's rank order (tp fastest, then dp, then
** pp) over the devices in cluster order, micro-batches the interleaved
** schedule refuses (core/pipeline_parallel/schedules.py:1161-1179:
** M >= PP and M a multiple of PP, its default group being PP,
** core/model_parallel_config.py:567-568; PP > 1, arguments.py:1000-1009).
**
** The layout parser (pp_megatron_layout_parse, below) reads Megatron's
** syntax as parse_str_to_list does; it is the round-trip check of what
** we write.
**
** Complexity: O(operators + replicas x tp).
*/
#include "export/export.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The layout symbol of operator `op`: 0 for a kind without one, 1 for
** an E or L that continues a run of that symbol in its stage, else the
** symbol; *prev is the stage's last symbol.  A run is one symbol because
** Megatron's E is the word and the position embeddings together
** (LanguageModelEmbedding, megatron/core/models/common/embeddings/
** language_model_embedding.py:59, 71 @d98e8a64; built on the first stage,
** core/models/gpt/gpt_model.py:173-174) and its L the output layer with
** the loss (gpt_model.py:255, 277, on the last stage): a profile's wte and
** wpe, or its head and loss, are two operators for one symbol. */
static char layout_symbol(const pp_model *m, int32_t op, char *prev)
{
  pp_op_desc od;
  char sym;
  pp_model_op(m, op, &od);
  sym = ppi_export_symbol(od.kind);
  if (!sym)
    return 0;
  if ((sym == 'E' || sym == 'L') && *prev == sym)
    return 1;
  *prev = sym;
  return sym;
}

/* P when stage s holds exactly stage s mod P's replicas (the same device
** lists) for every s, the first P stages' devices are disjoint, and P
** divides S: Megatron's interleaved pipeline of P ranks; S when no device
** holds two stages; 0 otherwise. */
static int32_t interleave_ranks(pp_ctx *ctx, const pp_plan *p, pp_status *rc)
{
  int32_t S = p->nstage, tp = p->p.tp, P, s, n, ndev, *owner;
  size_t q;
  *rc = PP_OK;
  ndev = ppi_plan_max_device(p) + 1;
  if (!(owner = ppi_alloc(ctx, (size_t)ndev * sizeof *owner))) {
    *rc = PP_ENOMEM;
    return 0;
  }
  for (s = 0; s < ndev; s++)
    owner[s] = -1;
  /* P: the first stage that reuses a device */
  for (P = S, s = 0; s < S && P == S; s++)
    for (q = (size_t)p->rep_off[s] * tp;
         q < (size_t)p->rep_off[s + 1] * tp && P == S; q++) {
      if (owner[p->dev[q]] >= 0 && owner[p->dev[q]] != s)
        P = s;
      owner[p->dev[q]] = s;
    }
  ppi_free(ctx, owner, (size_t)ndev * sizeof *owner);
  if (P == S)
    return S;
  if (P == 0 || S % P)
    return 0;
  for (s = P; s < S; s++) {
    int32_t t = s % P;
    n = p->rep_off[s + 1] - p->rep_off[s];
    if (n != p->rep_off[t + 1] - p->rep_off[t] ||
        memcmp(p->dev + (size_t)p->rep_off[s] * tp,
               p->dev + (size_t)p->rep_off[t] * tp,
               (size_t)n * tp * sizeof *p->dev))
      return 0;
  }
  return P;
}

pp_status pp_export_megatron(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                             const pp_cluster *c, pp_export **out)
{
  static const char *engine = "Megatron";
  pp_export *x;
  struct ppi_sbuf b, env;
  struct ppi_stage_ops o;
  int32_t S, P, s, i, nsym[4] = {0, 0, 0, 0}, *rank_of = NULL;
  int32_t unnamed = 0, needs_env = 0;
  char first = 0, last = 0;
  int64_t M;
  double layers;
  pp_precision prec;
  pp_status rc = PP_OK;

  if ((rc = ppi_export_begin(ctx, "pp_export_megatron", &p, m, c, out, &x, &b,
                             &o)))
    return rc;
  ppi_sb_init(&env, ctx);
  S = p->nstage;
  P = interleave_ranks(ctx, p, &rc);
  if (rc)
    goto done;
  if (P > 0 && P < S) {
    if (!(rank_of = ppi_alloc(ctx, (size_t)S * sizeof *rank_of))) {
      rc = PP_ENOMEM;
      goto done;
    }
    for (s = 0; s < S; s++)
      rank_of[s] = s % P;
  }
  if ((rc = ppi_export_check_uniform(ctx, x, p, engine)) ||
      (rc = ppi_export_check_runs(ctx, x, p, &o, engine)) ||
      (P == 0 && (rc = ppi_export_check_shared(
                      ctx, x, p, engine,
                      " (its interleaved pipeline needs stage s on the "
                      "devices of stage s mod P)"))) ||
      (rc = ppi_export_check_tp(ctx, x, p, c, engine)) ||
      (rc = ppi_export_check_rank_order(ctx, x, p, rank_of, engine)) ||
      (rc = ppi_export_check_engine(ctx, x, p, PP_ENGINE_MEGATRON, engine)))
    goto done;
  if (P == 0)
    P = S; /* warned: written as a plain pipeline of S ranks */
  M = p->p.global_batch /
      ((int64_t)p->p.micro_batch * (p->rep_off[1] - p->rep_off[0]));
  if (P < S && (P < 2 || M < P || M % P) &&
      (rc = ppi_export_warn(
           ctx, x,
           "Megatron's interleaved schedule needs pp >= 2 and the %lld "
           "micro-batches of each replica to be a multiple of pp = %d "
           "(core/pipeline_parallel/schedules.py:1161-1179): it will refuse "
           "to run; choose a global batch that divides",
           (long long)M, (int)P)))
    goto done;
  /* the layout, and what Megatron checks of it */
  for (s = 0; s < S; s++) {
    char prev = 0;
    for (i = p->op_off[s]; i < p->op_off[s + 1]; i++) {
      char sym = layout_symbol(m, o.ord[i], &prev);
      if (!sym)
        unnamed++;
      else if (sym > 1)
        nsym[sym == 'E' ? 0 : sym == 't' ? 1 : sym == 'm' ? 2 : 3]++;
    }
  }
  ppi_sb_printf(
      &b,
      "--tensor-model-parallel-size %d --pipeline-model-parallel-size "
      "%d --micro-batch-size %d --global-batch-size %lld --num-layers %d",
      (int)p->p.tp, (int)P, (int)p->p.micro_batch, (long long)p->p.global_batch,
      (int)nsym[1]);
  /* --fp16 and --bf16 are ModelParallelConfig's fields made arguments
  ** (NVIDIA/Megatron-LM@d98e8a64 megatron/core/model_parallel_config.py:177,
  ** 180; megatron/training/arguments.py:2373); ZeRO stage 1 is
  ** --use-distributed-optimizer (arguments.py:3156 @d98e8a64) */
  prec = ppi_export_precision(p, m);
  if (prec != PP_PREC_FP32)
    ppi_sb_printf(&b, " --%s", pp_precision_name(prec));
  if (p->p.zero == 1)
    ppi_sb_puts(&b, " --use-distributed-optimizer");
  /* the gradient reduction overlapped with the backward, as the cost
  ** model prices Megatron's (src/cost/engine.c; default off:
  ** megatron/core/distributed/distributed_data_parallel_config.py:18-19,
  ** megatron/training/arguments.py:3121-3122 @d98e8a64) */
  ppi_sb_puts(&b, " --overlap-grad-reduce");
  if (p->p.recompute)
    ppi_sb_puts(&b, " --recompute-granularity full --recompute-method uniform "
                    "--recompute-num-layers 1");
  ppi_sb_puts(&b, " --pipeline-model-parallel-layout ");
  for (s = 0; s < S; s++) {
    char prev = 0;
    if (s)
      ppi_sb_put(&b, "|", 1);
    for (i = p->op_off[s]; i < p->op_off[s + 1]; i++) {
      char sym = layout_symbol(m, o.ord[i], &prev);
      if (sym <= 1)
        continue;
      ppi_sb_put(&b, &sym, 1);
      /* Megatron flattens the layout in this order (stage v P + p is
      ** virtual stage v of rank p, lines 40-53, 75-79) */
      if (!first)
        first = sym;
      last = sym;
    }
  }
  ppi_sb_puts(&b, "\n");
  if (nsym[1] == 0 &&
      (rc = ppi_export_warn(ctx, x,
                            "no operator has a decoder-layer kind "
                            "(transformer_layer, layer, block): the "
                            "layout has no 't'")))
    goto done;
  if (nsym[0] != 1 || first != 'E')
    rc = ppi_export_warn(ctx, x,
                         "Megatron needs the layout to start with the one "
                         "embedding (E) (core/transformer/"
                         "pipeline_parallel_layer_layout.py:92-101); this "
                         "one has %d E%s",
                         (int)nsym[0],
                         first != 'E' ? " and does not start with it" : "");
  if (!rc && (nsym[3] != 1 || last != 'L'))
    rc = ppi_export_warn(ctx, x,
                         "Megatron needs the layout to end with the one loss "
                         "/ output head (L) (pipeline_parallel_layer_layout."
                         "py:95-103); this one has %d L%s",
                         (int)nsym[3],
                         last != 'L' ? " and does not end with it" : "");
  if (!rc && unnamed > 0)
    rc = ppi_export_warn(
        ctx, x,
        "%d operators have no Megatron symbol (kinds other than "
        "embedding, layer, head or loss): they go with their stage's "
        "layers",
        (int)unnamed);
  for (i = 0, layers = -1; i < pp_model_nhyper(m); i++) {
    double v;
    const char *key = pp_model_hyper(m, i, &v);
    if (key && !strcmp(key, "layers"))
      layers = v;
  }
  if (!rc && layers >= 0 && (int32_t)layers != nsym[1])
    rc = ppi_export_warn(ctx, x,
                         "the model says %d layers but %d operators are "
                         "decoder layers: --num-layers %d follows the "
                         "layout",
                         (int)layers, (int)nsym[1], (int)nsym[1]);
  if (!rc)
    rc = ppi_export_check_1f1b(ctx, x, p, engine);
  /* the environment */
  ppi_sb_puts(&env,
              "# parplan export for Megatron-LM: source this file, then run\n"
              "#   torchrun ... pretrain_gpt.py <model and data arguments> "
              "$(cat megatron_args.txt)\n"
              "# Targets Megatron-Core v0.13.0 and later (the "
              "--pipeline-model-parallel-layout\n"
              "# argument); checked against NVIDIA/Megatron-LM d98e8a64.\n");
  /* Megatron asserts it before compute capability 10 (arguments.py:
  ** 1452-1479: get_device_arch_version() < 10) */
  for (i = 0; p->p.tp > 1 && i < p->rep_off[S] * p->p.tp && !needs_env; i++)
    needs_env = !ppi_gpu_blackwell(c->type_name[c->dev_type[p->dev[i]]]);
  if (needs_env)
    ppi_sb_puts(&env, "# tensor parallelism before Blackwell: Megatron asserts "
                      "it (megatron/training/arguments.py:1452-1479)\n"
                      "export CUDA_DEVICE_MAX_CONNECTIONS=1\n");
  else
    ppi_sb_puts(&env, "# no environment variable is required for this plan\n");
  if (!rc)
    rc = ppi_export_add(ctx, x, "megatron_args.txt", &b);
  if (!rc)
    rc = ppi_export_add(ctx, x, "megatron_env.sh", &env);
done:
  ppi_sb_free(&env);
  if (rank_of)
    ppi_free(ctx, rank_of, (size_t)S * sizeof *rank_of);
  return ppi_export_end(ctx, x, &b, &o, rc, out);
}

/* ---- the layout parser -------------------------------------------------- */

/* Megatron's parse_str_to_list (core/transformer/
** pipeline_parallel_layer_layout.py:283-339 @ d98e8a64), step by step:
**   1. commas removed (line 290);
**   2. re.sub(r'\(([^)]+)\)\*(\d+)', g1 * g2) (line 299): a '(' and the
**      characters up to the first ')' (at least one), then '*' and
**      digits, left to right, never rescanning what it wrote; groups do
**      not nest (an inner '(' is kept and refused in step 4);
**   3. re.sub(r'(.)\*(\d+)', g1 * g2) (line 300): any one character
**      before '*' and digits (a count 0 removes it);
**   4. split on '|', every character one of E L t m (lines 308-339):
**      spaces, quotes and anything else are refused.
** The unrolled text is bounded by PPI_LAYOUT_MAX_SYMBOLS. */
/* Append s[0, n) times times to o, within PPI_LAYOUT_MAX_SYMBOLS. */
static pp_status lp_put(struct ppi_sbuf *o, const char *s, size_t n,
                        int64_t times)
{
  int64_t r;
  if (times > 0 && n > 0 &&
      (int64_t)o->n + (int64_t)n * times > PPI_LAYOUT_MAX_SYMBOLS)
    return ppi_fail(o->ctx, PP_EINPUT,
                    "megatron layout: more than %lld characters once "
                    "unrolled",
                    (long long)PPI_LAYOUT_MAX_SYMBOLS);
  for (r = 0; r < times && !o->rc; r++)
    ppi_sb_put(o, s, n);
  return o->rc;
}

/* The count of digits at s (at most max), into *k: 0 digits, or -1 when
** the count is above PPI_LAYOUT_MAX_REPEAT. */
static size_t lp_count(const char *s, size_t max, int64_t *k)
{
  size_t j = 0;
  *k = 0;
  while (j < max && isdigit((unsigned char)s[j])) {
    if (*k >= 0)
      *k = *k * 10 + (s[j] - '0');
    if (*k > PPI_LAYOUT_MAX_REPEAT)
      *k = -1;
    j++;
  }
  return j;
}

static pp_status lp_too_many(pp_ctx *ctx)
{
  return ppi_fail(ctx, PP_EINPUT, "megatron layout: a repeat count above %d",
                  (int)PPI_LAYOUT_MAX_REPEAT);
}

/* Step 2 on in[0, n) into o. */
static pp_status lp_groups(const char *in, size_t n, struct ppi_sbuf *o)
{
  size_t i = 0;
  pp_status rc;
  while (i < n) {
    size_t k = i + 1, d;
    int64_t cnt;
    if (in[i] == '(') {
      while (k < n && in[k] != ')')
        k++;
      if (k < n && k > i + 1 && k + 1 < n && in[k + 1] == '*' &&
          (d = lp_count(in + k + 2, n - k - 2, &cnt)) > 0) {
        if (cnt < 0)
          return lp_too_many(o->ctx);
        if ((rc = lp_put(o, in + i + 1, k - i - 1, cnt)))
          return rc;
        i = k + 2 + d;
        continue;
      }
    }
    if ((rc = lp_put(o, in + i, 1, 1)))
      return rc;
    i++;
  }
  return PP_OK;
}

/* Step 3 on in[0, n) into o. */
static pp_status lp_chars(const char *in, size_t n, struct ppi_sbuf *o)
{
  size_t i = 0, d;
  int64_t cnt;
  pp_status rc;
  while (i < n) {
    if (in[i] != '\n' && i + 1 < n && in[i + 1] == '*' &&
        (d = lp_count(in + i + 2, n - i - 2, &cnt)) > 0) {
      if (cnt < 0)
        return lp_too_many(o->ctx);
      if ((rc = lp_put(o, in + i, 1, cnt)))
        return rc;
      i += 2 + d;
      continue;
    }
    if ((rc = lp_put(o, in + i, 1, 1)))
      return rc;
    i++;
  }
  return PP_OK;
}

pp_status pp_megatron_layout_parse(pp_ctx *ctx, const char *layout,
                                   int32_t max_stages, int32_t *nstage,
                                   int32_t *counts)
{
  struct ppi_sbuf a, b2, c3;
  size_t i;
  int32_t st = 0;
  pp_status rc;
  if (!ctx)
    return PP_EINVAL;
  if (!layout || !nstage || !counts || max_stages < 1)
    return ppi_fail(ctx, PP_EINVAL, "pp_megatron_layout_parse: bad argument");
  memset(counts, 0, (size_t)max_stages * 4 * sizeof *counts);
  if (!*layout)
    return ppi_fail(ctx, PP_EINPUT, "megatron layout: empty");
  ppi_sb_init(&a, ctx);
  ppi_sb_init(&b2, ctx);
  ppi_sb_init(&c3, ctx);
  rc = PP_OK;
  for (i = 0; layout[i] && !rc; i++) /* 1. */
    if (layout[i] != ',')
      rc = lp_put(&a, layout + i, 1, 1);
  if (!rc)
    rc = lp_groups(a.s ? a.s : "", a.n, &b2); /* 2. */
  if (!rc)
    rc = lp_chars(b2.s ? b2.s : "", b2.n, &c3); /* 3. */
  for (i = 0; !rc && i < c3.n; i++) {           /* 4. */
    char ch = c3.s[i];
    if (ch == '|') {
      if (++st >= max_stages)
        rc = ppi_fail(ctx, PP_EINPUT, "megatron layout: more than %d stages",
                      (int)max_stages);
    } else if (ch == 'E' || ch == 't' || ch == 'm' || ch == 'L') {
      int k = ch == 'E' ? 0 : ch == 't' ? 1 : ch == 'm' ? 2 : 3;
      counts[(size_t)st * 4 + (size_t)k]++;
    } else {
      rc = ppi_fail(ctx, PP_EINPUT,
                    "megatron layout: stage %d has '%c' (0x%02x) once "
                    "unrolled; Megatron takes E t m L and '|' only, "
                    "\"(...)*k\" groups without nesting and \"x*k\" "
                    "repeats, commas ignored (its parse_str_to_list)",
                    (int)st, isprint((unsigned char)ch) ? ch : '?',
                    (unsigned)(unsigned char)ch);
    }
  }
  ppi_sb_free(&a);
  ppi_sb_free(&b2);
  ppi_sb_free(&c3);
  if (rc)
    return rc;
  *nstage = st + 1;
  return PP_OK;
}
