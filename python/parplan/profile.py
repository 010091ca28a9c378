# SPDX-License-Identifier: MIT
"""Profile a PyTorch model into a parplan model JSON (docs/PROFILE.md).

``profile(model, example_inputs, ...)`` runs the model, splits it into
operators (its layers, found with forward hooks, or the operators of a
``torch.fx`` trace), and measures for each one, at every micro-batch size
asked for: its forward and backward time (median of ``repeat`` runs after
``warmup``; CUDA events on a GPU, ``time.perf_counter`` with
synchronisation elsewhere), the time of an Adam step of its parameters,
its parameter bytes (tied parameters once), its output bytes and the
bytes of the activations autograd saves for its backward
(``torch.autograd.graph.saved_tensors_hooks``, deduplicated by storage).
The result is the dictionary parplan reads as a model (docs/FORMATS.md,
"Model JSON"), written to ``path`` when one is given.
"""

import datetime
import json
import math
import statistics
import sys
import time
import types
import warnings

import torch
from torch import nn

__all__ = ["profile", "catalog_type", "saved_bytes_of_forward",
           "unique_param_bytes", "FallbackWarning"]

_DTYPES = {"fp32": torch.float32, "fp16": torch.float16,
           "bf16": torch.bfloat16}
_CONTAINERS = (nn.Sequential, nn.ModuleList, nn.ModuleDict)


class FallbackWarning(UserWarning):
    """Operator granularity could not trace the model: layers are used."""


# ---------------------------------------------------------------- helpers

def _dtype_name(dtype):
    for k, v in _DTYPES.items():
        if v == dtype:
            return k
    raise ValueError("dtype must be torch.float32, float16 or bfloat16 "
                     "(or 'fp32', 'fp16', 'bf16'), not %r" % (dtype,))


def _as_dtype(dtype):
    if isinstance(dtype, str):
        if dtype not in _DTYPES:
            raise ValueError("dtype must be one of fp32, fp16, bf16, not %r"
                             % dtype)
        return _DTYPES[dtype]
    _dtype_name(dtype)
    return dtype


def _storage_key(t):
    """(address, bytes) of the storage behind a tensor: what it keeps alive.
    Views of one tensor share it, so deduplicating by it counts memory once.
    """
    try:
        s = t.untyped_storage() if hasattr(t, "untyped_storage") \
            else t.storage()
        return (s.data_ptr(), s.nbytes())
    except (RuntimeError, NotImplementedError, TypeError):
        return (id(t), t.numel() * t.element_size())


def _tensors(obj):
    """Every tensor inside nested tuples, lists and dicts."""
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _tensors(x)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _tensors(x)


def _map(obj, fn):
    if isinstance(obj, torch.Tensor):
        return fn(obj)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*[_map(x, fn) for x in obj])
    if isinstance(obj, (list, tuple)):
        return type(obj)(_map(x, fn) for x in obj)
    if isinstance(obj, dict):
        return {k: _map(v, fn) for k, v in obj.items()}
    return obj


def _out_bytes(obj):
    seen, n = set(), 0
    for t in _tensors(obj):
        k = _storage_key(t)
        if k in seen:
            continue
        seen.add(k)
        n += t.numel() * t.element_size()
    return n


def unique_param_bytes(params, element_size=None):
    """Bytes of parameters, each storage once (tied weights counted once)."""
    seen, n = set(), 0
    for p in params:
        k = _storage_key(p)
        if k in seen:
            continue
        seen.add(k)
        n += p.numel() * (element_size or p.element_size())
    return n


