/* SPDX-License-Identifier: MIT */
/*
** The model builder: collects operators, edges, ties and profile
** tables, checks each as it arrives (so an error names the operator),
** and on finish lays the model out as flat arrays in one arena:
** structure of arrays per operator, CSR adjacency both ways, dense
** (table x operator) time matrices with NaN for "not profiled".
**
** Invariants of a finished model: nop >= 1; every number finite and
** non-negative; edges acyclic and without duplicates; topo is a
** topological order; every tie points at an operator that owns its
** parameters.  Finishing costs O(nop + nedge log nedge + ntable * nop).
*/
#include "model/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct op_rec {
  const char *name, *kind; /* in the model's arena */
  double fwd, bwd, upd, ffl, bfl, fby, bby;
  int64_t param, out, saved;
  int32_t tied;
};

struct part_rec {
  int32_t op;
  double q[PPI_PART];
};

struct edge_rec {
  int32_t src, dst;
  int64_t bytes;
};

struct table_key {
  const char *type; /* NULL: reference type */
  int32_t tp, mbs;
};

struct time_rec {
  int32_t op, table;
  double fwd, bwd, upd;
};

struct tps_rec {
  int32_t op, tp;
  int64_t param, out, saved;
};

struct hyper_rec {
  const char *key;
  double val;
};

struct pp_model_builder {
  pp_ctx *ctx;
  struct pp_model *m; /* the arena strings go to */
  struct ppi_vec ops, edges, keys, times, tps, hyper;
  struct ppi_vec parts; /* struct part_rec */
  struct ppi_strmap names;
  struct ppi_strmap keymap; /* find_key's index: key_text -> keys index */
  bool failed;              /* an add failed: finish refuses */
};

void pp_op_desc_init(pp_op_desc *d)
{
  if (d)
    memset(d, 0, sizeof *d);
}

/* The error prefix for everything about one builder's input. */
#define SRC(b) ((b)->m->source)

static pp_status bfail(pp_model_builder *b, pp_status rc, const char *fmt, ...)
    PP_PRINTF(3, 4);
static pp_status bfail(pp_model_builder *b, pp_status rc, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  ppi_vfail_at(b->ctx, rc, SRC(b), 0, 0, fmt, ap);
  va_end(ap);
  b->failed = true;
  return rc;
}

pp_status pp_model_builder_create(pp_ctx *ctx, const char *name,
                                  const char *source, pp_model_builder **out)
{
  pp_model_builder *b;
  struct pp_model *m;

  if (!ctx || !out)
    return PP_EINVAL;
  *out = NULL;
  b = ppi_calloc(ctx, 1, sizeof *b);
  if (!b)
    return ctx->err;
  m = ppi_calloc(ctx, 1, sizeof *m);
  if (!m) {
    ppi_free(ctx, b, sizeof *b);
    return ctx->err;
  }
  b->ctx = ctx;
  b->m = m;
  ppi_arena_init(&m->arena, ppi_ctx_alloc(ctx));
  m->micro_batch = 1;
  m->efficiency = 0.5;
  m->dtype = PP_PREC_FP16;
  m->name = ppi_arena_name(&m->arena, ctx, name && *name ? name : "model");
  m->source = ppi_arena_strdup(&m->arena, ctx, source ? source : "model");
  ppi_vec_init(&b->ops, sizeof(struct op_rec));
  ppi_vec_init(&b->edges, sizeof(struct edge_rec));
  ppi_vec_init(&b->keys, sizeof(struct table_key));
  ppi_vec_init(&b->times, sizeof(struct time_rec));
  ppi_vec_init(&b->tps, sizeof(struct tps_rec));
  ppi_vec_init(&b->hyper, sizeof(struct hyper_rec));
  ppi_vec_init(&b->parts, sizeof(struct part_rec));
  ppi_strmap_init(&b->names);
  ppi_strmap_init(&b->keymap);
  *out = b;
  if (!m->name || !m->source) {
    pp_model_builder_destroy(b);
    *out = NULL;
    return ctx->err;
  }
  return PP_OK;
}

void pp_model_builder_destroy(pp_model_builder *b)
{
  pp_ctx *ctx;
  if (!b)
    return;
  ctx = b->ctx;
  ppi_vec_free(ctx, &b->ops);
  ppi_vec_free(ctx, &b->edges);
  ppi_vec_free(ctx, &b->keys);
  ppi_vec_free(ctx, &b->times);
  ppi_vec_free(ctx, &b->tps);
  ppi_vec_free(ctx, &b->hyper);
  ppi_vec_free(ctx, &b->parts);
  ppi_strmap_free(ctx, &b->names);
  ppi_strmap_free(ctx, &b->keymap);
  if (b->m)
    pp_model_destroy(b->m);
  ppi_free(ctx, b, sizeof *b);
}

pp_status pp_model_builder_set_micro_batch(pp_model_builder *b, int32_t mbs)
{
  if (!b)
    return PP_EINVAL;
  if (mbs < 1)
    return bfail(b, PP_EINPUT,
                 "micro_batch must be a positive integer, "
                 "not %d",
                 (int)mbs);
  b->m->micro_batch = mbs;
  return PP_OK;
}

