#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The Python package (python/parplan) against the command line: the
same inputs give the same plan JSON, byte for byte, and the same
evaluate and simulate figures; a library error raises parplan.Error with
the library's message; `pip install' gives an importable package.

Run by ctest (tests/CMakeLists.txt, python_api) with Debian's python3:
    PARPLAN_LIB=build/libparplan.so PARPLAN_TOOL=build/parplan \\
        /usr/bin/python3 tests/test_python_api.py
Unset, PARPLAN_LIB and PARPLAN_TOOL default to the repository's build/.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.abspath(os.environ.get("PARPLAN_TOOL") or
                       os.path.join(SRC, "build", "parplan"))
os.environ["PARPLAN_LIB"] = os.path.abspath(
    os.environ.get("PARPLAN_LIB") or
    os.path.join(SRC, "build", "libparplan.so"))
sys.path.insert(0, os.path.join(SRC, "python"))

import parplan  # noqa: E402

EX = os.path.join(SRC, "examples")
GPT2 = ("gpt2-amp", "amp-het-cluster")


def cli(*args, cwd, ok=(0,)):
    """The tool's stdout, stderr and exit status."""
    r = subprocess.run([TOOL, *args], cwd=cwd, capture_output=True,
                       text=True, timeout=300)
    if r.returncode not in ok:
        raise AssertionError(f"parplan {' '.join(args)}: exit "
                             f"{r.returncode}\n{r.stderr}")
    return r.stdout, r.stderr, r.returncode


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="parplan-py-")
        self.addCleanup(shutil.rmtree, self.tmp)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def read(self, name):
        with open(self.path(name), "rb") as f:
            return f.read()


class TestPlan(Base):
    def same_plan(self, model, cluster, batch, cli_args, **kw):
        out, _, _ = cli("plan", "--model", model, "--cluster", cluster,
                        "--batch", str(batch), *cli_args, "-o", "plan.json",
                        "--json", cwd=self.tmp)
        r = parplan.plan(model, cluster, batch, **kw)
        self.assertTrue(r.fits)
        self.assertEqual(r.json.encode(), self.read("plan.json"))
        self.assertEqual(r.plan, json.loads(self.read("plan.json")))
        want = json.loads(out)
        for d in (want, r.report):  # the search's wall time differs
            d["search"].pop("seconds")
        self.assertEqual(r.report, want)
        self.assertEqual(len(r.plans), len(want["plans"]))
        for got, row in zip(r.plans, want["plans"]):
            for k in ("devices", "pp", "dp", "tp", "micro_batch", "gas",
                      "schedule", "recompute", "madpipe", "zero",
                      "estimate_ms", "simulated_ms", "lower_bound_ms",
                      "throughput", "bubble", "peak_share", "time_spread",
                      "calibrated"):
                self.assertEqual(getattr(got, k), row[k], k)
        self.assertEqual(r.summary["points"], want["search"]["points"])
        self.assertEqual(r.summary["lower_bound_ms"], want["lower_bound_ms"])
        # 0, 1 or 2, as the report says (not a bool)
        self.assertEqual(r.summary["by_estimate"],
                         want["search"]["by_estimate"])
        return r

    def test_by_estimate_size_limit(self):
        # past the simulator's size limit: 2, as --json says
        r = parplan.plan("gpt2-amp", "hier:16x8", 4194304)
        self.assertEqual(r.summary["by_estimate"], 2)
        self.assertEqual(r.report["search"]["by_estimate"], 2)

    def test_gpt2_amp_default(self):
        self.same_plan(*GPT2, 32, [])

    def test_opt350_options(self):
        self.same_plan("opt-350", "hier:2x4,gpu=A100-40", 64,
                       ["--top", "3", "--schedule", "1f1b", "--recompute",
                        "off", "--time-limit", "30"],
                       top=3, schedule="1f1b", recompute="off", time_limit=30)

    def test_uniform_tp(self):
        # one tp per plan, as --uniform-tp: the same report; on AMP's mixed
        # cluster the space is smaller (no per-type degrees)
        self.same_plan(*GPT2, 32, ["--uniform-tp"], uniform_tp=True)
        a = parplan.plan(*GPT2, 32, uniform_tp=True)
        b = parplan.plan(*GPT2, 32)
        self.assertLess(a.summary["points"], b.summary["points"])

    def test_run_options_and_calibration(self):
        cli("calibrate", os.path.join(EX, "runs-amp.json"), "-o", "cal.json",
            cwd=self.tmp)
        self.same_plan(*GPT2, 32,
                       ["--calibration", "cal.json", "--engine", "deepspeed",
                        "--precision", "bf16", "--reserve-gb", "1",
                        "--memory-margin", "0.1", "--seed", "3",
                        "--optimizer", "adam", "--max-tp", "2",
                        "--madpipe", "0", "--all-devices"],
                       calibration=self.path("cal.json"), engine="deepspeed",
                       precision="bf16", reserve_gb=1, memory_margin=0.1,
                       seed=3, optimizer="adam", max_tp=2, madpipe=0,
                       all_devices=True)

    def test_inputs_as_json(self):
        cli("model", "gpt2-amp", "-o", "m.json", cwd=self.tmp)
        cli("topo", "amp-het-cluster", "-o", "c.json", cwd=self.tmp)
        want = parplan.plan(*GPT2, 32).json
        m = json.loads(self.read("m.json"))
        c = self.read("c.json").decode()
        self.assertEqual(parplan.plan(m, c, 32).json, want)
        self.assertEqual(
            parplan.plan(self.path("m.json"), self.path("c.json"), 32).json,
            want)

    def test_trace(self):
        parplan.plan(*GPT2, 32, trace=self.path("t.json"))
        self.assertIn("traceEvents", json.loads(self.read("t.json")))

    def test_ctrl_c(self):
        # Ctrl-C (a KeyboardInterrupt in the main thread, here from a
        # timer) while the mapper works on the kept plans: plan() returns
        # the best plans so far, marked interrupted, within a second
        import _thread
        import threading
        import time
        t = threading.Timer(1.0, _thread.interrupt_main)
        t.start()
        t0 = time.monotonic()
        r = parplan.plan("gpt2-amp", "uniform_dist:128", 256, map_time=20,
                         map_nodes=0, time_limit=120)
        took = time.monotonic() - t0
        t.cancel()
        self.assertTrue(r.summary["interrupted"])
        self.assertTrue(r.report["search"]["interrupted"])
        self.assertTrue(r.fits)
        self.assertLess(took, 2.0)
        # the plan is complete: the command line prices it
        with open(self.path("p.json"), "w") as f:
            f.write(r.json)
        cli("evaluate", self.path("p.json"), "--model", "gpt2-amp",
            "--cluster", "uniform_dist:128", cwd=self.tmp)