def catalog_type(name, total_memory=None):
    """parplan's GPU catalog name (src/cluster/gpu_catalog.c) for
    ``torch.cuda.get_device_name()``, or None when it has none."""
    n = name.upper().replace("NVIDIA", "").replace("TESLA", "").strip()
    gib = (total_memory or 0) / 2**30
    if "GH200" in n:
        return "GH-96"
    if "H200" in n:
        return "H200"
    if "H100" in n or "H800" in n:
        return "H100"
    if "GB200" in n:
        return "GB200"
    if "B200" in n:
        return "B200"
    if "A100" in n or "A800" in n:
        if "80GB" in n or gib > 50:
            return "A100-80"
        return "A100-40"
    if "V100" in n:
        return "V100-32" if ("32GB" in n or gib > 20) else "V100-16"
    if "L40" in n:                      # L40S, L40: the catalog's L40S
        return "L40S"
    if n.startswith("T4") or " T4" in n:
        return "T4"
    if n.startswith("L4") or " L4" in n:
        return "L4"
    if n.startswith("A10") and not n.startswith("A100"):
        return "A10"
    for num in ("2080", "3090", "4090"):
        if "RTX" in n and num in n:
            return "RTX-" + num
    if "TITAN RTX" in n:
        return "Titan-RTX"
    if "MI250X" in n:
        return "MI250X"
    if "MI300X" in n:
        return "MI300X"
    return None