pp_status pp_model_builder_set_reference_type(pp_model_builder *b,
                                              const char *type)
{
  if (!b)
    return PP_EINVAL;
  if (type && ppi_name_problem(type))
    return bfail(b, PP_EINPUT, "reference_type %s", ppi_name_problem(type));
  b->m->reftype = type ? ppi_arena_strdup(&b->m->arena, b->ctx, type) : NULL;
  if (type && !b->m->reftype)
    return b->ctx->err;
  return PP_OK;
}

pp_status pp_model_builder_set_efficiency(pp_model_builder *b, double eff)
{
  if (!b)
    return PP_EINVAL;
  if (!(eff > 0 && eff <= 1))
    return bfail(b, PP_EINPUT, "efficiency must be in (0, 1], not %g", eff);
  b->m->efficiency = eff;
  return PP_OK;
}

pp_status pp_model_builder_set_loss(pp_model_builder *b, double fwd_bytes,
                                    double bwd_bytes)
{
  if (!b)
    return PP_EINVAL;
  if (!(fwd_bytes >= 0 && isfinite(fwd_bytes) && bwd_bytes >= 0 &&
        isfinite(bwd_bytes)))
    return bfail(b, PP_EINPUT,
                 "loss bytes must be finite numbers >= 0, not %g and %g",
                 fwd_bytes, bwd_bytes);
  b->m->loss_fbytes = fwd_bytes;
  b->m->loss_bbytes = bwd_bytes;
  return PP_OK;
}

pp_status pp_model_builder_set_pipe_extra(pp_model_builder *b, double bytes)
{
  if (!b)
    return PP_EINVAL;
  if (!(bytes >= 0 && isfinite(bytes)))
    return bfail(b, PP_EINPUT,
                 "pipe_extra_bytes must be a finite number >= 0, not %g",
                 bytes);
  b->m->pipe_extra = bytes;
  return PP_OK;
}

pp_status pp_model_builder_set_dtype(pp_model_builder *b, pp_precision dtype)
{
  if (!b)
    return PP_EINVAL;
  if (dtype == PP_PREC_MODEL || !pp_precision_name(dtype))
    return bfail(b, PP_EINPUT, "dtype must be fp32, fp16 or bf16 (%d)",
                 (int)dtype);
  b->m->dtype = dtype;
  return PP_OK;
}

pp_status pp_model_builder_set_memory_format(pp_model_builder *b,
                                             pp_memory_format f)
{
  if (!b)
    return PP_EINVAL;
  if (!pp_memory_format_name(f))
    return bfail(b, PP_EINPUT,
                 "memory_format must be channels_last or contiguous (%d)",
                 (int)f);
  b->m->nchw = f == PP_MF_CONTIGUOUS;
  return PP_OK;
}

pp_status pp_model_builder_set_hyper(pp_model_builder *b, const char *key,
                                     double value)
{
  struct hyper_rec h;
  size_t i;
  if (!b || !key)
    return PP_EINVAL;
  if (ppi_name_problem(key))
    return bfail(b, PP_EINPUT, "hyper-parameter name %s",
                 ppi_name_problem(key));
  if (!isfinite(value))
    return bfail(b, PP_EINPUT, "hyper-parameter '%s' is not a finite number",
                 key);
  for (i = 0; i < b->hyper.n; i++)
    if (strcmp(PPI_VEC_AT(&b->hyper, struct hyper_rec, i).key, key) == 0) {
      PPI_VEC_AT(&b->hyper, struct hyper_rec, i).val = value;
      return PP_OK;
    }
  h.key = ppi_arena_strdup(&b->m->arena, b->ctx, key);
  h.val = value;
  if (!h.key)
    return b->ctx->err;
  return ppi_vec_push(b->ctx, &b->hyper, &h);
}

/* A time, FLOP count or size must be finite and >= 0. */
static pp_status check_num(pp_model_builder *b, const char *what, int32_t id,
                           const char *name, const char *field, double x)
{
  if (isnan(x))
    return bfail(b, PP_EINPUT, "%s '%s' (index %d): %s is NaN", what, name,
                 (int)id, field);
  if (!isfinite(x))
    return bfail(b, PP_EINPUT, "%s '%s' (index %d): %s is infinite", what, name,
                 (int)id, field);
  if (x < 0)
    return bfail(b, PP_EINPUT, "%s '%s' (index %d): %s is negative (%g)", what,
                 name, (int)id, field, x);
  return PP_OK;
}

static const char *opname(const pp_model_builder *b, int32_t v)
{
  return PPI_VEC_AT(&b->ops, struct op_rec, v).name;
}

