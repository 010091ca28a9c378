# SPDX-License-Identifier: MIT
"""parplan: a planner for distributed training, from Python.

    import parplan
    r = parplan.plan("gpt2-amp", "amp-het-cluster", 32)
    print(r.plan["stages"], r.plans[0].simulated_ms)
    s = parplan.simulate(r, "gpt2-amp", "amp-het-cluster")

Everything goes through the C library libparplan.so (found as
docs/PYTHON.md says: $PARPLAN_LIB, the repository's build/, then the
system's library path); every error of the library raises parplan.Error
with its message.
"""
from ._lib import LibraryNotFound, library_path
from .api import (Error, EvalSummary, PlanResult, SearchPlan, SimSummary,
                  builtin_models, cluster_generators, evaluate,
                  library_version, plan, simulate)

__version__ = "0.1.0"

__all__ = ["Error", "EvalSummary", "LibraryNotFound", "PlanResult",
           "SearchPlan", "SimSummary", "__version__", "builtin_models",
           "cluster_generators", "evaluate", "library_path",
           "library_version", "plan", "profile", "simulate"]


def profile(*args, **kwargs):
    """Profile a model with torch into a parplan model (parplan.profile;
    imported only when called, so that importing parplan needs no torch)."""
    from .profile import profile as _profile
    return _profile(*args, **kwargs)
