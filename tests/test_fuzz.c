/* SPDX-License-Identifier: MIT */
/*
** Deterministic mutation fuzzing of every reader: the model and cluster
** JSON readers, the PipeDream reader, the model and cluster SPEC
** parsers, the machine dumps, the training logs (a summary in range
** instead of an object) and RUNS.json.  Seed inputs (examples/, a
** PipeDream profile, normalized writes of built-ins, specs) are mutated
** with a seeded xorshift RNG;
** each mutant must give PP_OK with an object that passes sanity checks
** (and survives write -> read -> write byte for byte), or an error with
** a message naming the input.  Nothing may crash or leak.  Then a few
** hand-written adversarial inputs: deep nesting, huge strings, huge
** arrays, too many devices, mistyped rows, too-big integers.
**
** In the fuzz loops a failing input is printed, saved under the test's
** temp directory as fuzz-failure-N.bin and counted, and the loop goes
** on; the test fails at its end.  Everything is deterministic: the same
** build finds the same mutant again.  Environment knobs:
**   PP_FUZZ_SCALE=N    N times the mutants (a longer campaign)
**   PP_FUZZ_SAVE=1     save each input before it is fed (fuzz-current.bin),
**                      to catch one that crashes the process
**   PP_FUZZ_VERBOSE=1  print spec errors that do not quote the spec
**   PP_TEST_FILTER=P   run only the tests matching P (cmocka's filter)
*/
#define _POSIX_C_SOURCE 200809L
#include "onnx_build.h"
#include "testutil.h"

#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#if defined(__SANITIZE_ADDRESS__)
#define FZ_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FZ_SANITIZED 1
#endif
#endif
#ifndef FZ_SANITIZED
#define FZ_SANITIZED 0
#endif

/* Mutants per seed input (before PP_FUZZ_SCALE); the sanitizer build is
** several times slower, so it runs fewer. */
#define FZ_PER_FILE (FZ_SANITIZED ? 400 : 1500)
#define FZ_PER_SPEC (FZ_SANITIZED ? 200 : 800)
#define FZ_PER_WRITTEN (FZ_SANITIZED ? 80 : 250) /* big models: slower */
#define FZ_MAX_LEN (1u << 20)

/* ---- RNG: xorshift64* ------------------------------------------------- */

struct rng {
  uint64_t s;
};

static void rng_seed(struct rng *r, uint64_t seed)
{
  r->s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
  if (!r->s)
    r->s = 1;
}

static uint64_t rnd(struct rng *r)
{
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return r->s * 0x2545F4914F6CDD1Dull;
}

static size_t below(struct rng *r, size_t n)
{
  return n ? (size_t)(rnd(r) % n) : 0;
}

/* ---- a growable byte buffer ------------------------------------------- */

struct buf {
  char *p;
  size_t n, cap;
};

static void buf_reserve(struct buf *b, size_t n)
{
  if (n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < n + 1)
      cap *= 2;
    b->p = realloc(b->p, cap);
    assert_non_null(b->p);
    b->cap = cap;
  }
}

static void buf_set(struct buf *b, const char *p, size_t n)
{
  buf_reserve(b, n);
  memcpy(b->p, p, n);
  b->n = n;
  b->p[n] = '\0';
}

/* Replace [at, at+del) with s[0:sn). */
static void buf_splice(struct buf *b, size_t at, size_t del, const char *s,
                       size_t sn)
{
  if (at > b->n)
    at = b->n;
  if (del > b->n - at)
    del = b->n - at;
  if (b->n - del + sn > FZ_MAX_LEN)
    return; /* keep mutants bounded */
  buf_reserve(b, b->n - del + sn);
  memmove(b->p + at + sn, b->p + at + del, b->n - at - del);
  if (sn)
    memmove(b->p + at, s, sn);
  b->n = b->n - del + sn;
  b->p[b->n] = '\0';
}

/* Append (no size bound: for hand-written inputs). */
static void buf_puts(struct buf *b, const char *s)
{
  size_t sn = strlen(s);
  buf_reserve(b, b->n + sn);
  memcpy(b->p + b->n, s, sn);
  b->n += sn;
  b->p[b->n] = '\0';
}

static void buf_repeat(struct buf *b, const char *s, size_t times)
{
  size_t i, sn = strlen(s);
  buf_reserve(b, b->n + sn * times);
  for (i = 0; i < times; i++) {
    memcpy(b->p + b->n, s, sn);
    b->n += sn;
  }
  b->p[b->n] = '\0';
}

/* ---- mutations -------------------------------------------------------- */

static const char *const numbers[] = {
    "-1",
    "1e400",
    "NaN",
    "nan",
    "-0",
    "99999999999999999999999",
    "1e-400",
    "0",
    "Infinity",
    "-1e400",
    "1.7976931348623157e308",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "4294967296",
    "2147483648",
    "2147483647",
    "0.5",
    "1e18",
    "4e18",
    "16384",
    "16385",
    "1073741824",
    "0x10",
    "+5",
    "1.",
    ".5",
    "1e",
    "--1",
    "123456789012345678901234567890123456789012345678901234567890"};
#define NNUMBERS (sizeof numbers / sizeof numbers[0])

static const char *const tokens[] = {"null",
                                     "true",
                                     "false",
                                     "[]",
                                     "{}",
                                     "\"\"",
                                     "-",
                                     "\\u0000",
                                     "\\ud800",
                                     "\t",
                                     "\n",
                                     " -- ",
                                     "=",
                                     ",",
                                     "]",
                                     "}",
                                     "[",
                                     "{",
                                     ":",
                                     "\"",
                                     "\\",
                                     "\"x\"",
                                     "{\"a\": 1}",
                                     "[1, 2]",
                                     "\xff",
                                     "\xc3\xa9",
                                     "\xed\xa0\x80",
                                     "\r\n",
                                     "\x01",
                                     "forward_compute_time=",
                                     "\tnode1 -- node2\n",
                                     "x",
                                     ";",
                                     "[1; 2]",
                                     "layers=",
                                     "hidden=",
                                     ",seed=",
                                     ",gpu=H100",
                                     ",gpu=",
                                     "x0",
                                     "x1000",
                                     ":",
                                     "::",
                                     ",,"};
#define NTOKENS (sizeof tokens / sizeof tokens[0])

static const char interesting_bytes[] = "{}[]\",:0123456789-.eE \t\n\r\\x=;/";

/* Spans of digits (with an optional sign, fraction and exponent). */
static bool find_number(struct rng *r, const struct buf *b, size_t *at,
                        size_t *len)
{
  size_t start = below(r, b->n + 1), i, k;
  for (k = 0; k < b->n; k++) {
    i = (start + k) % b->n;
    if (b->p[i] >= '0' && b->p[i] <= '9') {
      size_t s = i, e = i;
      while (s > 0 && ((b->p[s - 1] >= '0' && b->p[s - 1] <= '9') ||
                       b->p[s - 1] == '.' || b->p[s - 1] == '-'))
        s--;
      while (e < b->n && ((b->p[e] >= '0' && b->p[e] <= '9') ||
                          b->p[e] == '.' || b->p[e] == 'e' || b->p[e] == 'E' ||
                          b->p[e] == '+' || b->p[e] == '-'))
        e++;
      *at = s;
      *len = e - s;
      return true;
    }
  }
  return false;
}

/* A quoted string literal: [at, at+len) including the quotes. */
static bool find_string_lit(struct rng *r, const struct buf *b, size_t *at,
                            size_t *len)
{
  size_t start = below(r, b->n + 1), k;
  for (k = 0; k < b->n; k++) {
    size_t i = (start + k) % b->n, e;
    if (b->p[i] != '"')
      continue;
    for (e = i + 1; e < b->n && b->p[e] != '"'; e++)
      if (b->p[e] == '\\')
        e++;
    if (e < b->n) {
      *at = i;
      *len = e - i + 1;
      return true;
    }
  }
  return false;
}

/* A line: [at, at+len) without its newline. */
static void find_line(struct rng *r, const struct buf *b, size_t *at,
                      size_t *len)
{
  size_t i = below(r, b->n + 1), s = i, e = i;
  while (s > 0 && b->p[s - 1] != '\n')
    s--;
  while (e < b->n && b->p[e] != '\n')
    e++;
  *at = s;
  *len = e - s;
}

static void mutate_once(struct rng *r, struct buf *b)
{
  size_t at, len, at2, len2;
  char c;
  switch (below(r, 16)) {
  case 0: /* flip a bit */
    if (b->n)
      b->p[below(r, b->n)] ^= (char)(1u << below(r, 8));
    break;
  case 1: /* set a byte */
    if (b->n) {
      c = below(r, 2)
              ? interesting_bytes[below(r, sizeof interesting_bytes - 1)]
              : (char)below(r, 256);
      b->p[below(r, b->n)] = c;
    }
    break;
  case 2: /* insert bytes */
  {
    char ins[4];
    size_t k, n = 1 + below(r, 4);
    for (k = 0; k < n; k++)
      ins[k] = below(r, 2)
                   ? interesting_bytes[below(r, sizeof interesting_bytes - 1)]
                   : (char)below(r, 256);
    buf_splice(b, below(r, b->n + 1), 0, ins, n);
    break;
  }
  case 3: /* delete a range */
    at = below(r, b->n + 1);
    buf_splice(b, at, 1 + below(r, below(r, 2) ? 4 : 64), NULL, 0);
    break;
  case 4: /* truncate */
    b->n = below(r, b->n + 1);
    b->p[b->n] = '\0';
    break;
  case 5: /* duplicate a slice */
  {
    char *tmp;
    at = below(r, b->n + 1);
    len = below(r, 2) ? below(r, 32) : below(r, 512);
    if (len > b->n - at)
      len = b->n - at;
    tmp = malloc(len + 1);
    assert_non_null(tmp);
    memcpy(tmp, b->p + at, len);
    buf_splice(b, below(r, b->n + 1), 0, tmp, len);
    free(tmp);
    break;
  }
  case 6:
  case 7: /* replace a number */
    if (find_number(r, b, &at, &len)) {
      const char *s = numbers[below(r, NNUMBERS)];
      buf_splice(b, at, len, s, strlen(s));
    }
    break;
  case 8: /* deep nesting */
  {
    struct buf t = {NULL, 0, 0};
    size_t depth = below(r, 4) ? 1 + below(r, 64) : 1 + below(r, 5000);
    buf_repeat(&t, below(r, 3) ? "[" : "{\"a\":", depth);
    if (below(r, 2))
      buf_repeat(&t, "]", depth);
    buf_splice(b, below(r, b->n + 1), 0, t.p, t.n);
    free(t.p);
    break;
  }
  case 9: /* quotes */
    if (find_string_lit(r, b, &at, &len)) {
      switch (below(r, 4)) {
      case 0: b->p[at] = '\''; break;
      case 1: b->p[at + len - 1] = '\''; break;
      case 2: buf_splice(b, at, 1, NULL, 0); break;
      default: buf_splice(b, at + len - 1, 0, "\\", 1); break;
      }
    }
    break;
  case 10: /* copy one string literal over another (names, references) */
    if (find_string_lit(r, b, &at, &len) &&
        find_string_lit(r, b, &at2, &len2)) {
      char *tmp = malloc(len + 1);
      assert_non_null(tmp);
      memcpy(tmp, b->p + at, len);
      buf_splice(b, at2, len2, tmp, len);
      free(tmp);
    }
    break;
  case 11: /* duplicate, drop or swap a line */
  {
    char *tmp;
    find_line(r, b, &at, &len);
    tmp = malloc(len + 2);
    assert_non_null(tmp);
    memcpy(tmp, b->p + at, len);
    tmp[len] = '\n';
    switch (below(r, 3)) {
    case 0: buf_splice(b, at, 0, tmp, len + 1); break;
    case 1: buf_splice(b, at, len + (at + len < b->n), NULL, 0); break;
    default:
      buf_splice(b, at, len + (at + len < b->n), NULL, 0);
      find_line(r, b, &at2, &len2);
      buf_splice(b, at2, 0, tmp, len + 1);
    }
    free(tmp);
    break;
  }
  case 12:
  case 13: /* insert a token */
  {
    const char *s = tokens[below(r, NTOKENS)];
    buf_splice(b, below(r, b->n + 1), below(r, 3) == 0 ? 1 : 0, s, strlen(s));
    break;
  }
  case 14: /* a NUL byte */ buf_splice(b, below(r, b->n + 1), 0, "", 1); break;
  default: /* replace a digit run with a huge digit string */
    if (find_number(r, b, &at, &len)) {
      struct buf t = {NULL, 0, 0};
      buf_repeat(&t, "9", 1 + below(r, 400));
      buf_splice(b, at, len, t.p, t.n);
      free(t.p);
    }
  }
}