pp_status pp_model_builder_add_op(pp_model_builder *b, const pp_op_desc *d,
                                  int32_t *id)
{
  struct op_rec r;
  int32_t n, old = -1;
  const char *why;
  pp_status rc;

  if (!b || !d)
    return PP_EINVAL;
  n = (int32_t)b->ops.n;
  if (id)
    *id = -1;
  if (b->ops.n >= PP_MAX_OPS)
    return bfail(b, PP_ELIMIT, "more than %d operators", PP_MAX_OPS);
  if ((why = ppi_name_problem(d->name)))
    return bfail(
        b, d->name && strlen(d->name) > PP_MAX_NAME ? PP_ELIMIT : PP_EINPUT,
        "operator %d: name %s", (int)n, why);
  if (d->kind && *d->kind && (why = ppi_name_problem(d->kind)))
    return bfail(b, strlen(d->kind) > PP_MAX_NAME ? PP_ELIMIT : PP_EINPUT,
                 "operator '%s' (index %d): kind %s", d->name, (int)n, why);
  if ((rc = check_num(b, "operator", n, d->name, "fwd_ms", d->fwd_ms)) ||
      (rc = check_num(b, "operator", n, d->name, "bwd_ms", d->bwd_ms)) ||
      (rc = check_num(b, "operator", n, d->name, "update_ms", d->update_ms)) ||
      (rc = check_num(b, "operator", n, d->name, "fwd_flops", d->fwd_flops)) ||
      (rc = check_num(b, "operator", n, d->name, "bwd_flops", d->bwd_flops)) ||
      (rc = check_num(b, "operator", n, d->name, "fwd_bytes", d->fwd_bytes)) ||
      (rc = check_num(b, "operator", n, d->name, "bwd_bytes", d->bwd_bytes)) ||
      (rc = check_num(b, "operator", n, d->name, "param_bytes",
                      (double)d->param_bytes)) ||
      (rc = check_num(b, "operator", n, d->name, "out_bytes",
                      (double)d->out_bytes)) ||
      (rc = check_num(b, "operator", n, d->name, "saved_bytes",
                      (double)d->saved_bytes)))
    return rc;
  memset(&r, 0, sizeof r);
  r.name = ppi_arena_strdup(&b->m->arena, b->ctx, d->name);
  r.kind = d->kind && *d->kind ? ppi_arena_strdup(&b->m->arena, b->ctx, d->kind)
                               : NULL;
  if (!r.name || (d->kind && *d->kind && !r.kind))
    return b->failed = true, b->ctx->err;
  rc = ppi_strmap_put(b->ctx, &b->names, r.name, n, &old);
  if (rc == PP_EINVAL)
    return bfail(b, PP_EINPUT,
                 "operator '%s' (index %d): duplicate name "
                 "(also operator %d)",
                 d->name, (int)n, (int)old);
  if (rc != PP_OK)
    return b->failed = true, rc;
  r.fwd = d->fwd_ms;
  r.bwd = d->bwd_ms;
  r.upd = d->update_ms;
  r.ffl = d->fwd_flops;
  r.bfl = d->bwd_flops;
  r.fby = d->fwd_bytes;
  r.bby = d->bwd_bytes;
  r.param = d->param_bytes;
  r.out = d->out_bytes;
  r.saved = d->saved_bytes;
  r.tied = -1;
  rc = ppi_vec_push(b->ctx, &b->ops, &r);
  if (rc != PP_OK)
    return b->failed = true, rc;
  if (id)
    *id = n;
  return PP_OK;
}

pp_status ppi_model_builder_add_part(pp_model_builder *b, int32_t op,
                                     const double q[PPI_PART])
{
  struct part_rec r;
  int k;
  pp_status rc;
  if (!b || !q || op < 0 || (size_t)op >= b->ops.n)
    return PP_EINVAL;
  for (k = 0; k < 4; k++)
    if (!(q[k] >= 0) || !isfinite(q[k]))
      return bfail(b, PP_EINPUT,
                   "operator %d: a roofline part must hold non-negative "
                   "FLOPs and bytes",
                   (int)op);
  if (q[4] != 0 && q[4] != PPI_CONV && q[4] != PPI_CONV_WINOGRAD)
    return bfail(b, PP_EINPUT,
                 "operator %d: a roofline part's class must be 0, 1 "
                 "(convolution) or 2 (3x3 stride-1 convolution), not %g",
                 (int)op, q[4]);
  r.op = op;
  memcpy(r.q, q, sizeof r.q);
  if ((rc = ppi_vec_push(b->ctx, &b->parts, &r)) != PP_OK)
    b->failed = true;
  return rc;
}

int32_t pp_model_builder_find_op(const pp_model_builder *b, const char *name)
{
  return b ? ppi_strmap_get(&b->names, name) : -1;
}

static bool op_ok(const pp_model_builder *b, int32_t v)
{
  return v >= 0 && (size_t)v < b->ops.n;
}

const char *pp_model_builder_op_name(const pp_model_builder *b, int32_t v)
{
  return b && op_ok(b, v) ? opname(b, v) : NULL;
}

pp_status ppi_model_builder_set_class(pp_model_builder *b, int32_t op,
                                      double cls)
{
  const struct op_rec *r;
  double q[PPI_PART];
  if (!b || !op_ok(b, op))
    return PP_EINVAL;
  r = &PPI_VEC_AT(&b->ops, struct op_rec, op);
  q[0] = r->ffl;
  q[1] = r->fby;
  q[2] = r->bfl;
  q[3] = r->bby;
  q[4] = cls;
  return ppi_model_builder_add_part(b, op, q);
}

