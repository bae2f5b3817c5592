#!/usr/bin/env python3
"""The learned ranker's training rows: for each mined query (mine.py), the features of
its candidate files as the binary computes them (`copilot-ls dev features`, one function
for the product and for training), each labelled 1 when the query's commit changed it.

For each repository and snapshot, a checkout of the snapshot (a shared clone of the
mirror, HEAD detached at the snapshot, so no commit after it can vote) is indexed with
its history, and all the snapshot's queries go through one `dev features` process. Rows
are cached per (repository, snapshot) under .tmp/rank/features/ (gzip JSON lines: one
object per query, `{commit, kind, split, language, names, files: [{path, values, label}]}`,
kind `commit` or `doc`: doc_queries.py's questions, whose comments are blanked in the
checkout before it is indexed);
a cached snapshot is skipped, so a run can stop at any point and resume. The checkouts
and their indexes are removed after use: only the rows are kept.

Usage: features.py [--binary BIN] [--repos N] [--only OWNER/NAME] [--limit N]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import doc_queries  # noqa: E402  (questions of the written kind: doc comments, taken out of the checkout)

REPO = Path(__file__).resolve().parents[2]
QUERIES = REPO / ".tmp" / "rank" / "queries"
OUT = REPO / ".tmp" / "rank" / "features"
MIRRORS = Path("/work/.mirror")


def mirror_of(name: str) -> Path | None:
    base = MIRRORS / name.replace("/", "+")
    for candidate in (base / "repo", base):
        if (candidate / "objects").is_dir() or (candidate / "HEAD").is_file():
            return candidate
    found = list(base.glob("**/objects"))
    return found[0].parent if found else None


def read_queries(path: Path):
    meta, queries = None, []
    with open(path) as f:
        for line in f:
            record = json.loads(line)
            if "meta" in record:
                meta = record["meta"]
            else:
                queries.append(record)
    return meta, queries


def checkout(mirror: Path, snapshot: str, into: Path) -> None:
    subprocess.run(["git", "clone", "--quiet", "--shared", "--no-checkout", str(mirror), str(into)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    subprocess.run(["git", "-C", str(into), "checkout", "--quiet", "--detach", snapshot],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def features_for(binary: str, workspace: Path, cache: Path, questions: list[str], limit: int):
    env = dict(os.environ, COPILOT_LS_CACHE_DIR=str(cache), COPILOT_LS_LOG="error")
    lines = "".join(json.dumps(q) + "\n" for q in questions)
    done = subprocess.run([binary, "dev", "features", "--workspace", str(workspace), "--limit", str(limit)],
                          input=lines, capture_output=True, text=True, env=env, check=True)
    return [json.loads(line) for line in done.stdout.splitlines()]


def split_of(path: Path) -> str:
    with open(path) as f:
        first = json.loads(f.readline())
    return first.get("meta", {}).get("split", "train")


def interleaved(files: list[Path]) -> list[Path]:
    """Two training repositories, then one held out (valid and test in turn), so that a
    run stopped at any point has rows of every split."""
    train = [f for f in files if split_of(f) == "train"]
    held = [f for f in files if split_of(f) != "train"]
    out = []
    while train or held:
        out.extend(train[:2])
        del train[:2]
        out.extend(held[:1])
        del held[:1]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=str(REPO / "target" / "release" / "copilot-ls"))
    parser.add_argument("--repos", type=int, default=0, help="stop after this many repositories (0: all)")
    parser.add_argument("--only", default="", help="one repository, OWNER/NAME")
    parser.add_argument("--limit", type=int, default=200, help="lexical chunks read per query")
    parser.add_argument("--snapshots", type=int, default=0,
                        help="the newest N snapshots of each repository (0: all)")
    parser.add_argument("--interleave", action="store_true",
                        help="alternate two training repositories with one held-out, so a partial run has every split")
    parser.add_argument("--max-files", type=int, default=20000,
                        help="skip a snapshot whose checkout has more files than this")
    parser.add_argument("--reverse", action="store_true",
                        help="the repositories in reverse order: a second worker beside a first")
    parser.add_argument("--no-docs", action="store_true",
                        help="commit messages only, no doc-comment questions (doc_queries.py)")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    files = sorted(QUERIES.glob("*.jsonl"))
    if args.only:
        files = [f for f in files if f.stem == args.only.replace("/", "+")]
    if args.interleave:
        files = interleaved(files)
    if args.reverse:
        files.reverse()
    done_repos = 0
    for path in files:
        meta, queries = read_queries(path)
        if not meta or not queries:
            continue
        mirror = mirror_of(meta["repo"])
        if mirror is None:
            print(f"{meta['repo']}: no mirror under {MIRRORS}", file=sys.stderr)
            continue
        by_snapshot: dict[str, list[dict]] = {}
        for query in queries:
            by_snapshot.setdefault(query["snapshot"], []).append(query)
        snapshots = list(by_snapshot.items())
        if args.snapshots:
            snapshots = snapshots[-args.snapshots:]
        for snapshot, chosen in snapshots:
            out = OUT / f"{path.stem}+{snapshot[:12]}.jsonl.gz"
            if out.exists():
                continue
            started = time.time()
            with tempfile.TemporaryDirectory(prefix="rank-") as scratch:
                workspace, cache = Path(scratch) / "checkout", Path(scratch) / "cache"
                try:
                    checkout(mirror, snapshot, workspace)
                    count = sum(len(names) for root, _, names in os.walk(workspace)
                                if os.sep + ".git" not in root)
                    if count > args.max_files:
                        print(f"{meta['repo']} {snapshot[:12]}: {count} files, skipped", file=sys.stderr)
                        continue
                    chosen = [dict(q, kind="commit") for q in chosen]
                    if not args.no_docs:
                        chosen += doc_queries.strip_and_ask(args.binary, workspace, meta["language"], snapshot)
                    results = features_for(args.binary, workspace, cache,
                                           [q["query"] for q in chosen], args.limit)
                except subprocess.CalledProcessError as error:
                    print(f"{meta['repo']} {snapshot[:12]}: {error} {error.stderr[-500:] if error.stderr else ''}",
                          file=sys.stderr)
                    continue
            partial = out.with_suffix(".partial")
            kept = 0
            with gzip.open(partial, "wt") as f:
                for query, result in zip(chosen, results):
                    if not result:
                        continue
                    answers = set(query["answer"])
                    rows = [{"path": c["path"], "values": c["values"], "label": int(c["path"] in answers)}
                            for c in result["files"]]
                    f.write(json.dumps({
                        "repo": meta["repo"], "commit": query["commit"], "kind": query["kind"],
                        "split": meta["split"],
                        "language": meta["language"], "names": result["names"],
                        "featureSet": result["featureSet"], "answers": sorted(answers), "files": rows,
                    }) + "\n")
                    kept += 1
            os.replace(partial, out)
            print(f"{meta['repo']} {snapshot[:12]}: {kept} queries in {time.time() - started:.1f} s", flush=True)
        done_repos += 1
        if args.repos and done_repos >= args.repos:
            break
    shutil.rmtree(OUT / "tmp", ignore_errors=True)


if __name__ == "__main__":
    main()
