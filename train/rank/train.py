#!/usr/bin/env python3
"""Trains the learned file ranker (LambdaMART, LightGBM's `lambdarank`) on the packed rows
(pack.py: train/rank/data/rows.npz, committed) and prints its validation table against
today's ranking, per split, question kind and language, with a paired bootstrap interval
for the held-out repositories.

Today's ranking is the binary's own order, a feature of every row (`fused_rank`:
index/past_changes.rs's fusion of the lexical rank and the history vote), so both
rankings are judged on the same candidates.

Splits are by repository (sources.py): `train` fits, `valid` stops the boosting early,
`test` is held out and read once for the table. Deterministic: fixed seed, LightGBM's
`deterministic` with forced row-wise histograms, two threads.

Trained on the bins pack.py stores; the model is written with its thresholds as values
(`in_values`), so the binary walks it on the values it computes.

Usage: train.py [--rows PATH] [--out DIR] [--rounds N]
Writes DIR/ranker.txt (LightGBM's text model), DIR/report.json (the table) and
DIR/parity.json (held-out rows with the trainer's scores, which the Rust walker must give).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import lightgbm as lgb
import numpy as np

REPO = Path(__file__).resolve().parents[2]
SEED = 13
PARAMS = {
    "objective": "lambdarank", "metric": "ndcg", "eval_at": [1, 5],
    "learning_rate": 0.05, "num_leaves": 31, "min_data_in_leaf": 100,
    "lambdarank_truncation_level": 20, "seed": SEED, "deterministic": True,
    "force_row_wise": True, "num_threads": 2, "verbosity": -1,
}


class Rows:
    """The packed table: rows grouped by query (contiguous), per-query columns."""

    def __init__(self, path: Path):
        data = np.load(path)
        self.names = [str(n) for n in data["names"]]
        self.label = data["label"].astype(np.int32)
        self.query = data["query"]
        # Bin numbers (pack.py), a question's stored once a query: spread to its rows.
        self.values = np.stack([
            data[f"col_{i}"].astype(np.float32)[self.query] if name.startswith("question_")
            else data[f"col_{i}"].astype(np.float32)
            for i, name in enumerate(self.names)], axis=1)
        self.edges = [data[f"edges_{i}"] for i in range(len(self.names))]
        self.meta = {key: np.array([str(v) for v in data[key]]) for key in
                     ("repo", "split", "language", "kind")}
        # Start and end row of each query.
        n = len(self.meta["repo"])
        self.start = np.searchsorted(self.query, np.arange(n), side="left")
        self.end = np.searchsorted(self.query, np.arange(n), side="right")

    def queries(self, **want) -> np.ndarray:
        keep = np.ones(len(self.meta["repo"]), dtype=bool)
        for key, value in want.items():
            keep &= self.meta[key] == value
        return np.flatnonzero(keep)

    def matrix(self, chosen: np.ndarray):
        rows = np.concatenate([np.arange(self.start[q], self.end[q]) for q in chosen])
        return self.values[rows], self.label[rows], (self.end[chosen] - self.start[chosen])


def in_values(model_text: str, edges: list[np.ndarray]) -> str:
    """The model trained on bin numbers, its thresholds written as values: a split
    between bins k and k+1 (threshold in (k, k+1)) becomes `value <= upper edge of bin
    k`, which sends every value the way its bin went (pack.py). The edges are float32
    values, written exactly."""
    out, features = [], None
    for line in model_text.split("\n"):
        if line.startswith("split_feature="):
            features = [int(f) for f in line.split("=", 1)[1].split()]
        elif line.startswith("threshold=") and features is not None:
            values = []
            for feature, threshold in zip(features, line.split("=", 1)[1].split()):
                k = int(np.floor(float(threshold)))
                edge = edges[feature]
                value = float(edge[min(k, len(edge) - 1)]) if k >= 0 else float(edge[0]) - 1.0
                values.append(repr(value))
            line = "threshold=" + " ".join(values)
        elif line.startswith("Tree="):
            features = None
        elif line.startswith("tree_sizes="):
            continue  # byte sizes of the trees as trained: no longer true; LightGBM reads on without
        out.append(line)
    return "\n".join(out)


def hit_ranks(rows: Rows, chosen: np.ndarray, score) -> np.ndarray:
    """For each query, the best 1-based place an answer holds when the candidates are
    ordered by `score(values)` (higher first; ties by today's order)."""
    return hit_ranks_of(rows, chosen, lambda lo, hi: score(rows.values[lo:hi]))


def hit_ranks_of(rows: Rows, chosen: np.ndarray, scores_of) -> np.ndarray:
    """`hit_ranks` with the scores of each query's rows `lo..hi` given by `scores_of(lo, hi)`
    (judge.py's, computed once for all rows)."""
    fused = rows.names.index("fused_rank")
    out = np.empty(len(chosen), dtype=np.int32)
    for i, q in enumerate(chosen):
        values = rows.values[rows.start[q]:rows.end[q]]
        labels = rows.label[rows.start[q]:rows.end[q]]
        s = scores_of(rows.start[q], rows.end[q])
        order = np.lexsort((values[:, fused], -s))
        places = np.flatnonzero(labels[order] > 0)
        out[i] = places[0] + 1 if len(places) else 10**6
    return out


def asked_queries(path: Path, count: int) -> np.ndarray:
    """Per query, whether it is a question asked of the code (data/questions.json), which
    the binary leaves to today's order (index/query `ParsedQuestion::is_question`)."""
    asked = np.zeros(count, dtype=bool)
    if path.exists():
        asked[json.loads(path.read_text())["queries"]] = True
    return asked


def bootstrap(a: np.ndarray, b: np.ndarray, rounds: int = 2000) -> tuple[float, float]:
    """95% interval of mean(a) - mean(b), resampling queries (paired)."""
    rng = np.random.default_rng(SEED)
    d = (a.astype(np.float64) - b)
    means = np.array([d[rng.integers(0, len(d), len(d))].mean() for _ in range(rounds)])
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", default=str(REPO / "train" / "rank" / "data" / "rows.npz"))
    parser.add_argument("--out", default=str(REPO / "train" / "rank" / "out"))
    parser.add_argument("--questions", default=str(REPO / "train" / "rank" / "data" / "questions.json"),
                        help="the held-out queries the binary leaves to today's order (the tables only)")
    parser.add_argument("--rounds", type=int, default=600)
    parser.add_argument("--repo-weight", type=float, default=0.0,
                        help="weigh each training query by (its repository's query count) ** -P, "
                             "scaled to a mean of 1: 0 (the default) weighs every query alike, 1 "
                             "every repository alike")
    parser.add_argument("--today-weight", type=float, default=1.5,
                        help="the learned order's score less this times ln(today's place), as "
                             "index/learned.rs TODAY_WEIGHT (the tables only; the trees are the same)")
    parser.add_argument("--balance-kinds", action="store_true",
                        help="weigh the question kinds (commit message, doc comment) alike in all")
    parser.add_argument("--answers-at-most", type=int, default=1,
                        help="fit only training queries with at most this many answers among their "
                             "candidates (0: all): a commit's answer files are what it changed together, "
                             "so a file changed with everything is an answer to questions about other things")
    parser.add_argument("--without", default="",
                        help="features (comma-separated) held at 0 in training, so no tree splits on them")
    args = parser.parse_args()
    if not Path(args.rows).exists():
        sys.exit(f"no {args.rows}: run train/rank/features.py, then train/rank/pack.py")
    rows = Rows(Path(args.rows))
    names = rows.names
    without = [name for name in args.without.split(",") if name]
    for name in without:
        rows.values[:, names.index(name)] = 0.0
    answerable = np.array([rows.label[rows.start[q]:rows.end[q]].any() for q in range(len(rows.start))])
    train = rows.queries(split="train")
    valid = rows.queries(split="valid")
    test = rows.queries(split="test")
    print(f"queries: train {len(train)} ({answerable[train].sum()} with the answer among the candidates), "
          f"valid {len(valid)}, test {len(test)}; {len(names)} features; kinds "
          + ", ".join(f"{k} {int((rows.meta['kind'] == k).sum())}" for k in sorted(set(rows.meta["kind"]))))
    fitted = train[answerable[train]]
    if args.answers_at_most:
        answers = np.array([rows.label[rows.start[q]:rows.end[q]].sum() for q in fitted])
        fitted = fitted[answers <= args.answers_at_most]
    x, y, groups = rows.matrix(fitted)
    vx, vy, vgroups = rows.matrix(valid[answerable[valid]])
    weight = None
    per_query = np.ones(len(fitted))
    if args.balance_kinds:
        # Commit messages are four fifths of the queries, and questions that describe
        # code (doc comments) the rest; an ask is as often a question as a report, so
        # each kind weighs the same in all.
        kinds, counts = np.unique(rows.meta["kind"][fitted], return_counts=True)
        share = dict(zip(kinds, counts / counts.sum()))
        per_query *= np.array([1.0 / share[k] for k in rows.meta["kind"][fitted]])
    if args.repo_weight:
        # Large repositories give most commits, and their commits mostly change their
        # largest, busiest files: weighing each repository's queries down by how many it
        # gave keeps that prior from being learned as a rule of every repository.
        per_repo = dict(zip(*np.unique(rows.meta["repo"][fitted], return_counts=True)))
        count = np.array([per_repo[r] for r in rows.meta["repo"][fitted]], dtype=np.float64)
        per_query *= count ** -args.repo_weight
    if args.repo_weight or args.balance_kinds:
        weight = np.repeat(per_query / per_query.mean(), groups).astype(np.float32)
    train_set = lgb.Dataset(x, y, group=groups, weight=weight, feature_name=names)
    valid_set = lgb.Dataset(vx, vy, group=vgroups, reference=train_set)
    booster = lgb.train(PARAMS, train_set, num_boost_round=args.rounds, valid_sets=[valid_set],
                        callbacks=[lgb.early_stopping(50, verbose=False)])
    best = booster.best_iteration or args.rounds

    fused = names.index("fused_rank")

    def today(values):
        return -values[:, fused]

    asked = asked_queries(Path(args.questions), len(rows.start))

    def learned(lo, hi):
        # As the binary orders (index/learned.rs `TODAY_WEIGHT`): the trees' score less the
        # weight times the log of today's place, so a close call keeps today's order; a
        # question asked of the code keeps today's order.
        values = rows.values[lo:hi]
        if asked[rows.query[lo]]:
            return today(values)
        place = rows.edges[fused][values[:, fused].astype(int)].astype(np.float64)
        return booster.predict(values, num_iteration=best) - args.today_weight * np.log(place)

    report = {"features": names, "without": without, "repo_weight": args.repo_weight, "balance_kinds": args.balance_kinds, "answers_at_most": args.answers_at_most, "today_weight": args.today_weight, "best_iteration": best, "params": PARAMS, "splits": {}}
    print(f"\nbest iteration {best}")
    print(f"{'split':6} {'group':18} {'n':>6}  {'today @1':>9} {'@5':>6}  {'learned @1':>10} {'@5':>6}")
    for split, chosen in (("valid", valid), ("test", test)):
        a_ranks, b_ranks = hit_ranks_of(rows, chosen, learned), hit_ranks(rows, chosen, today)
        groups_of = [("all", np.ones(len(chosen), dtype=bool))]
        for key in ("kind", "language"):
            for value in sorted(set(rows.meta[key][chosen])):
                groups_of.append((f"{key} {value}", rows.meta[key][chosen] == value))
        for label, mask in groups_of:
            a, b = a_ranks[mask], b_ranks[mask]
            row = {"n": int(mask.sum()),
                   "today": [float((b <= 1).mean()), float((b <= 5).mean())],
                   "learned": [float((a <= 1).mean()), float((a <= 5).mean())]}
            if label == "all" or label.startswith("kind"):
                row["acc5_diff_interval"] = bootstrap(a <= 5, b <= 5)
            report["splits"].setdefault(split, {})[label] = row
            print(f"{split:6} {label:18} {row['n']:6}  {row['today'][0]:9.3f} {row['today'][1]:6.3f}  "
                  f"{row['learned'][0]:10.3f} {row['learned'][1]:6.3f}"
                  + (f"   Acc@5 diff 95% CI [{row['acc5_diff_interval'][0]:+.3f}, {row['acc5_diff_interval'][1]:+.3f}]"
                     if "acc5_diff_interval" in row else ""))
    importance = sorted(zip(names, booster.feature_importance("gain")), key=lambda p: -p[1])
    report["importance"] = [(n, float(g)) for n, g in importance]
    print("\nfeature importance (gain):", ", ".join(f"{n} {g:.0f}" for n, g in importance[:12]))
    os.makedirs(args.out, exist_ok=True)
    model_path = os.path.join(args.out, "ranker.txt")
    with open(model_path, "w") as f:
        f.write(in_values(booster.model_to_string(num_iteration=best), rows.edges))
    # Rows with the trainer's own scores, for the Rust walker's parity test: the first
    # held-out queries' candidates, 300 rows, as values (each bin's upper edge), scored
    # by LightGBM with the model written in values, and checked against the model on
    # bin numbers: the two must agree exactly.
    codes = rows.values[rows.start[test[0]]:][:300]
    parity = np.stack([rows.edges[i][codes[:, i].astype(int)] for i in range(len(names))], axis=1)
    scores = lgb.Booster(model_file=model_path).predict(parity)
    if not np.array_equal(scores, booster.predict(codes, num_iteration=best)):
        sys.exit("the model written in values scores other than the one trained on bins")
    with open(os.path.join(args.out, "parity.json"), "w") as f:
        json.dump({"features": names, "rows": parity.astype(float).tolist(),
                   "scores": [float(v) for v in scores]}, f)
    with open(os.path.join(args.out, "report.json"), "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
