/* SPDX-License-Identifier: MIT */
/*
** The base layer's internal header: the context and its allocator and
** error plumbing, and the small pieces every layer shares (arena,
** growable vector, maps, string buffer, heap in heap.h, thread fan-out,
** spec options, names of enums, random numbers, clock, file and number
** helpers; limits.h names the limits).  The objects behind the public
** handles are laid out in their own layers' headers (cluster/cluster.h,
** model/model.h, plan/plan.h, ...).  Nothing here is public.
**
** Ownership: a model or cluster owns one arena; every array and string
** it holds comes from that arena and dies with it.  Builders use growable
** vectors on the context's allocator and copy into the object's arena
** when they finish, so a finished object is compact and immutable.
*/
#ifndef PP_INT_H
#define PP_INT_H

#include "parplan.h"
#include "base/limits.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define PP_INTERNAL __attribute__((visibility("hidden")))
#define PP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PP_INTERNAL
#define PP_PRINTF(a, b)
#endif

/* ---- the context ------------------------------------------------------ */

#define PPI_ERRMSG_MAX 1024

struct pp_ctx {
  pp_alloc_fn alloc;
  void *alloc_ud;
  uint64_t seed;
  pp_status err;               /* first error since the last clear */
  char errmsg[PPI_ERRMSG_MAX]; /* its message, no trailing newline */
  char errfile[512];           /* the input it is in, or "" */
  long errline, errcol;        /* 1-based, 0 = unknown */
};

/* An allocator hook plus its user data: what objects keep of a context. */
struct ppi_alloc {
  pp_alloc_fn fn;
  void *ud;
};

PP_INTERNAL struct ppi_alloc ppi_ctx_alloc(const pp_ctx *ctx);
/* Allocate, resize and free through a hook.  Sizes are exact (the hook
** is told the old size).  Return NULL on failure without recording. */
PP_INTERNAL void *ppi_raw_alloc(struct ppi_alloc a, size_t n);
PP_INTERNAL void *ppi_raw_realloc(struct ppi_alloc a, void *p, size_t old,
                                  size_t n);
PP_INTERNAL void ppi_raw_free(struct ppi_alloc a, void *p, size_t n);
/* For libraries whose free has no size: the size is kept in front. */
PP_INTERNAL void *ppi_hdr_alloc(struct ppi_alloc a, size_t n);
PP_INTERNAL void *ppi_hdr_realloc(struct ppi_alloc a, void *p, size_t n);
PP_INTERNAL void ppi_hdr_free(struct ppi_alloc a, void *p);

/* Through the context: failures record PP_ENOMEM with what was asked. */
PP_INTERNAL void *ppi_alloc(pp_ctx *ctx, size_t n);
PP_INTERNAL void *ppi_calloc(pp_ctx *ctx, size_t n, size_t size);
PP_INTERNAL void ppi_free(pp_ctx *ctx, void *p, size_t n);

/* Record an error if none is recorded yet (the first message wins) and
** return rc.  Messages follow "where: what", without a trailing newline. */
PP_INTERNAL pp_status ppi_fail(pp_ctx *ctx, pp_status rc, const char *fmt, ...)
    PP_PRINTF(3, 4);
/* The same with a text position: the message is prefixed with
** "file:line:col: " (":col" omitted when col is 0). */
/* The error of src (status, message, file, line, column) into dst, and
** nothing else of it: how a thread's first error reaches its caller. */
PP_INTERNAL void ppi_ctx_copy_error(pp_ctx *dst, const pp_ctx *src);
PP_INTERNAL pp_status ppi_fail_at(pp_ctx *ctx, pp_status rc, const char *file,
                                  long line, long col, const char *fmt, ...)
    PP_PRINTF(6, 7);
PP_INTERNAL pp_status ppi_vfail_at(pp_ctx *ctx, pp_status rc, const char *file,
                                   long line, long col, const char *fmt,
                                   va_list ap);
PP_INTERNAL pp_status ppi_nomem(pp_ctx *ctx);

