#!/usr/bin/env python3
"""One ask at a time: the p50 and p95 of a no-model `copilot/ask` in a running server,
for short questions, real bug reports and 20 KB reports, beside a baseline binary.

Usage: ask_latency.py BIN [BASELINE_BIN] [--files 50000] [--rounds 2] [--corpus DIR]

Generates a corpus of --files files (bench/gen_corpus.py, cached under .tmp/bench-ask/)
unless --corpus names one, starts `copilot-ls serve` on it with `provider: none` for each
binary (each its own index cache, built before anything is timed), and asks each set one
question at a time, the binaries alternating by round so a noisy machine weighs on both
alike. The sets: the ten short questions of index_bench.py twice; the first 40 real
issues of bench/localization/questions.json; ten 20 KB texts made of those reports.
Prints one Markdown table, a row per set with each binary's p50 and p95 per round, and
the ratio of the medians of their p50s.
"""

import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from index_bench import QUESTIONS, percentile  # noqa: E402
from load import start  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, ".tmp", "bench-ask")


def option(args, name, default):
    return args[args.index(name) + 1] if name in args else default


def question_sets():
    with open(os.path.join(REPO, "bench", "localization", "questions.json")) as f:
        questions = json.load(f)["questions"]
    reports = [q["question"] for q in questions if q["kind"] != "written"]
    long_reports = []
    for i in range(10):
        text, j = "", i
        while len(text) < 20000:
            text += reports[j % len(reports)] + "\n\n"
            j += 7
        long_reports.append(text[:20000])
    return [("short questions", QUESTIONS * 2), ("real reports", reports[:40]),
            ("20 KB reports", long_reports)]


def times(lsp, questions):
    out = []
    for question in questions:
        started = time.perf_counter()
        reply = lsp.request("copilot/ask", {"question": question})
        out.append((time.perf_counter() - started) * 1000)
        assert "result" in reply, reply
    return out


def main():
    args = sys.argv[1:]
    binaries = [os.path.abspath(a) for i, a in enumerate(args)
                if not a.startswith("--") and (i == 0 or not args[i - 1].startswith("--"))]
    if not binaries:
        sys.exit(__doc__)
    files = int(option(args, "--files", "50000"))
    rounds = int(option(args, "--rounds", "2"))
    corpus = option(args, "--corpus", None)
    if corpus is None:
        corpus = os.path.join(OUT, f"corpus-{files}-code")
        if not os.path.isdir(corpus):
            subprocess.run([sys.executable, os.path.join(REPO, "bench/gen_corpus.py"), corpus,
                            "--files", str(files)], check=True, stdout=subprocess.DEVNULL)
    corpus = os.path.abspath(corpus)
    names = ["this build"] + ["baseline"] * (len(binaries) > 1)
    sets = question_sets()
    servers = {name: start(binary, corpus, os.path.join(OUT, f"cache-{i}"))
               for i, (name, binary) in enumerate(zip(names, binaries))}
    p50s = {(name, s): [] for name in names for s, _ in sets}
    cells = {(name, s): [] for name in names for s, _ in sets}
    for r in range(rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            for set_name, questions in sets:
                ms = times(servers[name], questions)
                p50 = statistics.median(ms)
                p50s[(name, set_name)].append(p50)
                cells[(name, set_name)].append(f"{p50:.1f} ({percentile(ms, 95):.0f})")
    for lsp in servers.values():
        lsp.close()
    print(f"{corpus}, {rounds} rounds; p50 (p95) ms per round\n")
    header = "| questions | " + " | ".join(names)
    header += " | this build / baseline |" if len(names) > 1 else " |"
    print(header)
    print("| --- |" + " ---: |" * (len(names) + (len(names) > 1)))
    for set_name, _ in sets:
        row = f"| {set_name} | " + " | ".join(", ".join(cells[(n, set_name)]) for n in names)
        if len(names) > 1:
            ratio = (statistics.median(p50s[("this build", set_name)])
                     / statistics.median(p50s[("baseline", set_name)]))
            row += f" | ×{ratio:.2f}"
        print(row + " |")


if __name__ == "__main__":
    main()
