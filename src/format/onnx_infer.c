/* SPDX-License-Identifier: MIT */
/*
** ONNX shape inference with data propagation, inside the reader: the
** equivalent of onnx.shape_inference.infer_shapes(model, data_prop=True)
** for the operators torch.onnx.export emits for CNNs and transformers, so
** that a model imports as exported (docs/FORMATS.md, "ONNX models").
**
** Objective: every node's outputs get an element type and a static shape
** from its inputs' shapes, its attributes and the values of its constant
** inputs; the values of small constants (shape vectors, indices, scalars)
** are computed too, so that Reshape, Slice, Expand, Range,
** ConstantOfShape, Pad, Resize and Unsqueeze targets built from Shape
** outputs resolve (the symbolic dimensions have their values by then:
** onnx.c substitutes them before inference).
**
** Invariant: a tensor's shape is set once; a shape the file declares
** (value_info, graph inputs and outputs) is checked against the inferred
** one, and a mismatch is an error naming the node.  An output is constant
** when every input is (or, for Shape and Size, when the input's shape is
** known); its values are kept when it has at most PPI_ONNX_MAX_VALUES
** elements.
**
** Complexity: O(elements of the outputs) per node for value propagation
** (bounded by PPI_ONNX_MAX_VALUES), O(dims) for shapes.
**
** Source: the ONNX operator specifications (onnx/onnx:docs/Operators.md,
** opsets 1-18), shape rules as written there.
*/
#include "format/onnx_graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXD PPI_ONNX_MAX_DIMS
/* TUNING: the most inputs of one node the inference takes (a Concat of
** DenseNet-264's last dense block has 65); 1024 is far above any network
** exported so far at 8 KiB of stack.  No sweep recorded. */
#define MAX_IN 1024
/* The largest window attribute or pad taken (2^40): sums of a few stay
** far from int64's range. */
#define BIG ((int64_t)1 << 40)

enum {
  T_FLOAT = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT,
  T_INT64 = ONNX__TENSOR_PROTO__DATA_TYPE__INT64,
  T_INT32 = ONNX__TENSOR_PROTO__DATA_TYPE__INT32,
  T_BOOL = ONNX__TENSOR_PROTO__DATA_TYPE__BOOL,
  T_DOUBLE = ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE,
};

int32_t ppi_onnx_elem_bytes(int32_t t)
{
  switch (t) {
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8:
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT8:
  case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: return 1;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16:
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT16:
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16:
  case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16: return 2;
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT32:
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32: return 4;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
  case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE:
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64:
  case ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX64: return 8;
  case ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX128: return 16;
  default: return 0; /* undefined, string */
  }
}

bool ppi_onnx_is_float(int32_t t)
{
  return t == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT ||
         t == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 ||
         t == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16 ||
         t == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE;
}

static pp_status ifail(struct onnx_run *r, size_t j, const char *fmt, ...)
    PP_PRINTF(3, 4);
static pp_status ifail(struct onnx_run *r, size_t j, const char *fmt, ...)
{
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0, "operator '%s' (%s): %s",
                     r->names[j], r->g->node[j]->op_type, msg);
}

/* Not inferable yet: the reason kept for the error if it stays so. */
static pp_status wait(struct onnx_run *r, size_t j, bool *done, const char *fmt,
                      ...) PP_PRINTF(4, 5);
static pp_status wait(struct onnx_run *r, size_t j, bool *done, const char *fmt,
                      ...)
{
  va_list ap;
  (void)j;
  va_start(ap, fmt);
  vsnprintf(r->why, sizeof r->why, fmt, ap);
  va_end(ap);
  *done = false;
  return PP_OK;
}

/* A double as int64: NaN 0, saturated beyond int64's range (the cast is
** undefined there). */
static int64_t to_i64(double v)
{
  return v != v         ? 0
         : v >= 9.2e18  ? INT64_MAX
         : v <= -9.2e18 ? INT64_MIN
                        : (int64_t)v;
}

/* ---- values ------------------------------------------------------------ */

static pp_status alloc_values(struct onnx_run *r, struct otensor *t)
{
  size_t n = t->elems > 0 ? (size_t)t->elems : 1;
  t->iv = ppi_calloc(r->ctx, n, sizeof *t->iv);
  t->dv = t->iv ? ppi_calloc(r->ctx, n, sizeof *t->dv) : NULL;
  if (!t->dv) {
    if (t->iv)
      ppi_free(r->ctx, t->iv, n * sizeof *t->iv);
    t->iv = NULL;
    return r->ctx->err;
  }
  return PP_OK;
}

static int64_t le64(const uint8_t *p, int n)
{
  uint64_t v = 0;
  int i;
  for (i = n - 1; i >= 0; i--)
    v = v << 8 | p[i];
  if (n < 8 && (v >> (8 * n - 1)) & 1) /* sign-extend */
    v |= ~(uint64_t)0 << (8 * n);
  return (int64_t)v;
}

static double half_to_double(uint16_t h, bool bf16)
{
  if (bf16) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
  }
  {
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0    ? ldexp(m, -24)
               : e == 31 ? (m ? NAN : INFINITY)
                         : ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
  }
}

pp_status ppi_onnx_tensor_values(struct onnx_run *r,
                                 const Onnx__TensorProto *tp, struct otensor *t)
{
  int32_t ty = tp->data_type, eb = ppi_onnx_elem_bytes(ty);
  size_t n = (size_t)t->elems, i, have;
  pp_status rc;
  bool is_f = ppi_onnx_is_float(ty);
  if (t->elems > PPI_ONNX_MAX_VALUES || eb == 0 ||
      ty == ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX64 ||
      ty == ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX128)
    return PP_OK;
  if (tp->raw_data.len)
    have = tp->raw_data.len / (size_t)eb;
  else if (ty == T_FLOAT)
    have = tp->n_float_data;
  else if (ty == T_DOUBLE)
    have = tp->n_double_data;
  else if (ty == T_INT64)
    have = tp->n_int64_data;
  else if (ty == ONNX__TENSOR_PROTO__DATA_TYPE__UINT64 ||
           ty == ONNX__TENSOR_PROTO__DATA_TYPE__UINT32)
    have = tp->n_uint64_data;
  else
    have = tp->n_int32_data;
  if (have < n || (n == 0 && t->elems != 0))
    return PP_OK; /* no data (a stripped weight, external data) */
  if ((rc = alloc_values(r, t)))
    return rc;
  for (i = 0; i < n; i++) {
    double d;
    int64_t v = 0;
    if (tp->raw_data.len) {
      const uint8_t *p = tp->raw_data.data + i * (size_t)eb;
      if (ty == T_FLOAT) {
        float f;
        memcpy(&f, p, sizeof f);
        d = f;
      } else if (ty == T_DOUBLE)
        memcpy(&d, p, sizeof d);
      else if (is_f)
        d = half_to_double((uint16_t)(p[0] | p[1] << 8),
                           ty == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16);
      else {
        v = le64(p, eb);
        if (ty == ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 ||
            ty == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL)
          v &= 0xff;
        d = (double)v;
      }
    } else if (ty == T_FLOAT)
      d = tp->float_data[i];
    else if (ty == T_DOUBLE)
      d = tp->double_data[i];
    else if (ty == T_INT64) {
      v = tp->int64_data[i];
      t->iv[i] = v;
      t->dv[i] = (double)v;
      continue;
    } else if (ty == ONNX__TENSOR_PROTO__DATA_TYPE__UINT64 ||
               ty == ONNX__TENSOR_PROTO__DATA_TYPE__UINT32)
      d = (double)tp->uint64_data[i];
    else if (is_f)
      d = half_to_double((uint16_t)tp->int32_data[i],
                         ty == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16);
    else
      d = tp->int32_data[i];
    t->dv[i] = d;
    if (tp->raw_data.len && !is_f)
      t->iv[i] = v;
    else
      t->iv[i] = to_i64(d); /* NaN too: fuzz_onnx's first finding */
  }
  return PP_OK;
}

/* ---- shapes ------------------------------------------------------------ */