/* Why a name is unacceptable ("is not valid UTF-8"), or NULL if it is
** fine: non-empty, at most PP_MAX_NAME bytes, UTF-8, no control
** characters (name.c). */
PP_INTERNAL const char *ppi_name_problem(const char *s);
/* The length of the valid UTF-8 sequence at p, or 0 if it is invalid (or
** the terminating NUL). */
PP_INTERNAL size_t ppi_utf8_seq(const unsigned char *p);

/* TUNING: the relative slack of comparisons between sums of the same
** terms formed in other orders (a value against its bound, a load against
** a period): 1e-12 is thousands of ulps of a double, above the rounding
** of the sums the library forms, and far below any difference that
** matters.  One value everywhere, so that every layer calls the same
** pairs equal. */
#define PPI_REL_ROUNDING 1e-12

/* qsort order of doubles, ascending. */
static inline int ppi_cmp_double(const void *x, const void *y)
{
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}
static inline int ppi_cmp_double_desc(const void *x, const void *y)
{
  return ppi_cmp_double(y, x);
}

/* n * size without overflow into *out; false when it would overflow. */
PP_INTERNAL bool ppi_mul_ok(size_t n, size_t size, size_t *out);

/* ---- names of enums (name.c) ------------------------------------------ */

/* The number of elements of a static array. */
#define PPI_COUNT(a) (sizeof(a) / sizeof((a)[0]))
/* names[v] for 0 <= v < n, else NULL: what every pp_*_name of an enum
** returns, so that a caller can list the names by counting up until NULL
** (the command line builds its help and messages that way). */
PP_INTERNAL const char *ppi_enum_name(const char *const *names, size_t n,
                                      int v);
/* The index of name among names[0..n-1] into *out; PP_EINVAL (nothing
** recorded: the caller words the message) when it is none of them. */
PP_INTERNAL pp_status ppi_enum_parse(const char *const *names, size_t n,
                                     const char *name, int *out);

/* ---- string buffer (strbuf.c) --------------------------------------- */

/* A growable string in the context's allocator; the first failure sticks
** in rc and later calls do nothing. */
struct ppi_sbuf {
  pp_ctx *ctx;
  char *s;
  size_t n, cap;
  pp_status rc;
};
PP_INTERNAL void ppi_sb_init(struct ppi_sbuf *b, pp_ctx *ctx);
PP_INTERNAL void ppi_sb_free(struct ppi_sbuf *b);
PP_INTERNAL void ppi_sb_clear(struct ppi_sbuf *b); /* empty, keep memory */
PP_INTERNAL void ppi_sb_put(struct ppi_sbuf *b, const char *s, size_t len);
PP_INTERNAL void ppi_sb_puts(struct ppi_sbuf *b, const char *s);
PP_INTERNAL void ppi_sb_printf(struct ppi_sbuf *b, const char *fmt, ...)
    PP_PRINTF(2, 3);

/* The one string quoter: s as a double-quoted literal, '"' and '\\'
** escaped, passed to put in pieces.  Two styles, kept apart because
** their outputs are recorded (tests/golden):
**   PPI_QUOTE_JSON: \n \r \t, other control bytes as \u00XX, valid
**     UTF-8 as it is, a stray byte (a file name's) as \ufffd, so the
**     document stays JSON;
**   PPI_QUOTE_PORTABLE: what JSON, Python 3 and TOML all read back as s:
**     every control byte and DEL as \u00XX, other bytes as they are. */
enum ppi_quote_style { PPI_QUOTE_JSON, PPI_QUOTE_PORTABLE };
typedef void (*ppi_put_fn)(void *ud, const char *s, size_t n);
PP_INTERNAL void ppi_quote(const char *s, enum ppi_quote_style style,
                           ppi_put_fn put, void *ud);
/* ppi_quote, PPI_QUOTE_PORTABLE, into b (the exporters' scripts). */
PP_INTERNAL void ppi_sb_quote(struct ppi_sbuf *b, const char *s);

/* ---- fan-out (fanout.c) ---------------------------------------------- */

