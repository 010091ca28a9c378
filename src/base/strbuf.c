/* SPDX-License-Identifier: MIT */
/*
** A growable string in the context's allocator (struct ppi_sbuf): what
** the exporters and the HTML and SVG writers build their text in.  The
** first failure sticks in the buffer, so a writer appends without
** checking and looks once at the end.  Also the one string quoter
** (ppi_quote), which the buffer's ppi_sb_quote and textio.c's
** ppi_json_str both format through: one escaping loop, two styles.
**
** Complexity: amortised O(1) per byte (the capacity doubles).
*/
#include "base/pp_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void ppi_sb_init(struct ppi_sbuf *b, pp_ctx *ctx)
{
  memset(b, 0, sizeof *b);
  b->ctx = ctx;
}

void ppi_sb_free(struct ppi_sbuf *b)
{
  ppi_free(b->ctx, b->s, b->cap);
  b->s = NULL;
  b->n = b->cap = 0;
}

void ppi_sb_clear(struct ppi_sbuf *b)
{
  b->n = 0;
  if (b->s)
    b->s[0] = 0;
}

void ppi_sb_put(struct ppi_sbuf *b, const char *s, size_t len)
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

void ppi_sb_puts(struct ppi_sbuf *b, const char *s)
{
  ppi_sb_put(b, s, strlen(s));
}

void ppi_sb_printf(struct ppi_sbuf *b, const char *fmt, ...)
{
  char buf[512];
  int k;
  va_list ap;
  va_start(ap, fmt);
  k = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (k < 0)
    return;
  if ((size_t)k < sizeof buf) {
    ppi_sb_put(b, buf, (size_t)k);
    return;
  }
  { /* longer than the stack buffer: format again into the heap */
    char *t = ppi_alloc(b->ctx, (size_t)k + 1);
    if (!t) {
      b->rc = b->rc ? b->rc : PP_ENOMEM;
      return;
    }
    va_start(ap, fmt);
    vsnprintf(t, (size_t)k + 1, fmt, ap);
    va_end(ap);
    ppi_sb_put(b, t, (size_t)k);
    ppi_free(b->ctx, t, (size_t)k + 1);
  }
}

/* ---- the one string quoter ------------------------------------------- */

void ppi_quote(const char *s, enum ppi_quote_style style, ppi_put_fn put,
               void *ud)
{
  const unsigned char *p = (const unsigned char *)s, *run = p;
  bool json = style == PPI_QUOTE_JSON;
  put(ud, "\"", 1);
  while (*p) {
    char u[8];
    const char *esc = NULL;
    size_t len = 1;
    if (*p == '"')
      esc = "\\\"";
    else if (*p == '\\')
      esc = "\\\\";
    else if (json && *p == '\n')
      esc = "\\n";
    else if (json && *p == '\r')
      esc = "\\r";
    else if (json && *p == '\t')
      esc = "\\t";
    else if (*p < 0x20 || (!json && *p == 0x7f)) {
      snprintf(u, sizeof u, "\\u%04x", (unsigned)*p);
      esc = u;
    } else if (json && *p >= 0x80 && !(len = ppi_utf8_seq(p))) {
      len = 1;
      esc = "\\ufffd";
    }
    if (esc) {
      put(ud, (const char *)run, (size_t)(p - run));
      put(ud, esc, strlen(esc));
      run = p + len;
    }
    p += len;
  }
  put(ud, (const char *)run, (size_t)(p - run));
  put(ud, "\"", 1);
}

static void sb_put(void *ud, const char *s, size_t n)
{
  ppi_sb_put(ud, s, n);
}

void ppi_sb_quote(struct ppi_sbuf *b, const char *s)
{
  ppi_quote(s, PPI_QUOTE_PORTABLE, sb_put, b);
}
