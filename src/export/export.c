/* SPDX-License-Identifier: MIT */
/*
** What every engine export shares (export.h): the export object (files
** and warnings), the stages' operators in model order, and
** the checks of what an engine cannot express.  A check never changes the
** plan: it records a warning and the export writes what the engine can
** run, so the user sees every difference between the plan and the files.
**
** Complexity: O(operators + replicas x tp) per export, plus O(n log n)
** for sorting each stage's operators by position.
*/
#include "export/export.h"

#include <ctype.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pp_status stage_ops(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                           struct ppi_stage_ops *o);
static void stage_ops_free(pp_ctx *ctx, struct ppi_stage_ops *o);

/* ---- the export object ----------------------------------------------------
 */

/* A new export with no files; NULL on allocation failure. */
static pp_export *export_new(pp_ctx *ctx)
{
  pp_export *x = ppi_calloc(ctx, 1, sizeof *x);
  if (x)
    ppi_arena_init(&x->arena, ppi_ctx_alloc(ctx));
  return x;
}

/* Stages of several tp degrees: the copy at the smallest (export.h). */
static pp_status one_tp(pp_ctx *ctx, pp_export *x, const char *fn,
                        const pp_plan **p)
{
  const pp_plan *q = *p;
  int32_t s, lo = q->stp[0], first = -1, n = 0;
  const char *engine = strncmp(fn, "pp_export_", 10) == 0 ? fn + 10 : fn;
  pp_status rc;
  if (pp_plan_uniform_tp(q) > 0)
    return PP_OK;
  for (s = 1; s < q->nstage; s++)
    if (q->stp[s] < lo)
      lo = q->stp[s];
  for (s = 0; s < q->nstage; s++)
    if (q->stp[s] != lo) {
      n++;
      if (first < 0)
        first = s;
    }
  if ((rc = ppi_plan_one_tp(ctx, q, lo, &x->own)))
    return rc;
  *p = x->own;
  return ppi_export_warn(
      ctx, x,
      "%d stage%s (the first: stage %d at tp %d) %s a tensor-parallel degree "
      "above the plan's smallest, %d: %s runs one degree in every stage, so "
      "the files run every stage at tp %d on the first %d devices of each "
      "group; those stages compute more per device and need more memory "
      "than planned (plan with --uniform-tp for a plan %s runs as planned)",
      (int)n, n > 1 ? "s" : "", (int)first, (int)q->stp[first],
      n > 1 ? "have" : "has", (int)lo, engine, (int)lo, (int)lo, engine);
}

pp_status ppi_export_begin(pp_ctx *ctx, const char *fn, const pp_plan **p,
                           const pp_model *m, const pp_cluster *c,
                           pp_export **out, pp_export **x, struct ppi_sbuf *b,
                           struct ppi_stage_ops *o)
{
  pp_status rc;
  if (!ctx)
    return PP_EINVAL;
  if (!p || !*p || !m || !c || !out)
    return ppi_fail(ctx, PP_EINVAL, "%s: NULL argument", fn);
  *out = NULL;
  if ((rc = pp_plan_check(ctx, *p, m, c)))
    return rc;
  if (!(*x = export_new(ctx)))
    return PP_ENOMEM;
  ppi_sb_init(b, ctx);
  if ((rc = one_tp(ctx, *x, fn, p)) || (rc = stage_ops(ctx, *p, m, o))) {
    pp_export_destroy(*x);
    *x = NULL;
    return rc;
  }
  return PP_OK;
}

pp_status ppi_export_end(pp_ctx *ctx, pp_export *x, struct ppi_sbuf *b,
                         struct ppi_stage_ops *o, pp_status rc, pp_export **out)
{
  ppi_sb_free(b);
  stage_ops_free(ctx, o);
  if (rc) {
    pp_export_destroy(x);
    return rc;
  }
  pp_plan_destroy(x->own); /* the files hold what it said */
  x->own = NULL;
  *out = x;
  return PP_OK;
}

pp_status ppi_export_warn(pp_ctx *ctx, pp_export *x, const char *fmt, ...)
{
  char buf[512];
  va_list ap;
  if (x->nwarn == PPI_EXPORT_MAX_WARN)
    return PP_OK;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (!(x->warn[x->nwarn] = ppi_arena_strdup(&x->arena, ctx, buf)))
    return PP_ENOMEM;
  x->nwarn++;
  return PP_OK;
}

