/* SPDX-License-Identifier: MIT */
/*
** Plan JSON: the reader (through the public builder) and the normalized
** writer.  The format is docs/DESIGN.md's contract ("Plan JSON"),
** documented in docs/FORMATS.md, "Plan JSON".  Unknown fields are
** ignored, so a plan written by `plan` (with its "predicted" block) reads
** back.
*/
#include "format/json.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

struct pread {
  pp_ctx *ctx;
  const char *src;
  const pp_model *m;
  const pp_cluster *c;
};

static pp_status ref(struct pread *r, const char *where, const json_t *v,
                     bool is_op, int32_t *out)
{
  const char *what = is_op ? "operator" : "device";
  if (json_is_integer(v)) {
    json_int_t i = json_integer_value(v);
    int32_t lim = is_op ? (r->m ? r->m->nop : PP_MAX_OPS)
                        : (r->c ? r->c->ndev : PP_MAX_DEVICES);
    if (i < 0 || i >= lim)
      return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                         "%s: %s index %lld is out of range (%s%d %ss)", where,
                         what, (long long)i,
                         (is_op ? r->m : (const void *)r->c) ? "" : "at most ",
                         (int)lim, what);
    *out = (int32_t)i;
    return PP_OK;
  }
  if (json_is_string(v)) {
    const char *n = json_string_value(v);
    int32_t i = -1;
    if (is_op && r->m)
      i = pp_model_find_op(r->m, n);
    else if (!is_op && r->c) {
      i = pp_cluster_find_device(r->c, n);
      if (i >= r->c->ndev)
        i = -1; /* a switch */
    }
    if (i < 0 && (is_op ? r->m : (const void *)r->c))
      return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                         "%s: %s '%s' does not exist in %s '%s'", where, what,
                         n, is_op ? "model" : "cluster",
                         is_op ? r->m->name : r->c->name);
    if (i < 0)
      return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                         "%s: %s '%s' is a name, but no %s was given to "
                         "resolve it; use an index",
                         where, what, n, is_op ? "model" : "cluster");
    *out = i;
    return PP_OK;
  }
  return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                     "%s: %s %s must be an index or a name, not %s", where,
                     is_op ? "an" : "a", what, ppi_json_type(v));
}

static pp_status read_stage(struct pread *r, pp_plan_builder *b, size_t si,
                            const json_t *st, int32_t tp)
{
  char w[128];
  json_t *ops, *reps;
  int32_t *buf = NULL, id;
  size_t nbuf, i, k;
  int64_t stp;
  pp_status rc;

  snprintf(w, sizeof w, "stage %zu", si);
  /* a stage's own "tp", else the plan's */
  if ((rc = ppi_jarr(r->ctx, r->src, w, st, "ops", true, &ops)) ||
      (rc = ppi_jarr(r->ctx, r->src, w, st, "replicas", true, &reps)) ||
      (rc = ppi_jint(r->ctx, r->src, w, st, "tp", false, tp, 1, PP_MAX_DEVICES,
                     &stp)))
    return rc;
  tp = (int32_t)stp;
  if (json_array_size(ops) == 0)
    return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                       "%s: \"ops\" is empty; a stage needs operators", w);
  if (json_array_size(reps) == 0)
    return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                       "%s: \"replicas\" is empty; a stage needs a device", w);
  nbuf = json_array_size(ops) > (size_t)tp ? json_array_size(ops) : (size_t)tp;
  if (nbuf > PP_MAX_OPS)
    return ppi_fail_at(r->ctx, PP_ELIMIT, r->src, 0, 0,
                       "%s: more than %d operators", w, PP_MAX_OPS);
  if (!(buf = ppi_alloc(r->ctx, nbuf * sizeof *buf)))
    return PP_ENOMEM;
  for (i = 0; i < json_array_size(ops) && !rc; i++)
    rc = ref(r, w, json_array_get(ops, i), true, &buf[i]);
  if (!rc)
    rc = pp_plan_builder_add_stage(b, buf, (int32_t)json_array_size(ops), &id);
  if (!rc)
    rc = pp_plan_builder_set_stage_tp(b, id, tp);
  if (!rc && json_object_get(st, "pattern_ms")) {
    const json_t *pa = json_object_get(st, "pattern_ms");
    double sig[4] = {NAN, NAN, NAN, NAN};
    size_t n = json_is_array(pa) ? json_array_size(pa) : 0, j;
    bool good = n == 2 || n == 4;
    for (j = 0; good && j < n; j++) {
      const json_t *x = json_array_get(pa, j);
      if (json_is_number(x))
        sig[j] = json_number_value(x);
      else if (!(j >= 2 && json_is_null(x)))
        good = false;
    }
    if (!good)
      rc = ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                       "%s: \"pattern_ms\" must be [forward, backward] or "
                       "[forward, backward, activation, gradient] in ms (the "
                       "last two may be null)",
                       w);
    else
      rc = pp_plan_builder_set_pattern(b, id, sig);
  }
  if (!rc && json_object_get(st, "in_flight")) {
    int64_t n;
    if (!(rc = ppi_jint(r->ctx, r->src, w, st, "in_flight", false, 0, 1,
                        PPI_MAX_MICRO_BATCHES, &n)))
      rc = pp_plan_builder_set_in_flight(b, id, (int32_t)n);
  }
  for (i = 0; i < json_array_size(reps) && !rc; i++) {
    const json_t *rep = json_array_get(reps, i);
    char wr[160];
    snprintf(wr, sizeof wr, "%s, replica %zu", w, i);
    if (!json_is_array(rep) && tp == 1) {
      rc = ref(r, wr, rep, false, &buf[0]);
    } else if (!json_is_array(rep)) {
      rc = ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                       "%s: must be an array of %d devices (tp = %d), not %s",
                       wr, (int)tp, (int)tp, ppi_json_type(rep));
    } else if (json_array_size(rep) != (size_t)tp) {
      rc = ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                       "%s: lists %zu devices but tp is %d", wr,
                       json_array_size(rep), (int)tp);
    } else {
      for (k = 0; k < (size_t)tp && !rc; k++)
        rc = ref(r, wr, json_array_get(rep, k), false, &buf[k]);
    }
    if (!rc)
      rc = pp_plan_builder_add_replica(b, id, buf);
  }
  ppi_free(r->ctx, buf, nbuf * sizeof *buf);
  return rc;
}

