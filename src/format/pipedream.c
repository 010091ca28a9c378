/* SPDX-License-Identifier: MIT */
/*
** PipeDream graph.txt import (msr-fiddle/pipedream, the profiler's
** output; data/pipedream/README.md documents the format), keeping its
** DAG as it is: every node becomes an operator, every edge an edge.
**
**   node line:  <id> -- <desc> -- forward_compute_time=<ms>,
**               backward_compute_time=<ms>, activation_size=<bytes>,
**               parameter_size=<bytes>[ -- stage_id=<k>]
**   edge line:  TAB <src id> -- <dst id>
**
** Units are kept: times in ms per minibatch, sizes in fp32 bytes for the
** whole minibatch.  The output is also what the layer keeps for backward
** (PipeDream's own assumption).  The minibatch size is not in the file:
** it is inferred from an "Input" node's activation as a 3 x 224 x 224
** (or 299 x 299) fp32 image batch and becomes the reference micro-batch;
** when no such node exists it stays 1 and hyper "batch_inferred" is 0.
** Nodes whose description starts with "Input" get kind "input".
*/
#include "plan/plan.h"

#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct pd_line {
  const char *p; /* start */
  size_t n;      /* length without the newline */
  long no;       /* 1-based line number */
};

struct pd_run {
  pp_ctx *ctx;
  const char *src;
  pp_model_builder *b;
  char buf[PP_MAX_NAME + 1];
  struct ppi_strmap edges; /* "a>b" -> line, to name a repeated edge */
  struct ppi_arena keys;   /* the keys of edges */
};

/* Copy [p, p+n) into r->buf, trimmed; false if too long. */
static bool take(struct pd_run *r, const char *p, size_t n)
{
  while (n && (*p == ' ' || *p == '\t' || *p == '\r')) {
    p++;
    n--;
  }
  while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
    n--;
  if (n > PP_MAX_NAME)
    return false;
  memcpy(r->buf, p, n);
  r->buf[n] = '\0';
  return true;
}

/* Find " -- " in [p, p+n); returns its offset or -1. */
static long sep(const char *p, size_t n)
{
  size_t i;
  for (i = 0; i + 4 <= n; i++)
    if (memcmp(p + i, " -- ", 4) == 0)
      return (long)i;
  return -1;
}

/* One number at *v (advanced past it): finite, non-negative; an
** underflow reads as the tiny value strtod returns. */
static pp_status one_num(struct pd_run *r, const struct pd_line *ln,
                         const char *key, const char **v, double *x)
{
  char *end;
  errno = 0;
  *x = strtod(*v, &end);
  if (end == *v)
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, ln->no, 0,
                       "%s needs a number", key);
  *v = end;
  if (isnan(*x) || isinf(*x))
    return ppi_fail_at(r->ctx, PP_EINPUT, r->src, ln->no, 0,
                       "%s is not a finite number", key);
  if (errno == ERANGE && fabs(*x) > 1)
    return ppi_fail_at(r->ctx, PP_EINPUT, r->src, ln->no, 0,
                       "%s is out of range", key);
  if (*x < 0)
    return ppi_fail_at(r->ctx, PP_EINPUT, r->src, ln->no, 0, "%s is negative",
                       key);
  return PP_OK;
}

/* Parse one "key=value" metadata number; a list "[a; b]" is summed.  The
** value must end the item: a ',' or the end of the metadata follows. */
static pp_status meta_num(struct pd_run *r, const struct pd_line *ln,
                          const char *meta, const char *key, double *out)
{
  const char *k = strstr(meta, key), *v;
  double x;
  size_t kl = strlen(key);
  pp_status rc;
  while (k && ((k != meta && k[-1] != ' ') || k[kl] != '='))
    k = strstr(k + 1, key);
  if (!k)
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, ln->no, 0,
                       "node line lacks \"%s=\"", key);
  v = k + kl + 1;
  *out = 0;
  if (*v == '[') {
    v++;
    for (;;) {
      if ((rc = one_num(r, ln, key, &v, &x)))
        return rc;
      *out += x;
      while (*v == ' ')
        v++;
      if (*v == ']') {
        v++;
        break;
      }
      if (*v++ != ';')
        return ppi_fail_at(r->ctx, PP_EPARSE, r->src, ln->no, 0,
                           "%s: a list is \"[a; b; ...]\"", key);
    }
  } else {
    if ((rc = one_num(r, ln, key, &v, &x)))
      return rc;
    *out = x;
  }
  while (*v == ' ' || *v == '\t')
    v++;
  if (*v && *v != ',')
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, ln->no, 0,
                       "%s: unexpected text after the number", key);
  return PP_OK;
}

