/* SPDX-License-Identifier: MIT */
/*
** The rule every name in a model or cluster obeys: non-empty, at most
** PP_MAX_NAME bytes, valid UTF-8, no control characters (below 0x20).  Names
** are written back into JSON files, which
** must be UTF-8, so a name from a text format that allows any bytes
** (PipeDream's graph.txt) is checked here once, for every builder.  The
** names of whole models and clusters come from file names and specs,
** which users do not choose byte by byte: those are repaired instead
** (ppi_arena_name), each bad byte becoming '?'.
*/
#include "base/pp_int.h"

#include <string.h>

size_t ppi_utf8_seq(const unsigned char *p)
{
  unsigned c = *p, cp;
  size_t len, k;
  if (c < 0x80)
    return c ? 1 : 0;
  if (c >= 0xc2 && c <= 0xdf)
    len = 2, cp = c & 0x1f;
  else if (c >= 0xe0 && c <= 0xef)
    len = 3, cp = c & 0x0f;
  else if (c >= 0xf0 && c <= 0xf4)
    len = 4, cp = c & 0x07;
  else
    return 0;
  for (k = 1; k < len; k++) {
    if ((p[k] & 0xc0) != 0x80)
      return 0;
    cp = (cp << 6) | (p[k] & 0x3f);
  }
  /* Overlong forms, surrogates and code points past U+10FFFF. */
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
      (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
    return 0;
  return len;
}

const char *ppi_name_problem(const char *s)
{
  const unsigned char *p = (const unsigned char *)s;
  if (!s || !*s)
    return "missing or empty";
  while (*p) {
    size_t len = ppi_utf8_seq(p);
    if (*p < 0x20)
      return "contains a control character";
    if (!len)
      return "is not valid UTF-8";
    p += len;
  }
  if ((size_t)(p - (const unsigned char *)s) > PP_MAX_NAME)
    return "is longer than 4096 bytes";
  return NULL;
}

char *ppi_arena_name(struct ppi_arena *ar, pp_ctx *ctx, const char *s)
{
  char *d = ppi_arena_strdup(ar, ctx, s);
  unsigned char *p = (unsigned char *)d;
  while (p && *p) {
    size_t len = ppi_utf8_seq(p);
    if (!len || *p < 0x20) {
      *p++ = '?';
      continue;
    }
    p += len;
  }
  return d;
}

const char *ppi_enum_name(const char *const *names, size_t n, int v)
{
  return v >= 0 && (size_t)v < n ? names[v] : NULL;
}

pp_status ppi_enum_parse(const char *const *names, size_t n, const char *name,
                         int *out)
{
  size_t i;
  for (i = 0; name && i < n; i++)
    if (!strcmp(name, names[i])) {
      *out = (int)i;
      return PP_OK;
    }
  return PP_EINVAL;
}