pp_status ppi_onnx_set_shape(struct onnx_run *r, int32_t k, int32_t type,
                             int32_t nd, const int64_t *dims, const char *who)
{
  struct otensor *t = &OT(r, k);
  double prod = 1;
  int32_t i;
  if (nd > MAXD)
    return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                       "%s: tensor '%s' has %d dimensions, more than the %d "
                       "parplan reads",
                       who, OT(r, k).name, (int)nd, MAXD);
  for (i = 0; i < nd; i++) {
    if (dims[i] < 0)
      return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                         "%s: tensor '%s': dimension %d is negative (%lld)",
                         who, OT(r, k).name, (int)i, (long long)dims[i]);
    prod *= (double)dims[i];
  }
  if (prod * 16 > 9.0e18)
    return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                       "%s: tensor '%s': %.3g elements is more than parplan "
                       "can count",
                       who, OT(r, k).name, prod);
  if (t->ndim >= 0) {
    bool same = t->ndim == nd;
    for (i = 0; same && i < nd; i++)
      same = t->dims[i] == dims[i];
    if (!same) {
      char a[160], b[160];
      size_t la = 0, lb = 0;
      a[0] = b[0] = '\0';
      for (i = 0; i < t->ndim && la < sizeof a - 24; i++)
        la += (size_t)snprintf(a + la, sizeof a - la, "%s%lld", i ? "x" : "",
                               (long long)t->dims[i]);
      for (i = 0; i < nd && lb < sizeof b - 24; i++)
        lb += (size_t)snprintf(b + lb, sizeof b - lb, "%s%lld", i ? "x" : "",
                               (long long)dims[i]);
      return ppi_fail_at(r->ctx, PP_EINPUT, r->src, 0, 0,
                         "%s: tensor '%s' is declared [%s] but its inputs "
                         "give [%s]",
                         who, OT(r, k).name, a, b);
    }
    if (!t->type || (type && ppi_onnx_elem_bytes(t->type) == 0))
      t->type = type;
    return PP_OK;
  }
  t->ndim = nd;
  memcpy(t->dims, dims, (size_t)nd * sizeof *dims);
  t->elems = (int64_t)prod;
  if (type)
    t->type = type;
  return PP_OK;
}

/* ---- attributes -------------------------------------------------------- */

static const Onnx__AttributeProto *attr(const Onnx__NodeProto *n,
                                        const char *name)
{
  size_t i;
  for (i = 0; i < n->n_attribute; i++)
    if (n->attribute[i]->name && !strcmp(n->attribute[i]->name, name))
      return n->attribute[i];
  return NULL;
}

static int64_t aint(const Onnx__NodeProto *n, const char *name, int64_t dv)
{
  const Onnx__AttributeProto *a = attr(n, name);
  return a && a->has_i ? a->i : dv;
}

/* An ints attribute: its count (-1: absent), values in v[0..max-1]. */
static int aints(const Onnx__NodeProto *n, const char *name, int64_t *v,
                 int max)
{
  const Onnx__AttributeProto *a = attr(n, name);
  int i;
  if (!a || (a->n_ints == 0 &&
             a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS))
    return -1;
  for (i = 0; i < (int)a->n_ints && i < max; i++)
    v[i] = a->ints[i];
  return (int)a->n_ints;
}

/* ---- the node's tensors ------------------------------------------------ */

struct node {
  struct onnx_run *r;
  size_t j;
  const Onnx__NodeProto *n;
  const char *op;
  int nin;
  struct otensor *in[MAX_IN]; /* NULL: an optional input left out */
};

static bool op_is(const char *op, const char *const *list)
{
  for (; *list; list++)
    if (!strcmp(op, *list))
      return true;
  return false;
}

static bool has(const struct node *x, int i)
{
  return i < x->nin && x->in[i];
}

static pp_status out_shape(struct node *x, int i, int32_t type, int32_t nd,
                           const int64_t *dims, int32_t *k)
{
  char who[PP_MAX_NAME + 96];
  *k = -1;
  if ((size_t)i >= x->n->n_output || !x->n->output[i][0])
    return PP_OK;
  *k = ppi_strmap_get(&x->r->tmap, x->n->output[i]);
  snprintf(who, sizeof who, "operator '%s' (%s)", x->r->names[x->j], x->op);
  return ppi_onnx_set_shape(x->r, *k, type, nd, dims, who);
}

/* Output i gets values: allocated, returned in *t (NULL when too many or
** no such output). */
static pp_status out_values(struct node *x, int32_t k, struct otensor **t)
{
  struct otensor *o;
  *t = NULL;
  if (k < 0)
    return PP_OK;
  o = &OT(x->r, k);
  if (o->iv || o->elems > PPI_ONNX_MAX_VALUES)
    return PP_OK;
  *t = o;
  return alloc_values(x->r, o);
}

static int64_t norm_axis(int64_t a, int64_t nd)
{
  return a < 0 ? a + nd : a;
}

/* numpy broadcasting of shapes a and b into out; false when they do not
** broadcast. */
static bool broadcast(int na, const int64_t *a, int nb, const int64_t *b,
                      int *no, int64_t *out)
{
  int n = na > nb ? na : nb, i;
  for (i = 0; i < n; i++) {
    int64_t da = i < n - na ? 1 : a[i - (n - na)];
    int64_t db = i < n - nb ? 1 : b[i - (n - nb)];
    if (da != db && da != 1 && db != 1)
      return false;
    out[i] = da == 1 ? db : da;
  }
  *no = n;
  return true;
}

/* The flat index into a broadcast input of shape (nd, d) of output
** element e of shape (no, od). */
static int64_t bcast_index(int64_t e, int no, const int64_t *od, int nd,
                           const int64_t *d)
{
  int64_t idx = 0, stride = 1;
  int i;
  for (i = no - 1; i >= 0; i--) {
    int64_t c = e % od[i];
    int k = i - (no - nd);
    e /= od[i];
    if (k >= 0) {
      if (d[k] != 1)
        idx += c * stride;
      stride *= d[k];
    }
  }
  return idx;
}

static double apply(const char *op, double a, double b, double c, bool isint)
{
  if (!strcmp(op, "Add"))
    return a + b;
  if (!strcmp(op, "Sub"))
    return a - b;
  if (!strcmp(op, "Mul"))
    return a * b;
  if (!strcmp(op, "Div"))
    return b == 0 ? 0 : isint ? trunc(a / b) : a / b;
  if (!strcmp(op, "Mod"))
    return b == 0 ? 0 : fmod(a, b);
  if (!strcmp(op, "Pow"))
    return pow(a, b);
  if (!strcmp(op, "Max"))
    return a > b ? a : b;
  if (!strcmp(op, "Min"))
    return a < b ? a : b;
  if (!strcmp(op, "Equal"))
    return a == b;
  if (!strcmp(op, "Less"))
    return a < b;
  if (!strcmp(op, "LessOrEqual"))
    return a <= b;
  if (!strcmp(op, "Greater"))
    return a > b;
  if (!strcmp(op, "GreaterOrEqual"))
    return a >= b;
  if (!strcmp(op, "And"))
    return a != 0 && b != 0;
  if (!strcmp(op, "Or"))
    return a != 0 || b != 0;
  if (!strcmp(op, "Where"))
    return a != 0 ? b : c;
  return 0;
}

static double apply1(const char *op, double a)
{
  if (!strcmp(op, "Neg"))
    return -a;
  if (!strcmp(op, "Abs"))
    return fabs(a);
  if (!strcmp(op, "Sqrt"))
    return sqrt(a);
  if (!strcmp(op, "Floor"))
    return floor(a);
  if (!strcmp(op, "Ceil"))
    return ceil(a);
  if (!strcmp(op, "Not"))
    return a == 0;
  if (!strcmp(op, "Reciprocal"))
    return a == 0 ? 0 : 1 / a;
  if (!strcmp(op, "Relu"))
    return a > 0 ? a : 0;
  if (!strcmp(op, "Sign"))
    return (a > 0) - (a < 0);
  return a; /* Identity, Cast */
}

/* v as int64, clamped; NaN as 0. */
static void store(struct otensor *o, int64_t i, double v)
{
  bool isint = !ppi_onnx_is_float(o->type);
  if (isint)
    v = trunc(v);
  o->dv[i] = v;
  o->iv[i] = to_i64(v);
}

/* Output 0 has input 0's values in the same order (views). */
static pp_status copy_values(struct node *x, int32_t k)
{
  struct otensor *o;
  const struct otensor *a = x->in[0];
  int64_t i;
  pp_status rc;
  if (!a->iv || k < 0 || OT(x->r, k).elems != a->elems)
    return PP_OK;
  if ((rc = out_values(x, k, &o)) || !o)
    return rc;
  for (i = 0; i < o->elems; i++)
    store(o, i, ppi_onnx_is_float(o->type) ? a->dv[i] : (double)a->iv[i]);
  if (!ppi_onnx_is_float(o->type))
    for (i = 0; i < o->elems; i++)
      o->iv[i] = a->iv[i]; /* exact beyond 2^53 */
  return PP_OK;
}

