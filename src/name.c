/* SPDX-License-Identifier: MIT */
/*
** The rule every name in a model or cluster obeys: non-empty, at most
** PP_MAX_NAME bytes, valid UTF-8 without control characters below 0x20
** other than none at all.  Names are written back into JSON files, which
** must be UTF-8, so a name from a text format that allows any bytes
** (PipeDream's graph.txt) is checked here once, for every builder.
*/
#include "pp_int.h"

#include <string.h>

const char *ppi_name_problem(const char *s)
{
  const unsigned char *p = (const unsigned char *)s;
  size_t n = 0;
  if (!s || !*s)
    return "missing or empty";
  while (*p) {
    unsigned c = *p;
    int len, k;
    unsigned cp;
    if (c < 0x20)
      return "contains a control character";
    if (c < 0x80) {
      p++;
      n++;
      continue;
    }
    if (c >= 0xc2 && c <= 0xdf)
      len = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
      len = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
      len = 4, cp = c & 0x07;
    else
      return "is not valid UTF-8";
    for (k = 1; k < len; k++) {
      if ((p[k] & 0xc0) != 0x80)
        return "is not valid UTF-8";
      cp = (cp << 6) | (p[k] & 0x3f);
    }
    /* Overlong forms, surrogates and code points past U+10FFFF. */
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
      return "is not valid UTF-8";
    p += len;
    n += (size_t)len;
  }
  if (n > PP_MAX_NAME)
    return "is longer than 4096 bytes";
  return NULL;
}