pp_status pp_model_builder_tie(pp_model_builder *b, int32_t op, int32_t with)
{
  struct op_rec *r;
  if (!b)
    return PP_EINVAL;
  if (!op_ok(b, op) || !op_ok(b, with))
    return bfail(b, PP_EINPUT, "tie: unknown operator index %d",
                 (int)(op_ok(b, op) ? with : op));
  if (op == with)
    return bfail(b, PP_EINPUT, "operator '%s' (index %d): tied to itself",
                 opname(b, op), (int)op);
  r = &PPI_VEC_AT(&b->ops, struct op_rec, op);
  if (r->tied >= 0 && r->tied != with)
    return bfail(b, PP_EINPUT, "operator '%s' (index %d): tied twice", r->name,
                 (int)op);
  r->tied = with;
  return PP_OK;
}

pp_status pp_model_builder_add_edge(pp_model_builder *b, int32_t from,
                                    int32_t to, int64_t bytes)
{
  struct edge_rec e;
  int32_t n;
  pp_status rc;
  if (!b)
    return PP_EINVAL;
  n = (int32_t)b->edges.n;
  if (b->edges.n >= PP_MAX_EDGES)
    return bfail(b, PP_ELIMIT, "more than %d edges", PP_MAX_EDGES);
  if (!op_ok(b, from))
    return bfail(b, PP_EINPUT, "edge %d: unknown source operator index %lld",
                 (int)n, (long long)from);
  if (!op_ok(b, to))
    return bfail(b, PP_EINPUT, "edge %d: unknown target operator index %lld",
                 (int)n, (long long)to);
  if (from == to)
    return bfail(b, PP_EINPUT,
                 "edge %d: operator '%s' feeds itself (a "
                 "cycle)",
                 (int)n, opname(b, from));
  e.src = from;
  e.dst = to;
  e.bytes = bytes < 0 ? PPI_VEC_AT(&b->ops, struct op_rec, from).out : bytes;
  rc = ppi_vec_push(b->ctx, &b->edges, &e);
  if (rc != PP_OK)
    b->failed = true;
  return rc;
}

/* A table key as text: tp and mbs as 8 hex digits each, then 'T' and
** the type, or 'N' (no type): the index of the tables by key, so that a
** model with many tables (one per micro-batch size, say) is read in
** linear time, not keys x times (a fuzz finding).  No printf: a
** built-in model adds thousands of times.  buf holds PP_MAX_NAME + 24
** bytes (the type passed ppi_name_problem). */
static void key_text(char *buf, const char *type, int32_t tp, int32_t mbs)
{
  static const char hex[] = "0123456789abcdef";
  uint32_t v[2];
  int i, k;
  v[0] = (uint32_t)tp;
  v[1] = (uint32_t)mbs;
  for (k = 0; k < 2; k++)
    for (i = 0; i < 8; i++)
      buf[8 * k + i] = hex[(v[k] >> (28 - 4 * i)) & 15];
  buf[16] = type ? 'T' : 'N';
  if (type)
    memcpy(buf + 17, type, strlen(type) + 1);
  else
    buf[17] = '\0';
}

pp_status pp_model_builder_add_time(pp_model_builder *b, int32_t op,
                                    const char *type, int32_t tp, int32_t mbs,
                                    double fwd_ms, double bwd_ms,
                                    double update_ms)
{
  struct time_rec t;
  const char *nm;
  pp_status rc;

  if (!b)
    return PP_EINVAL;
  if (!op_ok(b, op))
    return bfail(b, PP_EINPUT, "times: unknown operator index %d", (int)op);
  nm = opname(b, op);
  if (type && ppi_name_problem(type))
    return bfail(b, PP_EINPUT,
                 "operator '%s' (index %d): times entry's "
                 "device type %s",
                 nm, (int)op, ppi_name_problem(type));
  if (tp < 1 || mbs < 1)
    return bfail(b, PP_EINPUT,
                 "operator '%s' (index %d): times entry needs "
                 "tp >= 1 and micro_batch >= 1 (got %d, %d)",
                 nm, (int)op, (int)tp, (int)mbs);
  if ((rc = check_num(b, "operator", op, nm, "times fwd_ms", fwd_ms)) ||
      (rc = check_num(b, "operator", op, nm, "times bwd_ms", bwd_ms)))
    return rc;
  if (isnan(update_ms) || isinf(update_ms))
    return bfail(b, PP_EINPUT,
                 "operator '%s' (index %d): times update_ms "
                 "is not finite",
                 nm, (int)op);
  t.op = op;
  {
    char kt[PP_MAX_NAME + 24];
    key_text(kt, type, tp, mbs);
    t.table = ppi_strmap_get(&b->keymap, kt);
    if (t.table < 0) {
      struct table_key k;
      const char *kc = ppi_arena_strdup(&b->m->arena, b->ctx, kt);
      k.type = type ? ppi_arena_strdup(&b->m->arena, b->ctx, type) : NULL;
      k.tp = tp;
      k.mbs = mbs;
      if (!kc || (type && !k.type))
        return b->failed = true, b->ctx->err;
      t.table = (int32_t)b->keys.n;
      if ((rc = ppi_vec_push(b->ctx, &b->keys, &k)) != PP_OK ||
          (rc = ppi_strmap_put(b->ctx, &b->keymap, kc, t.table, NULL)))
        return b->failed = true, rc;
    }
  }
  t.fwd = fwd_ms;
  t.bwd = bwd_ms;
  t.upd = update_ms < 0 ? NAN : update_ms;
  rc = ppi_vec_push(b->ctx, &b->times, &t);
  if (rc != PP_OK)
    b->failed = true;
  return rc;
}

