/* SPDX-License-Identifier: MIT */
/*
** File and text helpers of the readers and writers (src/format,
** src/write, src/export): reading a whole input file with a size cap,
** atomic output (temporary file + rename, so a reader never sees half a
** file and a failed write leaves the old file), number formatting that
** round-trips exactly and prints the same bytes on every run, and the
** scanning of text spans that do not end in a NUL (ppi_span_*: linear in
** the span, ppi_span_find in its length times the pattern's).
*/
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700 /* realpath */
#include "base/pp_int.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool ppi_file_exists(const char *path)
{
  struct stat st;
  return path && stat(path, &st) == 0;
}

const char *ppi_span_find(const char *p, const char *e, const char *s)
{
  size_t n = strlen(s);
  while (p < e && (size_t)(e - p) >= n) {
    const char *c = n ? memchr(p, s[0], (size_t)(e - p) - n + 1) : p;
    if (!c)
      return NULL;
    if (!memcmp(c, s, n))
      return c;
    p = c + 1;
  }
  return NULL;
}

bool ppi_span_is(const char *p, const char *e, const char *s)
{
  return (size_t)(e - p) == strlen(s) && !memcmp(p, s, (size_t)(e - p));
}

void ppi_span_trim(const char **p, const char **e)
{
  while (*p < *e && isspace((unsigned char)**p))
    (*p)++;
  while (*e > *p && isspace((unsigned char)(*e)[-1]))
    (*e)--;
}

bool ppi_span_field(const char **p, const char *e, char sep, bool *more,
                    const char **fb, const char **fe)
{
  const char *c;
  if (!*more)
    return false;
  c = memchr(*p, sep, (size_t)(e - *p));
  *fb = *p;
  *fe = c ? c : e;
  *more = c != NULL;
  *p = c ? c + 1 : e;
  ppi_span_trim(fb, fe);
  return true;
}

pp_status ppi_read_file(pp_ctx *ctx, const char *path, char **out, size_t *len)
{
  FILE *f;
  struct stat st;
  char *buf;
  size_t cap, n = 0, got;

  *out = NULL;
  *len = 0;
  if (stat(path, &st) != 0)
    return ppi_fail_at(ctx, PP_EIO, path, 0, 0, "cannot open: %s",
                       strerror(errno));
  if (S_ISDIR(st.st_mode))
    return ppi_fail_at(ctx, PP_EIO, path, 0, 0, "is a directory");
  if ((unsigned long long)st.st_size > PP_MAX_FILE_BYTES)
    return ppi_fail_at(ctx, PP_ELIMIT, path, 0, 0,
                       "file of %lld bytes exceeds the limit of %llu",
                       (long long)st.st_size,
                       (unsigned long long)PP_MAX_FILE_BYTES);
  f = fopen(path, "rb");
  if (!f)
    return ppi_fail_at(ctx, PP_EIO, path, 0, 0, "cannot open: %s",
                       strerror(errno));
  /* Regular files read in one go; pipes and devices grow the buffer. */
  cap = (size_t)st.st_size + 1;
  if (cap < 4096)
    cap = 4096;
  buf = ppi_alloc(ctx, cap);
  if (!buf) {
    fclose(f);
    return ctx->err;
  }
  for (;;) {
    got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0 || n + 1 < cap)
      break;
    if (cap > PP_MAX_FILE_BYTES) {
      ppi_free(ctx, buf, cap);
      fclose(f);
      return ppi_fail_at(ctx, PP_ELIMIT, path, 0, 0, "input exceeds %llu bytes",
                         (unsigned long long)PP_MAX_FILE_BYTES);
    }
    {
      char *nb = ppi_raw_realloc(ppi_ctx_alloc(ctx), buf, cap, cap * 2);
      if (!nb) {
        ppi_free(ctx, buf, cap);
        fclose(f);
        return ppi_nomem(ctx);
      }
      buf = nb;
      cap *= 2;
    }
  }
  if (ferror(f)) {
    ppi_free(ctx, buf, cap);
    fclose(f);
    return ppi_fail_at(ctx, PP_EIO, path, 0, 0, "read error");
  }
  fclose(f);
  /* Shrink to the exact size so the caller can free with len + 1. */
  if (n + 1 != cap) {
    char *nb = ppi_raw_realloc(ppi_ctx_alloc(ctx), buf, cap, n + 1);
    if (!nb) {
      ppi_free(ctx, buf, cap);
      return ppi_nomem(ctx);
    }
    buf = nb;
  }
  buf[n] = '\0';
  *out = buf;
  *len = n;
  return PP_OK;
}

