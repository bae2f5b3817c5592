#!/usr/bin/env python3
"""`find_references` against ripgrep, this build beside a baseline binary, in one run
(issue #54 item 3: at most 2x `rg -w -F` on real repositories, common and rare names).

Usage: references_speed.py BIN BASELINE_BIN REPO_DIR [--names A,B] [REPO_DIR ...]
                           [--runs 15] [--warmup 2]

For each REPO_DIR (a checkout, or a generated corpus: bench/gen_corpus.py), each binary's
index is built first with `copilot-ls index` under a cache dir of its own
(COPILOT_LS_CACHE_DIR under .tmp/bench-references/), so every timed run finds it warm.
The names are those given by a `--names` after the directory, else chosen from the text
with rg, the same on every machine for the same checkout:
- common: of the 40 names defined most often (`def`/`fn`/`func`/`function NAME`, at
  least 4 characters, not `_`-led or `test…`), the one on the most lines;
- rare: the first name, by name, defined once with at least 8 characters, whose whole
  word is in 2 to 5 files.
Then, the whole process each time, outputs to /dev/null:
  BIN tool find_references '{"name":NAME}' --workspace DIR
  BASELINE_BIN tool find_references '{"name":NAME}' --workspace DIR
  rg -n -w -F NAME DIR
after --warmup runs of each, --runs rounds, each round running the three once in an
order that rotates every round (a burst of load from elsewhere lands on all alike).

Before timing, the two binaries' answers are compared: the uses shown (at most 100
lines) must be the same lines, and each total must be at most rg's line count over the
files the tool reads (`--hidden --no-require-git --no-ignore-global`, as the index walks:
each use is a line rg matches; the tool leaves out definitions, comments and strings
where it classifies). A column says whether they agree; the totals are shown. A total
may differ between runs of one binary by a few dozen: which files past the shown uses
are classified rather than counted depends on how the threads race (the lines shown
never do).

Prints one Markdown table: rg median, this build's median, the baseline's, and both
ratios to rg.
"""

import collections
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, ".tmp", "bench-references")
DEFINITION = r"\b(?:def|fn|func|function)\s+([A-Za-z_][A-Za-z0-9_]*)"


def option(args, name, default):
    return args[args.index(name) + 1] if name in args else default


def parse_args(args):
    """The binaries, then each repository with the names given after it (or none)."""
    plain, repos, i = [], [], 0
    runs, warmup = int(option(args, "--runs", "15")), int(option(args, "--warmup", "2"))
    while i < len(args):
        arg = args[i]
        if arg in ("--runs", "--warmup"):
            i += 2
            continue
        if arg == "--names":
            if not repos:
                raise SystemExit("--names follows the repository it is for")
            repos[-1][1] = [n for n in args[i + 1].split(",") if n]
            i += 2
            continue
        if len(plain) < 2:
            plain.append(os.path.abspath(arg))
        else:
            repos.append([os.path.abspath(arg), None])
        i += 1
    if len(plain) < 2 or not repos:
        raise SystemExit(__doc__)
    return plain[0], plain[1], repos, runs, warmup


def rg_lines(argv):
    done = subprocess.run(["rg"] + argv, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"rg failed: {done.stderr[-500:]}")
    return done.stdout.splitlines()


def chosen_names(root):
    """(common, rare), deterministic for a checkout (see the module's text)."""
    defined = collections.Counter(
        rg_lines(["-o", "-N", "--no-filename", "-r", "$1", DEFINITION, root]))
    names = sorted((n for n in defined
                    if len(n) >= 4 and not n.startswith("_") and not n.startswith("test")),
                   key=lambda n: (-defined[n], n))
    lines = {n: len(rg_lines(["-w", "-F", "--no-filename", n, root])) for n in names[:40]}
    common = max(names[:40], key=lambda n: (lines[n], n))
    rare = None
    for name in sorted(n for n in names if defined[n] == 1 and len(n) >= 8):
        if 2 <= len(rg_lines(["-l", "-w", "-F", name, root])) <= 5:
            rare = name
            break
    return [common] + ([rare] if rare else [])


