/* SPDX-License-Identifier: MIT */
/*
** Export a plan to Megatron-LM / Megatron-Core arguments
** (docs/ECOSYSTEM.md 3.1, [Megatron-LM] @d98e8a64):
**   --tensor-model-parallel-size TP --pipeline-model-parallel-size PP
**   --micro-batch-size MBS --global-batch-size GBS [--fp16 | --bf16]
**   [--use-distributed-optimizer] --overlap-grad-reduce
**   --pipeline-model-parallel-layout "E t t ...|t t ...|... L"
** The precision is the plan's (a plan without one: fp16 for the
** mixed-precision optimizer, export.c); ZeRO stage 1 is Megatron's
** distributed optimizer, 2 and 3 a warning (its FSDP modes are not
** modelled).
** The layout gives every stage its own layer count (uneven stages), one
** symbol per operator by its kind: E embedding, t decoder layer, m MTP
** layer, L loss / output head; operators of other kinds (layer norms,
** casts, no-ops) have no symbol and travel with their stage.
**
** What Megatron cannot express becomes a warning, never a silent change:
** stages with different replica counts (its data parallelism is uniform),
** a device holding several stages (MadPipe's special processor), stages
** whose operators are not one run of the model's order, a first stage
** without the embedding or a last one without the loss, a placement other
** than Megatron's rank order (tp fastest, then dp, then pp) over the
** devices in cluster order.
**
** The layout parser (pp_megatron_layout_parse) reads Megatron's syntax:
** symbols E t m L, '|' between stages, "(...)*k" repeats, commas and
** spaces cosmetic; it is the round-trip check of what we write.
**
** Complexity: O(operators + replicas x tp).
*/
#include "export/export.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The Megatron symbol of an operator kind; 0: none. */
static char symbol_of(const char *kind)
{
  char k[64];
  size_t i;
  if (!kind)
    return 0;
  for (i = 0; kind[i] && i + 1 < sizeof k; i++)
    k[i] = (char)tolower((unsigned char)kind[i]);
  k[i] = 0;
  if (strstr(k, "loss") || strstr(k, "head") || strstr(k, "logits") ||
      !strcmp(k, "embed2v"))
    return 'L';
  if (strstr(k, "mtp"))
    return 'm';
  if (strstr(k, "embed"))
    return 'E';
  if (strstr(k, "layer") || strstr(k, "block") || !strcmp(k, "transformer"))
    return 't';
  return 0;
}

pp_status pp_export_megatron(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                             const pp_cluster *c, pp_export **out)
{
  static const char *engine = "Megatron";
  pp_export *x;
  struct ppi_sbuf b;
  struct ppi_stage_ops o;
  int32_t S, s, i, nsym[4] = {0, 0, 0, 0};
  int32_t first_e = -1, last_l = -1, unnamed = 0;
  pp_precision prec;
  pp_status rc = PP_OK;

  if ((rc = ppi_export_begin(ctx, "pp_export_megatron", p, m, c, out, &x, &b,
                             &o)))
    return rc;
  S = p->nstage;
  if ((rc = ppi_export_check_uniform(ctx, x, p, engine)) ||
      (rc = ppi_export_check_runs(ctx, x, p, &o, engine)) ||
      (rc = ppi_export_check_shared(ctx, x, p, engine,
                                    " (interleaved stages are round-robin)")) ||
      (rc = ppi_export_check_tp(ctx, x, p, c, engine)) ||
      (rc = ppi_export_check_rank_order(ctx, x, p, NULL, engine)) ||
      (rc = ppi_export_check_engine(ctx, x, p, PP_ENGINE_MEGATRON, engine)))
    goto done;
  ppi_sb_printf(
      &b,
      "--tensor-model-parallel-size %d --pipeline-model-parallel-size "
      "%d --micro-batch-size %d --global-batch-size %lld",
      (int)p->p.tp, (int)S, (int)p->p.micro_batch,
      (long long)p->p.global_batch);
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
  ppi_sb_puts(&b, " --pipeline-model-parallel-layout \"");
  for (s = 0; s < S; s++) {
    if (s)
      ppi_sb_put(&b, "|", 1);
    for (i = p->op_off[s]; i < p->op_off[s + 1]; i++) {
      pp_op_desc od;
      char sym;
      pp_model_op(m, o.ord[i], &od);
      sym = symbol_of(od.kind);
      if (!sym) {
        unnamed++;
        continue;
      }
      ppi_sb_put(&b, &sym, 1);
      nsym[sym == 'E' ? 0 : sym == 't' ? 1 : sym == 'm' ? 2 : 3]++;
      if (sym == 'E' && first_e < 0)
        first_e = s;
      if (sym == 'L')
        last_l = s;
    }
  }
  ppi_sb_puts(&b, "\"\n");
  if (nsym[1] == 0 &&
      (rc = ppi_export_warn(ctx, x,
                            "no operator has a decoder-layer kind "
                            "(transformer_layer, layer, block): the "
                            "layout has no 't'")))
    goto done;
  if (nsym[0] != 1 || first_e != 0)
    rc = ppi_export_warn(
        ctx, x,
        "Megatron expects one embedding (E) in the first stage; the "
        "layout has %d%s",
        (int)nsym[0], first_e > 0 ? ", not in the first stage" : "");
  if (!rc && (nsym[3] != 1 || last_l != S - 1))
    rc = ppi_export_warn(
        ctx, x,
        "Megatron expects one loss / output head (L) in the last "
        "stage; the layout has %d%s",
        (int)nsym[3],
        last_l >= 0 && last_l != S - 1 ? ", not in the last stage" : "");
  if (!rc && unnamed > 0)
    rc = ppi_export_warn(
        ctx, x,
        "%d operators have no Megatron symbol (kinds other than "
        "embedding, layer, head or loss): they go with their stage's "
        "layers",
        (int)unnamed);
  if (!rc)
    rc = ppi_export_check_1f1b(ctx, x, p, engine);
  if (!rc)
    rc = ppi_export_add(ctx, x, "megatron_args.txt", &b);
done:
  return ppi_export_end(ctx, x, &b, &o, rc, out);
}

