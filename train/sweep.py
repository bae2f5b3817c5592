#!/usr/bin/env python3
"""The measurements behind the shipped configuration: runs that differ from the base in one setting
each; prints one line per run (macro MRR / R@1 / R@10 on the held-out repositories).

    python3 train/sweep.py            # runs every configuration not yet run (results are cached)
    python3 train/sweep.py "tau .15"  # only the named ones

The README table lists what was measured; "2 towers d256 V30k", "tau .15", "batch 2048" and "10 epochs" were
not finished in the first time box.
"""
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = {"--dim": "128", "--vocab": "60000", "--towers": "2", "--max-terms": "256", "--batch": "1024",
        "--epochs": "3", "--tau": "0.1", "--lr": "1e-2"}
RUNS = {
    "base: 2 towers d128 V60k tau .1 lr 1e-2, 3 epochs": {},
    "1 tower d256 (same bytes)": {"--towers": "1", "--dim": "256"},
    "2 towers d256 V30k (same bytes)": {"--vocab": "30000", "--dim": "256"},
    "tau .15": {"--tau": "0.15"},
    "batch 2048": {"--batch": "2048"},
    "10 epochs": {"--epochs": "10"},
}


def main():
    only = sys.argv[1:]
    for label, delta in RUNS.items():
        if only and label not in only:
            continue
        args = dict(BASE, **delta)
        argv = [x for kv in args.items() for x in kv]
        print(f"[sweep] {label}", flush=True)
        subprocess.run([sys.executable, os.path.join(HERE, "train.py"), *argv], check=True,
                       stdout=subprocess.DEVNULL)
    rows = []
    for path in glob.glob(os.path.join(HERE, "..", ".tmp", "train", "ckpt", "*", "result.json")):
        r = json.load(open(path))
        m = r["int8"]["MACRO"]
        key = f"model@{r['args']['dim']}"
        rows.append((r["run"], r["args"]["epochs"], m[key], m["fused"], m["bm25"], r["train_minutes"]))
    print(f"{'run':40s} ep  model MRR/R@1/R@10     fused(RRF) MRR/R@1/R@10  bm25 MRR/R@1/R@10  min")
    for run, ep, a, f, b, mins in sorted(rows):
        fmt = lambda x: f"{x['MRR']:.3f}/{x['R@1']:.3f}/{x['R@10']:.3f}"
        print(f"{run:40s} {ep:<3} {fmt(a):22s} {fmt(f):22s} {fmt(b):18s} {mins}")


if __name__ == "__main__":
    main()