pp_status pp_model_builder_add_tp_sizes(pp_model_builder *b, int32_t op,
                                        int32_t tp, int64_t param_bytes,
                                        int64_t out_bytes, int64_t saved_bytes)
{
  struct tps_rec t;
  pp_status rc;
  if (!b)
    return PP_EINVAL;
  if (!op_ok(b, op))
    return bfail(b, PP_EINPUT, "tp_sizes: unknown operator index %d", (int)op);
  if (tp < 2)
    return bfail(b, PP_EINPUT,
                 "operator '%s' (index %d): tp_sizes entry "
                 "needs tp >= 2 (tp 1 is the operator itself)",
                 opname(b, op), (int)op);
  if (param_bytes < 0 || out_bytes < 0 || saved_bytes < 0)
    return bfail(b, PP_EINPUT,
                 "operator '%s' (index %d): tp_sizes entry "
                 "with a negative size",
                 opname(b, op), (int)op);
  t.op = op;
  t.tp = tp;
  t.param = param_bytes;
  t.out = out_bytes;
  t.saved = saved_bytes;
  rc = ppi_vec_push(b->ctx, &b->tps, &t);
  if (rc != PP_OK)
    b->failed = true;
  return rc;
}

/* ---- finish ----------------------------------------------------------- */

static int cmp_edge(const void *x, const void *y)
{
  const struct edge_rec *a = x, *b = y;
  if (a->src != b->src)
    return a->src < b->src ? -1 : 1;
  if (a->dst != b->dst)
    return a->dst < b->dst ? -1 : 1;
  return 0;
}

/* The roofline parts as a CSR by operator, in the order given; an
** operator with parts takes their sums as its FLOPs and bytes. */
static pp_status layout_parts(pp_model_builder *b)
{
  struct pp_model *m = b->m;
  size_t np = b->parts.n, i;
  int32_t v, *fill;
  if (np == 0)
    return PP_OK;
  m->rf_off =
      ppi_arena_alloc(&m->arena, b->ctx, (size_t)m->nop + 1, sizeof(int32_t));
  m->rf = ppi_arena_alloc(&m->arena, b->ctx, np * PPI_PART, sizeof(double));
  fill = ppi_calloc(b->ctx, (size_t)m->nop + 1, sizeof *fill);
  if (!m->rf_off || !m->rf || !fill) {
    ppi_free(b->ctx, fill, ((size_t)m->nop + 1) * sizeof *fill);
    return b->ctx->err;
  }
  memset(m->rf_off, 0, ((size_t)m->nop + 1) * sizeof(int32_t));
  for (i = 0; i < np; i++)
    m->rf_off[PPI_VEC_AT(&b->parts, struct part_rec, i).op + 1]++;
  for (v = 0; v < m->nop; v++) {
    m->rf_off[v + 1] += m->rf_off[v];
    fill[v] = m->rf_off[v];
    if (m->rf_off[v + 1] > m->rf_off[v])
      m->fflops[v] = m->bflops[v] = m->fbytes[v] = m->bbytes[v] = 0;
  }
  for (i = 0; i < np; i++) {
    const struct part_rec *r = &PPI_VEC_AT(&b->parts, struct part_rec, i);
    memcpy(&m->rf[PPI_PART * (size_t)fill[r->op]++], r->q, sizeof r->q);
    m->fflops[r->op] += r->q[0];
    m->fbytes[r->op] += r->q[1];
    m->bflops[r->op] += r->q[2];
    m->bbytes[r->op] += r->q[3];
    if (r->q[0] > 0 || r->q[2] > 0)
      m->has_flops = true;
  }
  ppi_free(b->ctx, fill, ((size_t)m->nop + 1) * sizeof *fill);
  return PP_OK;
}

