#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Export the real networks of tests/data/onnx/ with torch.onnx.export, as a
user would (no shape inference), strip their float weights, and record
torch's own figures next to them:

    /usr/bin/python3 scripts/make_onnx_models.py [OUTDIR] [NAME...]
    /usr/bin/python3 scripts/make_onnx_models.py --bench [OUTDIR] [NAME...]

The first form writes the test models (tests/data/onnx/ by default), the
second those of bench/bench_throughput.c (data/onnx/, BENCH below).

Needs Debian's python3-torch (1.13), python3-torchvision (0.14) and
python3-onnx (1.12); the tests only read the committed files and figures.

Each model is exported with weights=None (random initial weights: the
sizes are what matter) at the batch and sequence length given below, then
every float initializer or Constant tensor of more than 64 elements and
every one of more than 4096 (a causal mask, an index table) loses its data (dims and
data_type kept; the small integer initializers, the shape constants, and
float scalars keep theirs), so that the files stay
small: src/format/onnx.c reads an initializer without data by its dims.

The CNNs are exported in training mode (torch.onnx.TrainingMode.TRAINING),
so that BatchNormalization is not folded into the convolutions: every
parameter of torch stays an initializer (running statistics are buffers,
not parameters).  The transformers are exported in eval mode with
constant folding, as torch.onnx.export does by default, which turns every
nn.Linear weight into a transposed copy ("onnx::MatMul_N") and the tied
GPT-2 output projection into a second, transposed copy of the embedding.

