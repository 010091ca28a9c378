# SPDX-License-Identifier: MIT
"""parplan.profile: PyTorch models profiled into model JSON that parplan
plans (docs/PROFILE.md).

    /usr/bin/python3 tests/test_python_profile.py [PARPLAN_BINARY]

The binary defaults to $PARPLAN_BIN, else build/parplan.  Every test is
skipped, with the reason, when torch (Debian: python3-torch) or
torchvision (python3-torchvision) is missing.  Runs on the CPU, or on
the device PARPLAN_TEST_DEVICE names (``cuda``: CUDA events, the GPU's
catalog name; the same checks, in fp32 so that the byte counts compare).
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import unittest
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "examples"))

BIN = os.environ.get("PARPLAN_BIN") or os.path.join(ROOT, "build", "parplan")
DEV = os.environ.get("PARPLAN_TEST_DEVICE", "cpu")

try:
    import torch
    from torch import nn
    HAVE_TORCH = ""
except ImportError as e:  # pragma: no cover
    HAVE_TORCH = "torch is missing (%s): apt-get install python3-torch" % e
try:
    import torchvision
    HAVE_TV = ""
except ImportError as e:  # pragma: no cover
    HAVE_TV = ("torchvision is missing (%s): apt-get install "
               "python3-torchvision" % e)

if not HAVE_TORCH:
    from parplan.profile import FallbackWarning, catalog_type, profile


def prof(model, inputs, **kw):
    """parplan.profile on the test's device, in fp32."""
    return profile(model, inputs, device=DEV, dtype="fp32", **kw)


def storage_key(t):
    s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    return (s.data_ptr(), s.nbytes())


def whole_forward_saved(model, inputs, loss_fn=None):
    """One saved_tensors_hooks around the whole forward: bytes of the
    storages autograd saves, each once, parameters left out."""
    params = {storage_key(p) for p in model.parameters()}
    seen = set()

    def pack(t):
        k = storage_key(t)
        if k not in params:
            seen.add(k)
        return t.detach()   # t itself: a leaking cycle (parplan/profile.py)
    dev = next(model.parameters()).device
    inputs = tuple(t.to(dev) for t in inputs)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(*inputs)
        if loss_fn is not None:
            out = loss_fn(out)
    del out
    return sum(k[1] for k in seen)


def exact_param_bytes(model):
    # model.parameters() yields a tied parameter once
    return sum(p.numel() * p.element_size() for p in model.parameters())


