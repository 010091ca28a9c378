/* SPDX-License-Identifier: MIT */
/*
** A small ONNX network built in C through the protoc-c bindings, as
** shape inference would leave it, with optional defects for the
** reader's error paths (tests/onnx_build.c).
*/
#ifndef PP_ONNX_BUILD_H
#define PP_ONNX_BUILD_H

#include <stddef.h>
#include <stdint.h>

enum ob_defect {
  OB_OK = 0,
  OB_NO_SHAPE,      /* no value_info at all (as torch.onnx.export writes) */
  OB_UNKNOWN_INPUT, /* fc1 reads a tensor nobody makes */
  OB_DUP_PRODUCER,  /* relu1 and conv1 both write c1 */
  OB_CYCLE,         /* conv1 also reads add's output */
  OB_NEG_DIM,       /* a dimension of -3 */
  OB_HUGE_DIM,      /* 2^40 x 2^40 elements */
  OB_NO_GRAPH,      /* a ModelProto without a graph */
  OB_NO_NODES,      /* a graph without nodes */
  OB_NO_OP_TYPE,    /* a node without op_type */
  OB_DYN_RESHAPE,   /* reshape's target shape is a graph input, f1 has no
                       value_info */
  OB_SYM_DIM,       /* x's dimension 2 is the symbol "S" */
  OB_ALIASES,       /* an Identity between relu1 and pool, the reshape
                       target from a Constant node, and two more readers
                       of W1: MatMul "tied" of h with W1T (W1's transposed
                       copy, an initializer of the same zero values) and
                       MatMul "tied2" of h with Transpose "w1_t" of W1 */
  OB_NAN_SHAPE,     /* reshape's target shape a FLOAT initializer
                       [NaN, 64] (fuzz_onnx's first finding: NaN to
                       int64 in the constant reader, undefined) */
  OB_GEMM_NO_B,     /* fc1's B input named "" (optional-input syntax):
                       fuzz_onnx's second finding, a NULL read */
  OB_NDEFECT
};

/* The network (batch N symbolic):
**   x[N,3,8,8] -> conv1 (W 4x3x3x3, B 4, pads 1) -> c1[N,4,8,8]
**   -> relu1 -> r1 -> pool (MaxPool 2x2, strides 2) -> p1[N,4,4,4]
**   -> reshape (int64 shape initializer [0, 64]) -> f1[N,64]
**   -> fc1 (Gemm, W1 64x32, b1 32) -> h[N,32]
**   -> (unnamed Relu) -> h2 ; add(h, h2) -> s[N,32]
**   -> fc2 (Gemm transB, W2 10x32, b2 10) -> y[N,10]
** malloc'd bytes, *len their count. */
uint8_t *ob_build(enum ob_defect d, size_t *len);

#endif
