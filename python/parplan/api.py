# SPDX-License-Identifier: MIT
"""parplan's Python API: plan, evaluate and simulate through the C library.

Every figure comes from libparplan (include/parplan.h); this module only
turns Python arguments into the library's inputs and its outputs into
Python objects (docs/PYTHON.md).  The options mirror the command line's
(``parplan plan --help``): a plan, report or summary here equals the
command's for the same inputs.
"""
import ctypes
import json
import os
import tempfile
import threading
from dataclasses import dataclass, field, fields
from typing import Any, Dict, List, Optional

from . import _lib
from ._lib import lib

__all__ = ["Error", "PlanResult", "SearchPlan", "EvalSummary", "SimSummary",
           "plan", "evaluate", "simulate", "builtin_models",
           "cluster_generators", "library_version"]

PP_OK = 0
PP_EINVAL = 2
PP_PREC_MODEL = 0
PP_ENGINE_TORCH = 3  # the command line's default engine for plan
PP_COST_PARPLAN = 0


class Error(Exception):
    """An error of the library (or of an argument it would refuse).

    ``str(e)`` is the library's message (pp_ctx_errmsg: "where: what",
    naming the file, operator, device or option at fault), ``status``
    its pp_status code and ``status_name`` that code's phrase."""

    def __init__(self, message: str, status: int = PP_EINVAL):
        super().__init__(message)
        self.status = status
        self.status_name = _str(lib.pp_status_str(status))


def _str(b: Optional[bytes]) -> Optional[str]:
    return None if b is None else b.decode("utf-8", "replace")


def library_version() -> str:
    """The C library's version (pp_version)."""
    return _str(lib.pp_version())


def _names(fn) -> List[str]:
    out, i = [], 0
    while True:
        n = fn(i)
        if n is None:
            return out
        out.append(_str(n))
        i += 1


def builtin_models() -> List[str]:
    """The built-in model names (pp_model_builtin_name)."""
    return _names(lib.pp_model_builtin_name)


def cluster_generators() -> List[str]:
    """The built-in cluster names and generators (pp_cluster_generator_name)."""
    return _names(lib.pp_cluster_generator_name)


def _enum(what: str, name_fn, value, first: int = 0) -> int:
    """The index whose library name is value (an int passes through)."""
    if isinstance(value, int) and not isinstance(value, bool):
        if name_fn(value) is None or value < first:
            raise Error(f"{what}: no value {value}")
        return value
    names = _names(name_fn)
    if isinstance(value, str) and value in names[first:]:
        return names.index(value)
    raise Error(f"{what}: '{value}' is not one of "
                + "|".join(names[first:]))


class _Ctx:
    """A pp_ctx and everything made in it, destroyed together."""

    def __init__(self, seed: int = 1):
        cp = _lib.CtxParams()
        lib.pp_ctx_params_init(ctypes.byref(cp))
        if seed is not None:
            if int(seed) < 0:
                raise Error(f"seed: needs a non-negative integer, not {seed}")
            cp.seed = int(seed)
        self.ctx = ctypes.c_void_p()
        rc = lib.pp_ctx_create(ctypes.byref(cp), ctypes.byref(self.ctx))
        if rc != PP_OK:
            raise Error(_str(lib.pp_status_str(rc)), rc)
        self.owned = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for destroy, p in reversed(self.owned):
            destroy(p)
        self.owned = []
        lib.pp_ctx_destroy(self.ctx)
        return False

    def check(self, rc: int):
        if rc != PP_OK:
            msg = _str(lib.pp_ctx_errmsg(self.ctx)) or _str(
                lib.pp_status_str(rc))
            raise Error(msg, rc)

    def make(self, destroy, fn, *args) -> ctypes.c_void_p:
        """Call a constructor (its last argument the T **out), own the
        result."""
        out = ctypes.c_void_p()
        rc = fn(self.ctx, *args, ctypes.byref(out))
        if out.value:
            self.owned.append((destroy, out))
        self.check(rc)
        return out

    def capture(self, write) -> str:
        """What write(FILE *) writes, as text."""
        fd, path = tempfile.mkstemp(prefix="parplan-", suffix=".out")
        os.close(fd)
        try:
            f = _lib.libc.fopen(os.fsencode(path), b"w")
            if not f:
                raise Error(f"{path}: cannot open a temporary file", 3)
            try:
                rc = write(f)
            finally:
                _lib.libc.fclose(f)
            self.check(rc)
            with open(path, encoding="utf-8") as fh:
                return fh.read()
        finally:
            os.unlink(path)

    def write_to_path(self, write) -> str:
        """What write(path) writes to a file, as text (the library's own
        file writing, byte for byte)."""
        with tempfile.TemporaryDirectory(prefix="parplan-") as d:
            path = os.path.join(d, "out.json")
            self.check(write(os.fsencode(path)))
            with open(path, encoding="utf-8", newline="") as fh:
                return fh.read()