static pp_status layout_ops(pp_model_builder *b)
{
  struct pp_model *m = b->m;
  pp_ctx *ctx = b->ctx;
  struct ppi_arena *ar = &m->arena;
  int32_t n = (int32_t)b->ops.n, v;

  m->nop = n;
  m->op_name = ppi_arena_alloc(ar, ctx, (size_t)n, sizeof *m->op_name);
  m->op_kind = ppi_arena_alloc(ar, ctx, (size_t)n, sizeof *m->op_kind);
  m->fwd = ppi_arena_alloc(ar, ctx, (size_t)n, sizeof(double));
  m->bwd = ppi_arena_alloc(ar, ctx, (size_t)n, sizeof(double));
  m->upd = ppi_arena_alloc(ar, ctx, (size_t)n, sizeof(double));
  m->fflops = ppi_arena_alloc(ar, ctx, (size_t)n, sizeof(double));
  m->bflops = ppi_arena_alloc(ar, ctx, (size_t)n, sizeof(double));
  m->fbytes = ppi_arena_alloc(ar, ctx, (size_t)n, sizeof(double));
  m->bbytes = ppi_arena_alloc(ar, ctx, (size_t)n, sizeof(double));
  m->param = ppi_arena_alloc(ar, ctx, (size_t)n, sizeof(int64_t));
  m->out = ppi_arena_alloc(ar, ctx, (size_t)n, sizeof(int64_t));
  m->saved = ppi_arena_alloc(ar, ctx, (size_t)n, sizeof(int64_t));
  m->tied = ppi_arena_alloc(ar, ctx, (size_t)n, sizeof(int32_t));
  if (!m->op_name || !m->op_kind || !m->fwd || !m->bwd || !m->upd ||
      !m->fflops || !m->bflops || !m->fbytes || !m->bbytes || !m->param ||
      !m->out || !m->saved || !m->tied)
    return ctx->err;
  for (v = 0; v < n; v++) {
    const struct op_rec *r = &PPI_VEC_AT(&b->ops, struct op_rec, v);
    m->op_name[v] = (char *)r->name;
    m->op_kind[v] = (char *)r->kind;
    m->fwd[v] = r->fwd;
    m->bwd[v] = r->bwd;
    m->upd[v] = r->upd;
    m->fflops[v] = r->ffl;
    m->bflops[v] = r->bfl;
    m->fbytes[v] = r->fby;
    m->bbytes[v] = r->bby;
    m->param[v] = r->param;
    m->out[v] = r->out;
    m->saved[v] = r->saved;
    m->tied[v] = r->tied;
    if (r->ffl > 0 || r->bfl > 0)
      m->has_flops = true;
  }
  for (v = 0; v < n; v++) {
    int32_t w = m->tied[v];
    if (w >= 0 && m->tied[w] >= 0)
      return bfail(b, PP_EINPUT,
                   "operator '%s' (index %d): tied to '%s', "
                   "which is itself tied to '%s'; tie to '%s' instead",
                   m->op_name[v], (int)v, m->op_name[w], m->op_name[m->tied[w]],
                   m->op_name[m->tied[w]]);
  }
  return layout_parts(b);
}

static pp_status layout_edges(pp_model_builder *b)
{
  struct pp_model *m = b->m;
  pp_ctx *ctx = b->ctx;
  struct ppi_arena *ar = &m->arena;
  struct edge_rec *es;
  int32_t n = m->nop, ne, e, v;

  if (b->edges.n == 0 && n > 1) {
    /* No edges: the operators form a chain in listed order. */
    struct edge_rec r;
    pp_status rc;
    for (v = 0; v + 1 < n; v++) {
      r.src = v;
      r.dst = v + 1;
      r.bytes = m->out[v];
      if ((rc = ppi_vec_push(ctx, &b->edges, &r)) != PP_OK)
        return rc;
    }
    m->edges_implied = true;
  }
  ne = (int32_t)b->edges.n;
  es = b->edges.data;
  m->nedge = ne;
  m->esrc = ppi_arena_alloc(ar, ctx, (size_t)ne, sizeof(int32_t));
  m->edst = ppi_arena_alloc(ar, ctx, (size_t)ne, sizeof(int32_t));
  m->ebytes = ppi_arena_alloc(ar, ctx, (size_t)ne, sizeof(int64_t));
  m->out_off = ppi_arena_alloc(ar, ctx, (size_t)n + 1, sizeof(int32_t));
  m->in_off = ppi_arena_alloc(ar, ctx, (size_t)n + 1, sizeof(int32_t));
  m->out_e = ppi_arena_alloc(ar, ctx, (size_t)ne, sizeof(int32_t));
  m->in_e = ppi_arena_alloc(ar, ctx, (size_t)ne, sizeof(int32_t));
  if (!m->esrc || !m->edst || !m->ebytes || !m->out_off || !m->in_off ||
      !m->out_e || !m->in_e)
    return ctx->err;
  /* Edges keep their input order; duplicates are found on a sorted
  ** copy's neighbours. */
  for (e = 0; e < ne; e++) {
    m->esrc[e] = es[e].src;
    m->edst[e] = es[e].dst;
    m->ebytes[e] = es[e].bytes;
  }
  if (ne > 1) {
    qsort(es, (size_t)ne, sizeof *es, cmp_edge);
    for (e = 1; e < ne; e++)
      if (es[e].src == es[e - 1].src && es[e].dst == es[e - 1].dst)
        return bfail(b, PP_EINPUT, "duplicate edge '%s' -> '%s'",
                     m->op_name[es[e].src], m->op_name[es[e].dst]);
  }
  for (e = 0; e < ne; e++) {
    m->out_off[m->esrc[e] + 1]++;
    m->in_off[m->edst[e] + 1]++;
  }
  for (v = 0; v < n; v++) {
    m->out_off[v + 1] += m->out_off[v];
    m->in_off[v + 1] += m->in_off[v];
  }
  {
    /* Counting sort by endpoint keeps each list in edge-index order. */
    int32_t *fo = ppi_calloc(ctx, (size_t)n, sizeof(int32_t));
    int32_t *fi = ppi_calloc(ctx, (size_t)n, sizeof(int32_t));
    if (!fo || !fi) {
      ppi_free(ctx, fo, (size_t)n * sizeof(int32_t));
      ppi_free(ctx, fi, (size_t)n * sizeof(int32_t));
      return ctx->err;
    }
    for (e = 0; e < ne; e++) {
      m->out_e[m->out_off[m->esrc[e]] + fo[m->esrc[e]]++] = e;
      m->in_e[m->in_off[m->edst[e]] + fi[m->edst[e]]++] = e;
    }
    ppi_free(ctx, fo, (size_t)n * sizeof(int32_t));
    ppi_free(ctx, fi, (size_t)n * sizeof(int32_t));
  }
  return PP_OK;
}

