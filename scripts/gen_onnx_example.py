#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Build a small transformer-like ONNX model with the onnx library (Debian's
python3-onnx), run its shape inference and checker, save it, and print what
an importer must find, computed here from onnx's own inferred shapes:

    gen_onnx_example.py OUT.onnx BATCH   ->  JSON on stdout

The JSON gives the node count, the parameter bytes (float initializers),
each node's first-output bytes at BATCH and the forward FLOPs of its
matrix products (2 x output elements x the reduced dimension).
tests/test_import.c runs it to check src/format/onnx.c against the real
library; `parplan model OUT.onnx:batch=BATCH` reads the file.
"""
import json
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

SEQ, HID, FFN, OUT = 16, 32, 64, 10


def init(name, *dims):
    rng = np.random.default_rng(sum(map(ord, name)))  # distinct per name
    return numpy_helper.from_array(
        rng.standard_normal(dims).astype(np.float32), name)


def build():
    inits = [
        init("gamma", HID), init("beta", HID),
        init("Wq", HID, HID), init("Wk", HID, HID), init("Wv", HID, HID),
        init("W1", HID, FFN), init("b1", FFN), init("W2", FFN, HID),
        init("Wo", SEQ * HID, OUT), init("bo", OUT),
        numpy_helper.from_array(np.array([-1, SEQ * HID], dtype=np.int64),
                                "flat_shape"),
    ]
    n = helper.make_node
    nodes = [
        n("LayerNormalization", ["x", "gamma", "beta"], ["ln"], name="ln",
          axis=-1),
        n("MatMul", ["ln", "Wq"], ["q"], name="q_proj"),
        n("MatMul", ["ln", "Wk"], ["k"], name="k_proj"),
        n("MatMul", ["ln", "Wv"], ["v"], name="v_proj"),
        n("Transpose", ["k"], ["kt"], name="k_t", perm=[0, 2, 1]),
        n("MatMul", ["q", "kt"], ["scores"], name="scores"),
        n("Softmax", ["scores"], ["probs"], name="softmax", axis=-1),
        n("MatMul", ["probs", "v"], ["attn"], name="attn"),
        n("Add", ["attn", "x"], ["res1"], name="residual1"),
        n("MatMul", ["res1", "W1"], ["h"], name="ffn1"),
        n("Add", ["h", "b1"], ["hb"], name="ffn1_bias"),
        n("Relu", ["hb"], ["act"], name="relu"),
        n("MatMul", ["act", "W2"], ["h2"], name="ffn2"),
        n("Add", ["h2", "res1"], ["y"], name="residual2"),
        n("Reshape", ["y", "flat_shape"], ["flat"], name="flatten"),
        n("Gemm", ["flat", "Wo", "bo"], ["logits"], name="head"),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", SEQ, HID])
    y = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", OUT])
    g = helper.make_graph(nodes, "tiny_transformer", [x], [y], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="parplan gen_onnx_example.py")
    m.ir_version = 8
    m = shape_inference.infer_shapes(m, strict_mode=True)
    onnx.checker.check_model(m, full_check=True)
    return m


def expected(m, batch):
    g = m.graph
    shapes = {}
    for vi in list(g.value_info) + list(g.input) + list(g.output):
        dims = [d.dim_value if d.HasField("dim_value") else batch
                for d in vi.type.tensor_type.shape.dim]
        shapes[vi.name] = dims
    floats = {TensorProto.FLOAT: 4, TensorProto.FLOAT16: 2,
              TensorProto.DOUBLE: 8, TensorProto.BFLOAT16: 2}
    param = sum(int(np.prod(t.dims)) * floats[t.data_type]
                for t in g.initializer if t.data_type in floats)
    out_bytes, flops = {}, {}
    for nd in g.node:
        out_bytes[nd.name] = int(np.prod(shapes[nd.output[0]])) * 4
        if nd.op_type in ("MatMul", "Gemm"):
            k = shapes[nd.input[0]][-1]
            flops[nd.name] = 2 * int(np.prod(shapes[nd.output[0]])) * k
            if nd.op_type == "Gemm":
                flops[nd.name] += int(np.prod(shapes[nd.output[0]]))
    return {"nodes": len(g.node), "param_bytes": param,
            "out_bytes": out_bytes, "flops": flops}


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: gen_onnx_example.py OUT.onnx BATCH")
    m = build()
    onnx.save(m, sys.argv[1])
    json.dump(expected(m, int(sys.argv[2])), sys.stdout, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
