/* SPDX-License-Identifier: MIT */
#include "onnx_build.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

#define MAXT 32

struct ob {
  Onnx__ValueInfoProto vi[MAXT];
  Onnx__TypeProto tp[MAXT];
  Onnx__TypeProto__Tensor tt[MAXT];
  Onnx__TensorShapeProto sh[MAXT];
  Onnx__TensorShapeProto__Dimension dm[MAXT][4];
  Onnx__TensorShapeProto__Dimension *dp[MAXT][4];
  Onnx__ValueInfoProto *vip[MAXT];
  int nvi;
  Onnx__TensorProto ini[MAXT];
  Onnx__TensorProto *inip[MAXT];
  int64_t idims[MAXT][4];
  uint8_t *raw[MAXT]; /* zero weights: a value field, as the checker wants */
  int nini;
  Onnx__NodeProto nd[MAXT];
  Onnx__TensorProto cval; /* the Constant node's value */
  int64_t cdims[1];
  uint8_t craw[16];
  Onnx__NodeProto *ndp[MAXT];
  char *ins[MAXT][4], *outs[MAXT][2];
  Onnx__AttributeProto at[MAXT][2];
  Onnx__AttributeProto *atp[MAXT][2];
  int64_t ints[MAXT][2][4];
  int nnd;
};

/* A tensor's value info; d < 0 is the symbolic batch "N" (-2: "S"). */
static Onnx__ValueInfoProto *vinfo(struct ob *o, const char *name, int nd,
                                   const int64_t *d)
{
  int k = o->nvi++, i;
  onnx__value_info_proto__init(&o->vi[k]);
  onnx__type_proto__init(&o->tp[k]);
  onnx__type_proto__tensor__init(&o->tt[k]);
  onnx__tensor_shape_proto__init(&o->sh[k]);
  for (i = 0; i < nd; i++) {
    onnx__tensor_shape_proto__dimension__init(&o->dm[k][i]);
    if (d[i] < 0 && d[i] != -3) {
      o->dm[k][i].value_case =
          ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
      o->dm[k][i].dim_param = (char *)(d[i] == -2 ? "S" : "N");
    } else {
      o->dm[k][i].value_case =
          ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
      o->dm[k][i].dim_value = d[i];
    }
    o->dp[k][i] = &o->dm[k][i];
  }
  o->sh[k].n_dim = (size_t)nd;
  o->sh[k].dim = o->dp[k];
  o->tt[k].has_elem_type = 1;
  o->tt[k].elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  o->tt[k].shape = &o->sh[k];
  o->tp[k].value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  o->tp[k].tensor_type = &o->tt[k];
  o->vi[k].name = (char *)name;
  o->vi[k].type = &o->tp[k];
  o->vip[k] = &o->vi[k];
  return &o->vi[k];
}

static void init(struct ob *o, const char *name, int type, int nd,
                 const int64_t *d)
{
  int k = o->nini++;
  onnx__tensor_proto__init(&o->ini[k]);
  memcpy(o->idims[k], d, (size_t)nd * sizeof *d);
  o->ini[k].n_dims = (size_t)nd;
  o->ini[k].dims = o->idims[k];
  o->ini[k].has_data_type = 1;
  o->ini[k].data_type = type;
  o->ini[k].name = (char *)name;
  {
    size_t n = type == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 ? 8 : 4;
    int i;
    for (i = 0; i < nd; i++)
      n *= (size_t)(d[i] > 0 ? d[i] : 0);
    o->raw[k] = calloc(n ? n : 1, 1);
    o->ini[k].has_raw_data = 1;
    o->ini[k].raw_data.len = n;
    o->ini[k].raw_data.data = o->raw[k];
  }
  if (!strcmp(name, "shape") && type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT) {
    float v[2] = {NAN, 64}; /* OB_NAN_SHAPE */
    memcpy(o->raw[k], v, sizeof v);
  } else if (!strcmp(name, "shape")) { /* Reshape's target: [0 (copy N), 64] */
    o->raw[k][8] = 64;
  }
  if (!strcmp(name, "W1") || !strcmp(name, "W1T")) { /* W1T = W1's transpose */
    int i, j;
    for (i = 0; i < 64; i++)
      for (j = 0; j < 32; j++) {
        float v = (float)(i * 32 + j);
        memcpy(o->raw[k] + 4 * (name[2] ? j * 64 + i : i * 32 + j), &v, 4);
      }
  }
  o->inip[k] = &o->ini[k];
}