class _Timer:
    """Elapsed milliseconds of a region: CUDA events on a GPU, else
    time.perf_counter after synchronising the device."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"
        self.device = device

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize(self.device)

    def start(self):
        if self.cuda:
            self.t0 = torch.cuda.Event(enable_timing=True)
            self.t1 = torch.cuda.Event(enable_timing=True)
            self.t0.record()
        else:
            self.sync()
            self.t0 = time.perf_counter()

    def stop(self):
        if self.cuda:
            self.t1.record()
            self.t1.synchronize()
            return self.t0.elapsed_time(self.t1)
        self.sync()
        return (time.perf_counter() - self.t0) * 1e3


def _stats(xs):
    med = statistics.median(xs)
    return med, {"median": med, "min": min(xs), "max": max(xs),
                 "stdev": statistics.pstdev(xs) if len(xs) > 1 else 0.0,
                 "n": len(xs)}


def _autocast(device, dtype):
    if dtype == torch.float32:
        return torch.autocast(device.type, enabled=False)
    return torch.autocast(device.type, dtype=dtype)


# --------------------------------------------------------- one forward pass

class _Unit:
    """One operator of the profile: a callable with its captured inputs."""

    def __init__(self, name, kind, fn):
        self.name = name
        self.kind = kind
        self.fn = fn              # fn(*args, **kwargs) runs it alone
        self.params = []          # parameters it owns (deduplicated)
        self.tied_to = None
        self.points = {}          # micro-batch -> measured dict


def _param_keys(model):
    return {_storage_key(p) for p in model.parameters()}


class _SavedCounter:
    """Pack hook of torch.autograd.graph.saved_tensors_hooks: the bytes of
    every storage autograd saves, once, charged to the current unit;
    parameters (counted as param_bytes) are left out."""

    def __init__(self, exclude):
        self.exclude = exclude
        self.seen = set()
        self.current = None
        self.pending = 0          # saved while no unit ran
        self.by_unit = {}

    def pack(self, t):
        k = _storage_key(t)
        if k not in self.seen and k not in self.exclude and k[1] > 0:
            self.seen.add(k)
            if self.current is None:
                self.pending += k[1]
            else:
                self.by_unit[self.current] = \
                    self.by_unit.get(self.current, 0) + k[1]
        # Not t itself: an operator's own output, saved as t, would hold
        # its grad_fn, which holds the saved t, a cycle inside autograd's
        # C++ graph that Python's collector cannot see; every probe's
        # activations stayed allocated (20 GiB of an H200 for a GPT-2
        # small profiled at micro-batches 1-8).  A detached alias keeps the
        # same storage and breaks the cycle.
        return t.detach()

    def enter(self, key):
        self.current = key
        if self.pending:          # glue before it (a flatten, an add)
            self.by_unit[key] = self.by_unit.get(key, 0) + self.pending
            self.pending = 0

    def leave(self):
        self.current = None

    def flush(self, last_key):
        if self.pending and last_key is not None:
            self.by_unit[last_key] = self.by_unit.get(last_key, 0) + \
                self.pending
            self.pending = 0


def saved_bytes_of_forward(model, inputs, dtype=torch.float32, device=None):
    """Activation bytes one forward saves for backward, measured by one
    saved_tensors_hooks around the whole forward (storages once, parameters
    left out): what the per-operator saved bytes of a profile add up to."""
    device = torch.device(device or "cpu")
    c = _SavedCounter(_param_keys(model))
    c.current = "all"
    with _autocast(device, _as_dtype(dtype)), \
            torch.autograd.graph.saved_tensors_hooks(c.pack, lambda t: t):
        out = model(*inputs)
    del out
    return c.by_unit.get("all", 0)


# ------------------------------------------------------ layer granularity

class _Call:
    __slots__ = ("module", "name", "children", "args", "kwargs", "out",
                 "parent")

    def __init__(self, module, name, parent):
        self.module, self.name, self.parent = module, name, parent
        self.children = []
        self.args = self.kwargs = self.out = None


def _unpatch(patched):
    """Undo the forward wrappers: (module, had its own forward, it)."""
    for mod, had, old in patched:
        if had:
            mod.forward = old
        else:
            del mod.forward


def _call_tree(model, inputs, names):
    """Run the model once with every module's forward wrapped: the tree of
    module calls in execution order (module, name, children)."""
    root = _Call(model, "", None)
    stack = [root]
    patched = []

    def wrap(mod, name, orig):
        def fwd(*a, **k):
            c = _Call(mod, name, stack[-1])
            stack[-1].children.append(c)
            stack.append(c)
            try:
                return orig(*a, **k)
            finally:
                stack.pop()
        return fwd

    for name, mod in model.named_modules():
        if mod is model or isinstance(mod, (nn.ModuleList, nn.ModuleDict)):
            continue
        had = "forward" in mod.__dict__
        patched.append((mod, had, mod.__dict__.get("forward")))
        mod.forward = wrap(mod, name, mod.forward)
    try:
        with torch.no_grad():
            model(*inputs)
    finally:
        _unpatch(patched)
    return root


def _repeated(mod):
    """Has a container below it holding two or more blocks (modules with
    submodules) of one class: the repeated blocks of a network?  (Two
    Dropouts of an MLP are not blocks.)"""
    for m in mod.modules():
        if isinstance(m, _CONTAINERS):
            kids = [x for x in m.children() if next(x.children(), None)]
            if len(kids) >= 2 and len({type(x) for x in kids}) < len(kids):
                return True
    return False


def _select(call):
    """The outermost calls that partition the execution: descend into the
    root, into containers and into modules that hold repeated blocks."""
    out = []
    for c in call.children:
        if c.children and (isinstance(c.module, _CONTAINERS) or
                           _repeated(c.module)):
            out.extend(_select(c))
        else:
            out.append(c)
    return out


def _layer_kind(module, name, last):
    """parplan's kind of a layer, so that the planner and the exports know
    it (docs/COST_MODEL.md "Tensor parallelism": a transformer_layer pays
    Megatron's two all-reduces each way when its time at a tp is
    estimated; docs/EXPORT.md: E, t, L of the Megatron layout and
    torchtitan's names): a module holding an attention (nn.
    MultiheadAttention or a class named *Attention*) and two or more
    Linear layers is a transformer_layer; an Embedding an embedding; a
    *Norm* module a layernorm; the last operator, a Linear, or a module
    named *head* / *lm_head* / *logits*, the logits; else its class name."""
    cls = type(module).__name__
    subs = list(module.modules())
    attention = any(isinstance(m, nn.MultiheadAttention) or
                    "attention" in type(m).__name__.lower() for m in subs)
    linears = sum(isinstance(m, nn.Linear) for m in subs)
    short = (name or "").split(".")[-1].lower()
    if attention and linears >= 2:
        return "transformer_layer"
    if isinstance(module, nn.Embedding):
        return "embedding"
    if "norm" in cls.lower():
        return "layernorm"
    if short in ("head", "lm_head", "logits") or (
            last and isinstance(module, nn.Linear)):
        return "logits"
    return cls


def _layer_units(model, probe_inputs):
    tree = _call_tree(model, probe_inputs, None)
    calls = _select(tree)
    if not calls:
        calls = [_Call(model, type(model).__name__, None)]
    units, count = [], {}
    for i, c in enumerate(calls):
        base = c.name or type(c.module).__name__
        count[base] = count.get(base, 0) + 1
        name = base if count[base] == 1 else "%s#%d" % (base, count[base])
        u = _Unit(name, _layer_kind(c.module, c.name, i == len(calls) - 1),
                  c.module)
        u.module = c.module
        units.append(u)
    # Parameters: each storage once, to the first unit (in execution order)
    # that holds it; a parameter of no unit (a class token, a position
    # embedding, an unused module) goes to the first unit below the module
    # that owns it, else to the first unit.
    seen, owner_of = {}, {}
    for i, u in enumerate(units):
        for p in u.module.parameters():
            k = _storage_key(p)
            if k in seen:
                if seen[k] != i and u.tied_to is None:
                    u.tied_to = units[seen[k]].name
                continue
            seen[k] = i
            u.params.append(p)
    unit_mods = {}
    for i, u in enumerate(units):
        for m in u.module.modules():
            unit_mods.setdefault(id(m), i)
    for mname, mod in model.named_modules():
        for p in mod.parameters(recurse=False):
            k = _storage_key(p)
            if k in seen:
                continue
            target = 0
            for m in mod.modules():
                if id(m) in unit_mods:
                    target = unit_mods[id(m)]
                    break
            seen[k] = target
            units[target].params.append(p)
    return units


def _run_layers(model, units, inputs, counter):
    """One forward of the whole model: each unit's inputs and output
    captured, its saved bytes counted by the counter."""
    by_mod = {}
    for i, u in enumerate(units):
        by_mod.setdefault(id(u.module), []).append(i)
    calls = {}
    captured = {}
    patched = []

    def wrap(mod, orig, idxs):
        def fwd(*a, **k):
            n = calls.get(id(mod), 0)
            calls[id(mod)] = n + 1
            if n >= len(idxs) or counter.current is not None:
                return orig(*a, **k)
            i = idxs[n]
            counter.enter(i)
            try:
                out = orig(*a, **k)
            finally:
                counter.leave()
            captured[i] = (a, k, out)
            return out
        return fwd

    for u in units:
        mod = u.module
        if any(m is mod for m, _, _ in patched):
            continue
        had = "forward" in mod.__dict__
        patched.append((mod, had, mod.__dict__.get("forward")))
        mod.forward = wrap(mod, mod.forward, by_mod[id(mod)])
    try:
        with torch.autograd.graph.saved_tensors_hooks(counter.pack,
                                                      lambda t: t):
            out = model(*inputs)
    finally:
        _unpatch(patched)
    counter.flush(len(units) - 1)
    return captured, out


# -------------------------------------------------------- op granularity

def _fx_units(model, probe_inputs):
    import torch.fx
    gm = torch.fx.symbolic_trace(model)
    mods = dict(gm.named_modules())
    units, node_unit = [], {}
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "output", "get_attr"):
            continue
        if node.op == "call_module":
            sub = mods[node.target]
            fn, kind = sub, type(sub).__name__
        elif node.op == "call_function":
            fn = node.target
            kind = getattr(fn, "__name__", str(fn))
        else:
            meth = node.target
            fn = (lambda m: lambda self, *a, **k: getattr(self, m)(*a, **k)
                  )(meth)
            kind = meth
        u = _Unit(node.name, kind, fn)
        u.node = node
        node_unit[node] = len(units)
        units.append(u)
    seen = set()

    def claim(u, ps):
        for p in ps:
            k = _storage_key(p)
            if k not in seen:
                seen.add(k)
                u.params.append(p)

    for u in units:
        if u.node.op == "call_module":
            claim(u, mods[u.node.target].parameters())
        for a in u.node.all_input_nodes:
            if a.op == "get_attr":
                v = _fetch(gm, a.target)
                if isinstance(v, torch.Tensor):
                    claim(u, [v])
    # the rest: (unused modules' parameters) to the first operator
    claim(units[0], model.parameters())
    return gm, units, node_unit


def _fetch(gm, target):
    v = gm
    for part in target.split("."):
        v = getattr(v, part)
    return v


def _run_fx(gm, units, node_unit, inputs, counter):
    import torch.fx
    captured = {}

    class Interp(torch.fx.Interpreter):
        def run_node(self, n):
            if n not in node_unit:
                return super().run_node(n)
            i = node_unit[n]
            args, kwargs = self.fetch_args_kwargs_from_env(n)
            counter.enter(i)
            try:
                out = super().run_node(n)
            finally:
                counter.leave()
            captured[i] = (args, kwargs, out)
            return out

    with torch.autograd.graph.saved_tensors_hooks(counter.pack, lambda t: t):
        out = Interp(gm).run(*inputs)
    counter.flush(len(units) - 1)
    return captured, out


def _run_loss(loss_fn, out, i, captured, counter):
    """The loss as operator i, on the model's output."""
    counter.enter(i)
    try:
        with torch.autograd.graph.saved_tensors_hooks(counter.pack,
                                                      lambda t: t):
            loss = loss_fn(out)
    finally:
        counter.leave()
    if not (isinstance(loss, torch.Tensor) and loss.numel() == 1):
        raise ValueError("parplan.profile: loss_fn must return a scalar "
                         "tensor, not %s" % type(loss).__name__)
    captured[i] = ((out,), {}, loss)


