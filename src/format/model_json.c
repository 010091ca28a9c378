/* SPDX-License-Identifier: MIT */
/*
** Model JSON: the reader (through the public builder, so a file can
** express nothing the API cannot) and the normalized writer.  The format
** is documented in docs/FORMATS.md, "Model JSON".
**
** The writer streams with fprintf in a fixed field order, one operator
** per line, numbers in their shortest exact form, so that
** read(write(m)) == m and writing twice gives the same bytes.
*/
#include "format/json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

struct mread {
  pp_ctx *ctx;
  const char *src;
  pp_model_builder *b;
};

/* A reference to an operator by name or by 0-based index. */
static pp_status op_ref(struct mread *r, const char *where, const char *key,
                        const json_t *v, int32_t nop, int32_t *out)
{
  if (json_is_string(v)) {
    *out = pp_model_builder_find_op(r->b, json_string_value(v));
    if (*out < 0)
      return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                         "%s: \"%s\" names unknown operator '%s'", where, key,
                         json_string_value(v));
    return PP_OK;
  }
  if (json_is_integer(v)) {
    json_int_t i = json_integer_value(v);
    if (i < 0 || i >= nop)
      return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                         "%s: \"%s\" is operator index %lld, out of range "
                         "(%d operators)",
                         where, key, (long long)i, (int)nop);
    *out = (int32_t)i;
    return PP_OK;
  }
  if (!v)
    return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                       "%s: missing field \"%s\"", where, key);
  return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                     "%s: \"%s\" must be an operator name or index, not %s",
                     where, key, ppi_json_type(v));
}

static pp_status read_times(struct mread *r, const char *where, int32_t id,
                            const json_t *arr, int32_t mbs_ref)
{
  size_t i;
  char w[PP_MAX_NAME + 160];
  pp_status rc;
  for (i = 0; i < json_array_size(arr); i++) {
    json_t *t;
    const char *type;
    int64_t tp, mbs;
    double f, bw, u;
    snprintf(w, sizeof w, "%s: times entry %zu", where, i);
    if ((rc = ppi_jobj_at(r->ctx, r->src, w, arr, i, &t)) ||
        (rc = ppi_jstr(r->ctx, r->src, w, t, "type", false, &type)) ||
        (rc =
             ppi_jint(r->ctx, r->src, w, t, "tp", false, 1, 1, 1 << 20, &tp)) ||
        (rc = ppi_jint(r->ctx, r->src, w, t, "micro_batch", false, mbs_ref, 1,
                       PPI_MAX_MICRO_BATCH, &mbs)) ||
        (rc = ppi_jnum(r->ctx, r->src, w, t, "fwd_ms", true, 0, 0, HUGE_VAL,
                       &f)) ||
        (rc = ppi_jnum(r->ctx, r->src, w, t, "bwd_ms", true, 0, 0, HUGE_VAL,
                       &bw)) ||
        (rc = ppi_jnum(r->ctx, r->src, w, t, "update_ms", false, -1, 0,
                       HUGE_VAL, &u)))
      return rc;
    rc =
        pp_model_builder_add_time(r->b, id, type, (int32_t)tp, (int32_t)mbs, f,
                                  bw, json_object_get(t, "update_ms") ? u : -1);
    if (rc)
      return rc;
  }
  return PP_OK;
}

static pp_status read_tp_sizes(struct mread *r, const char *where, int32_t id,
                               const json_t *arr)
{
  size_t i;
  char w[PP_MAX_NAME + 160];
  pp_status rc;
  for (i = 0; i < json_array_size(arr); i++) {
    json_t *t;
    int64_t tp, pb, ob, sb;
    snprintf(w, sizeof w, "%s: tp_sizes entry %zu", where, i);
    if ((rc = ppi_jobj_at(r->ctx, r->src, w, arr, i, &t)) ||
        (rc = ppi_jint(r->ctx, r->src, w, t, "tp", true, 0, 2, 1 << 20, &tp)) ||
        (rc = ppi_jint(r->ctx, r->src, w, t, "param_bytes", true, 0, 0,
                       PPI_MAX_BYTES, &pb)) ||
        (rc = ppi_jint(r->ctx, r->src, w, t, "out_bytes", true, 0, 0,
                       PPI_MAX_BYTES, &ob)) ||
        (rc = ppi_jint(r->ctx, r->src, w, t, "saved_bytes", true, 0, 0,
                       PPI_MAX_BYTES, &sb)))
      return rc;
    if ((rc = pp_model_builder_add_tp_sizes(r->b, id, (int32_t)tp, pb, ob, sb)))
      return rc;
  }
  return PP_OK;
}

