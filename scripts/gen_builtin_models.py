#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generate src/model/model_builtin_data.c from the profiles in data/.

Run from the repository root:  python3 scripts/gen_builtin_models.py
The output is committed; CI does not need Python.  tests/test_builtin.c
checks values of the generated tables against the CSV and JSON sources.

Conventions (docs/FORMATS.md, "Built-in models"):
- times in ms; bytes as trained in fp16/bf16 (2 bytes per parameter or
  activation element), except where a tensor is fp32 on purpose;
- AMP (data/amp, MccRee177/AMP @ 72eeea4): forward times are the
  measured entries at micro-batch 1; backward = 2 x forward, AMP's own
  convention (data/amp/COST_MODEL.md);
- Sailor (data/sailor, eth-easl/sailor @ cf2c8e3): forward and backward
  are measured; Sailor's update_s is the same value on every layer of a
  profile, i.e. the whole model's optimizer step, so it is shared out
  over layers in proportion to their parameters.
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


class Model:
    def __init__(self, name, about, source, reftype, mbs=1):
        self.name, self.about, self.source = name, about, source
        self.reftype, self.mbs = reftype, mbs
        self.types, self.ops, self.times, self.tps, self.hyper = [], [], [], [], []

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
        f.write("    %s,\n    %s,\n    %s,\n    %s, %d,\n" % (
            cstr(self.name), cstr(self.about), cstr(self.source),
            cstr(self.reftype), self.mbs))
        f.write("    %s_types, %d, %s_ops, %d, %s_times, %d, %s_tps, %d,\n"
                "    %s_hyper, %d};\n\n" % (
                    v, len(self.types), v, len(self.ops), v, len(self.times),
                    v, len(self.tps), v, len(self.hyper)))
        return v


