/* SPDX-License-Identifier: MIT */
/*
** The one typed key=value parser (ppi_spec_parse): the options of every
** one-line spec, "hier:4x8,intra=300,gpu=A100-80",
** "transformer:layers=4,eff=0.4", "FILE:nodes=2", "net.onnx:batch=8"
** (format/spec.c owns the grammar around them and the tables).
**
** Objective: turn "a,key=value,..." into typed fields of the caller's
** struct, as a table of struct ppi_kv says (key, kind, field offset,
** range), with every error quoting the spec.
**
** Invariant: a field is written only with a value its entry accepts, so
** a failed parse leaves no out-of-range field; the arguments are taken
** left to right and the first bad one is the error.  Messages are fixed
** per kind (see ppi_kv_kind), the ones the spec parsers printed before
** they were made one.
**
** Complexity: O(length of the arguments x entries of the table).
**
** Why a table: the five hand-written parsers it replaces differed only
** in their keys and fields, and drifted (an "unknown option" message
** listing keys another parser did not take); a table gives each spec its
** keys, kinds and ranges in one place, and the parsing once.  Values stay
** in the caller's buffer (strings point into it) so nothing is allocated.
*/
#include "base/pp_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pp_status ppi_spec_fail(const struct ppi_spec *s, const char *fmt, ...)
{
  char msg[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* A long spec is quoted by its head, so the reason always fits. */
  if (strlen(s->text) > 120)
    return ppi_fail(s->ctx, PP_EPARSE, "%s '%.100s...': %s", s->what, s->text,
                    msg);
  return ppi_fail(s->ctx, PP_EPARSE, "%s '%s': %s", s->what, s->text, msg);
}

pp_status ppi_spec_int(const struct ppi_spec *s, const char *name,
                       const char *v, int64_t lo, int64_t hi, int64_t *out)
{
  char *end;
  long long x;
  errno = 0;
  x = strtoll(v, &end, 10);
  if (end == v || *end || errno == ERANGE || x < lo || x > hi)
    return ppi_spec_fail(s, "%s needs an integer from %lld to %lld, not '%s'",
                         name, (long long)lo, (long long)hi, v);
  *out = x;
  return PP_OK;
}

/* True when key is one of list's comma-separated keys. */
static bool in_list(const char *list, const char *key)
{
  size_t n = strlen(key);
  const char *p = list;
  while ((p = strstr(p, key)) != NULL) {
    if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
      return true;
    p += n;
  }
  return false;
}

static pp_status unknown(const struct ppi_spec *s, const struct ppi_kv *kv,
                         int nkv, const char *accept, const char *key)
{
  char list[400];
  size_t off = 0;
  int i;
  if (accept)
    return ppi_spec_fail(s, "unknown option '%s' (options: %s)", key, accept);
  list[0] = '\0';
  for (i = 0; i < nkv && off < sizeof list; i++)
    off += (size_t)snprintf(list + off, sizeof list - off, "%s%s",
                            i ? ", " : "", kv[i].key);
  return ppi_spec_fail(s, "unknown option '%s' (options: %s)", key, list);
}

static pp_status set_double(const struct ppi_spec *s, const struct ppi_kv *e,
                            const char *v, char *field)
{
  bool zero = e->kind == PPI_KV_NONNEG;
  char *end;
  double x;
  errno = 0;
  x = strtod(v, &end);
  if (end == v || *end || errno == ERANGE || !isfinite(x) || x < 0 ||
      (x == 0 && !zero))
    return ppi_spec_fail(s, "option '%s' needs a %s number, not '%s'", e->key,
                         zero ? "non-negative" : "positive", v);
  if (x > e->hi)
    return ppi_spec_fail(s, "%s must be at most %g, not '%s'", e->key, e->hi,
                         v);
  memcpy(field, &x, sizeof x);
  return PP_OK;
}

static pp_status set_u64(const struct ppi_spec *s, const struct ppi_kv *e,
                         const char *v, char *field)
{
  char *end;
  unsigned long long x;
  uint64_t u;
  errno = 0;
  x = strtoull(v, &end, 10);
  if (end == v || *end || errno == ERANGE || *v == '-')
    return ppi_spec_fail(s, "%s needs a non-negative integer, not '%s'", e->key,
                         v);
  u = x;
  memcpy(field, &u, sizeof u);
  return PP_OK;
}

static pp_status set_enum(const struct ppi_spec *s, const struct ppi_kv *e,
                          const char *v, char *field)
{
  size_t n = strlen(v);
  const char *c = e->choices;
  int i;
  for (i = 0; c; i++) {
    const char *bar = strchr(c, '|');
    size_t len = bar ? (size_t)(bar - c) : strlen(c);
    if (len == n && !memcmp(c, v, n)) {
      memcpy(field, &i, sizeof i);
      return PP_OK;
    }
    c = bar ? bar + 1 : NULL;
  }
  return ppi_spec_fail(s, "%s is %s, not '%s'", e->key, e->help, v);
}

/* n integers a-b-...: each in [lo, hi], '-' between. */
static pp_status set_ints(const struct ppi_spec *s, const struct ppi_kv *e,
                          const char *v, char *field)
{
  const char *q = v;
  int k;
  for (k = 0; k < e->n; k++) {
    char *end;
    long y = strtol(q, &end, 10);
    int32_t x;
    if (end == q || y < e->lo || y > e->hi || (k < e->n - 1 && *end != '-') ||
        (k == e->n - 1 && *end))
      return ppi_spec_fail(s, "%s is %s, not '%s'", e->key, e->help, v);
    x = (int32_t)y;
    memcpy(field + (size_t)k * sizeof x, &x, sizeof x);
    q = end + 1;
  }
  return PP_OK;
}

static pp_status set(const struct ppi_spec *s, const struct ppi_kv *e,
                     const char *v, void *target)
{
  char *field = (char *)target + e->off;
  switch (e->kind) {
  case PPI_KV_INT: {
    int64_t k = 0;
    int32_t x;
    pp_status rc =
        ppi_spec_int(s, e->key, v, (int64_t)e->lo, (int64_t)e->hi, &k);
    if (rc)
      return rc;
    x = (int32_t)k;
    memcpy(field, &x, sizeof x);
    return PP_OK;
  }
  case PPI_KV_U64: return set_u64(s, e, v, field);
  case PPI_KV_POSITIVE:
  case PPI_KV_NONNEG: return set_double(s, e, v, field);
  case PPI_KV_STRING: memcpy(field, &v, sizeof v); return PP_OK;
  case PPI_KV_ENUM: return set_enum(s, e, v, field);
  case PPI_KV_BOOL: {
    bool b = v[0] == '1';
    if (strcmp(v, "0") && strcmp(v, "1"))
      return ppi_spec_fail(s, "%s is 0 or 1, not '%s'", e->key, v);
    memcpy(field, &b, sizeof b);
    return PP_OK;
  }
  case PPI_KV_INTS: break;
  }
  return set_ints(s, e, v, field);
}

pp_status ppi_spec_parse(const struct ppi_spec *s, char *args,
                         const struct ppi_kv *kv, int nkv, const char *accept,
                         void *target, ppi_spec_pos_fn pos, void *pos_ud)
{
  char *p = args;
  int npos = 0;
  pp_status rc;
  while (p) {
    char *comma = strchr(p, ','), *eq;
    if (comma)
      *comma = '\0';
    if (!*p)
      return ppi_spec_fail(s, "empty argument");
    eq = strchr(p, '=');
    if (!eq) {
      if (!pos || npos > 0)
        return ppi_spec_fail(
            s, "unexpected argument '%s' (options are key=value)", p);
      npos++;
      rc = pos(s, pos_ud, p);
    } else {
      int i;
      *eq = '\0';
      if (!*p || !eq[1])
        return ppi_spec_fail(s, "'%s=%s' needs a key and a value", p, eq + 1);
      for (i = 0; i < nkv && strcmp(kv[i].key, p) != 0; i++)
        ;
      if (i == nkv || (accept && !in_list(accept, p)))
        return unknown(s, kv, nkv, accept, p);
      rc = set(s, &kv[i], eq + 1, target);
    }
    if (rc)
      return rc;
    p = comma ? comma + 1 : NULL;
  }
  return PP_OK;
}