/* "roofline": [[fwd FLOPs, fwd bytes, bwd FLOPs, bwd bytes(, class)],
** ...], the parts of a chain layer (docs/FORMATS.md); class 1 marks
** convolutions, 2 those Winograd can run (3x3, stride 1), 0 (or absent)
** the rest; absent: one part. */
static pp_status read_parts(struct mread *r, const char *w, int32_t id,
                            const json_t *a)
{
  size_t i, k;
  pp_status rc;
  if (!a)
    return PP_OK;
  if (!json_is_array(a) || json_array_size(a) == 0)
    return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                       "%s: \"roofline\" must be a non-empty array of "
                       "[fwd_flops, fwd_bytes, bwd_flops, bwd_bytes]",
                       w);
  for (i = 0; i < json_array_size(a); i++) {
    const json_t *q = json_array_get(a, i);
    double v[PPI_PART] = {0};
    if (!json_is_array(q) ||
        (json_array_size(q) != 4 && json_array_size(q) != PPI_PART))
      return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                         "%s: roofline part %zu must be [fwd_flops, "
                         "fwd_bytes, bwd_flops, bwd_bytes] or those and a "
                         "class (2: 3x3 stride-1 convolution, 1: other "
                         "convolution, 0: other)",
                         w, i);
    if (json_array_size(q) == PPI_PART) {
      const json_t *x = json_array_get(q, 4);
      v[4] = json_is_number(x) ? json_number_value(x) : -1;
      if (v[4] != 0 && v[4] != PPI_CONV && v[4] != PPI_CONV_WINOGRAD)
        return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                           "%s: roofline part %zu: its class (entry 4) must "
                           "be 2 (3x3 stride-1 convolution), 1 (other "
                           "convolution) or 0 (other)",
                           w, i);
    }
    for (k = 0; k < 4; k++) {
      const json_t *x = json_array_get(q, k);
      v[k] = json_is_number(x) ? json_number_value(x) : -1;
      if (!(v[k] >= 0) || !isfinite(v[k]))
        return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                           "%s: roofline part %zu, entry %zu must be a "
                           "non-negative number",
                           w, i, k);
    }
    if ((rc = ppi_model_builder_add_part(r->b, id, v)))
      return rc;
  }
  return PP_OK;
}

static pp_status read_op(struct mread *r, const json_t *ops, size_t i,
                         int32_t mbs_ref)
{
  json_t *o, *times, *tps;
  pp_op_desc d;
  char w[PP_MAX_NAME + 64];
  int32_t id;
  pp_status rc;

  snprintf(w, sizeof w, "operator %zu", i);
  pp_op_desc_init(&d);
  if ((rc = ppi_jobj_at(r->ctx, r->src, "operator", ops, i, &o)) ||
      (rc = ppi_jstr(r->ctx, r->src, w, o, "name", true, &d.name)))
    return rc;
  snprintf(w, sizeof w, "operator '%s' (index %zu)", d.name, i);
  if ((rc = ppi_jstr(r->ctx, r->src, w, o, "kind", false, &d.kind)) ||
      (rc = ppi_jnum(r->ctx, r->src, w, o, "fwd_ms", true, 0, 0, HUGE_VAL,
                     &d.fwd_ms)) ||
      (rc = ppi_jnum(r->ctx, r->src, w, o, "bwd_ms", true, 0, 0, HUGE_VAL,
                     &d.bwd_ms)) ||
      (rc = ppi_jnum(r->ctx, r->src, w, o, "update_ms", false, 0, 0, HUGE_VAL,
                     &d.update_ms)) ||
      (rc = ppi_jnum(r->ctx, r->src, w, o, "fwd_flops", false, 0, 0, HUGE_VAL,
                     &d.fwd_flops)) ||
      (rc = ppi_jnum(r->ctx, r->src, w, o, "bwd_flops", false, 0, 0, HUGE_VAL,
                     &d.bwd_flops)) ||
      (rc = ppi_jnum(r->ctx, r->src, w, o, "fwd_bytes", false, 0, 0, HUGE_VAL,
                     &d.fwd_bytes)) ||
      (rc = ppi_jnum(r->ctx, r->src, w, o, "bwd_bytes", false, 0, 0, HUGE_VAL,
                     &d.bwd_bytes)) ||
      (rc = ppi_jint(r->ctx, r->src, w, o, "param_bytes", true, 0, 0,
                     PPI_MAX_BYTES, &d.param_bytes)) ||
      (rc = ppi_jint(r->ctx, r->src, w, o, "out_bytes", true, 0, 0,
                     PPI_MAX_BYTES, &d.out_bytes)) ||
      (rc = ppi_jint(r->ctx, r->src, w, o, "saved_bytes", true, 0, 0,
                     PPI_MAX_BYTES, &d.saved_bytes)) ||
      (rc = ppi_jarr(r->ctx, r->src, w, o, "times", false, &times)) ||
      (rc = ppi_jarr(r->ctx, r->src, w, o, "tp_sizes", false, &tps)))
    return rc;
  if ((rc = pp_model_builder_add_op(r->b, &d, &id)) ||
      (rc = read_parts(r, w, id, json_object_get(o, "roofline"))))
    return rc;
  if (times && (rc = read_times(r, w, id, times, mbs_ref)))
    return rc;
  if (tps && (rc = read_tp_sizes(r, w, id, tps)))
    return rc;
  return PP_OK;
}

