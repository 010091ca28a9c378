#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Sailor's planner on bench_plan's grid, as one table for bench_plan.

Reads the per-cell JSON files a run of Sailor's planner wrote (one per
model, cluster size and kind; data/sailor/planner/README.md says how they
were made) and writes data/sailor/planner/grid.tsv, one row per cell:

  model gpus kind gbs constructor_s search_cpu_s search_wall_s iter_s
  samples_s mbs stages note

stages: Sailor's best plan as `first-last:TYPE:tp:dp` per stage, comma
separated (layer indices are Sailor's profile indices, which are the
built-in models' operators); `-` when Sailor gave no plan, and note then
says why.  Every figure is one Sailor printed or this machine measured
around Sailor's search call; none is derived here but samples/s =
global batch / Sailor's iteration time.

Usage: sailor_grid.py CELLS_DIR|sailor_grid.json[.gz] [OUT.tsv]
"""
import glob
import gzip
import json
import os
import sys

MODELS = {"OPT-350": "opt-350", "GPT-Neo-2.7": "gpt-neo-2.7",
          "OPT-30": "opt-30", "LLAMA-3-8": "llama-3-8"}


def fmt(f, x):
    """x printed with f, or "-" where the run gave none."""
    return "-" if x is None else f % x


def stages_of(raw):
    """Sailor's pipeline_list[0] as first-last:TYPE:tp:dp per stage."""
    pl = raw["pipeline_list"]
    if len(pl) != 1:
        raise ValueError("%d pipelines: parplan plans have one" % len(pl))
    p = pl[0]
    out = []
    for s in range(p["num_stages"]):
        layers = p["layers_per_stage"][s]
        reps = p["tmp_per_stage"][s]
        kinds = {(r[0][0][0], int(r[1])) for r in reps}
        if len(kinds) != 1:
            raise ValueError("stage %d mixes replica shapes %s" %
                             (s, sorted(kinds)))
        (gpu, tp), = kinds
        if len(reps) != p["dp"][s]:
            raise ValueError("stage %d: %d replicas, dp %d" %
                             (s, len(reps), p["dp"][s]))
        if layers != list(range(layers[0], layers[-1] + 1)):
            raise ValueError("stage %d: layers not contiguous" % s)
        out.append("%d-%d:%s:%d:%d" % (layers[0], layers[-1], gpu, tp,
                                       p["dp"][s]))
    return ",".join(out)


def main():
    src = sys.argv[1]
    dst = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "data", "sailor",
        "planner", "grid.tsv")
    rows = []
    if os.path.isdir(src):  # one file per cell, MODEL_GPUS_KIND[.failed].json
        cells = [json.load(open(p))
                 for p in sorted(glob.glob(os.path.join(src, "*.json")))]
    else:  # the list of cells (sailor_grid.json[.gz])
        opener = gzip.open if src.endswith(".gz") else open
        with opener(src, "rt") as f:
            cells = json.load(f)
    inv = {v: k for k, v in MODELS.items()}
    cells.sort(key=lambda d: (MODELS.get(d["model"], d["model"]),
                              str(d["gpus"]), d["kind"]))
    for d in cells:
        model, gpus, kind = d["model"], d["gpus"], d["kind"]
        model = inv.get(model, model)
        gbs = d.get("global_batch", 4 * int(gpus))
        raw = d.get("raw_plan")
        row = [MODELS[model], str(int(gpus)), kind, str(gbs),
               fmt("%.3f", d.get("constructor_s")),
               fmt("%.4f", d.get("search_cpu_s")),
               fmt("%.4f", d.get("search_wall_s"))]
        note = "-"
        if raw:
            it = raw["iter_time"]
            try:
                st = stages_of(raw)
            except ValueError as e:
                st, note = "-", "not a parplan plan: %s" % e
            row += ["%.6f" % it, "%.4f" % (gbs / it), str(raw["mbs"]), st]
        else:
            row += ["-", "-", "-", "-"]
            note = d.get("error", "no plan").replace("\t", " ")
            # the run's own words are long; the README has them
            if "139" in note and ("SIGSEGV" in note or "exit code" in note):
                note = "Sailor's planner crashed (SIGSEGV, exit 139)"
            elif "124" in note:
                note = "Sailor's planner did not finish in 600 s"
        row.append(note)
        rows.append(row)
    tmp = dst + ".tmp"
    with open(tmp, "w") as f:
        f.write("# Sailor's planner (eth-easl/sailor cf2c8e3) on bench_plan's "
                "grid; data/sailor/planner/README.md\n")
        f.write("\t".join(["model", "gpus", "kind", "gbs", "constructor_s",
                           "search_cpu_s", "search_wall_s", "iter_s",
                           "samples_s", "mbs", "stages", "note"]) + "\n")
        for r in rows:
            f.write("\t".join(r) + "\n")
    os.replace(tmp, dst)


if __name__ == "__main__":
    main()