/* ---- the operators ----------------------------------------------------- */

static const char *const k_same[] = {"Relu",
                                     "Sigmoid",
                                     "Tanh",
                                     "Erf",
                                     "Sqrt",
                                     "Exp",
                                     "Log",
                                     "Neg",
                                     "Abs",
                                     "Reciprocal",
                                     "Gelu",
                                     "HardSigmoid",
                                     "HardSwish",
                                     "LeakyRelu",
                                     "Elu",
                                     "Selu",
                                     "Softplus",
                                     "Softsign",
                                     "Mish",
                                     "Clip",
                                     "Not",
                                     "Floor",
                                     "Ceil",
                                     "Round",
                                     "Sign",
                                     "Sin",
                                     "Cos",
                                     "Identity",
                                     "Softmax",
                                     "LogSoftmax",
                                     "Cast",
                                     "CastLike",
                                     "IsNaN",
                                     "IsInf",
                                     "Trilu",
                                     "CumSum",
                                     "InstanceNormalization",
                                     "LpNormalization",
                                     "LRN",
                                     "Celu",
                                     "ThresholdedRelu",
                                     "ScatterND",
                                     "ScatterElements",
                                     "Scatter",
                                     "Shrink",
                                     "Hardmax",
                                     "Tan",
                                     "Atan",
                                     "Asin",
                                     "Acos",
                                     "Sinh",
                                     "Cosh",
                                     "Det",
                                     "Bernoulli",
                                     "GroupNormalization",
                                     NULL};
static const char *const k_bcast[] = {
    "Add",      "Sub",  "Mul",         "Div",     "Pow",
    "Mod",      "Max",  "Min",         "Sum",     "Mean",
    "Equal",    "Less", "LessOrEqual", "Greater", "GreaterOrEqual",
    "And",      "Or",   "Xor",         "Where",   "PRelu",
    "BitShift", NULL};
static const char *const k_compare[] = {
    "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And",
    "Or",    "Xor",  "Not",         "IsNaN",   "IsInf",          NULL};
static const char *const k_value1[] = {"Neg",        "Abs",  "Sqrt", "Floor",
                                       "Ceil",       "Not",  "Cast", "Identity",
                                       "Reciprocal", "Relu", "Sign", NULL};
static const char *const k_reduce[] = {"ReduceMean",
                                       "ReduceSum",
                                       "ReduceMax",
                                       "ReduceMin",
                                       "ReduceProd",
                                       "ReduceL1",
                                       "ReduceL2",
                                       "ReduceSumSquare",
                                       "ReduceLogSum",
                                       "ReduceLogSumExp",
                                       "ArgMax",
                                       "ArgMin",
                                       NULL};

static pp_status i_same(struct node *x)
{
  const struct otensor *a = x->in[0];
  int32_t k, type = a->type;
  pp_status rc;
  if (!strcmp(x->op, "Cast"))
    type = (int32_t)aint(x->n, "to", a->type);
  else if (!strcmp(x->op, "CastLike") && has(x, 1))
    type = x->in[1]->type;
  else if (op_is(x->op, k_compare))
    type = T_BOOL;
  if ((rc = out_shape(x, 0, type, a->ndim, a->dims, &k)))
    return rc;
  if (a->iv && op_is(x->op, k_value1) && k >= 0) {
    struct otensor *o;
    int64_t i;
    if (!strcmp(x->op, "Identity") ||
        (!strcmp(x->op, "Cast") && !ppi_onnx_is_float(type) &&
         !ppi_onnx_is_float(a->type)))
      return copy_values(x, k);
    if ((rc = out_values(x, k, &o)) || !o)
      return rc;
    for (i = 0; i < o->elems; i++)
      store(o, i, apply1(x->op, a->dv[i]));
  }
  return PP_OK;
}

static pp_status i_bcast(struct node *x)
{
  int64_t od[MAXD], tmp[MAXD];
  int no, i, nt;
  int32_t k, type = x->in[0]->type;
  struct otensor *o;
  pp_status rc;
  bool vals = true;
  no = x->in[0]->ndim;
  memcpy(od, x->in[0]->dims, (size_t)no * sizeof *od);
  for (i = 1; i < x->nin; i++) {
    if (!x->in[i])
      continue;
    if (!broadcast(no, od, x->in[i]->ndim, x->in[i]->dims, &nt, tmp))
      return ifail(x->r, x->j, "inputs 0 to %d do not broadcast", i);
    no = nt;
    memcpy(od, tmp, (size_t)no * sizeof *od);
  }
  if (!strcmp(x->op, "Where"))
    type = x->in[1]->type;
  else if (op_is(x->op, k_compare))
    type = T_BOOL;
  if ((rc = out_shape(x, 0, type, no, od, &k)))
    return rc;
  for (i = 0; i < x->nin; i++)
    vals = vals && x->in[i] && x->in[i]->iv;
  if (!vals || x->nin > 3 || !strcmp(x->op, "Sum") || !strcmp(x->op, "Mean") ||
      !strcmp(x->op, "PRelu") || !strcmp(x->op, "BitShift") ||
      !strcmp(x->op, "Xor"))
    return PP_OK;
  if ((rc = out_values(x, k, &o)) || !o)
    return rc;
  {
    int64_t e;
    bool isint = !ppi_onnx_is_float(x->in[x->nin > 1 ? 1 : 0]->type) &&
                 !ppi_onnx_is_float(x->in[0]->type);
    for (e = 0; e < o->elems; e++) {
      double v[3] = {0, 0, 0};
      for (i = 0; i < x->nin; i++)
        v[i] = x->in[i]
                   ->dv[bcast_index(e, no, od, x->in[i]->ndim, x->in[i]->dims)];
      if (isint && !strcmp(x->op, "Div")) {
        int64_t a =
            x->in[0]
                ->iv[bcast_index(e, no, od, x->in[0]->ndim, x->in[0]->dims)];
        int64_t b =
            x->in[1]
                ->iv[bcast_index(e, no, od, x->in[1]->ndim, x->in[1]->dims)];
        o->iv[e] = b ? a / b : 0;
        o->dv[e] = (double)o->iv[e];
        continue;
      }
      store(o, e, apply(x->op, v[0], v[1], v[2], isint));
    }
  }
  return PP_OK;
}

/* Conv, ConvTranspose and the pools: N, channels, spatial dims. */
static pp_status i_window(struct node *x)
{
  const struct otensor *a = x->in[0];
  const struct otensor *w = has(x, 1) ? x->in[1] : NULL;
  int64_t ks[MAXD], st[MAXD], dl[MAXD], pd[2 * MAXD], od[MAXD], op[MAXD];
  int ns = a->ndim - 2, i;
  int32_t k;
  const Onnx__AttributeProto *ap = attr(x->n, "auto_pad");
  const char *autopad = "NOTSET";
  bool pool = strcmp(x->op, "Conv") && strcmp(x->op, "ConvTranspose");
  bool tr = !strcmp(x->op, "ConvTranspose");
  bool ceil_mode = aint(x->n, "ceil_mode", 0) != 0;
  pp_status rc;
  if (ns < 1)
    return ifail(x->r, x->j,
                 "input 0 has %d dimensions, needs N, C and at "
                 "least one spatial dimension",
                 (int)a->ndim);
  if (ap && ap->s.len)
    autopad = (const char *)ap->s.data;
  if (!pool && (!w || w->ndim != a->ndim))
    return ifail(x->r, x->j, "input 1 (the weight) needs %d dimensions",
                 (int)a->ndim);
  for (i = 0; i < ns; i++) {
    ks[i] = w && !pool ? w->dims[2 + i] : 1;
    st[i] = dl[i] = 1;
    pd[i] = pd[ns + i] = 0;
    op[i] = 0;
  }
  if (pool && aints(x->n, "kernel_shape", ks, ns) < 0)
    return ifail(x->r, x->j, "no kernel_shape attribute");
  aints(x->n, "strides", st, ns);
  aints(x->n, "dilations", dl, ns);
  aints(x->n, "pads", pd, 2 * ns);
  aints(x->n, "output_padding", op, ns);
  for (i = 0; i < 2 * ns; i++)
    if (llabs(pd[i]) > BIG ||
        (i < ns && (ks[i] < 1 || ks[i] > BIG || st[i] > BIG || dl[i] < 1 ||
                    dl[i] > BIG || llabs(op[i]) > BIG)))
      return ifail(x->r, x->j,
                   "a kernel, stride, dilation or pad of "
                   "dimension %d is out of range",
                   i % ns);
  od[0] = a->dims[0];
  od[1] = pool ? a->dims[1]
          : tr ? w->dims[1] * aint(x->n, "group", 1)
               : w->dims[0];
  for (i = 0; i < ns; i++) {
    int64_t in = a->dims[2 + i], eff = dl[i] * (ks[i] - 1) + 1;
    if (st[i] < 1)
      return ifail(x->r, x->j, "stride %d is %lld", i, (long long)st[i]);
    if (tr) {
      od[2 + i] = st[i] * (in - 1) + op[i] + eff - pd[i] - pd[ns + i];
      continue;
    }
    if (!strcmp(autopad, "SAME_UPPER") || !strcmp(autopad, "SAME_LOWER"))
      od[2 + i] = (in + st[i] - 1) / st[i];
    else if (!strcmp(autopad, "VALID"))
      od[2 + i] = (in - eff) / st[i] + 1;
    else {
      int64_t num = in + pd[i] + pd[ns + i] - eff;
      od[2 + i] = ceil_mode ? (num + st[i] - 1) / st[i] + 1 : num / st[i] + 1;
      if (ceil_mode && (od[2 + i] - 1) * st[i] >= in + pd[i])
        od[2 + i]--; /* the last window starts inside the input */
    }
    if (od[2 + i] < 0)
      od[2 + i] = 0;
  }
  if ((rc = out_shape(x, 0, a->type, a->ndim, od, &k)))
    return rc;
  return out_shape(x, 1, T_INT64, a->ndim, od, &k); /* MaxPool indices */
}