class TestPrice(Base):
    def setUp(self):
        super().setUp()
        cli("plan", "--model", GPT2[0], "--cluster", GPT2[1], "--batch", "32",
            "-o", "plan.json", cwd=self.tmp)
        os.chdir(self.tmp)  # the reports name the plan as given
        self.addCleanup(os.chdir, SRC)

    def test_evaluate(self):
        for args, kw in (([], {}),
                         (["--engine", "megatron", "--zero", "1",
                           "--precision", "bf16", "--reserve-gb", "2",
                           "--allreduce", "ring"],
                          dict(engine="megatron", zero=1, precision="bf16",
                               reserve_gb=2, allreduce="ring")),
                         (["--cost-model", "amp"], dict(cost_model="amp"))):
            out, _, _ = cli("evaluate", "plan.json", "--model", GPT2[0],
                            "--cluster", GPT2[1], "--json", *args,
                            cwd=self.tmp, ok=(0, 3))
            want = json.loads(out)
            s = parplan.evaluate("plan.json", *GPT2, **kw)
            self.assertEqual(s.report, want)
            self.assertEqual(s.iteration_ms, want["iteration_ms"])
            self.assertEqual(s.lower_bound_ms, want["lower_bound_ms"])
            self.assertEqual(s.throughput, want["throughput"])
            self.assertEqual(s.fits, want["fits"])
            self.assertEqual(s.margin_bytes, want["margin_bytes"])
            self.assertEqual(s.time_spread, want["time_spread"])
            self.assertEqual(s.calibrated, want["calibrated"])
            if "breakdown" in want:
                for k, v in want["breakdown"].items():
                    self.assertEqual(getattr(s, k), v, k)
                self.assertEqual(s.bottleneck, want["bottleneck_stage"])
        # the plan as text, a dict or a PlanResult: the same figures
        text = self.read("plan.json").decode()
        base = parplan.evaluate("plan.json", *GPT2)
        self.assertEqual(parplan.evaluate(text, *GPT2).iteration_ms,
                         base.iteration_ms)
        self.assertEqual(
            parplan.evaluate(json.loads(text), *GPT2).iteration_ms,
            base.iteration_ms)
        self.assertEqual(
            parplan.evaluate(parplan.plan(*GPT2, 32), *GPT2).iteration_ms,
            base.iteration_ms)

    def test_simulate(self):
        for args, kw in (([], {}),
                         (["--network", "links", "--engine", "deepspeed",
                           "--zero", "1"],
                          dict(network="links", engine="deepspeed", zero=1))):
            out, _, _ = cli("simulate", "plan.json", "--model", GPT2[0],
                            "--cluster", GPT2[1], "--json", *args,
                            cwd=self.tmp, ok=(0, 3))
            want = json.loads(out)
            s = parplan.simulate("plan.json", *GPT2, **kw)
            self.assertEqual(s.report, want)
            self.assertEqual(s.iteration_ms, want["iteration_ms"])
            self.assertEqual(s.analytic_ms, want["analytic_ms"])
            self.assertEqual(s.lower_bound_ms, want["lower_bound_ms"])
            self.assertEqual(s.nevents, want["events"])
            self.assertEqual(s.fits, want["fits"])
            self.assertEqual(s.time_spread, want["time_spread"])
            self.assertEqual(s.calibrated, want["calibrated"])


