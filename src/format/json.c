/* SPDX-License-Identifier: MIT */
/*
** Typed access to parsed JSON with messages a user can act on.  jansson
** gives line and column for syntax errors; for a well-formed document
** the message names the object and field instead, since jansson keeps
** no positions for values.
*/
#include "format/json.h"

#include <math.h>
#include <string.h>

json_t *ppi_json_parse(pp_ctx *ctx, const char *text, size_t len,
                       const char *src)
{
  json_error_t err;
  json_t *j;
  /* a UTF-8 byte order mark, as some Windows editors save JSON: RFC 8259
  ** 8.1 lets a parser ignore it, and jansson does not */
  if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) {
    text += 3;
    len -= 3;
  }
  /* JSON_ALLOW_NUL is left off: a NUL inside a name is an error. */
  j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
  if (!j) {
    ppi_fail_at(ctx, PP_EPARSE, src, err.line > 0 ? err.line : 1,
                err.column > 0 ? err.column : 0, "malformed JSON: %s",
                err.text);
    return NULL;
  }
  if (!json_is_object(j)) {
    ppi_fail_at(ctx, PP_EPARSE, src, 1, 1,
                "the document must be a JSON object, not %s", ppi_json_type(j));
    json_decref(j);
    return NULL;
  }
  return j;
}

const char *ppi_json_type(const json_t *j)
{
  if (!j) /* an index past an array's end: json_typeof would read NULL */
    return "missing";
  switch (json_typeof(j)) {
  case JSON_OBJECT: return "an object";
  case JSON_ARRAY: return "an array";
  case JSON_STRING: return "a string";
  case JSON_INTEGER: return "an integer";
  case JSON_REAL: return "a number";
  case JSON_TRUE:
  case JSON_FALSE: return "a boolean";
  case JSON_NULL: return "null";
  }
  return "a value";
}

static pp_status missing(pp_ctx *ctx, const char *src, const char *where,
                         const char *key)
{
  return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0, "%s: missing field \"%s\"",
                     where, key);
}

pp_status ppi_jval_num(pp_ctx *ctx, const char *src, const char *label,
                       const json_t *v, double lo, double hi, double *out)
{
  double x;
  if (!json_is_number(v))
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "%s must be a number, not "
                       "%s",
                       label, ppi_json_type(v));
  x = json_number_value(v);
  if (!isfinite(x))
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0, "%s is not finite", label);
  if (x < lo && lo == 0)
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0, "%s is negative (%g)", label,
                       x);
  if (x < lo)
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "%s must be at least %g, "
                       "not %g",
                       label, lo, x);
  if (x > hi)
    return ppi_fail_at(ctx, PP_ELIMIT, src, 0, 0,
                       "%s must be at most %g, "
                       "not %g",
                       label, hi, x);
  *out = x;
  return PP_OK;
}

pp_status ppi_jnum(pp_ctx *ctx, const char *src, const char *where,
                   const json_t *obj, const char *key, bool required,
                   double def, double lo, double hi, double *out)
{
  const json_t *v = json_object_get(obj, key);
  char label[PP_MAX_NAME + 128];
  if (!v || json_is_null(v)) {
    if (required)
      return missing(ctx, src, where, key);
    *out = def;
    return PP_OK;
  }
  snprintf(label, sizeof label, "%s: \"%s\"", where, key);
  return ppi_jval_num(ctx, src, label, v, lo, hi, out);
}

