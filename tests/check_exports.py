#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Load parplan's engine exports the way the engines load them, and print
what they would run, for tests/test_export.c to compare with the plan.

    check_exports.py deepspeed DIR WORLD   ds_config.json, ds_pipeline.py
    check_exports.py torch DIR             pp_schedule.csv, pp_stages.py,
                                           torchtitan_config.py
    check_exports.py pipedream DIR         pipedream_conf.json

DeepSpeed and PyTorch are not installed here: small stand-ins replace the
parts of their APIs the generated files touch, with the engines' own
behaviour (DeepSpeed's row-major ProcessTopology, PipelineModule calling
_partition_layers from its constructor).  For torch, torch's own rules
(the action regex, _validate_schedule, _add_send_recv and the runtime's
receive-before-compute order, each cited by line) and torchtitan's
configuration fields.  Every
check that fails raises, so the exit status is non-zero.
"""
import collections
import csv
import enum
import json
import os
import re
import sys
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


# ---- torch.distributed.pipelining: torch's own rules ----------------------
#
# Each rule below is torch's, cited at pytorch/pytorch@00722e64
# torch/distributed/pipelining/schedules.py (lines counted in that text),
# applied to what _PipelineScheduleRuntime._load_csv (:1971-1979) does with
# a "compute_only" CSV: PipelineScheduleMulti._load_csv (:1569) parses every
# cell with _Action.from_str (:126) and validates (_validate_schedule,
# :1324), then _prepare_schedule_with_comms (:1917) lowers the rows with
# _add_send_recv (:1205), and the runtime runs them (_perform_action).

# schedules.py:88-90, _action_regex
ACTION = re.compile(
    r"(\d+)(F|I|B|W|UNSHARD|RESHARD|REDUCE_GRAD|SEND_F|RECV_F|SEND_B|RECV_B)"
    r"(\d*)")


def parse_action(cell):
    """_Action.from_str (:126-177): strip; "" is None; else the regex's
    match (a prefix match, :166) gives (stage, type, micro-batch or None).
    We also demand a full match: a prefix match would drop the rest."""
    cell = cell.strip()
    if cell == "":
        return None
    m = ACTION.fullmatch(cell)
    if not m:
        raise AssertionError("not an action torch parses whole: %r" % cell)
    s, kind, mb = m.groups()
    return (int(s), kind, int(mb) if mb else None)


def validate_schedule(actions, pp_group_size, num_stages, n_mb):
    """_validate_schedule (:1324-1451): one row per rank (:1330-1336); per
    stage, a B only after its micro-batch's F (:1359-1372); every stage
    on one rank (:1404-1409); F on exactly n_mb micro-batches (:1435) and
    as many backwards (:1446).  Returns the stage -> rank map it infers.
    Stricter than torch where torch counts sets: each (stage, F|B, mb)
    exactly once and mb < n_mb (a duplicate would run twice)."""
    assert len(actions) == pp_group_size, (len(actions), pp_group_size)
    seen, stage_rank = set(), {}
    for rank in range(pp_group_size):
        for step, a in enumerate(actions[rank]):
            if a is None:
                continue
            s, kind, mb = a
            assert kind in ("F", "B"), "compute_only holds F and B: %r" % (a,)
            assert 0 <= s < num_stages and mb is not None, a
            assert 0 <= mb < n_mb, "micro-batch out of range: %r" % (a,)
            if kind == "B":
                assert (s, "F", mb) in seen, (
                    "rank %d step %d: B before F: %r" % (rank, step, a))
            assert (s, kind, mb) not in seen, "twice: %r" % (a,)
            seen.add((s, kind, mb))
            assert stage_rank.setdefault(s, rank) == rank, (
                "stage %d on ranks %d and %d" % (s, stage_rank[s], rank))
    for s in range(num_stages):
        for kind in "FB":
            got = sum(1 for x in seen if x[0] == s and x[1] == kind)
            assert got == n_mb, "stage %d: %d %s, want %d" % (s, got, kind, n_mb)
    return stage_rank


def add_send_recv(actions, stage_rank, num_stages):
    """_add_send_recv (:1205-1321), on F/B actions: an F of stage s > 0 is
    ready once RECV_F(s, mb) or F(s-1, mb) is on its rank (:1241-1259), a
    B of s < last once RECV_B(s, mb) or B(s+1, mb) is (:1260-1279); ranks
    go in order, each takes its next action if ready, appending SEND after
    its compute and the peer's RECV at the same moment (:1283-1316); no
    progress in a round is "Malformed compute schedule" (:1317-1320)."""
    todo = {r: [a for a in row if a is not None] for r, row in actions.items()}
    out = {r: [] for r in actions}
    prev = {r: set() for r in actions}

    def comms(a):
        s, kind, mb = a
        if kind == "F" and s != num_stages - 1 and \
                stage_rank[s + 1] != stage_rank[s]:
            return (s, "SEND_F", mb), (s + 1, "RECV_F", mb)
        if kind == "B" and s != 0 and stage_rank[s - 1] != stage_rank[s]:
            return (s, "SEND_B", mb), (s - 1, "RECV_B", mb)
        return None

    def ready(a, p):
        s, kind, mb = a
        if kind == "F" and s != 0:
            return (s, "RECV_F", mb) in p or (s - 1, "F", mb) in p
        if kind == "B" and s != num_stages - 1:
            return (s, "RECV_B", mb) in p or (s + 1, "B", mb) in p
        return True

    while todo:
        progress = False
        for r in sorted(todo):
            a = todo[r][0]
            if not ready(a, prev[r]):
                continue
            out[r].append(a)
            prev[r].add(a)
            c = comms(a)
            if c:
                out[r].append(c[0])
                prev[r].add(c[0])
                peer = stage_rank[c[1][0]]
                out[peer].append(c[1])
                prev[peer].add(c[1])
            todo[r].pop(0)
            if not todo[r]:
                del todo[r]
            progress = True
        assert progress, "Malformed compute schedule, can't schedule sends/recvs"
    return out


def run_runtime(lowered, stage_rank, num_stages):
    """The runtime's order of events (_perform_action): sends and receives
    are posted without waiting; an F whose input comes from another rank
    needs its RECV_F posted first (:2136-2148, "Computing ... before
    receiving input"; the same for B) and then waits until the peer has
    posted the matching send.  Returns the number of rounds; raises on a
    deadlock (every rank waiting)."""
    pos = {r: 0 for r in lowered}
    posted, sent = set(), set()
    rounds = 0
    while any(pos[r] < len(lowered[r]) for r in lowered):
        progress = False
        for r in sorted(lowered):
            while pos[r] < len(lowered[r]):
                s, kind, mb = lowered[r][pos[r]]
                if kind in ("RECV_F", "RECV_B"):
                    posted.add((s, kind, mb))
                elif kind in ("SEND_F", "SEND_B"):
                    sent.add((s, kind, mb))
                elif kind == "F" and s > 0 and stage_rank[s - 1] != r:
                    assert (s, "RECV_F", mb) in posted, (
                        "Computing %dF%d before receiving input" % (s, mb))
                    if (s - 1, "SEND_F", mb) not in sent:
                        break
                elif kind == "B" and s < num_stages - 1 and \
                        stage_rank[s + 1] != r:
                    assert (s, "RECV_B", mb) in posted, (
                        "Computing %dB%d before receiving input" % (s, mb))
                    if (s + 1, "SEND_B", mb) not in sent:
                        break
                pos[r] += 1
                progress = True
        rounds += 1
        assert progress, "deadlock: %s" % {
            r: lowered[r][pos[r]] for r in lowered if pos[r] < len(lowered[r])}
    return rounds


class SplitPoint(enum.Enum):
    BEGINNING = 1
    END = 2


def titan_module_names(fqns):
    """torchtitan's module FQNs (torchtitan/models/common/decoder.py:248-255
    @b5bcd76c): what _split_module keeps
    (torchtitan/distributed/pipeline_parallel.py:470-529)."""
    layer = re.compile(r"layers\.(\d+)")
    for s, part in enumerate(fqns):
        if not part:  # _split_module would keep no module: parplan warns
            print("empty stage", s)
        for name in part:
            assert name in ("tok_embeddings", "norm", "lm_head") or \
                layer.fullmatch(name), "no torchtitan module: %r" % name
    flat = [n for part in fqns for n in part]
    assert len(flat) == len(set(flat)), "a module in two stages"
    layers = [int(layer.fullmatch(n).group(1)) for n in flat
              if layer.fullmatch(n)]
    assert layers == list(range(len(layers))), "layers.<i> in order, once"
    if "tok_embeddings" in flat:
        assert flat[0] == "tok_embeddings", "the embedding first"
    if "lm_head" in flat:
        assert flat[-1] == "lm_head", "the head last"


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
    with open(os.path.join(d, "pp_schedule.csv"), newline="") as f:
        rows = list(csv.reader(f))  # PipelineScheduleMulti._load_csv, :1577-1580
    actions = {rank: [parse_action(c) for c in row]
               for rank, row in enumerate(rows)}
    stage_rank = validate_schedule(actions, st.PIPELINE_RANKS, st.NUM_STAGES,
                                   st.N_MICROBATCHES)
    assert [stage_rank[s] for s in range(st.NUM_STAGES)] == st.STAGE_TO_RANK
    lowered = add_send_recv(actions, stage_rank, st.NUM_STAGES)
    for rank in actions:  # the lowering keeps every row's compute order
        assert [a for a in lowered[rank] if a[1] in "FB"] == \
            [a for a in actions[rank] if a is not None]
    rounds = run_runtime(lowered, stage_rank, st.NUM_STAGES)
    assert "_PipelineScheduleRuntime" in open(
        os.path.join(d, "pp_stages.py")).read()
    for rank, row in enumerate(rows):
        print("rank", rank, "actions", len(row))
    print("runtime rounds", rounds)
    # torchtitan: the configuration module, applied to a stand-in of its
    # Trainer.Config holding the fields of torchtitan/config/configs.py
    # @b5bcd76c (ParallelismConfig :121-291, TrainingConfig :36-117):
    # slots, so a misspelt field raises
    class Parallelism:
        __slots__ = ("data_parallel_replicate_degree",
                     "data_parallel_shard_degree",
                     "fsdp_reshard_after_forward", "tensor_parallel_degree",
                     "pipeline_parallel_degree", "module_fqns_per_model_part",
                     "pipeline_parallel_schedule",
                     "pipeline_parallel_schedule_csv", "num_pp_microbatches",
                     "context_parallel_degree")

    class Training:
        __slots__ = ("num_tokens_per_microbatch_per_dp_rank",
                     "num_tokens_per_train_step", "max_context_length",
                     "mixed_precision_param", "disable_cuda_graphs")

        def __init__(self):
            self.max_context_length = 2048  # configs.py:52

    class Config:
        __slots__ = ("parallelism", "training", "activation_checkpoint")

        def __init__(self):
            self.parallelism, self.training = Parallelism(), Training()
            self.activation_checkpoint = "selective"  # trainer.py:108-110

    class FullAC:
        class Config:
            pass

    module("torchtitan")
    module("torchtitan.distributed")
    module("torchtitan.distributed.activation_checkpoint", FullAC=FullAC)
    import torchtitan_config as tc
    if tc.MODULE_FQNS_PER_MODEL_PART != st.STAGE_MODULES:
        titan_module_names(tc.MODULE_FQNS_PER_MODEL_PART)
        print("torchtitan modules")
    empty = [s for s, mods in enumerate(tc.MODULE_FQNS_PER_MODEL_PART)
             if not mods]
    if empty:  # torchtitan would build the stage empty: a clear error
        try:
            tc.apply_plan(Config())
        except ValueError as e:
            want = ("stage %d of the plan holds no torchtitan module"
                    % empty[0])
            assert want in str(e), str(e)
            print("torchtitan refused: stage", empty[0], "empty")
            return
        raise AssertionError("apply_plan accepted an empty stage")
    cfg = tc.apply_plan(Config())
    par, tr = cfg.parallelism, cfg.training
    assert os.path.isfile(par.pipeline_parallel_schedule_csv)
    # get_schedule_class's names (schedules.py, get_schedule_class); not
    # ZBVZeroBubble or DualPipeV: torchtitan's "loop" placement
    assert par.pipeline_parallel_schedule.lower() in (
        "1f1b", "interleaved1f1b", "gpipe", "loopedbfs",
        "interleavedzerobubble", "pipelineschedulesingle",
        "pipelineschedulemulti")
    assert par.pipeline_parallel_degree == st.PIPELINE_RANKS
    assert par.num_pp_microbatches == st.N_MICROBATCHES
    assert len(par.module_fqns_per_model_part) == st.NUM_STAGES
    # torchtitan's "loop" placement: stage s on rank s mod P
    # (pipeline_parallel.py:550-559) needs P | S
    assert st.NUM_STAGES % par.pipeline_parallel_degree == 0 or \
        st.STAGE_TO_RANK != [s % st.PIPELINE_RANKS
                             for s in range(st.NUM_STAGES)]
    dp = par.data_parallel_replicate_degree * par.data_parallel_shard_degree
    assert dp == st.DATA_PARALLEL
    assert tr.mixed_precision_param in ("bfloat16", "float32")
    assert tr.num_tokens_per_microbatch_per_dp_rank == \
        st.MICROBATCH_SIZE * tr.max_context_length
    assert tr.num_tokens_per_train_step == \
        tr.num_tokens_per_microbatch_per_dp_rank * st.N_MICROBATCHES * dp
    for k in ("pipeline_parallel_degree", "num_pp_microbatches",
              "tensor_parallel_degree", "data_parallel_replicate_degree",
              "data_parallel_shard_degree"):
        print(k, getattr(par, k))
    print("mixed_precision_param", tr.mixed_precision_param)
    print("activation_checkpoint",
          "full" if isinstance(cfg.activation_checkpoint, FullAC.Config)
          else cfg.activation_checkpoint)


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
