#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Profile a small GPT written in plain PyTorch and plan it with parplan.

    PYTHONPATH=python /usr/bin/python3 examples/profile_gpt.py [-o gpt.json]
        [--layers 4] [--hidden 256] [--heads 4] [--vocab 50257] [--seq 128]
        [--micro-batches 1,2] [--device cpu|cuda] [--dtype fp32|bf16|fp16]

It builds the GPT (token and position embeddings, N blocks of attention and
MLP, a final LayerNorm and a head tied to the token embedding), profiles it
with parplan.profile at layer granularity, writes the model JSON, then runs
``parplan plan`` on it for two clusters (the binary from PARPLAN_BIN, else
./build/parplan).  ``make_gpt`` is also a factory for
``python -m parplan profile examples/profile_gpt.py:make_gpt --input-shape
1,128 --input-dtype long --input-high 50257``.
"""

import argparse
import math
import os
import subprocess
import sys

import torch
from torch import nn
from torch.nn import functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))


class Attention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (y.view(b, t, self.heads, c // self.heads).transpose(1, 2)
                   for y in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(c // self.heads)
        mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, c)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(hidden)
        self.attn = Attention(hidden, heads)
        self.ln2 = nn.LayerNorm(hidden)
        self.fc = nn.Linear(hidden, 4 * hidden)
        self.out = nn.Linear(4 * hidden, hidden)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, layers=12, hidden=768, heads=12, vocab=50257, seq=1024):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(seq, hidden)
        self.blocks = nn.ModuleList(Block(hidden, heads)
                                    for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, vocab, bias=False)
        self.head.weight = self.wte.weight      # tied

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x))


def make_gpt(layers=12, hidden=768, heads=12, vocab=50257, seq=1024):
    """GPT-2 small (124M parameters) by default."""
    return GPT(layers, hidden, heads, vocab, seq)


def parplan_bin():
    return os.environ.get("PARPLAN_BIN") or os.path.join(HERE, "..", "build",
                                                         "parplan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default="gpt-profile.json")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=50257)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--micro-batches", default="1,2")
    ap.add_argument("--device", default=None)
    ap.add_argument("--dtype", default=None)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--clusters", default="hier:2x4;nvswitch:2x8,gpu=A100-80",
                    help="cluster specs separated by ';'")
    args = ap.parse_args(argv)
    from parplan.profile import profile

    model = make_gpt(args.layers, args.hidden, args.heads, args.vocab,
                     args.seq)
    gen = torch.Generator().manual_seed(0)

    def inputs(m):
        return (torch.randint(0, args.vocab, (m, args.seq), generator=gen),)

    doc = profile(model, inputs,
                  micro_batches=[int(x) for x in
                                 args.micro_batches.split(",")],
                  device=args.device, dtype=args.dtype, warmup=args.warmup,
                  repeat=args.repeat, path=args.output, name="gpt")
    print("profiled %d operators in %.1f s, wrote %s"
          % (len(doc["ops"]), doc["profile"]["seconds"], args.output))
    rc = 0
    for spec in args.clusters.split(";"):
        cmd = [parplan_bin(), "plan", "--model", args.output, "--cluster",
               spec, "--batch", "32", "--time-limit", "20"]
        print("$ " + " ".join(cmd), flush=True)
        r = subprocess.run(cmd)
        rc = rc or r.returncode
    return rc


if __name__ == "__main__":
    sys.exit(main())
