#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Feed parplan's Megatron exports to Megatron-LM's own code.

    MEGATRON=/path/to/Megatron-LM python3 scripts/check_megatron.py
        [--bin build/parplan] [--plans 60] [--seed 1] [--out DIR]

Needs a Megatron-LM source tree (its ``megatron`` package; nothing is
installed) and the torch it needs, on a machine with a CUDA GPU
(``validate_args`` reads the GPU's architecture,
megatron/training/arguments.py:1453-1454 at d98e8a64).  Not part of the
test suite: CI has neither.  tests/test_megatron_rules.c encodes the same
rules, with file and line, for every build.

For random plans of ``gpt2-amp`` (24 layers, hidden 1024, 16 heads,
sequence 1024) on a 4 x 8 H100 cluster (random stage cuts, 1 to 8 stages,
tp 1, 2 or 4, data-parallel degree filling up to 32 ranks, 1 or 2 samples
per micro-batch, sometimes two rounds of the stages round-robin, which is
Megatron's interleaved pipeline), plus the plans ``parplan plan`` finds,
it runs ``parplan export --to megatron``, then in one Python process with
Megatron imported, for each plan:

- the environment that ``megatron_env.sh`` exports, WORLD_SIZE = the plan's
  device count;
- ``parse_args()`` on ``megatron_args.txt`` split as the shell splits
  ``$(cat megatron_args.txt)``, with the model's sizes added
  (``--hidden-size 1024 --num-attention-heads 16 --seq-length 1024
  --max-position-embeddings 1024``);
- ``validate_args(args)``;
- ``core_transformer_config_from_args(args)``, whose TransformerConfig
  parses and validates the layout (PipelineParallelLayerLayout).

Two controls, the first plan's arguments with its layout in quotes (as
parplan wrote it before) and with ``--num-layers`` one too many, must be
refused, or the check itself is broken.

A plan passes when Megatron accepts it and its parsed layout has the
plan's stages with their decoder layers, its pp, tp and data-parallel
degree and micro-batch are the plan's; or when Megatron refuses it and
parplan's export warned that Megatron would ("will refuse", "Megatron
needs").  It prints one line per failure and a summary, writes
``megatron_check.json`` into --out, and exits 1 on any failure.
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CLUSTER = "nvswitch:4x8,gpu=H100"
MODEL = "gpt2-amp"
SIZES = ["--hidden-size", "1024", "--num-attention-heads", "16",
         "--seq-length", "1024", "--max-position-embeddings", "1024"]
REFUSE = ("will refuse", "Megatron needs", "refuses")


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    return r.returncode, r.stdout, r.stderr


