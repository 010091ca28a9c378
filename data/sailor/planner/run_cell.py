#!/usr/bin/python3
"""Run Sailor's planner (C++ core via pybind11 'libplanner' + Sailor's own Python
wrapper sailor/Planner/sailor_planner/cpp_src/planner.py) for one grid cell.

Usage: run_cell.py MODEL GPUS KIND OUT_JSON
  KIND = a100  -> {"A100-40_us-central1-a": GPUS}
  KIND = mixed -> {"A100-40_us-central1-a": GPUS/2, "V100-16_us-central1-a": GPUS/2}

The C++ core's stdout (very verbose printf tracing) goes to whatever fd 1 is; the
caller redirects it to a log file. Result JSON is written to OUT_JSON.
"""
import json
import os
import sys
import time
import types
import typing

SAILOR = "/tmp/sailor"            # repo work tree (git archive of cf2c8e3)
BUILD = "/tmp/sailor/build"       # holds libplanner.cpython-311-x86_64-linux-gnu.so
CFG_DIR = "/tmp/sailor_out/configs"

sys.path.insert(0, BUILD)
sys.path.insert(0, SAILOR)

# planner.py does `from sailor.profiling.profile_utils import Zone, GPU_Type` (type hints
# only); profile_utils imports torch, which is not installed. Provide a stub module with
# the same two Literal aliases so planner.py can be imported unmodified.
_stub = types.ModuleType("sailor.profiling.profile_utils")
_stub.Zone = typing.Literal["us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f", "us-west1-b"]
_stub.GPU_Type = typing.Literal["A100-40", "V100-16", "P100-16"]
sys.modules["sailor.profiling.profile_utils"] = _stub

import libplanner  # noqa: E402
from sailor.Planner.sailor_planner.cpp_src.planner import SailorPlanner  # noqa: E402

ZONE = "us-central1-a"


class TimedCore:
    """Proxy around libplanner.SailorPlanner: times only the C++ search call."""

    def __init__(self, core):
        self.core = core
        self.search_cpu_s = None
        self.search_wall_s = None

    def get_sorted_plans(self, *a):
        c0, w0 = time.process_time(), time.perf_counter()
        r = self.core.get_sorted_plans(*a)
        self.search_cpu_s = time.process_time() - c0
        self.search_wall_s = time.perf_counter() - w0
        return r


def main():
    model, gpus, kind, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    gb = 4 * gpus
    res = {"model": model, "gpus": gpus, "kind": kind, "global_batch": gb}
    try:
        profile_dir = f"{SAILOR}/sailor/Planner/sailor_planner/profiles/{model}/"
        training_cfg = f"{CFG_DIR}/training_config_{model}_gb{gb}.json"
        quotas = f"{SAILOR}/sailor/Planner/sailor_planner/dummy_quotas_dict.json"
        # same files planner.py's __init__ uses:
        network_coeff_path = f"{SAILOR}/sailor/providers/multizone_bandwidths_het.json"
        model_mem_info = f"{SAILOR}/sailor/Planner/llm_info.json"
        communication_cost_file = f"{SAILOR}/sailor/providers/gcp/communication_cost.json"
        objective = "throughput"
        fp16 = False          # simulator.py default (AE scripts do not pass --fp16)
        heterogeneous = True  # planner.py default
        res["inputs"] = dict(profile_dir=profile_dir, training_config=training_cfg, quotas_dict=quotas,
                             network_coeffs=network_coeff_path, llm_info=model_mem_info,
                             communication_cost=communication_cost_file, objective=objective,
                             fp16=fp16, heterogeneous=heterogeneous, max_cost=0.0, min_throughput=0.0)

        # --- constructor (what SailorPlanner.__init__ does, minus its `make` + copy of the .so)
        c0, w0 = time.process_time(), time.perf_counter()
        sp = SailorPlanner.__new__(SailorPlanner)
        with open(quotas) as f:
            sp.available_gpus = sorted(list(json.load(f).keys()))
        core = libplanner.SailorPlanner(profile_dir, network_coeff_path, training_cfg, model_mem_info,
                                        communication_cost_file, heterogeneous, fp16, quotas, objective)
        res["constructor_s"] = time.perf_counter() - w0
        res["constructor_cpu_s"] = time.process_time() - c0
        sp.planner = TimedCore(core)

        if kind == "a100":
            cluster = {f"A100-40_{ZONE}": gpus}
        else:
            cluster = {f"A100-40_{ZONE}": gpus // 2, f"V100-16_{ZONE}": gpus // 2}
        res["cluster_config"] = dict(cluster)
        cluster["max_cost"] = 0.0        # 0.0 = no budget limit (simulator.py default)
        cluster["min_throughput"] = 0.0  # 0.0 = no throughput floor

        # --- search: Sailor's Python wrapper; the C++ call inside is timed by TimedCore
        w1 = time.perf_counter()
        plans = sp.get_sorted_plans(cluster_config=cluster, training_config={})
        res["wrapper_total_wall_s"] = time.perf_counter() - w1
        res["search_cpu_s"] = sp.planner.search_cpu_s
        res["search_wall_s"] = sp.planner.search_wall_s
        res["num_plans_returned"] = len(plans)
        for p in plans[:3]:  # pybind opaque VectorVectorInt -> plain lists
            pl = p["pipeline_list"][0]
            pl["layers_per_stage"] = [list(s) for s in pl["layers_per_stage"]]
        if not plans:
            res["error"] = "Sailor returned no plan (empty sorted plan list)"
        else:
            def summarize(p):
                pl = p["pipeline_list"][0]
                stages = []
                for li, reps in zip(pl["layers_per_stage"], pl["tmp_per_stage"]):
                    counts = {}
                    for (gpu_list, tp) in reps:
                        g = gpu_list[0][0]
                        counts[f"{g} tp{tp}"] = counts.get(f"{g} tp{tp}", 0) + 1
                    stages.append({"layers": [li[0], li[-1]], "num_layers": len(li),
                                   "replicas_by_gpu_tp": counts,
                                   "dp": len(reps)})
                return {"num_stages": pl["num_stages"], "mbs": p["mbs"], "dp_per_stage": pl["dp"],
                        "stages": stages, "used_gpus": p["used_gpus"],
                        "iter_time_s": p["iter_time"],
                        "throughput_iters_per_s": p["estimated_throughput"],
                        "throughput_samples_per_s_derived": gb / p["iter_time"] if p["iter_time"] else None,
                        "estimated_cost_[total,comm,comp]": p["estimated_cost"]}
            res["plan"] = summarize(plans[0])
            res["raw_plan"] = plans[0]
            res["next_best_plans"] = [summarize(p) for p in plans[1:3]]
            res["predicted_memory_per_gpu_type"] = "not reported by Sailor's planner"
    except Exception as e:  # record, do not invent
        import traceback
        res["error"] = f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
    sys.stderr.write(json.dumps({k: res.get(k) for k in ("model", "gpus", "kind", "constructor_s", "search_cpu_s",
                                                         "search_wall_s", "num_plans_returned", "error")}) + "\n")
    if "plan" in res:
        sys.stderr.write(json.dumps(res["plan"]) + "\n")


if __name__ == "__main__":
    main()