# ---- inputs ----------------------------------------------------------------

def _json_text(x) -> Optional[bytes]:
    """x as JSON text when it is a dict, a list or JSON text; else None."""
    if isinstance(x, (dict, list)):
        return json.dumps(x).encode()
    if isinstance(x, bytes):
        x = x.decode("utf-8")
    if isinstance(x, str) and x.lstrip().startswith(("{", "[")):
        return x.encode()
    return None


def _spec(what: str, x) -> bytes:
    if isinstance(x, os.PathLike):
        x = os.fspath(x)
    if isinstance(x, bytes):
        return x
    if not isinstance(x, str):
        raise Error(f"{what}: needs a name, a spec, a file path, JSON text "
                    f"or a dict, not {type(x).__name__}")
    return x.encode()


def _load(c: _Ctx, what: str, x) -> ctypes.c_void_p:
    """A model or a cluster ("model", "cluster") from JSON text or a dict,
    else a built-in name, a spec or a path."""
    destroy, read, load = (getattr(lib, "pp_%s_%s" % (what, f))
                           for f in ("destroy", "read_json", "load"))
    text = _json_text(x)
    if text is not None:
        return c.make(destroy, read, text, len(text), b"<%s>" % what.encode())
    return c.make(destroy, load, _spec(what, x))


def _load_model(c: _Ctx, model) -> ctypes.c_void_p:
    return _load(c, "model", model)


def _load_cluster(c: _Ctx, cluster) -> ctypes.c_void_p:
    return _load(c, "cluster", cluster)


def _load_calibration(c: _Ctx, calibration) -> Optional[ctypes.c_void_p]:
    if calibration is None:
        return None
    text = _json_text(calibration)
    if text is not None:
        return c.make(lib.pp_calibration_destroy,
                      lib.pp_calibration_read_json, text, len(text),
                      b"<calibration>")
    return c.make(lib.pp_calibration_destroy, lib.pp_calibration_load,
                  _spec("calibration", calibration))


def _load_plan(c: _Ctx, p, m, cl) -> ctypes.c_void_p:
    if isinstance(p, PlanResult):
        if p.json is None and (p.summary.get("timed_out") or
                               p.summary.get("interrupted")):
            raise Error("plan: the search stopped before it found a plan "
                        "that fits (raise time_limit)")
        if p.json is None:
            raise Error("plan: the search kept no plan (nothing fits)")
        p = p.json
    text = _json_text(p)
    if text is not None:
        return c.make(lib.pp_plan_destroy, lib.pp_plan_read_json, text,
                      len(text), b"<plan>", m, cl)
    return c.make(lib.pp_plan_destroy, lib.pp_plan_load, _spec("plan", p), m,
                  cl)


