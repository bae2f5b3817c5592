#!/usr/bin/env python3
"""One command: mine (skipped for repositories already cached), train, validate, export.

    python3 train/run.py            # the shipped configuration
    python3 train/run.py --epochs 2 # any train.py flag is passed through

Needs: numpy (train/requirements.txt), git, the mirrors under /work/.mirror (fetch tool) and the
binary with the `dev` subcommand (COPILOT_LS_DEV, default target/release/copilot-ls: `cargo build --release` first).
"""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# the shipped configuration (see README.md for how it was chosen)
DEFAULTS = ["--dim", "256", "--vocab", "60000", "--towers", "1", "--max-terms", "256", "--lr", "1e-2",
            "--batch", "1024", "--epochs", "3", "--tau", "0.1", "--export"]


def main():
    env = dict(os.environ, OPENBLAS_NUM_THREADS=os.environ.get("OPENBLAS_NUM_THREADS", "2"),
               OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "2"))
    t0 = time.time()
    subprocess.run([sys.executable, os.path.join(HERE, "mine.py"), "--jobs", "2"], check=True, env=env)
    t1 = time.time()
    extra = sys.argv[1:]
    subprocess.run([sys.executable, os.path.join(HERE, "train.py"), *DEFAULTS, *extra], check=True, env=env)
    t2 = time.time()
    print(f"[run] mining {(t1 - t0) / 60:.1f} min, training+export {(t2 - t1) / 60:.1f} min", flush=True)


if __name__ == "__main__":
    main()