figures.json, for each model: the export batch and sequence, torch's
parameter count (sum of p.numel() over model.parameters(), which lists a
shared parameter once) and the bytes saved for backward per sample:
every tensor packed by torch.autograd.graph.saved_tensors_hooks during
one training-mode forward pass, deduplicated by storage (a tensor and its
views count once, at their storage's size), parameters and buffers
excluded (they are the model's state, not activations).
"""
import json
import math
import os
import shutil
import sys
import tempfile

import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

# The opset of each export: 13 to 17, so that both the decomposed
# LayerNorm (ReduceMean, Sub, Pow, Sqrt, Div: opsets < 17) and
# LayerNormalization (17) and both BatchNormalization forms (13, 14+) occur.
OPSET = {"resnet50": 13, "inception_v3": 14, "densenet121": 15,
         "mobilenet_v3_large": 16, "vit_b_16": 17, "swin_t": 16, "gpt2": 17,
         "gpt2_dynamic": 13, "bert_large": 14}


# ---- plain-torch transformers ----------------------------------------------

class Attention(nn.Module):
    def __init__(self, hid, heads, causal, seq):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(hid, 3 * hid)
        self.proj = nn.Linear(hid, hid)
        self.causal = causal
        if causal:
            self.register_buffer(
                "mask", torch.tril(torch.ones(seq, seq, dtype=torch.bool)),
                persistent=False)

    def forward(self, x):
        b, t, c = x.shape
        h = self.heads
        q, k, v = self.qkv(x).split(c, dim=2)
        q = q.view(b, t, h, c // h).transpose(1, 2)
        k = k.view(b, t, h, c // h).transpose(1, 2)
        v = v.view(b, t, h, c // h).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(c // h)
        if self.causal:
            att = att.masked_fill(~self.mask[:t, :t], float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, c)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, hid, heads, causal, seq):
        super().__init__()
        self.ln1 = nn.LayerNorm(hid)
        self.attn = Attention(hid, heads, causal, seq)
        self.ln2 = nn.LayerNorm(hid)
        self.fc = nn.Linear(hid, 4 * hid)
        self.out = nn.Linear(4 * hid, hid)
        self.pre = causal  # GPT-2: pre-norm; BERT: post-norm

    def mlp(self, x):
        return self.out(F.gelu(self.fc(x)))

    def forward(self, x):
        if self.pre:
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))
        x = self.ln1(x + self.attn(x))
        return self.ln2(x + self.mlp(x))


class GPT2(nn.Module):
    """GPT-2 small without dropout: 12 layers, 768 hidden, 12 heads,
    context 1024, vocabulary 50257, output projection tied to wte."""

    def __init__(self, layers=12, hid=768, heads=12, seq=1024, vocab=50257):
        super().__init__()
        self.wte = nn.Embedding(vocab, hid)
        self.wpe = nn.Embedding(seq, hid)
        self.h = nn.ModuleList(
            [Block(hid, heads, True, seq) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(hid)
        self.lm_head = nn.Linear(hid, vocab, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, idx):
        t = idx.shape[1]
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for blk in self.h:
            x = blk(x)
        return self.lm_head(self.ln_f(x))


class BertEncoder(nn.Module):
    """A BERT-Large encoder without dropout: embeddings (word, position,
    token type, LayerNorm), 24 post-norm layers, 1024 hidden, 16 heads."""

    def __init__(self, layers=24, hid=1024, heads=16, seq=512, vocab=30522):
        super().__init__()
        self.word = nn.Embedding(vocab, hid)
        self.pos = nn.Embedding(seq, hid)
        self.tok_type = nn.Embedding(2, hid)
        self.ln = nn.LayerNorm(hid)
        self.layers = nn.ModuleList(
            [Block(hid, heads, False, seq) for _ in range(layers)])

    def forward(self, idx, types):
        t = idx.shape[1]
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.ln(self.word(idx) + self.pos(pos) + self.tok_type(types))
        for blk in self.layers:
            x = blk(x)
        return x


# ---- the models --------------------------------------------------------------

def tv(name, **kw):
    return lambda: getattr(torchvision.models, name)(weights=None, **kw)


def image(b, s=224):
    return (torch.randn(b, 3, s, s),)


def tokens(b, t, vocab):
    return (torch.randint(0, vocab, (b, t)),)


MODELS = {
    # name: (constructor, inputs, batch, seq, training export, dynamic axes)
    # (swin_t: see NO_FOLDING)
    "resnet50": (tv("resnet50"), lambda: image(2), 2, 0, True, None),
    "inception_v3": (tv("inception_v3", aux_logits=False, init_weights=True),
                     lambda: image(2, 299), 2, 0, True, None),
    "densenet121": (tv("densenet121"), lambda: image(2), 2, 0, True, None),
    "mobilenet_v3_large": (tv("mobilenet_v3_large"), lambda: image(2), 2, 0,
                           True, None),
    "vit_b_16": (tv("vit_b_16"), lambda: image(1), 1, 0, False, None),
    "swin_t": (tv("swin_t"), lambda: image(1), 1, 0, False, None),
    "gpt2": (GPT2, lambda: tokens(1, 1024, 50257), 1, 1024, False, None),
    "gpt2_dynamic": (GPT2, lambda: tokens(1, 1024, 50257), 1, 1024, False,
                     {"input_ids": {0: "batch", 1: "seq"}}),
    "bert_large": (BertEncoder,
                   lambda: tokens(1, 512, 30522) + (torch.zeros(
                       1, 512, dtype=torch.long),), 1, 512, False, None),
}


# The networks bench/bench_throughput.c plans, in data/onnx/ (--bench):
# the batch dimension symbolic ("batch", dynamic_axes), so that the
# bench's FILE:batch=N sets the published runs' micro-batches; sequence
# lengths static.
BENCH = {
    "resnet50": (tv("resnet50"), lambda: image(2), 2, 0, True,
                 {"image": {0: "batch"}}),
    "bert_large_s128": (BertEncoder,
                        lambda: tokens(1, 128, 30522) + (torch.zeros(
                            1, 128, dtype=torch.long),), 1, 128, False,
                        {"input_ids": {0: "batch"},
                         "token_type_ids": {0: "batch"}}),
    "bert_large_s512": (BertEncoder,
                        lambda: tokens(1, 512, 30522) + (torch.zeros(
                            1, 512, dtype=torch.long),), 1, 512, False,
                        {"input_ids": {0: "batch"},
                         "token_type_ids": {0: "batch"}}),
    "gpt2_small": (GPT2, lambda: tokens(1, 1024, 50257), 1, 1024, False,
                   {"input_ids": {0: "batch"}}),
    # Megatron-LM's 1.2B GPT-2 on one V100 (Shoeybi et al.): 40 layers,
    # hidden 1536, 16 heads, sequence 1024, vocabulary padded to 51200.
    "gpt2_1p2b": (lambda: GPT2(layers=40, hid=1536, heads=16, seq=1024,
                               vocab=51200),
                  lambda: tokens(1, 1024, 51200), 1, 1024, False,
                  {"input_ids": {0: "batch"}}),
}
# Too large for saved_tensors_hooks on a small machine (a training forward
# keeps about 13 GB in fp32): exported under no_grad (its attention is
# the plain-torch one above, no fused path), saved bytes not recorded.
NO_SAVED = {"gpt2_1p2b"}
BENCH_OPSET = 17  # LayerNormalization as one node, as torch runs it

# Exported without constant folding: folding would replace Swin's relative
# position bias tables (parameters, 169 x heads) by the gathered biases
# (heads x 49 x 49 constants), which no reader can tell from parameters.
NO_FOLDING = {"swin_t"}


def perturb(model):
    """Make every parameter's values distinct: the exporter merges
    initializers with equal values (LayerNorm weights all 1 and biases all
    0 at initialisation), which a trained model would not have."""
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 1e-3)


def saved_bytes(model, inputs):
    """Bytes packed for backward by one training forward pass, by storage."""
    state = set()
    for t in list(model.parameters()) + list(model.buffers()):
        state.add(t.storage().data_ptr())
    seen = {}

    def pack(t):
        st = t.storage()
        ptr = st.data_ptr()
        if ptr not in state and ptr != 0:
            seen[ptr] = max(seen.get(ptr, 0), st.nbytes())
        return t

    model.train()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        model(*inputs)
    return sum(seen.values())


def big(t):
    """Whether tensor t's values go: floats of more than 64 elements (the
    weights), anything of more than 4096 (masks, index tables)."""
    n = 1
    for d in t.dims:
        n *= d
    return n > 4096 or (n > 64 and t.data_type in (
        onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16,
        onnx.TensorProto.BFLOAT16, onnx.TensorProto.DOUBLE))


def clear(t):
    # external_data and data_location too, should a tensor still point
    # outside (an export over protobuf's 2 GB keeps its weights in files
    # beside the model, which onnx.load reads back in)
    for field in ("raw_data", "float_data", "double_data", "int32_data",
                  "int64_data", "external_data", "data_location"):
        t.ClearField(field)


def strip(src, path):
    """Drop the values of the big initializers and Constant node tensors,
    keeping their dims and data_type; read src, write path."""
    m = onnx.load(src)
    for t in m.graph.initializer:
        if big(t):
            clear(t)
    for n in m.graph.node:
        for a in n.attribute:
            if a.HasField("t") and big(a.t):
                clear(a.t)
    onnx.save(m, path)


def main():
    args = sys.argv[1:]
    bench = bool(args) and args[0] == "--bench"
    if bench:
        args = args[1:]
    models = BENCH if bench else MODELS
    out = args[0] if args else ("data/onnx" if bench else "tests/data/onnx")
    names = args[1:] or list(models)
    os.makedirs(out, exist_ok=True)
    fig_path = os.path.join(out, "figures.json")
    figs = {}
    if os.path.exists(fig_path):
        with open(fig_path) as f:
            figs = json.load(f)
    torch.manual_seed(0)
    for name in names:
        make, inputs, batch, seq, train, dyn = models[name]
        opset = BENCH_OPSET if bench else OPSET[name]
        model = make()
        perturb(model)
        x = inputs()
        params = sum(p.numel() for p in model.parameters())
        saved = None if name in NO_SAVED else saved_bytes(model, x)
        path = os.path.join(out, name + ".onnx")
        tmp = tempfile.mkdtemp()  # the export and any external data
        raw = os.path.join(tmp, name + ".onnx")
        in_names = (["input_ids", "token_type_ids"][:len(x)]
                    if seq else ["image"])
        mode = (torch.onnx.TrainingMode.TRAINING if train
                else torch.onnx.TrainingMode.EVAL)
        model.train(train)
        # with grad enabled: under no_grad, nn.MultiheadAttention takes
        # its fused fast path, which torch 1.13 cannot export
        with torch.set_grad_enabled(name not in NO_SAVED):
            torch.onnx.export(model, x, raw, opset_version=opset,
                              training=mode,
                              do_constant_folding=not train
                              and name not in NO_FOLDING,
                              input_names=in_names, output_names=["output"],
                              dynamic_axes=dyn)
        strip(raw, path)
        shutil.rmtree(tmp)
        figs[name] = {
            "file": name + ".onnx",
            "batch": batch,
            "seq": seq,
            "opset": opset,
            "training_export": train,
            "dynamic_axes": dyn,
            "parameters": params,
            "saved_bytes_per_sample": (None if saved is None
                                       else saved // batch),
            "bytes": os.path.getsize(path),
        }
        print(name, figs[name], flush=True)
        with open(fig_path, "w") as f:
            json.dump(figs, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
