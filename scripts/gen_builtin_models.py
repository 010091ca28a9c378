#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generate src/model/model_builtin_data.c from the profiles in data/.

Run from the repository root:  python3 scripts/gen_builtin_models.py
The output is committed; CI does not need Python.  tests/test_builtin.c
checks values of the generated tables against the CSV and JSON sources.

Conventions (docs/FORMATS.md, "Built-in models"):
- times in ms; every byte count in the model's dtype, which each model
  states (pp_model_builder_set_dtype), except where a tensor is fp32 on
  purpose (GPT-2's loss);
- AMP (data/amp, MccRee177/AMP @ 72eeea4): dtype fp16 (AMP's runs:
  DeepSpeed fp16, data/amp/clusters.json "precision"; the launch
  scripts pass --fp16).  Forward times are the measured entries at
  micro-batch 1; backward = 2 x forward, AMP's own convention
  (data/amp/COST_MODEL.md), except GPT-2's transformer entries: AMP's
  ParallelTransformerLayerPipe runs the layer's forward twice (once
  inside a print, megatron/model/transformer.py:509 and 513 of AMP's
  Megatron-LM-v1.1.5-3D_parallelism), and the profile times the entry
  as called (deepspeed/runtime/pipe/module.py:331-356 of AMP's fork:
  wall time of layer(inputs) after a CUDA sync), so the profiled
  forward is two forwards while the backward differentiates only the
  returned one: 2 x a single forward = 1 x the profiled entry.  Sizes are derived from the model code of
  AMP's repository (gpt2() and transgan() below give each formula);
- Sailor (data/sailor, eth-easl/sailor @ cf2c8e3): dtype fp32 (Sailor's
  runs have no fp16/bf16 section in their DeepSpeed config,
  data/sailor/README.md); params_bytes, act_output_bytes and
  act_mem_bytes of llm_info.json are stored as measured (4 bytes per
  float), for every tp degree.  Forward and backward are measured;
  Sailor's update_s is the same value on every layer of a profile, i.e.
  the whole model's optimizer step, so it is shared out over layers in
  proportion to their parameters.  GH-96 times come from the
  simulator's profiles (data/sailor/simulator/profiles_tmp_gh96.json,
  extracted by scripts/extract_sailor_simulator.py) where the model has
  them: profiles/GPT-Neo-2.7/GH-96 is defective and profiles/OPT-350/
  GH-96 disagrees with the file Sailor validated against.