# ---------------------------------------------------------------- timing

def _leafify(args, kwargs):
    """Fresh inputs for one isolated run: every activation a detached leaf
    (requiring grad when it did, so backward computes its gradient) behind
    a clone (so in-place operators may write it); parameters kept."""
    leaves = []

    def f(t):
        if isinstance(t, nn.Parameter):
            return t
        x = t.detach()
        if t.requires_grad and t.is_floating_point():
            x = x.requires_grad_()
            leaves.append(x)
            return x.clone()
        return x.clone()
    return _map(args, f), _map(kwargs, f), leaves


def _time_unit(u, args, kwargs, device, dtype, warmup, repeat):
    timer = _Timer(device)
    fwd, bwd = [], []
    for it in range(warmup + repeat):
        a, k, _ = _leafify(args, kwargs)
        timer.start()
        with _autocast(device, dtype):
            out = u.fn(*a, **k)
        t = timer.stop()
        outs = [o for o in _tensors(out) if o.requires_grad]
        grads = [torch.ones_like(o) for o in outs]
        if outs:
            timer.start()
            torch.autograd.backward(outs, grads)
            tb = timer.stop()
        else:
            tb = 0.0
        for p in u.params:
            p.grad = None
        if it >= warmup:
            fwd.append(t)
            bwd.append(tb)
        del out, outs, grads
    return _stats(fwd), _stats(bwd)


