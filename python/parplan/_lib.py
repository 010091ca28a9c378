# SPDX-License-Identifier: MIT
"""Finding and loading libparplan.so, and the ctypes declarations of the
part of the public C API (include/parplan.h) the package calls.

The library is looked for, in order, at ``$PARPLAN_LIB`` (a file), in the
build tree around the package (``<repo>/build/libparplan.so``, then
``<repo>/build-*/libparplan.so``), then wherever the system's loader
finds ``libparplan`` (``ctypes.util.find_library``).  Nothing here
re-implements the library: every structure below mirrors its C
declaration field by field, in order.
"""
import ctypes
import ctypes.util
import glob
import os

__all__ = ["lib", "libc", "library_path", "LibraryNotFound"]


class LibraryNotFound(ImportError):
    """libparplan.so was not found or could not be loaded."""


_HOW = ("build it with ./build.sh (which leaves build/libparplan.so in the "
        "repository), or point PARPLAN_LIB at the file: "
        "export PARPLAN_LIB=/path/to/libparplan.so (docs/PYTHON.md)")


def _candidates():
    env = os.environ.get("PARPLAN_LIB")
    if env:
        yield env, "PARPLAN_LIB"
        return
    here = os.path.dirname(os.path.abspath(__file__))
    # <repo>/python/parplan/_lib.py: the repository is two folders up.
    repo = os.path.dirname(os.path.dirname(here))
    yield os.path.join(repo, "build", "libparplan.so"), None
    for p in sorted(glob.glob(os.path.join(repo, "build-*", "libparplan.so"))):
        yield p, None
    found = ctypes.util.find_library("parplan")
    if found:
        yield found, "find_library"


def _load():
    tried = []
    for path, why in _candidates():
        if why is None and not os.path.isfile(path):
            tried.append(path)
            continue
        if why == "PARPLAN_LIB" and not os.path.isfile(path):
            raise LibraryNotFound(
                f"parplan: PARPLAN_LIB={path} is not a file; {_HOW}")
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            if why is None:  # a build folder's (build-asan's needs ASan
                tried.append(f"{path} ({e})")  # loaded first): the next
                continue
            raise LibraryNotFound(
                f"parplan: cannot load {path}: {e}; {_HOW}") from None
    raise LibraryNotFound(
        "parplan: libparplan.so not found (PARPLAN_LIB is unset; looked at "
        + ", ".join(tried + ["the system's library path"]) + f"); {_HOW}")


# ---- the C structures ------------------------------------------------------

c_int, c_int32, c_int64, c_uint64 = (ctypes.c_int, ctypes.c_int32,
                                     ctypes.c_int64, ctypes.c_uint64)
c_double, c_uint, c_void_p, c_char_p = (ctypes.c_double, ctypes.c_uint,
                                        ctypes.c_void_p, ctypes.c_char_p)
c_enum = ctypes.c_int  # every pp_* enum is an int on the platforms we build
c_size_t = ctypes.c_size_t

ALLOC_FN = ctypes.CFUNCTYPE(c_void_p, c_void_p, c_void_p, c_size_t, c_size_t)
PROGRESS_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_double)


class CtxParams(ctypes.Structure):
    _fields_ = [("alloc", c_void_p), ("alloc_ud", c_void_p),
                ("seed", c_uint64)]


class PlanParams(ctypes.Structure):
    _fields_ = [("global_batch", c_int64), ("micro_batch", c_int32),
                ("tp", c_int32), ("schedule", c_enum), ("recompute", c_int),
                ("optimizer", c_enum), ("period_ms", c_double),
                ("micro_batches", c_int32), ("precision", c_enum),
                ("engine", c_enum), ("zero", c_int32)]


class CostParams(ctypes.Structure):
    _fields_ = [("kind", c_enum), ("allreduce", c_enum),
                ("reserve_bytes", c_int64), ("network", c_enum),
                ("record", c_int), ("calibration", c_void_p)]


class EvalSummary(ctypes.Structure):
    _fields_ = [("iteration_ms", c_double), ("lower_bound_ms", c_double),
                ("steady_ms", c_double), ("fill_ms", c_double),
                ("p2p_ms", c_double), ("allreduce_ms", c_double),
                ("update_ms", c_double), ("throughput", c_double),
                ("bottleneck", c_int32), ("fits", c_int),
                ("worst_device", c_int32), ("margin_bytes", c_double),
                ("est", c_uint), ("time_spread", c_double),
                ("calibrated", c_int)]