static pp_status i_global_pool(struct node *x)
{
  int64_t od[MAXD];
  int32_t k;
  int i;
  memcpy(od, x->in[0]->dims, (size_t)x->in[0]->ndim * sizeof *od);
  for (i = 2; i < x->in[0]->ndim; i++)
    od[i] = 1;
  return out_shape(x, 0, x->in[0]->type, x->in[0]->ndim, od, &k);
}

static pp_status i_batchnorm(struct node *x)
{
  const struct otensor *a = x->in[0];
  int64_t c = a->ndim > 1 ? a->dims[1] : 1;
  int32_t k;
  int i;
  pp_status rc;
  if ((rc = out_shape(x, 0, a->type, a->ndim, a->dims, &k)))
    return rc;
  for (i = 1; i < 5; i++)
    if ((rc = out_shape(x, i, a->type, 1, &c, &k)))
      return rc;
  return PP_OK;
}

static pp_status i_layernorm(struct node *x)
{
  const struct otensor *a = x->in[0];
  int64_t ax = norm_axis(aint(x->n, "axis", -1), a->ndim), od[MAXD];
  int32_t k;
  int i;
  pp_status rc;
  if ((rc = out_shape(x, 0, a->type, a->ndim, a->dims, &k)))
    return rc;
  for (i = 0; i < a->ndim; i++)
    od[i] = i < ax ? a->dims[i] : 1;
  if ((rc = out_shape(x, 1, T_FLOAT, a->ndim, od, &k)) ||
      (rc = out_shape(x, 2, T_FLOAT, a->ndim, od, &k)))
    return rc;
  return PP_OK;
}

static pp_status i_dropout(struct node *x)
{
  const struct otensor *a = x->in[0];
  int32_t k;
  pp_status rc;
  if ((rc = out_shape(x, 0, a->type, a->ndim, a->dims, &k)))
    return rc;
  if (a->iv && k >= 0 && (rc = copy_values(x, k)))
    return rc;
  return out_shape(x, 1, T_BOOL, a->ndim, a->dims, &k);
}

static pp_status i_flatten(struct node *x)
{
  const struct otensor *a = x->in[0];
  int64_t ax = norm_axis(aint(x->n, "axis", 1), a->ndim), od[2] = {1, 1};
  int32_t k;
  int i;
  pp_status rc;
  if (ax < 0 || ax > a->ndim)
    return ifail(x->r, x->j, "axis %lld is out of range", (long long)ax);
  for (i = 0; i < a->ndim; i++)
    od[i < ax ? 0 : 1] *= a->dims[i];
  if ((rc = out_shape(x, 0, a->type, 2, od, &k)))
    return rc;
  return copy_values(x, k);
}

static pp_status i_gemm(struct node *x)
{
  const struct otensor *a = x->in[0], *b = x->in[1];
  int64_t od[2];
  int32_t k;
  if (a->ndim != 2 || b->ndim != 2)
    return ifail(x->r, x->j, "inputs A and B need 2 dimensions (have %d, %d)",
                 (int)a->ndim, (int)b->ndim);
  od[0] = aint(x->n, "transA", 0) ? a->dims[1] : a->dims[0];
  od[1] = aint(x->n, "transB", 0) ? b->dims[0] : b->dims[1];
  return out_shape(x, 0, a->type, 2, od, &k);
}

static pp_status i_matmul(struct node *x)
{
  const struct otensor *a = x->in[0], *b = x->in[1];
  int64_t ad[MAXD], bd[MAXD], od[MAXD], bat[MAXD];
  int na = a->ndim, nb = b->ndim, nbat, no, i;
  int32_t k;
  bool va = na == 1, vb = nb == 1;
  if (na < 1 || nb < 1)
    return ifail(x->r, x->j, "an input is a scalar");
  memcpy(ad, a->dims, (size_t)na * sizeof *ad);
  memcpy(bd, b->dims, (size_t)nb * sizeof *bd);
  if (va) {
    ad[1] = ad[0];
    ad[0] = 1;
    na = 2;
  }
  if (vb) {
    bd[1] = 1;
    nb = 2;
  }
  if (ad[na - 1] != bd[nb - 2])
    return ifail(x->r, x->j, "inner dimensions differ (%lld and %lld)",
                 (long long)ad[na - 1], (long long)bd[nb - 2]);
  if (!broadcast(na - 2, ad, nb - 2, bd, &nbat, bat))
    return ifail(x->r, x->j, "batch dimensions do not broadcast");
  no = 0;
  for (i = 0; i < nbat; i++)
    od[no++] = bat[i];
  if (!va)
    od[no++] = ad[na - 2];
  if (!vb)
    od[no++] = bd[nb - 1];
  return out_shape(x, 0, a->type, no, od, &k);
}

static pp_status i_concat(struct node *x)
{
  const struct otensor *a = x->in[0];
  int64_t ax = norm_axis(aint(x->n, "axis", 0), a->ndim), od[MAXD];
  int32_t k;
  int i, d;
  bool vals = true;
  struct otensor *o;
  pp_status rc;
  if (ax < 0 || ax >= a->ndim)
    return ifail(x->r, x->j, "axis %lld is out of range", (long long)ax);
  memcpy(od, a->dims, (size_t)a->ndim * sizeof *od);
  od[ax] = 0;
  for (i = 0; i < x->nin; i++) {
    const struct otensor *t = x->in[i];
    if (!t)
      continue;
    if (t->ndim != a->ndim)
      return ifail(x->r, x->j, "input %d has %d dimensions, input 0 has %d", i,
                   (int)t->ndim, (int)a->ndim);
    for (d = 0; d < a->ndim; d++)
      if (d != ax && t->dims[d] != a->dims[d])
        return ifail(x->r, x->j, "input %d: dimension %d is %lld, not %lld", i,
                     d, (long long)t->dims[d], (long long)a->dims[d]);
    od[ax] += t->dims[ax];
    vals = vals && t->iv;
  }
  if ((rc = out_shape(x, 0, a->type, a->ndim, od, &k)))
    return rc;
  if (!vals || (rc = out_values(x, k, &o)) || !o)
    return rc;
  { /* outer x (concatenated axis x inner) */
    int64_t outer = 1, inner = 1, e = 0, q;
    for (d = 0; d < ax; d++)
      outer *= od[d];
    for (d = (int)ax + 1; d < a->ndim; d++)
      inner *= od[d];
    for (q = 0; q < outer; q++)
      for (i = 0; i < x->nin; i++) {
        const struct otensor *t = x->in[i];
        int64_t n, m;
        if (!t)
          continue;
        n = t->dims[ax] * inner;
        for (m = 0; m < n; m++, e++) {
          o->iv[e] = t->iv[q * n + m];
          o->dv[e] = t->dv[q * n + m];
        }
      }
  }
  return PP_OK;
}

