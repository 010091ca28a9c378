/* SPDX-License-Identifier: MIT */
/*
** The ONNX reader's graph (src/format/onnx.c) as the shape inference
** (src/format/onnx_infer.c) sees it: one record per tensor name, with its
** element type, static shape, constant values when small, and where it
** comes from.
*/
#ifndef PP_FORMAT_ONNX_GRAPH_H
#define PP_FORMAT_ONNX_GRAPH_H

#include "plan/plan.h"

#include "onnx.pb-c.h"

/* TUNING: the most elements of a constant whose values the inference
** keeps (shape vectors, indices, scalars, small masks); larger constants
** keep their shape only.  Shape computations of the exported models hold
** at most a few dozen values; 4096 leaves room for small lookup tables at
** 64 KiB per tensor.  No sweep recorded. */
#define PPI_ONNX_MAX_VALUES 4096

struct otensor {
  const char *name; /* borrowed from the model */
  int32_t type;     /* ONNX element type; 0: not known yet */
  int32_t ndim;     /* -1: no static shape (yet) */
  int64_t elems;    /* product of the dims */
  int64_t dims[PPI_ONNX_MAX_DIMS];
  int64_t *iv;      /* the values as int64 (floats truncated); NULL: unknown */
  double *dv;       /* the same values as doubles */
  int32_t producer; /* node index, -1: a graph input or initializer */
  int32_t init;     /* initializer index, -1: none */
  int32_t root;     /* the tensor whose storage this one views (itself) */
  int32_t param;    /* the float initializer this constant is a copy, view
                       or tied twin of (its parameter), -1: none */
  int32_t save_as;  /* what autograd keeps when an operator saves this
                       one (a fused op's input), -1: itself */
  bool is_const;    /* known without the graph inputs (no operator) */
  bool declared;    /* the file gives its shape (value_info, inputs) */
  bool graph_in, graph_out;
  bool read;     /* some operator reads it */
  bool counted;  /* its parameter already counted */
  bool saved;    /* already saved for backward by an operator */
  bool grad;     /* requires grad: a parameter or an activation */
  bool no_save;  /* inside a decomposed GELU: autograd never sees it */
  bool fused;    /* the same: torch's one gelu kernel never writes it to
                    device memory, so it is no memory traffic */
  bool has_data; /* an initializer with its values in the file */
};

struct onnx_run {
  pp_ctx *ctx;
  const char *src;
  const pp_onnx_params *p;
  const Onnx__GraphProto *g;
  int64_t opset;          /* of the default domain */
  struct ppi_strmap tmap; /* tensor name -> index in tv */
  struct ppi_vec tv;      /* struct otensor */
  char **names;           /* operator names, one per node */
  bool *folded;           /* per node: computed from constants, no operator */
  int32_t fsize;          /* bytes of a float element as run (dtype=); 0:
                             each tensor's own */
  char why[320];          /* why the last node could not be inferred */
};

#define OT(r, k) PPI_VEC_AT(&(r)->tv, struct otensor, k)

/* Bytes per element of ONNX type t (0: undefined, string). */
PP_INTERNAL int32_t ppi_onnx_elem_bytes(int32_t t);
PP_INTERNAL bool ppi_onnx_is_float(int32_t t);
/* The values of an initializer or Constant tensor into t (type, dims set),
** when it has data and at most PPI_ONNX_MAX_VALUES elements. */
PP_INTERNAL pp_status ppi_onnx_tensor_values(struct onnx_run *r,
                                             const Onnx__TensorProto *tp,
                                             struct otensor *t);
/* Infer node j's outputs (types, shapes, constant values).  *done false,
** with r->why saying what is missing, when an input is not known yet;
** an error for inputs an operator cannot take. */
PP_INTERNAL pp_status ppi_onnx_infer(struct onnx_run *r, size_t j, bool *done);
/* Set tensor k's shape (type, dims): checked against a declared shape. */
PP_INTERNAL pp_status ppi_onnx_set_shape(struct onnx_run *r, int32_t k,
                                         int32_t type, int32_t nd,
                                         const int64_t *dims, const char *who);

#endif
