/* SPDX-License-Identifier: MIT */
/*
** The context: the allocator hook every allocation goes through, the
** first error message (curl's "first message wins" error buffer), and
** the seed.  The only file besides arena.c that may call the C
** library's allocator, and only as the default hook.
*/
#include "base/pp_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pp_version(void)
{
  return "0.1.0";
}

const char *pp_status_str(pp_status rc)
{
  switch (rc) {
  case PP_OK: return "success";
  case PP_ENOMEM: return "out of memory";
  case PP_EINVAL: return "invalid argument";
  case PP_EIO: return "input/output error";
  case PP_EPARSE: return "malformed input";
  case PP_EINPUT: return "invalid input";
  case PP_ELIMIT: return "input exceeds a limit";
  case PP_EINTERNAL: return "internal error";
  case PP_ECANCELED: return "canceled";
  }
  return "unknown status";
}

static void *default_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
  (void)ud;
  (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, nsize);
}

void pp_ctx_params_init(pp_ctx_params *p)
{
  if (!p)
    return;
  memset(p, 0, sizeof *p);
  p->seed = 1;
}

pp_status pp_ctx_create(const pp_ctx_params *p, pp_ctx **out)
{
  pp_ctx_params def;
  pp_ctx *ctx;
  pp_alloc_fn fn;

  if (!out)
    return PP_EINVAL;
  *out = NULL;
  if (!p) {
    pp_ctx_params_init(&def);
    p = &def;
  }
  fn = p->alloc ? p->alloc : default_alloc;
  ctx = fn(p->alloc_ud, NULL, 0, sizeof *ctx);
  if (!ctx)
    return PP_ENOMEM;
  memset(ctx, 0, sizeof *ctx);
  ctx->alloc = fn;
  ctx->alloc_ud = p->alloc_ud;
  ctx->seed = p->seed;
  *out = ctx;
  return PP_OK;
}

void pp_ctx_destroy(pp_ctx *ctx)
{
  if (ctx)
    ctx->alloc(ctx->alloc_ud, ctx, sizeof *ctx, 0);
}

const char *pp_ctx_errmsg(const pp_ctx *ctx)
{
  return ctx ? ctx->errmsg : "";
}

pp_status pp_ctx_errcode(const pp_ctx *ctx)
{
  return ctx ? ctx->err : PP_EINVAL;
}

void pp_ctx_errloc(const pp_ctx *ctx, const char **file, long *line, long *col)
{
  if (file)
    *file = ctx && ctx->errfile[0] ? ctx->errfile : NULL;
  if (line)
    *line = ctx ? ctx->errline : 0;
  if (col)
    *col = ctx ? ctx->errcol : 0;
}

void pp_ctx_clear_error(pp_ctx *ctx)
{
  if (!ctx)
    return;
  ctx->err = PP_OK;
  ctx->errmsg[0] = '\0';
  ctx->errfile[0] = '\0';
  ctx->errline = ctx->errcol = 0;
}

void ppi_ctx_copy_error(pp_ctx *dst, const pp_ctx *src)
{
  dst->err = src->err;
  memcpy(dst->errmsg, src->errmsg, sizeof dst->errmsg);
  memcpy(dst->errfile, src->errfile, sizeof dst->errfile);
  dst->errline = src->errline;
  dst->errcol = src->errcol;
}

uint64_t pp_ctx_seed(const pp_ctx *ctx)
{
  return ctx ? ctx->seed : 0;
}

/* ---- allocation ------------------------------------------------------- */

struct ppi_alloc ppi_ctx_alloc(const pp_ctx *ctx)
{
  struct ppi_alloc a;
  a.fn = ctx->alloc;
  a.ud = ctx->alloc_ud;
  return a;
}

void *ppi_raw_alloc(struct ppi_alloc a, size_t n)
{
  return n ? a.fn(a.ud, NULL, 0, n) : NULL;
}

void *ppi_raw_realloc(struct ppi_alloc a, void *p, size_t old, size_t n)
{
  if (!p)
    return ppi_raw_alloc(a, n);
  return a.fn(a.ud, p, old, n);
}

void ppi_raw_free(struct ppi_alloc a, void *p, size_t n)
{
  if (p)
    a.fn(a.ud, p, n, 0);
}