class SimSummary(ctypes.Structure):
    _fields_ = [("iteration_ms", c_double), ("lower_bound_ms", c_double),
                ("nevents", c_int64), ("fits", c_int),
                ("worst_device", c_int32), ("analytic_ms", c_double),
                ("time_spread", c_double), ("calibrated", c_int)]


class SearchParams(ctypes.Structure):
    _fields_ = [("global_batch", c_int64), ("top_k", c_int32),
                ("time_limit_s", c_double), ("threads", c_int32),
                ("optimizer", c_enum), ("reserve_bytes", c_int64),
                ("allreduce", c_enum), ("schedules", c_uint),
                ("recompute", c_int), ("subsets", c_int),
                ("max_tp", c_int32), ("max_micro_batch", c_int32),
                ("map_time_s", c_double), ("simulate", c_int),
                ("madpipe", c_int32), ("progress", PROGRESS_FN),
                ("progress_ud", c_void_p), ("precision", c_enum),
                ("engine", c_enum), ("zero", c_int32),
                ("memory_margin", c_double), ("calibration", c_void_p),
                ("stop", c_void_p), ("map_nodes", c_int64),
                ("uniform_tp", c_int)]


class SearchSummary(ctypes.Structure):
    _fields_ = [("points", c_int64), ("pruned", c_int64),
                ("evaluated", c_int64), ("fitting", c_int64),
                ("madpipe", c_int64), ("nplans", c_int32),
                ("lower_bound_ms", c_double), ("seconds", c_double),
                ("timed_out", c_int), ("interrupted", c_int),
                ("simulated", c_int32), ("by_estimate", c_int),
                ("closest_device", c_int32),
                ("closest_need_bytes", c_double),
                ("closest_capacity_bytes", c_double), ("cost", CostParams),
                ("global_batch", c_int64)]


class SearchPlan(ctypes.Structure):
    _fields_ = [("devices", c_int32), ("pp", c_int32), ("dp", c_int32),
                ("tp", c_int32), ("micro_batch", c_int32), ("gas", c_int64),
                ("schedule", c_enum), ("recompute", c_int),
                ("estimate_ms", c_double), ("simulated_ms", c_double),
                ("lower_bound_ms", c_double), ("throughput", c_double),
                ("bubble", c_double), ("mapped", c_int),
                ("peak_share", c_double), ("madpipe", c_int),
                ("zero", c_int32), ("time_spread", c_double),
                ("calibrated", c_int)]


P = ctypes.POINTER
OUT = P(c_void_p)  # the `T **out' of every constructor
ST = c_enum        # pp_status