pp_status ppi_export_add(pp_ctx *ctx, pp_export *x, const char *name,
                         const struct ppi_sbuf *b)
{
  if (b->rc)
    return b->rc;
  if (x->nfile == PPI_EXPORT_MAX_FILES)
    return ppi_fail(ctx, PP_EINTERNAL, "export: more than %d files",
                    PPI_EXPORT_MAX_FILES);
  if (!(x->name[x->nfile] = ppi_arena_strdup(&x->arena, ctx, name)) ||
      !(x->text[x->nfile] = ppi_arena_strdup(&x->arena, ctx, b->s ? b->s : "")))
    return PP_ENOMEM;
  x->nfile++;
  return PP_OK;
}

void pp_export_destroy(pp_export *x)
{
  if (!x)
    return;
  pp_plan_destroy(x->own);
  ppi_arena_free_owner(&x->arena, x, sizeof *x);
}

const char *pp_export_text(const pp_export *x)
{
  return x && x->nfile > 0 ? x->text[0] : NULL;
}

int32_t pp_export_nfile(const pp_export *x)
{
  return x ? x->nfile : 0;
}

const char *pp_export_file_name(const pp_export *x, int32_t i)
{
  return x && i >= 0 && i < x->nfile ? x->name[i] : NULL;
}

const char *pp_export_file_text(const pp_export *x, int32_t i)
{
  return x && i >= 0 && i < x->nfile ? x->text[i] : NULL;
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
  fputs(obj, f);
}

pp_status pp_export_write_file(pp_ctx *ctx, const pp_export *x, int32_t i,
                               const char *path, FILE *f)
{
  if (!ctx)
    return PP_EINVAL;
  if (!x || i < 0 || i >= x->nfile || (!path && !f))
    return ppi_fail(ctx, PP_EINVAL, "pp_export_write_file: bad argument");
  return ppi_emit(ctx, path, f, emit_text, x->text[i]);
}

/* ---- the stages' operators in model order ----------------------------------
 */