static pp_status node_line(struct pd_run *r, const struct pd_line *ln,
                           double *input_bytes)
{
  long s1 = sep(ln->p, ln->n), s2;
  char desc[PP_MAX_NAME + 1], meta[1024], id[PP_MAX_NAME + 1], kind[64];
  pp_op_desc d;
  double f, b, act, par;
  pp_status rc;
  size_t i;

  s2 = s1 < 0 ? -1 : sep(ln->p + s1 + 4, ln->n - (size_t)s1 - 4);
  if (s1 < 0 || s2 < 0)
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, ln->no, 0,
                       "a node line needs \"id -- description -- "
                       "forward_compute_time=..., ...\"");
  if (!take(r, ln->p, (size_t)s1) || !r->buf[0])
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, ln->no, 0,
                       "empty or overlong node id");
  memcpy(id, r->buf, strlen(r->buf) + 1);
  if (!take(r, ln->p + s1 + 4, (size_t)s2))
    return ppi_fail_at(r->ctx, PP_ELIMIT, r->src, ln->no, 0,
                       "node description longer than %d bytes", PP_MAX_NAME);
  memcpy(desc, r->buf, strlen(r->buf) + 1);
  {
    const char *mp = ln->p + s1 + 4 + s2 + 4;
    size_t mn = ln->n - (size_t)(s1 + 4 + s2 + 4);
    long s3 = sep(mp, mn); /* optional " -- stage_id=k" */
    if (s3 >= 0)
      mn = (size_t)s3;
    if (mn >= sizeof meta)
      return ppi_fail_at(r->ctx, PP_EPARSE, r->src, ln->no, 0,
                         "node metadata longer than %zu bytes",
                         sizeof meta - 1);
    memcpy(meta, mp, mn);
    meta[mn] = '\0';
  }
  if ((rc = meta_num(r, ln, meta, "forward_compute_time", &f)) ||
      (rc = meta_num(r, ln, meta, "backward_compute_time", &b)) ||
      (rc = meta_num(r, ln, meta, "activation_size", &act)) ||
      (rc = meta_num(r, ln, meta, "parameter_size", &par)))
    return rc;
  if (act > 4e18 || par > 4e18)
    return ppi_fail_at(r->ctx, PP_ELIMIT, r->src, ln->no, 0, "size too large");
  /* The class is the description up to its first '(' ("Conv2d"). */
  for (i = 0; desc[i] && desc[i] != '(' && i + 1 < sizeof kind; i++)
    kind[i] = desc[i];
  kind[i] = '\0';
  if (strncmp(desc, "Input", 5) == 0) {
    snprintf(kind, sizeof kind, "input");
    if (*input_bytes < 0)
      *input_bytes = act;
  }
  pp_op_desc_init(&d);
  d.name = id;
  d.kind = kind[0] ? kind : NULL;
  d.fwd_ms = f;
  d.bwd_ms = b;
  d.param_bytes = (int64_t)llround(par);
  d.out_bytes = (int64_t)llround(act);
  d.saved_bytes = d.out_bytes;
  if (pp_model_builder_find_op(r->b, id) >= 0)
    return ppi_fail_at(r->ctx, PP_EINPUT, r->src, ln->no, 0,
                       "node '%s' is defined twice", id);
  return pp_model_builder_add_op(r->b, &d, NULL);
}

static pp_status edge_line(struct pd_run *r, const struct pd_line *ln)
{
  const char *p = ln->p + 1;
  size_t n = ln->n - 1;
  long s = sep(p, n);
  int32_t a, b;
  if (s < 0)
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, ln->no, 0,
                       "an edge line needs \"<TAB>src -- dst\"");
  if (!take(r, p, (size_t)s))
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, ln->no, 0,
                       "overlong node id");
  a = pp_model_builder_find_op(r->b, r->buf);
  if (a < 0)
    return ppi_fail_at(r->ctx, PP_EINPUT, r->src, ln->no, 0,
                       "edge from unknown node '%s'", r->buf);
  if (!take(r, p + s + 4, n - (size_t)s - 4))
    return ppi_fail_at(r->ctx, PP_EPARSE, r->src, ln->no, 0,
                       "overlong node id");
  b = pp_model_builder_find_op(r->b, r->buf);
  if (b < 0)
    return ppi_fail_at(r->ctx, PP_EINPUT, r->src, ln->no, 0,
                       "edge to unknown node '%s'", r->buf);
  if (a == b)
    return ppi_fail_at(r->ctx, PP_EINPUT, r->src, ln->no, 0,
                       "node '%s' feeds itself (a cycle)", r->buf);
  {
    /* The builder would find a repeated edge too, but not its line. */
    char key[32], *k;
    int32_t old = 0;
    pp_status rc;
    snprintf(key, sizeof key, "%d>%d", (int)a, (int)b);
    k = ppi_arena_strdup(&r->keys, r->ctx, key);
    if (!k)
      return r->ctx->err;
    rc = ppi_strmap_put(r->ctx, &r->edges, k, (int32_t)ln->no, &old);
    if (rc == PP_EINVAL)
      return ppi_fail_at(r->ctx, PP_EINPUT, r->src, ln->no, 0,
                         "edge '%s' -> '%s' repeats line %d",
                         pp_model_builder_op_name(r->b, a), r->buf, (int)old);
    if (rc)
      return rc;
  }
  return pp_model_builder_add_edge(r->b, a, b, -1);
}