/* ---- atomic output ---------------------------------------------------- */

/* Where an output goes.  A regular file is replaced by rename (keeping its
** permissions); a symbolic link is written through (its target replaced,
** the link kept); a device or FIFO (-o /dev/null, /dev/stdout) is written
** in place: renaming over it would replace the node with a file. */
static pp_status out_target(pp_ctx *ctx, struct ppi_outfile *o,
                            const char *path)
{
  struct stat st;
  o->mode = -1;
  if (lstat(path, &st) != 0)
    return PP_OK; /* a new file */
  if (S_ISLNK(st.st_mode)) {
    if (stat(path, &st) != 0)
      return ppi_fail_at(ctx, PP_EIO, path, 0, 0,
                         "a symbolic link to nothing (%s): not replaced",
                         strerror(errno));
    /* a regular target is replaced where it is; a device, FIFO or pipe
    ** (/dev/stdout) is written through the link */
    if (S_ISREG(st.st_mode)) {
      if (!realpath(path, o->real))
        return ppi_fail_at(ctx, PP_EIO, path, 0, 0,
                           "cannot resolve the symbolic link: %s",
                           strerror(errno));
      o->path = o->real;
    }
  }
  if (S_ISDIR(st.st_mode))
    return ppi_fail_at(ctx, PP_EIO, path, 0, 0, "is a directory");
  if (S_ISREG(st.st_mode))
    o->mode = (int)(st.st_mode & 07777);
  else
    o->direct = true;
  return PP_OK;
}

static pp_status out_open(pp_ctx *ctx, struct ppi_outfile *o, const char *path)
{
  int fd, k;
  pp_status rc;
  memset(o, 0, sizeof *o);
  o->path = path;
  if ((rc = out_target(ctx, o, path)))
    return rc;
  path = o->path;
  if (o->direct) {
    if (!(o->f = fopen(path, "w")))
      return ppi_fail_at(ctx, PP_EIO, path, 0, 0, "cannot write: %s",
                         strerror(errno));
    return PP_OK;
  }
  k = snprintf(o->tmp, sizeof o->tmp, "%s.tmpXXXXXX", path);
  if (k < 0 || (size_t)k >= sizeof o->tmp)
    return ppi_fail_at(ctx, PP_EIO, path, 0, 0, "path too long");
  fd = mkstemp(o->tmp);
  if (fd < 0)
    return ppi_fail_at(ctx, PP_EIO, path, 0, 0, "cannot create: %s",
                       strerror(errno));
  o->f = fdopen(fd, "w");
  if (!o->f) {
    close(fd);
    remove(o->tmp);
    return ppi_fail_at(ctx, PP_EIO, path, 0, 0, "cannot write: %s",
                       strerror(errno));
  }
  return PP_OK;
}