@unittest.skipIf(HAVE_TORCH, HAVE_TORCH)
class Profile(unittest.TestCase):
    tmp = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="parplan-profile-")
        torch.manual_seed(0)

    def plan(self, doc, tag, cluster="hier:2x4", batch=8):
        path = os.path.join(self.tmp, tag + ".json")
        with open(path, "w") as f:
            json.dump(doc, f)
        r = subprocess.run([BIN, "plan", "--model", path, "--cluster",
                            cluster, "--batch", str(batch), "--time-limit",
                            "20"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(r.returncode, 0, "parplan plan %s:\n%s%s"
                         % (tag, r.stdout, r.stderr))
        self.assertIn("best:", r.stdout)
        return r.stdout

    def check_doc(self, doc, model, inputs, mbs, loss_fn=None):
        self.assertEqual(doc["dtype"], "fp32")
        self.assertEqual(doc["micro_batch"], mbs[0])
        self.assertEqual(doc["profile"]["torch"], torch.__version__)
        if DEV == "cpu":
            self.assertNotIn("reference_type", doc)
            self.assertEqual(doc["profile"]["device"], "cpu")
        else:
            gname = torch.cuda.get_device_name()
            self.assertEqual(doc["profile"]["device"], gname)
            self.assertEqual(doc["profile"]["timing"], "CUDA events")
            self.assertEqual(doc["reference_type"], catalog_type(
                gname, torch.cuda.get_device_properties(0).total_memory))
        names = [o["name"] for o in doc["ops"]]
        self.assertEqual(len(names), len(set(names)))
        for o in doc["ops"]:
            for k in ("fwd_ms", "bwd_ms", "update_ms"):
                self.assertGreaterEqual(o[k], 0.0, o["name"])
            self.assertEqual([t["micro_batch"] for t in o.get("times", [])],
                             list(mbs[1:]))
        self.assertEqual(sum(o["param_bytes"] for o in doc["ops"]),
                         exact_param_bytes(model))
        self.assertEqual(sum(o["saved_bytes"] for o in doc["ops"]),
                         whole_forward_saved(model, inputs, loss_fn))

    # -- the three networks of the issue ---------------------------------

    @unittest.skipIf(HAVE_TV, HAVE_TV)
    def test_resnet50(self):
        model = torchvision.models.resnet50()
        x = torch.randn(1, 3, 224, 224)
        t0 = time.perf_counter()
        doc = prof(model, x, micro_batches=(1, 2), warmup=1, repeat=2,
                      name="resnet50")
        took = time.perf_counter() - t0
        sys.stderr.write("\n  resnet50 at micro-batches 1, 2: %.1f s\n"
                         % took)
        names = [o["name"] for o in doc["ops"]]
        self.assertEqual(names[:4], ["conv1", "bn1", "relu", "maxpool"])
        self.assertIn("layer3.5", names)              # blocks, not stages
        self.assertEqual(names[-2:], ["avgpool", "fc"])
        self.assertNotIn("edges", doc)                 # a chain
        self.check_doc(doc, model, (x,), (1, 2))
        self.plan(doc, "resnet50")

    @unittest.skipIf(HAVE_TV, HAVE_TV)
    def test_vit_b16(self):
        # ViT-B/16 itself, on 64x64 images (16 patches and the class
        # token: Debian's torch has a generic BLAS, 224x224 takes minutes)
        model = torchvision.models.vit_b_16(image_size=64)
        x = torch.randn(1, 3, 64, 64)
        doc = prof(model, x, micro_batches=(1, 2), warmup=0, repeat=1,
                      name="vit_b_16")
        names = [o["name"] for o in doc["ops"]]
        self.assertEqual(names[0], "conv_proj")
        self.assertIn("encoder.layers.encoder_layer_11", names)
        self.assertEqual(names[-1], "heads.head")
        self.check_doc(doc, model, (x,), (1, 2))
        self.plan(doc, "vit")

    def test_gpt_124m(self):
        from profile_gpt import make_gpt
        model = make_gpt()                  # 12 x 768, 12 heads, 50257
        self.assertEqual(exact_param_bytes(model), 124439808 * 4)
        seq = 16                            # short: this CPU is slow
        gen = torch.Generator().manual_seed(0)

        def inputs(m):
            return (torch.randint(0, 50257, (m, seq), generator=gen),)
        doc = prof(model, inputs, micro_batches=(1, 2), warmup=0,
                      repeat=1, name="gpt")
        names = [o["name"] for o in doc["ops"]]
        self.assertEqual(names, ["wte", "wpe"] +
                         ["blocks.%d" % i for i in range(12)] +
                         ["ln_f", "head"])
        # the kinds the planner's tp model and the exports read
        self.assertEqual([o["kind"] for o in doc["ops"]],
                         ["embedding", "embedding"] +
                         ["transformer_layer"] * 12 + ["layernorm", "logits"])
        head = doc["ops"][-1]
        self.assertEqual(head["tied_to"], "wte")
        self.assertEqual(head["param_bytes"], 0)
        self.assertEqual(doc["ops"][0]["param_bytes"], 50257 * 768 * 4)
        self.check_doc(doc, model, inputs(1), (1, 2))
        self.plan(doc, "gpt")

    # -- small models ----------------------------------------------------

    def test_nothing_left_allocated(self):
        # Every probe's graph is freed: once the pack hook returned the
        # saved tensor itself, outputs and their grad_fn formed a cycle
        # in autograd's graph, and a GPT-2 small kept 20 GiB of an H200
        # after profiling (bench/gpu_truth.py).
        import gc
        from profile_gpt import make_gpt

        def live_bytes():
            gc.collect()
            seen = {}
            for o in gc.get_objects():
                if torch.is_tensor(o):
                    k = storage_key(o)
                    seen[k] = k[1]
            return sum(seen.values())
        gpt = make_gpt(2, 64, 4, 100, 32)
        mlp = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 16))
        gen = torch.Generator().manual_seed(0)
        before = live_bytes()
        prof(gpt, lambda m: (torch.randint(0, 100, (m, 32), generator=gen),),
             micro_batches=(1, 4), warmup=0, repeat=1)
        doc = prof(mlp, torch.randn(1, 16), micro_batches=(1, 4), warmup=0,
                   repeat=1, granularity="op")
        self.assertEqual(doc["profile"]["granularity"], "op")
        self.assertEqual(live_bytes(), before)

    def test_loss_and_whole_model(self):
        from torch.nn import functional as F
        from profile_gpt import make_gpt
        model = make_gpt(2, 64, 4, 100, 32)

        def ce(out):
            return F.cross_entropy(out.flatten(0, 1).float(), torch.zeros(
                out.shape[0] * out.shape[1], dtype=torch.long,
                device=out.device))
        gen = torch.Generator().manual_seed(0)
        x = torch.randint(0, 100, (1, 32), generator=gen)
        doc = prof(model, x, micro_batches=(1, 2), warmup=0, repeat=2,
                   loss_fn=ce)
        last = doc["ops"][-1]
        self.assertEqual((last["name"], last["kind"], last["param_bytes"]),
                         ("loss", "loss", 0))
        self.assertEqual(doc["profile"]["loss"], "ce")
        # the loss saves its fp32 logits (and the int64 targets)
        self.assertGreaterEqual(last["saved_bytes"], 32 * 100 * 4)
        self.check_doc(doc, model, (x,), (1, 2), loss_fn=ce)
        # the operators' times add up to the whole model's (rounding)
        whole = doc["profile"]["whole"]["micro_batches"]
        for m, pts in ((1, [(o["fwd_ms"], o["bwd_ms"]) for o in doc["ops"]]),
                       (2, [(t["fwd_ms"], t["bwd_ms"]) for o in doc["ops"]
                            for t in o["times"]])):
            w = whole[str(m)]
            self.assertAlmostEqual(sum(f for f, _ in pts) / w["whole_fwd_ms"],
                                   1.0, places=4)
            self.assertAlmostEqual(sum(b for _, b in pts) / w["whole_bwd_ms"],
                                   1.0, places=4)
        upd = doc["profile"]["whole"]["update"]
        self.assertAlmostEqual(sum(o["update_ms"] for o in doc["ops"]) /
                               upd["whole_ms"], 1.0, places=4)
        self.plan(doc, "gpt-loss")

    def test_tied_counted_once(self):
        class Tied(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(100, 8)
                self.mid = nn.Linear(8, 8)
                self.out = nn.Linear(8, 100, bias=False)
                self.out.weight = self.emb.weight

            def forward(self, idx):
                return self.out(torch.relu(self.mid(self.emb(idx))))
        model = Tied()
        idx = torch.randint(0, 100, (1, 5))
        doc = prof(model, idx, micro_batches=(1, 2), warmup=0, repeat=1)
        ops = {o["name"]: o for o in doc["ops"]}
        self.assertEqual(ops["emb"]["param_bytes"], 100 * 8 * 4)
        self.assertEqual(ops["out"]["param_bytes"], 0)
        self.assertEqual(ops["out"]["tied_to"], "emb")
        self.check_doc(doc, model, (idx,), (1, 2))
        self.plan(doc, "tied")

    def test_data_dependent_branch_falls_back(self):
        class Branchy(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(8, 8)
                self.b = nn.Linear(8, 8)

            def forward(self, x):
                x = self.a(x)
                if x.sum() > 0:             # fx cannot trace this
                    x = x * 2
                return self.b(x)
        model = Branchy()
        x = torch.randn(1, 8)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            doc = prof(model, x, micro_batches=(1,), warmup=0, repeat=1,
                          granularity="op")
        msgs = [str(x.message) for x in w
                if issubclass(x.category, FallbackWarning)]
        self.assertEqual(len(msgs), 1, [str(x.message) for x in w])
        self.assertIn("layer granularity", msgs[0])
        self.assertIn("Branchy", msgs[0])
        self.assertEqual(doc["profile"]["granularity"], "layer")
        self.assertEqual([o["name"] for o in doc["ops"]], ["a", "b"])
        self.check_doc(doc, model, (x,), (1,))
        self.plan(doc, "branchy")

    def test_op_granularity_dag(self):
        class Res(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3, padding=1)
                self.c2 = nn.Conv2d(8, 8, 3, padding=1)
                self.fc = nn.Linear(8, 10)

            def forward(self, x):
                y = torch.relu(self.conv(x))
                y = y + self.c2(y)
                return self.fc(y.mean(dim=(2, 3)))
        model = Res()
        x = torch.randn(1, 3, 16, 16)
        doc = prof(model, x, micro_batches=(1, 2), warmup=0, repeat=1,
                      granularity="op")
        self.assertEqual(doc["profile"]["granularity"], "op")
        names = [o["name"] for o in doc["ops"]]
        self.assertEqual(names, ["conv", "relu", "c2", "add", "mean", "fc"])
        edges = {(e["from"], e["to"]): e["bytes"] for e in doc["edges"]}
        self.assertEqual(edges[("relu", "add")], 8 * 16 * 16 * 4)
        self.assertIn(("relu", "c2"), edges)
        self.check_doc(doc, model, (x,), (1, 2))
        self.plan(doc, "res-op")

    def test_catalog_names(self):
        from parplan.profile import catalog_type
        gib = 2**30
        for name, mem, want in [
                ("NVIDIA A100-SXM4-80GB", 80 * gib, "A100-80"),
                ("NVIDIA A100-PCIE-40GB", 40 * gib, "A100-40"),
                ("NVIDIA A100-SXM4", 79 * gib, "A100-80"),
                ("NVIDIA H100 80GB HBM3", 80 * gib, "H100"),
                ("NVIDIA H200", 141 * gib, "H200"),
                ("NVIDIA GH200 480GB", 95 * gib, "GH-96"),
                ("Tesla V100-SXM2-16GB", 16 * gib, "V100-16"),
                ("Tesla V100-SXM2-32GB", 32 * gib, "V100-32"),
                ("Tesla T4", 15 * gib, "T4"),
                ("NVIDIA A10", 24 * gib, "A10"),
                ("NVIDIA L4", 24 * gib, "L4"),
                ("NVIDIA L40S", 48 * gib, "L40S"),
                ("NVIDIA GeForce RTX 3090", 24 * gib, "RTX-3090"),
                ("NVIDIA TITAN RTX", 24 * gib, "Titan-RTX"),
                ("AMD Instinct MI300X", 192 * gib, "MI300X"),
                ("Some Future GPU", 8 * gib, None)]:
            self.assertEqual(catalog_type(name, mem), want, name)
            if want:            # a name of the tool's catalog
                r = subprocess.run([BIN, "topo", "hier:1x1,gpu=" + want],
                                   stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE,
                                   universal_newlines=True)
                self.assertEqual(r.returncode, 0, r.stderr)

    def test_cli(self):
        path = os.path.join(self.tmp, "factory.py")
        with open(path, "w") as f:
            f.write("import torch\n"
                    "def make_model():\n"
                    "    return torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3),"
                    " torch.nn.ReLU(), torch.nn.Flatten(),"
                    " torch.nn.Linear(4 * 6 * 6, 2))\n"
                    "def loss(out):\n"
                    "    return out.square().mean()\n")
        out = os.path.join(self.tmp, "cli.json")
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
        r = subprocess.run([sys.executable, "-m", "parplan", "profile",
                            path + ":make_model", "--input-shape", "1,3,8,8",
                            "--micro-batches", "1,2", "--warmup", "0",
                            "--repeat", "1", "--device", DEV,
                            "--dtype", "fp32", "--loss", path + ":loss",
                            "-o", out], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            doc = json.load(f)
        # the last Linear is the logits (profile._layer_kind)
        self.assertEqual([o["kind"] for o in doc["ops"]],
                         ["Conv2d", "ReLU", "Flatten", "logits", "loss"])
        self.plan(doc, "cli")
        r = subprocess.run([sys.executable, "-m", "parplan", "profile",
                            path + ":make_model", "-o", out], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--input-shape", r.stderr)


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        BIN = os.path.abspath(sys.argv.pop(1))
    if HAVE_TORCH:
        print("test_python_profile: skipped: " + HAVE_TORCH)
    unittest.main(verbosity=2)