def tool_argv(binary, name, root):
    return [binary, "tool", "find_references", json.dumps({"name": name}), "--workspace", root]


def answer(binary, name, root, env):
    done = subprocess.run(tool_argv(binary, name, root), env=env, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL)
    lines = done.stdout.splitlines()
    shown = [line for line in lines if not line.startswith("(")]
    total = len(shown)
    for line in lines:
        found = re.search(r"; (\d+) in (\d+) files", line)
        if found:
            total = int(found.group(1))
    if lines and lines[0].startswith("No uses of"):
        shown, total = [], 0
    return shown, total


def timed(argv, env):
    started = time.perf_counter()
    subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return (time.perf_counter() - started) * 1000


def main():
    this, baseline, repos, runs, warmup = parse_args(sys.argv[1:])
    if shutil.which("rg") is None:
        raise SystemExit("rg is not installed (apt-get install ripgrep)")
    binaries = {"this build": this, "baseline": baseline}
    envs = {}
    for i, label in enumerate(binaries):
        envs[label] = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/"),
                       "COPILOT_LS_PROVIDER": "none",
                       "COPILOT_LS_CACHE_DIR": os.path.join(OUT, f"cache-{i}")}
    rows = []
    for root, names in repos:
        for label, binary in binaries.items():
            built = subprocess.run([binary, "index", "--workspace", root], env=envs[label],
                                   capture_output=True, text=True, stdin=subprocess.DEVNULL)
            if built.returncode != 0:
                raise SystemExit(f"{binary} index {root} failed: {built.stderr[-500:]}")
        names = names or chosen_names(root)
        for n, name in enumerate(names):
            kind = ["common", "rare"][n] if n < 2 else "given"
            rg = ["rg", "-n", "-w", "-F", name, root]
            rg_count = len(rg_lines(rg[1:]))
            rg_bound = len(rg_lines(["--hidden", "--no-require-git", "--no-ignore-global"]
                                    + rg[1:]))
            shown = {label: answer(binary, name, root, envs[label])
                     for label, binary in binaries.items()}
            agree = (shown["this build"][0] == shown["baseline"][0]
                     and all(total <= rg_bound for _, total in shown.values()))
            commands = [("rg", rg, None)] + [
                (label, tool_argv(binary, name, root), envs[label])
                for label, binary in binaries.items()]
            for argv_label, argv, env in commands:
                for _ in range(warmup):
                    timed(argv, env)
            ms = {label: [] for label, _, _ in commands}
            for r in range(runs):
                turn = r % len(commands)
                for label, argv, env in commands[turn:] + commands[:turn]:
                    ms[label].append(timed(argv, env))
            median = {label: statistics.median(v) for label, v in ms.items()}
            rows.append((os.path.basename(root), name, kind, rg_count,
                         shown["this build"][1], shown["baseline"][1], agree, median))
            print(f"done: {os.path.basename(root)} {name}", file=sys.stderr)
    print(f"`find_references` against `rg -n -w -F`, warm index, {runs} rounds, median ms "
          f"(order rotating each round)\n")
    print("| repository | name | rg lines | uses (this / baseline) | shown agree | rg ms "
          "| this build ms | baseline ms | this / rg | baseline / rg |")
    print("| --- | --- | ---: | ---: | :---: | ---: | ---: | ---: | ---: | ---: |")
    for repo, name, kind, rg_count, ours, theirs, agree, m in rows:
        print(f"| {repo} | `{name}` ({kind}) | {rg_count:,} | {ours:,} / {theirs:,} "
              f"| {'yes' if agree else 'NO'} | {m['rg']:.0f} | {m['this build']:.0f} "
              f"| {m['baseline']:.0f} | {m['this build'] / m['rg']:.2f}x "
              f"| {m['baseline'] / m['rg']:.2f}x |")
    load = os.getloadavg()[0]
    print(f"\nload average at the end: {load:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
