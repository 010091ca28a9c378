/* SPDX-License-Identifier: MIT */
/*
** Reading JSON documents with jansson: parse with positions, and typed
** field getters whose errors name the input, the object ("operator 'a'
** (index 0)") and the field.  Only files of src/format include this
** header.
*/
#ifndef PP_IO_JSON_H
#define PP_IO_JSON_H

#include "plan/plan.h"

#include <jansson.h>

/* Parse text; on failure record PP_EPARSE at "src:line:col" and return
** NULL.  Duplicate keys are rejected; the top level must be an object. */
PP_INTERNAL json_t *ppi_json_parse(pp_ctx *ctx, const char *text, size_t len,
                                   const char *src);

PP_INTERNAL const char *ppi_json_type(const json_t *j);

/* Getters.  where prefixes the message ("operator 'a' (index 0)"); when
** the key is absent, a required field fails and an optional one leaves
** *out = def.  Numbers accept integers and reals; integers accept reals
** with an integral value.  Every number must lie in [lo, hi]. */
PP_INTERNAL pp_status ppi_jnum(pp_ctx *ctx, const char *src, const char *where,
                               const json_t *obj, const char *key,
                               bool required, double def, double lo, double hi,
                               double *out);
PP_INTERNAL pp_status ppi_jint(pp_ctx *ctx, const char *src, const char *where,
                               const json_t *obj, const char *key,
                               bool required, int64_t def, int64_t lo,
                               int64_t hi, int64_t *out);
PP_INTERNAL pp_status ppi_jstr(pp_ctx *ctx, const char *src, const char *where,
                               const json_t *obj, const char *key,
                               bool required, const char **out);
/* An array field (absent and optional: *out = NULL). */
PP_INTERNAL pp_status ppi_jarr(pp_ctx *ctx, const char *src, const char *where,
                               const json_t *obj, const char *key,
                               bool required, json_t **out);
/* Check that element i of an array is an object. */
PP_INTERNAL pp_status ppi_jobj_at(pp_ctx *ctx, const char *src,
                                  const char *what, const json_t *arr, size_t i,
                                  json_t **out);
/* A number (not a field): [lo, hi] checked; label names it. */
PP_INTERNAL pp_status ppi_jval_num(pp_ctx *ctx, const char *src,
                                   const char *label, const json_t *v,
                                   double lo, double hi, double *out);

/* The line (from 1) of the top-level key of the document text[0:len],
** or 0 when it is not there: jansson keeps no positions for values, so
** a reader that wants to name the line of a bad value finds its key.
** The document is well-formed (ppi_json_parse accepted it).  O(len). */
PP_INTERNAL long ppi_json_key_line(const char *text, size_t len,
                                   const char *key);

#endif /* PP_IO_JSON_H */