static Onnx__NodeProto *node(struct ob *o, const char *name, const char *op,
                             const char *i0, const char *i1, const char *i2,
                             const char *out)
{
  int k = o->nnd++, n = 0;
  onnx__node_proto__init(&o->nd[k]);
  if (i0)
    o->ins[k][n++] = (char *)i0;
  if (i1)
    o->ins[k][n++] = (char *)i1;
  if (i2)
    o->ins[k][n++] = (char *)i2;
  o->outs[k][0] = (char *)out;
  o->nd[k].n_input = (size_t)n;
  o->nd[k].input = o->ins[k];
  o->nd[k].n_output = 1;
  o->nd[k].output = o->outs[k];
  o->nd[k].name = (char *)name;
  o->nd[k].op_type = (char *)op;
  o->ndp[k] = &o->nd[k];
  return &o->nd[k];
}

static void attr_ints(struct ob *o, Onnx__NodeProto *n, const char *name,
                      int64_t a, int64_t b, int count)
{
  int k = (int)(n - o->nd), q = (int)n->n_attribute, i;
  Onnx__AttributeProto *at = &o->at[k][q];
  onnx__attribute_proto__init(at);
  at->name = (char *)name;
  at->has_type = 1;
  if (count == 1) {
    at->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    at->has_i = 1;
    at->i = a;
  } else {
    at->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    for (i = 0; i < count; i++) /* a, b; four: a, a, b, b */
      o->ints[k][q][i] = count == 4 ? (i < 2 ? a : b) : i ? b : a;
    at->n_ints = (size_t)count;
    at->ints = o->ints[k][q];
  }
  o->atp[k][q] = at;
  n->n_attribute = (size_t)q + 1;
  n->attribute = o->atp[k];
}