static pp_status i_reshape(struct node *x, bool *done)
{
  const struct otensor *a = x->in[0], *s = has(x, 1) ? x->in[1] : NULL;
  int64_t od[MAXD], known = 1;
  int i, infer = -1, n;
  int32_t k;
  pp_status rc;
  bool allowzero = aint(x->n, "allowzero", 0) != 0;
  if (!s) {
    int64_t v[MAXD];
    n = aints(x->n, "shape", v, MAXD);
    if (n < 0 || n > MAXD)
      return ifail(x->r, x->j, "no shape input, or %d dimensions", n);
    memcpy(od, v, (size_t)(n > MAXD ? MAXD : n) * sizeof *od);
  } else {
    if (!s->iv)
      return wait(x->r, x->j, done,
                  "input 1 ('%s', the target shape) is not a constant: it "
                  "is computed from tensors whose values parplan does not "
                  "know",
                  x->n->input[1]);
    if (ppi_onnx_is_float(s->type)) /* ONNX: Reshape's shape is int64 */
      return ifail(x->r, x->j,
                   "input 1 ('%s', the target shape) is a floating-point "
                   "tensor; ONNX's Reshape takes int64",
                   x->n->input[1]);
    n = (int)s->elems;
    if (n > MAXD)
      return ifail(x->r, x->j, "the target shape has %d dimensions", n);
    memcpy(od, s->iv, (size_t)n * sizeof *od);
  }
  for (i = 0; i < n; i++) {
    if (od[i] == 0 && !allowzero) {
      if (i >= a->ndim)
        return ifail(x->r, x->j,
                     "target dimension %d is 0 (copy) but the "
                     "input has %d dimensions",
                     i, (int)a->ndim);
      od[i] = a->dims[i];
    }
    if (od[i] == -1) {
      if (infer >= 0)
        return ifail(x->r, x->j, "the target shape has two -1 dimensions");
      infer = i;
    } else if (od[i] < 0 || od[i] > BIG || (od[i] && known > INT64_MAX / od[i]))
      return ifail(x->r, x->j, "target dimension %d is %lld", i,
                   (long long)od[i]);
    else
      known *= od[i];
  }
  if (infer >= 0) {
    if (known == 0 || a->elems % known)
      return ifail(x->r, x->j,
                   "%lld elements do not reshape into the target "
                   "shape",
                   (long long)a->elems);
    od[infer] = a->elems / known;
    known *= od[infer];
  }
  if (known != a->elems)
    return ifail(x->r, x->j, "%lld elements reshaped into a shape of %lld",
                 (long long)a->elems, (long long)known);
  if ((rc = out_shape(x, 0, a->type, n, od, &k)))
    return rc;
  return copy_values(x, k);
}

static pp_status i_transpose(struct node *x)
{
  const struct otensor *a = x->in[0];
  int64_t perm[MAXD], od[MAXD];
  int n = aints(x->n, "perm", perm, MAXD), i;
  int32_t k;
  struct otensor *o;
  pp_status rc;
  if (n < 0) {
    n = a->ndim;
    for (i = 0; i < n; i++)
      perm[i] = n - 1 - i;
  }
  if (n != a->ndim)
    return ifail(x->r, x->j, "perm has %d entries for %d dimensions", n,
                 (int)a->ndim);
  for (i = 0; i < n; i++) {
    if (perm[i] < 0 || perm[i] >= n)
      return ifail(x->r, x->j, "perm[%d] is %lld", i, (long long)perm[i]);
    od[i] = a->dims[perm[i]];
  }
  if ((rc = out_shape(x, 0, a->type, n, od, &k)))
    return rc;
  if (!a->iv || (rc = out_values(x, k, &o)) || !o)
    return rc;
  {
    int64_t e, is[MAXD];
    is[n > 0 ? n - 1 : 0] = 1;
    for (i = n - 2; i >= 0; i--)
      is[i] = is[i + 1] * a->dims[i + 1];
    for (e = 0; e < o->elems; e++) {
      int64_t rem = e, src = 0;
      for (i = n - 1; i >= 0; i--) {
        src += (rem % od[i]) * is[perm[i]];
        rem /= od[i];
      }
      o->iv[e] = a->iv[src];
      o->dv[e] = a->dv[src];
    }
  }
  return PP_OK;
}

/* Axes from input i (opset 13) or the "axes" attribute; *n -1: none. */
static pp_status axes_of(struct node *x, int i, bool *done, int64_t *ax, int *n)
{
  *n = -1;
  if (has(x, i)) {
    if (!x->in[i]->iv)
      return wait(x->r, x->j, done,
                  "input %d ('%s', the axes) is not a constant", i,
                  x->n->input[i]);
    if (x->in[i]->elems > MAXD)
      return ifail(x->r, x->j, "%lld axes", (long long)x->in[i]->elems);
    *n = (int)x->in[i]->elems;
    memcpy(ax, x->in[i]->iv, (size_t)*n * sizeof *ax);
    return PP_OK;
  }
  *n = aints(x->n, "axes", ax, MAXD);
  if (*n > MAXD)
    return ifail(x->r, x->j, "%d axes", *n);
  return PP_OK;
}

static pp_status i_unsqueeze(struct node *x, bool *done)
{
  const struct otensor *a = x->in[0];
  int64_t ax[MAXD], od[MAXD];
  bool at[MAXD];
  int n, no, i, p;
  int32_t k;
  pp_status rc;
  if ((rc = axes_of(x, 1, done, ax, &n)) || !*done)
    return rc;
  if (n < 0)
    return ifail(x->r, x->j, "no axes");
  no = a->ndim + n;
  if (no > MAXD)
    return ifail(x->r, x->j, "%d dimensions", no);
  memset(at, 0, sizeof at);
  for (i = 0; i < n; i++) {
    int64_t v = norm_axis(ax[i], no);
    if (v < 0 || v >= no || at[v])
      return ifail(x->r, x->j, "axis %lld is out of range or repeated",
                   (long long)ax[i]);
    at[v] = true;
  }
  for (i = 0, p = 0; i < no; i++)
    od[i] = at[i] ? 1 : a->dims[p++];
  if ((rc = out_shape(x, 0, a->type, no, od, &k)))
    return rc;
  return copy_values(x, k);
}

static pp_status i_squeeze(struct node *x, bool *done)
{
  const struct otensor *a = x->in[0];
  int64_t ax[MAXD], od[MAXD];
  bool drop[MAXD];
  int n, no = 0, i;
  int32_t k;
  pp_status rc;
  if ((rc = axes_of(x, 1, done, ax, &n)) || !*done)
    return rc;
  memset(drop, 0, sizeof drop);
  for (i = 0; i < a->ndim; i++)
    drop[i] = n < 0 && a->dims[i] == 1;
  for (i = 0; i < n; i++) {
    int64_t v = norm_axis(ax[i], a->ndim);
    if (v < 0 || v >= a->ndim || a->dims[v] != 1)
      return ifail(x->r, x->j, "axis %lld is not a dimension of size 1",
                   (long long)ax[i]);
    drop[v] = true;
  }
  for (i = 0; i < a->ndim; i++)
    if (!drop[i])
      od[no++] = a->dims[i];
  if ((rc = out_shape(x, 0, a->type, no, od, &k)))
    return rc;
  return copy_values(x, k);
}

static pp_status i_shape(struct node *x)
{
  const struct otensor *a = x->in[0];
  int64_t nd = a->ndim, s = aint(x->n, "start", 0), e = aint(x->n, "end", nd),
          i, n;
  int32_t k;
  struct otensor *o;
  pp_status rc;
  if (s < 0)
    s += nd;
  if (e < 0)
    e += nd;
  s = s < 0 ? 0 : s > nd ? nd : s;
  e = e < 0 ? 0 : e > nd ? nd : e;
  n = e > s ? e - s : 0;
  if ((rc = out_shape(x, 0, T_INT64, 1, &n, &k)) ||
      (rc = out_values(x, k, &o)) || !o)
    return rc;
  for (i = 0; i < n; i++)
    store(o, i, (double)a->dims[s + i]);
  for (i = 0; i < n; i++)
    o->iv[i] = a->dims[s + i];
  return PP_OK;
}

static pp_status i_size(struct node *x)
{
  int32_t k;
  struct otensor *o;
  pp_status rc;
  if ((rc = out_shape(x, 0, T_INT64, 0, NULL, &k)) ||
      (rc = out_values(x, k, &o)) || !o)
    return rc;
  o->iv[0] = x->in[0]->elems;
  o->dv[0] = (double)x->in[0]->elems;
  return PP_OK;
}