def _override_plan(c: _Ctx, p, precision, engine, zero):
    """The plan with the given precision, engine and ZeRO stage in place
    of its own, as the command line's --precision, --engine and --zero do
    (a new plan through the builder; plans are immutable)."""
    if precision is None and engine is None and zero is None:
        return p
    pa = _lib.PlanParams()
    lib.pp_plan_get_params(p, ctypes.byref(pa))
    if precision is not None:
        pa.precision = _enum("precision", lib.pp_precision_name, precision, 1)
    if engine is not None:
        pa.engine = _enum("engine", lib.pp_engine_name, engine)
    if zero is not None:
        if zero not in (0, 1, 2, 3):
            raise Error(f"zero: takes 0, 1, 2 or 3 here, not {zero!r}")
        pa.zero = zero
    b = ctypes.c_void_p()
    c.check(lib.pp_plan_builder_create(c.ctx, ctypes.byref(pa),
                                       lib.pp_plan_source(p),
                                       ctypes.byref(b)))
    try:
        for s in range(lib.pp_plan_nstage(p)):
            n = ctypes.c_int32()
            ops = lib.pp_plan_stage_ops(p, s, ctypes.byref(n))
            sid = ctypes.c_int32()
            c.check(lib.pp_plan_builder_add_stage(b, ops, n,
                                                  ctypes.byref(sid)))
            for r in range(lib.pp_plan_nreplica(p, s)):
                c.check(lib.pp_plan_builder_add_replica(
                    b, sid, lib.pp_plan_replica(p, s, r)))
            k = lib.pp_plan_stage_in_flight(p, s)
            if k > 0:
                c.check(lib.pp_plan_builder_set_in_flight(b, sid, k))
            sig = (ctypes.c_double * 4)()
            if lib.pp_plan_stage_pattern(p, s, sig):
                c.check(lib.pp_plan_builder_set_pattern(b, sid, sig))
    except Error:
        lib.pp_plan_builder_destroy(b)
        raise
    q = ctypes.c_void_p()
    rc = lib.pp_plan_builder_finish(b, ctypes.byref(q))  # destroys b
    if q.value:
        c.owned.append((lib.pp_plan_destroy, q))
    c.check(rc)
    return q


def _cost_params(cost_model, allreduce, reserve_gb, network, cal):
    cp = _lib.CostParams()
    lib.pp_cost_params_init(ctypes.byref(cp))
    if cost_model is not None:
        cp.kind = _enum("cost_model", lib.pp_cost_kind_name, cost_model)
    if allreduce is not None:
        cp.allreduce = _enum("allreduce", lib.pp_allreduce_name, allreduce)
    if reserve_gb is not None:
        cp.reserve_bytes = _gib(reserve_gb)
    if network is not None:
        cp.network = _enum("network", lib.pp_sim_network_name, network)
    if cal is not None:
        cp.calibration = cal
    return cp


def _gib(x) -> int:
    if not 0 <= float(x) <= 1e6:
        raise Error(f"reserve_gb: needs a number from 0 to 1e+06, not {x}")
    return int(float(x) * 1073741824.0)  # as --reserve-gb


# ---- results ---------------------------------------------------------------

def _from_struct(cls, s, **extra):
    kw = {}
    for f in fields(cls):
        if f.name in extra:
            kw[f.name] = extra[f.name]
        elif hasattr(s, f.name):
            v = getattr(s, f.name)
            kw[f.name] = bool(v) if f.type in (bool, "bool") else v
    return cls(**kw)


@dataclass
class SearchPlan:
    """One kept plan of a search (pp_search_plan), best first; ``json``
    is its plan JSON as ``-o`` writes it.  ``tp`` is 0 when its stages
    take their own degrees (each stage's ``"tp"`` in ``json``)."""
    devices: int
    pp: int
    dp: int
    tp: int
    micro_batch: int
    gas: int
    schedule: str
    recompute: bool
    estimate_ms: float
    simulated_ms: float
    lower_bound_ms: float
    throughput: float
    bubble: float
    mapped: bool
    peak_share: float
    madpipe: bool
    zero: int
    time_spread: float
    calibrated: bool
    json: str = field(default="", repr=False)


