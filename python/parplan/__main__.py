# SPDX-License-Identifier: MIT
"""python -m parplan profile FILE.py:FACTORY --input-shape 1,3,224,224 -o m.json

Commands:
  profile   profile a PyTorch model into a parplan model JSON
            (parplan.profile; docs/PROFILE.md)

The factory is a function of FILE.py (or of an importable module, as
module.name:factory) that takes no arguments and returns the nn.Module.

Inputs, one per positional argument of the model's forward, in order:
  --input-shape S    a comma-separated shape whose first dimension is the
                     batch (the first sample is repeated to each micro-batch
                     size); repeat the option for several inputs
  --input-dtype T    float32 (default), float16, bfloat16, long or int;
                     one for all inputs or one per --input-shape
  --input-high N     integer inputs are drawn from [0, N) (token ids:
                     the vocabulary size; default 2)
  --inputs F.py:FN   instead of shapes: FN(m) returns the tuple of inputs
                     of micro-batch m
"""

import argparse
import importlib
import importlib.util
import os
import sys

_TYPES = {"float32": "float32", "float": "float32", "fp32": "float32",
          "float16": "float16", "fp16": "float16", "half": "float16",
          "bfloat16": "bfloat16", "bf16": "bfloat16",
          "long": "int64", "int64": "int64", "int": "int32", "int32": "int32"}


def _load(spec, what):
    """FILE.py:NAME or module.path:NAME -> the object."""
    if ":" not in spec:
        raise SystemExit("parplan profile: %s %r must be FILE.py:NAME or "
                         "module:NAME" % (what, spec))
    where, name = spec.rsplit(":", 1)
    if where.endswith(".py") or os.path.sep in where:
        if not os.path.exists(where):
            raise SystemExit("parplan profile: %s: no such file" % where)
        modname = "_parplan_user_" + os.path.splitext(
            os.path.basename(where))[0]
        s = importlib.util.spec_from_file_location(modname, where)
        mod = importlib.util.module_from_spec(s)
        sys.modules[modname] = mod
        sys.path.insert(0, os.path.dirname(os.path.abspath(where)))
        s.loader.exec_module(mod)
    else:
        mod = importlib.import_module(where)
    if not hasattr(mod, name):
        raise SystemExit("parplan profile: %s has no %r" % (where, name))
    return getattr(mod, name)


def _positive_ints(what):
    """An argparse type: positive integers separated by commas."""
    def parse(text):
        try:
            xs = [int(x) for x in text.split(",") if x.strip()]
        except ValueError:
            xs = []
        if not xs or any(x < 1 for x in xs):
            raise argparse.ArgumentTypeError(
                "%s is positive integers separated by commas, not %r"
                % (what, text))
        return xs
    return parse


_shape = _positive_ints("a shape (1,3,224,224)")
_ints = _positive_ints("a list of micro-batch sizes")


def _profile_cmd(argv):
    ap = argparse.ArgumentParser(
        prog="python -m parplan profile",
        description="Profile a PyTorch model into a parplan model JSON.",
        epilog=__doc__.split("\n\n", 2)[2],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("factory", help="FILE.py:FUNCTION returning the nn.Module")
    ap.add_argument("--input-shape", action="append", type=_shape,
                    default=[], metavar="S")
    ap.add_argument("--input-dtype", action="append", default=[],
                    metavar="T", choices=sorted(_TYPES))
    ap.add_argument("--input-high", type=int, default=2, metavar="N")
    ap.add_argument("--inputs", metavar="F.py:FN")
    ap.add_argument("--dtype", choices=("fp32", "fp16", "bf16"),
                    help="training precision (default bf16 on a GPU, fp32 "
                         "on the CPU)")
    ap.add_argument("--micro-batches", type=_ints, default=[1, 2, 4, 8],
                    metavar="1,2,4,8")
    ap.add_argument("--granularity", choices=("layer", "op"),
                    default="layer")
    ap.add_argument("--device", help="cuda, cuda:1, cpu (default cuda when "
                                     "available)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--name", help="the model's name (default: its class)")
    ap.add_argument("--loss", metavar="F.py:FN",
                    help="FN(output) -> the scalar loss: profiled as one "
                         "more operator, 'loss'")
    ap.add_argument("-o", "--output", required=True, metavar="FILE")
    a = ap.parse_args(argv)
    if not a.input_shape and not a.inputs:
        ap.error("give the inputs: --input-shape (once per input) or "
                 "--inputs F.py:FN")
    if a.input_shape and a.inputs:
        ap.error("--input-shape and --inputs exclude each other")
    if len(a.input_dtype) > 1 and len(a.input_dtype) != len(a.input_shape):
        ap.error("give one --input-dtype, or one per --input-shape")
    try:
        import torch
    except ImportError:
        raise SystemExit("parplan profile: needs PyTorch (import torch "
                         "failed); on Debian: apt-get install python3-torch")
    from .profile import profile

    model = _load(a.factory, "factory")()
    if not isinstance(model, torch.nn.Module):
        raise SystemExit("parplan profile: %s returned %s, not an "
                         "nn.Module" % (a.factory, type(model).__name__))
    if a.inputs:
        inputs = _load(a.inputs, "--inputs")
    else:
        types = a.input_dtype or ["float32"]
        if len(types) == 1:
            types = types * len(a.input_shape)
        gen = torch.Generator().manual_seed(0)

        def make(shape, t):
            dt = getattr(torch, _TYPES[t])
            if dt.is_floating_point:
                return torch.randn(*shape, generator=gen).to(dt)
            return torch.randint(0, max(1, a.input_high), tuple(shape),
                                 generator=gen, dtype=dt)
        inputs = tuple(make(s, t) for s, t in zip(a.input_shape, types))
    loss_fn = _load(a.loss, "--loss") if a.loss else None
    doc = profile(model, inputs, micro_batches=a.micro_batches,
                  device=a.device, dtype=a.dtype, granularity=a.granularity,
                  warmup=a.warmup, repeat=a.repeat, path=a.output,
                  name=a.name, loss_fn=loss_fn)
    print("parplan profile: %d operators (%s granularity, %s, %s) in %.1f s:"
          " %s" % (len(doc["ops"]), doc["profile"]["granularity"],
                   doc["dtype"], doc["profile"]["device"],
                   doc["profile"]["seconds"], a.output))
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    if argv[0] == "profile":
        return _profile_cmd(argv[1:])
    print("python -m parplan: unknown command %r (commands: profile)"
          % argv[0], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