static pp_status i_gather(struct node *x)
{
  const struct otensor *a = x->in[0], *ix = x->in[1];
  int64_t ax = norm_axis(aint(x->n, "axis", 0), a->ndim), od[MAXD];
  int no = 0, i;
  int32_t k;
  struct otensor *o;
  pp_status rc;
  if (ax < 0 || ax >= a->ndim)
    return ifail(x->r, x->j, "axis %lld is out of range", (long long)ax);
  if (a->ndim - 1 + ix->ndim > MAXD)
    return ifail(x->r, x->j, "too many dimensions");
  for (i = 0; i < ax; i++)
    od[no++] = a->dims[i];
  for (i = 0; i < ix->ndim; i++)
    od[no++] = ix->dims[i];
  for (i = (int)ax + 1; i < a->ndim; i++)
    od[no++] = a->dims[i];
  if ((rc = out_shape(x, 0, a->type, no, od, &k)))
    return rc;
  if (!a->iv || !ix->iv || (rc = out_values(x, k, &o)) || !o)
    return rc;
  {
    int64_t outer = 1, inner = 1, e = 0, q, m, c, n = a->dims[ax];
    for (i = 0; i < ax; i++)
      outer *= a->dims[i];
    for (i = (int)ax + 1; i < a->ndim; i++)
      inner *= a->dims[i];
    for (q = 0; q < outer; q++)
      for (m = 0; m < ix->elems; m++) {
        int64_t id = ix->iv[m] < 0 ? ix->iv[m] + n : ix->iv[m];
        if (id < 0 || id >= n)
          return ifail(x->r, x->j, "index %lld is out of range [0, %lld)",
                       (long long)ix->iv[m], (long long)n);
        for (c = 0; c < inner; c++, e++) {
          o->iv[e] = a->iv[(q * n + id) * inner + c];
          o->dv[e] = a->dv[(q * n + id) * inner + c];
        }
      }
  }
  return PP_OK;
}

static pp_status i_slice(struct node *x, bool *done)
{
  const struct otensor *a = x->in[0];
  int64_t st[MAXD], en[MAXD], ax[MAXD], sp[MAXD], od[MAXD], b[MAXD];
  int n, i, na;
  int32_t k;
  struct otensor *o;
  pp_status rc;
  if (x->nin > 1) { /* opset 10: starts, ends, axes, steps as inputs */
    for (i = 1; i < x->nin && i < 5; i++)
      if (has(x, i) && !x->in[i]->iv)
        return wait(x->r, x->j, done,
                    "input %d ('%s', the %s) is not a constant", i,
                    x->n->input[i],
                    i == 1   ? "starts"
                    : i == 2 ? "ends"
                    : i == 3 ? "axes"
                             : "steps");
    if (!has(x, 1))
      return ifail(x->r, x->j, "input 1 (the starts) is missing");
    n = (int)x->in[1]->elems;
    if (n > MAXD || !has(x, 2) || x->in[2]->elems != n)
      return ifail(x->r, x->j, "starts and ends differ in length");
    memcpy(st, x->in[1]->iv, (size_t)n * sizeof *st);
    memcpy(en, x->in[2]->iv, (size_t)n * sizeof *en);
    for (i = 0; i < n; i++) {
      ax[i] = has(x, 3) && i < x->in[3]->elems ? x->in[3]->iv[i] : i;
      sp[i] = has(x, 4) && i < x->in[4]->elems ? x->in[4]->iv[i] : 1;
    }
  } else {
    n = aints(x->n, "starts", st, MAXD);
    if (n < 0 || n > MAXD || aints(x->n, "ends", en, MAXD) != n)
      return ifail(x->r, x->j, "no starts and ends");
    na = aints(x->n, "axes", ax, MAXD);
    for (i = 0; i < n; i++) {
      if (na < 0)
        ax[i] = i;
      sp[i] = 1;
    }
  }
  memcpy(od, a->dims, (size_t)a->ndim * sizeof *od);
  for (i = 0; i < a->ndim; i++)
    b[i] = 0;
  {
    int64_t step[MAXD];
    for (i = 0; i < a->ndim; i++)
      step[i] = 1;
    for (i = 0; i < n; i++) {
      int64_t d, s, e, c, p = norm_axis(ax[i], a->ndim);
      if (p < 0 || p >= a->ndim)
        return ifail(x->r, x->j, "axis %lld is out of range", (long long)ax[i]);
      d = a->dims[p];
      s = st[i];
      e = en[i];
      c = sp[i];
      if (c == 0 || c < -BIG)
        return ifail(x->r, x->j, "step %lld is out of range", (long long)c);
      if (s < 0)
        s += d;
      if (e < 0 && e > INT64_MIN / 2)
        e += d;
      if (c > 0) {
        s = s < 0 ? 0 : s > d ? d : s;
        e = e < 0 ? 0 : e > d ? d : e;
        od[p] = e > s ? 1 + (e - s - 1) / c : 0;
      } else {
        s = s < 0 ? 0 : s > d - 1 ? d - 1 : s;
        e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
        od[p] = s > e ? 1 + (s - e - 1) / (-c) : 0;
      }
      b[p] = s;
      step[p] = c;
    }
    if ((rc = out_shape(x, 0, a->type, a->ndim, od, &k)))
      return rc;
    if (!a->iv || (rc = out_values(x, k, &o)) || !o)
      return rc;
    {
      int64_t e, is[MAXD];
      is[a->ndim > 0 ? a->ndim - 1 : 0] = 1;
      for (i = a->ndim - 2; i >= 0; i--)
        is[i] = is[i + 1] * a->dims[i + 1];
      for (e = 0; e < o->elems; e++) {
        int64_t rem = e, src = 0;
        for (i = a->ndim - 1; i >= 0; i--) {
          src += (b[i] + (rem % od[i]) * step[i]) * is[i];
          rem /= od[i];
        }
        o->iv[e] = a->iv[src];
        o->dv[e] = a->dv[src];
      }
    }
  }
  return PP_OK;
}

static pp_status i_split(struct node *x, bool *done)
{
  const struct otensor *a = x->in[0];
  int64_t ax = norm_axis(aint(x->n, "axis", 0), a->ndim), sp[64], od[MAXD];
  int n = -1, i, no = (int)x->n->n_output;
  int32_t k;
  pp_status rc;
  if (ax < 0 || ax >= a->ndim)
    return ifail(x->r, x->j, "axis %lld is out of range", (long long)ax);
  if (no > 64)
    return ifail(x->r, x->j, "%d outputs", no);
  if (has(x, 1)) {
    if (!x->in[1]->iv)
      return wait(x->r, x->j, done,
                  "input 1 ('%s', the split sizes) is not a constant",
                  x->n->input[1]);
    n = (int)x->in[1]->elems;
    for (i = 0; i < n && i < 64; i++)
      sp[i] = x->in[1]->iv[i];
  } else
    n = aints(x->n, "split", sp, 64);
  if (n < 0) {
    int64_t d = a->dims[ax], each = (d + no - 1) / no;
    n = no;
    for (i = 0; i < no; i++) {
      sp[i] = d > each ? each : d;
      d -= sp[i];
    }
  }
  if (n != no)
    return ifail(x->r, x->j, "%d split sizes for %d outputs", n, no);
  memcpy(od, a->dims, (size_t)a->ndim * sizeof *od);
  for (i = 0; i < no; i++) {
    od[ax] = sp[i];
    if ((rc = out_shape(x, i, a->type, a->ndim, od, &k)))
      return rc;
  }
  return PP_OK;
}

static pp_status i_reduce(struct node *x, bool *done)
{
  const struct otensor *a = x->in[0];
  int64_t ax[MAXD], od[MAXD];
  bool red[MAXD];
  int n, no = 0, i;
  int32_t k, type = a->type;
  bool keep = aint(x->n, "keepdims", 1) != 0;
  pp_status rc;
  struct otensor *o;
  if (!strcmp(x->op, "ArgMax") || !strcmp(x->op, "ArgMin")) {
    ax[0] = aint(x->n, "axis", 0);
    n = 1;
    type = T_INT64;
  } else if ((rc = axes_of(x, 1, done, ax, &n)) || !*done)
    return rc;
  memset(red, 0, sizeof red);
  if (n <= 0 && !aint(x->n, "noop_with_empty_axes", 0))
    for (i = 0; i < a->ndim; i++)
      red[i] = true;
  for (i = 0; i < n; i++) {
    int64_t v = norm_axis(ax[i], a->ndim);
    if (v < 0 || v >= a->ndim)
      return ifail(x->r, x->j, "axis %lld is out of range", (long long)ax[i]);
    red[v] = true;
  }
  for (i = 0; i < a->ndim; i++)
    if (!red[i])
      od[no++] = a->dims[i];
    else if (keep)
      od[no++] = 1;
  if ((rc = out_shape(x, 0, type, no, od, &k)))
    return rc;
  if (a->iv && (!strcmp(x->op, "ReduceProd") || !strcmp(x->op, "ReduceSum")) &&
      no <= 1 && (rc = out_values(x, k, &o)) == PP_OK && o && o->elems == 1) {
    double v = !strcmp(x->op, "ReduceProd") ? 1 : 0;
    int64_t e;
    for (e = 0; e < a->elems; e++)
      v = !strcmp(x->op, "ReduceProd") ? v * a->dv[e] : v + a->dv[e];
    store(o, 0, v);
  }
  return PP_OK;
}