def _time_whole(model, inputs, loss_fn, device, dtype, warmup, repeat):
    """Median forward and backward of the whole model (with the loss when
    there is one), as training runs them: one pass, no isolation."""
    timer = _Timer(device)
    fwd, bwd = [], []
    for it in range(warmup + repeat):
        timer.start()
        with _autocast(device, dtype):
            out = model(*inputs)
            if loss_fn is not None:
                out = loss_fn(out)
        t = timer.stop()
        outs = [o for o in _tensors(out) if o.requires_grad]
        timer.start()
        if outs:
            torch.autograd.backward(outs, [torch.ones_like(o) for o in outs])
        tb = timer.stop()
        for p in model.parameters():
            p.grad = None
        if it >= warmup:
            fwd.append(t)
            bwd.append(tb)
        del out, outs
    return statistics.median(fwd), statistics.median(bwd)


def _scale_to_whole(units, m, whole):
    """Scale the operators' times at micro-batch m so that they add up to
    the whole model's: what isolation adds is spread in proportion."""
    wf, wb = whole
    sf = sum(u.points[m]["fwd_ms"] for u in units)
    sb = sum(u.points[m]["bwd_ms"] for u in units)
    for u in units:
        pt = u.points[m]
        if sf > 0:
            pt["fwd_ms"] *= wf / sf
        if sb > 0:
            pt["bwd_ms"] *= wb / sb
    return {"whole_fwd_ms": _r(wf), "whole_bwd_ms": _r(wb),
            "operators_fwd_ms": _r(sf), "operators_bwd_ms": _r(sb)}