static void mutate(struct rng *r, struct buf *b)
{
  size_t k, n = 1 + below(r, 3) + (below(r, 8) == 0 ? below(r, 8) : 0);
  for (k = 0; k < n; k++)
    mutate_once(r, b);
}

/* ---- structure-aware mutations of JSON documents ---------------------- */

struct jref {
  json_t *v, *parent; /* parent NULL: the root */
  const char *key;    /* in an object parent */
  size_t idx;         /* in an array parent */
};

struct jrefs {
  struct jref *r;
  size_t n, cap;
};

static void jrefs_add(struct jrefs *rs, json_t *v, json_t *parent,
                      const char *key, size_t idx)
{
  if (rs->n == rs->cap) {
    rs->cap = rs->cap ? rs->cap * 2 : 64;
    rs->r = realloc(rs->r, rs->cap * sizeof *rs->r);
    assert_non_null(rs->r);
  }
  rs->r[rs->n].v = v;
  rs->r[rs->n].parent = parent;
  rs->r[rs->n].key = key;
  rs->r[rs->n].idx = idx;
  rs->n++;
}

static void jrefs_collect(struct jrefs *rs, json_t *v, json_t *parent,
                          const char *key, size_t idx)
{
  jrefs_add(rs, v, parent, key, idx);
  if (json_is_object(v)) {
    const char *k;
    json_t *c;
    json_object_foreach(v, k, c) jrefs_collect(rs, c, v, k, 0);
  } else if (json_is_array(v)) {
    size_t i;
    json_t *c;
    json_array_foreach(v, i, c) jrefs_collect(rs, c, v, NULL, i);
  }
}

/* Replace the value at ref (not the root) with nv (stolen). */
static void jref_set(const struct jref *ref, json_t *nv)
{
  if (json_is_object(ref->parent))
    json_object_set_new(ref->parent, ref->key, nv);
  else
    json_array_set_new(ref->parent, ref->idx, nv);
}

static json_t *random_scalar(struct rng *r, const struct jrefs *rs)
{
  static const json_int_t ints[] = {-1,
                                    0,
                                    1,
                                    2,
                                    3,
                                    7,
                                    8,
                                    4096,
                                    2147483647,
                                    2147483648LL,
                                    4611686018427387904LL,
                                    9223372036854775807LL,
                                    -9223372036854775807LL};
  static const double reals[] = {0.5,  -0.0, 1e300, 1e-300,
                                 -2.5, 1e18, 4e18,  1.0000000000000002};
  switch (below(r, 7)) {
  case 0:
  case 1: return json_integer(ints[below(r, sizeof ints / sizeof ints[0])]);
  case 2: return json_real(reals[below(r, sizeof reals / sizeof reals[0])]);
  case 3: { /* a string found elsewhere in the document: names, refs */
    size_t k, start = below(r, rs->n);
    for (k = 0; k < rs->n; k++) {
      json_t *v = rs->r[(start + k) % rs->n].v;
      if (json_is_string(v))
        return json_string(json_string_value(v));
    }
    return json_string("x");
  }
  case 4: return json_null();
  case 5: return below(r, 2) ? json_true() : json_false();
  default: return json_string(below(r, 2) ? "" : "V100");
  }
}

/* One tree mutation; false when the document offers nothing to do. */
static bool tree_mutate_once(struct rng *r, json_t *root)
{
  struct jrefs rs = {NULL, 0, 0};
  struct jref *e;
  bool done = true;
  jrefs_collect(&rs, root, NULL, NULL, 0);
  if (rs.n < 2) {
    free(rs.r);
    return false;
  }
  e = &rs.r[1 + below(r, rs.n - 1)];
  switch (below(r, 9)) {
  case 0:
  case 1: /* a different scalar */ jref_set(e, random_scalar(r, &rs)); break;
  case 2: /* delete */
    if (json_is_object(e->parent))
      json_object_del(e->parent, e->key);
    else
      json_array_remove(e->parent, e->idx);
    break;
  case 3: /* duplicate an array element (a duplicate name, edge, row) */
    if (json_is_array(e->parent))
      json_array_insert_new(e->parent, below(r, json_array_size(e->parent) + 1),
                            json_deep_copy(e->v));
    else if (json_is_array(e->v) && json_array_size(e->v))
      json_array_append_new(e->v, json_deep_copy(json_array_get(
                                      e->v, below(r, json_array_size(e->v)))));
    else
      done = false;
    break;
  case 4: /* swap two elements of an array (order, cycles) */
    if (json_is_array(e->parent) && json_array_size(e->parent) > 1) {
      size_t j = below(r, json_array_size(e->parent));
      json_t *a = json_incref(json_array_get(e->parent, e->idx));
      json_t *b = json_incref(json_array_get(e->parent, j));
      json_array_set_new(e->parent, e->idx, b);
      json_array_set_new(e->parent, j, a);
    } else
      done = false;
    break;
  case 5: /* another part of the document in this place */
  {
    json_t *other = rs.r[below(r, rs.n)].v;
    jref_set(e, json_deep_copy(other));
    break;
  }
  case 6: /* an empty container */
    jref_set(e, below(r, 2) ? json_array() : json_object());
    break;
  case 7: /* a number nudged */
    if (json_is_integer(e->v)) {
      json_int_t x = json_integer_value(e->v);
      json_int_t nx = below(r, 3) == 0 ? -x : below(r, 2) ? x + 1 : x - 1;
      if (x == INT64_MIN || x == INT64_MAX)
        nx = 0;
      jref_set(e, json_integer(nx));
    } else if (json_is_real(e->v))
      jref_set(e, json_real(json_real_value(e->v) * (below(r, 2) ? -1 : 1e6)));
    else
      done = false;
    break;
  default: /* a new field in an object */
    if (json_is_object(e->v)) {
      static const char *const keys[] = {
          "tied_to",        "times",     "tp_sizes", "edges",    "hyper",
          "bytes",          "count",     "routing",  "switches", "links",
          "bandwidth_GBps", "local_gpu", "host",     "kind",     "update_ms",
          "micro_batch",    "type",      "tp"};
      json_object_set_new(e->v, keys[below(r, sizeof keys / sizeof keys[0])],
                          random_scalar(r, &rs));
    } else
      done = false;
  }
  free(rs.r);
  return done;
}

/* Mutate the document text in b as a tree; false if it does not parse. */
static bool tree_mutate(struct rng *r, struct buf *b)
{
  json_error_t err;
  json_t *root = json_loadb(b->p, b->n, 0, &err);
  size_t k, n = 1 + below(r, 3);
  char *text;
  if (!root)
    return false;
  for (k = 0; k < n; k++)
    tree_mutate_once(r, root);
  text = json_dumps(root, JSON_COMPACT | (below(r, 2) ? JSON_INDENT(1) : 0));
  json_decref(root);
  if (!text)
    return false;
  buf_set(b, text, strlen(text));
  free(text);
  return true;
}

/* ---- the harness ------------------------------------------------------ */

enum reader {
  RD_MODEL_JSON,
  RD_CLUSTER_JSON,
  RD_PIPEDREAM,
  RD_MODEL_SPEC,
  RD_CLUSTER_SPEC,
  RD_CALIB,
  RD_NVSMI,
  RD_NCCL_XML,
  RD_ROCM_SMI,
  RD_ONNX,
  RD_LOG,
  RD_RUNS,
  RD_N
};
static const char *const reader_name[] = {
    "model json",   "cluster json", "pipedream",    "model spec",
    "cluster spec", "calibration",  "nvidia-smi",   "nccl xml",
    "rocm-smi",     "onnx",         "training log", "runs"};
static const char *const reader_src[] = {"fuzz.json",
                                         "fuzz.json",
                                         "fuzz.txt",
                                         NULL,
                                         NULL,
                                         "fuzz-calib.json",
                                         "fuzz-topo.txt",
                                         "fuzz.xml",
                                         "fuzz-rocm.txt",
                                         "fuzz.onnx",
                                         "fuzz.log",
                                         "fuzz-runs.json"};
/* Readers of formats that are not JSON (no tree mutations). */
#define NOT_JSON(rd)                                                           \
  ((rd) == RD_PIPEDREAM || ((rd) >= RD_NVSMI && (rd) != RD_RUNS))

struct fz {
  struct tu_alloc a;
  pp_ctx *ctx;
  bool save_all;
  /* the input being fed, for reports */
  const char *seed_name;
  long iter;
  enum reader rd;
  const char *text;
  size_t len;
  /* figures */
  long fed[RD_N], ok[RD_N], err[RD_N];
  long by_status[16];
  long spec_msg_without_spec;
  long skipped;
  long tree_mutants;
  const char *src_override; /* the source name given to file readers */
  /* failures inside the fuzz loops are collected, not fatal at once */
  bool soft, in_feed;
  jmp_buf jb;
  long nfail;
  char first_fail[2400];
  pp_model *m;
  pp_cluster *c;
};

static struct fz *cur;
static long saved_failures; /* numbers the saved inputs of this run */

/* Save the current input and fail with a message.  Inside the fuzz loops
** (soft mode) the failure is printed and counted and the loop goes on;
** fz_done fails the test. */
static void fz_fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));
static void fz_fail(const char *fmt, ...)
{
  char msg[1400], path[600], name[64], full[2400];
  va_list ap;
  FILE *f;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  snprintf(name, sizeof name, "fuzz-failure-%ld.bin", saved_failures++);
  snprintf(path, sizeof path, "%s", tu_tmp(name));
  f = fopen(path, "wb");
  if (f) {
    fwrite(cur->text, 1, cur->len, f);
    fclose(f);
  }
  snprintf(full, sizeof full,
           "%s: mutant %ld fed to the %s reader (saved as %s, %zu bytes): %s",
           cur->seed_name, cur->iter, reader_name[cur->rd], path, cur->len,
           msg);
  if (cur->soft && cur->in_feed) {
    cur->in_feed = false;
    if (cur->nfail == 0)
      snprintf(cur->first_fail, sizeof cur->first_fail, "%s", full);
    if (cur->nfail < 12)
      print_message("FUZZ FAILURE %ld: %.700s\n", cur->nfail, full);
    cur->nfail++;
    longjmp(cur->jb, 1);
  }
  fail_msg("%s", full);
  abort(); /* not reached: fail_msg does not return */
}