static pp_status read_edges(struct mread *r, const json_t *edges, int32_t nop)
{
  size_t i;
  char w[64];
  pp_status rc;
  for (i = 0; i < json_array_size(edges); i++) {
    json_t *e;
    int32_t from, to;
    int64_t bytes;
    snprintf(w, sizeof w, "edge %zu", i);
    if ((rc = ppi_jobj_at(r->ctx, r->src, "edge", edges, i, &e)) ||
        (rc = op_ref(r, w, "from", json_object_get(e, "from"), nop, &from)) ||
        (rc = op_ref(r, w, "to", json_object_get(e, "to"), nop, &to)) ||
        (rc = ppi_jint(r->ctx, r->src, w, e, "bytes", false, -1, 0,
                       PPI_MAX_BYTES, &bytes)) ||
        (rc = pp_model_builder_add_edge(r->b, from, to, bytes)))
      return rc;
  }
  return PP_OK;
}

/* "dtype": what the byte counts are in; absent, fp16 (the meaning of
** models written before the field). */
static pp_status read_dtype(struct mread *r, const char *text, size_t len,
                            const json_t *root, pp_precision *out)
{
  const json_t *v = json_object_get(root, "dtype");
  if (!v)
    return PP_OK;
  if (json_is_string(v) &&
      pp_precision_parse(json_string_value(v), out) == PP_OK &&
      *out != PP_PREC_MODEL)
    return PP_OK;
  if (json_is_string(v))
    return ppi_fail_at(r->ctx, PP_EINPUT, r->src,
                       ppi_json_key_line(text, len, "dtype"), 0,
                       "model: \"dtype\" is \"%s\"; it must be fp32, fp16 "
                       "or bf16",
                       json_string_value(v));
  return ppi_fail_at(r->ctx, PP_EINPUT, r->src,
                     ppi_json_key_line(text, len, "dtype"), 0,
                     "model: \"dtype\" is %s; it must be fp32, fp16 or bf16",
                     ppi_json_type(v));
}

/* "memory_format": "channels_last" or "contiguous"; absent, channels_last
** (the meaning of models written before the field). */
static pp_status read_memory_format(struct mread *r, const char *text,
                                    size_t len, const json_t *root,
                                    pp_memory_format *out)
{
  const json_t *v = json_object_get(root, "memory_format");
  if (!v)
    return PP_OK;
  if (json_is_string(v) &&
      pp_memory_format_parse(json_string_value(v), out) == PP_OK)
    return PP_OK;
  return ppi_fail_at(r->ctx, PP_EINPUT, r->src,
                     ppi_json_key_line(text, len, "memory_format"), 0,
                     "model: \"memory_format\" is %s%s%s; it must be "
                     "\"channels_last\" or \"contiguous\"",
                     json_is_string(v) ? "\"" : "",
                     json_is_string(v) ? json_string_value(v)
                                       : ppi_json_type(v),
                     json_is_string(v) ? "\"" : "");
}

