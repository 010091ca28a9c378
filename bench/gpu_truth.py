#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One real GPU against parplan's predictions: train, measure, compare.

    PYTHONPATH=python python3 bench/gpu_truth.py [--bin build/parplan]
        [--out DIR] [--device cuda] [--small]

What it measures, on the GPU it runs on (needs torch; nvidia-smi for the
memory that nvidia-smi shows):

1. The fixed runtime memory of a PyTorch process, in a child process, by
   nvidia-smi's memory.used: before CUDA, after the context (one tensor),
   after a bf16 matrix product (cuBLAS's handle and workspace), after a
   one-rank NCCL process group and an all-reduce.  docs/COST_MODEL.md
   "Fixed runtime memory" cites these figures.
2. parplan.profile of a GPT-2 small (124M parameters, sequence 1024,
   examples/profile_gpt.py) and of torchvision's ResNet-50, in bf16.
3. Real training of the same networks on the one GPU: torch.autocast
   bf16, fp32 parameters, torch.optim.Adam, gradient accumulation over M
   micro-batches, a cross-entropy loss (profiled as the loss operator); per step the median time (CUDA
   events around forward, backward, optimizer step and zero_grad), and
   torch's peak allocated and reserved bytes and nvidia-smi's memory.used.
4. parplan's prediction of each run (`parplan evaluate --json` of a one-
   stage plan on a one-device cluster of the GPU's catalog type, engine
   torch, precision bf16, optimizer adam-mixed), from the profile and from
   the FLOP-based generators (transformer:..., resnet:...).

It prints one table (measured, predicted, ratio) and writes
gpu_truth.json, the table and the profiles into --out.  --small runs a
4-layer GPT and a ResNet-18 at tiny sizes, for a smoke test on a CPU.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "examples"))


def smi_used_mib(index=0):
    """nvidia-smi's memory.used of GPU `index` in MiB, or None."""
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=memory.used",
                            "--format=csv,noheader,nounits", "-i",
                            str(index)], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL,
                           universal_newlines=True, timeout=30)
        return int(r.stdout.strip().splitlines()[0])
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return None


def probe_runtime():
    """Child process: nvidia-smi's figure at each step of a process's
    start, and what torch's allocator holds at each."""
    import torch
    out = {"before_mib": smi_used_mib()}
    dev = torch.device("cuda", 0)
    x = torch.zeros(1, device=dev)
    torch.cuda.synchronize()
    out["context_mib"] = smi_used_mib()
    out["context_reserved"] = torch.cuda.memory_reserved()
    a = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
    b = a @ a
    torch.cuda.synchronize()
    out["cublas_mib"] = smi_used_mib()
    out["cublas_reserved"] = torch.cuda.memory_reserved()
    del a, b, x
    try:
        import torch.distributed as dist
        dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29517",
                                rank=0, world_size=1)
        t = torch.ones(1 << 20, device=dev)
        dist.all_reduce(t)
        torch.cuda.synchronize()
        out["nccl_mib"] = smi_used_mib()
        out["nccl_reserved"] = torch.cuda.memory_reserved()
        dist.destroy_process_group()
    except Exception as e:  # NCCL missing or refused: say so
        out["nccl_error"] = "%s: %s" % (type(e).__name__, e)
    print(json.dumps(out))