def _time_update(params, device, warmup, repeat):
    """A measured torch.optim.Adam step over copies of the parameters (the
    model's own are left untouched)."""
    ps = [p.detach().clone().float().requires_grad_() for p in params
          if p.is_floating_point()]
    if not ps:
        return 0.0, None
    for p in ps:
        p.grad = torch.randn_like(p)
    opt = torch.optim.Adam(ps, lr=1e-4)
    timer = _Timer(device)
    xs = []
    for it in range(warmup + repeat):
        timer.start()
        opt.step()
        t = timer.stop()
        if it >= warmup:
            xs.append(t)
    return _stats(xs)


# ------------------------------------------------------------------ driver

def _inputs_for(example_inputs, m, device):
    if callable(example_inputs):
        ins = example_inputs(m)
    else:
        ins = example_inputs

        def rep(t):
            s = t[:1]
            return s.repeat(m, *([1] * (t.dim() - 1))) if t.dim() else t
        ins = _map(tuple(ins) if isinstance(ins, (list, tuple)) else (ins,),
                   rep)
    if isinstance(ins, torch.Tensor):
        ins = (ins,)
    return _map(tuple(ins), lambda t: t.to(device))


def _device_fields(device):
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        gname = torch.cuda.get_device_name(device)
        t = catalog_type(gname, props.total_memory)
        if t is None:
            t = "".join(ch if ch.isalnum() or ch in "-_" else "-"
                        for ch in gname.strip()) or "cuda"
            warnings.warn("parplan: GPU %r is not in parplan's catalog; "
                          "reference_type %r has speed 1 (a V100)"
                          % (gname, t))
        return t, gname
    return None, device.type


def profile(model, example_inputs, micro_batches=(1, 2, 4, 8), device=None,
            dtype=None, granularity="layer", warmup=3, repeat=10, path=None,
            name=None, loss_fn=None):
    """Profile ``model`` into a parplan model JSON (a dict; also written
    to ``path`` when given).

    example_inputs: the forward's positional inputs (a tensor or a tuple),
        whose first dimension is the batch: the first sample is repeated
        to each micro-batch size; or a callable ``f(m)`` giving the inputs
        of micro-batch ``m``.
    micro_batches: the sizes measured; the smallest is the model's
        reference ``micro_batch``, the others become ``times`` entries.
    device: default ``cuda`` when available, else ``cpu``.
    dtype: the precision trained in: torch.float32/float16/bfloat16 or
        'fp32'/'fp16'/'bf16'; reduced precision runs under torch.autocast.
        Default bf16 on a GPU, fp32 on the CPU (bf16 autocast on the CPU
        is slow or missing in older torch).
    granularity: 'layer' (the model's blocks and top-level modules, by
        forward hooks) or 'op' (the operators of a torch.fx trace; when
        tracing fails, a FallbackWarning and layer granularity).
    loss_fn: ``loss_fn(output)`` -> the scalar loss of the model's output
        (make the targets inside, from the output's shape).  Given, the
        loss is one more operator, ``loss`` of kind ``loss``, measured as
        the others (its time, and the fp32 logits and softmax that a
        cross entropy saves).  Without it backward starts from a gradient
        of ones at the output and the loss costs nothing.

    Each operator is timed alone, which adds its launch latency and an
    autograd start to every one (on an H200, ResNet-50 at micro-batch
    32: 28.3 ms alone against 16.2 ms for the whole network); so the
    whole model is timed too, at every micro-batch size, and the
    operators' times are scaled to add up to it (likewise the optimizer
    step, measured once over all parameters).  ``profile.whole`` in the
    result keeps both sums.
    """
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    if dtype is None:
        dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    dtype = _as_dtype(dtype)
    if granularity not in ("layer", "op"):
        raise ValueError("granularity must be 'layer' or 'op', not %r"
                         % (granularity,))
    mbs = sorted({int(m) for m in micro_batches})
    if not mbs or mbs[0] < 1:
        raise ValueError("micro_batches must be positive integers")
    if warmup < 0 or repeat < 1:
        raise ValueError("warmup must be >= 0 and repeat >= 1")
    model = model.to(device)
    was_training = model.training
    model.train()
    t_start = time.perf_counter()
    try:
        doc = _profile(model, example_inputs, mbs, device, dtype,
                       granularity, warmup, repeat, name, loss_fn)
    finally:
        model.train(was_training)
    doc["profile"]["seconds"] = round(time.perf_counter() - t_start, 3)
    if path:
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    return doc