@dataclass
class PlanResult:
    """What plan() returns.

    json: the best plan's JSON text, byte for byte what ``parplan plan
    ... -o plan.json`` writes (None when nothing fits, or when the time
    limit stopped the search first: summary["timed_out"]); plan: that JSON
    parsed; fits: a plan was kept; plans: every kept plan, best first;
    summary: pp_search_summary's fields (a dict); report: the document
    ``parplan plan ... --json`` prints, parsed."""
    json: Optional[str]
    plan: Optional[Dict[str, Any]]
    fits: bool
    plans: List[SearchPlan]
    summary: Dict[str, Any]
    report: Dict[str, Any]


@dataclass
class EvalSummary:
    """pp_eval_summary's fields (evaluate), and ``report``: the document
    ``parplan evaluate ... --json`` prints, parsed."""
    iteration_ms: float
    lower_bound_ms: float
    steady_ms: float
    fill_ms: float
    p2p_ms: float
    allreduce_ms: float
    update_ms: float
    throughput: float
    bottleneck: int
    fits: bool
    worst_device: int
    margin_bytes: float
    est: int
    time_spread: float
    calibrated: bool
    report: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class SimSummary:
    """pp_sim_summary's fields (simulate), and ``report``: the document
    ``parplan simulate ... --json`` prints, parsed."""
    iteration_ms: float
    lower_bound_ms: float
    nevents: int
    fits: bool
    worst_device: int
    analytic_ms: float
    time_spread: float
    calibrated: bool
    report: Dict[str, Any] = field(default_factory=dict, repr=False)


# ---- the API ---------------------------------------------------------------

_RECOMPUTE = {"on": 1, True: 1, "off": 0, False: 0, "both": -1, None: -1}


def _interruptible_search(c, m, cl, sp):
    """pp_plan_search in a worker thread, so that Ctrl-C reaches Python:
    the first KeyboardInterrupt sets the search's stop flag and waits for
    the best plans so far (summary "interrupted"); a second one, while
    waiting, propagates (the search then ends on its own, shortly)."""
    stop = ctypes.c_int(0)  # sig_atomic_t: an int on every platform built
    sp.stop = ctypes.cast(ctypes.pointer(stop), ctypes.c_void_p)
    box = {}
    done = threading.Event()  # not Thread.join: an interrupted join can
    # leave the thread looking finished (CPython gh-90882)

    def work():
        try:
            box["sr"] = c.make(lib.pp_search_destroy, lib.pp_plan_search, m,
                               cl, ctypes.byref(sp))
        except BaseException as e:  # noqa: B902: handed to the caller
            box["err"] = e
        finally:
            done.set()

    threading.Thread(target=work, name="parplan-search", daemon=True).start()
    try:
        while not done.wait(0.05):
            pass
    except KeyboardInterrupt:
        stop.value = 1
        done.wait()
    sp.stop = None
    if "err" in box:
        raise box["err"]
    return box["sr"]