pp_status ppi_jint(pp_ctx *ctx, const char *src, const char *where,
                   const json_t *obj, const char *key, bool required,
                   int64_t def, int64_t lo, int64_t hi, int64_t *out)
{
  const json_t *v = json_object_get(obj, key);
  double x;
  if (!v || json_is_null(v)) {
    if (required)
      return missing(ctx, src, where, key);
    *out = def;
    return PP_OK;
  }
  if (json_is_integer(v)) {
    json_int_t i = json_integer_value(v);
    if (i < lo && lo == 0)
      return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                         "%s: \"%s\" is negative "
                         "(%lld)",
                         where, key, (long long)i);
    if (i < lo)
      return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                         "%s: \"%s\" must be at "
                         "least %lld, not %lld",
                         where, key, (long long)lo, (long long)i);
    if (i > hi)
      return ppi_fail_at(ctx, PP_ELIMIT, src, 0, 0,
                         "%s: \"%s\" must be at "
                         "most %lld, not %lld",
                         where, key, (long long)hi, (long long)i);
    *out = (int64_t)i;
    return PP_OK;
  }
  if (!json_is_real(v))
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "%s: \"%s\" must be an "
                       "integer, not %s",
                       where, key, ppi_json_type(v));
  x = json_real_value(v);
  if (x != floor(x))
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "%s: \"%s\" must be an "
                       "integer, not %g",
                       where, key, x);
  if (x < (double)lo)
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "%s: \"%s\" must be at "
                       "least %lld, not %g",
                       where, key, (long long)lo, x);
  if (x > (double)hi || x >= 9.2e18)
    return ppi_fail_at(ctx, PP_ELIMIT, src, 0, 0,
                       "%s: \"%s\" must be at "
                       "most %lld, not %g",
                       where, key, (long long)hi, x);
  *out = (int64_t)x;
  return PP_OK;
}

pp_status ppi_jstr(pp_ctx *ctx, const char *src, const char *where,
                   const json_t *obj, const char *key, bool required,
                   const char **out)
{
  const json_t *v = json_object_get(obj, key);
  *out = NULL;
  if (!v || json_is_null(v)) {
    if (required)
      return missing(ctx, src, where, key);
    return PP_OK;
  }
  if (!json_is_string(v))
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "%s: \"%s\" must be a "
                       "string, not %s",
                       where, key, ppi_json_type(v));
  if (json_string_length(v) > PP_MAX_NAME)
    return ppi_fail_at(ctx, PP_ELIMIT, src, 0, 0,
                       "%s: \"%s\" is longer "
                       "than %d bytes",
                       where, key, PP_MAX_NAME);
  *out = json_string_value(v);
  return PP_OK;
}

pp_status ppi_jarr(pp_ctx *ctx, const char *src, const char *where,
                   const json_t *obj, const char *key, bool required,
                   json_t **out)
{
  json_t *v = json_object_get(obj, key);
  *out = NULL;
  if (!v || json_is_null(v)) {
    if (required)
      return missing(ctx, src, where, key);
    return PP_OK;
  }
  if (!json_is_array(v))
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "%s: \"%s\" must be an "
                       "array, not %s",
                       where, key, ppi_json_type(v));
  *out = v;
  return PP_OK;
}

pp_status ppi_jobj_at(pp_ctx *ctx, const char *src, const char *what,
                      const json_t *arr, size_t i, json_t **out)
{
  json_t *v = json_array_get(arr, i);
  *out = NULL;
  if (!json_is_object(v))
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "%s %zu must be an object, "
                       "not %s",
                       what, i, ppi_json_type(v));
  *out = v;
  return PP_OK;
}

long ppi_json_key_line(const char *text, size_t len, const char *key)
{
  size_t i, klen = strlen(key);
  long line = 1;
  int depth = 0;
  for (i = 0; i < len; i++) {
    char ch = text[i];
    if (ch == '\n')
      line++;
    else if (ch == '{' || ch == '[')
      depth++;
    else if (ch == '}' || ch == ']')
      depth--;
    else if (ch == '"') {
      size_t start = ++i, j;
      while (i < len && text[i] != '"') {
        if (text[i] == '\\')
          i++;
        i++;
      }
      if (i >= len)
        return 0;
      if (depth != 1 || i - start != klen || memcmp(text + start, key, klen))
        continue;
      /* a key when a colon follows */
      for (j = i + 1; j < len && (text[j] == ' ' || text[j] == '\t' ||
                                  text[j] == '\r' || text[j] == '\n');
           j++)
        ;
      if (j < len && text[j] == ':')
        return line;
    }
  }
  return 0;
}