def run_parplan(binary, args):
    r = subprocess.run([binary] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    if r.returncode not in (0, 3):   # 3: a device over capacity
        raise RuntimeError("parplan %s: exit %d\n%s%s"
                           % (" ".join(args), r.returncode, r.stdout,
                              r.stderr))
    return r.stdout


def predict(binary, tmp, model_spec, gtype, m, M):
    """parplan's evaluate of one stage on one `gtype` device."""
    info = json.loads(run_parplan(binary, ["model", model_spec, "--json"]))
    n = info["operators"]
    cluster = {"device_types": {gtype: {}},
               "devices": [{"name": "g0", "type": gtype, "node": 0}],
               "bandwidth_GBps": [[0]], "latency_us": 0}
    plan = {"global_batch": m * M, "micro_batch": m, "micro_batches": M,
            "tp": 1, "schedule": "1f1b", "recompute": False,
            "optimizer": "adam-mixed", "precision": "bf16",
            "engine": "torch",
            "stages": [{"ops": list(range(n)), "replicas": [["g0"]]}]}
    cpath = os.path.join(tmp, "cluster.json")
    ppath = os.path.join(tmp, "plan.json")
    with open(cpath, "w") as f:
        json.dump(cluster, f)
    with open(ppath, "w") as f:
        json.dump(plan, f)
    ev = json.loads(run_parplan(binary, ["evaluate", ppath, "--model",
                                         model_spec, "--cluster", cpath,
                                         "--json"]))
    mem = ev["memory"][0]
    return {"iteration_ms": ev["iteration_ms"],
            "update_ms": ev["breakdown"]["update_ms"],
            "estimated_times": ev.get("estimated_times"),
            "total_bytes": mem["total_bytes"],
            "live_bytes": sum(mem.get(k, 0) for k in
                              ("model_bytes", "activation_bytes",
                               "buffer_bytes", "transient_bytes")),
            "memory": mem}


def train(torch, model, make_batch, loss_fn, m, M, device, steps, warmup):
    """Median step time (ms) and peak memory of real training."""
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-5)
    batches = [make_batch(m) for _ in range(M)]
    batches = [tuple(t.to(device) for t in b) for b in batches]
    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    times, opts = [], []
    import time
    for it in range(warmup + steps):
        if cuda:
            e0 = torch.cuda.Event(enable_timing=True)
            e1 = torch.cuda.Event(enable_timing=True)
            e0.record()
        else:
            t0 = time.perf_counter()
        for x, y in batches:
            with torch.autocast(device.type, dtype=torch.bfloat16):
                out = model(x)
            loss = loss_fn(out.float(), y) / M
            loss.backward()
        if cuda:
            em = torch.cuda.Event(enable_timing=True)
            em.record()
        else:
            tm = time.perf_counter()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if cuda:
            e1.record()
            e1.synchronize()
            ms = e0.elapsed_time(e1)
            oms = em.elapsed_time(e1)
        else:
            ms = (time.perf_counter() - t0) * 1e3
            oms = (time.perf_counter() - tm) * 1e3
        if it >= warmup:
            times.append(ms)
            opts.append(oms)
    res = {"m": m, "M": M, "step_ms": statistics.median(times),
           "step_ms_min": min(times), "step_ms_max": max(times),
           "optimizer_ms": statistics.median(opts)}
    if cuda:
        res["peak_allocated"] = torch.cuda.max_memory_allocated()
        res["peak_reserved"] = torch.cuda.max_memory_reserved()
        used = smi_used_mib(device.index or 0)
        res["smi_used_bytes"] = None if used is None else used * 2**20
    del opt, batches
    model.zero_grad(set_to_none=True)
    if cuda:
        torch.cuda.empty_cache()
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.environ.get("PARPLAN_BIN") or
                    os.path.join(ROOT, "build", "parplan"))
    ap.add_argument("--out", default=os.environ.get("OUT") or ".")
    ap.add_argument("--device", default=None)
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--probe-runtime", action="store_true",
                    help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.probe_runtime:
        probe_runtime()
        return 0
    import torch
    from torch.nn import functional as F
    from parplan.profile import catalog_type, profile
    from profile_gpt import make_gpt

    device = torch.device(args.device or
                          ("cuda" if torch.cuda.is_available() else "cpu"))
    cuda = device.type == "cuda"
    if cuda and device.index is None:
        device = torch.device("cuda", 0)
    report = {"torch": torch.__version__}
    if cuda:
        props = torch.cuda.get_device_properties(device)
        report["gpu"] = torch.cuda.get_device_name(device)
        report["gpu_memory_bytes"] = props.total_memory
        gtype = catalog_type(report["gpu"], props.total_memory)
        r = subprocess.run([sys.executable, os.path.abspath(__file__),
                            "--probe-runtime"], stdout=subprocess.PIPE,
                           universal_newlines=True, timeout=300)
        try:
            report["runtime"] = json.loads(r.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            report["runtime"] = {"error": r.stdout[-2000:]}
    else:
        gtype = "V100-16"           # the smoke test's stand-in type
    report["catalog_type"] = gtype
    tmp = tempfile.mkdtemp(prefix="parplan-gpu-")
    small = args.small
    steps, warmup = (2, 1) if small else (10, 3)
    rows = []

    # -- GPT-2 small -----------------------------------------------------
    L, H, A, V, S = (4, 128, 4, 1000, 64) if small else (12, 768, 12,
                                                          50257, 1024)
    gen = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    gpt = make_gpt(L, H, A, V, S)

    def gpt_inputs(m):
        return (torch.randint(0, V, (m, S), generator=gen),)

    def gpt_batch(m):
        return (torch.randint(0, V, (m, S), generator=gen),
                torch.randint(0, V, (m, S), generator=gen))

    def gpt_loss(out, y):
        return F.cross_entropy(out.view(-1, out.shape[-1]), y.view(-1))

    def ce_profile(out):
        # the training's loss on the profiled output (targets: class 0)
        out = out.float()
        flat = out.view(-1, out.shape[-1])
        return F.cross_entropy(flat, torch.zeros(
            flat.shape[0], dtype=torch.long, device=flat.device))

    mbs = (1, 2) if small else (1, 2, 4, 8)
    gpath = os.path.join(args.out, "gpt2-124m-%s.json" % gtype)
    doc = profile(gpt, gpt_inputs, micro_batches=mbs, device=device,
                  dtype=torch.bfloat16, warmup=1 if small else 3,
                  repeat=2 if small else 10, path=gpath, name="gpt2-124m",
                  loss_fn=ce_profile)
    report["gpt_profile_seconds"] = doc["profile"]["seconds"]
    gen_spec = ("transformer:layers=%d,hidden=%d,heads=%d,seq=%d,vocab=%d,"
                "gpu=%s,tie=1,bytes=2" % (L, H, A, S, V, gtype))
    for m in mbs:
        meas = train(torch, gpt.to(device), gpt_batch, gpt_loss, m, 4,
                     device, steps, warmup)
        rows.append(("gpt2-124m", m, meas,
                     predict(args.bin, tmp, gpath, gtype, m, 4),
                     predict(args.bin, tmp, gen_spec, gtype, m, 4)))
    del gpt
    if cuda:
        torch.cuda.empty_cache()

    # -- ResNet-50 -------------------------------------------------------
    try:
        import torchvision
    except ImportError:
        torchvision = None
    if torchvision is not None:
        net = (torchvision.models.resnet18() if small
               else torchvision.models.resnet50())
        img = 32 if small else 224
        rmbs = (2, 4) if small else (32, 64)

        def rn_inputs(m):
            return (torch.randn(m, 3, img, img, generator=gen),)

        def rn_batch(m):
            return (torch.randn(m, 3, img, img, generator=gen),
                    torch.randint(0, 1000, (m,), generator=gen))

        rpath = os.path.join(args.out, "resnet50-%s.json" % gtype)
        doc = profile(net, rn_inputs, micro_batches=rmbs, device=device,
                      dtype=torch.bfloat16, warmup=1 if small else 3,
                      repeat=2 if small else 10, path=rpath, name="resnet50",
                      loss_fn=ce_profile)
        report["resnet_profile_seconds"] = doc["profile"]["seconds"]
        rspec = "resnet:depth=%d,batch=%d,image=%d,gpu=%s" % (
            18 if small else 50, rmbs[0], img, gtype)
        for m in rmbs:
            meas = train(torch, net.to(device), rn_batch, F.cross_entropy,
                         m, 1, device, steps, warmup)
            try:
                gen_pred = predict(args.bin, tmp, rspec, gtype, m, 1)
            except RuntimeError as e:   # depth 18 is not a generator depth
                gen_pred = {"error": str(e).splitlines()[0]}
            rows.append(("resnet50", m, meas,
                         predict(args.bin, tmp, rpath, gtype, m, 1),
                         gen_pred))

    report["rows"] = [{"model": r[0], "micro_batch": r[1], "measured": r[2],
                       "predicted_profile": r[3], "predicted_flops": r[4]}
                      for r in rows]
    lines = ["GPU %s (parplan type %s), torch %s"
             % (report.get("gpu", "none"), gtype, report["torch"])]
    rt = report.get("runtime", {})
    if "context_mib" in rt:
        lines.append("runtime memory (nvidia-smi MiB above the idle %s): "
                     "context %s, +cuBLAS %s, +NCCL %s"
                     % (rt.get("before_mib"),
                        rt["context_mib"] - rt["before_mib"],
                        rt.get("cublas_mib", 0) - rt["before_mib"],
                        (rt["nccl_mib"] - rt["before_mib"])
                        if "nccl_mib" in rt else rt.get("nccl_error")))
    lines.append("%-10s %3s %3s | %9s %9s %5s %9s %5s | %7s %7s %7s %7s"
                 % ("model", "m", "M", "step ms", "profile", "ratio",
                    "flops", "ratio", "alloc", "live", "smi", "total"))
    gib = 2.0**30
    for name, m, meas, pp, pf in rows:
        def ratio(p):
            return p / meas["step_ms"] if meas["step_ms"] else float("nan")
        fl = pf.get("iteration_ms", float("nan"))
        lines.append(
            "%-10s %3d %3d | %9.2f %9.2f %5.2f %9.2f %5.2f | %7.2f %7.2f "
            "%7.2f %7.2f"
            % (name, m, meas["M"], meas["step_ms"], pp["iteration_ms"],
               ratio(pp["iteration_ms"]), fl, ratio(fl),
               meas.get("peak_allocated", 0) / gib, pp["live_bytes"] / gib,
               (meas.get("smi_used_bytes") or 0) / gib,
               pp["total_bytes"] / gib))
    lines.append("step ms: measured median; profile/flops: parplan's "
                 "iteration_ms from the profile and from the generator; "
                 "alloc: torch's peak allocated GiB; live: parplan's "
                 "model+activation+buffer+transient GiB; smi: nvidia-smi "
                 "GiB after the steps; total: parplan's device total GiB")
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(args.out, "gpu_truth.json"), "w") as f:
        json.dump(report, f, indent=1)
    with open(os.path.join(args.out, "gpu_truth.txt"), "w") as f:
        f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
