#!/usr/bin/env python3
"""Precision and recall of `find_references` for "who uses / who calls X" on real
Python repositories, against a whole-word grep baseline, with Python's own `ast` module
as the oracle (independent of the tree-sitter grammar the tool uses).

Usage: references_eval.py [--binary BIN] [--names N] REPO_DIR...

For each repository (a checkout; not committed: `git archive` of a mirror into .tmp/),
the names of the functions and methods it defines are sampled (deterministically, N per
repository, among those a whole-word grep finds on 2 to 100 lines of .py files, so the
tool's cap of 100 lines never cuts its answer). For each name:

- oracle uses: every line where `ast` sees the name used as code: a `Name`, the
  attribute of an `Attribute` (at the line the attribute ends on), an imported name;
  not its definitions (`def`/`class` names), parameters or keyword-argument names;
- oracle calls: the lines of `Call`s whose callee is that `Name` or attribute;
- grep: the lines of .py files holding the name as a whole word (`grep -w`);
- the tool: `copilot-ls tool find_references '{"name": X}'`, its lines in .py files.

Precision = found ∩ oracle uses / found; recall = found ∩ oracle uses / oracle uses;
call recall = found ∩ oracle calls / oracle calls; micro-averaged over all names.
Files `ast` cannot parse are left out of all three. The tool's time per name is the
whole `copilot-ls tool` process (opening the index included), p50 / p95.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import subprocess
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

SKIP_DIRS = {".git", "node_modules", ".tox", ".venv", "venv", "build", "dist"}


def python_files(root: Path) -> dict[str, tuple[str, ast.AST]]:
    files = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        for name in filenames:
            if not name.endswith(".py"):
                continue
            path = Path(dirpath) / name
            relative = path.relative_to(root).as_posix()
            try:
                text = path.read_text(encoding="utf-8")
                files[relative] = (text, ast.parse(text))
            except (SyntaxError, UnicodeDecodeError, ValueError):
                continue
    return files


def oracle(files: dict[str, tuple[str, ast.AST]]):
    """name -> set of (path, line) uses, and name -> set of call lines."""
    uses: dict[str, set] = defaultdict(set)
    calls: dict[str, set] = defaultdict(set)
    defined: set[str] = set()
    for path, (_, tree) in files.items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defined.add(node.name)
            elif isinstance(node, ast.Name):
                uses[node.id].add((path, node.lineno))
            elif isinstance(node, ast.Attribute):
                uses[node.attr].add((path, node.end_lineno))
            elif isinstance(node, ast.alias):
                for name in {node.name.split(".")[-1], node.asname} - {None}:
                    uses[name].add((path, node.lineno))
            if isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Name):
                    calls[func.id].add((path, func.lineno))
                elif isinstance(func, ast.Attribute):
                    calls[func.attr].add((path, func.end_lineno))
    return uses, calls, defined


def grep(files: dict[str, tuple[str, ast.AST]], name: str) -> set:
    word = re.compile(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])")
    found = set()
    for path, (text, _) in files.items():
        if name not in text:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if word.search(line):
                found.add((path, number))
    return found


def tool(binary: str, root: Path, cache: Path, name: str) -> set:
    started = time.perf_counter()
    done = subprocess.run(
        [binary, "tool", "find_references", json.dumps({"name": name}), "--workspace", str(root)],
        capture_output=True,
        text=True,
        env={**os.environ, "COPILOT_LS_CACHE_DIR": str(cache)},
    )
    TIMES.append(time.perf_counter() - started)
    found = set()
    for line in done.stdout.splitlines():
        match = re.match(r"^(.+?\.py):(\d+): ", line)
        if match:
            found.add((match.group(1), int(match.group(2))))
    return found


TIMES: list[float] = []


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("repos", nargs="+", type=Path)
    parser.add_argument("--binary", default=str(Path(__file__).resolve().parents[1] / "target/release/copilot-ls"))
    parser.add_argument("--names", type=int, default=25)
    parser.add_argument("--cache", type=Path, default=Path(__file__).resolve().parents[1] / ".tmp/refeval-cache")
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    totals = defaultdict(int)
    rows = []
    for root in args.repos:
        root = root.resolve()
        files = python_files(root)
        uses, calls, defined = oracle(files)
        rng = random.Random(22)
        candidates = sorted(n for n in defined if len(n) >= 4 and not n.startswith("__"))
        rng.shuffle(candidates)
        subprocess.run([args.binary, "index", "--workspace", str(root)], capture_output=True,
                       env={**os.environ, "COPILOT_LS_CACHE_DIR": str(args.cache)})
        chosen = 0
        counts = defaultdict(int)
        for name in candidates:
            grepped = grep(files, name)
            if not 2 <= len(grepped) <= 100:
                continue
            truth, truth_calls = uses.get(name, set()), calls.get(name, set())
            if not truth:
                continue
            found = tool(args.binary, root, args.cache, name)
            for label, got in (("tool", found), ("grep", grepped)):
                counts[f"{label}_found"] += len(got)
                counts[f"{label}_hit"] += len(got & truth)
                counts[f"{label}_calls"] += len(got & truth_calls)
            counts["truth"] += len(truth)
            counts["calls"] += len(truth_calls)
            chosen += 1
            if chosen == args.names:
                break
        counts["names"] = chosen
        times = sorted(TIMES)
        counts["p50_ms"] = round(statistics.median(times) * 1000) if times else 0
        counts["p95_ms"] = round(times[min(len(times) - 1, round(0.95 * (len(times) - 1)))] * 1000) if times else 0
        TIMES.clear()
        rows.append((root.name, len(files), dict(counts)))
        for key, value in counts.items():
            if not key.endswith("_ms"):
                totals[key] += value
    rows.append(("all", sum(r[1] for r in rows), dict(totals)))

    def ratio(a: int, b: int) -> str:
        return f"{a / b:.3f}" if b else "-"

    print("| repository | .py files | names | uses (oracle) | calls | tool precision | tool recall | tool call recall | grep precision | grep recall | tool p50 / p95 ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, nfiles, c in rows:
        print(
            f"| {name} | {nfiles} | {c['names']} | {c['truth']} | {c['calls']} | "
            f"{ratio(c['tool_hit'], c['tool_found'])} | {ratio(c['tool_hit'], c['truth'])} | "
            f"{ratio(c['tool_calls'], c['calls'])} | {ratio(c['grep_hit'], c['grep_found'])} | "
            f"{ratio(c['grep_hit'], c['truth'])} | "
            + (f"{c['p50_ms']} / {c['p95_ms']} |" if "p50_ms" in c else "- |")
        )


if __name__ == "__main__":
    sys.exit(main())