/* One job, on its own copy of the caller's context. */
typedef pp_status (*ppi_job_fn)(pp_ctx *ctx, void *job);
/* Run fn on the n <= PPI_MAX_THREADS jobs at jobs + i stride, each on its
** own thread (on this one when n is 1), with the copy of ctx at ctx_off
** in the job (error cleared, allocator shared); join them; return the
** status of the first job in order that failed, its message put in ctx
** unless ctx has one.  PP_EINTERNAL "WHO: could not start a thread" when
** a thread cannot start. */
PP_INTERNAL pp_status ppi_fanout(pp_ctx *ctx, const char *who, ppi_job_fn fn,
                                 void *jobs, size_t stride, size_t ctx_off,
                                 int32_t n);

/* ---- key=value options of one-line specs (kvspec.c) ----------------- */

/* A spec being parsed: errors read "WHAT 'TEXT': reason". */
struct ppi_spec {
  pp_ctx *ctx;
  const char *text; /* the whole spec (a long one is quoted by its head) */
  const char *what; /* "cluster spec", "model spec" */
};
/* PP_EPARSE with the spec quoted, as every spec error is. */
PP_INTERNAL pp_status ppi_spec_fail(const struct ppi_spec *s, const char *fmt,
                                    ...) PP_PRINTF(2, 3);
/* An integer in [lo, hi]: "NAME needs an integer from LO to HI". */
PP_INTERNAL pp_status ppi_spec_int(const struct ppi_spec *s, const char *name,
                                   const char *v, int64_t lo, int64_t hi,
                                   int64_t *out);

/* What an option's value is, the type of its field, and what a bad value
** is told. */
enum ppi_kv_kind {
  PPI_KV_INT,      /* int32_t in [lo, hi]: "KEY needs an integer from..." */
  PPI_KV_U64,      /* uint64_t: "KEY needs a non-negative integer" */
  PPI_KV_POSITIVE, /* double > 0: "option 'KEY' needs a positive number";
                      above hi: "KEY must be at most HI" */
  PPI_KV_NONNEG,   /* double >= 0, likewise ("non-negative") */
  PPI_KV_STRING,   /* const char *, pointing into the parsed text */
  PPI_KV_ENUM,     /* int: the index of the value in choices; else
                      "KEY is HELP" */
  PPI_KV_BOOL,     /* bool: 0 or 1 */
  PPI_KV_INTS      /* int32_t[n]: n integers in [lo, hi], '-' between;
                      else "KEY is HELP" */
};
struct ppi_kv {
  const char *key;
  enum ppi_kv_kind kind;
  size_t off;          /* the field's offset in the target struct */
  double lo, hi;       /* INT, INTS: the range; doubles: hi */
  int n;               /* INTS: how many */
  const char *choices; /* ENUM: the values, '|' between */
  const char *help;    /* ENUM, INTS: what the value must be */
};
/* The one argument without '=' (a spec's sizes, "4x8"), wherever it
** stands among the options; a second is refused.  NULL: none taken. */
typedef pp_status (*ppi_spec_pos_fn)(const struct ppi_spec *s, void *ud,
                                     const char *v);
/* Parse "arg,arg,..." (args is cut up in place; string fields point into
** it): key=value into target's fields as kv[0..nkv-1] say, keys outside
** accept (',' between; NULL: all of kv) refused, "unknown option 'KEY'
** (options: ...)" listing accept or kv's keys; one argument without '='
** to pos. */
PP_INTERNAL pp_status ppi_spec_parse(const struct ppi_spec *s, char *args,
                                     const struct ppi_kv *kv, int nkv,
                                     const char *accept, void *target,
                                     ppi_spec_pos_fn pos, void *pos_ud);

/* ---- arena ------------------------------------------------------------ */

struct ppi_arena_chunk;
struct ppi_arena {
  struct ppi_alloc a;
  struct ppi_arena_chunk *head;
  size_t bytes; /* total bytes of all chunks */
  size_t grow;  /* the last shared chunk's size (0: none yet) */
};

PP_INTERNAL void ppi_arena_init(struct ppi_arena *ar, struct ppi_alloc a);
/* 16-byte aligned, zero-filled; NULL (and PP_ENOMEM in ctx) on failure. */
PP_INTERNAL void *ppi_arena_alloc(struct ppi_arena *ar, pp_ctx *ctx, size_t n,
                                  size_t size);
