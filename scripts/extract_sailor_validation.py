#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Flatten Sailor's real clariden runs into data/sailor/validation/clariden_opt350.csv.

Source: eth-easl/sailor @ cf2c8e3, sailor/Planner/simulations/validation/
clariden/OPT-350/N*/plan_config_*.json (MIT licence), as copied in the
shared reference data.  Run from the repository root with the folder of
those JSON files:  python3 scripts/extract_sailor_validation.py DIR
Each row: file, nodes N, stages, dp, tp, mbs, gbs, the first layer of
every stage (space separated; the last stage ends at layer 26), the
measured seconds per iteration (`real`), the measured gradient
allreduce seconds (`red_grads`) and the peak nvidia-smi memory over
ranks (`max_mem`, bytes).  Every plan in the set uses one GPU type
(GH-96), one tp for all stages and the same dp for every stage; the
script checks that and fails otherwise.
"""
import csv
import glob
import json
import os
import sys


def main():
    src = sys.argv[1]
    rows = []
    for f in sorted(glob.glob(os.path.join(src, "N*", "*.json"))):
        d = json.load(open(f))
        (p,) = d["pipeline_list"]
        S = p["num_stages"]
        tps = {t[1] for st in p["tmp_per_stage"] for t in st}
        gpus = {g[0] for st in p["tmp_per_stage"] for t in st for g in t[0]}
        dps = set(p["dp"])
        assert len(tps) == 1 and len(dps) == 1 and gpus == {"GH-96"}, f
        first = [st[0] for st in p["layers_per_stage"]]
        flat = [x for st in p["layers_per_stage"] for x in st]
        assert flat == list(range(len(flat))), f
        rows.append([os.path.relpath(f, src), d["N"], S, dps.pop(), tps.pop(),
                     d["mbs"], d["gbs"], " ".join(map(str, first)),
                     len(flat), d["real"], d["red_grads"], d["max_mem"]])
    out = os.path.join("data", "sailor", "validation", "clariden_opt350.csv")
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["file", "nodes", "stages", "dp", "tp", "mbs", "gbs",
                    "stage_first_layers", "layers", "real_s", "red_grads_s",
                    "max_mem_bytes"])
        w.writerows(rows)


if __name__ == "__main__":
    main()