static bool same_type(const char *a, const char *b)
{
  return a == b || (a && b && strcmp(a, b) == 0);
}

static pp_status layout_tables(pp_model_builder *b)
{
  struct pp_model *m = b->m;
  pp_ctx *ctx = b->ctx;
  struct ppi_arena *ar = &m->arena;
  int32_t nt = (int32_t)b->keys.n, n = m->nop, t;
  size_t i, cells;

  m->ntable = nt;
  if (nt > 0) {
    if (!ppi_mul_ok((size_t)nt, (size_t)n, &cells))
      return bfail(b, PP_ELIMIT, "too many profile tables");
    m->tab_type = ppi_arena_alloc(ar, ctx, (size_t)nt, sizeof(char *));
    m->tab_tp = ppi_arena_alloc(ar, ctx, (size_t)nt, sizeof(int32_t));
    m->tab_mbs = ppi_arena_alloc(ar, ctx, (size_t)nt, sizeof(int32_t));
    m->tab_fwd = ppi_arena_alloc(ar, ctx, cells, sizeof(double));
    m->tab_bwd = ppi_arena_alloc(ar, ctx, cells, sizeof(double));
    m->tab_upd = ppi_arena_alloc(ar, ctx, cells, sizeof(double));
    if (!m->tab_type || !m->tab_tp || !m->tab_mbs || !m->tab_fwd ||
        !m->tab_bwd || !m->tab_upd)
      return ctx->err;
    for (i = 0; i < cells; i++)
      m->tab_fwd[i] = m->tab_bwd[i] = m->tab_upd[i] = NAN;
    m->tname = ppi_arena_alloc(ar, ctx, (size_t)nt + 1, sizeof(char *));
    m->tab_tid = ppi_arena_alloc(ar, ctx, (size_t)nt, sizeof(int32_t));
    if (!m->tname || !m->tab_tid)
      return ctx->err;
    m->tname[0] = m->reftype;
    m->ntname = 1;
    for (t = 0; t < nt; t++) {
      const struct table_key *k = &PPI_VEC_AT(&b->keys, struct table_key, t);
      int32_t q = 0;
      if (k->type && !same_type(k->type, m->reftype)) {
        for (q = 1; q < m->ntname && strcmp(m->tname[q], k->type); q++)
          ;
        if (q == m->ntname)
          m->tname[m->ntname++] = k->type;
      }
      m->tab_tid[t] = q;
    }
    m->tid_off =
        ppi_arena_alloc(ar, ctx, (size_t)m->ntname + 1, sizeof(int32_t));
    m->tid_tab = ppi_arena_alloc(ar, ctx, (size_t)nt, sizeof(int32_t));
    if (!m->tid_off || !m->tid_tab)
      return ctx->err;
    for (t = 0; t < nt; t++) /* counts, then starts, then fill in order */
      m->tid_off[m->tab_tid[t] + 1]++;
    for (t = 0; t < m->ntname; t++)
      m->tid_off[t + 1] += m->tid_off[t];
    {
      int32_t q;
      for (t = 0; t < nt; t++) {
        q = m->tab_tid[t];
        m->tid_tab[m->tid_off[q]++] = t;
      }
      for (q = m->ntname; q > 0; q--) /* back to starts */
        m->tid_off[q] = m->tid_off[q - 1];
      m->tid_off[0] = 0;
    }
    for (t = 0; t < nt; t++) {
      const struct table_key *k = &PPI_VEC_AT(&b->keys, struct table_key, t);
      m->tab_type[t] = (char *)k->type;
      m->tab_tp[t] = k->tp;
      m->tab_mbs[t] = k->mbs;
      /* The reference point is the operator's own fields: a table
      ** there would be a second, possibly different, truth. */
      if (k->tp == 1 && k->mbs == m->micro_batch &&
          (k->type == NULL || same_type(k->type, m->reftype)))
        return bfail(b, PP_EINPUT,
                     "a times entry repeats the reference "
                     "point (%s, tp 1, micro_batch %d); give those times "
                     "as the operator's fwd_ms and bwd_ms",
                     k->type ? k->type : "reference type", (int)m->micro_batch);
    }
    for (i = 0; i < b->times.n; i++) {
      const struct time_rec *r = &PPI_VEC_AT(&b->times, struct time_rec, i);
      size_t c = (size_t)r->table * (size_t)n + (size_t)r->op;
      if (!isnan(m->tab_fwd[c])) {
        const struct table_key *k =
            &PPI_VEC_AT(&b->keys, struct table_key, r->table);
        return bfail(b, PP_EINPUT,
                     "operator '%s' (index %d): two times "
                     "entries for (%s, tp %d, micro_batch %d)",
                     m->op_name[r->op], (int)r->op,
                     k->type ? k->type : "reference type", (int)k->tp,
                     (int)k->mbs);
      }
      m->tab_fwd[c] = r->fwd;
      m->tab_bwd[c] = r->bwd;
      m->tab_upd[c] = r->upd;
    }
  }
  /* Size tables, one per distinct tp. */
  {
    int32_t ntp = 0, k;
    int32_t tps[PPI_MAX_TP_SIZES];
    for (i = 0; i < b->tps.n; i++) {
      int32_t tp = PPI_VEC_AT(&b->tps, struct tps_rec, i).tp;
      for (k = 0; k < ntp && tps[k] != tp; k++)
        ;
      if (k == ntp) {
        if (ntp == PPI_MAX_TP_SIZES)
          return bfail(b, PP_ELIMIT, "more than %d distinct tp_sizes degrees",
                       PPI_MAX_TP_SIZES);
        tps[ntp++] = tp;
      }
    }
    m->ntps = ntp;
    if (ntp == 0)
      return PP_OK;
    cells = (size_t)ntp * (size_t)n;
    m->tps_tp = ppi_arena_alloc(ar, ctx, (size_t)ntp, sizeof(int32_t));
    m->tps_param = ppi_arena_alloc(ar, ctx, cells, sizeof(int64_t));
    m->tps_out = ppi_arena_alloc(ar, ctx, cells, sizeof(int64_t));
    m->tps_saved = ppi_arena_alloc(ar, ctx, cells, sizeof(int64_t));
    if (!m->tps_tp || !m->tps_param || !m->tps_out || !m->tps_saved)
      return ctx->err;
    memcpy(m->tps_tp, tps, (size_t)ntp * sizeof(int32_t));
    for (i = 0; i < cells; i++)
      m->tps_param[i] = m->tps_out[i] = m->tps_saved[i] = -1;
    for (i = 0; i < b->tps.n; i++) {
      const struct tps_rec *r = &PPI_VEC_AT(&b->tps, struct tps_rec, i);
      size_t c;
      for (k = 0; tps[k] != r->tp; k++)
        ;
      c = (size_t)k * (size_t)n + (size_t)r->op;
      if (m->tps_param[c] >= 0)
        return bfail(b, PP_EINPUT,
                     "operator '%s' (index %d): two tp_sizes "
                     "entries for tp %d",
                     m->op_name[r->op], (int)r->op, (int)r->tp);
      m->tps_param[c] = r->param;
      m->tps_out[c] = r->out;
      m->tps_saved[c] = r->saved;
    }
  }
  return PP_OK;
}