pp_status pp_model_read_json(pp_ctx *ctx, const char *text, size_t len,
                             const char *source, pp_model **out)
{
  struct mread r;
  json_t *root, *ops, *edges, *hyper, *loss;
  const char *name, *reftype;
  char sname[256];
  int64_t mbs;
  double eff;
  pp_precision dtype = PP_PREC_FP16;
  pp_memory_format mf = PP_MF_CHANNELS_LAST;
  size_t i;
  pp_status rc;

  if (!ctx || !text || !out)
    return PP_EINVAL;
  *out = NULL;
  memset(&r, 0, sizeof r);
  r.ctx = ctx;
  r.src = source ? source : "model";
  root = ppi_json_parse(ctx, text, len, r.src);
  if (!root)
    return ctx->err;
  if ((rc = ppi_jstr(ctx, r.src, "model", root, "name", false, &name)) ||
      (rc = ppi_jint(ctx, r.src, "model", root, "micro_batch", false, 1, 1,
                     PPI_MAX_MICRO_BATCH, &mbs)) ||
      (rc = ppi_jstr(ctx, r.src, "model", root, "reference_type", false,
                     &reftype)) ||
      (rc = ppi_jnum(ctx, r.src, "model", root, "efficiency", false, 0.5, 0, 1,
                     &eff)) ||
      (rc = ppi_jarr(ctx, r.src, "model", root, "ops", true, &ops)) ||
      (rc = ppi_jarr(ctx, r.src, "model", root, "edges", false, &edges)))
    goto done;
  if (!name) {
    ppi_path_stem(r.src, sname, sizeof sname);
    name = sname;
  }
  if ((rc = read_dtype(&r, text, len, root, &dtype)) ||
      (rc = read_memory_format(&r, text, len, root, &mf)))
    goto done;
  if ((rc = pp_model_builder_create(ctx, name, r.src, &r.b)) ||
      (rc = pp_model_builder_set_dtype(r.b, dtype)) ||
      (rc = pp_model_builder_set_memory_format(r.b, mf)) ||
      (rc = pp_model_builder_set_micro_batch(r.b, (int32_t)mbs)) ||
      (rc = pp_model_builder_set_reference_type(r.b, reftype)) ||
      (rc = pp_model_builder_set_efficiency(r.b, eff)))
    goto done;
  loss = json_object_get(root, "loss");
  if (loss) {
    double lf, lb;
    if (!json_is_object(loss)) {
      rc = ppi_fail_at(ctx, PP_EINPUT, r.src, 0, 0,
                       "model: \"loss\" must be an object with fwd_bytes "
                       "and bwd_bytes, not %s",
                       ppi_json_type(loss));
      goto done;
    }
    if ((rc = ppi_jnum(ctx, r.src, "model: loss", loss, "fwd_bytes", true, 0, 0,
                       HUGE_VAL, &lf)) ||
        (rc = ppi_jnum(ctx, r.src, "model: loss", loss, "bwd_bytes", true, 0, 0,
                       HUGE_VAL, &lb)) ||
        (rc = pp_model_builder_set_loss(r.b, lf, lb)))
      goto done;
  }
  {
    double extra;
    if ((rc = ppi_jnum(ctx, r.src, "model", root, "pipe_extra_bytes", false, 0,
                       0, HUGE_VAL, &extra)) ||
        (rc = pp_model_builder_set_pipe_extra(r.b, extra)))
      goto done;
  }
  hyper = json_object_get(root, "hyper");
  if (hyper && !json_is_object(hyper)) {
    rc = ppi_fail_at(ctx, PP_EINPUT, r.src, 0, 0,
                     "model: \"hyper\" must be "
                     "an object of numbers, not %s",
                     ppi_json_type(hyper));
    goto done;
  }
  if (hyper) {
    const char *k;
    json_t *v;
    json_object_foreach(hyper, k, v)
    {
      char label[PP_MAX_NAME + 32];
      double x;
      snprintf(label, sizeof label, "model: hyper \"%s\"", k);
      if ((rc = ppi_jval_num(ctx, r.src, label, v, -HUGE_VAL, HUGE_VAL, &x)) ||
          (rc = pp_model_builder_set_hyper(r.b, k, x)))
        goto done;
    }
  }
  if (json_array_size(ops) > PP_MAX_OPS) {
    rc = ppi_fail_at(ctx, PP_ELIMIT, r.src, 0, 0, "more than %d operators",
                     PP_MAX_OPS);
    goto done;
  }
  for (i = 0; i < json_array_size(ops); i++)
    if ((rc = read_op(&r, ops, i, (int32_t)mbs)))
      goto done;
  /* Ties refer to any operator, so they are read once all exist. */
  for (i = 0; i < json_array_size(ops); i++) {
    json_t *o = json_array_get(ops, i), *t = json_object_get(o, "tied_to");
    char w[PP_MAX_NAME + 64];
    int32_t with;
    if (!t || json_is_null(t))
      continue;
    snprintf(w, sizeof w, "operator '%s' (index %zu)",
             json_string_value(json_object_get(o, "name")), i);
    if ((rc = op_ref(&r, w, "tied_to", t, (int32_t)json_array_size(ops),
                     &with)) ||
        (rc = pp_model_builder_tie(r.b, (int32_t)i, with)))
      goto done;
  }
  if (edges &&
      (rc = read_edges(&r, edges, (int32_t)json_array_size(ops))) != PP_OK)
    goto done;
  rc = pp_model_builder_finish(r.b, out);
  r.b = NULL;
done:
  pp_model_builder_destroy(r.b);
  json_decref(root);
  return rc;
}