# name: (restype, argtypes)
_PROTOS = {
    "pp_version": (c_char_p, []),
    "pp_status_str": (c_char_p, [ST]),
    "pp_ctx_params_init": (None, [P(CtxParams)]),
    "pp_ctx_create": (ST, [P(CtxParams), OUT]),
    "pp_ctx_destroy": (None, [c_void_p]),
    "pp_ctx_errmsg": (c_char_p, [c_void_p]),
    "pp_ctx_errcode": (ST, [c_void_p]),
    "pp_precision_name": (c_char_p, [c_enum]),
    "pp_engine_name": (c_char_p, [c_enum]),
    "pp_schedule_name": (c_char_p, [c_enum]),
    "pp_optimizer_name": (c_char_p, [c_enum]),
    "pp_cost_kind_name": (c_char_p, [c_enum]),
    "pp_allreduce_name": (c_char_p, [c_enum]),
    "pp_sim_network_name": (c_char_p, [c_enum]),
    "pp_model_load": (ST, [c_void_p, c_char_p, OUT]),
    "pp_model_read_json": (ST, [c_void_p, c_char_p, c_size_t, c_char_p, OUT]),
    "pp_model_destroy": (None, [c_void_p]),
    "pp_model_dtype": (c_enum, [c_void_p]),
    "pp_model_builtin_name": (c_char_p, [c_int]),
    "pp_cluster_load": (ST, [c_void_p, c_char_p, OUT]),
    "pp_cluster_read_json": (ST, [c_void_p, c_char_p, c_size_t, c_char_p,
                                  OUT]),
    "pp_cluster_destroy": (None, [c_void_p]),
    "pp_cluster_generator_name": (c_char_p, [c_int]),
    "pp_calibration_load": (ST, [c_void_p, c_char_p, OUT]),
    "pp_calibration_read_json": (ST, [c_void_p, c_char_p, c_size_t,
                                      c_char_p, OUT]),
    "pp_calibration_destroy": (None, [c_void_p]),
    "pp_plan_params_init": (None, [P(PlanParams)]),
    "pp_plan_read_json": (ST, [c_void_p, c_char_p, c_size_t, c_char_p,
                               c_void_p, c_void_p, OUT]),
    "pp_plan_load": (ST, [c_void_p, c_char_p, c_void_p, c_void_p, OUT]),
    "pp_plan_write": (ST, [c_void_p, c_void_p, c_char_p, c_void_p]),
    "pp_plan_destroy": (None, [c_void_p]),
    "pp_plan_get_params": (None, [c_void_p, P(PlanParams)]),
    "pp_plan_source": (c_char_p, [c_void_p]),
    "pp_plan_nstage": (c_int32, [c_void_p]),
    "pp_plan_stage_ops": (P(c_int32), [c_void_p, c_int32, P(c_int32)]),
    "pp_plan_nreplica": (c_int32, [c_void_p, c_int32]),
    "pp_plan_replica": (P(c_int32), [c_void_p, c_int32, c_int32]),
    "pp_plan_stage_in_flight": (c_int32, [c_void_p, c_int32]),
    "pp_plan_stage_pattern": (c_int, [c_void_p, c_int32, P(c_double)]),
    "pp_plan_builder_create": (ST, [c_void_p, P(PlanParams), c_char_p, OUT]),
    "pp_plan_builder_destroy": (None, [c_void_p]),
    "pp_plan_builder_add_stage": (ST, [c_void_p, P(c_int32), c_int32,
                                       P(c_int32)]),
    "pp_plan_builder_add_replica": (ST, [c_void_p, c_int32, P(c_int32)]),
    "pp_plan_builder_set_in_flight": (ST, [c_void_p, c_int32, c_int32]),
    "pp_plan_builder_set_pattern": (ST, [c_void_p, c_int32, P(c_double)]),
    "pp_plan_builder_finish": (ST, [c_void_p, OUT]),
    "pp_cost_params_init": (None, [P(CostParams)]),
    "pp_evaluate": (ST, [c_void_p, c_void_p, c_void_p, c_void_p,
                         P(CostParams), OUT]),
    "pp_eval_destroy": (None, [c_void_p]),
    "pp_eval_get_summary": (ST, [c_void_p, P(EvalSummary)]),
    "pp_eval_write": (ST, [c_void_p, c_void_p, c_int, c_void_p]),
    "pp_simulate": (ST, [c_void_p, c_void_p, c_void_p, c_void_p,
                         P(CostParams), OUT]),
    "pp_sim_destroy": (None, [c_void_p]),
    "pp_sim_get_summary": (ST, [c_void_p, P(SimSummary)]),
    "pp_sim_write": (ST, [c_void_p, c_void_p, c_int, c_int, c_void_p]),
    "pp_sim_write_trace": (ST, [c_void_p, c_void_p, c_char_p, c_void_p]),
    "pp_search_params_init": (None, [P(SearchParams)]),
    "pp_plan_search": (ST, [c_void_p, c_void_p, c_void_p, P(SearchParams),
                            OUT]),
    "pp_search_destroy": (None, [c_void_p]),
    "pp_search_get_summary": (ST, [c_void_p, P(SearchSummary)]),
    "pp_search_plan_get": (ST, [c_void_p, c_int32, P(SearchPlan)]),
    "pp_search_plan_at": (c_void_p, [c_void_p, c_int32]),
    "pp_search_write": (ST, [c_void_p, c_void_p, c_void_p, c_void_p, c_int,
                             c_void_p]),
}

class _Lazy:
    """The library, loaded (and its functions declared) on first use, so
    that importing the package needs no library."""

    def __init__(self):
        self._cdll = None
        self.path = None

    def _get(self):
        if self._cdll is None:
            cdll, path = _load()
            for name, (res, args) in _PROTOS.items():
                f = getattr(cdll, name)
                f.restype = res
                f.argtypes = args
            self._cdll, self.path = cdll, path
        return self._cdll

    def __getattr__(self, name):
        return getattr(self._get(), name)


lib = _Lazy()


def library_path() -> str:
    """The path of the library loaded (loading it if need be)."""
    lib._get()
    return lib.path


# The C library's stdio, for the functions that write to a FILE *.
libc = ctypes.CDLL(None)
libc.fopen.restype = c_void_p
libc.fopen.argtypes = [c_char_p, c_char_p]
libc.fclose.restype = c_int
libc.fclose.argtypes = [c_void_p]