def random_plan(rng, nops, ndev):
    """A plan JSON of gpt2-amp: contiguous cuts, Megatron's rank order."""
    while True:
        S = rng.randint(1, 8)
        tp = rng.choice((1, 2, 4))
        rounds = 2 if S % 2 == 0 and S >= 4 and rng.random() < 0.6 else 1
        P = S // rounds
        dp_max = ndev // (P * tp)
        if dp_max >= 1:
            break
    dp = rng.randint(1, min(dp_max, 4))
    mbs = rng.choice((1, 2))
    M = rng.choice((P, 2 * P, 4, 8)) if rounds > 1 else rng.randint(1, 8)
    cuts = sorted(rng.sample(range(1, nops), S - 1))
    bounds = [0] + cuts + [nops]
    stages = []
    for s in range(S):
        p = s % P
        reps = []
        for d in range(dp):
            # Megatron's order: tp fastest, then dp, then pp
            base = p * dp * tp + d * tp
            reps.append(["n%dg%d" % ((base + t) // 8, (base + t) % 8)
                         for t in range(tp)])
        stages.append({"ops": list(range(bounds[s], bounds[s + 1])),
                       "replicas": reps})
    return {"global_batch": mbs * dp * M, "micro_batch": mbs, "tp": tp,
            "schedule": "1f1b", "recompute": rng.random() < 0.3,
            "optimizer": "adam-mixed", "precision": "fp16",
            "engine": "megatron", "stages": stages}


CHILD = r'''
import json, os, sys
sys.path.insert(0, os.environ["MEGATRON"])
import torch
from megatron.training.arguments import parse_args, validate_args
from megatron.training.argument_utils import core_transformer_config_from_args
cases_path, out_path = sys.argv[1], sys.argv[2]
cases = json.load(open(cases_path))
out = []
base_env = dict(os.environ)
for c in cases:
    os.environ.clear()
    os.environ.update(base_env)
    os.environ.update(c["env"])
    os.environ["WORLD_SIZE"] = str(c["world"])
    os.environ["RANK"] = "0"
    sys.argv = ["pretrain_gpt.py"] + c["argv"]
    r = {"name": c["name"]}
    try:
        args = parse_args()
        validate_args(args)
        cfg = core_transformer_config_from_args(args)
        lay = cfg.pipeline_model_parallel_layout
        stages = None
        if lay is not None:
            stages = []
            # layout[pp_rank][vpp_stage] -> list of LayerType; flatten in
            # Megatron's order: virtual stage v of rank p is v * P + p
            P = len(lay.layout)
            V = len(lay.layout[0])
            for v in range(V):
                for p in range(P):
                    stages.append([t.name for t in lay.layout[p][v]])
        r.update(ok=True, tp=args.tensor_model_parallel_size,
                 pp=args.pipeline_model_parallel_size,
                 dp=args.data_parallel_size, mbs=args.micro_batch_size,
                 gbs=args.global_batch_size,
                 vpp=args.virtual_pipeline_model_parallel_size,
                 fp16=bool(args.fp16), stages=stages)
    except BaseException as e:
        r.update(ok=False, error="%s: %s" % (type(e).__name__, str(e)[:400]))
    out.append(r)
json.dump(out, open(out_path, "w"))
'''


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.environ.get("PARPLAN_BIN") or
                    os.path.join(ROOT, "build", "parplan"))
    ap.add_argument("--plans", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.environ.get("OUT") or ".")
    a = ap.parse_args(argv)
    meg = os.environ.get("MEGATRON")
    if not meg or not os.path.isdir(os.path.join(meg, "megatron")):
        sys.exit("check_megatron: set MEGATRON to a Megatron-LM source tree "
                 "(the folder holding megatron/)")
    rng = random.Random(a.seed)
    tmp = tempfile.mkdtemp(prefix="parplan-megatron-")
    mpath = os.path.join(tmp, "model.json")
    rc, out, err = run([a.bin, "model", MODEL, "-o", mpath])
    if rc != 0:
        sys.exit("check_megatron: %s model %s: %s" % (a.bin, MODEL, err))
    with open(mpath) as f:
        kinds = [o.get("kind") for o in json.load(f)["ops"]]
    nops = len(kinds)
    plans = [("random-%d" % i, random_plan(rng, nops, 32))
             for i in range(a.plans)]
    for gbs in (32, 64, 128):
        path = os.path.join(tmp, "found-%d.json" % gbs)
        rc, out, err = run([a.bin, "plan", "--model", MODEL, "--cluster",
                            CLUSTER, "--batch", str(gbs), "--time-limit",
                            "20", "-o", path])
        if rc == 0:
            with open(path) as f:
                plans.append(("plan-gbs%d" % gbs, json.load(f)))
    cases, meta = [], {}
    for name, plan in plans:
        ppath = os.path.join(tmp, name + ".json")
        with open(ppath, "w") as f:
            json.dump(plan, f)
        xdir = os.path.join(tmp, name)
        rc, out, err = run([a.bin, "export", ppath, "--model", MODEL,
                            "--cluster", CLUSTER, "--to", "megatron", "-o",
                            xdir])
        if rc != 0:
            meta[name] = {"export_error": err.strip()}
            continue
        with open(os.path.join(xdir, "megatron_args.txt")) as f:
            words = f.read().split()     # as $(cat megatron_args.txt)
        env = {}
        with open(os.path.join(xdir, "megatron_env.sh")) as f:
            for line in f:
                line = line.strip()
                if line.startswith("export ") and "=" in line:
                    k, v = line[7:].split("=", 1)
                    env[k] = v.strip("'\"")
        with open(ppath) as f:
            p = json.load(f)
        devs = {d for s in p["stages"] for r in s["replicas"]
                for d in (r if isinstance(r, list) else [r])}
        warned = [l for l in err.splitlines() if "warning:" in l]
        meta[name] = {"plan": p, "warned": warned,
                      "refusal_warned": any(k in w for w in warned
                                            for k in REFUSE),
                      "args": words, "env": env}
        cases.append({"name": name, "argv": words + SIZES, "env": env,
                      "world": len(devs)})
    # controls: exports as parplan wrote them before issue 20's fixes,
    # which Megatron must refuse, or this check could not fail
    first = next(c for c in cases if "--pipeline-model-parallel-layout"
                 in c["argv"])
    quoted = list(first["argv"])
    i = quoted.index("--pipeline-model-parallel-layout") + 1
    quoted[i] = '"%s"' % quoted[i]
    extra = list(first["argv"])
    i = extra.index("--num-layers") + 1
    extra[i] = str(int(extra[i]) + 1)
    controls = {"control-quoted-layout": quoted,
                "control-num-layers": extra}
    for name, argv in controls.items():
        cases.append({"name": name, "argv": argv, "env": first["env"],
                      "world": first["world"]})
    cpath = os.path.join(tmp, "cases.json")
    rpath = os.path.join(tmp, "results.json")
    with open(cpath, "w") as f:
        json.dump(cases, f)
    child = os.path.join(tmp, "child.py")
    with open(child, "w") as f:
        f.write(CHILD)
    r = subprocess.run([sys.executable, child, cpath, rpath],
                       env=dict(os.environ, MEGATRON=meg), cwd=tmp,
                       stdout=subprocess.DEVNULL)
    if r.returncode != 0:
        sys.exit("check_megatron: the Megatron process failed (exit %d)"
                 % r.returncode)
    with open(rpath) as f:
        results = {x["name"]: x for x in json.load(f)}
    fails, accepted, refused_ok = [], 0, 0
    for name in controls:
        if results[name]["ok"]:
            fails.append((name, "Megatron accepted a control it must "
                          "refuse: the check is broken"))
    for name, m in meta.items():
        if "export_error" in m:
            fails.append((name, "export failed: " + m["export_error"]))
            continue
        res = results[name]
        p = m["plan"]
        if not res["ok"]:
            if m["refusal_warned"]:
                refused_ok += 1
            else:
                fails.append((name, "Megatron refused an export parplan "
                              "did not warn about: " + res["error"]))
            continue
        accepted += 1
        S = len(p["stages"])
        R = len(p["stages"][0]["replicas"])
        want_t = []
        for s in p["stages"]:
            want_t.append(sum(1 for o in s["ops"]
                              if kinds[o] == "transformer_layer"))
        got_t = [sum(1 for t in st if t == "decoder") for st in
                 res["stages"]] if res["stages"] else None
        problems = []
        if res["tp"] != p["tp"]:
            problems.append("tp %s != %s" % (res["tp"], p["tp"]))
        if res["dp"] != R:
            problems.append("dp %s != %s" % (res["dp"], R))
        if res["mbs"] != p["micro_batch"]:
            problems.append("mbs %s != %s" % (res["mbs"], p["micro_batch"]))
        if res["gbs"] != p["global_batch"]:
            problems.append("gbs %s != %s" % (res["gbs"],
                                              p["global_batch"]))
        if got_t is not None and len(got_t) != S:
            problems.append("%d layout stages for %d" % (len(got_t), S))
        elif got_t is not None and name.startswith("random") and \
                got_t != want_t:
            problems.append("decoder layers per stage %s != %s"
                            % (got_t, want_t))
        if problems:
            fails.append((name, "; ".join(problems) + " (args: %s)"
                          % " ".join(m["args"])))
    for name, why in fails:
        print("FAIL %s: %s" % (name, why))
    summary = {"megatron": meg, "plans": len(meta), "accepted": accepted,
               "controls": {k: results[k].get("error") for k in controls},
               "refused_as_warned": refused_ok, "failures": len(fails),
               "results": results,
               "warnings": {k: v.get("warned") for k, v in meta.items()}}
    with open(os.path.join(a.out, "megatron_check.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print("check_megatron: %d plans: %d accepted by Megatron as planned, %d "
          "refused where parplan warned it would, %d failures"
          % (len(meta), accepted, refused_ok, len(fails)))
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