static pp_status i_constant(struct node *x)
{
  const Onnx__NodeProto *n = x->n;
  const Onnx__AttributeProto *a;
  int32_t k;
  struct otensor *o;
  pp_status rc;
  size_t i;
  if ((a = attr(n, "value")) && a->t) {
    const Onnx__TensorProto *tp = a->t;
    int64_t dims[MAXD];
    for (i = 0; i < tp->n_dims && i < MAXD; i++)
      dims[i] = tp->dims[i];
    if ((rc = out_shape(x, 0, tp->data_type, (int32_t)tp->n_dims, dims, &k)))
      return rc;
    if (k >= 0 && !OT(x->r, k).iv)
      return ppi_onnx_tensor_values(x->r, tp, &OT(x->r, k));
    return PP_OK;
  }
  if ((a = attr(n, "value_float")) || (a = attr(n, "value_int"))) {
    bool f = !strcmp(a->name, "value_float");
    if ((rc = out_shape(x, 0, f ? T_FLOAT : T_INT64, 0, NULL, &k)) ||
        (rc = out_values(x, k, &o)) || !o)
      return rc;
    store(o, 0, f ? a->f : (double)a->i);
    if (!f)
      o->iv[0] = a->i;
    return PP_OK;
  }
  if ((a = attr(n, "value_floats")) || (a = attr(n, "value_ints"))) {
    bool f = !strcmp(a->name, "value_floats");
    int64_t len = (int64_t)(f ? a->n_floats : a->n_ints);
    if ((rc = out_shape(x, 0, f ? T_FLOAT : T_INT64, 1, &len, &k)) ||
        (rc = out_values(x, k, &o)) || !o)
      return rc;
    for (i = 0; i < (size_t)len; i++) {
      store(o, (int64_t)i, f ? a->floats[i] : (double)a->ints[i]);
      if (!f)
        o->iv[i] = a->ints[i];
    }
    return PP_OK;
  }
  return ifail(x->r, x->j,
               "no value, value_float(s) or value_int(s) "
               "attribute parplan reads");
}

static pp_status i_constant_of_shape(struct node *x, bool *done)
{
  const struct otensor *s = x->in[0];
  const Onnx__AttributeProto *a = attr(x->n, "value");
  int32_t k, type = T_FLOAT;
  double v = 0;
  struct otensor *o;
  pp_status rc;
  int64_t e;
  if (!s->iv)
    return wait(x->r, x->j, done, "input 0 ('%s', the shape) is not a constant",
                x->n->input[0]);
  if (s->elems > MAXD)
    return ifail(x->r, x->j, "a shape of %lld dimensions", (long long)s->elems);
  if (a && a->t) {
    struct otensor tmp;
    memset(&tmp, 0, sizeof tmp);
    type = a->t->data_type;
    tmp.elems = 1;
    if ((rc = ppi_onnx_tensor_values(x->r, a->t, &tmp)))
      return rc;
    if (tmp.dv) {
      v = tmp.dv[0];
      ppi_free(x->r->ctx, tmp.iv, sizeof *tmp.iv);
      ppi_free(x->r->ctx, tmp.dv, sizeof *tmp.dv);
    }
  }
  if ((rc = out_shape(x, 0, type, (int32_t)s->elems, s->iv, &k)) ||
      (rc = out_values(x, k, &o)) || !o)
    return rc;
  for (e = 0; e < o->elems; e++)
    store(o, e, v);
  return PP_OK;
}

static pp_status i_expand(struct node *x, bool *done)
{
  const struct otensor *a = x->in[0], *s = x->in[1];
  int64_t od[MAXD];
  int no;
  int32_t k;
  struct otensor *o;
  pp_status rc;
  if (!s->iv)
    return wait(x->r, x->j, done, "input 1 ('%s', the shape) is not a constant",
                x->n->input[1]);
  if (s->elems > MAXD ||
      !broadcast(a->ndim, a->dims, (int)s->elems, s->iv, &no, od))
    return ifail(x->r, x->j, "the input does not broadcast to the shape");
  if ((rc = out_shape(x, 0, a->type, no, od, &k)))
    return rc;
  if (!a->iv || (rc = out_values(x, k, &o)) || !o)
    return rc;
  {
    int64_t e;
    for (e = 0; e < o->elems; e++) {
      int64_t i = bcast_index(e, no, od, a->ndim, a->dims);
      o->iv[e] = a->iv[i];
      o->dv[e] = a->dv[i];
    }
  }
  return PP_OK;
}

static pp_status i_tile(struct node *x, bool *done)
{
  const struct otensor *a = x->in[0], *rp = x->in[1];
  int64_t od[MAXD];
  int i;
  int32_t k;
  if (!rp->iv)
    return wait(x->r, x->j, done,
                "input 1 ('%s', the repeats) is not a constant",
                x->n->input[1]);
  if (rp->elems != a->ndim)
    return ifail(x->r, x->j, "%lld repeats for %d dimensions",
                 (long long)rp->elems, (int)a->ndim);
  for (i = 0; i < a->ndim; i++) {
    if (rp->iv[i] < 0 || rp->iv[i] > BIG || a->dims[i] > BIG)
      return ifail(x->r, x->j, "repeat %d is %lld", i, (long long)rp->iv[i]);
    od[i] = a->dims[i] * rp->iv[i];
  }
  return out_shape(x, 0, a->type, a->ndim, od, &k);
}

static pp_status i_range(struct node *x, bool *done)
{
  int32_t k;
  int i;
  int64_t n;
  double s, l, d;
  struct otensor *o;
  pp_status rc;
  for (i = 0; i < 3; i++)
    if (!x->in[i]->dv)
      return wait(x->r, x->j, done, "input %d ('%s', the %s) is not a constant",
                  i, x->n->input[i],
                  i == 0   ? "start"
                  : i == 1 ? "limit"
                           : "delta");
  s = x->in[0]->dv[0];
  l = x->in[1]->dv[0];
  d = x->in[2]->dv[0];
  if (d == 0 || !(fabs((l - s) / d) < 1e15))
    return ifail(x->r, x->j,
                 "start %g, limit %g and delta %g give no "
                 "length",
                 s, l, d);
  n = (int64_t)ceil((l - s) / d);
  if (n < 0)
    n = 0;
  if ((rc = out_shape(x, 0, x->in[0]->type, 1, &n, &k)) ||
      (rc = out_values(x, k, &o)) || !o)
    return rc;
  for (i = 0; i < n; i++)
    store(o, i, s + i * d);
  return PP_OK;
}

static pp_status i_pad(struct node *x, bool *done)
{
  const struct otensor *a = x->in[0];
  int64_t pd[2 * MAXD], od[MAXD], ax[MAXD];
  int n, i, na = -1;
  int32_t k;
  if (has(x, 1)) {
    if (!x->in[1]->iv)
      return wait(x->r, x->j, done,
                  "input 1 ('%s', the pads) is not a constant", x->n->input[1]);
    n = (int)x->in[1]->elems;
    if (n > 2 * MAXD)
      return ifail(x->r, x->j, "%d pads", n);
    memcpy(pd, x->in[1]->iv, (size_t)n * sizeof *pd);
    for (i = 0; i < n; i++)
      if (llabs(pd[i]) > BIG)
        return ifail(x->r, x->j, "pad %d is %lld", i, (long long)pd[i]);
    if (has(x, 3)) {
      if (!x->in[3]->iv)
        return wait(x->r, x->j, done, "input 3 (the axes) is not a constant");
      na = (int)x->in[3]->elems;
      for (i = 0; i < na && i < MAXD; i++)
        ax[i] = norm_axis(x->in[3]->iv[i], a->ndim);
    }
  } else {
    n = aints(x->n, "pads", pd, 2 * MAXD);
    for (i = 0; i < n && i < 2 * MAXD; i++)
      if (llabs(pd[i]) > BIG)
        return ifail(x->r, x->j, "pad %d is %lld", i, (long long)pd[i]);
  }
  memcpy(od, a->dims, (size_t)a->ndim * sizeof *od);
  if (na >= 0) {
    if (n != 2 * na)
      return ifail(x->r, x->j, "%d pads for %d axes", n, na);
    for (i = 0; i < na; i++)
      od[ax[i]] += pd[i] + pd[na + i];
  } else {
    if (n != 2 * a->ndim)
      return ifail(x->r, x->j, "%d pads for %d dimensions", n, (int)a->ndim);
    for (i = 0; i < a->ndim; i++)
      od[i] += pd[i] + pd[a->ndim + i];
  }
  return out_shape(x, 0, a->type, a->ndim, od, &k);
}