PP_INTERNAL char *ppi_arena_strdup(struct ppi_arena *ar, pp_ctx *ctx,
                                   const char *s);
PP_INTERNAL void ppi_arena_free(struct ppi_arena *ar);
/* Free an object that owns its arena: the arena, then the object itself
** (size bytes, from the arena's allocator), which holds the arena.  What
** every pp_*_destroy of an arena-backed object does. */
PP_INTERNAL void ppi_arena_free_owner(struct ppi_arena *ar, void *owner,
                                      size_t size);
/* A copy of s in the arena with every invalid UTF-8 or control byte
** replaced by '?': for names taken from file names and specs (name.c). */
PP_INTERNAL char *ppi_arena_name(struct ppi_arena *ar, pp_ctx *ctx,
                                 const char *s);

/* The one allocation idiom for arrays: n elements of *ptr (at least one,
** so that an empty array is not mistaken for a failure), zero-filled, in
** arena ar / from ctx's allocator (free with ppi_free and the same
** count).  The value is ptr: NULL on failure, with PP_ENOMEM in ctx. */
#define PPI_ARENA_NEW(ar, ctx, ptr, n)                                         \
  ((ptr) = ppi_arena_alloc((ar), (ctx), (size_t)(n) > 0 ? (size_t)(n) : 1,     \
                           sizeof *(ptr)))
#define PPI_NEW(ctx, ptr, n)                                                   \
  ((ptr) = ppi_calloc((ctx), (size_t)(n) > 0 ? (size_t)(n) : 1, sizeof *(ptr)))

/* ---- growable vector (builders) -------------------------------------- */

struct ppi_vec {
  void *data;
  size_t n, cap, elsize;
};

PP_INTERNAL void ppi_vec_init(struct ppi_vec *v, size_t elsize);
/* Append one element (copied from elem); PP_ENOMEM or PP_ELIMIT. */
PP_INTERNAL pp_status ppi_vec_push(pp_ctx *ctx, struct ppi_vec *v,
                                   const void *elem);
PP_INTERNAL void ppi_vec_free(pp_ctx *ctx, struct ppi_vec *v);
#define PPI_VEC_AT(v, T, i) (((T *)(v)->data)[i])

/* ---- string map: name -> int32 (keys are borrowed) -------------------- */

struct ppi_strmap {
  const char **keys; /* cap slots, NULL = empty */
  int32_t *vals;
  uint32_t cap, n;
};

PP_INTERNAL void ppi_strmap_init(struct ppi_strmap *m);
/* Insert key -> val.  PP_OK; PP_EINVAL if key is present (*old set);
** PP_ENOMEM. */
PP_INTERNAL pp_status ppi_strmap_put(pp_ctx *ctx, struct ppi_strmap *m,
                                     const char *key, int32_t val,
                                     int32_t *old);
PP_INTERNAL int32_t ppi_strmap_get(const struct ppi_strmap *m, const char *key);
/* Move the map's tables into an arena (so a finished object owns them). */
PP_INTERNAL pp_status ppi_strmap_move(pp_ctx *ctx, struct ppi_strmap *m,
                                      struct ppi_arena *ar);
PP_INTERNAL void ppi_strmap_free(pp_ctx *ctx, struct ppi_strmap *m);

/* ---- int64 -> int32 map (i64map.c) ----------------------------------- */

struct ppi_i64map {
  int64_t *keys; /* cap slots, -1 = empty */
  int32_t *vals;
  uint32_t cap, n;
};
PP_INTERNAL void ppi_i64map_init(struct ppi_i64map *m);
/* The value of key (>= 0), or -1. */
PP_INTERNAL int32_t ppi_i64map_get(const struct ppi_i64map *m, int64_t key);
/* Insert or replace. */
PP_INTERNAL pp_status ppi_i64map_put(pp_ctx *ctx, struct ppi_i64map *m,
                                     int64_t key, int32_t val);
PP_INTERNAL void ppi_i64map_free(pp_ctx *ctx, struct ppi_i64map *m);

