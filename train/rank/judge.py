#!/usr/bin/env python3
"""Judges the committed model (train/rank/out/ranker.txt) on the held-out mined
repositories at one or more of today's-order weights, without training: the tables
train.py prints at the end, for each weight, from the same rows and the same trees.

Choosing the binary's `learned::TODAY_WEIGHT` is a choice between blends of one model;
retraining for each would only repeat the same trees (training is deterministic).

Usage: python train/rank/judge.py --today-weight 1.5 2 3 [--model PATH] [--rows PATH]
"""
import argparse
import sys
from pathlib import Path

import lightgbm as lgb
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train import REPO, Rows, asked_queries, bootstrap, hit_ranks, hit_ranks_of  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", default=str(REPO / "train" / "rank" / "data" / "rows.npz"))
    parser.add_argument("--model", default=str(REPO / "train" / "rank" / "out" / "ranker.txt"))
    parser.add_argument("--today-weight", type=float, nargs="+", required=True)
    parser.add_argument("--questions", default=str(REPO / "train" / "rank" / "data" / "questions.json"),
                        help="the held-out queries the binary leaves to today's order")
    args = parser.parse_args()
    rows = Rows(Path(args.rows))
    # The written model splits on values (each bin's upper edge), as the binary reads it.
    as_values = np.stack([rows.edges[i][rows.values[:, i].astype(int)]
                          for i in range(len(rows.names))], axis=1).astype(np.float64)
    booster = lgb.Booster(model_file=args.model)
    fused = rows.names.index("fused_rank")
    place = np.log(as_values[:, fused])
    trees = booster.predict(as_values)

    print(f"{'weight':>6} {'split':5} {'group':22} {'n':>6}  {'today @1':>8} {'@5':>6}  "
          f"{'learned @1':>10} {'@5':>6}  Acc@5 diff 95% CI")
    splits = {split: rows.queries(split=split) for split in ("valid", "test")}
    today = {split: hit_ranks(rows, chosen, lambda values: -values[:, fused])
             for split, chosen in splits.items()}
    # A question asked of the code keeps today's order, as in the binary.
    asked = asked_queries(Path(args.questions), len(rows.start))[rows.query]
    for weight in args.today_weight:
        blended = np.where(asked, -as_values[:, fused], trees - weight * place)
        for split, chosen in splits.items():
            a = hit_ranks_of(rows, chosen, lambda lo, hi: blended[lo:hi])
            b = today[split]
            groups = [("all", np.ones(len(chosen), dtype=bool))]
            groups += [(f"kind {k}", rows.meta["kind"][chosen] == k)
                       for k in sorted(set(rows.meta["kind"][chosen]))]
            if split == "test":
                groups += [(f"language {k}", rows.meta["language"][chosen] == k)
                           for k in sorted(set(rows.meta["language"][chosen]))]
            for label, mask in groups:
                x, y = a[mask], b[mask]
                ci = bootstrap(x <= 5, y <= 5) if not label.startswith("language") else None
                print(f"{weight:6.2f} {split:5} {label:22} {int(mask.sum()):6}  "
                      f"{(y <= 1).mean():8.3f} {(y <= 5).mean():6.3f}  "
                      f"{(x <= 1).mean():10.3f} {(x <= 5).mean():6.3f}"
                      + (f"  [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else ""))


if __name__ == "__main__":
    main()
