#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Feed parplan's torch.distributed.pipelining exports to torch's own code.

    python3 scripts/check_torch_pipelining.py [--bin build/parplan]
        [--plans 100] [--seed 1] [--out DIR]

Needs a torch with torch.distributed.pipelining (2.4 or later; no GPU and
no process group: only torch's schedule functions run).  Not part of the
test suite: Debian's python3-torch (1.13) has no pipelining; the same
rules, cited with file and line, are encoded in tests/check_exports.py,
which runs in every build.

For random plans of gpt2-amp on a 4 x 8 cluster (random stage cuts, 1 to
8 stages, the same data-parallel degree for every stage, sometimes two
rounds of the stages round-robin over the pipeline ranks, GPipe or 1F1B,
1 to 8 micro-batches per replica), it runs ``parplan export --to torch``
and then does with the files what ``_PipelineScheduleRuntime._load_csv``
and its runtime do:

- imports ``pp_stages.py`` (its ``from torch.distributed.pipelining
  import SplitPoint`` against the real torch);
- reads ``pp_schedule.csv`` with ``csv.reader`` and parses every cell with
  torch's ``_Action.from_str``;
- ``_validate_schedule(actions, PIPELINE_RANKS, NUM_STAGES,
  N_MICROBATCHES)`` and checks the stage -> rank map it returns against
  ``STAGE_TO_RANK``;
- lowers the rows with torch's ``_add_send_recv`` and dry-runs the result
  with ``_simulate_comms_compute``, which raises on a deadlock.

Two controls, the first multi-stage plan's CSV with a backward moved
before its forward and with one action dropped, must be refused, or the
check itself is broken.  Prints a summary, writes torch_check.json into
--out, exits 1 on any failure.
"""

import argparse
import csv
import importlib
import importlib.util
import json
import os
import pkgutil
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODEL, CLUSTER = "gpt2-amp", "hier:4x8"
NAMES = ("_Action", "_validate_schedule", "_add_send_recv",
         "_simulate_comms_compute")


def torch_functions():
    """torch's schedule functions, wherever this version keeps them."""
    import torch.distributed.pipelining as pkg
    found = {}
    mods = ["torch.distributed.pipelining.schedules"] + [
        "torch.distributed.pipelining." + m.name
        for m in pkgutil.iter_modules(pkg.__path__)]
    for name in mods:
        try:
            mod = importlib.import_module(name)
        except Exception:
            continue
        for n in NAMES:
            if n not in found and hasattr(mod, n):
                found[n] = (getattr(mod, n), name)
    missing = [n for n in NAMES if n not in found]
    if missing:
        sys.exit("check_torch_pipelining: this torch (%s) lacks %s"
                 % (__import__("torch").__version__, ", ".join(missing)))
    return found


def random_plan(rng, nops):
    while True:
        S = rng.randint(1, 8)
        rounds = 2 if S % 2 == 0 and S >= 2 and rng.random() < 0.4 else 1
        P = S // rounds
        R = rng.randint(1, 4)
        if P * R <= 32:
            break
    M = rng.randint(1, 8)
    cuts = sorted(rng.sample(range(1, nops), S - 1))
    bounds = [0] + cuts + [nops]
    stages = [{"ops": list(range(bounds[s], bounds[s + 1])),
               "replicas": [(s % P) * R + r for r in range(R)]}
              for s in range(S)]
    return {"global_batch": R * M, "micro_batch": 1, "tp": 1,
            "schedule": rng.choice(("gpipe", "1f1b")), "recompute": False,
            "optimizer": "adam-mixed", "engine": "torch", "stages": stages}


def check_dir(d, fn, tamper=None):
    """torch's own functions on one export; raises on what torch refuses."""
    Action = fn["_Action"][0]
    spec = importlib.util.spec_from_file_location(
        "pp_stages_%d" % id(d), os.path.join(d, "pp_stages.py"))
    st = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(st)
    with open(os.path.join(d, st.SCHEDULE_CSV), newline="") as f:
        rows = list(csv.reader(f))
    if tamper:
        rows = tamper(rows)
    actions = {r: [Action.from_str(c) for c in row]
               for r, row in enumerate(rows)}
    s2r = fn["_validate_schedule"][0](actions, st.PIPELINE_RANKS,
                                      st.NUM_STAGES, st.N_MICROBATCHES)
    got = [s2r[s] for s in range(st.NUM_STAGES)]
    if got != list(st.STAGE_TO_RANK):
        raise AssertionError("stage -> rank %s != STAGE_TO_RANK %s"
                             % (got, st.STAGE_TO_RANK))
    rank_of = (lambda s: st.STAGE_TO_RANK[s])
    compute = {r: [a for a in row if a is not None]
               for r, row in actions.items()}
    lowered = fn["_add_send_recv"][0](compute, rank_of, st.NUM_STAGES)
    fn["_simulate_comms_compute"][0](lowered, rank_of, st.NUM_STAGES)
    return st.NUM_STAGES, st.PIPELINE_RANKS


def b_first(rows):
    """Swap the first F of the first row with a later B of it."""
    row = list(rows[0])
    i = next(k for k, c in enumerate(row) if "F" in c)
    j = next(k for k, c in enumerate(row) if "B" in c)
    row[i], row[j] = row[j], row[i]
    return [row] + rows[1:]


def drop_one(rows):
    row = list(rows[-1])
    k = max(i for i, c in enumerate(row) if c.strip())
    row[k] = ""
    return rows[:-1] + [row]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.environ.get("PARPLAN_BIN") or
                    os.path.join(ROOT, "build", "parplan"))
    ap.add_argument("--plans", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.environ.get("OUT") or ".")
    a = ap.parse_args(argv)
    import torch
    fn = torch_functions()
    rng = random.Random(a.seed)
    tmp = tempfile.mkdtemp(prefix="parplan-torch-")
    r = subprocess.run([a.bin, "model", MODEL, "--json"],
                       stdout=subprocess.PIPE, universal_newlines=True)
    nops = json.loads(r.stdout)["operators"]
    fails, ok, multi = [], 0, None
    shapes = {}
    for i in range(a.plans):
        plan = random_plan(rng, nops)
        ppath = os.path.join(tmp, "p%d.json" % i)
        with open(ppath, "w") as f:
            json.dump(plan, f)
        d = os.path.join(tmp, "x%d" % i)
        r = subprocess.run([a.bin, "export", ppath, "--model", MODEL,
                            "--cluster", CLUSTER, "--to", "torch", "-o", d],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        if r.returncode != 0:
            fails.append(("plan %d" % i, "export: " + r.stderr.strip()))
            continue
        try:
            S, P = check_dir(d, fn)
            ok += 1
            key = "%d stages on %d ranks, %s" % (S, P, plan["schedule"])
            shapes[key] = shapes.get(key, 0) + 1
            if multi is None and S > 1:
                multi = d
        except Exception as e:
            fails.append(("plan %d" % i, "%s: %s" % (type(e).__name__,
                                                     str(e)[:300])))
    controls = {}
    if multi:
        for name, t in (("B before F", b_first), ("one dropped", drop_one)):
            try:
                check_dir(multi, fn, t)
                fails.append(("control " + name, "torch accepted it: the "
                              "check is broken"))
                controls[name] = None
            except Exception as e:
                controls[name] = "%s: %s" % (type(e).__name__,
                                             str(e).splitlines()[0][:200])
    for name, why in fails:
        print("FAIL %s: %s" % (name, why))
    summary = {"torch": torch.__version__,
               "functions": {n: fn[n][1] for n in NAMES},
               "plans": a.plans, "accepted": ok, "failures": len(fails),
               "shapes": shapes, "controls": controls,
               "fail_list": fails}
    with open(os.path.join(a.out, "torch_check.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print("check_torch_pipelining: torch %s: %d of %d exports pass torch's "
          "_validate_schedule, _add_send_recv and _simulate_comms_compute; "
          "controls refused: %s; %d failures"
          % (torch.__version__, ok, a.plans, controls, len(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