/* "precision", "engine" and "zero": absent, the defaults (the model's
** dtype, generic, 0), so plans written before them keep their meaning;
** a bad value names its line and the values allowed. */
static pp_status read_settings(struct pread *r, const char *text, size_t len,
                               const json_t *root, pp_plan_params *p)
{
  static const char *const keys[] = {"precision", "engine", "zero"};
  static const char *const allowed[] = {"fp32, fp16 or bf16",
                                        "generic, deepspeed, megatron or torch",
                                        "0, 1, 2 or 3 (the ZeRO stage)"};
  int k;
  for (k = 0; k < 3; k++) {
    const json_t *v = json_object_get(root, keys[k]);
    bool good;
    if (!v)
      continue;
    if (k == 2) {
      good = json_is_integer(v) && json_integer_value(v) >= 0 &&
             json_integer_value(v) <= 3;
      if (good)
        p->zero = (int32_t)json_integer_value(v);
    } else if (k == 1) {
      good = json_is_string(v) &&
             pp_engine_parse(json_string_value(v), &p->engine) == PP_OK;
    } else {
      good = json_is_string(v) &&
             pp_precision_parse(json_string_value(v), &p->precision) == PP_OK &&
             p->precision != PP_PREC_MODEL;
    }
    if (good)
      continue;
    if (json_is_string(v))
      return ppi_fail_at(r->ctx, PP_EINPUT, r->src,
                         ppi_json_key_line(text, len, keys[k]), 0,
                         "plan: \"%s\" is \"%s\"; it must be %s", keys[k],
                         json_string_value(v), allowed[k]);
    if (json_is_integer(v))
      return ppi_fail_at(r->ctx, PP_EINPUT, r->src,
                         ppi_json_key_line(text, len, keys[k]), 0,
                         "plan: \"%s\" is %lld; it must be %s", keys[k],
                         (long long)json_integer_value(v), allowed[k]);
    return ppi_fail_at(r->ctx, PP_EINPUT, r->src,
                       ppi_json_key_line(text, len, keys[k]), 0,
                       "plan: \"%s\" is %s; it must be %s", keys[k],
                       ppi_json_type(v), allowed[k]);
  }
  return PP_OK;
}