static pp_status out_commit(pp_ctx *ctx, struct ppi_outfile *o)
{
  int bad = ferror(o->f);
  mode_t mask;
  if (o->direct) {
    if (fflush(o->f) != 0)
      bad = 1;
    if (fclose(o->f) != 0)
      bad = 1;
    o->f = NULL;
    return bad ? ppi_fail_at(ctx, PP_EIO, o->path, 0, 0, "write failed: %s",
                             strerror(errno))
               : PP_OK;
  }
  /* mkstemp creates 0600: an existing file keeps its mode, a new one
  ** gets the umask's */
  mask = umask(0);
  umask(mask);
  if (fflush(o->f) != 0)
    bad = 1;
  if (fchmod(fileno(o->f),
             o->mode >= 0 ? (mode_t)o->mode : (mode_t)(0666 & ~mask)) != 0)
    bad = 1;
  if (fclose(o->f) != 0)
    bad = 1;
  o->f = NULL;
  if (bad) {
    remove(o->tmp);
    return ppi_fail_at(ctx, PP_EIO, o->path, 0, 0, "write failed: %s",
                       strerror(errno));
  }
  if (rename(o->tmp, o->path) != 0) {
    int e = errno;
    remove(o->tmp);
    return ppi_fail_at(ctx, PP_EIO, o->path, 0, 0, "cannot rename: %s",
                       strerror(e));
  }
  return PP_OK;
}

pp_status ppi_emit(pp_ctx *ctx, const char *path, FILE *f, ppi_emit_fn fn,
                   const void *obj)
{
  struct ppi_outfile o;
  pp_status rc;
  if (!path) {
    fn(f, obj);
    return ferror(f) ? ppi_fail(ctx, PP_EIO, "write error") : PP_OK;
  }
  if ((rc = out_open(ctx, &o, path)) != PP_OK)
    return rc;
  fn(o.f, obj);
  return out_commit(ctx, &o);
}

struct bytes {
  const char *data;
  size_t n;
};

static void emit_bytes(FILE *f, const void *obj)
{
  const struct bytes *b = obj;
  if (b->n)
    fwrite(b->data, 1, b->n, f);
}

pp_status ppi_write_bytes(pp_ctx *ctx, const char *path, FILE *f,
                          const void *data, size_t n)
{
  struct bytes b;
  b.data = data;
  b.n = n;
  return ppi_emit(ctx, path, f, emit_bytes, &b);
}

void ppi_path_stem(const char *path, char *buf, size_t n)
{
  const char *s = strrchr(path, '/'), *dot;
  size_t len;
  s = s ? s + 1 : path;
  dot = strrchr(s, '.');
  len = dot && dot != s ? (size_t)(dot - s) : strlen(s);
  if (len >= n)
    len = n - 1;
  memcpy(buf, s, len);
  buf[len] = '\0';
}

/* ---- formatting ------------------------------------------------------- */

void ppi_fmt_num(char *buf, size_t n, double x)
{
  int prec;
  if (x == 0) { /* also -0: written as 0 */
    snprintf(buf, n, "0");
    return;
  }
  if (x == floor(x) && fabs(x) < 1e15) {
    snprintf(buf, n, "%.0f", x);
    return;
  }
  /* The shortest %g that reads back as the same double. */
  for (prec = 15; prec <= 17; prec++) {
    snprintf(buf, n, "%.*g", prec, x);
    if (strtod(buf, NULL) == x)
      return;
  }
}

void ppi_json_num(FILE *f, double x)
{
  char buf[40];
  /* JSON has no infinity: a sum that overflowed is written as null. */
  if (!isfinite(x)) {
    fputs("null", f);
    return;
  }
  ppi_fmt_num(buf, sizeof buf, x);
  fputs(buf, f);
}

static void file_put(void *ud, const char *s, size_t n)
{
  if (n)
    fwrite(s, 1, n, ud);
}

void ppi_json_str(FILE *f, const char *s)
{
  ppi_quote(s, PPI_QUOTE_JSON, file_put, f);
}

void ppi_fmt_bytes(char *buf, size_t n, double bytes)
{
  static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (fabs(bytes) >= 1024 && u < 5) {
    bytes /= 1024;
    u++;
  }
  if (u == 0)
    snprintf(buf, n, "%.0f B", bytes);
  else
    snprintf(buf, n, "%.2f %s", bytes, unit[u]);
}