static pp_status i_resize(struct node *x, bool *done)
{
  const struct otensor *a = x->in[0];
  const struct otensor *sc = NULL, *sz = NULL;
  int64_t od[MAXD];
  int i;
  int32_t k;
  if (!strcmp(x->op, "Upsample"))
    sc = has(x, 1) ? x->in[1] : NULL;
  else {
    sc = has(x, 2) && x->in[2]->elems ? x->in[2] : NULL;
    sz = has(x, 3) && x->in[3]->elems ? x->in[3] : NULL;
  }
  if (sz) {
    if (!sz->iv)
      return wait(x->r, x->j, done, "the sizes input is not a constant");
    if (sz->elems != a->ndim)
      return ifail(x->r, x->j, "%lld sizes for %d dimensions",
                   (long long)sz->elems, (int)a->ndim);
    return out_shape(x, 0, a->type, a->ndim, sz->iv, &k);
  }
  if (!sc)
    return ifail(x->r, x->j, "neither scales nor sizes");
  if (!sc->dv)
    return wait(x->r, x->j, done,
                "the scales input is not a constant (or "
                "its data was stripped)");
  if (sc->elems != a->ndim)
    return ifail(x->r, x->j, "%lld scales for %d dimensions",
                 (long long)sc->elems, (int)a->ndim);
  for (i = 0; i < a->ndim; i++) {
    double v = floor((double)a->dims[i] * sc->dv[i]);
    if (!(v >= 0 && v < 1e15))
      return ifail(x->r, x->j, "scale %d (%g) is out of range", i, sc->dv[i]);
    od[i] = (int64_t)v;
  }
  return out_shape(x, 0, a->type, a->ndim, od, &k);
}

/* Einsum with explicit output ("ij,jk->ik"); letters' sizes from the
** inputs. */
static pp_status i_einsum(struct node *x)
{
  const Onnx__AttributeProto *a = attr(x->n, "equation");
  char eq[128];
  int64_t size[128], od[MAXD];
  const char *p, *arrow;
  int in = 0, d = 0, no = 0;
  int32_t k;
  if (!a || !a->s.len || a->s.len >= sizeof eq)
    return ifail(x->r, x->j, "no equation");
  memcpy(eq, a->s.data, a->s.len);
  eq[a->s.len] = '\0';
  arrow = strstr(eq, "->");
  if (!arrow || strchr(eq, '.'))
    return ifail(x->r, x->j,
                 "equation '%s': parplan reads explicit "
                 "equations without ellipses",
                 eq);
  memset(size, 0, sizeof size);
  for (p = eq; p < arrow; p++) {
    if (*p == ',') {
      in++;
      d = 0;
      continue;
    }
    if (*p == ' ')
      continue;
    if (in >= x->nin || !x->in[in] || d >= x->in[in]->ndim)
      return ifail(x->r, x->j, "equation '%s' does not fit the inputs", eq);
    size[(unsigned char)*p & 127] = x->in[in]->dims[d++];
  }
  for (p = arrow + 2; *p; p++)
    if (*p != ' ' && no < MAXD)
      od[no++] = size[(unsigned char)*p & 127];
  return out_shape(x, 0, x->in[0]->type, no, od, &k);
}

pp_status ppi_onnx_infer(struct onnx_run *r, size_t j, bool *done)
{
  struct node x;
  size_t i;
  const char *op = r->g->node[j]->op_type;
  memset(&x, 0, sizeof x);
  x.r = r;
  x.j = j;
  x.n = r->g->node[j];
  x.op = op;
  if (x.n->n_input > MAX_IN)
    return ifail(r, j, "%zu inputs, more than the %d parplan reads",
                 x.n->n_input, MAX_IN);
  x.nin = (int)x.n->n_input;
  *done = true;
  for (i = 0; i < (size_t)x.nin; i++) {
    int32_t k;
    if (!x.n->input[i][0])
      continue;
    k = ppi_strmap_get(&r->tmap, x.n->input[i]);
    if (k < 0 || OT(r, k).ndim < 0)
      return wait(r, j, done, "input %zu ('%s') has no static shape", i,
                  x.n->input[i]);
    x.in[i] = &OT(r, k);
  }
  if (strcmp(op, "Constant") && (!x.nin || !x.in[0]) && strcmp(op, "Range"))
    return ifail(r, j, "input 0 is missing");
  if (x.n->domain && x.n->domain[0] && strcmp(x.n->domain, "ai.onnx"))
    return wait(r, j, done,
                "domain '%s' is not the standard one; parplan infers the "
                "standard ONNX operators only",
                x.n->domain);
  if (op_is(op, k_same))
    return i_same(&x);
  if (op_is(op, k_bcast))
    return strcmp(op, "Where") || (has(&x, 1) && has(&x, 2))
               ? i_bcast(&x)
               : ifail(r, j, "Where needs a condition, X and Y");
  if (op_is(op, k_reduce))
    return i_reduce(&x, done);
  if (!strcmp(op, "Conv") || !strcmp(op, "ConvTranspose") ||
      !strcmp(op, "MaxPool") || !strcmp(op, "AveragePool") ||
      !strcmp(op, "LpPool"))
    return i_window(&x);
  if (!strcmp(op, "GlobalAveragePool") || !strcmp(op, "GlobalMaxPool") ||
      !strcmp(op, "GlobalLpPool"))
    return i_global_pool(&x);
  if (!strcmp(op, "BatchNormalization"))
    return i_batchnorm(&x);
  if (!strcmp(op, "LayerNormalization"))
    return i_layernorm(&x);
  if (!strcmp(op, "Dropout"))
    return i_dropout(&x);
  if (!strcmp(op, "Flatten"))
    return i_flatten(&x);
  if (!strcmp(op, "Gemm"))
    return has(&x, 1) ? i_gemm(&x) : ifail(r, j, "input B is missing");
  if (!strcmp(op, "MatMul")) /* B missing: fuzz_onnx's finding (NULL) */
    return has(&x, 1) ? i_matmul(&x) : ifail(r, j, "input B is missing");
  if (!strcmp(op, "Concat"))
    return i_concat(&x);
  if (!strcmp(op, "Reshape"))
    return i_reshape(&x, done);
  if (!strcmp(op, "Transpose"))
    return i_transpose(&x);
  if (!strcmp(op, "Unsqueeze"))
    return i_unsqueeze(&x, done);
  if (!strcmp(op, "Squeeze"))
    return i_squeeze(&x, done);
  if (!strcmp(op, "Shape"))
    return i_shape(&x);
  if (!strcmp(op, "Size"))
    return i_size(&x);
  if (!strcmp(op, "Gather"))
    return x.nin < 2 || !x.in[1] ? ifail(r, j, "no indices") : i_gather(&x);
  if (!strcmp(op, "Slice"))
    return i_slice(&x, done);
  if (!strcmp(op, "Split"))
    return i_split(&x, done);
  if (!strcmp(op, "Constant"))
    return i_constant(&x);
  if (!strcmp(op, "ConstantOfShape"))
    return i_constant_of_shape(&x, done);
  if (!strcmp(op, "Expand"))
    return x.nin < 2 || !x.in[1] ? ifail(r, j, "no shape") : i_expand(&x, done);
  if (!strcmp(op, "Tile"))
    return x.nin < 2 || !x.in[1] ? ifail(r, j, "no repeats") : i_tile(&x, done);
  if (!strcmp(op, "Range"))
    return x.nin < 3 || !x.in[0] || !x.in[1] || !x.in[2]
               ? ifail(r, j, "needs start, limit and delta")
               : i_range(&x, done);
  if (!strcmp(op, "Pad"))
    return i_pad(&x, done);
  if (!strcmp(op, "Resize") || !strcmp(op, "Upsample"))
    return i_resize(&x, done);
  if (!strcmp(op, "Einsum"))
    return i_einsum(&x);
  return wait(r, j, done,
              "parplan's shape inference does not know operator type '%s'", op);
}