pp_status pp_model_builder_finish(pp_model_builder *b, pp_model **out)
{
  pp_ctx *ctx;
  struct pp_model *m;
  pp_status rc;
  size_t i;

  if (!b || !out) {
    pp_model_builder_destroy(b);
    return PP_EINVAL;
  }
  *out = NULL;
  ctx = b->ctx;
  m = b->m;
  if (b->failed) {
    rc = ctx->err != PP_OK ? ctx->err : PP_EINVAL;
    goto done;
  }
  if (b->ops.n == 0) {
    rc = bfail(b, PP_EINPUT, "the model has no operators");
    goto done;
  }
  if ((rc = layout_ops(b)) != PP_OK || (rc = layout_edges(b)) != PP_OK ||
      (rc = layout_tables(b)) != PP_OK)
    goto done;
  m->nhyper = (int32_t)b->hyper.n;
  if (m->nhyper) {
    m->hyper_key = ppi_arena_alloc(&m->arena, ctx, b->hyper.n, sizeof(char *));
    m->hyper_val = ppi_arena_alloc(&m->arena, ctx, b->hyper.n, sizeof(double));
    if (!m->hyper_key || !m->hyper_val) {
      rc = ctx->err;
      goto done;
    }
    for (i = 0; i < b->hyper.n; i++) {
      m->hyper_key[i] = (char *)PPI_VEC_AT(&b->hyper, struct hyper_rec, i).key;
      m->hyper_val[i] = PPI_VEC_AT(&b->hyper, struct hyper_rec, i).val;
    }
  }
  /* Move the name map into the arena before handing it over, so that
  ** on failure the builder still owns (and frees) it. */
  if ((rc = ppi_strmap_move(ctx, &b->names, &m->arena)) != PP_OK)
    goto done;
  m->opmap = b->names;
  ppi_strmap_init(&b->names);
  if ((rc = ppi_model_index(ctx, m)) != PP_OK ||
      (rc = ppi_model_fit_profiles(ctx, m)) != PP_OK)
    goto done;
  *out = m;
  b->m = NULL;
done:
  pp_model_builder_destroy(b);
  return rc;
}

void pp_model_destroy(pp_model *m)
{
  /* The map's tables live in the arena once finished; an unfinished
  ** model never got one (the builder owns it). */
  if (m)
    ppi_arena_free_owner(&m->arena, m, sizeof *m);
}