/* Libraries that free without a size (protobuf-c, expat) get blocks
** whose size is kept in a 16-byte header, so the hook still sees exact
** sizes. */
#define HDR 16

void *ppi_hdr_alloc(struct ppi_alloc a, size_t n)
{
  size_t *p;
  if (n > SIZE_MAX - HDR)
    return NULL;
  p = ppi_raw_alloc(a, n + HDR);
  if (!p)
    return NULL;
  p[0] = n + HDR;
  return (char *)p + HDR;
}

void *ppi_hdr_realloc(struct ppi_alloc a, void *ptr, size_t n)
{
  size_t *p;
  if (!ptr)
    return ppi_hdr_alloc(a, n);
  if (n > SIZE_MAX - HDR)
    return NULL;
  p = (size_t *)(void *)((char *)ptr - HDR);
  p = ppi_raw_realloc(a, p, p[0], n + HDR);
  if (!p)
    return NULL;
  p[0] = n + HDR;
  return (char *)p + HDR;
}

void ppi_hdr_free(struct ppi_alloc a, void *ptr)
{
  size_t *p;
  if (!ptr)
    return;
  p = (size_t *)(void *)((char *)ptr - HDR);
  ppi_raw_free(a, p, p[0]);
}

bool ppi_mul_ok(size_t n, size_t size, size_t *out)
{
  if (size && n > SIZE_MAX / size)
    return false;
  *out = n * size;
  return true;
}

void *ppi_alloc(pp_ctx *ctx, size_t n)
{
  void *p = ppi_raw_alloc(ppi_ctx_alloc(ctx), n ? n : 1);
  if (!p)
    ppi_nomem(ctx);
  return p;
}

void *ppi_calloc(pp_ctx *ctx, size_t n, size_t size)
{
  size_t total;
  void *p;
  if (!ppi_mul_ok(n, size, &total)) {
    ppi_fail(ctx, PP_ELIMIT, "allocation of %zu x %zu bytes overflows", n,
             size);
    return NULL;
  }
  p = ppi_alloc(ctx, total);
  if (p)
    memset(p, 0, total ? total : 1);
  return p;
}

void ppi_free(pp_ctx *ctx, void *p, size_t n)
{
  ppi_raw_free(ppi_ctx_alloc(ctx), p, n ? n : 1);
}

/* ---- errors ----------------------------------------------------------- */

pp_status ppi_vfail_at(pp_ctx *ctx, pp_status rc, const char *file, long line,
                       long col, const char *fmt, va_list ap)
{
  size_t off = 0;
  int k;

  if (!ctx || ctx->err != PP_OK)
    return rc;
  ctx->err = rc;
  ctx->errline = line;
  ctx->errcol = col;
  ctx->errfile[0] = '\0';
  if (file) {
    snprintf(ctx->errfile, sizeof ctx->errfile, "%s", file);
    if (line > 0 && col > 0)
      k = snprintf(ctx->errmsg, sizeof ctx->errmsg, "%s:%ld:%ld: ", file, line,
                   col);
    else if (line > 0)
      k = snprintf(ctx->errmsg, sizeof ctx->errmsg, "%s:%ld: ", file, line);
    else
      k = snprintf(ctx->errmsg, sizeof ctx->errmsg, "%s: ", file);
    if (k > 0)
      off = (size_t)k < sizeof ctx->errmsg ? (size_t)k : sizeof ctx->errmsg - 1;
  }
  vsnprintf(ctx->errmsg + off, sizeof ctx->errmsg - off, fmt, ap);
  return rc;
}

pp_status ppi_fail_at(pp_ctx *ctx, pp_status rc, const char *file, long line,
                      long col, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  ppi_vfail_at(ctx, rc, file, line, col, fmt, ap);
  va_end(ap);
  return rc;
}

pp_status ppi_fail(pp_ctx *ctx, pp_status rc, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  ppi_vfail_at(ctx, rc, NULL, 0, 0, fmt, ap);
  va_end(ap);
  return rc;
}

pp_status ppi_nomem(pp_ctx *ctx)
{
  return ppi_fail(ctx, PP_ENOMEM, "out of memory");
}