def gpt2():
    rows = list(csv.DictReader(open(os.path.join(DATA, "amp", "gpt2_layers.csv"))))
    S, H, V, A, L = 1024, 1024, 52256, 16, 24
    m = Model("gpt2-amp", "GPT-2 (24 layers, hidden 1024, seq 1024) as AMP "
              "profiled it: 30 pipeline entries, V100 and T4 at tp 1/2/4",
              "AMP profiles, data/amp/gpt2_layers.csv (MccRee177/AMP @ 72eeea4)",
              "V100")
    # Megatron's activation memory of one transformer layer without
    # parallelism, bytes: s*b*h*(34 + 5*a*s/h) (Korthikanti et al. 2022).
    layer_saved = S * H * (34 + 5 * A * S // H)
    names = {0: "embedding", 1: "transpose_in", 26: "transpose_out",
             27: "final_layernorm", 28: "logits", 29: "to_fp32"}
    for r in rows:
        i = int(r["idx"])
        name = names.get(i, "layer%d" % (i - 1))
        fwd = ms(r["fwd_s_P3_mp1"])
        act = int(r["amp_act_out_elems_per_sample_mp1"])
        out = act * (4 if i == 29 else 2)
        param = 2 * int(r["exact_param_elems_mp1"])
        tied = -1
        if i == 28:  # the output projection is the word embedding
            param, tied = 2 * V * H, 0
        saved = {0: S * H, 1: 0, 26: 0, 27: 2 * S * H, 28: 2 * S * H,
                 29: 4 * S * V}.get(i, layer_saved)
        m.op(name, r["amp_kind"], fwd, 2 * fwd, 0, param, out, saved, tied)
        for gpu, t in (("P3", "V100"), ("G4", "T4")):
            for tp in (1, 2, 4):
                f = ms(r["fwd_s_%s_mp%d" % (gpu, tp)])
                m.time(i, t, tp, 1, f, 2 * f, -1)
    m.hyper = [("layers", L), ("hidden", H), ("seq", S), ("vocab", V),
               ("heads", A)]
    return m


def transgan():
    rows = list(csv.DictReader(open(os.path.join(DATA, "amp", "transgan_layers.csv"))))
    m = Model("transgan-amp", "TransGAN generator (depth 12,0,0,0,0,12; dim "
              "1024) as AMP profiled it: 56 pipeline entries, V100 tp 1/2/4",
              "AMP profiles, data/amp/transgan_layers.csv (MccRee177/AMP @ 72eeea4)",
              "V100")
    latent, bottom, dim = 512, 9, 1024
    last_act = 82944
    nblock = {}
    for r in rows:
        i = int(r["idx"])
        role = r["role"]
        fwd = ms(r["fwd_s_P3_mp1"])
        if role.startswith("block"):
            k = nblock[role] = nblock.get(role, 0) + 1
            name = "%s_%d" % (role, k)
            kind = role
            act = int(r["true_block_act_elems_per_sample"])
            bd, tok = int(r["block_dim"]), int(r["tokens"])
            param = 2 * int(r["amp_param_elems_mp1"])  # AMP's 12*dim^2
            # Linear-in-sequence activation memory (34*s*h bytes): the
            # high-resolution stage cannot hold a full 82944^2 attention.
            saved = 34 * bd * tok
        elif role == "l1_linear":
            name, kind = "l1_linear", "linear"
            act = int(r["amp_act_elems_per_sample"])
            # Linear(latent, bottom^2 * dim) with bias: TransGAN's input.
            param = 2 * (latent * bottom * bottom * dim + bottom * bottom * dim)
            saved = 2 * latent
        else:
            name, kind = "other%d" % i, "other"
            act = last_act if i > 40 else int(r["amp_act_elems_per_sample"])
            param, saved = 0, 0
        last_act = act
        out = 2 * act
        if not role.startswith("block") and role != "l1_linear":
            saved = out
        m.op(name, kind, fwd, 2 * fwd, 0, param, out, saved)
        for tp in (1, 2, 4):
            f = ms(r["fwd_s_P3_mp%d" % tp])
            m.time(i, "V100", tp, 1, f, 2 * f, -1)
    m.hyper = [("gf_dim", dim), ("bottom_width", bottom), ("latent_dim", latent)]
    return m


SAILOR = [
    ("opt-350", "OPT-350", "V100-16", "OPT-350M"),
    ("gpt-neo-2.7", "GPT-Neo-2.7", "V100-16", "GPT-Neo 2.7B"),
    ("opt-30", "OPT-30", "A100-40", "OPT-30B"),
    ("llama-3-8", "LLAMA-3-8", "GH-96", "Llama-3 8B"),
]


def sailor(bname, sname, ref, title):
    info = json.load(open(os.path.join(DATA, "sailor", "llm_info.json")))[sname]
    pdir = os.path.join(DATA, "sailor", "profiles", sname)
    gpus = sorted(g for g in os.listdir(pdir)
                  if not (sname == "GPT-Neo-2.7" and g == "GH-96"))
    L = len(info["1"])
    m = Model(bname, "%s from Sailor's measured profiles: %d entries on %s"
              % (title, L, ", ".join(gpus)),
              "Sailor profiles, data/sailor (eth-easl/sailor @ cf2c8e3)", ref)
    i1 = info["1"]
    layer_params = i1["1"]["params_floats"]
    params = {tp: [info[tp][str(l)]["params_floats"] for l in range(L)]
              for tp in info}
    prof = {g: json.load(open(os.path.join(pdir, g, "profile.json")),
                     parse_float=Decimal) for g in gpus}

    def share(update_s, tp):
        tot = sum(params[tp])
        return [float(Decimal(update_s) * 1000 * p / tot) for p in params[tp]]

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
        m.op(name, kind, f, b, upd[l], 2 * e["params_floats"],
             2 * e["act_output_floats"], 2 * e["act_mem_floats"])
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
            e = info[tp][str(l)]
            m.tps.append((l, int(tp), 2 * e["params_floats"],
                          2 * e["act_output_floats"], 2 * e["act_mem_floats"]))
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