#define FZ_CHECK(cond)                                                         \
  do {                                                                         \
    if (!(cond))                                                               \
      fz_fail("check failed: %s (line %d)", #cond, __LINE__);                  \
  } while (0)

static char *mem_model_write(const pp_model *m, size_t *n)
{
  char *p = NULL;
  FILE *f = open_memstream(&p, n);
  FZ_CHECK(f != NULL);
  FZ_CHECK(pp_model_write(cur->ctx, m, NULL, f) == PP_OK);
  fclose(f);
  return p;
}

static char *mem_cluster_write(const pp_cluster *c, size_t *n)
{
  char *p = NULL;
  FILE *f = open_memstream(&p, n);
  FZ_CHECK(f != NULL);
  FZ_CHECK(pp_cluster_write(cur->ctx, c, NULL, f) == PP_OK);
  fclose(f);
  return p;
}

/* describe (text and JSON); the JSON form must parse. */
static void check_describe(const pp_model *m, const pp_cluster *c)
{
  int json;
  for (json = 0; json < 2; json++) {
    char *p = NULL;
    size_t n = 0;
    pp_status rc;
    FILE *f = open_memstream(&p, &n);
    FZ_CHECK(f != NULL);
    rc = m ? pp_model_describe(cur->ctx, m, json, f)
           : pp_cluster_describe(cur->ctx, c, json, f);
    fclose(f);
    if (rc != PP_OK) {
      free(p);
      fz_fail("describe (json %d) failed: %d %s", json, rc,
              pp_ctx_errmsg(cur->ctx));
    }
    FZ_CHECK(n > 0);
    if (json) {
      json_error_t err;
      json_t *j = json_loadb(p, n, 0, &err);
      if (!j) {
        fz_fail("describe --json is not valid JSON (%d:%d: %s): %.300s",
                err.line, err.column, err.text, p);
      }
      json_decref(j);
    }
    free(p);
  }
}

static void check_model(const pp_model *m, bool roundtrip)
{
  int32_t nop = pp_model_nop(m), ne = pp_model_nedge(m), i, e, sum = 0;
  const int32_t *topo = pp_model_topo_order(m);
  int32_t *pos;
  pp_model_stats st;
  pp_model *v = NULL;
  int every;

  FZ_CHECK(nop >= 1);
  FZ_CHECK(ne >= 0);
  FZ_CHECK(topo != NULL);
  FZ_CHECK(pp_model_micro_batch(m) >= 1);
  pos = malloc(sizeof *pos * (size_t)nop);
  FZ_CHECK(pos != NULL);
  for (i = 0; i < nop; i++)
    pos[i] = -1;
  for (i = 0; i < nop; i++) {
    FZ_CHECK(topo[i] >= 0 && topo[i] < nop);
    FZ_CHECK(pos[topo[i]] == -1); /* a permutation */
    pos[topo[i]] = i;
  }
  for (e = 0; e < ne; e++) {
    int32_t from = -1, to = -1;
    int64_t bytes = -1;
    FZ_CHECK(pp_model_edge(m, e, &from, &to, &bytes) == PP_OK);
    FZ_CHECK(from >= 0 && from < nop && to >= 0 && to < nop);
    FZ_CHECK(pos[from] < pos[to]); /* every edge goes forward */
    FZ_CHECK(bytes >= 0);
  }
  for (i = 0; i < nop; i++) {
    pp_op_desc d;
    const int32_t *es;
    int32_t n, k;
    FZ_CHECK(pp_model_op(m, i, &d) == PP_OK);
    FZ_CHECK(d.name && d.name[0]);
    FZ_CHECK(pp_model_find_op(m, d.name) == i);
    FZ_CHECK(isfinite(d.fwd_ms) && d.fwd_ms >= 0);
    FZ_CHECK(isfinite(d.bwd_ms) && d.bwd_ms >= 0);
    FZ_CHECK(isfinite(d.update_ms) && d.update_ms >= 0);
    FZ_CHECK(d.param_bytes >= 0 && d.out_bytes >= 0 && d.saved_bytes >= 0);
    FZ_CHECK(pp_model_op_tied(m, i) >= -1 && pp_model_op_tied(m, i) < nop &&
             pp_model_op_tied(m, i) != i);
    pp_model_op_edges(m, i, 0, &es, &n);
    sum += n;
    for (k = 0; k < n; k++) {
      int32_t from = -1, to = -1;
      pp_model_edge(m, es[k], &from, &to, NULL);
      FZ_CHECK(from == i);
    }
  }
  FZ_CHECK(sum == ne);
  free(pos);
  if (pp_model_is_chain(m))
    FZ_CHECK(ne == nop - 1);

  memset(&st, 0, sizeof st);
  FZ_CHECK(pp_model_stats_get(cur->ctx, m, &st) == PP_OK);
  FZ_CHECK(st.nop == nop && st.nedge == ne);
  FZ_CHECK(st.depth >= 1 && st.depth <= nop);
  FZ_CHECK(st.width >= 1 && st.width <= nop);
  FZ_CHECK(st.nlayer >= 1 && st.nlayer <= nop);
  FZ_CHECK(st.nsource >= 1 && st.nsink >= 1);
  /* Times and sizes at other points: the reference, a profiled type, a
  ** type known only by speed and peak; other tp and micro-batch sizes.
  ** Scaling may overflow to infinity, but never gives NaN or < 0. */
  {
    static const pp_type_key keys[] = {
        {.name = NULL, .speed = 1, .peak_tflops = 0},
        {.name = "V100", .speed = 1, .peak_tflops = 125},
        {.name = "T4", .speed = 0.72, .peak_tflops = 65},
        {.name = "A100-80", .speed = 3.457, .peak_tflops = 312},
        {.name = "NoSuch", .speed = 0.5, .peak_tflops = 0}};
    static const int32_t points[][2] = {{1, 1}, {2, 1}, {4, 3}, {3, 64}};
    size_t k, q;
    for (i = 0; i < nop; i++)
      for (q = 0; q < sizeof points / sizeof points[0]; q++) {
        pp_op_sizes sz;
        FZ_CHECK(pp_model_op_sizes(m, i, points[q][0], points[q][1], &sz) ==
                 PP_OK);
        FZ_CHECK(sz.param_bytes >= 0 && sz.out_bytes >= 0 &&
                 sz.saved_bytes >= 0);
        for (k = 0; k < sizeof keys / sizeof keys[0]; k++) {
          pp_op_time t;
          FZ_CHECK(pp_model_op_time(m, i, &keys[k], points[q][0], points[q][1],
                                    &t) == PP_OK);
          if (!(t.fwd_ms >= 0 && t.bwd_ms >= 0 && t.update_ms >= 0))
            fz_fail("op %d on %s at tp %d, mbs %d: times %g %g %g", i,
                    keys[k].name ? keys[k].name : "(reference)", points[q][0],
                    points[q][1], t.fwd_ms, t.bwd_ms, t.update_ms);
        }
      }
  }
  /* The chain view sums layer costs: a sum that overflows to infinity
  ** may be refused (EINPUT or ELIMIT, with a message), nothing else. */
  for (every = 0; every < 2; every++) {
    pp_status rc = pp_model_chain_view(cur->ctx, m, every, &v);
    if (rc != PP_OK) {
      if ((rc != PP_EINPUT && rc != PP_ELIMIT) || !pp_ctx_errmsg(cur->ctx)[0])
        fz_fail("chain view %d failed: %d %s", every, rc,
                pp_ctx_errmsg(cur->ctx));
      FZ_CHECK(v == NULL);
      pp_ctx_clear_error(cur->ctx);
      continue;
    }
    FZ_CHECK(pp_model_is_chain(v));
    FZ_CHECK(pp_model_nop(v) == (every ? nop : st.nlayer));
    pp_model_destroy(v);
  }
  check_describe(m, NULL);

  if (roundtrip) {
    size_t n1 = 0, n2 = 0;
    char *t1 = mem_model_write(m, &n1), *t2;
    pp_model *m2 = NULL;
    pp_status rc = pp_model_read_json(cur->ctx, t1, n1, "roundtrip.json", &m2);
    if (rc != PP_OK)
      fz_fail("the written model does not read back: %s\n%.2000s",
              pp_ctx_errmsg(cur->ctx), t1);
    t2 = mem_model_write(m2, &n2);
    pp_model_destroy(m2);
    if (n1 != n2 || memcmp(t1, t2, n1) != 0)
      fz_fail("write -> read -> write differs:\n%.1000s\n----\n%.1000s", t1,
              t2);
    free(t1);
    free(t2);
  }
}

static void check_cluster(const pp_cluster *c)
{
  int32_t n = pp_cluster_ndev(c), i, j, nt = pp_cluster_ntype(c);
  const double *bw = pp_cluster_bandwidth_matrix(c);
  pp_bw_class cl[4];
  int32_t ncl = 0;

  FZ_CHECK(n >= 1);
  FZ_CHECK(nt >= 1);
  FZ_CHECK(pp_cluster_nnode(c) >= 1 && pp_cluster_nnode(c) <= n);
  FZ_CHECK(bw != NULL);
  for (i = 0; i < nt; i++) {
    pp_device_type_desc d;
    FZ_CHECK(pp_cluster_type(c, i, &d) == PP_OK);
    FZ_CHECK(d.memory_gib > 0 && isfinite(d.memory_gib));
    FZ_CHECK(d.speed > 0 && isfinite(d.speed));
    FZ_CHECK(pp_cluster_find_type(c, d.name) == i);
  }
  for (i = 0; i < n; i++) {
    pp_device_desc d;
    FZ_CHECK(pp_cluster_device(c, i, &d) == PP_OK);
    FZ_CHECK(pp_cluster_find_device(c, d.name) == i);
    FZ_CHECK(pp_cluster_device_type(c, i) >= 0 &&
             pp_cluster_device_type(c, i) < nt);
    FZ_CHECK(pp_cluster_device_node(c, i) >= 0);
    FZ_CHECK(bw[(size_t)i * n + i] == 0);
    for (j = 0; j < n; j++) {
      double x = bw[(size_t)i * n + j];
      if (i == j)
        continue;
      if (!(x > 0 && isfinite(x)))
        fz_fail("bandwidth %d-%d is %g", i, j, x);
      if (x != bw[(size_t)j * n + i])
        fz_fail("bandwidth not symmetric: %d-%d %g, %d-%d %g", i, j, x, j, i,
                bw[(size_t)j * n + i]);
      FZ_CHECK(pp_cluster_bandwidth(c, i, j) == x);
    }
  }
  FZ_CHECK(pp_cluster_bw_classes(cur->ctx, c, cl, 4, &ncl) == PP_OK);
  FZ_CHECK(n == 1 || ncl != 0);
  check_describe(NULL, c);
  {
    size_t n1 = 0, n2 = 0;
    char *t1 = mem_cluster_write(c, &n1), *t2;
    pp_cluster *c2 = NULL;
    pp_status rc =
        pp_cluster_read_json(cur->ctx, t1, n1, "roundtrip.json", &c2);
    if (rc != PP_OK)
      fz_fail("the written cluster does not read back: %s\n%.2000s",
              pp_ctx_errmsg(cur->ctx), t1);
    t2 = mem_cluster_write(c2, &n2);
    pp_cluster_destroy(c2);
    if (n1 != n2 || memcmp(t1, t2, n1) != 0)
      fz_fail("write -> read -> write differs:\n%.1000s\n----\n%.1000s", t1,
              t2);
    free(t1);
    free(t2);
  }
}

/* An error status must carry a message naming the input. */
static void check_error(pp_status rc, const char *src)
{
  const char *msg = pp_ctx_errmsg(cur->ctx);
  if (rc == PP_EINVAL || rc == PP_EINTERNAL || rc == PP_ECANCELED ||
      (int)rc < 0 || (int)rc > PP_ECANCELED)
    fz_fail("unexpected status %d (%s): %s", rc, pp_status_str(rc), msg);
  if (!msg[0])
    fz_fail("status %d (%s) without a message", rc, pp_status_str(rc));
  if (pp_ctx_errcode(cur->ctx) != rc)
    fz_fail("returned %d but the context holds %d: %s", rc,
            pp_ctx_errcode(cur->ctx), msg);
  if (src && !strstr(msg, src))
    fz_fail("the message does not name \"%s\": %s", src, msg);
}

static bool path_exists(const char *p)
{
  struct stat st;
  return stat(p, &st) == 0;
}

/* Feed text to a reader, check, destroy, check the allocator balance. */
static void feed(struct fz *z, enum reader rd, const char *text, size_t len)
{
  long live0 = z->a.live;
  size_t bytes0 = z->a.bytes;
  volatile pp_status rc = PP_OK;
  const char *src = z->src_override ? z->src_override : reader_src[rd];

  z->rd = rd;
  z->text = text;
  z->len = len;
  z->m = NULL;
  z->c = NULL;
  if (z->save_all) {
    FILE *f = fopen(tu_tmp("fuzz-current.bin"), "wb");
    if (f) {
      fwrite(text, 1, len, f);
      fclose(f);
    }
  }
  pp_ctx_clear_error(z->ctx);
  z->in_feed = true;
  if (z->soft && setjmp(z->jb)) {
    /* A check failed: drop the objects, forget what the abandoned
    ** checks held, go on with the next input. */
    pp_model_destroy(z->m);
    pp_cluster_destroy(z->c);
    z->m = NULL;
    z->c = NULL;
    pp_ctx_clear_error(z->ctx);
    return;
  }
  switch (rd) {
  case RD_MODEL_JSON:
    rc = pp_model_read_json(z->ctx, text, len, src, &z->m);
    break;
  case RD_CLUSTER_JSON:
    rc = pp_cluster_read_json(z->ctx, text, len, src, &z->c);
    break;
  case RD_PIPEDREAM:
    rc = pp_model_read_pipedream(z->ctx, text, len, src, &z->m);
    break;
  case RD_MODEL_SPEC: rc = pp_model_load(z->ctx, text, &z->m); break;
  case RD_CLUSTER_SPEC: rc = pp_cluster_load(z->ctx, text, &z->c); break;
  case RD_NVSMI: {
    pp_topo_params tp; /* the type: nvidia-smi's matrix does not say it */
    pp_topo_params_init(&tp);
    tp.gpu = "V100";
    rc = pp_cluster_read_nvsmi(z->ctx, text, len, src, &tp, &z->c);
    break;
  }
  case RD_NCCL_XML:
    rc = pp_cluster_read_nccl_xml(z->ctx, text, len, src, NULL, &z->c);
    break;
  case RD_ROCM_SMI: {
    pp_topo_params tp;
    pp_topo_params_init(&tp);
    tp.gpu = "A100-80";
    tp.nvlink_gbps = 48;
    rc = pp_cluster_read_rocm_smi(z->ctx, text, len, src, &tp, &z->c);
    break;
  }
  case RD_ONNX:
    rc = pp_model_read_onnx(z->ctx, text, len, src, NULL, &z->m);
    break;
  case RD_CALIB: {
    pp_calibration *cal = NULL;
    rc = pp_calibration_read_json(z->ctx, text, len, src, &cal);
    if (rc == PP_OK) {
      int32_t k;
      for (k = 0; k < pp_calibration_count(cal); k++) {
        pp_calib_entry e;
        FZ_CHECK(pp_calibration_get(cal, k, &e) == PP_OK);
        /* what the reader accepted, the checks accept again */
        if (!e.type || !pp_engine_name(e.engine) ||
            !pp_precision_name(e.precision) || e.slack < 0 || e.slack > 10 ||
            e.compute_scale <= 0 || e.step_ms < 0 || e.runtime_bytes < 0)
          fz_fail("calibration entry %d out of range", (int)k);
      }
    } else if (cal)
      fz_fail("status %d but a calibration", rc);
    pp_calibration_destroy(cal);
    break;
  }
  case RD_RUNS: {
    pp_runs *runs = NULL;
    rc = pp_runs_read_json(z->ctx, text, len, src, &runs);
    if (rc == PP_OK) {
      const pp_run_record *r = pp_runs_records(runs);
      int32_t k;
      for (k = 0; k < pp_runs_count(runs); k++)
        /* a run is priced (plan, model, cluster) or a link measurement */
        if (!r[k].cluster || (!!r[k].plan != !!r[k].model) ||
            (r[k].failed != 0 && r[k].failed != 1 && r[k].failed != 2) ||
            isinf(r[k].iteration_ms) || isinf(r[k].peak_memory_bytes))
          fz_fail("run %d out of range", (int)k);
    } else if (runs)
      fz_fail("status %d but runs", rc);
    pp_runs_destroy(runs);
    break;
  }
  case RD_LOG: {
    pp_log_summary ls;
    rc = pp_log_read(z->ctx, text, len, src, &ls);
    if (rc == PP_OK &&
        (!ls.format || ls.iterations < 0 || ls.iteration_ms < 0 ||
         ls.peak_memory_bytes < 0 || isinf(ls.peak_memory_bytes) ||
         isinf(ls.iteration_ms) || (ls.failed != 0 && ls.failed != 1)))
      fz_fail("a summary out of range: %s, %g ms of %d, %g bytes, failed %d",
              ls.format ? ls.format : "(null)", ls.iteration_ms,
              (int)ls.iterations, ls.peak_memory_bytes, ls.failed);
    if (rc != PP_OK && ls.format)
      fz_fail("status %d but a format", rc);
    break;
  }
  case RD_N: break;
  }
  z->fed[rd]++;
  z->by_status[(unsigned)rc < 16 ? (unsigned)rc : 15]++;
  if (rc == PP_OK) {
    z->ok[rd]++;
    if (z->m)
      check_model(z->m, true);
    else if (z->c)
      check_cluster(z->c);
    else if (rd != RD_LOG && rd != RD_CALIB && rd != RD_RUNS)
      fz_fail("PP_OK without an object");
  } else {
    z->err[rd]++;
    if (z->m || z->c)
      fz_fail("status %d but *out is not NULL", rc);
    check_error(rc, src);
    if (!src && len < 200 && !strstr(pp_ctx_errmsg(z->ctx), text)) {
      if (getenv("PP_FUZZ_VERBOSE") && z->spec_msg_without_spec < 20)
        print_message("  spec '%s': %s\n", text, pp_ctx_errmsg(z->ctx));
      z->spec_msg_without_spec++;
    }
  }
  pp_model_destroy(z->m);
  pp_cluster_destroy(z->c);
  z->m = NULL;
  z->c = NULL;
  if (z->a.live != live0 || z->a.bytes != bytes0)
    fz_fail("leak: %ld blocks, %zu bytes", z->a.live - live0,
            z->a.bytes - bytes0);
  z->in_feed = false;
  pp_ctx_clear_error(z->ctx);
}

static long scale(void)
{
  const char *s = getenv("PP_FUZZ_SCALE");
  long k = s ? atol(s) : 1;
  return k > 0 ? k : 1;
}

static void fz_init(struct fz *z, bool soft)
{
  memset(z, 0, sizeof *z);
  z->soft = soft;
  z->ctx = tu_ctx(&z->a);
  z->save_all = getenv("PP_FUZZ_SAVE") != NULL;
  cur = z;
}

static void fz_done(struct fz *z, const char *what)
{
  int rd;
  long total = 0;
  for (rd = 0; rd < RD_N; rd++)
    total += z->fed[rd];
  print_message("%s: %ld inputs fed", what, total);
  for (rd = 0; rd < RD_N; rd++)
    if (z->fed[rd])
      print_message("; %s %ld (%ld ok, %ld errors)", reader_name[rd],
                    z->fed[rd], z->ok[rd], z->err[rd]);
  print_message("\n  by status:");
  for (rd = 0; rd < 16; rd++)
    if (z->by_status[rd])
      print_message(" %s %ld,", pp_status_str((pp_status)rd), z->by_status[rd]);
  print_message(" skipped %ld; %ld mutants made on the JSON tree\n", z->skipped,
                z->tree_mutants);
  if (z->spec_msg_without_spec)
    print_message("  (%ld spec errors do not quote the spec)\n",
                  z->spec_msg_without_spec);
  pp_ctx_destroy(z->ctx);
  cur = NULL;
  if (z->nfail)
    fail_msg("%s: %ld inputs failed the checks; the first: %s", what, z->nfail,
             z->first_fail);
  assert_int_equal(z->a.live, 0);
}

/* Mutate one seed input `count` times, feeding each mutant to rd (and
** some to the other readers too). */
static void fuzz_text(struct fz *z, const char *name, const char *text,
                      size_t len, enum reader rd, long count, uint64_t seed)
{
  struct rng r;
  struct buf b = {NULL, 0, 0};
  long i;
  rng_seed(&r, seed);
  z->seed_name = name;
  z->iter = -1;
  feed(z, rd, text, len); /* the seed itself is valid */
  FZ_CHECK(z->ok[rd] > 0);
  for (i = 0; i < count; i++) {
    z->iter = i;
    buf_set(&b, text, len);
    /* A third of the JSON mutants are made on the parsed tree, so that
    ** they reach the semantic checks; the rest byte by byte. */
    if (NOT_JSON(rd) || i % 3 != 0 || !tree_mutate(&r, &b)) {
      buf_set(&b, text, len);
      mutate(&r, &b);
    } else {
      z->tree_mutants++;
      if (below(&r, 8) == 0)
        mutate(&r, &b); /* and sometimes a byte-level one on top */
    }
    feed(z, rd, b.p, b.n);
    /* Cross-feeding: the JSON readers see each other's documents, and
    ** the PipeDream reader sees some JSON. */
    if (i % 8 == 0) {
      if (rd == RD_MODEL_JSON)
        feed(z, RD_CLUSTER_JSON, b.p, b.n);
      else if (rd == RD_CLUSTER_JSON)
        feed(z, RD_MODEL_JSON, b.p, b.n);
      else
        feed(z, RD_MODEL_JSON, b.p, b.n);
    }
    if (i % 16 == 5 && rd != RD_PIPEDREAM)
      feed(z, RD_PIPEDREAM, b.p, b.n);
  }
  free(b.p);
}

/* ---- spec fuzzing ----------------------------------------------------- */

/* A mutated spec is fed only when it names no file (so the loader does
** not read one) and asks for a bounded amount of work. */
static bool cluster_spec_ok(const char *s)
{
  const char *colon = strchr(s, ':'), *p;
  double prod = 1;
  if (strchr(s, '/') || path_exists(s))
    return false;
  if (!colon)
    return true;
  p = colon + 1;
  while (*p) {
    const char *end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (!memchr(p, '=', n)) {
      size_t k = 0;
      while (k < n) {
        if (p[k] >= '0' && p[k] <= '9') {
          double v = 0;
          while (k < n && p[k] >= '0' && p[k] <= '9')
            v = v * 10 + (p[k++] - '0');
          if (v > 1)
            prod *= v;
        } else
          k++;
      }
    }
    p += n;
    if (*p == ',')
      p++;
  }
  /* dgx1:N has 8 GPUs a node. */
  if (strncmp(s, "dgx1", 4) == 0)
    prod *= 8;
  return prod <= 600;
}

static bool model_spec_ok(const char *s)
{
  const char *p = s;
  if (strchr(s, '/') || path_exists(s))
    return false;
  while ((p = strstr(p, "layers=")) != NULL) {
    p += 7;
    while (*p == ' ' || *p == '+' || *p == '0')
      p++;
    if (strspn(p, "0123456789") > 3)
      return false;
  }
  return true;
}

static void fuzz_spec(struct fz *z, const char *spec, enum reader rd,
                      long count, uint64_t seed)
{
  struct rng r;
  struct buf b = {NULL, 0, 0};
  long i;
  rng_seed(&r, seed);
  z->seed_name = spec;
  z->iter = -1;
  feed(z, rd, spec, strlen(spec));
  FZ_CHECK(z->ok[rd] > 0);
  for (i = 0; i < count; i++) {
    z->iter = i;
    buf_set(&b, spec, strlen(spec));
    mutate(&r, &b);
    b.n = strlen(b.p); /* a spec is a C string */
    if (!(rd == RD_CLUSTER_SPEC ? cluster_spec_ok(b.p) : model_spec_ok(b.p))) {
      z->skipped++;
      continue;
    }
    feed(z, rd, b.p, b.n);
    if (rd == RD_CLUSTER_SPEC && i % 4 == 0 && model_spec_ok(b.p))
      feed(z, RD_MODEL_SPEC, b.p, b.n);
  }
  free(b.p);
}

/* ---- the fuzz tests --------------------------------------------------- */

static const struct {
  const char *path;
  enum reader rd;
} seed_files[] = {
    {"examples/model-minimal.json", RD_MODEL_JSON},
    {"examples/model-chain.json", RD_MODEL_JSON},
    {"examples/model-dag.json", RD_MODEL_JSON},
    {"examples/cluster-minimal.json", RD_CLUSTER_JSON},
    {"examples/cluster-matrix.json", RD_CLUSTER_JSON},
    {"examples/cluster-links.json", RD_CLUSTER_JSON},
    {"examples/pipedream-tiny.txt", RD_PIPEDREAM},
    {"data/pipedream/resnet18/graph.txt", RD_PIPEDREAM},
    {"examples/nvsmi-dgx1.txt", RD_NVSMI},
    {"examples/nvsmi-dgx-a100.txt", RD_NVSMI},
    {"examples/nccl-topo-dgx1.xml", RD_NCCL_XML},
    {"examples/nccl-topo-dgx-a100.xml", RD_NCCL_XML},
    {"tests/data/dumps/nvsmi-hgx-a100.txt", RD_NVSMI},
    {"tests/data/dumps/rccl-topo-mi250.xml", RD_NCCL_XML},
    {"tests/data/dumps/rocm-smi-showtopo-mi250x.txt", RD_ROCM_SMI},
    {"tests/data/logs/megatron-ranks.log", RD_LOG},
    {"tests/data/logs/deepspeed-zero.log", RD_LOG},
    {"tests/data/logs/nvsmi-used-gpus.csv", RD_LOG},
    {"tests/golden/expected/79/files/cal.json", RD_CALIB},
    {"tests/data/runs/runs-small.json", RD_RUNS},
};

static void test_fuzz_files(void **state)
{
  struct fz z;
  size_t i;
  (void)state;
  fz_init(&z, true);
  for (i = 0; i < sizeof seed_files / sizeof seed_files[0]; i++) {
    size_t len = 0;
    char *text = tu_slurp(tu_path(seed_files[i].path), &len);
    long n = FZ_PER_FILE * scale();
    if (!text)
      fail_msg("cannot read %s", seed_files[i].path);
    if (len > 8000) /* the big graph costs more per mutant */
      n /= 3;
    fuzz_text(&z, seed_files[i].path, text, len, seed_files[i].rd, n, 1000 + i);
    free(text);
  }
  { /* an ONNX model built through the protoc-c bindings */
    size_t len = 0;
    uint8_t *b = ob_build(OB_OK, &len);
    FZ_CHECK(b != NULL);
    fuzz_text(&z, "tiny.onnx", (const char *)b, len, RD_ONNX,
              FZ_PER_FILE * scale(), 1100);
    free(b);
  }
  fz_done(&z, "seed files");
}

/* The normalized writes of built-ins: profile tables, tp sizes, ties,
** hyper-parameters, link graphs with bonded links. */
static void test_fuzz_written(void **state)
{
  /* opt-350 writes 420 KB (tables for seven device types): few mutants. */
  static const char *const models[] = {"gpt2-amp", "transgan-amp", "opt-350"};
  static const long mdiv[] = {1, 1, 10};
  static const char *const clusters[] = {"hier:2x2", "dgx1", "mesh2d:2x3"};
  struct fz z;
  size_t i;
  (void)state;
  fz_init(&z, true);
  for (i = 0; i < sizeof models / sizeof models[0]; i++) {
    pp_model *m = NULL;
    size_t n = 0;
    char *t;
    if (pp_model_load(z.ctx, models[i], &m) != PP_OK)
      fail_msg("%s: %s", models[i], pp_ctx_errmsg(z.ctx));
    t = mem_model_write(m, &n);
    pp_model_destroy(m);
    fuzz_text(&z, models[i], t, n, RD_MODEL_JSON,
              FZ_PER_WRITTEN * scale() / mdiv[i], 2000 + i);
    free(t);
  }
  for (i = 0; i < sizeof clusters / sizeof clusters[0]; i++) {
    pp_cluster *c = NULL;
    size_t n = 0;
    char *t;
    if (pp_cluster_load(z.ctx, clusters[i], &c) != PP_OK)
      fail_msg("%s: %s", clusters[i], pp_ctx_errmsg(z.ctx));
    t = mem_cluster_write(c, &n);
    pp_cluster_destroy(c);
    fuzz_text(&z, clusters[i], t, n, RD_CLUSTER_JSON, FZ_PER_WRITTEN * scale(),
              3000 + i);
    free(t);
  }
  fz_done(&z, "written built-ins");
}

static void test_fuzz_specs(void **state)
{
  static const char *const cspecs[] = {
      "hier:4x8,intra=300",
      "hier:2x4,intra=300,inter=25,gpu=A100-80,latency=5",
      "dgx1:2,pcie=10,inter=3.125",
      "nvswitch:2x4,gpu=H100",
      "mesh2d:4x4,link=25,routing=hops",
      "torus3d:2x2x3,routing=widest",
      "random_blk_1:16,block=4,seed=3",
      "random_blk_2:32,block=4,super=2,seed=9",
      "uniform_dist:8,lo=1,hi=100,seed=5",
      "amp-het-cluster",
  };
  static const char *const mspecs[] = {
      "transformer:layers=4,hidden=256,heads=4,seq=128,vocab=1000",
      ("transformer:layers=2,hidden=64,heads=2,seq=16,vocab=50,ffn=128,mbs=2,"
       "gpu=A100-80,eff=0.5,bytes=2,tie=0"),
      "gpt2-amp",
      "transformer",
  };
  struct fz z;
  size_t i;
  (void)state;
  fz_init(&z, true);
  for (i = 0; i < sizeof cspecs / sizeof cspecs[0]; i++)
    fuzz_spec(&z, cspecs[i], RD_CLUSTER_SPEC, FZ_PER_SPEC * scale(), 4000 + i);
  for (i = 0; i < sizeof mspecs / sizeof mspecs[0]; i++)
    fuzz_spec(&z, mspecs[i], RD_MODEL_SPEC, FZ_PER_SPEC * scale(), 5000 + i);
  fz_done(&z, "specs");
}

/* ---- hand-written adversarial inputs ---------------------------------- */

static pp_status read_model(struct fz *z, const struct buf *b, pp_model **m)
{
  z->seed_name = "adversarial";
  z->rd = RD_MODEL_JSON;
  z->text = b->p;
  z->len = b->n;
  pp_ctx_clear_error(z->ctx);
  return pp_model_read_json(z->ctx, b->p, b->n, "fuzz.json", m);
}

static pp_status read_cluster(struct fz *z, const struct buf *b, pp_cluster **c)
{
  z->seed_name = "adversarial";
  z->rd = RD_CLUSTER_JSON;
  z->text = b->p;
  z->len = b->n;
  pp_ctx_clear_error(z->ctx);
  return pp_cluster_read_json(z->ctx, b->p, b->n, "fuzz.json", c);
}

/* Expect status want (or alt, unless alt is PP_OK); for an error, a
** message naming the input that contains `has` if given. */
static void expect_status(struct fz *z, pp_status got, const char *has,
                          pp_status want, pp_status alt)
{
  const char *msg = pp_ctx_errmsg(z->ctx);
  if (got != want && (alt == PP_OK || got != alt))
    fz_fail("status %d (%s), expected %d%s: %s", got, pp_status_str(got), want,
            alt != PP_OK ? " or another" : "", msg);
  if (got != PP_OK) {
    check_error(got, z->rd == RD_PIPEDREAM ? "fuzz.txt" : "fuzz.json");
    if (has && !strstr(msg, has))
      fz_fail("the message lacks \"%s\": %s", has, msg);
  }
}

static const char *op_json(struct buf *b, const char *name)
{
  buf_puts(b, "{\"name\": \"");
  buf_puts(b, name);
  buf_puts(b, "\", \"fwd_ms\": 1, \"bwd_ms\": 2, \"param_bytes\": 1, "
              "\"out_bytes\": 1, \"saved_bytes\": 1}");
  return b->p;
}

static void test_deep_nesting(void **state)
{
  struct fz z;
  struct buf b = {NULL, 0, 0};
  pp_model *m = NULL;
  pp_cluster *c = NULL;
  pp_status rc;
  (void)state;
  fz_init(&z, false);
  /* 100,000 unbalanced brackets. */
  buf_repeat(&b, "[", 100000);
  rc = read_model(&z, &b, &m);
  expect_status(&z, rc, NULL, PP_EPARSE, PP_OK);
  FZ_CHECK(m == NULL);
  rc = read_cluster(&z, &b, &c);
  expect_status(&z, rc, NULL, PP_EPARSE, PP_OK);
  /* Balanced, inside a field. */
  b.n = 0;
  buf_puts(&b, "{\"ops\": ");
  buf_repeat(&b, "[", 100000);
  buf_repeat(&b, "]", 100000);
  buf_puts(&b, "}");
  rc = read_model(&z, &b, &m);
  expect_status(&z, rc, NULL, PP_EPARSE, PP_OK);
  /* Objects. */
  b.n = 0;
  buf_repeat(&b, "{\"a\":", 100000);
  buf_puts(&b, "1");
  buf_repeat(&b, "}", 100000);
  rc = read_cluster(&z, &b, &c);
  expect_status(&z, rc, NULL, PP_EPARSE, PP_OK);
  /* Just inside jansson's limit, in an unexpected place: a clean error. */
  b.n = 0;
  buf_puts(&b, "{\"ops\": [");
  op_json(&b, "a");
  buf_puts(&b, "], \"hyper\": {\"x\": ");
  buf_repeat(&b, "[", 2000);
  buf_repeat(&b, "]", 2000);
  buf_puts(&b, "}}");
  rc = read_model(&z, &b, &m);
  expect_status(&z, rc, "hyper", PP_EINPUT, PP_OK);
  free(b.p);
  fz_done(&z, "deep nesting");
}

static void test_huge_strings(void **state)
{
  struct fz z;
  struct buf b = {NULL, 0, 0}, big = {NULL, 0, 0};
  pp_model *m = NULL;
  pp_cluster *c = NULL;
  pp_status rc;
  static const char *const mfields[] = {"name", "kind", "reference_type"};
  size_t i;
  (void)state;
  fz_init(&z, false);
  buf_repeat(&big, "n", 10u << 20); /* 10 MB */

  /* As an operator name. */
  buf_puts(&b, "{\"ops\": [");
  op_json(&b, big.p);
  buf_puts(&b, "]}");
  rc = read_model(&z, &b, &m);
  expect_status(&z, rc, NULL, PP_ELIMIT, PP_EINPUT);
  FZ_CHECK(strlen(pp_ctx_errmsg(z.ctx)) < 2000);

  /* As an operator kind, the model name and the reference type. */
  for (i = 0; i < sizeof mfields / sizeof mfields[0]; i++) {
    b.n = 0;
    buf_puts(&b, "{\"");
    buf_puts(&b, i == 1 ? "ops\": [{\"name\": \"a\", \"fwd_ms\": 1, "
                          "\"bwd_ms\": 2, \"param_bytes\": 1, "
                          "\"out_bytes\": 1, \"saved_bytes\": 1, \"kind"
                        : mfields[i]);
    buf_puts(&b, "\": \"");
    buf_puts(&b, big.p);
    buf_puts(&b, i == 1 ? "\"}]}" : "\", \"ops\": [");
    if (i != 1) {
      op_json(&b, "a");
      buf_puts(&b, "]}");
    }
    rc = read_model(&z, &b, &m);
    expect_status(&z, rc, NULL, PP_ELIMIT, PP_EINPUT);
  }

  /* As a hyper-parameter key. */
  b.n = 0;
  buf_puts(&b, "{\"hyper\": {\"");
  buf_puts(&b, big.p);
  buf_puts(&b, "\": 1}, \"ops\": [");
  op_json(&b, "a");
  buf_puts(&b, "]}");
  rc = read_model(&z, &b, &m);
  if (rc == PP_OK) {
    print_message("note: a 10 MB hyper-parameter name is accepted\n");
    pp_model_destroy(m);
    m = NULL;
  } else
    expect_status(&z, rc, NULL, PP_ELIMIT, PP_EINPUT);

  /* As a device name, a device type name (an object key) and a host. */
  for (i = 0; i < 3; i++) {
    b.n = 0;
    buf_puts(&b, "{\"device_types\": {\"");
    buf_puts(&b, i == 1 ? big.p : "gpu");
    buf_puts(&b, "\": {\"memory_gb\": 16}}, \"devices\": [{\"name\": \"");
    buf_puts(&b, i == 0 ? big.p : "d0");
    buf_puts(&b, "\", \"type\": \"");
    buf_puts(&b, i == 1 ? big.p : "gpu");
    buf_puts(&b, "\", \"node\": 0, \"host\": \"");
    buf_puts(&b, i == 2 ? big.p : "h");
    buf_puts(&b, "\"}]}");
    rc = read_cluster(&z, &b, &c);
    expect_status(&z, rc, NULL, PP_ELIMIT, PP_EINPUT);
  }

  /* PipeDream: a 10 MB node id and a 10 MB description. */
  for (i = 0; i < 2; i++) {
    b.n = 0;
    buf_puts(&b, i == 0 ? big.p : "node1");
    buf_puts(&b, " -- ");
    buf_puts(&b, i == 1 ? big.p : "Input");
    buf_puts(&b, " -- forward_compute_time=1, backward_compute_time=1, "
                 "activation_size=1, parameter_size=1\n");
    z.rd = RD_PIPEDREAM;
    z.text = b.p;
    z.len = b.n;
    pp_ctx_clear_error(z.ctx);
    rc = pp_model_read_pipedream(z.ctx, b.p, b.n, "fuzz.txt", &m);
    expect_status(&z, rc, NULL, PP_ELIMIT, PP_EPARSE);
  }
  free(b.p);
  free(big.p);
  fz_done(&z, "huge strings");
}

static void test_many_ops(void **state)
{
  struct fz z;
  struct buf b = {NULL, 0, 0};
  pp_model *m = NULL;
  pp_status rc;
  char name[32];
  int32_t i, n = 200000;
  (void)state;
  fz_init(&z, false);
  buf_reserve(&b, (size_t)n * 80);
  buf_puts(&b, "{\"ops\": [");
  for (i = 0; i < n; i++) {
    snprintf(name, sizeof name, "%s{\"name\": \"o%d\"", i ? ", " : "", (int)i);
    buf_puts(&b, name);
    buf_puts(&b, ", \"fwd_ms\": 0, \"bwd_ms\": 0, \"param_bytes\": 0, "
                 "\"out_bytes\": 0, \"saved_bytes\": 0}");
  }
  buf_puts(&b, "]}");
  rc = read_model(&z, &b, &m);
  if (rc != PP_OK)
    fz_fail("%d operators do not load: %s", (int)n, pp_ctx_errmsg(z.ctx));
  FZ_CHECK(pp_model_nop(m) == n);
  FZ_CHECK(pp_model_nedge(m) == n - 1);
  FZ_CHECK(pp_model_is_chain(m));
  FZ_CHECK(pp_model_topo_order(m)[n - 1] == n - 1);
  {
    pp_model_stats st;
    FZ_CHECK(pp_model_stats_get(z.ctx, m, &st) == PP_OK);
    FZ_CHECK(st.depth == n);
  }
  pp_model_destroy(m);
  m = NULL;

  /* The same as an explicit chain by index, closed into one long cycle:
  ** the cycle is reported (no recursion blows the stack). */
  n = 100000;
  b.n = 0;
  buf_puts(&b, "{\"ops\": [");
  for (i = 0; i < n; i++) {
    snprintf(name, sizeof name, "%s{\"name\": \"o%d\"", i ? ", " : "", (int)i);
    buf_puts(&b, name);
    buf_puts(&b, ", \"fwd_ms\": 0, \"bwd_ms\": 0, \"param_bytes\": 0, "
                 "\"out_bytes\": 0, \"saved_bytes\": 0}");
  }
  buf_puts(&b, "], \"edges\": [");
  for (i = 0; i < n; i++) {
    snprintf(name, sizeof name, "%s{\"from\": %d, \"to\": %d}", i ? ", " : "",
             (int)i, (int)((i + 1) % n));
    buf_puts(&b, name);
  }
  buf_puts(&b, "]}");
  rc = read_model(&z, &b, &m);
  expect_status(&z, rc, "cycle", PP_EINPUT, PP_OK);
  FZ_CHECK(m == NULL);
  /* Without the closing edge it loads, a deep explicit chain. */
  b.n -= strlen(", {\"from\": 99999, \"to\": 0}]}");
  buf_puts(&b, "]}");
  rc = read_model(&z, &b, &m);
  if (rc != PP_OK)
    fz_fail("a %d-deep explicit chain does not load: %s", (int)n,
            pp_ctx_errmsg(z.ctx));
  FZ_CHECK(pp_model_nedge(m) == n - 1);
  FZ_CHECK(pp_model_is_chain(m));
  {
    pp_model *v = NULL;
    FZ_CHECK(pp_model_chain_view(z.ctx, m, 0, &v) == PP_OK);
    FZ_CHECK(pp_model_nop(v) == n);
    pp_model_destroy(v);
  }
  pp_model_destroy(m);
  free(b.p);
  fz_done(&z, "many operators");
}

static void test_cluster_limits(void **state)
{
  struct fz z;
  struct buf b = {NULL, 0, 0};
  pp_cluster *c = NULL;
  pp_status rc;
  char line[128];
  int32_t i, n = 20000;
  (void)state;
  fz_init(&z, false);

  /* 20,000 devices exceed PP_MAX_DEVICES. */
  buf_puts(&b, "{\"device_types\": {\"g\": {\"memory_gb\": 16}}, "
               "\"devices\": [");
  for (i = 0; i < n; i++) {
    snprintf(line, sizeof line,
             "%s{\"name\": \"d%d\", \"type\": \"g\", "
             "\"node\": %d}",
             i ? ", " : "", (int)i, (int)(i / 8));
    buf_puts(&b, line);
  }
  buf_puts(&b, "], \"switches\": [\"s\"], \"links\": [{\"a\": \"d0\", \"b\": "
               "\"s\", \"GBps\": 1}]}");
  rc = read_cluster(&z, &b, &c);
  expect_status(&z, rc, NULL, PP_ELIMIT, PP_OK);
  FZ_CHECK(c == NULL);
  snprintf(line, sizeof line, "%d", PP_MAX_DEVICES);
  FZ_CHECK(strstr(pp_ctx_errmsg(z.ctx), line) != NULL);

  /* A bandwidth row that is an object; one that is short; a matrix with
  ** more rows than devices. */
  {
    static const char *const bad[] = {
        "[[0, 1], {\"a\": 1}]",     "[[0, 1], [1]]",
        "[[0, 1], [1, 0], [1, 1]]", "[[0, \"1\"], [1, 0]]",
        "[[0, null], [1, 0]]",      "[[0, -1], [-1, 0]]",
        "[[0, 0], [0, 0]]",         "[[0, 1], [2, 0]]",
        "{\"0\": [0, 1]}",          "[[0, 1e308], [1e308, 0]]",
    };
    size_t k;
    for (k = 0; k < sizeof bad / sizeof bad[0]; k++) {
      b.n = 0;
      buf_puts(&b, "{\"device_types\": {\"g\": {\"memory_gb\": 16}}, "
                   "\"devices\": [{\"name\": \"a\", \"type\": \"g\", \"node\": "
                   "0}, {\"name\": \"b\", \"type\": \"g\", \"node\": 1}], "
                   "\"bandwidth_GBps\": ");
      buf_puts(&b, bad[k]);
      buf_puts(&b, "}");
      rc = read_cluster(&z, &b, &c);
      if (k == 9) { /* huge but finite: fine */
        if (rc == PP_OK) {
          check_cluster(c);
          pp_cluster_destroy(c);
          c = NULL;
        } else
          expect_status(&z, rc, NULL, PP_ELIMIT, PP_EINPUT);
        continue;
      }
      expect_status(&z, rc, NULL, PP_EINPUT, PP_ELIMIT);
      if (k == 0)
        FZ_CHECK(strstr(pp_ctx_errmsg(z.ctx), "row 1") != NULL);
    }
  }

  /* A link graph 100,000 switches long: routing must not recurse. */
  b.n = 0;
  buf_puts(&b, "{\"device_types\": {\"g\": {\"memory_gb\": 16}}, "
               "\"devices\": [{\"name\": \"a\", \"type\": \"g\", \"node\": 0}, "
               "{\"name\": \"b\", \"type\": \"g\", \"node\": 1}, "
               "{\"name\": \"c\", \"type\": \"g\", \"node\": 2}], "
               "\"routing\": \"hops\", \"switches\": [");
  n = 100000;
  for (i = 0; i < n; i++) {
    snprintf(line, sizeof line, "%s\"s%d\"", i ? ", " : "", (int)i);
    buf_puts(&b, line);
  }
  buf_puts(&b, "], \"links\": [{\"a\": \"a\", \"b\": \"s0\", \"GBps\": 10}, "
               "{\"a\": \"b\", \"b\": \"s99999\", \"GBps\": 10}, "
               "{\"a\": \"c\", \"b\": \"s50000\", \"GBps\": 10}");
  for (i = 0; i + 1 < n; i++) {
    snprintf(line, sizeof line,
             ", {\"a\": \"s%d\", \"b\": \"s%d\", "
             "\"GBps\": 10}",
             (int)i, (int)(i + 1));
    buf_puts(&b, line);
  }
  buf_puts(&b, "]}");
  rc = read_cluster(&z, &b, &c);
  if (rc != PP_OK)
    fz_fail("a long switch chain does not load: %s", pp_ctx_errmsg(z.ctx));
  FZ_CHECK(pp_cluster_bandwidth(c, 0, 1) > 0);
  FZ_CHECK(pp_cluster_bandwidth(c, 0, 1) < pp_cluster_bandwidth(c, 0, 2));
  pp_cluster_destroy(c);
  c = NULL;

  /* Bonded links whose product overflows to infinity: an error, or a
  ** finite bandwidth (never inf, which describe --json cannot print). */
  b.n = 0;
  buf_puts(&b, "{\"device_types\": {\"g\": {\"memory_gb\": 16}}, "
               "\"devices\": [{\"name\": \"a\", \"type\": \"g\", \"node\": 0}, "
               "{\"name\": \"b\", \"type\": \"g\", \"node\": 0}], "
               "\"links\": [{\"a\": \"a\", \"b\": \"b\", \"GBps\": 1e308, "
               "\"count\": 1000}]}");
  rc = read_cluster(&z, &b, &c);
  if (rc == PP_OK) {
    check_cluster(c);
    pp_cluster_destroy(c);
    c = NULL;
  } else
    expect_status(&z, rc, NULL, PP_ELIMIT, PP_EINPUT);

  free(b.p);
  fz_done(&z, "cluster limits");
}

static void test_bad_numbers(void **state)
{
  static const struct {
    const char *value;
    pp_status want, alt;
  } cases[] = {
      {"99999999999999999999999", PP_EPARSE, PP_OK},
      {"-99999999999999999999999", PP_EPARSE, PP_OK},
      {"1e400", PP_EPARSE, PP_OK},
      {"NaN", PP_EPARSE, PP_OK},
      {"Infinity", PP_EPARSE, PP_OK},
      {"-1", PP_EINPUT, PP_OK},
      {"\"1\"", PP_EINPUT, PP_OK},
      {"true", PP_EINPUT, PP_OK},
      {"[1]", PP_EINPUT, PP_OK},
      {"9223372036854775807", PP_ELIMIT, PP_EINPUT},
      {"1.5e300", PP_ELIMIT, PP_EINPUT},
  };
  static const char *const fields[] = {"param_bytes", "out_bytes",
                                       "saved_bytes", "fwd_ms", "bwd_ms"};
  struct fz z;
  struct buf b = {NULL, 0, 0};
  pp_model *m = NULL;
  pp_cluster *c = NULL;
  pp_status rc;
  size_t i, f;
  (void)state;
  fz_init(&z, false);
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (f = 0; f < sizeof fields / sizeof fields[0]; f++) {
      size_t k;
      b.n = 0;
      buf_puts(&b, "{\"ops\": [{\"name\": \"a\"");
      for (k = 0; k < sizeof fields / sizeof fields[0]; k++) {
        buf_puts(&b, ", \"");
        buf_puts(&b, fields[k]);
        buf_puts(&b, "\": ");
        buf_puts(&b, k == f ? cases[i].value : "1");
      }
      buf_puts(&b, "}]}");
      rc = read_model(&z, &b, &m);
      /* Times are doubles: a huge finite one is accepted. */
      if (f >= 3 && (i == 9 || i == 10) && rc == PP_OK) {
        pp_model_destroy(m);
        m = NULL;
        continue;
      }
      expect_status(&z, rc, NULL, cases[i].want, cases[i].alt);
      FZ_CHECK(m == NULL);
      if (cases[i].want == PP_EINPUT || cases[i].want == PP_ELIMIT)
        FZ_CHECK(strstr(pp_ctx_errmsg(z.ctx), fields[f]) != NULL);
    }
  /* jansson's own word for it. */
  b.n = 0;
  buf_puts(&b, "{\"ops\": [{\"name\": \"a\", \"fwd_ms\": 1, \"bwd_ms\": 1, "
               "\"param_bytes\": 99999999999999999999999, \"out_bytes\": 1, "
               "\"saved_bytes\": 1}]}");
  rc = read_model(&z, &b, &m);
  expect_status(&z, rc, "too big integer", PP_EPARSE, PP_OK);
  /* In a cluster: node, count, memory. */
  b.n = 0;
  buf_puts(&b, "{\"device_types\": {\"g\": {\"memory_gb\": 16}}, "
               "\"devices\": [{\"name\": \"a\", \"type\": \"g\", \"node\": "
               "99999999999999999999999}]}");
  rc = read_cluster(&z, &b, &c);
  expect_status(&z, rc, NULL, PP_EPARSE, PP_OK);
  b.n = 0;
  buf_puts(&b, "{\"device_types\": {\"g\": {\"memory_gb\": 1e400}}, "
               "\"devices\": [{\"name\": \"a\", \"type\": \"g\", \"node\": "
               "0}]}");
  rc = read_cluster(&z, &b, &c);
  expect_status(&z, rc, NULL, PP_EPARSE, PP_OK);
  b.n = 0;
  buf_puts(&b, "{\"device_types\": {\"g\": {\"memory_gb\": 16}}, "
               "\"devices\": [{\"name\": \"a\", \"type\": \"g\", \"node\": "
               "2147483648}]}");
  rc = read_cluster(&z, &b, &c);
  expect_status(&z, rc, "node", PP_ELIMIT, PP_EINPUT);
  free(b.p);
  fz_done(&z, "bad numbers");
}

/* Finite operator figures whose sums overflow: the model loads, and
** describe --json still prints valid JSON (no bare inf). */
static void test_overflowing_sums(void **state)
{
  struct fz z;
  struct buf b = {NULL, 0, 0};
  pp_model *m = NULL;
  pp_status rc;
  int k;
  (void)state;
  fz_init(&z, false);
  buf_puts(&b, "{\"ops\": [");
  for (k = 0; k < 3; k++) {
    char line[300];
    snprintf(line, sizeof line,
             "%s{\"name\": \"o%d\", \"fwd_ms\": 1e308, \"bwd_ms\": 1e308, "
             "\"update_ms\": 1e308, \"param_bytes\": 4000000000000000000, "
             "\"out_bytes\": 4000000000000000000, \"saved_bytes\": "
             "4000000000000000000}",
             k ? ", " : "", k);
    buf_puts(&b, line);
  }
  buf_puts(&b, "]}");
  rc = read_model(&z, &b, &m);
  if (rc != PP_OK)
    fz_fail("does not load: %s", pp_ctx_errmsg(z.ctx));
  check_model(m, true);
  pp_model_destroy(m);
  m = NULL;
  /* Branches b and c merge into one layer of the chain view, whose time
  ** sum overflows: the model must still load, give its figures
  ** (pp_model_stats_get, which counts the chain view's layers) and be
  ** described. */
  b.n = 0;
  buf_puts(&b, "{\"ops\": [");
  for (k = 0; k < 4; k++) {
    char line[300];
    snprintf(line, sizeof line,
             "%s{\"name\": \"%c\", \"fwd_ms\": %s, \"bwd_ms\": 1, "
             "\"param_bytes\": 1, \"out_bytes\": 1, \"saved_bytes\": 1}",
             k ? ", " : "", 'a' + k, k == 1 || k == 2 ? "1e308" : "1");
    buf_puts(&b, line);
  }
  buf_puts(&b, "], \"edges\": [{\"from\": \"a\", \"to\": \"b\"}, "
               "{\"from\": \"a\", \"to\": \"c\"}, {\"from\": \"b\", "
               "\"to\": \"d\"}, {\"from\": \"c\", \"to\": \"d\"}]}");
  rc = read_model(&z, &b, &m);
  if (rc != PP_OK)
    fz_fail("does not load: %s", pp_ctx_errmsg(z.ctx));
  check_model(m, true);
  pp_model_destroy(m);
  free(b.p);
  fz_done(&z, "overflowing sums");
}

/* Sizes within the per-operator limit (2^62) whose sums do not fit in
** 64 bits: in a layer of the chain view (two operators merged) and
** across one cut (two tensors).  The model must load and be described,
** or be refused with PP_ELIMIT; never signed overflow (UBSan aborts). */
static void test_int64_sums(void **state)
{
  static const char *const docs[] = {
      /* branches a and b merge into one layer: saved bytes add up */
      "{\"ops\": ["
      "{\"name\": \"in\", \"fwd_ms\": 1, \"bwd_ms\": 1, \"param_bytes\": 1, "
      "\"out_bytes\": 1, \"saved_bytes\": 1},"
      "{\"name\": \"a\", \"fwd_ms\": 1, \"bwd_ms\": 1, \"param_bytes\": "
      "4611686018427387904, \"out_bytes\": 1, \"saved_bytes\": "
      "4611686018427387904},"
      "{\"name\": \"b\", \"fwd_ms\": 1, \"bwd_ms\": 1, \"param_bytes\": "
      "4611686018427387904, \"out_bytes\": 1, \"saved_bytes\": "
      "4611686018427387904},"
      "{\"name\": \"out\", \"fwd_ms\": 1, \"bwd_ms\": 1, \"param_bytes\": 1, "
      "\"out_bytes\": 1, \"saved_bytes\": 1}],"
      "\"edges\": [{\"from\": \"in\", \"to\": \"a\"}, {\"from\": \"in\", "
      "\"to\": \"b\"}, {\"from\": \"a\", \"to\": \"out\"}, {\"from\": \"b\", "
      "\"to\": \"out\"}]}",
      /* two 2^62-byte tensors cross the same cuts */
      "{\"ops\": ["
      "{\"name\": \"a\", \"fwd_ms\": 1, \"bwd_ms\": 1, \"param_bytes\": 1, "
      "\"out_bytes\": 4611686018427387904, \"saved_bytes\": 1},"
      "{\"name\": \"b\", \"fwd_ms\": 1, \"bwd_ms\": 1, \"param_bytes\": 1, "
      "\"out_bytes\": 4611686018427387904, \"saved_bytes\": 1},"
      "{\"name\": \"c\", \"fwd_ms\": 1, \"bwd_ms\": 1, \"param_bytes\": 1, "
      "\"out_bytes\": 1, \"saved_bytes\": 1},"
      "{\"name\": \"d\", \"fwd_ms\": 1, \"bwd_ms\": 1, \"param_bytes\": 1, "
      "\"out_bytes\": 1, \"saved_bytes\": 1}],"
      "\"edges\": [{\"from\": \"a\", \"to\": \"c\"}, {\"from\": \"b\", "
      "\"to\": \"c\"}, {\"from\": \"a\", \"to\": \"d\"}, {\"from\": \"b\", "
      "\"to\": \"d\"}, {\"from\": \"c\", \"to\": \"d\"}]}",
  };
  struct fz z;
  struct buf b = {NULL, 0, 0};
  size_t i;
  (void)state;
  fz_init(&z, false);
  for (i = 0; i < sizeof docs / sizeof docs[0]; i++) {
    pp_model *m = NULL;
    pp_status rc;
    b.n = 0;
    buf_puts(&b, docs[i]);
    rc = read_model(&z, &b, &m);
    z.iter = (long)i; /* for the report */
    if (rc == PP_OK) {
      check_model(m, true);
      pp_model_destroy(m);
    } else
      expect_status(&z, rc, NULL, PP_ELIMIT, PP_OK);
  }
  free(b.p);
  fz_done(&z, "int64 sums");
}

/* Odd but small documents for every reader. */
static void test_odd_inputs(void **state)
{
  static const char *const json[] = {
      "",
      " ",
      "{",
      "}",
      "[]",
      "null",
      "0",
      "\"x\"",
      "{}",
      "{\"ops\": []}",
      "{\"ops\": {}}",
      "{\"ops\": [1]}",
      "{\"ops\": [{}]}",
      "{\"ops\": [], \"ops\": []}",
      "{\"name\": \"a\\u0000b\", \"ops\": []}",
      "{\"a\": 1} {\"b\": 2}",
      "\xef\xbb\xbf{}",
      "{\"ops\": [\"\xff\"]}",
      "{\"device_types\": {}, \"devices\": []}",
      "{\"device_types\": [], \"devices\": [{}]}",
  };
  static const char *const pd[] = {
      "",
      "\n\n\n",
      "\t",
      "\ta -- b\n",
      " -- -- ",
      "a -- b -- forward_compute_time=1\n",
      "a -- b -- forward_compute_time=nan, backward_compute_time=0, "
      "activation_size=0, parameter_size=0\n",
      "a -- b -- forward_compute_time=inf, backward_compute_time=0, "
      "activation_size=0, parameter_size=0\n",
      "a -- b -- forward_compute_time=1e400, backward_compute_time=0, "
      "activation_size=0, parameter_size=0\n",
      "a -- b -- forward_compute_time=[1e308; 1e308], backward_compute_time=0, "
      "activation_size=0, parameter_size=0\n",
      "a -- b -- forward_compute_time=1, backward_compute_time=0, "
      "activation_size=[1e308; 1e308], parameter_size=0\n",
      "a -- b -- forward_compute_time=1, backward_compute_time=0, "
      "activation_size=[1; 2, parameter_size=0\n",
      "a -- b -- forward_compute_time=1, backward_compute_time=0, "
      "activation_size=1, parameter_size=0\n\ta -- a\n",
      "a -- b -- forward_compute_time=1, backward_compute_time=0, "
      "activation_size=1, parameter_size=0\n"
      "c -- d -- forward_compute_time=1, backward_compute_time=0, "
      "activation_size=1, parameter_size=0\n\ta -- c\n\tc -- a\n",
      "a -- b -- forward_compute_time=1, backward_compute_time=0, "
      "activation_size=1, parameter_size=0\n\ta -- zz\n",
      "a\xff -- b\x01 -- forward_compute_time=1, backward_compute_time=0, "
      "activation_size=1, parameter_size=0\n",
      "a\"\\ -- \"b -- forward_compute_time=-0, backward_compute_time=0, "
      "activation_size=0, parameter_size=0\n",
  };
  struct fz z;
  size_t i;
  (void)state;
  fz_init(&z, true);
  z.seed_name = "odd inputs";
  for (i = 0; i < sizeof json / sizeof json[0]; i++) {
    z.iter = (long)i;
    feed(&z, RD_MODEL_JSON, json[i], strlen(json[i]));
    feed(&z, RD_CLUSTER_JSON, json[i], strlen(json[i]));
  }
  /* A NUL byte inside the text. */
  feed(&z, RD_MODEL_JSON, "{\"ops\": [\0]}", 12);
  FZ_CHECK(z.err[RD_MODEL_JSON] == z.fed[RD_MODEL_JSON]);
  FZ_CHECK(z.err[RD_CLUSTER_JSON] == z.fed[RD_CLUSTER_JSON]);
  for (i = 0; i < sizeof pd / sizeof pd[0]; i++) {
    z.iter = (long)i;
    feed(&z, RD_PIPEDREAM, pd[i], strlen(pd[i]));
  }
  feed(&z, RD_PIPEDREAM, "a -- b -- x\0y", 13);
  /* Source names (paths) that are not UTF-8: the model's name defaults
  ** to the file's stem (or, for graph*.txt, its directory). */
  {
    static const char *const srcs[] = {"dir/n\xfe.json", "d\xff/graph.txt",
                                       "x\xc3.txt"};
    static const char nameless[] =
        "{\"ops\": [{\"name\": \"a\", \"fwd_ms\": 1, \"bwd_ms\": 1, "
        "\"param_bytes\": 1, \"out_bytes\": 1, \"saved_bytes\": 1}]}";
    static const char graph[] =
        "n1 -- Input -- forward_compute_time=1, backward_compute_time=1, "
        "activation_size=4, parameter_size=0\n";
    z.seed_name = "odd inputs: source names not UTF-8";
    for (i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
      z.iter = (long)i;
      z.src_override = srcs[i];
      feed(&z, RD_MODEL_JSON, nameless, strlen(nameless));
      feed(&z, RD_PIPEDREAM, graph, strlen(graph));
      z.src_override = NULL;
    }
  }
  /* Specs with bytes that are not UTF-8, in an option a later one
  ** overrides: an error, or an object whose name and source still make
  ** valid JSON. */
  {
    static const char *const cs[] = {"hier:2x2,gpu=\xff,gpu=V100",
                                     "nvswitch:2x4,gpu=H100\xfa,gpu=H100",
                                     "mesh2d:2x2,routing=\xc3,routing=hops"};
    static const char *const ms[] = {"transformer:gpu=\xff,gpu=V100,layers=2",
                                     "transformer:layers=2,gpu=\xed\xa0\x80,"
                                     "gpu=A100-80"};
    z.seed_name = "odd inputs: specs not UTF-8";
    for (i = 0; i < sizeof cs / sizeof cs[0]; i++) {
      z.iter = (long)i;
      feed(&z, RD_CLUSTER_SPEC, cs[i], strlen(cs[i]));
    }
    for (i = 0; i < sizeof ms / sizeof ms[0]; i++) {
      z.iter = (long)i;
      feed(&z, RD_MODEL_SPEC, ms[i], strlen(ms[i]));
    }
  }
  fz_done(&z, "odd inputs");
}

/* Specs at and past the limits, quickly refused. */
static void test_spec_limits(void **state)
{
  static const char *const big[] = {
      "hier:1000x1000",
      "mesh3d:100x100x100",
      "dgx1:5000",
      "random_blk_1:16385",
      "uniform_dist:99999999999999999999",
      "nvswitch:3000",
      "torus2d:16384x2",
  };
  struct fz z;
  size_t i;
  pp_cluster *c = NULL;
  pp_model *m = NULL;
  pp_status rc;
  (void)state;
  fz_init(&z, false);
  z.seed_name = "spec limits";
  z.rd = RD_CLUSTER_SPEC;
  for (i = 0; i < sizeof big / sizeof big[0]; i++) {
    z.text = big[i];
    z.len = strlen(big[i]);
    rc = pp_cluster_load(z.ctx, big[i], &c);
    if (rc != PP_ELIMIT && rc != PP_EPARSE)
      fz_fail("status %d: %s", rc, pp_ctx_errmsg(z.ctx));
    check_error(rc, NULL);
    FZ_CHECK(c == NULL);
    pp_ctx_clear_error(z.ctx);
  }
  z.rd = RD_MODEL_SPEC;
  {
    static const char *const ms[] = {
        "transformer:layers=1000000",
        ("transformer:layers=1,hidden=1073741824,heads=1,seq=1073741824,"
         "vocab=1073741824,ffn=1073741824,mbs=1073741824"),
        "transformer:layers=1,hidden=65536,heads=1,seq=65536,vocab=65536",
        "transformer:hidden=1000,heads=3",
        "transformer:eff=0",
        "transformer:eff=1e400",
        "transformer:gpu=NoSuchGPU",
        "transformer:,",
        "transformer:layers",
        "transformer:=1",
    };
    for (i = 0; i < sizeof ms / sizeof ms[0]; i++) {
      z.text = ms[i];
      z.len = strlen(ms[i]);
      rc = pp_model_load(z.ctx, ms[i], &m);
      if (rc == PP_OK) {
        check_model(m, true);
        pp_model_destroy(m);
        m = NULL;
      } else {
        check_error(rc, NULL);
        FZ_CHECK(m == NULL);
      }
      pp_ctx_clear_error(z.ctx);
    }
  }
  fz_done(&z, "spec limits");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_odd_inputs),
      cmocka_unit_test(test_bad_numbers),
      cmocka_unit_test(test_deep_nesting),
      cmocka_unit_test(test_huge_strings),
      cmocka_unit_test(test_many_ops),
      cmocka_unit_test(test_cluster_limits),
      cmocka_unit_test(test_overflowing_sums),
      cmocka_unit_test(test_spec_limits),
      cmocka_unit_test(test_fuzz_files),
      cmocka_unit_test(test_fuzz_written),
      cmocka_unit_test(test_fuzz_specs),
      /* Last: under UBSan a signed overflow aborts the whole program. */
      cmocka_unit_test(test_int64_sums),
  };
  /* PP_TEST_FILTER=test_fuzz_* runs a subset (cmocka's filter). */
  if (getenv("PP_TEST_FILTER"))
    cmocka_set_test_filter(getenv("PP_TEST_FILTER"));
  return cmocka_run_group_tests(tests, NULL, NULL);
}