/* ---- random numbers: xoshiro256** seeded by splitmix64 ---------------- */

struct ppi_rng {
  uint64_t s[4];
};
PP_INTERNAL void ppi_rng_seed(struct ppi_rng *r, uint64_t seed);
PP_INTERNAL uint64_t ppi_rng_next(struct ppi_rng *r);
/* Wall-clock seconds (time limits and reported times). */
PP_INTERNAL double ppi_now_s(void);

/* When a long computation stops: at a deadline (ppi_now_s() seconds;
** INFINITY: none) or once *flag reads nonzero (NULL: none; a caller's
** signal handler may set it). */
struct ppi_stop {
  double deadline;
  const volatile sig_atomic_t *flag;
};
/* Whether st (NULL: never) says stop now. */
PP_INTERNAL bool ppi_stopped(const struct ppi_stop *st);
/* Seconds left before st's deadline (INFINITY without one; 0 once
** stopped). */
PP_INTERNAL double ppi_stop_left(const struct ppi_stop *st);
/* Uniform in [0, 1). */
PP_INTERNAL double ppi_rng_unit(struct ppi_rng *r);
/* Uniform in [0, n), n > 0, without modulo bias. */
PP_INTERNAL uint64_t ppi_rng_below(struct ppi_rng *r, uint64_t n);

/* ---- file and text helpers of the readers and writers (textio.c) ---- */

/* Read a whole file into a NUL-terminated buffer from the context's
** allocator (*len excludes the NUL); free with ppi_free(ctx, p, len+1). */
PP_INTERNAL pp_status ppi_read_file(pp_ctx *ctx, const char *path, char **out,
                                    size_t *len);
PP_INTERNAL bool ppi_file_exists(const char *path);

/* Spans [p, e) of a text that need not end in a NUL (the dump and log
** readers scan a line in place): the first occurrence of s, or NULL; the
** span is s; the span without white space (isspace) at either end; the
** next sep-separated field of [*p, e), trimmed, into [*fb, *fe), *p past
** its separator, *more false after the last (start with *more true;
** false once past the last field). */
PP_INTERNAL const char *ppi_span_find(const char *p, const char *e,
                                      const char *s);
PP_INTERNAL bool ppi_span_is(const char *p, const char *e, const char *s);
PP_INTERNAL void ppi_span_trim(const char **p, const char **e);
PP_INTERNAL bool ppi_span_field(const char **p, const char *e, char sep,
                                bool *more, const char **fb, const char **fe);

/* Atomic output: when path is given, emit into a temporary file next to
** it, then flush, close and rename it over path (on failure remove it, so
** no half-written file appears and an existing one stays); when path is
** NULL, emit into f. */
struct ppi_outfile {
  FILE *f;
  char tmp[4200];
  char real[4200]; /* a symbolic link's target: written through */
  const char *path;
  int mode;    /* an existing file's permissions, kept; -1: new */
  bool direct; /* a device or FIFO: written in place, no rename */
};
typedef void (*ppi_emit_fn)(FILE *f, const void *obj);
PP_INTERNAL pp_status ppi_emit(pp_ctx *ctx, const char *path, FILE *f,
                               ppi_emit_fn fn, const void *obj);
/* The file name of path without its directory and extension. */
/* n bytes to path (atomically) or to f. */
PP_INTERNAL pp_status ppi_write_bytes(pp_ctx *ctx, const char *path, FILE *f,
                                      const void *data, size_t n);
PP_INTERNAL void ppi_path_stem(const char *path, char *buf, size_t n);

/* Write a JSON string literal (ppi_quote, PPI_QUOTE_JSON) / the shortest
** decimal that reads back as exactly x (null when x is not finite). */
PP_INTERNAL void ppi_json_str(FILE *f, const char *s);
PP_INTERNAL void ppi_json_num(FILE *f, double x);
PP_INTERNAL void ppi_fmt_num(char *buf, size_t n, double x);
/* Human-readable bytes ("1.50 GiB") into buf. */
PP_INTERNAL void ppi_fmt_bytes(char *buf, size_t n, double bytes);

#endif /* PP_INT_H */