/* The model name: the directory of a "graph.txt", else the file stem. */
static void model_name(const char *src, char *buf, size_t n)
{
  const char *slash = strrchr(src, '/'), *base = slash ? slash + 1 : src;
  if (slash && strcmp(base, "graph.txt") == 0) {
    const char *d = slash;
    size_t len;
    while (d > src && d[-1] != '/')
      d--;
    len = (size_t)(slash - d);
    if (len > 0) {
      if (len >= n)
        len = n - 1;
      memcpy(buf, d, len);
      buf[len] = '\0';
      return;
    }
  }
  ppi_path_stem(src, buf, n);
  if (!buf[0])
    snprintf(buf, n, "pipedream");
}

pp_status pp_model_read_pipedream(pp_ctx *ctx, const char *text, size_t len,
                                  const char *source, pp_model **out)
{
  struct pd_run r;
  struct pd_line ln;
  const char *p, *end;
  char name[256];
  double input_bytes = -1;
  int pass;
  pp_status rc = PP_OK;

  if (!ctx || !text || !out)
    return PP_EINVAL;
  *out = NULL;
  memset(&r, 0, sizeof r);
  r.ctx = ctx;
  r.src = source ? source : "graph.txt";
  ppi_strmap_init(&r.edges);
  ppi_arena_init(&r.keys, ppi_ctx_alloc(ctx));
  if (memchr(text, '\0', len))
    return ppi_fail_at(ctx, PP_EPARSE, r.src, 0, 0,
                       "contains a NUL byte: not a text file");
  model_name(r.src, name, sizeof name);
  if ((rc = pp_model_builder_create(ctx, name, r.src, &r.b)) != PP_OK)
    return rc;
  /* Nodes first, then edges, so edges may come in any order. */
  for (pass = 0; pass < 2 && rc == PP_OK; pass++) {
    p = text;
    end = text + len;
    ln.no = 0;
    while (p < end && rc == PP_OK) {
      const char *nl = memchr(p, '\n', (size_t)(end - p));
      size_t k;
      ln.p = p;
      ln.n = nl ? (size_t)(nl - p) : (size_t)(end - p);
      ln.no++;
      p = nl ? nl + 1 : end;
      /* CRLF files: the line ends before its '\r'. */
      while (ln.n && (ln.p[ln.n - 1] == '\r' || ln.p[ln.n - 1] == ' '))
        ln.n--;
      for (k = 0; k < ln.n && (ln.p[k] == ' ' || ln.p[k] == '\t'); k++)
        ;
      if (k == ln.n) /* blank */
        continue;
      if (ln.p[0] == '\t') {
        if (pass == 1)
          rc = edge_line(&r, &ln);
      } else if (pass == 0)
        rc = node_line(&r, &ln, &input_bytes);
    }
  }
  if (rc != PP_OK)
    goto done;
  {
    /* 3 x 224 x 224 or 3 x 299 x 299 fp32 images per minibatch. */
    static const double img[] = {3.0 * 224 * 224 * 4, 3.0 * 299 * 299 * 4};
    double batch = 0;
    size_t i;
    for (i = 0; i < 2 && batch == 0; i++)
      if (input_bytes > 0 && fmod(input_bytes, img[i]) == 0 &&
          input_bytes / img[i] <= 1 << 20)
        batch = input_bytes / img[i];
    if (batch > 0)
      rc = pp_model_builder_set_micro_batch(r.b, (int32_t)batch);
    if (rc == PP_OK)
      rc = pp_model_builder_set_hyper(r.b, "batch_inferred", batch > 0);
    if (rc != PP_OK)
      goto done;
  }
  rc = pp_model_builder_finish(r.b, out);
  r.b = NULL;
done:
  pp_model_builder_destroy(r.b);
  ppi_strmap_free(ctx, &r.edges);
  ppi_arena_free(&r.keys);
  return rc;
}
