#!/usr/bin/env python3
"""Trains the learned file ranker (LambdaMART, LightGBM's `lambdarank`) on the cached rows
of features.py and prints its validation table against today's ranking, per split and
language, with a paired bootstrap interval for the held-out repositories.

Today's ranking is recomputed from the same rows exactly as the binary fuses it
(index/past_changes.rs: each file's reciprocal lexical rank plus the history vote's share,
k = 10, weight 0.1), so both rankings are judged on the same candidates.

Splits are by repository (sources.py): `train` fits, `valid` stops the boosting early,
`test` is held out and read once for the table. Deterministic: fixed seed, LightGBM's
`deterministic` with forced row-wise histograms, two threads.

Usage: train.py [--out DIR] [--rounds N]
Writes DIR/ranker.txt (LightGBM's text model), DIR/report.json (the table) and
DIR/parity.json (held-out rows with the trainer's scores, which the Rust walker must give).
"""

from __future__ import annotations

import argparse
import glob
import gzip
import json
import os
import random
import sys
from collections import defaultdict
from pathlib import Path

import lightgbm as lgb
import numpy as np

REPO = Path(__file__).resolve().parents[2]
ROWS = REPO / ".tmp" / "rank" / "features"
SEED = 13
# index/past_changes.rs FUSION
FUSION_K, FUSION_WEIGHT = 10.0, 0.1


def load():
    queries = []
    for path in sorted(glob.glob(str(ROWS / "*.jsonl.gz"))):
        with gzip.open(path, "rt") as f:
            for line in f:
                queries.append(json.loads(line))
    return queries


def column(names, name):
    return names.index(name)


def today_order(query):
    """The binary's fused file order, from the rows' lexical rank and vote share."""
    names = query["names"]
    lex, vote, found = column(names, "lexical_rank"), column(names, "vote_share"), column(names, "found_lexically")

    def score(row):
        values = row["values"]
        lexical = 1.0 / (FUSION_K + values[lex]) if values[found] > 0 else 0.0
        return lexical + FUSION_WEIGHT * values[vote] / FUSION_K

    # Stable: equal scores keep the lexical order (the rows' order).
    return sorted(range(len(query["files"])), key=lambda i: -score(query["files"][i]))


def hits(query, order, k):
    return any(query["files"][i]["label"] for i in order[:k])


def accuracy(queries, orders, k):
    if not queries:
        return float("nan")
    return sum(hits(q, o, k) for q, o in zip(queries, orders)) / len(queries)


def bootstrap(a, b, rounds=2000, seed=SEED):
    """95% interval of mean(a) - mean(b), resampling queries (paired)."""
    rng = random.Random(seed)
    n = len(a)
    diffs = []
    for _ in range(rounds):
        picks = [rng.randrange(n) for _ in range(n)]
        diffs.append(sum(a[i] - b[i] for i in picks) / n)
    diffs.sort()
    return diffs[int(0.025 * rounds)], diffs[int(0.975 * rounds) - 1]


def matrix(queries):
    xs, ys, groups = [], [], []
    for q in queries:
        for row in q["files"]:
            xs.append(row["values"])
            ys.append(row["label"])
        groups.append(len(q["files"]))
    return np.array(xs, dtype=np.float32), np.array(ys), groups


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=str(REPO / "train" / "rank" / "out"))
    parser.add_argument("--rounds", type=int, default=400)
    args = parser.parse_args()
    queries = load()
    if not queries:
        sys.exit(f"no rows under {ROWS}: run train/rank/features.py first")
    names = queries[0]["names"]
    by_split = defaultdict(list)
    for q in queries:
        if q["files"]:
            by_split[q["split"]].append(q)
    trainable = [q for q in by_split["train"] if any(r["label"] for r in q["files"])]
    valid = [q for q in by_split["valid"] if any(r["label"] for r in q["files"])]
    print(f"queries: train {len(by_split['train'])} ({len(trainable)} with the answer among the candidates), "
          f"valid {len(by_split['valid'])}, test {len(by_split['test'])}; {len(names)} features")
    x, y, groups = matrix(trainable)
    vx, vy, vgroups = matrix(valid)
    params = {
        "objective": "lambdarank", "metric": "ndcg", "eval_at": [1, 5],
        "learning_rate": 0.05, "num_leaves": 31, "min_data_in_leaf": 50,
        "lambdarank_truncation_level": 20, "seed": SEED, "deterministic": True,
        "force_row_wise": True, "num_threads": 2, "verbosity": -1,
    }
    train_set = lgb.Dataset(x, y, group=groups, feature_name=names)
    valid_set = lgb.Dataset(vx, vy, group=vgroups, reference=train_set)
    booster = lgb.train(params, train_set, num_boost_round=args.rounds, valid_sets=[valid_set],
                        callbacks=[lgb.early_stopping(40, verbose=False)])
    best = booster.best_iteration or args.rounds

    def learned_order(query):
        values = np.array([r["values"] for r in query["files"]], dtype=np.float32)
        scores = booster.predict(values, num_iteration=best)
        return sorted(range(len(query["files"])), key=lambda i: (-scores[i], i))

    report = {"features": names, "best_iteration": best, "splits": {}}
    print(f"\nbest iteration {best}")
    print(f"{'split':8} {'lang':11} {'n':>6}  {'today @1':>9} {'@5':>6}  {'learned @1':>10} {'@5':>6}")
    for split in ("valid", "test"):
        chosen = by_split[split]
        langs = defaultdict(list)
        for q in chosen:
            langs[q["language"]].append(q)
        for lang, group in [("all", chosen)] + sorted(langs.items()):
            today = [today_order(q) for q in group]
            learned = [learned_order(q) for q in group]
            row = {
                "n": len(group),
                "today": [accuracy(group, today, 1), accuracy(group, today, 5)],
                "learned": [accuracy(group, learned, 1), accuracy(group, learned, 5)],
            }
            if lang == "all" and group:
                a = [int(hits(q, o, 5)) for q, o in zip(group, learned)]
                b = [int(hits(q, o, 5)) for q, o in zip(group, today)]
                row["acc5_diff_interval"] = bootstrap(a, b)
            report["splits"].setdefault(split, {})[lang] = row
            print(f"{split:8} {lang:11} {len(group):6}  {row['today'][0]:9.3f} {row['today'][1]:6.3f}  "
                  f"{row['learned'][0]:10.3f} {row['learned'][1]:6.3f}"
                  + (f"   Acc@5 diff 95% CI [{row['acc5_diff_interval'][0]:+.3f}, {row['acc5_diff_interval'][1]:+.3f}]"
                     if "acc5_diff_interval" in row else ""))
    importance = sorted(zip(names, booster.feature_importance("gain")), key=lambda p: -p[1])
    report["importance"] = [(n, float(g)) for n, g in importance]
    print("\nfeature importance (gain):", ", ".join(f"{n} {g:.0f}" for n, g in importance[:12]))
    os.makedirs(args.out, exist_ok=True)
    booster.save_model(os.path.join(args.out, "ranker.txt"), num_iteration=best)
    # Rows with the trainer's own scores, for the Rust walker's parity test: the first
    # held-out queries' candidates, 300 rows.
    rows = [r["values"] for q in by_split["test"] for r in q["files"]][:300]
    scores = booster.predict(np.array(rows, dtype=np.float32), num_iteration=best)
    with open(os.path.join(args.out, "parity.json"), "w") as f:
        json.dump({"features": names, "rows": rows, "scores": [float(v) for v in scores]}, f)
    with open(os.path.join(args.out, "report.json"), "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
