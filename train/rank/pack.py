#!/usr/bin/env python3
"""Packs features.py's cached rows (.tmp/rank/features/*.jsonl.gz) into one small table
committed to the repository, `train/rank/data/rows.npz`, so the ranker can be trained
again without the mirrors, the checkouts or an hour of indexing (issue #52: what was mined
is kept, not the checkouts).

Each feature is stored as a byte: the number of its bin among at most 256 bins cut at
its quantiles over all rows, with each bin's upper edge (a value some row holds). That
loses nothing the trainer uses: LightGBM bins every feature into at most 255 bins anyway,
and train.py trains on the bin numbers, then writes each split's threshold as the upper
edge of the bin below it, so a value the binary computes goes the way its bin went in
training, exactly (`value <= edge` iff `bin <= k`).

A query keeps the candidates of today's first KEEP places (by `fused_rank`), whatever
their labels: the binary's learned ranker reorders those places only (index/learned.rs
`REORDERED`, which must equal KEEP) and leaves the rest in today's order, so the rows are
exactly what it sees, and a held-out table over them is exact for Acc@1 to Acc@KEEP.
(Keeping the answers from further down, or sampling the rest by label, would teach the
trees that a deep candidate is often an answer: it is not.) The question's own features
(`question_*`) are stored once a query. A training query with no answer among its kept
places is left out (it has no pair to learn from); every held-out query is kept.

Arrays: `names`; `edges_<i>` (float32, ascending) and `col_<i>` (uint8 bin numbers: [rows],
or [queries] for a question feature) for feature i; `label` [rows] int8, `query` [rows]
int32; per query `repo`, `split`, `language`, `kind` (strings).

Usage: pack.py [--out PATH] [--keep N]
"""

from __future__ import annotations

import argparse
import glob
import gzip
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
ROWS = REPO / ".tmp" / "rank" / "features"
BINS = 256
# index/learned.rs REORDERED: the places the learned ranker reorders.
KEEP = 20


def bins_of(column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Upper edges (values the column holds, ascending, at most BINS) and each value's
    bin: the first edge at or above it."""
    distinct = np.unique(column)
    if len(distinct) <= BINS:
        edges = distinct
    else:
        cuts = np.quantile(column, np.linspace(0, 1, BINS + 1)[1:], method="inverted_cdf")
        edges = np.unique(cuts.astype(np.float32))
    return edges.astype(np.float32), np.searchsorted(edges, column, side="left").astype(np.uint8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(REPO / "train" / "rank" / "data" / "rows.npz"))
    parser.add_argument("--keep", type=int, default=KEEP, help="today's first places kept")
    args = parser.parse_args()
    names = None
    values, labels, owner, questions = [], [], [], []
    meta = {"repo": [], "split": [], "language": [], "kind": []}
    for path in sorted(glob.glob(str(ROWS / "*.jsonl.gz"))):
        with gzip.open(path, "rt") as f:
            for line in f:
                q = json.loads(line)
                if names is None:
                    names = q["names"]
                if q["names"] != names:
                    sys.exit(f"{path}: other features than the first file's; compute them again")
                if not q["files"]:
                    continue
                fused = names.index("fused_rank")
                kept = sorted((row for row in q["files"] if row["values"][fused] <= args.keep),
                              key=lambda row: row["values"][fused])
                # A training query without an answer in those places teaches LambdaMART
                # nothing (no pair to order): train.py would skip it; it is not kept.
                if q["split"] == "train" and not any(row["label"] for row in kept):
                    continue
                number = len(meta["repo"])
                for row in kept:
                    values.append(row["values"])
                    labels.append(row["label"])
                    owner.append(number)
                questions.append(q["files"][0]["values"])
                for key in meta:
                    meta[key].append(q.get(key, "commit") if key == "kind" else q[key])
    if names is None:
        sys.exit(f"no rows under {ROWS}: run train/rank/features.py first")
    rows, per_query = np.array(values, dtype=np.float32), np.array(questions, dtype=np.float32)
    arrays = {}
    for i, name in enumerate(names):
        edges, codes = bins_of(per_query[:, i] if name.startswith("question_") else rows[:, i])
        arrays[f"edges_{i}"], arrays[f"col_{i}"] = edges, codes
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        args.out,
        names=np.array(names),
        **arrays,
        label=np.array(labels, dtype=np.int8),
        query=np.array(owner, dtype=np.int32),
        **{key: np.array(column) for key, column in meta.items()},
    )
    size = Path(args.out).stat().st_size
    print(f"{len(meta['repo'])} queries, {len(values)} rows, {len(names)} features -> {args.out} ({size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
