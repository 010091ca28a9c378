#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Extract what parplan uses from Sailor's simulator data into
data/sailor/simulator/ (eth-easl/sailor @ cf2c8e3).

Run from the repository root, with the directory that holds Sailor's
simulator files (a copy of sailor/Planner/simulations/profiles_tmp.json,
basic_cluster_config.json, intra_node_bandwidths.json and
multizone_bandwidths_het.json, as in the project's shared data):

    python3 scripts/extract_sailor_simulator.py ../shared/data/sailor/simulator

Writes, values unchanged (json.load then json.dump of sub-trees):
- profiles_tmp_gh96.json: the "GH-96" entry of every model of
  profiles_tmp.json that has one (the file is 617 kB; these are 55 kB),
  keyed model -> "GH-96" -> mbs -> tp -> layer, as in the source;
- multizone_gh96.json: multizone_bandwidths_het.json's fits from GH-96
  to GH-96 in zone us-central1-a (Clariden's inter-node links), keyed
  gpus_per_node -> gpus_per_node of the other end, as in the source;
and copies basic_cluster_config.json and intra_node_bandwidths.json
whole (1 and 3 kB).
"""
import json
import os
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "data", "sailor", "simulator")
ZONE = "us-central1-a"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: extract_sailor_simulator.py SAILOR_SIMULATOR_DIR")
    src = sys.argv[1]
    os.makedirs(OUT, exist_ok=True)
    prof = json.load(open(os.path.join(src, "profiles_tmp.json")))
    gh = {m: {"GH-96": g["GH-96"]} for m, g in sorted(prof.items())
          if "GH-96" in g}
    with open(os.path.join(OUT, "profiles_tmp_gh96.json"), "w") as f:
        json.dump(gh, f, sort_keys=True, separators=(",", ":"))
        f.write("\n")
    net = json.load(open(os.path.join(src, "multizone_bandwidths_het.json")))
    fits = {n: {m: fit for m, fit in by_zone[ZONE]["GH-96"].items()}
            for n, by_zone in net[ZONE]["GH-96"].items()}
    with open(os.path.join(OUT, "multizone_gh96.json"), "w") as f:
        json.dump({ZONE: {"GH-96": fits}}, f, indent=1, sort_keys=True)
        f.write("\n")
    for name in ("basic_cluster_config.json", "intra_node_bandwidths.json"):
        shutil.copyfile(os.path.join(src, name), os.path.join(OUT, name))


if __name__ == "__main__":
    main()
