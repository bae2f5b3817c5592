#!/usr/bin/env python3
"""Print the DATA-CARD tables (sources, pair counts per language / kind / split) from the cached pairs."""
import collections
import glob
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rows, by_lang = [], collections.Counter()
for path in sorted(glob.glob(os.path.join(ROOT, ".tmp", "train", "pairs", "*.jsonl"))):
    with open(path) as f:
        meta = json.loads(f.readline())["meta"]
        c = collections.Counter()
        for line in f:
            p = json.loads(line)
            c[p["kind"]] += 1
            by_lang[(meta["lang"], meta["split"], p["kind"])] += 1
    rows.append((meta, c))
print("| repository | commit | license | language | split | kind 1 (commit) | kind 2 (doc) |")
print("|---|---|---|---|---|---:|---:|")
for meta, c in sorted(rows, key=lambda r: (r[0]["lang"], r[0]["split"], r[0]["repo"])):
    print(f"| {meta['repo']} | {meta['commit']} | {meta['license']} | {meta['lang']} | {meta['split']} | {c[1]} | {c[2]} |")
print()
print("| language | split | kind 1 (commit) | kind 2 (doc) | total |")
print("|---|---|---:|---:|---:|")
tot = collections.Counter()
for lang in sorted({k[0] for k in by_lang}):
    for split in ("train", "val"):
        a, b = by_lang[(lang, split, 1)], by_lang[(lang, split, 2)]
        tot[(split, 1)] += a
        tot[(split, 2)] += b
        print(f"| {lang} | {split} | {a} | {b} | {a + b} |")
for split in ("train", "val"):
    print(f"| **all** | {split} | {tot[(split, 1)]} | {tot[(split, 2)]} | {tot[(split, 1)] + tot[(split, 2)]} |")
