#!/usr/bin/env python3
"""Counts of the mined ranking queries (.tmp/rank/queries/*.jsonl), per language and split.

Usage: python3 train/rank/stats.py [--repos] [--markdown]
  --repos     one line per repository too
  --markdown  tables for DATA-CARD.md
"""
import argparse
import glob
import json
import os
import sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sources  # noqa: E402
from mine import OUT_DIR  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repos", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    rows = sources.load_sources()
    per = defaultdict(Counter)          # (lang, split) -> counters
    drops = Counter()
    answer_sizes = Counter()
    repo_lines = []
    mined = missing = 0
    failed = []
    for repo, lang, lic, split in rows:
        path = os.path.join(OUT_DIR, repo.replace("/", "+") + ".jsonl")
        if not os.path.exists(path):
            missing += 1
            continue
        mined += 1
        with open(path) as f:
            meta = json.loads(f.readline())["meta"]
            n = tests = 0
            for line in f:
                q = json.loads(line)
                n += 1
                answer_sizes[min(len(q["answer"]), 9)] += 1
                tests += bool(q["tests"])
        c = per[(lang, split)]
        c["repos"] += 1
        c["queries"] += n
        c["with_tests"] += tests
        c["commits"] += sum(s["commits"] for s in meta["snapshots"])
        if n == 0:
            failed.append(repo)
        drops.update(meta["dropped"])
        repo_lines.append((repo, lang, lic, split, n, meta))
    langs = sorted({k[0] for k in per})
    splits = ["train", "valid", "test"]
    tot = Counter()
    md = args.markdown
    if md:
        print("| language | " + " | ".join(f"{s} repos / queries" for s in splits) + " | total repos / queries |")
        print("|---|" + "---:|" * (len(splits) + 1))
    else:
        print(f"{'language':12}" + "".join(f"{s + ' repos':>13}{s + ' queries':>16}" for s in splits)
              + f"{'repos':>8}{'queries':>10}")
    for lang in langs:
        cells, lr, lq = [], 0, 0
        for s in splits:
            c = per[(lang, s)]
            cells.append((c["repos"], c["queries"]))
            lr += c["repos"]
            lq += c["queries"]
            tot[(s, "r")] += c["repos"]
            tot[(s, "q")] += c["queries"]
        if md:
            print(f"| {lang} | " + " | ".join(f"{r} / {q:,}" for r, q in cells) + f" | {lr} / {lq:,} |")
        else:
            print(f"{lang:12}" + "".join(f"{r:>13}{q:>16,}" for r, q in cells) + f"{lr:>8}{lq:>10,}")
    allr = sum(tot[(s, "r")] for s in splits)
    allq = sum(tot[(s, "q")] for s in splits)
    if md:
        print("| **all** | " + " | ".join(f"**{tot[(s, 'r')]} / {tot[(s, 'q')]:,}**" for s in splits)
              + f" | **{allr} / {allq:,}** |")
    else:
        print(f"{'all':12}" + "".join(f"{tot[(s, 'r')]:>13}{tot[(s, 'q')]:>16,}" for s in splits)
              + f"{allr:>8}{allq:>10,}")
    print()
    print(f"sources {len(rows)}, mined {mined}, not mined yet {missing}, mined with 0 queries {len(failed)}"
          + (f" ({', '.join(failed)})" if failed else ""))
    with_tests = sum(c["with_tests"] for c in per.values())
    commits = sum(c["commits"] for c in per.values())
    print(f"candidate commits read {commits:,}; queries {allq:,} ({allq / max(commits, 1):.0%}); "
          f"with a changed test that existed at the snapshot {with_tests:,}")
    print("answer files per query: " + ", ".join(
        f"{k if k < 9 else '9+'}: {v:,}" for k, v in sorted(answer_sizes.items())))
    print("commits dropped, by reason:")
    for k, v in drops.most_common():
        print(f"  {v:>8,}  {k}")
    if args.repos:
        print()
        for repo, lang, lic, split, n, meta in sorted(repo_lines, key=lambda r: (r[1], r[0].lower())):
            dates = " ".join(s["date"][:10] for s in meta["snapshots"])
            if md:
                print(f"| {repo} | {lang} | {lic} | {split} | {n:,} | {dates} |")
            else:
                print(f"{repo:45} {lang:11} {split:6} {n:>6}  {lic:28} snapshots {dates}")


if __name__ == "__main__":
    main()