/* ---- writer ----------------------------------------------------------- */

static void field_num(FILE *f, const char *key, double x)
{
  fprintf(f, ", \"%s\": ", key);
  ppi_json_num(f, x);
}

static void write_op(FILE *f, const struct pp_model *m, int32_t v)
{
  int32_t t, k;
  bool first;
  fputs("    {\"name\": ", f);
  ppi_json_str(f, m->op_name[v]);
  if (m->op_kind[v]) {
    fputs(", \"kind\": ", f);
    ppi_json_str(f, m->op_kind[v]);
  }
  field_num(f, "fwd_ms", m->fwd[v]);
  field_num(f, "bwd_ms", m->bwd[v]);
  if (m->upd[v] != 0)
    field_num(f, "update_ms", m->upd[v]);
  if (m->fflops[v] != 0)
    field_num(f, "fwd_flops", m->fflops[v]);
  if (m->bflops[v] != 0)
    field_num(f, "bwd_flops", m->bflops[v]);
  if (m->fbytes[v] != 0)
    field_num(f, "fwd_bytes", m->fbytes[v]);
  if (m->bbytes[v] != 0)
    field_num(f, "bwd_bytes", m->bbytes[v]);
  fprintf(f,
          ", \"param_bytes\": %lld, \"out_bytes\": %lld, "
          "\"saved_bytes\": %lld",
          (long long)m->param[v], (long long)m->out[v], (long long)m->saved[v]);
  if (m->rf_off && m->rf_off[v + 1] > m->rf_off[v]) {
    int32_t q;
    fputs(",\n     \"roofline\": [", f);
    for (q = m->rf_off[v]; q < m->rf_off[v + 1]; q++) {
      int j;
      fputs(q > m->rf_off[v] ? ", [" : "[", f);
      for (j = 0; j < 4; j++) {
        if (j)
          fputs(", ", f);
        ppi_json_num(f, m->rf[PPI_PART * (size_t)q + (size_t)j]);
      }
      if (m->rf[PPI_PART * (size_t)q + 4] != 0) /* written only then */
        fprintf(f, ", %d", (int)m->rf[PPI_PART * (size_t)q + 4]);
      fputc(']', f);
    }
    fputc(']', f);
  }
  if (m->tied[v] >= 0) {
    fputs(", \"tied_to\": ", f);
    ppi_json_str(f, m->op_name[m->tied[v]]);
  }
  first = true;
  for (t = 0; t < m->ntable; t++) {
    size_t c = (size_t)t * (size_t)m->nop + (size_t)v;
    if (isnan(m->tab_fwd[c]))
      continue;
    fputs(first ? ",\n     \"times\": [" : ",\n       ", f);
    first = false;
    fputc('{', f);
    if (m->tab_type[t]) {
      fputs("\"type\": ", f);
      ppi_json_str(f, m->tab_type[t]);
      fputs(", ", f);
    }
    fprintf(f, "\"tp\": %d, \"micro_batch\": %d", (int)m->tab_tp[t],
            (int)m->tab_mbs[t]);
    field_num(f, "fwd_ms", m->tab_fwd[c]);
    field_num(f, "bwd_ms", m->tab_bwd[c]);
    if (!isnan(m->tab_upd[c]))
      field_num(f, "update_ms", m->tab_upd[c]);
    fputc('}', f);
  }
  if (!first)
    fputc(']', f);
  first = true;
  for (k = 0; k < m->ntps; k++) {
    size_t c = (size_t)k * (size_t)m->nop + (size_t)v;
    if (m->tps_param[c] < 0)
      continue;
    fputs(first ? ",\n     \"tp_sizes\": [" : ", ", f);
    first = false;
    fprintf(f,
            "{\"tp\": %d, \"param_bytes\": %lld, \"out_bytes\": %lld, "
            "\"saved_bytes\": %lld}",
            (int)m->tps_tp[k], (long long)m->tps_param[c],
            (long long)m->tps_out[c], (long long)m->tps_saved[c]);
  }
  if (!first)
    fputc(']', f);
  if (m->member_off) {
    int32_t i;
    fputs(",\n     \"members\": [", f);
    for (i = m->member_off[v]; i < m->member_off[v + 1]; i++) {
      if (i > m->member_off[v])
        fputs(", ", f);
      fprintf(f, "%d", (int)m->member_op[i]);
    }
    fputc(']', f);
  }
  fputc('}', f);
}