uint8_t *ob_build(enum ob_defect d, size_t *len)
{
  struct ob *o = calloc(1, sizeof *o);
  Onnx__ModelProto mp;
  Onnx__GraphProto g;
  Onnx__ValueInfoProto *in[2], *out[1];
  Onnx__AttributeProto cattr, *cattrp[1];
  Onnx__OperatorSetIdProto ops, *opsp[1];
  int64_t dshape[1] = {2}, w1t[2] = {32, 64};
  int64_t x[4] = {-1, 3, 8, 8}, c1[4] = {-1, 4, 8, 8}, p1[4] = {-1, 4, 4, 4},
          f1[2] = {-1, 64}, h[2] = {-1, 32}, y[2] = {-1, 10};
  int64_t w[4] = {4, 3, 3, 3}, b[1] = {4}, w1[2] = {64, 32}, b1[1] = {32},
          w2[2] = {10, 32}, b2[1] = {10}, shp[1] = {2};
  Onnx__NodeProto *n;
  uint8_t *buf;
  int vstart;

  if (!o)
    return NULL;
  if (d == OB_NEG_DIM)
    c1[2] = -3;
  if (d == OB_HUGE_DIM)
    p1[2] = p1[3] = (int64_t)1 << 40;
  if (d == OB_SYM_DIM)
    x[2] = -2;
  onnx__model_proto__init(&mp);
  onnx__graph_proto__init(&g);
  onnx__operator_set_id_proto__init(&ops);
  ops.has_version = 1;
  ops.version = 13;
  opsp[0] = &ops;
  mp.has_ir_version = 1;
  mp.ir_version = 8;
  mp.n_opset_import = 1;
  mp.opset_import = opsp;
  mp.producer_name = (char *)"parplan-tests";
  g.name = (char *)"tiny_cnn";

  in[0] = vinfo(o, "x", 4, x);
  out[0] = vinfo(o, "y", 2, y);
  if (d == OB_DYN_RESHAPE) {
    in[1] = vinfo(o, "dynshape", 1, dshape);
    in[1]->type->tensor_type->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
  }
  vstart = o->nvi;
  if (d != OB_NO_SHAPE) { /* as shape inference leaves it */
    vinfo(o, "c1", 4, c1);
    vinfo(o, "r1", 4, c1);
    vinfo(o, "p1", 4, p1);
    if (d != OB_DYN_RESHAPE)
      vinfo(o, "f1", 2, f1);
    vinfo(o, "h", 2, h);
    vinfo(o, "h2", 2, h);
    vinfo(o, "s", 2, h);
  }

  init(o, "W", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 4, w);
  init(o, "B", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1, b);
  if (d != OB_ALIASES)
    init(o, "shape",
         d == OB_NAN_SHAPE ? ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
                           : ONNX__TENSOR_PROTO__DATA_TYPE__INT64,
         1, shp);
  init(o, "W1", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, w1);
  init(o, "b1", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1, b1);
  init(o, "W2", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, w2);
  init(o, "b2", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1, b2);
  if (d == OB_ALIASES) /* W1's transposed copy (both zeros): tied */
    init(o, "W1T", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, w1t);

  n = node(o, "conv1", "Conv", "x", "W", "B", "c1");
  if (d == OB_CYCLE) {
    o->ins[0][3] = (char *)"s";
    n->n_input = 4;
  }
  attr_ints(o, n, "kernel_shape", 3, 3, 2);
  attr_ints(o, n, "pads", 1, 1, 4);
  node(o, "relu1", "Relu", "c1", NULL, NULL,
       d == OB_DUP_PRODUCER ? "c1" : "r1");
  if (d == OB_ALIASES) { /* relu1 -> Identity -> pool; a Constant shape */
    node(o, "alias", "Identity", "r1", NULL, NULL, "r1a");
    n = node(o, "shape_const", "Constant", NULL, NULL, NULL, "shape");
    onnx__tensor_proto__init(&o->cval);
    o->cdims[0] = 2;
    o->cval.n_dims = 1;
    o->cval.dims = o->cdims;
    o->cval.has_data_type = 1;
    o->cval.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
    o->craw[8] = 64;
    o->cval.has_raw_data = 1;
    o->cval.raw_data.len = 16;
    o->cval.raw_data.data = o->craw;
    onnx__attribute_proto__init(&cattr);
    cattr.name = (char *)"value";
    cattr.has_type = 1;
    cattr.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    cattr.t = &o->cval;
    cattrp[0] = &cattr;
    n->n_attribute = 1;
    n->attribute = cattrp;
  }
  n = node(o, "pool", "MaxPool", d == OB_ALIASES ? "r1a" : "r1", NULL, NULL,
           "p1");
  attr_ints(o, n, "kernel_shape", 2, 2, 2);
  attr_ints(o, n, "strides", 2, 2, 2);
  node(o, "reshape", "Reshape", "p1",
       d == OB_DYN_RESHAPE ? "dynshape" : "shape", NULL, "f1");
  node(o, "fc1", "Gemm", d == OB_UNKNOWN_INPUT ? "ghost" : "f1",
       d == OB_GEMM_NO_B ? "" : "W1", "b1", "h");
  node(o, "", d == OB_NO_OP_TYPE ? "" : "Relu", "h", NULL, NULL, "h2");
  node(o, "add", "Add", "h", "h2", NULL, "s");
  n = node(o, "fc2", "Gemm", "s", "W2", "b2", "y");
  attr_ints(o, n, "transB", 1, 0, 1);
  if (d == OB_ALIASES) { /* two more readers of W1: a copy, a Transpose */
    node(o, "tied", "MatMul", "h", "W1T", NULL, "t1");
    node(o, "w1_t", "Transpose", "W1", NULL, NULL, "W1tr");
    node(o, "tied2", "MatMul", "h", "W1tr", NULL, "t2");
  }

  g.n_node = d == OB_NO_NODES ? 0 : (size_t)o->nnd;
  g.node = o->ndp;
  g.n_initializer = (size_t)o->nini;
  g.initializer = o->inip;
  g.n_input = d == OB_DYN_RESHAPE ? 2 : 1;
  g.input = in;
  g.n_output = 1;
  g.output = out;
  g.n_value_info = (size_t)(o->nvi - vstart);
  g.value_info = o->vip + vstart;
  if (d != OB_NO_GRAPH)
    mp.graph = &g;
  *len = onnx__model_proto__get_packed_size(&mp);
  buf = malloc(*len ? *len : 1);
  if (buf)
    onnx__model_proto__pack(&mp, buf);
  while (o->nini > 0)
    free(o->raw[--o->nini]);
  free(o);
  return buf;
}