def plan(model, cluster, batch: int, *, top: Optional[int] = None,
         time_limit: Optional[float] = None, threads: Optional[int] = None,
         schedule=None, recompute=None, max_tp: Optional[int] = None,
         max_micro_batch: Optional[int] = None, all_devices: bool = False,
         map_time: Optional[float] = None, madpipe: Optional[int] = None,
         map_nodes: Optional[int] = None, uniform_tp: bool = False,
         simulate: bool = True, memory_margin: Optional[float] = None,
         precision=None, engine=None, zero=None, optimizer=None,
         allreduce=None, reserve_gb: Optional[float] = None,
         calibration=None, seed: int = 1, trace=None,
         progress=None) -> PlanResult:
    """Search the best plans of model on cluster at global batch batch
    (pp_plan_search), as ``parplan plan`` does.

    model, cluster: a built-in name, a generator spec, a file path, JSON
    text or a dict.  The options are the command's, by the same names
    (``--time-limit`` is time_limit, ``--all-devices`` all_devices, ``--no-simulate``
    simulate=False, ``--uniform-tp`` uniform_tp=True, ``--reserve-gb`` reserve_gb); left out, the command's
    defaults apply (engine "torch", zero "auto", the model's precision).
    schedule: a name or a list of names; recompute: "on", "off" or
    "both" (or True, False, None); calibration: a file, JSON text or a
    dict; trace: a path for the best plan's Chrome trace; progress: a
    callable(done) called with the share done, returning True to stop
    (the search then raises Error)."""
    with _Ctx(seed) as c:
        m = _load_model(c, model)
        cl = _load_cluster(c, cluster)
        cal = _load_calibration(c, calibration)
        sp = _lib.SearchParams()
        lib.pp_search_params_init(ctypes.byref(sp))
        sp.global_batch = int(batch)
        if top is not None:
            sp.top_k = int(top)
        if time_limit is not None:
            sp.time_limit_s = float(time_limit)
        if threads is not None:
            sp.threads = int(threads)
        if schedule is not None:
            names = [schedule] if isinstance(schedule, (str, int)) else schedule
            sp.schedules = 0
            for s in names:
                sp.schedules |= 1 << _enum("schedule", lib.pp_schedule_name, s)
        if recompute not in _RECOMPUTE:
            raise Error(f"recompute: '{recompute}' is not one of on|off|both")
        sp.recompute = _RECOMPUTE[recompute]
        if max_tp is not None:
            sp.max_tp = int(max_tp)
        if max_micro_batch is not None:
            sp.max_micro_batch = int(max_micro_batch)
        if all_devices:
            sp.subsets = 0
        if map_time is not None:
            sp.map_time_s = float(map_time)
        if map_nodes is not None:
            sp.map_nodes = int(map_nodes)
        sp.uniform_tp = 1 if uniform_tp else 0
        if madpipe is not None:
            sp.madpipe = int(madpipe)
        sp.simulate = 1 if simulate else 0
        if memory_margin is not None:
            sp.memory_margin = float(memory_margin)
        if optimizer is not None:
            sp.optimizer = _enum("optimizer", lib.pp_optimizer_name, optimizer)
        sp.precision = (PP_PREC_MODEL if precision is None else _enum(
            "precision", lib.pp_precision_name, precision, 1))
        sp.engine = (PP_ENGINE_TORCH if engine is None else _enum(
            "engine", lib.pp_engine_name, engine))
        if zero is None or zero == "auto":
            sp.zero = -1
        elif zero in (0, 1, 2, 3):
            sp.zero = zero
        else:
            raise Error(f"zero: '{zero}' is not one of 0|1|2|3|auto")
        if reserve_gb is not None:
            sp.reserve_bytes = _gib(reserve_gb)
        if allreduce is not None:
            sp.allreduce = _enum("allreduce", lib.pp_allreduce_name, allreduce)
        if cal is not None:
            sp.calibration = cal
        if progress is not None:
            def _progress(_ud, done, _cb=progress):
                try:
                    return 1 if _cb(done) else 0
                except BaseException:  # stop, not crash, on an exception
                    return 1
            sp.progress = _lib.PROGRESS_FN(_progress)

        sr = _interruptible_search(c, m, cl, sp)
        report = json.loads(c.capture(
            lambda f: lib.pp_search_write(c.ctx, sr, m, cl, 1, f)))
        ss = _lib.SearchSummary()
        c.check(lib.pp_search_get_summary(sr, ctypes.byref(ss)))
        summary = {n: getattr(ss, n) for n, _ in _lib.SearchSummary._fields_
                   if n != "cost"}
        for k in ("timed_out", "interrupted"):
            summary[k] = bool(summary[k])
        # 0: by the simulator; 1: by the estimate (time, or no simulation);
        # 2: by the estimate, the simulator's size or memory limit (as the
        # report's search.by_estimate)
        plans = []
        for i in range(ss.nplans):
            row = _lib.SearchPlan()
            c.check(lib.pp_search_plan_get(sr, i, ctypes.byref(row)))
            p = lib.pp_search_plan_at(sr, i)
            text = c.write_to_path(
                lambda path, p=p: lib.pp_plan_write(c.ctx, p, path, None))
            plans.append(_from_struct(
                SearchPlan, row, json=text,
                schedule=_str(lib.pp_schedule_name(row.schedule))))
        if trace is not None and plans:
            cp = _lib.CostParams()
            ctypes.memmove(ctypes.byref(cp), ctypes.byref(ss.cost),
                           ctypes.sizeof(cp))
            cp.record = 1
            sim = c.make(lib.pp_sim_destroy, lib.pp_simulate,
                         lib.pp_search_plan_at(sr, 0), m, cl,
                         ctypes.byref(cp))
            c.check(lib.pp_sim_write_trace(c.ctx, sim,
                                           _spec("trace", trace), None))
        best = plans[0].json if plans else None
        return PlanResult(json=best,
                          plan=json.loads(best) if best else None,
                          fits=bool(plans), plans=plans, summary=summary,
                          report=report)