static void write_model(FILE *f, const struct pp_model *m)
{
  int32_t i;
  fputs("{\"name\": ", f);
  ppi_json_str(f, m->name);
  fprintf(f, ",\n \"micro_batch\": %d", (int)m->micro_batch);
  if (m->reftype) {
    fputs(",\n \"reference_type\": ", f);
    ppi_json_str(f, m->reftype);
  }
  fputs(",\n \"efficiency\": ", f);
  ppi_json_num(f, m->efficiency);
  fprintf(f, ",\n \"dtype\": \"%s\"", pp_precision_name(m->dtype));
  if (m->nchw) /* written only when not the default */
    fprintf(f, ",\n \"memory_format\": \"%s\"",
            pp_memory_format_name(PP_MF_CONTIGUOUS));
  if (m->loss_fbytes + m->loss_bbytes > 0) {
    fputs(",\n \"loss\": {\"fwd_bytes\": ", f);
    ppi_json_num(f, m->loss_fbytes);
    fputs(", \"bwd_bytes\": ", f);
    ppi_json_num(f, m->loss_bbytes);
    fputc('}', f);
  }
  if (m->pipe_extra > 0) {
    fputs(",\n \"pipe_extra_bytes\": ", f);
    ppi_json_num(f, m->pipe_extra);
  }
  if (m->nhyper) {
    fputs(",\n \"hyper\": {", f);
    for (i = 0; i < m->nhyper; i++) {
      if (i)
        fputs(", ", f);
      ppi_json_str(f, m->hyper_key[i]);
      fputs(": ", f);
      ppi_json_num(f, m->hyper_val[i]);
    }
    fputc('}', f);
  }
  fputs(",\n \"ops\": [\n", f);
  for (i = 0; i < m->nop; i++) {
    write_op(f, m, i);
    fputs(i + 1 < m->nop ? ",\n" : "\n", f);
  }
  fputs(" ]", f);
  if (!m->edges_implied && m->nedge > 0) {
    fputs(",\n \"edges\": [\n", f);
    for (i = 0; i < m->nedge; i++) {
      fputs("    {\"from\": ", f);
      ppi_json_str(f, m->op_name[m->esrc[i]]);
      fputs(", \"to\": ", f);
      ppi_json_str(f, m->op_name[m->edst[i]]);
      fprintf(f, ", \"bytes\": %lld}%s", (long long)m->ebytes[i],
              i + 1 < m->nedge ? ",\n" : "\n");
    }
    fputs(" ]", f);
  }
  fputs("\n}\n", f);
}

static void emit_model(FILE *f, const void *m)
{
  write_model(f, m);
}

pp_status pp_model_write(pp_ctx *ctx, const pp_model *m, const char *path,
                         FILE *f)
{
  if (!ctx || !m || (!path && !f))
    return PP_EINVAL;
  return ppi_emit(ctx, path, f, emit_model, m);
}
