/* SPDX-License-Identifier: MIT */
/*
** Export a plan to Megatron-LM / Megatron-Core arguments
** (notes/ecosystem.md 3.1, Megatron-LM @d98e8a64):
**   --tensor-model-parallel-size TP --pipeline-model-parallel-size PP
**   --micro-batch-size MBS --global-batch-size GBS
**   --pipeline-model-parallel-layout "E t t ...|t t ...|... L"
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
#include "pp_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WARN 64
#define LAYOUT_MAX_DEPTH 16

struct pp_export {
  struct ppi_arena arena;
  char *text;
  int32_t nwarn;
  char *warn[MAX_WARN];
};

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

static pp_status warn(pp_ctx *ctx, pp_export *x, const char *fmt, ...)
{
  char buf[512];
  va_list ap;
  if (x->nwarn == MAX_WARN)
    return PP_OK;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (!(x->warn[x->nwarn] = ppi_arena_strdup(&x->arena, ctx, buf)))
    return PP_ENOMEM;
  x->nwarn++;
  return PP_OK;
}

/* A growable string in the context's allocator. */
struct sbuf {
  pp_ctx *ctx;
  char *s;
  size_t n, cap;
  pp_status rc;
};

static void sb_put(struct sbuf *b, const char *s, size_t len)
{
  if (b->rc)
    return;
  if (b->n + len + 1 > b->cap) {
    size_t nc = b->cap ? b->cap : 256;
    char *t;
    while (nc < b->n + len + 1)
      nc *= 2;
    if (!(t = ppi_alloc(b->ctx, nc))) {
      b->rc = PP_ENOMEM;
      return;
    }
    if (b->n)
      memcpy(t, b->s, b->n);
    ppi_free(b->ctx, b->s, b->cap);
    b->s = t;
    b->cap = nc;
  }
  memcpy(b->s + b->n, s, len);
  b->n += len;
  b->s[b->n] = 0;
}

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
  char buf[256];
  int k;
  va_list ap;
  va_start(ap, fmt);
  k = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (k > 0)
    sb_put(b, buf, (size_t)k < sizeof buf ? (size_t)k : sizeof buf - 1);
}

static pp_status check_shape(pp_ctx *ctx, pp_export *x, const pp_plan *p,
                             const pp_model *m, const int32_t *pos)
{
  int32_t S = p->nstage, s, r, t, q, R0 = p->rep_off[1] - p->rep_off[0];
  int32_t tp = p->p.tp, ndev = ppi_plan_max_device(p) + 1, *owner;
  pp_status rc = PP_OK;
  for (s = 1; s < S && !rc; s++)
    if (p->rep_off[s + 1] - p->rep_off[s] != R0)
      rc = warn(ctx, x,
                "stage %d has %d replicas and stage 0 has %d: Megatron's "
                "data parallelism is the same for every stage",
                (int)s, (int)(p->rep_off[s + 1] - p->rep_off[s]), (int)R0);
  for (s = 0; s < S && !rc; s++) {
    int32_t i, lo = p->op_off[s], hi = p->op_off[s + 1];
    int32_t mn = INT32_MAX, mx = -1;
    for (i = lo; i < hi; i++) {
      mn = pos[p->ops[i]] < mn ? pos[p->ops[i]] : mn;
      mx = pos[p->ops[i]] > mx ? pos[p->ops[i]] : mx;
    }
    if (mx - mn + 1 != hi - lo)
      rc = warn(ctx, x,
                "stage %d is not one run of the model's operators: Megatron "
                "stages are consecutive layers",
                (int)s);
    else if (s > 0 && mn <= pos[p->ops[p->op_off[s] - 1]])
      rc = warn(ctx, x,
                "stage %d comes before stage %d in the model: Megatron "
                "stages follow the model's order",
                (int)s, (int)(s - 1));
  }
  if (rc || !(owner = ppi_alloc(ctx, (size_t)ndev * sizeof *owner)))
    return rc ? rc : PP_ENOMEM;
  for (q = 0; q < ndev; q++)
    owner[q] = -1;
  for (s = 0; s < S && !rc; s++)
    for (r = p->rep_off[s]; r < p->rep_off[s + 1] && !rc; r++)
      for (t = 0; t < tp && !rc; t++) {
        int32_t d = p->dev[(size_t)r * tp + t];
        if (owner[d] >= 0 && owner[d] != s)
          rc = warn(ctx, x,
                    "device %d holds stages %d and %d: Megatron runs one "
                    "stage per rank (interleaved stages are round-robin)",
                    (int)d, (int)owner[d], (int)s);
        owner[d] = s;
      }
  ppi_free(ctx, owner, (size_t)ndev * sizeof *owner);
  if (rc)
    return rc;
  /* Megatron's rank order: rank = pp_rank x dp x tp + dp_rank x tp + tp_rank
  ** over the devices in cluster order */
  for (s = 0; s < S; s++)
    for (r = 0; r < p->rep_off[s + 1] - p->rep_off[s]; r++)
      for (t = 0; t < tp; t++) {
        int32_t d = p->dev[(size_t)(p->rep_off[s] + r) * tp + t];
        if (d != (s * R0 + r) * tp + t)
          return warn(ctx, x,
                      "the placement is not Megatron's rank order (stage %d "
                      "replica %d rank %d is on device %d): launch each rank "
                      "on its device (CUDA_VISIBLE_DEVICES per node)",
                      (int)s, (int)r, (int)t, (int)d);
      }
  (void)m;
  return PP_OK;
}