class TestErrors(Base):
    def cli_message(self, *args):
        _, err, rc = cli(*args, cwd=self.tmp, ok=(1,))
        line = [x for x in err.splitlines() if "warning" not in x][-1]
        self.assertTrue(line.startswith("parplan: "), line)
        return line[len("parplan: "):]

    def test_unknown_model(self):
        want = self.cli_message("plan", "--model", "no-such-model",
                                "--cluster", GPT2[1], "--batch", "32")
        with self.assertRaises(parplan.Error) as e:
            parplan.plan("no-such-model", GPT2[1], 32)
        self.assertEqual(str(e.exception), want)
        self.assertIn("no-such-model", str(e.exception))

    def test_search_cut_by_its_limit(self):
        # 1 ms runs out while the search builds its space (512 devices):
        # nothing priced, and the error says why, not that nothing fits.
        r = parplan.plan(GPT2[0], "hier:64x8", 512, time_limit=0.001)
        self.assertFalse(r.fits)
        self.assertTrue(r.summary["timed_out"])
        self.assertEqual(r.summary["evaluated"], 0)
        with self.assertRaises(parplan.Error) as e:
            parplan.evaluate(r, GPT2[0], "hier:64x8")
        self.assertIn("stopped before it found a plan", str(e.exception))

    def test_plan_of_another_model(self):
        cli("plan", "--model", "opt-350", "--cluster", "hier:2x4,gpu=A100-40",
            "--batch", "64", "--top", "1", "-o", "p.json", cwd=self.tmp)
        want = self.cli_message("evaluate", "p.json", "--model", GPT2[0],
                                "--cluster", GPT2[1])
        with self.assertRaises(parplan.Error) as e:
            parplan.evaluate(self.path("p.json"), *GPT2)
        # the message names the operator (and the plan file: its path)
        self.assertEqual(str(e.exception), want.replace(
            "p.json", self.path("p.json"), 1))
        self.assertIn("operator", str(e.exception))

    def test_bad_json(self):
        with self.assertRaises(parplan.Error) as e:
            parplan.plan({"name": "x", "ops": [{"name": "a", "flops": -1}]},
                         GPT2[1], 32)
        self.assertIn("<model>", str(e.exception))
        with self.assertRaises(parplan.Error) as e:
            parplan.evaluate('{"global_batch": 32}', *GPT2)
        self.assertIn("<plan>", str(e.exception))
        self.assertGreater(e.exception.status, 0)

    def test_bad_option(self):
        with self.assertRaises(parplan.Error) as e:
            parplan.plan(*GPT2, 32, engine="nope")
        self.assertIn("engine", str(e.exception))
        with self.assertRaises(parplan.Error):
            parplan.simulate("x.json", *GPT2, network="nope")


class TestPackage(Base):
    def run_py(self, code, env=None):
        e = dict(os.environ)
        e.update(env or {})
        return subprocess.run([sys.executable, "-c", code], env=e,
                              capture_output=True, text=True, timeout=120)

    def test_import_is_light(self):
        r = self.run_py(
            "import sys; sys.path.insert(0, %r); import parplan; "
            "assert 'torch' not in sys.modules; "
            "assert callable(parplan.profile); print(parplan.__version__)"
            % os.path.join(SRC, "python"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), parplan.library_version())

    def test_library_not_found(self):
        r = self.run_py(
            "import sys; sys.path.insert(0, %r); import parplan; "
            "parplan.plan('gpt2-amp', 'amp-het-cluster', 32)"
            % os.path.join(SRC, "python"),
            {"PARPLAN_LIB": self.path("missing.so")})
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("LibraryNotFound", r.stderr)
        self.assertIn("./build.sh", r.stderr)
        self.assertIn("PARPLAN_LIB", r.stderr)

    def test_pip_install(self):
        have = subprocess.run(
            [sys.executable, "-c", "import setuptools, pip"],
            capture_output=True)
        if have.returncode:
            self.skipTest(f"{sys.executable} has no pip or setuptools "
                          "(Debian: python3-pip python3-setuptools)")
        src = self.path("src")
        shutil.copytree(os.path.join(SRC, "python"), src,
                        ignore=shutil.ignore_patterns("build", "*.egg-info",
                                                      "__pycache__"))
        target = self.path("target")
        r = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--no-deps",
             "--no-build-isolation", "--no-index", "--quiet",
             "--disable-pip-version-check", "--target", target, src],
            capture_output=True, text=True, timeout=300, cwd=self.tmp)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        r = self.run_py(
            "import parplan; print(parplan.__file__); "
            "print(parplan.plan('gpt2-amp', 'amp-het-cluster', 32).json, "
            "end='')", {"PYTHONPATH": target})
        self.assertEqual(r.returncode, 0, r.stderr)
        where, text = r.stdout.split("\n", 1)
        self.assertTrue(where.startswith(target), where)
        self.assertEqual(text, parplan.plan(*GPT2, 32).json)


if __name__ == "__main__":
    unittest.main(verbosity=2)