def _profile(model, example_inputs, mbs, device, dtype, granularity, warmup,
             repeat, name, loss_fn):
    ref = mbs[0]
    probe = _inputs_for(example_inputs, ref, device)
    used = granularity
    gm = node_unit = None
    if granularity == "op":
        try:
            gm, units, node_unit = _fx_units(model, probe)
        except Exception as e:  # torch.fx raises TraceError, TypeError, ...
            msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
            warnings.warn("parplan.profile: torch.fx could not trace %s "
                          "(%s: %s); profiling at layer granularity instead"
                          % (type(model).__name__, type(e).__name__, msg),
                          FallbackWarning, stacklevel=3)
            used = "layer"
    if used == "layer":
        units = _layer_units(model, probe)
    model_units = list(units)
    loss_unit = None
    if loss_fn is not None:
        if "loss" in {u.name for u in units}:
            raise ValueError("parplan.profile: the model has an operator "
                             "named 'loss'; the loss_fn's operator needs "
                             "that name")
        loss_unit = _Unit("loss", "loss", loss_fn)
        loss_unit.node = None
        units.append(loss_unit)
    psize = torch.tensor([], dtype=dtype).element_size()
    exclude = _param_keys(model)
    edges = None
    whole = {}
    for m in mbs:
        inputs = _inputs_for(example_inputs, m, device)
        counter = _SavedCounter(exclude)
        with _autocast(device, dtype):
            if used == "op":
                captured, out = _run_fx(gm, model_units, node_unit, inputs,
                                        counter)
            else:
                captured, out = _run_layers(model, model_units, inputs,
                                            counter)
            if loss_unit is not None:
                _run_loss(loss_fn, out, len(units) - 1, captured, counter)
            del out
        if m == ref:
            edges = _edges(units, captured, used, node_unit)
        for i, u in enumerate(units):
            if i not in captured:
                raise RuntimeError("parplan.profile: operator %s did not run "
                                   "at micro-batch %d" % (u.name, m))
            a, k, out = captured[i]
            (f, fs), (b, bs) = _time_unit(u, a, k, device, dtype, warmup,
                                          repeat)
            u.points[m] = {"fwd_ms": f, "bwd_ms": b, "fwd_spread": fs,
                           "bwd_spread": bs, "out_bytes": _out_bytes(out),
                           "saved_bytes": counter.by_unit.get(i, 0)}
        del captured
        whole[m] = _scale_to_whole(
            units, m, _time_whole(model, inputs, loss_fn, device, dtype,
                                  warmup, repeat))
    ops = []
    uw, ur = min(warmup, 2), max(1, min(repeat, 5))
    upds = [_time_update(u.params, device, uw, ur) for u in units]
    all_params = [p for u in units for p in u.params]
    upd_whole, _ = _time_update(all_params, device, uw, ur)
    upd_sum = sum(x[0] for x in upds)
    upd_scale = upd_whole / upd_sum if upd_sum > 0 else 1.0
    for u, (upd, ups) in zip(units, upds):
        upd *= upd_scale
        p0 = u.points[ref]
        op = {"name": u.name, "kind": u.kind,
              "fwd_ms": _r(p0["fwd_ms"]), "bwd_ms": _r(p0["bwd_ms"]),
              "update_ms": _r(upd),
              "param_bytes": sum(p.numel() for p in u.params) * psize
              if dtype != torch.float32 else
              sum(p.numel() * p.element_size() for p in u.params),
              "out_bytes": p0["out_bytes"],
              "saved_bytes": p0["saved_bytes"]}
        if u.tied_to:
            op["tied_to"] = u.tied_to
        times = [{"micro_batch": m, "fwd_ms": _r(u.points[m]["fwd_ms"]),
                  "bwd_ms": _r(u.points[m]["bwd_ms"])} for m in mbs[1:]]
        if times:
            op["times"] = times
        op["spread"] = {str(m): {"fwd": _rs(u.points[m]["fwd_spread"]),
                                 "bwd": _rs(u.points[m]["bwd_spread"]),
                                 "out_bytes": u.points[m]["out_bytes"],
                                 "saved_bytes": u.points[m]["saved_bytes"]}
                        for m in mbs}
        if ups:
            op["spread"]["update"] = _rs(ups)
        ops.append(op)
    reftype, devname = _device_fields(device)
    doc = {"name": name or type(model).__name__, "micro_batch": ref,
           "dtype": _dtype_name(dtype)}
    if reftype:
        doc["reference_type"] = reftype
    nparams = sum(p.numel() for p in model.parameters())
    doc["hyper"] = {"parameters": nparams}
    doc["profile"] = {
        "tool": "parplan.profile", "torch": torch.__version__,
        "date": datetime.datetime.now(datetime.timezone.utc)
        .strftime("%Y-%m-%dT%H:%M:%SZ"),
        "device": devname, "granularity": used,
        "granularity_asked": granularity, "micro_batches": mbs,
        "warmup": warmup, "repeat": repeat,
        "timing": "CUDA events" if device.type == "cuda"
        else "time.perf_counter",
        "update": "torch.optim.Adam step over fp32 copies of the "
                  "operator's parameters, scaled to one step over all",
        "whole": {"update": {"whole_ms": _r(upd_whole),
                             "operators_ms": _r(upd_sum)},
                  "micro_batches": {str(m): whole[m] for m in mbs}}}
    if loss_fn is not None:
        doc["profile"]["loss"] = getattr(loss_fn, "__name__", "loss_fn")
    doc["ops"] = ops
    if edges is not None:
        doc["edges"] = edges
    return doc