pp_status pp_export_megatron(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                             const pp_cluster *c, pp_export **out)
{
  pp_export *x;
  struct sbuf b;
  int32_t S, s, i, nop, *pos = NULL, nsym[4] = {0, 0, 0, 0};
  int32_t first_e = -1, last_l = -1, unnamed = 0;
  const int32_t *topo;
  pp_status rc = PP_OK;

  if (!ctx)
    return PP_EINVAL;
  if (!p || !m || !c || !out)
    return ppi_fail(ctx, PP_EINVAL, "pp_export_megatron: NULL argument");
  *out = NULL;
  if ((rc = pp_plan_check(ctx, p, m, c)))
    return rc;
  S = p->nstage;
  nop = pp_model_nop(m);
  if (!(x = ppi_calloc(ctx, 1, sizeof *x)))
    return PP_ENOMEM;
  ppi_arena_init(&x->arena, ppi_ctx_alloc(ctx));
  memset(&b, 0, sizeof b);
  b.ctx = ctx;
  if (!(pos = ppi_alloc(ctx, (size_t)(nop > 0 ? nop : 1) * sizeof *pos))) {
    rc = PP_ENOMEM;
    goto done;
  }
  topo = pp_model_topo_order(m);
  for (i = 0; i < nop; i++)
    pos[topo[i]] = i;
  if ((rc = check_shape(ctx, x, p, m, pos)))
    goto done;
  sb_printf(&b,
            "--tensor-model-parallel-size %d --pipeline-model-parallel-size "
            "%d --micro-batch-size %d --global-batch-size %lld",
            (int)p->p.tp, (int)S, (int)p->p.micro_batch,
            (long long)p->p.global_batch);
  if (p->p.recompute)
    sb_printf(&b, " --recompute-granularity full --recompute-method uniform "
                  "--recompute-num-layers 1");
  {
    static const char opt[] = " --pipeline-model-parallel-layout \"";
    sb_put(&b, opt, sizeof opt - 1);
  }
  for (s = 0; s < S; s++) {
    int32_t lo = p->op_off[s], hi = p->op_off[s + 1], j;
    int32_t *ord = NULL;
    if (s)
      sb_put(&b, "|", 1);
    /* the stage's operators in the model's order */
    if (!(ord = ppi_alloc(ctx, (size_t)(hi - lo + 1) * sizeof *ord))) {
      rc = PP_ENOMEM;
      goto done;
    }
    for (i = lo; i < hi; i++) {
      int32_t v = p->ops[i];
      for (j = i - lo; j > 0 && pos[ord[j - 1]] > pos[v]; j--)
        ord[j] = ord[j - 1];
      ord[j] = v;
    }
    for (i = 0; i < hi - lo; i++) {
      pp_op_desc od;
      char sym;
      pp_model_op(m, ord[i], &od);
      sym = symbol_of(od.kind);
      if (!sym) {
        unnamed++;
        continue;
      }
      sb_put(&b, &sym, 1);
      nsym[sym == 'E' ? 0 : sym == 't' ? 1 : sym == 'm' ? 2 : 3]++;
      if (sym == 'E' && first_e < 0)
        first_e = s;
      if (sym == 'L')
        last_l = s;
    }
    ppi_free(ctx, ord, (size_t)(hi - lo + 1) * sizeof *ord);
  }
  sb_put(&b, "\"", 1);
  if (b.rc) {
    rc = b.rc;
    goto done;
  }
  if (nsym[1] == 0 && (rc = warn(ctx, x,
                                 "no operator has a decoder-layer kind "
                                 "(transformer_layer, layer, block): the "
                                 "layout has no 't'")))
    goto done;
  if (nsym[0] != 1 || first_e != 0)
    rc = warn(ctx, x,
              "Megatron expects one embedding (E) in the first stage; the "
              "layout has %d%s",
              (int)nsym[0], first_e > 0 ? ", not in the first stage" : "");
  if (!rc && (nsym[3] != 1 || last_l != S - 1))
    rc = warn(ctx, x,
              "Megatron expects one loss / output head (L) in the last "
              "stage; the layout has %d%s",
              (int)nsym[3],
              last_l >= 0 && last_l != S - 1 ? ", not in the last stage" : "");
  if (!rc && unnamed > 0)
    rc = warn(ctx, x,
              "%d operators have no Megatron symbol (kinds other than "
              "embedding, layer, head or loss): they go with their stage's "
              "layers",
              (int)unnamed);
  if (!rc && p->p.schedule == PP_SCHED_GPIPE)
    rc = warn(ctx, x,
              "Megatron runs 1F1B, not GPipe (same iteration time "
              "in our model, less memory)");
  if (!rc && p->p.schedule == PP_SCHED_1F1B_STAR)
    rc = warn(ctx, x,
              "Megatron runs 1F1B, not 1F1B*: the plan's in-flight "
              "counts and pattern are not expressible");
  if (rc)
    goto done;
  if (!(x->text = ppi_arena_strdup(&x->arena, ctx, b.s)))
    rc = PP_ENOMEM;
done:
  ppi_free(ctx, b.s, b.cap);
  ppi_free(ctx, pos, (size_t)(nop > 0 ? nop : 1) * sizeof *pos);
  if (rc) {
    pp_export_destroy(x);
    return rc;
  }
  *out = x;
  return PP_OK;
}

void pp_export_destroy(pp_export *x)
{
  struct ppi_alloc a;
  if (!x)
    return;
  a = x->arena.a;
  ppi_arena_free(&x->arena);
  ppi_raw_free(a, x, sizeof *x);
}

const char *pp_export_text(const pp_export *x)
{
  return x ? x->text : NULL;
}

int32_t pp_export_nwarning(const pp_export *x)
{
  return x ? x->nwarn : 0;
}

const char *pp_export_warning(const pp_export *x, int32_t i)
{
  return x && i >= 0 && i < x->nwarn ? x->warn[i] : NULL;
}

static void emit_text(FILE *f, const void *obj)
{
  const pp_export *x = obj;
  fprintf(f, "%s\n", x->text);
}

pp_status pp_export_write(pp_ctx *ctx, const pp_export *x, const char *path,
                          FILE *f)
{
  if (!ctx)
    return PP_EINVAL;
  if (!x || (!path && !f))
    return ppi_fail(ctx, PP_EINVAL, "pp_export_write: NULL argument");
  return ppi_emit(ctx, path, f, emit_text, x);
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
      if (++p->emitted > (int64_t)1 << 24)
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
        if (k > 1000000)
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
  if (depth > LAYOUT_MAX_DEPTH)
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
