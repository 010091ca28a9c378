/* SPDX-License-Identifier: MIT */
/*
** Calibration JSON (docs/FORMATS.md, "Calibration"): the reader, through
** pp_calibration_add (which checks every value), and the writer.
**
**   {"calibration": [{"type": "T4", "engine": "deepspeed",
**     "precision": "fp16", "compute_scale": 1.12, "compute_sd": 0.01,
**     "step_ms": 3.1, ..., "time_runs": 46}]}
**
** A parameter that was not fitted is absent (its default applies).
*/
#include "format/json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The fields of an entry after its key: value, then its deviation. */
static const struct {
  const char *name, *sd;
  size_t at, at_sd;
} fields[] = {
    {"runtime_bytes", "runtime_sd", offsetof(pp_calib_entry, runtime_bytes),
     offsetof(pp_calib_entry, runtime_sd)},
    {"slack", "slack_sd", offsetof(pp_calib_entry, slack),
     offsetof(pp_calib_entry, slack_sd)},
    {"compute_scale", "compute_sd", offsetof(pp_calib_entry, compute_scale),
     offsetof(pp_calib_entry, compute_sd)},
    {"step_ms", "step_sd", offsetof(pp_calib_entry, step_ms),
     offsetof(pp_calib_entry, step_sd)},
    {"net_scale", "net_sd", offsetof(pp_calib_entry, net_scale),
     offsetof(pp_calib_entry, net_sd)},
    {"mbs_exponent", "mbs_sd", offsetof(pp_calib_entry, mbs_exponent),
     offsetof(pp_calib_entry, mbs_sd)},
    {"tp_exponent", "tp_sd", offsetof(pp_calib_entry, tp_exponent),
     offsetof(pp_calib_entry, tp_sd)},
    {"intra_scale", "intra_sd", offsetof(pp_calib_entry, intra_scale),
     offsetof(pp_calib_entry, intra_sd)},
};

#define FIELD(e, off) (*(double *)((char *)(e) + (off)))

static pp_status read_entry(pp_ctx *ctx, const char *src, const json_t *o,
                            size_t i, pp_calibration *c)
{
  char w[64];
  const char *type, *eng, *prec;
  pp_calib_entry e;
  int64_t mr, tr, lr;
  size_t k;
  pp_status rc;
  snprintf(w, sizeof w, "calibration entry %zu", i);
  if (!json_is_object(o))
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0, "%s: not an object, %s", w,
                       ppi_json_type(o));
  pp_calib_entry_init(&e);
  if ((rc = ppi_jstr(ctx, src, w, o, "type", true, &type)) ||
      (rc = ppi_jstr(ctx, src, w, o, "engine", true, &eng)) ||
      (rc = ppi_jstr(ctx, src, w, o, "precision", true, &prec)))
    return rc;
  e.type = type;
  if (pp_engine_parse(eng, &e.engine) != PP_OK)
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "%s (%s): engine \"%s\" is not generic, deepspeed, "
                       "megatron or torch",
                       w, type, eng);
  if (pp_precision_parse(prec, &e.precision) != PP_OK ||
      e.precision == PP_PREC_MODEL)
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "%s (%s): precision \"%s\" is not fp32, fp16 or bf16", w,
                       type, prec);
  for (k = 0; k < sizeof fields / sizeof fields[0]; k++) {
    double x, sd;
    /* ranges: pp_calibration_add checks each, naming it */
    if ((rc = ppi_jnum(ctx, src, w, o, fields[k].name, false, NAN, -1e15, 1e15,
                       &x)) ||
        (rc = ppi_jnum(ctx, src, w, o, fields[k].sd, false, 0, 0, 1e15, &sd)))
      return rc;
    FIELD(&e, fields[k].at) = x;
    FIELD(&e, fields[k].at_sd) = sd;
  }
  if ((rc = ppi_jint(ctx, src, w, o, "memory_runs", false, 0, 0, 1000000000,
                     &mr)) ||
      (rc = ppi_jint(ctx, src, w, o, "time_runs", false, 0, 0, 1000000000,
                     &tr)) ||
      (rc = ppi_jint(ctx, src, w, o, "link_runs", false, 0, 0, 1000000000,
                     &lr)) ||
      (rc = ppi_jnum(ctx, src, w, o, "time_rel_sd", false, 0, 0, 1e6,
                     &e.time_rel_sd)) ||
      (rc = ppi_jnum(ctx, src, w, o, "memory_rel_sd", false, 0, 0, 1e6,
                     &e.memory_rel_sd)))
    return rc;
  e.memory_runs = (int32_t)mr;
  e.time_runs = (int32_t)tr;
  e.link_runs = (int32_t)lr;
  if ((rc = pp_calibration_add(c, &e)) == PP_EINPUT) {
    /* the file's name first: the check's message knows only the entry */
    char msg[512];
    snprintf(msg, sizeof msg, "%s", pp_ctx_errmsg(ctx));
    pp_ctx_clear_error(ctx);
    return ppi_fail_at(ctx, rc, src, 0, 0, "%s: %s", w, msg);
  }
  return rc;
}