pp_status pp_plan_read_json(pp_ctx *ctx, const char *text, size_t len,
                            const char *source, const pp_model *m,
                            const pp_cluster *c, pp_plan **out)
{
  struct pread r;
  json_t *root, *stages, *v;
  pp_plan_params p;
  pp_plan_builder *b = NULL;
  const char *sched = NULL, *opt = NULL;
  int64_t gbs, mbs, tp, nmb;
  size_t i;
  pp_status rc;

  if (!ctx || !text || !out)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_plan_read_json: NULL argument")
               : PP_EINVAL;
  *out = NULL;
  r.ctx = ctx;
  r.src = source ? source : "plan";
  r.m = m;
  r.c = c;
  if (!(root = ppi_json_parse(ctx, text, len, r.src)))
    return PP_EPARSE; /* not ctx->err: an older error may be kept there */
  pp_plan_params_init(&p);
  if ((rc = ppi_jint(ctx, r.src, "plan", root, "global_batch", true, 0, 1,
                     PPI_MAX_GLOBAL_BATCH, &gbs)) ||
      (rc = ppi_jint(ctx, r.src, "plan", root, "micro_batch", false, 1, 1,
                     PPI_MAX_MICRO_BATCH, &mbs)) ||
      (rc = ppi_jint(ctx, r.src, "plan", root, "micro_batches", false, 0, 1,
                     PPI_MAX_MICRO_BATCHES, &nmb)) ||
      (rc = ppi_jint(ctx, r.src, "plan", root, "tp", false, 1, 1,
                     PP_MAX_DEVICES, &tp)) ||
      (rc = ppi_jstr(ctx, r.src, "plan", root, "schedule", false, &sched)) ||
      (rc = ppi_jstr(ctx, r.src, "plan", root, "optimizer", false, &opt)) ||
      (rc = ppi_jnum(ctx, r.src, "plan", root, "period_ms", false, 0, 0, 1e15,
                     &p.period_ms)) ||
      (rc = ppi_jarr(ctx, r.src, "plan", root, "stages", true, &stages)))
    goto done;
  p.global_batch = gbs;
  p.micro_batch = (int32_t)mbs;
  p.micro_batches = (int32_t)nmb;
  p.tp = (int32_t)tp;
  if (sched && pp_schedule_parse(sched, &p.schedule)) {
    rc = ppi_fail_at(ctx, PP_EINPUT, r.src, 0, 0,
                     "plan: unknown schedule \"%s\" (gpipe, 1f1b, 1f1b-star)",
                     sched);
    goto done;
  }
  if (opt && pp_optimizer_parse(opt, &p.optimizer)) {
    rc = ppi_fail_at(ctx, PP_EINPUT, r.src, 0, 0,
                     "plan: unknown optimizer \"%s\" (sgd, adam, adam-mixed, "
                     "2bw)",
                     opt);
    goto done;
  }
  v = json_object_get(root, "recompute");
  if (v && !json_is_null(v) && !json_is_boolean(v)) {
    rc = ppi_fail_at(ctx, PP_EINPUT, r.src, 0, 0,
                     "plan: \"recompute\" must be true or false, not %s",
                     ppi_json_type(v));
    goto done;
  }
  p.recompute = v && json_is_true(v);
  if ((rc = read_settings(&r, text, len, root, &p)))
    goto done;
  if (json_array_size(stages) == 0) {
    rc = ppi_fail_at(ctx, PP_EINPUT, r.src, 0, 0,
                     "plan: \"stages\" is empty; a plan needs a stage");
    goto done;
  }
  /* the builder checks this too, but cannot say where */
  if ((rc = ppi_engine_zero_check(
           ctx, r.src, ppi_json_key_line(text, len, "zero"), p.engine, p.zero,
           (int32_t)json_array_size(stages))))
    goto done;
  if ((rc = pp_plan_builder_create(ctx, &p, r.src, &b)))
    goto done;
  for (i = 0; i < json_array_size(stages) && !rc; i++) {
    json_t *st;
    char w[64];
    snprintf(w, sizeof w, "stage");
    if (!(rc = ppi_jobj_at(ctx, r.src, w, stages, i, &st)))
      rc = read_stage(&r, b, i, st, p.tp);
  }
  if (!rc) {
    rc = pp_plan_builder_finish(b, out);
    b = NULL;
  }
done:
  pp_plan_builder_destroy(b);
  json_decref(root);
  return rc;
}