/* ---- the layout parser -------------------------------------------------- */

struct lp {
  pp_ctx *ctx;
  const char *s;
  size_t i;
  int32_t max, n;  /* stages seen: n + 1 while one is open */
  int32_t *counts; /* [max][4] */
  int64_t emitted; /* symbols, against blow-ups of nested repeats */
};

static pp_status lp_fail(struct lp *p, const char *what)
{
  return ppi_fail(p->ctx, PP_EINPUT,
                  "megatron layout, character %d: %s (the syntax: E t m L, "
                  "'|' between stages, \"(...)*k\" repeats)",
                  (int)p->i + 1, what);
}

/* Expand s[a, b) `times` times. */
static pp_status lp_run(struct lp *p, size_t a, size_t b, int64_t times,
                        int depth);

static pp_status lp_seq(struct lp *p, size_t a, size_t b, int depth)
{
  size_t i = a;
  pp_status rc;
  while (i < b) {
    char c = p->s[i];
    p->i = i;
    if (c == ',' || c == ' ') {
      i++;
    } else if (c == '|') {
      if (++p->n >= p->max)
        return lp_fail(p, "more stages than allowed");
      i++;
    } else if (c == 'E' || c == 't' || c == 'm' || c == 'L') {
      int k = c == 'E' ? 0 : c == 't' ? 1 : c == 'm' ? 2 : 3;
      if (++p->emitted > PPI_LAYOUT_MAX_SYMBOLS)
        return lp_fail(p, "more than 16 million symbols");
      p->counts[(size_t)p->n * 4 + (size_t)k]++;
      i++;
    } else if (c == '(') {
      size_t j = i + 1, end;
      int lvl = 1;
      int64_t k = 0;
      while (j < b && lvl > 0) {
        lvl += p->s[j] == '(' ? 1 : p->s[j] == ')' ? -1 : 0;
        j++;
      }
      if (lvl)
        return lp_fail(p, "unbalanced '('");
      end = j - 1; /* the ')' */
      if (j + 1 >= b + 1 || p->s[j] != '*' || j + 1 >= b ||
          !isdigit((unsigned char)p->s[j + 1])) {
        p->i = j < b ? j : b - 1;
        return lp_fail(p, "a group must be followed by *COUNT");
      }
      j++;
      while (j < b && isdigit((unsigned char)p->s[j])) {
        k = k * 10 + (p->s[j] - '0');
        if (k > PPI_LAYOUT_MAX_REPEAT)
          return lp_fail(p, "repeat count too large");
        j++;
      }
      if ((rc = lp_run(p, i + 1, end, k, depth + 1)))
        return rc;
      i = j;
    } else {
      return lp_fail(p, "unexpected character");
    }
  }
  return PP_OK;
}

static pp_status lp_run(struct lp *p, size_t a, size_t b, int64_t times,
                        int depth)
{
  int64_t r;
  pp_status rc;
  if (depth > PPI_LAYOUT_MAX_DEPTH)
    return lp_fail(p, "groups nested too deep");
  for (r = 0; r < times; r++)
    if ((rc = lp_seq(p, a, b, depth)))
      return rc;
  return PP_OK;
}

pp_status pp_megatron_layout_parse(pp_ctx *ctx, const char *layout,
                                   int32_t max_stages, int32_t *nstage,
                                   int32_t *counts)
{
  struct lp p;
  pp_status rc;
  if (!ctx)
    return PP_EINVAL;
  if (!layout || !nstage || !counts || max_stages < 1)
    return ppi_fail(ctx, PP_EINVAL, "pp_megatron_layout_parse: bad argument");
  memset(counts, 0, (size_t)max_stages * 4 * sizeof *counts);
  memset(&p, 0, sizeof p);
  p.ctx = ctx;
  p.s = layout;
  p.max = max_stages;
  p.counts = counts;
  if (!*layout)
    return ppi_fail(ctx, PP_EINPUT, "megatron layout: empty");
  if ((rc = lp_seq(&p, 0, strlen(layout), 0)))
    return rc;
  *nstage = p.n + 1;
  return PP_OK;
}