pp_status pp_calibration_read_json(pp_ctx *ctx, const char *text, size_t len,
                                   const char *source, pp_calibration **out)
{
  const char *src = source ? source : "calibration";
  json_t *root, *arr;
  pp_calibration *c = NULL;
  size_t i;
  pp_status rc;
  if (!ctx || !text || !out)
    return PP_EINVAL;
  *out = NULL;
  if (!(root = ppi_json_parse(ctx, text, len, src)))
    return ctx->err;
  if ((rc = ppi_jarr(ctx, src, "calibration file", root, "calibration", true,
                     &arr)) ||
      (rc = pp_calibration_create(ctx, &c)))
    goto done;
  for (i = 0; i < json_array_size(arr) && !rc; i++)
    rc = read_entry(ctx, src, json_array_get(arr, i), i, c);
done:
  json_decref(root);
  if (rc)
    pp_calibration_destroy(c);
  else
    *out = c;
  return rc;
}

pp_status pp_calibration_load(pp_ctx *ctx, const char *path,
                              pp_calibration **out)
{
  char *text;
  size_t len;
  pp_status rc;
  if (!ctx || !path || !out)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_calibration_load: NULL argument")
               : PP_EINVAL;
  *out = NULL;
  if ((rc = ppi_read_file(ctx, path, &text, &len)))
    return rc;
  rc = pp_calibration_read_json(ctx, text, len, path, out);
  ppi_free(ctx, text, len + 1);
  return rc;
}

static void emit_calib(FILE *f, const void *obj)
{
  const pp_calibration *c = obj;
  int32_t i, n = pp_calibration_count(c);
  size_t k;
  fputs("{\"calibration\": [", f);
  for (i = 0; i < n; i++) {
    pp_calib_entry e;
    pp_calibration_get(c, i, &e);
    fputs(i ? ",\n  {\"type\": " : "\n  {\"type\": ", f);
    ppi_json_str(f, e.type);
    fprintf(f, ", \"engine\": \"%s\", \"precision\": \"%s\"",
            pp_engine_name(e.engine), pp_precision_name(e.precision));
    for (k = 0; k < sizeof fields / sizeof fields[0]; k++) {
      double x = FIELD(&e, fields[k].at), sd = FIELD(&e, fields[k].at_sd);
      if (isnan(x))
        continue;
      fprintf(f, ",\n   \"%s\": ", fields[k].name);
      ppi_json_num(f, x);
      fprintf(f, ", \"%s\": ", fields[k].sd);
      ppi_json_num(f, sd);
    }
    fprintf(f, ",\n   \"memory_runs\": %d, \"time_runs\": %d",
            (int)e.memory_runs, (int)e.time_runs);
    if (e.link_runs)
      fprintf(f, ", \"link_runs\": %d", (int)e.link_runs);
    fputs(", \"memory_rel_sd\": ", f);
    ppi_json_num(f, e.memory_rel_sd);
    fputs(", \"time_rel_sd\": ", f);
    ppi_json_num(f, e.time_rel_sd);
    fputc('}', f);
  }
  fputs(n ? "\n]}\n" : "]}\n", f);
}

pp_status pp_calibration_write(pp_ctx *ctx, const pp_calibration *c,
                               const char *path, FILE *f)
{
  if (!ctx || !c || (!path && !f))
    return PP_EINVAL;
  return ppi_emit(ctx, path, f, emit_calib, c);
}