pp_status pp_plan_load(pp_ctx *ctx, const char *path, const pp_model *m,
                       const pp_cluster *c, pp_plan **out)
{
  char *text;
  size_t len;
  pp_status rc;

  if (!ctx || !path || !out)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_plan_load: NULL argument")
               : PP_EINVAL;
  *out = NULL;
  if ((rc = ppi_read_file(ctx, path, &text, &len)))
    return rc;
  rc = pp_plan_read_json(ctx, text, len, path, m, c, out);
  ppi_free(ctx, text, len + 1);
  return rc;
}

static void emit_plan(FILE *f, const void *obj)
{
  const struct pp_plan *p = obj;
  int32_t s, q, k, i, tp = p->p.tp; /* its stage 0's (plan.c) */
  bool same = true;

  for (s = 1; s < p->nstage; s++)
    if (p->rep_off[s + 1] - p->rep_off[s] != p->rep_off[1] - p->rep_off[0])
      same = false;
  fprintf(f, "{\"global_batch\": %lld, \"micro_batch\": %d, ",
          (long long)p->p.global_batch, (int)p->p.micro_batch);
  /* micro_batches repeats what the batch implies; it is left out when
  ** stages differ, or when it is beyond what a reader takes
  *(PPI_MAX_MICRO_BATCHES). */
  if (same && pp_plan_stage_micro_batches(p, 0) <= PPI_MAX_MICRO_BATCHES)
    fprintf(f, "\"micro_batches\": %lld, ",
            (long long)pp_plan_stage_micro_batches(p, 0));
  fprintf(f,
          "\"tp\": %d,\n \"schedule\": \"%s\", \"recompute\": %s, "
          "\"optimizer\": \"%s\"",
          (int)tp, pp_schedule_name(p->p.schedule),
          p->p.recompute ? "true" : "false", pp_optimizer_name(p->p.optimizer));
  /* the run's settings only when not their defaults: plans that do not
  ** use them are written as before */
  if (p->p.precision != PP_PREC_MODEL)
    fprintf(f, ", \"precision\": \"%s\"", pp_precision_name(p->p.precision));
  if (p->p.engine != PP_ENGINE_GENERIC)
    fprintf(f, ", \"engine\": \"%s\"", pp_engine_name(p->p.engine));
  if (p->p.zero != 0)
    fprintf(f, ", \"zero\": %d", (int)p->p.zero);
  if (p->p.period_ms > 0) {
    fputs(", \"period_ms\": ", f);
    ppi_json_num(f, p->p.period_ms);
  }
  fputs(",\n \"stages\": [", f);
  for (s = 0; s < p->nstage; s++) {
    fputs(s ? ",\n  {\"ops\": [" : "\n  {\"ops\": [", f);
    for (i = p->op_off[s]; i < p->op_off[s + 1]; i++)
      fprintf(f, i > p->op_off[s] ? ", %d" : "%d", (int)p->ops[i]);
    fputc(']', f);
    /* a stage's tp only where it is not the plan's: plans of one degree
    ** are written as before */
    if (p->stp[s] != tp)
      fprintf(f, ", \"tp\": %d", (int)p->stp[s]);
    fputs(", \"replicas\": [", f);
    for (q = p->rep_off[s]; q < p->rep_off[s + 1]; q++) {
      fputs(q > p->rep_off[s] ? ", [" : "[", f);
      for (k = 0; k < p->stp[s]; k++)
        fprintf(f, k ? ", %d" : "%d", (int)p->dev[p->dev_off[q] + k]);
      fputc(']', f);
    }
    fputc(']', f);
    if (p->inflight[s] > 0)
      fprintf(f, ", \"in_flight\": %d", (int)p->inflight[s]);
    if (!isnan(p->pat[4 * (size_t)s])) {
      const double *x = p->pat + 4 * (size_t)s;
      int j, n = isnan(x[2]) && isnan(x[3]) ? 2 : 4;
      fputs(", \"pattern_ms\": [", f);
      for (j = 0; j < n; j++) {
        if (j)
          fputs(", ", f);
        ppi_json_num(f, x[j]); /* null when NaN */
      }
      fputc(']', f);
    }
    fputc('}', f);
  }
  fputs("]}\n", f);
}

pp_status pp_plan_write(pp_ctx *ctx, const pp_plan *p, const char *path,
                        FILE *f)
{
  if (!ctx || !p || (!path && !f))
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_plan_write: NULL argument")
               : PP_EINVAL;
  return ppi_emit(ctx, path, f, emit_plan, p);
}