def _inputs(c, plan_, model, cluster, calibration, precision, engine, zero):
    m = _load_model(c, model)
    cl = _load_cluster(c, cluster)
    cal = _load_calibration(c, calibration)
    p = _load_plan(c, plan_, m, cl)
    p = _override_plan(c, p, precision, engine, zero)
    return m, cl, cal, p


def evaluate(plan_json_or_path, model, cluster, *, precision=None,
             engine=None, zero=None, cost_model=None, allreduce=None,
             reserve_gb: Optional[float] = None, calibration=None,
             seed: int = 1) -> EvalSummary:
    """Price a plan analytically (pp_evaluate), as ``parplan evaluate``.

    The plan: a plan JSON file's path, its text, a dict or a PlanResult.
    precision, engine, zero replace the plan's own (``--precision``,
    ``--engine``, ``--zero``); cost_model "parplan" or "amp";
    allreduce "auto", "ring" or "hier"; reserve_gb, calibration as for
    plan().  A plan that does not fit is a result (fits False)."""
    with _Ctx(seed) as c:
        m, cl, cal, p = _inputs(c, plan_json_or_path, model, cluster,
                                calibration, precision, engine, zero)
        cp = _cost_params(cost_model, allreduce, reserve_gb, None, cal)
        e = c.make(lib.pp_eval_destroy, lib.pp_evaluate, p, m, cl,
                   ctypes.byref(cp))
        report = json.loads(c.capture(
            lambda f: lib.pp_eval_write(c.ctx, e, 1, f)))
        s = _lib.EvalSummary()
        c.check(lib.pp_eval_get_summary(e, ctypes.byref(s)))
        return _from_struct(EvalSummary, s, report=report)


def simulate(plan_json_or_path, model, cluster, *, precision=None,
             engine=None, zero=None, allreduce=None,
             reserve_gb: Optional[float] = None, calibration=None,
             network=None, trace=None, seed: int = 1) -> SimSummary:
    """Run one iteration of a plan in the discrete-event simulator
    (pp_simulate), as ``parplan simulate``.  Arguments as evaluate()'s;
    network "channels" or "links"; trace: a path for the Chrome trace."""
    with _Ctx(seed) as c:
        m, cl, cal, p = _inputs(c, plan_json_or_path, model, cluster,
                                calibration, precision, engine, zero)
        cp = _cost_params(None, allreduce, reserve_gb, network, cal)
        cp.record = 1
        s = c.make(lib.pp_sim_destroy, lib.pp_simulate, p, m, cl,
                   ctypes.byref(cp))
        report = json.loads(c.capture(
            lambda f: lib.pp_sim_write(c.ctx, s, 1, 0, f)))
        if trace is not None:
            c.check(lib.pp_sim_write_trace(c.ctx, s, _spec("trace", trace),
                                           None))
        sm = _lib.SimSummary()
        c.check(lib.pp_sim_get_summary(s, ctypes.byref(sm)))
        return _from_struct(SimSummary, sm, report=report)
