#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Load parplan's engine exports the way the engines load them, and print
what they would run, for tests/test_export.c to compare with the plan.

    check_exports.py deepspeed DIR WORLD   ds_config.json, ds_pipeline.py
    check_exports.py torch DIR             pp_schedule.csv, pp_stages.py,
                                           torchtitan.toml
    check_exports.py pipedream DIR         pipedream_conf.json

DeepSpeed and PyTorch are not installed here: small stand-ins replace the
parts of their APIs the generated files touch, with the engines' own
behaviour (DeepSpeed's row-major ProcessTopology, PipelineModule calling
_partition_layers from its constructor; torch's action regex).  Every
check that fails raises, so the exit status is non-zero.
"""
import collections
import csv
import enum
import json
import os
import re
import sys
import tomllib
import types


def module(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    sys.modules[name] = m
    return m


# ---- DeepSpeed stand-in (deepspeed/runtime/pipe/topology.py, module.py) ----

class ProcessTopology:
    """Ranks are row-major over the axes: the last axis varies fastest."""

    def __init__(self, axes, dims):
        self.axes, self.dims = axes, dims
        self.Coord = collections.namedtuple("ProcessCoord", axes)

    def get_dim(self, axis):
        return self.dims[self.axes.index(axis)]

    def world_size(self):
        n = 1
        for d in self.dims:
            n *= d
        return n

    def get_coord(self, rank):
        coords = []
        for d in reversed(self.dims):
            coords.append(rank % d)
            rank //= d
        return self.Coord(*reversed(coords))


class PipeDataParallelTopology(ProcessTopology):
    def __init__(self, num_pp, num_dp):
        super().__init__(axes=["pipe", "data"], dims=[num_pp, num_dp])


class PipeModelDataParallelTopology(ProcessTopology):
    def __init__(self, num_pp, num_mp, num_dp):
        super().__init__(axes=["pipe", "data", "model"],
                         dims=[num_pp, num_dp, num_mp])


RANK = [0]


class PipelineModule:
    def __init__(self, layers, num_stages=None, topology=None, loss_fn=None,
                 activation_checkpoint_interval=0, **kwargs):
        if topology is None:
            raise RuntimeError("the stand-in needs a topology")
        self._topo = topology
        self.global_rank = RANK[0]
        self._layer_specs = list(layers)
        self.activation_checkpoint_interval = activation_checkpoint_interval
        self._local_start, self._local_stop = 0, None
        self._partition_layers(method="parameters")

    def _partition_layers(self, method="uniform"):
        raise NotImplementedError("the generated subclass must override it")

    def _set_bounds(self, start=None, stop=None):
        self._local_start, self._local_stop = start, stop


def deepspeed(d, world):
    module("deepspeed")
    module("deepspeed.pipe", PipelineModule=PipelineModule)
    module("deepspeed.runtime")
    module("deepspeed.runtime.pipe")
    module("deepspeed.runtime.pipe.topology",
           ProcessTopology=ProcessTopology,
           PipeDataParallelTopology=PipeDataParallelTopology,
           PipeModelDataParallelTopology=PipeModelDataParallelTopology)
    with open(os.path.join(d, "ds_config.json")) as f:
        cfg = json.load(f)
    for k in ("train_batch_size", "train_micro_batch_size_per_gpu",
              "gradient_accumulation_steps"):
        print(k, cfg[k])
    print("fp16", bool(cfg.get("fp16", {}).get("enabled")))
    print("zero", cfg["zero_optimization"]["stage"])
    sys.path.insert(0, d)
    import ds_pipeline as ds
    assert len(ds.LAYER_NAMES) == ds.PARTS[-1], "PARTS cover LAYER_NAMES"
    assert all(a <= b for a, b in zip(ds.PARTS, ds.PARTS[1:])), "PARTS sorted"
    topo = ds.planned_topology()
    assert topo.world_size() == world, (topo.world_size(), world)
    for rank in range(world):
        RANK[0] = rank
        net = ds.PlannedPipelineModule(layers=[object()] * len(ds.LAYER_NAMES))
        c = topo.get_coord(rank)
        print("rank", rank, "stage", c.pipe, "layers", net._local_start,
              net._local_stop, "ckpt", net.activation_checkpoint_interval)
    RANK[0] = 0
    try:
        ds.PlannedPipelineModule(layers=[object()] * (len(ds.LAYER_NAMES) + 1))
        raise AssertionError("a module with another layer count was accepted")
    except RuntimeError as e:
        print("refused:", e)


# ---- torch.distributed.pipelining stand-in ----------------------------------

# torch/distributed/pipelining/schedules.py, _action_regex
ACTION = re.compile(
    r"(\d+)(F|I|B|W|UNSHARD|RESHARD|REDUCE_GRAD|SEND_F|RECV_F|SEND_B|RECV_B)"
    r"(\d*)")


class SplitPoint(enum.Enum):
    BEGINNING = 1
    END = 2


def torch(d):
    module("torch")
    module("torch.distributed")
    module("torch.distributed.pipelining", SplitPoint=SplitPoint)
    sys.path.insert(0, d)
    import pp_stages as st
    assert len(st.STAGE_MODULES) == st.NUM_STAGES
    assert len(st.STAGE_TO_RANK) == st.NUM_STAGES
    firsts = [mods[0] for mods in st.STAGE_MODULES[1:]]
    assert list(st.SPLIT_SPEC) == firsts, "split before each later stage"
    assert all(v is SplitPoint.BEGINNING for v in st.SPLIT_SPEC.values())
    seen = {}
    with open(os.path.join(d, "pp_schedule.csv"), newline="") as f:
        rows = list(csv.reader(f))
    assert len(rows) == st.PIPELINE_RANKS, (len(rows), st.PIPELINE_RANKS)
    for rank, row in enumerate(rows):
        for cell in row:
            m = ACTION.fullmatch(cell.strip())
            assert m, "not an action: %r" % cell
            s, kind, mb = int(m.group(1)), m.group(2), int(m.group(3))
            assert st.STAGE_TO_RANK[s] == rank, (cell, rank)
            assert kind in "FB" and 0 <= mb < st.N_MICROBATCHES, cell
            assert (s, kind, mb) not in seen, "twice: " + cell
            if kind == "B":
                assert (s, "F", mb) in seen, "backward before forward: " + cell
            seen[(s, kind, mb)] = rank
        print("rank", rank, "actions", len(row))
    assert len(seen) == 2 * st.NUM_STAGES * st.N_MICROBATCHES
    with open(os.path.join(d, "torchtitan.toml"), "rb") as f:
        t = tomllib.load(f)
    par, tr = t["parallelism"], t["training"]
    assert par["module_fqns_per_model_part"] == st.STAGE_MODULES
    for k in ("pipeline_parallel_degree", "pipeline_parallel_microbatch_size",
              "tensor_parallel_degree", "data_parallel_replicate_degree"):
        print(k, par[k])
    print("global_batch_size", tr["global_batch_size"])
    print("local_batch_size", tr["local_batch_size"])
    print("activation_checkpoint", t["activation_checkpoint"]["mode"])


def pipedream(d):
    with open(os.path.join(d, "pipedream_conf.json")) as f:
        cfg = json.load(f)
    # main_with_runtime.py: keys of stage_to_rank_map become ints
    s2r = {int(k): v for k, v in cfg["stage_to_rank_map"].items()}
    m2s = cfg["module_to_stage_map"]
    assert m2s[-1] == m2s[-2], "the loss runs on the last stage"
    assert sorted(set(m2s)) == sorted(s2r), "every stage has ranks"
    ranks = sorted(r for v in s2r.values() for r in v)
    assert ranks == list(range(len(ranks))), "ranks 0..N-1, once each"
    for s in sorted(s2r):
        print("stage", s, "ranks", " ".join(map(str, s2r[s])))
    print("operators", len(cfg["stage_of_operator"]))


def main():
    what, d = sys.argv[1], sys.argv[2]
    if what == "deepspeed":
        deepspeed(d, int(sys.argv[3]))
    elif what == "torch":
        torch(d)
    elif what == "pipedream":
        pipedream(d)
    else:
        raise SystemExit("unknown: " + what)


if __name__ == "__main__":
    main()