static int cmp_i32(const void *a, const void *b)
{
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* The operators of p's stages in m's (topological) order, in *o (see
** struct ppi_stage_ops); free with stage_ops_free.  On failure nothing
** is left to free. */
static pp_status stage_ops(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                           struct ppi_stage_ops *o)
{
  const int32_t *topo = pp_model_topo_order(m);
  int32_t i, s, S = p->nstage, tot = p->op_off[S], prev_last = -1;

  memset(o, 0, sizeof *o);
  o->nop = pp_model_nop(m);
  o->nstage = S;
  o->ntot = tot;
  if (!(o->pos = ppi_alloc(ctx, (size_t)(o->nop + 1) * sizeof *o->pos)) ||
      !(o->ord = ppi_alloc(ctx, (size_t)(tot + 1) * sizeof *o->ord)) ||
      !(o->first = ppi_alloc(ctx, (size_t)(S + 1) * sizeof *o->first))) {
    stage_ops_free(ctx, o);
    return PP_ENOMEM;
  }
  for (i = 0; i < o->nop; i++)
    o->pos[topo[i]] = i;
  /* sort positions, then map back to operators */
  for (i = 0; i < tot; i++)
    o->ord[i] = o->pos[p->ops[i]];
  o->contiguous = true;
  for (s = 0; s < S; s++) {
    int32_t lo = p->op_off[s], hi = p->op_off[s + 1];
    qsort(o->ord + lo, (size_t)(hi - lo), sizeof *o->ord, cmp_i32);
    o->first[s] = hi > lo ? o->ord[lo] : prev_last + 1;
    if (hi > lo) {
      if (o->ord[hi - 1] - o->ord[lo] + 1 != hi - lo ||
          o->ord[lo] != prev_last + 1)
        o->contiguous = false;
      prev_last = o->ord[hi - 1];
    }
  }
  if (prev_last != o->nop - 1)
    o->contiguous = false;
  for (i = 0; i < tot; i++)
    o->ord[i] = topo[o->ord[i]];
  return PP_OK;
}

static void stage_ops_free(pp_ctx *ctx, struct ppi_stage_ops *o)
{
  ppi_free(ctx, o->pos, (size_t)(o->nop + 1) * sizeof *o->pos);
  ppi_free(ctx, o->ord, (size_t)(o->ntot + 1) * sizeof *o->ord);
  ppi_free(ctx, o->first, (size_t)(o->nstage + 1) * sizeof *o->first);
  o->pos = o->ord = o->first = NULL;
}

/* ---- what engines cannot express ------------------------------------------
 */

pp_status ppi_export_check_uniform(pp_ctx *ctx, pp_export *x, const pp_plan *p,
                                   const char *engine)
{
  int32_t s, R0 = p->rep_off[1] - p->rep_off[0];
  for (s = 1; s < p->nstage; s++)
    if (p->rep_off[s + 1] - p->rep_off[s] != R0)
      return ppi_export_warn(
          ctx, x,
          "stage %d has %d replicas and stage 0 has %d: %s's data "
          "parallelism is the same for every stage",
          (int)s, (int)(p->rep_off[s + 1] - p->rep_off[s]), (int)R0, engine);
  return PP_OK;
}

pp_status ppi_export_check_runs(pp_ctx *ctx, pp_export *x, const pp_plan *p,
                                const struct ppi_stage_ops *o,
                                const char *engine)
{
  int32_t s;
  if (o->contiguous)
    return PP_OK;
  for (s = 0; s < p->nstage; s++) {
    int32_t lo = p->op_off[s], hi = p->op_off[s + 1];
    int32_t a = o->pos[o->ord[lo]], z = o->pos[o->ord[hi - 1]];
    if (z - a + 1 != hi - lo)
      return ppi_export_warn(ctx, x,
                             "stage %d is not one run of the model's "
                             "operators: %s stages are consecutive layers",
                             (int)s, engine);
    if (s > 0 && a <= o->pos[o->ord[lo - 1]])
      return ppi_export_warn(ctx, x,
                             "stage %d comes before stage %d in the model: "
                             "%s stages follow the model's order",
                             (int)s, (int)(s - 1), engine);
  }
  return PP_OK;
}

pp_status ppi_export_check_shared(pp_ctx *ctx, pp_export *x, const pp_plan *p,
                                  const char *engine, const char *why)
{
  int32_t s, q, t, ndev = ppi_plan_max_device(p) + 1, *owner;
  int32_t dev = -1, s0 = -1, s1 = -1;
  if (!(owner = ppi_alloc(ctx, (size_t)ndev * sizeof *owner)))
    return PP_ENOMEM;
  for (q = 0; q < ndev; q++)
    owner[q] = -1;
  for (s = 0; s < p->nstage && dev < 0; s++)
    for (q = p->rep_off[s]; q < p->rep_off[s + 1] && dev < 0; q++)
      for (t = 0; t < p->stp[s] && dev < 0; t++) {
        int32_t d = ppi_plan_rep_devs(p, q)[t];
        if (owner[d] >= 0 && owner[d] != s) {
          dev = d;
          s0 = owner[d];
          s1 = s;
        }
        owner[d] = s;
      }
  ppi_free(ctx, owner, (size_t)ndev * sizeof *owner);
  if (dev < 0)
    return PP_OK;
  return ppi_export_warn(ctx, x,
                         "device %d holds stages %d and %d: %s runs one "
                         "stage per rank%s",
                         (int)dev, (int)s0, (int)s1, engine, why);
}

pp_status ppi_export_check_tp(pp_ctx *ctx, pp_export *x, const pp_plan *p,
                              const pp_cluster *c, const char *engine)
{
  int32_t q, t, tp, nrep = p->rep_off[p->nstage];
  int32_t nnode = 0, ntype = 0, qn = -1, qt = -1;
  for (q = 0; q < nrep; q++) {
    const int32_t *g = ppi_plan_rep_devs(p, q);
    bool node = false, type = false;
    tp = p->stp[ppi_plan_rep_stage(p, q)];
    for (t = 1; t < tp; t++) {
      node = node || c->dev_node[g[t]] != c->dev_node[g[0]];
      type = type || c->dev_type[g[t]] != c->dev_type[g[0]];
    }
    if (node && nnode++ == 0)
      qn = q;
    if (type && ntype++ == 0)
      qt = q;
  }
  if (nnode) {
    const int32_t *g = ppi_plan_rep_devs(p, qn);
    pp_status rc;
    for (t = 1; c->dev_node[g[t]] == c->dev_node[g[0]]; t++)
      ;
    rc = ppi_export_warn(
        ctx, x,
        "%d tensor-parallel group%s span%s nodes (the first: devices %d and "
        "%d on nodes %d and %d): %s runs tensor parallelism over the "
        "inter-node network, every layer's all-reduces included",
        (int)nnode, nnode > 1 ? "s" : "", nnode > 1 ? "" : "s", (int)g[0],
        (int)g[t], (int)c->dev_node[g[0]], (int)c->dev_node[g[t]], engine);
    if (rc)
      return rc;
  }
  if (ntype) {
    const int32_t *g = ppi_plan_rep_devs(p, qt);
    for (t = 1; c->dev_type[g[t]] == c->dev_type[g[0]]; t++)
      ;
    return ppi_export_warn(
        ctx, x,
        "%d tensor-parallel group%s mix%s device types (the first: %s and "
        "%s): %s splits every layer evenly, so the slowest device sets the "
        "pace",
        (int)ntype, ntype > 1 ? "s" : "", ntype > 1 ? "" : "es",
        c->type_name[c->dev_type[g[0]]], c->type_name[c->dev_type[g[t]]],
        engine);
  }
  return PP_OK;
}

pp_status ppi_export_check_rank_order(pp_ctx *ctx, pp_export *x,
                                      const pp_plan *p, const int32_t *rank_of,
                                      const char *engine)
{
  int32_t s, r, t, tp = p->p.tp, R0 = p->rep_off[1] - p->rep_off[0];
  for (s = 0; s < p->nstage; s++)
    for (r = 0; r < p->rep_off[s + 1] - p->rep_off[s]; r++)
      for (t = 0; t < tp; t++) {
        int32_t d = ppi_plan_rep_devs(p, p->rep_off[s] + r)[t];
        if (d != ((rank_of ? rank_of[s] : s) * R0 + r) * tp + t)
          return ppi_export_warn(
              ctx, x,
              "the placement is not %s's rank order (stage %d replica %d "
              "rank %d is on device %d): launch each rank on its device "
              "(parplan export --to launch)",
              engine, (int)s, (int)r, (int)t, (int)d);
      }
  return PP_OK;
}

pp_status ppi_export_check_1f1b(pp_ctx *ctx, pp_export *x, const pp_plan *p,
                                const char *engine)
{
  if (p->p.schedule == PP_SCHED_GPIPE)
    return ppi_export_warn(ctx, x,
                           "%s runs 1F1B, not GPipe (same iteration time "
                           "in our model, less memory)",
                           engine);
  if (p->p.schedule == PP_SCHED_1F1B_STAR)
    return ppi_export_warn(ctx, x,
                           "%s runs 1F1B, not 1F1B*: the plan's in-flight "
                           "counts and pattern are not expressible",
                           engine);
  return PP_OK;
}

pp_precision ppi_export_precision(const pp_plan *p, const pp_model *m)
{
  pp_precision d = pp_model_dtype(m);
  if (p->p.precision != PP_PREC_MODEL)
    return p->p.precision;
  if (d == PP_PREC_FP16 && p->p.optimizer != PP_OPT_ADAM_MIXED)
    return PP_PREC_FP32;
  return d;
}

pp_status ppi_export_check_engine(pp_ctx *ctx, pp_export *x, const pp_plan *p,
                                  pp_engine e, const char *engine)
{
  pp_status rc = PP_OK;
  if (p->p.engine != PP_ENGINE_GENERIC && p->p.engine != e)
    rc = ppi_export_warn(ctx, x,
                         "the plan was priced for engine %s, not %s: its "
                         "memory and times assume the other engine",
                         pp_engine_name(p->p.engine), engine);
  if (!rc && !((ppi_engine_zero_mask(e, p->nstage) >> p->p.zero) & 1u))
    rc = ppi_export_warn(ctx, x,
                         "%s cannot run ZeRO stage %d with %d pipeline "
                         "stages (docs/FORMATS.md, \"Plan JSON\"); the files "
                         "ask for it as the plan says",
                         engine, (int)p->p.zero, (int)p->nstage);
  return rc;
}

/* The role of an operator by its kind, as Megatron's layout symbols
** (export_megatron.c) and torchtitan's module names (export_torch.c)
** need it: E embedding, t decoder layer, m MTP layer, L loss / output
** head, 0 none.  A norm is never a
** decoder layer, whatever else its kind says ("layernorm",
** "final_layernorm", ONNX's "LayerNormalization"). */
char ppi_export_symbol(const char *kind)
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
  if (strstr(k, "norm"))
    return 0;
  if (strstr(k, "layer") || strstr(k, "block") || !strcmp(k, "transformer") ||
      !strcmp(k, "decoder"))
    return 't';
  return 0;
}