def _r(x):
    return float("%.6g" % x)


def _rs(s):
    return {k: (_r(v) if isinstance(v, float) else v) for k, v in s.items()}


def _edges(units, captured, used, node_unit):
    """The dependencies: fx's node users at op granularity; at layer
    granularity a unit's input whose storage another unit produced, else
    the unit before it. None when they are exactly the chain."""
    edges = []
    if used == "op":
        for i, u in enumerate(units):
            if u.node is None:      # the loss, after the output's producer
                made = {}
                for j in range(i):
                    for t in _tensors(captured[j][2]):
                        made[_storage_key(t)] = j
                srcs = sorted({made[k] for k in (
                    _storage_key(t) for t in _tensors(captured[i][0]))
                    if k in made}) or [i - 1]
                for j in srcs:
                    edges.append({"from": units[j].name, "to": u.name,
                                  "bytes": _out_bytes(captured[j][2])})
                continue
            seen = set()
            for a in u.node.all_input_nodes:
                j = node_unit.get(a)
                if j is None or j in seen:
                    continue
                seen.add(j)
                edges.append({"from": units[j].name, "to": u.name,
                              "bytes": _out_bytes(captured[j][2])})
    else:
        made = {}
        for i in range(len(units)):
            a, k, out = captured[i]
            srcs = {}
            for t in _tensors((a, k)):
                j = made.get(_storage_key(t))
                if j is not None and j < i:
                    srcs[j] = srcs.get(j, 0) + t.numel() * t.element_size()
            if not srcs and i > 0:
                srcs[i - 1] = _out_bytes(captured[i - 1][2])
            for j in sorted(srcs):
                edges.append({"from": units[j].name, "to": units[i].name,
                              "bytes": srcs[j]})
            for t in _tensors(out):
                made[_storage_key(t)] = i
    chain = len(edges) == len(units) - 1 and all(
        e["from"] == units[i].name and e["to"] == units[i + 1].name and
        e["bytes"] == _out_bytes(captured[i][2])
        for i, e in enumerate(edges))
    return None if chain else edges


class _CallableModule(types.ModuleType):
    """parplan.profile is both this module and the function: importing the
    submodule replaces the package's lazy profile() with the module (the
    import system sets the attribute), so the module calls profile()."""

    def __call__(self, *args, **kwargs):
        return profile(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