"""
import csv
import json
from decimal import Decimal
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "data")
OUT = os.path.join(ROOT, "src", "model", "model_builtin_data.c")


def num(x):
    """Shortest repr that C reads back as the same double."""
    r = repr(float(x))
    if r in ("inf", "-inf", "nan"):
        raise ValueError(x)
    return r


def ms(x):
    """Seconds, as written in the source, to ms without binary rounding
    noise (4.277944565e-03 s -> 4.277944565, not 4.277944564999999)."""
    return float(Decimal(str(x)) * 1000)


def cstr(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


# pp_precision values (include/parplan.h).
DTYPES = {"fp32": "PP_PREC_FP32", "fp16": "PP_PREC_FP16", "bf16": "PP_PREC_BF16"}


class Model:
    def __init__(self, name, about, source, reftype, dtype, mbs=1):
        self.name, self.about, self.source = name, about, source
        self.reftype, self.mbs = reftype, mbs
        self.dtype = DTYPES[dtype]
        self.types, self.ops, self.times, self.tps, self.hyper = [], [], [], [], []
        self.loss = (0, 0)
        self.pipe_extra = 0

    def type_index(self, t):
        if t not in self.types:
            self.types.append(t)
        return self.types.index(t)

    def op(self, name, kind, fwd, bwd, upd, param, out, saved, tied=-1):
        self.ops.append((name, kind, fwd, bwd, upd, int(param), int(out),
                         int(saved), tied))

    def time(self, op, t, tp, mbs, fwd, bwd, upd):
        if t == self.reftype and tp == 1 and mbs == self.mbs:
            return  # the reference point lives in the operator itself
        self.times.append((op, self.type_index(t), tp, mbs, fwd, bwd, upd))

    def emit(self, f):
        v = self.name.replace("-", "_").replace(".", "_")
        f.write("/* %s: %s */\n" % (self.name, self.source))
        f.write("static const char *const %s_types[] = {%s};\n" % (
            v, ", ".join(cstr(t) for t in self.types) or "NULL"))
        f.write("static const struct ppi_bop %s_ops[] = {\n" % v)
        for o in self.ops:
            f.write("    {%s, %s, %s, %s, %s, %d, %d, %d, %d},\n" % (
                cstr(o[0]), cstr(o[1]), num(o[2]), num(o[3]), num(o[4]),
                o[5], o[6], o[7], o[8]))
        f.write("};\n")
        f.write("static const struct ppi_btime %s_times[] = {\n" % v)
        for t in self.times:
            f.write("    {%d, %d, %d, %d, %s, %s, %s},\n" % (
                t[0], t[1], t[2], t[3], num(t[4]), num(t[5]), num(t[6])))
        if not self.times:
            f.write("    {0, 0, 0, 0, 0, 0, 0},\n")
        f.write("};\n")
        f.write("static const struct ppi_btps %s_tps[] = {\n" % v)
        for t in self.tps:
            f.write("    {%d, %d, %d, %d, %d},\n" % t)
        if not self.tps:
            f.write("    {0, 0, 0, 0, 0},\n")
        f.write("};\n")
        f.write("static const struct ppi_bhyper %s_hyper[] = {\n" % v)
        for k, x in self.hyper:
            f.write("    {%s, %s},\n" % (cstr(k), num(x)))
        if not self.hyper:
            f.write("    {NULL, 0},\n")
        f.write("};\n")
        f.write("static const struct ppi_bmodel %s_model = {\n" % v)
        f.write("    %s,\n    %s,\n    %s,\n    %s, %d, %s,\n" % (
            cstr(self.name), cstr(self.about), cstr(self.source),
            cstr(self.reftype), self.mbs, self.dtype))
        f.write("    %s_types, %d, %s_ops, %d, %s_times, %d, %s_tps, %d,\n"
                "    %s_hyper, %d, %d, %d, %d};\n\n" % (
                    v, len(self.types), v, len(self.ops), v, len(self.times),
                    v, len(self.tps), v, len(self.hyper), self.loss[0],
                    self.loss[1], self.pipe_extra))
        return v


# AMP's repository, where the model code below is read from.
AMP_MEGATRON = ("MccRee177/AMP @ 72eeea4, DeepSpeed/DeepSpeedExamples/"
                "Megatron-LM-v1.1.5-3D_parallelism")


def gpt2_sizes(tp, S, H, V, A):
    """Per-entry (param, out, saved) bytes of AMP's GPT-2 pipe model
    (megatron/model/gpt2_model.py, GPT2ModelPipe: entry 0 embedding,
    1 transpose, 2..25 transformer layers, 26 transpose, 27 final
    LayerNorm, 28 logits tied to entry 0, 29 fp16_to_fp32) on one of tp
    tensor-parallel ranks, one sample, fp16 (2 bytes) unless stated.

    Parameters (Megatron's splits, mpu/layers.py): the word table is
    VocabParallelEmbedding (V*H/tp), positions whole (S*H); a layer is
    (12H^2 + 7H)/tp + 6H (QKV and fc1 column-parallel with their biases,
    proj and fc2 row-parallel with whole biases, two LayerNorms of 2H).

    Saved activations of a layer, bytes: Korthikanti et al. 2022, eq. 2
    (tensor parallel, no sequence parallel): s*h*(10 + 24/t) +
    5*a*s^2/t, plus 2*a*s^2/t for the softmax's input.  AMP's runs do
    not pass --scaled-upper-triang-masked-softmax-fusion nor
    --scaled-masked-softmax-fusion (launch script ds_pretrain_gpt2_pipe.sh),
    so FusedScaleMaskSoftmax takes its unfused branch
    (megatron/model/fused_softmax.py:115-122: mask_func then
    torch.nn.Softmax); the fused kernels would keep only their output
    (fused_softmax.py:32, :60).  AMP's environment is PyTorch 1.7.1
    (README.md: pip install torch==1.7.1+cu110), whose softmax autograd
    keeps its input as well as its output (pytorch/pytorch issue 49600;
    the input was dropped by PR 65242, released in 1.11).  The masked
    scores are that input (gpt2_attention_mask_func fills them in place,
    gpt2_model.py:41-43), a separate buffer from the probabilities.

    The head: the logits (entry 28, parallel_lm_logits) keep their fp16
    input, 2*s*h; fp16_to_fp32 (entry 29) writes s*V/tp fp32 logits,
    which the loss (CrossEntropy, gpt2_model.py:54, .float() of an fp32
    tensor is the same tensor) turns into the softmax in place and keeps
    for backward (mpu/cross_entropy.py:96, save_for_backward(exp_logits))
    while DeepSpeed keeps the same tensor as the stage output
    (deepspeed/runtime/pipe/engine.py, _exec_forward_pass): 4*s*V/tp
    saved.  The fp16 logits, 2*s*V/tp, have no reference after the
    conversion (a dtype copy saves nothing for backward): a transient
    peak, not a saved tensor."""
    lay_param = (12 * H * H + 7 * H) // tp + 6 * H
    lay_saved = S * H * 10 + S * H * 24 // tp + 7 * A * S * S // tp
    out = {}
    for i in range(30):
        param, o, saved = 0, 2 * S * H, 0
        if i == 0:
            # Word table split over tp, positions whole; the embedding
            # dropout keeps its 1-byte mask (Korthikanti's s*b*h).
            param, saved = 2 * (V * H // tp + S * H), S * H
        elif 2 <= i <= 25:
            param, saved = 2 * lay_param, lay_saved
        elif i == 27:
            param, saved = 2 * 2 * H, 2 * S * H  # LayerNorm keeps its input
        elif i == 28:
            param, o, saved = 2 * V * H // tp, 2 * S * V // tp, 2 * S * H
        elif i == 29:
            o, saved = 4 * S * V // tp, 4 * S * V // tp
        out[i] = (param, o, saved)
    return out


# Megatron's tensor-parallel all-reduces of one (s, h) activation per
# GPT-2 pipeline entry, forward and backward (AMP's Megatron-LM v1.1.5,
# megatron/mpu/layers.py): VocabParallelEmbedding reduces its output
# forward (line 175); a transformer layer's two ColumnParallelLinears
# (QKV, fc1) all-reduce their input gradient backward (copy_to_model_
# parallel_region, line 261) and its two RowParallelLinears (proj, fc2)
# their output forward (line 374); the logits all-reduce their input
# gradient backward (model/language_model.py:32).  A layer entry runs its
# forward twice (gpt2() below), so 4 forward.
GPT2_AR = {"embedding": (1, 0), "layer": (4, 2), "logits": (0, 1)}


def gpt2_ar_bytes(tp, S, H):
    """Bytes a rank sends in a ring all-reduce of one (s, h) fp16
    activation over tp ranks: 2 (t - 1) / t of it."""
    return 2.0 * (tp - 1) / tp * 2 * S * H


def gpt2_entry(i):
    return ("embedding" if i == 0 else "layer" if 2 <= i <= 25
            else "logits" if i == 28 else "other")


def gpt2_allreduce_ms(rows):
    """Time of one tensor-parallel all-reduce of an (s, h) fp16 activation
    (one sample), per (GPU, tp), from the profiles themselves: a layer
    entry at tp t is two forwards of compute c_1 / t (the tp-1 entry is
    two forwards of c_1; Megatron splits every GEMM t ways) plus four
    all-reduces, so one all-reduce is (p_t - p_1 / t) / 4, the mean over
    the 24 layers.  It assumes the split compute is exactly 1/t of the
    whole (the LayerNorms and residual adds Megatron keeps whole are
    about 2% of a layer's bytes, docs/COST_MODEL.md "Roofline")."""
    out = {}
    for gpu in ("P3", "G4"):
        out[gpu, 1] = 0.0
        for tp in (2, 4):
            d = [(ms(r["fwd_s_%s_mp%d" % (gpu, tp)]) -
                  ms(r["fwd_s_%s_mp1" % gpu]) / tp) / 4
                 for r in rows if gpt2_entry(int(r["idx"])) == "layer"]
            out[gpu, tp] = max(0.0, sum(d) / len(d))
    return out


def gpt2_allreduce_link(ar, S, H):
    """The bandwidth (GB/s) of the tensor-parallel all-reduce inside a
    node, per GPU, as AMP's profiles measured it.  An all-reduce of n
    bytes over a ring of t ranks takes alpha + 2 (t - 1) / t * n / B
    (docs/COST_MODEL.md, "The parts"); the profiles time the same (s, h)
    activation at t = 2 and t = 4 (gpt2_allreduce_ms), two equations
    whose difference, (1.5 - 1) n / B, gives B and leaves alpha, the part
    that does not grow with the bytes.  On the T4s of a g4dn.12xlarge it
    is 4.27 GB/s (34 Gb/s; alpha 0.32 ms), on the V100s of a p3.8xlarge
    16.4 GB/s (131 Gb/s; alpha 0.69 ms): below the 50 and 170 Gb/s that
    AMP's cluster description asserts for those links
    (data/amp/clusters.json), which are not measurements.  Only this
    bandwidth says how an all-reduce of a larger micro-batch grows."""
    out = {}
    for gpu in ("P3", "G4"):
        diff = ar[gpu, 4] - ar[gpu, 2]
        assert diff > 0, gpu
        out[gpu] = (gpt2_ar_bytes(4, S, H) - gpt2_ar_bytes(2, S, H)) / (
            diff * 1e6)
        assert out[gpu] > 0 and ar[gpu, 2] > gpt2_ar_bytes(2, S, H) / (
            out[gpu] * 1e6), gpu
    return out


def gpt2_loss_bytes(S, V):
    """Device-memory bytes of the loss's forward and backward for one
    sample at tp 1: DeepSpeed's loss_fn on the last stage (CrossEntropy,
    gpt2_model.py:46-57, calling mpu/cross_entropy.py:28-111), which is
    not a pipeline entry, so AMP's profile never timed it.  It is
    memory-bound on the S*V fp32 logits (N elements): forward max (read
    4N), sub_ (read and write, 8N), exp out= (8N), sum (4N), div_ (8N):
    32 N bytes (lines 32, 38, 72-73, 83); backward the mul_ by the
    output gradient, 8 N (line 109).  The index updates and the tp
    all-reduces of S-element vectors are negligible; the softmax it keeps
    is the logits entry 29 counts (in place).  The model's loss
    (pp_model_builder_set_loss) is priced by the roofline."""
    n = S * V
    return 32 * n, 8 * n


def gpt2_pipe_extra(S):
    """Bytes every forward transfer of AMP's GPT-2 pipe carries beside the
    hidden states: each layer entry returns (hidden, attention_mask)
    (megatron/model/transformer.py:505-513 of AMP's Megatron-LM-v1.1.5-
    3D_parallelism); the mask is get_ltor_masks_and_position_ids's
    1 x 1 x S x S (megatron/utils.py:154-161, reset_attention_mask off),
    whatever the micro-batch, and DeepSpeed sends it cast to half
    (AMP's fork deepspeed/runtime/pipe/engine.py:808-813; DeepSpeed
    38327e0 the same for GPT2ModelPipe, pipe/engine.py:230, 1025-1031):
    2 S^2 bytes.  The gradient goes back without it (engine.py:855-859)."""
    return 2 * S * S


def gpt2_kb(i, kind):
    """AMP's backward factor, corrected where the entry's backward is known:
    a layer entry is two forwards, so 1 x the entry (gpt2() below);
    the transposes (entries 1, 26: x.transpose(0, 1).contiguous()) and
    the fp16-to-fp32 cast (29) are copies whose backward is the same
    copy of the gradient (torch's autograd: transpose's backward
    transposes, to()'s converts back), so 1; everything else AMP's 2."""
    if kind == "transformer_layer" or i in (1, 26, 29):
        return 1
    return 2


def gpt2_backward(i, f, kb, a):
    """Backward of GPT-2 entry i profiled at forward f (ms) at a tp whose
    all-reduce takes a (ms): AMP's rule (backward = kb x forward, kb = 2,
    1 for a layer entry whose profile is two forwards) applies to the
    compute only; the all-reduces are counted as Megatron runs them
    (GPT2_AR), so an entry that reduces forward does not pay twice in
    backward, and the logits pay their backward reduction.  At tp 1
    (a = 0) it is AMP's rule unchanged."""
    kf, kbw = GPT2_AR.get(gpt2_entry(i), (0, 0))
    compute = max(0.0, f - kf * a)
    return kb * compute + kbw * a


def gpt2():
    rows = list(csv.DictReader(open(os.path.join(DATA, "amp", "gpt2_layers.csv"))))
    S, H, V, A, L = 1024, 1024, 52256, 16, 24
    m = Model("gpt2-amp", "GPT-2 (24 layers, hidden 1024, seq 1024) as AMP "
              "profiled it: 30 pipeline entries, V100 and T4 at tp 1/2/4",
              "AMP profiles, data/amp/gpt2_layers.csv (MccRee177/AMP @ 72eeea4)",
              "V100", "fp16")
    names = {0: "embedding", 1: "transpose_in", 26: "transpose_out",
             27: "final_layernorm", 28: "logits", 29: "to_fp32"}
    sizes = {tp: gpt2_sizes(tp, S, H, V, A) for tp in (1, 2, 4)}
    ar = gpt2_allreduce_ms(rows)
    link = gpt2_allreduce_link(ar, S, H)
    for r in rows:
        i = int(r["idx"])
        name = names.get(i, "layer%d" % (i - 1))
        fwd = ms(r["fwd_s_P3_mp1"])
        param, out, saved = sizes[1][i]
        # The exact counts agree with the CSV's (a check of the formulas).
        act = int(r["amp_act_out_elems_per_sample_mp1"])
        assert out == act * (4 if i == 29 else 2), i
        if i != 28:
            assert param == 2 * int(r["exact_param_elems_mp1"]), i
        tied = 0 if i == 28 else -1  # the output projection is the word table
        kb = gpt2_kb(i, r["amp_kind"])
        m.op(name, r["amp_kind"], fwd, kb * fwd, 0, param, out, saved, tied)
        for gpu, t in (("P3", "V100"), ("G4", "T4")):
            for tp in (1, 2, 4):
                f = ms(r["fwd_s_%s_mp%d" % (gpu, tp)])
                a = ar[gpu, tp]
                m.time(i, t, tp, 1, f, gpt2_backward(i, f, kb, a), -1)
                if tp == 1 or gpt2_entry(i) not in GPT2_AR:
                    continue
                # Larger micro-batches at this tp: the compute and the
                # all-reduces' bytes grow with the micro-batch, the rest
                # of each all-reduce (its fixed cost) does not; the
                # bytes go at the bandwidth the profiles measured.
                kf, kbw = GPT2_AR[gpt2_entry(i)]
                beta = gpt2_ar_bytes(tp, S, H) / (link[gpu] * 1e6)
                c = max(0.0, f - kf * a)
                for mb in (2, 4, 8, 16, 32):
                    one = a - beta + mb * beta
                    m.time(i, t, tp, mb, mb * c + kf * one,
                           kb * mb * c + kbw * one, -1)
    for tp in (2, 4):
        for i in range(len(rows)):
            m.tps.append((i,) + (tp,) + sizes[tp][i])
    m.hyper = [("layers", L), ("hidden", H), ("seq", S), ("vocab", V),
               ("heads", A)]
    m.loss = gpt2_loss_bytes(S, V)
    m.pipe_extra = gpt2_pipe_extra(S)
    return m


def transgan_entries(bottom, dim, window, latent):
    """(role, tokens, channels, window tokens) of each of the 56 entries
    of AMP's TransGAN generator pipe (megatron/model/trans_gan_gen.py,
    ParallelTransGANGeneratorPipe, lines 797-1110) with AMP's arguments
    (launch script ds_pretrain_transgan_pipe.sh: --bottom_width 9, --gf_dim
    1024 (NHIDDEN), --g_window_size 18, --g_depth 12,0,0,0,0,12,
    --latent_dim 512, --g_norm pn; num_heads 4 and drop rates 0 are the
    constructor's defaults, line 762-763: pretrain_transgan.py:49 passes
    only args and topology, so the script's --num-attention-heads 1,
    which data/amp/clusters.json records, is Megatron's flag and does
    not reach the generator).  tokens x channels is the
    entry's output per sample; window is the tokens one attention spans
    (a stage-1 block attends over all 81 tokens, window_size =
    bottom_width; a stage-6 block over 18 x 18 windows)."""
    b = bottom
    e = [("l1_linear", b * b, dim, 0), ("other", b * b, dim, 0),
         ("other", b * b, dim, 0)]
    e += [("block_stage1", b * b, dim, b * b)] * 12
    e += [("other", b * b, dim, 0)]                     # interpolate x1
    e += [("other", (2 * b) ** 2, dim, 0)] * 3          # upsample, pos, id
    e += [("other", (4 * b) ** 2, dim, 0)] * 2          # upsample, pos
    e += [("other", (8 * b) ** 2, dim // 4, 0)] * 8     # pixel shuffle .. reverse
    e += [("other", (16 * b) ** 2, dim // 16, 0)] * 7
    e += [("other", (32 * b) ** 2, dim // 64, 0)] * 5
    e += [("block_stage6", (32 * b) ** 2, dim // 64, window * window)] * 12
    e += [("other", (32 * b) ** 2, dim // 64, 0)] * 2   # view, reverse
    e += [("conv", (32 * b) ** 2, 3, 0)]                # Conv2d(16, 3, 1)
    return e


def transgan_block_saved(N, C, w, heads, tp):
    """Bytes a ParallelTransformerBlock (trans_gan_gen.py:378-420) keeps
    for backward, one sample, fp16, on one of tp ranks, under PyTorch
    1.7.1 (AMP's README) with dropout and drop-path rates 0 (identity,
    nothing kept).  N tokens of C channels, attention over windows of w
    tokens, P = heads * N * w attention probabilities:

      PixelNorm x2 (line 57): its input, 2NC, and rsqrt(mean), 2N  -> 4NC + 4N
      noise (line 248): the fp32 randn of [B, N, 1], 4N            -> 4N
      qkv (ColumnParallelLinear): its input, 2NC                   -> 2NC
      q @ k^T (line 258): contiguous copies of q and k, 2NC/t each -> 4NC/t
      softmax (line 265): input and output (PyTorch < 1.11)        -> 4P
      attn @ v (line 267): v's copy, 2NC/t (attn is the output)    -> 2NC/t
      proj (RowParallelLinear): its input, 2NC/t                   -> 2NC/t
      fc1 (ColumnParallelLinear): its input, 2NC                   -> 2NC
      gelu (line 66, x*0.5*(1+erf(x/sqrt 2))): erf's input and the
        two factors of the product, 8NC/t each                    -> 24NC/t
      fc2 (RowParallelLinear): its input, 8NC/t                    -> 8NC/t

    Total 8NC + 40NC/t + 8N + 4P.  The attention keeps every head on
    every rank (qkv is reshaped to num_heads heads of C/tp/num_heads,
    line 253-255), so 4P does not divide by tp.  The per-layer index of
    the relative position bias (a buffer, w^4 int64) is not per sample
    and is left out."""
    return 8 * N * C + 40 * N * C // tp + 8 * N + 4 * heads * N * w


def transgan():
    rows = list(csv.DictReader(open(os.path.join(DATA, "amp", "transgan_layers.csv"))))
    m = Model("transgan-amp", "TransGAN generator (depth 12,0,0,0,0,12; dim "
              "1024) as AMP profiled it: 56 pipeline entries, V100 tp 1/2/4",
              "AMP profiles, data/amp/transgan_layers.csv (MccRee177/AMP @ 72eeea4)",
              "V100", "fp16")
    latent, bottom, dim, window, heads = 512, 9, 1024, 18, 4
    ents = transgan_entries(bottom, dim, window, latent)
    assert len(ents) == len(rows)
    nblock = {}

    def sizes(i, tp):
        role, N, C, w = ents[i]
        r = rows[i]
        out = 2 * N * C
        if role.startswith("block"):
            assert r["role"] == role and int(r["tokens"]) == N
            assert int(r["block_dim"]) == C
            # AMP's 12*dim^2 (its all-reduce volume), split over tp.
            param = 2 * int(r["amp_param_elems_mp1"]) // tp
            return param, out, transgan_block_saved(N, C, w, heads, tp)
        if role == "l1_linear":
            # nn.Linear(latent, bottom^2 * dim) with bias, not split by
            # tp (a plain torch module, line 797): it keeps its input z.
            return 2 * (latent * N * C + N * C), out, 2 * latent
        if role == "conv":
            # nn.Conv2d(dim // 64, 3, 1) keeps its input (line 1104).
            return 0, out, 2 * (32 * bottom) ** 2 * (dim // 64)
        # Views, permutes, nearest/pixel-shuffle upsampling and the
        # position-embedding add keep nothing for backward.
        return 0, out, 0

    for r in rows:
        i = int(r["idx"])
        role = ents[i][0]
        fwd = ms(r["fwd_s_P3_mp1"])
        if role.startswith("block"):
            k = nblock[role] = nblock.get(role, 0) + 1
            name, kind = "%s_%d" % (role, k), role
        elif role == "l1_linear":
            name, kind = "l1_linear", "linear"
        else:
            name, kind = "other%d" % i, "other"
        m.op(name, kind, fwd, 2 * fwd, 0, *sizes(i, 1))
        for tp in (1, 2, 4):
            f = ms(r["fwd_s_P3_mp%d" % tp])
            m.time(i, "V100", tp, 1, f, 2 * f, -1)
    for tp in (2, 4):
        for i in range(len(rows)):
            m.tps.append((i, tp) + sizes(i, tp))
    m.hyper = [("gf_dim", dim), ("bottom_width", bottom), ("latent_dim", latent),
               ("window", window), ("heads", heads)]
    return m


SAILOR = [
    ("opt-350", "OPT-350", "V100-16", "OPT-350M"),
    ("gpt-neo-2.7", "GPT-Neo-2.7", "V100-16", "GPT-Neo 2.7B"),
    ("opt-30", "OPT-30", "A100-40", "OPT-30B"),
    ("llama-3-8", "LLAMA-3-8", "GH-96", "Llama-3 8B"),
]


# The simulator's GH-96 profiles (scripts/extract_sailor_simulator.py).
SIM_GH96 = os.path.join(DATA, "sailor", "simulator", "profiles_tmp_gh96.json")


def sailor_profiles(sname):
    """GPU type -> profile of one model: profiles/<model>/<GPU>, except
    GH-96 where the simulator's file has the model (profiles/GPT-Neo-2.7/
    GH-96 is a 26-layer OPT-350-sized file; profiles/OPT-350/GH-96's tp-4
    times at mbs 1, 2, 4 differ from the ones Sailor validated with;
    data/sailor/README.md)."""
    pdir = os.path.join(DATA, "sailor", "profiles", sname)
    sim = json.load(open(SIM_GH96), parse_float=Decimal)
    prof = {g: json.load(open(os.path.join(pdir, g, "profile.json")),
                         parse_float=Decimal)
            for g in os.listdir(pdir)}
    if sname in sim:
        prof["GH-96"] = sim[sname]["GH-96"]
    return {g: prof[g] for g in sorted(prof)}


def sailor(bname, sname, ref, title):
    info = json.load(open(os.path.join(DATA, "sailor", "llm_info.json")))[sname]
    prof = sailor_profiles(sname)
    gpus = list(prof)
    L = len(info["1"])
    m = Model(bname, "%s from Sailor's measured profiles: %d entries on %s"
              % (title, L, ", ".join(gpus)),
              "Sailor profiles, data/sailor (eth-easl/sailor @ cf2c8e3)", ref,
              "fp32")
    i1 = info["1"]
    layer_params = i1["1"]["params_floats"]
    params = {tp: [info[tp][str(l)]["params_floats"] for l in range(L)]
              for tp in info}

    def share(update_s, tp):
        tot = sum(params[tp])
        return [float(Decimal(update_s) * 1000 * p / tot) for p in params[tp]]

    def sizes(e):
        # Sailor's bytes as measured: fp32, 4 bytes per float.
        return e["params_bytes"], e["act_output_bytes"], e["act_mem_bytes"]

    ref_pt = prof[ref]["1"]["1"]
    upd = share(ref_pt["0"][2], "1")
    nlayer = 0
    for l in range(L):
        e = i1[str(l)]
        if l == 0:
            name, kind = "embedding", "embedding"
        elif l == L - 1:
            name, kind = "head", "head"
        elif e["params_floats"] == layer_params:
            nlayer += 1
            name, kind = "layer%d" % nlayer, "transformer_layer"
        else:
            name, kind = "extra%d" % l, "other"
        f, b = ms(ref_pt[str(l)][0]), ms(ref_pt[str(l)][1])
        m.op(name, kind, f, b, upd[l], *sizes(e))
    for g in gpus:
        for mbs in sorted(prof[g], key=int):
            for tp in sorted(prof[g][mbs], key=int):
                pts = prof[g][mbs][tp]
                if len(pts) != L:
                    sys.exit("%s/%s: %d layers, expected %d" % (sname, g, len(pts), L))
                u = share(pts["0"][2], tp if tp in params else "1")
                for l in range(L):
                    p = pts[str(l)]
                    m.time(l, g, int(tp), int(mbs), ms(p[0]), ms(p[1]), u[l])
    for tp in sorted(info, key=int):
        if tp == "1":
            continue
        for l in range(L):
            m.tps.append((l, int(tp)) + sizes(info[tp][str(l)]))
    m.hyper = [("transformer_layers", nlayer)]
    return m


def main():
    models = [gpt2(), transgan()] + [sailor(*s) for s in SAILOR]
    with open(OUT, "w") as f:
        f.write("/* SPDX-License-Identifier: MIT */\n/*\n** GENERATED by "
                "scripts/gen_builtin_models.py from data/; do not edit.\n"
                "** Sources and conventions: that script's docstring and\n"
                "** docs/FORMATS.md, \"Built-in models\".\n*/\n")
        f.write('#include "model/model_builtin.h"\n\n#include <stddef.h>\n\n')
        f.write("/* clang-format off */\n")
        names = [mo.emit(f) for mo in models]
        f.write("const struct ppi_bmodel *const ppi_builtin_models[] = {\n")
        for n in names:
            f.write("    &%s_model,\n" % n)
        f.write("};\nconst int ppi_nbuiltin_models = %d;\n" % len(names))
        f.write("/* clang-format on */\n")


if __name__ == "__main__":
    main()
