#!/usr/bin/env python3
"""Turns bench/run.sh's raw results (.tmp/bench/*.json) into the markdown summary.

Usage: summarize.py OUT_DIR CORPUS_DIR
"""

import glob
import json
import os
import platform
import statistics
import subprocess
import sys

SEARCH_TARGET = 1.1
EDIT_TARGET = 1.5


def ms(seconds):
    return f"{seconds * 1e3:.1f} ms"


def us(ns):
    return f"{ns / 1e6:.2f} ms" if ns >= 1e6 else f"{ns / 1e3:.2f} µs"


def verdict(ok):
    return "ok" if ok else "MISSED"


def stats(m):
    times = sorted(m["times"])
    return {
        "times": times,
        "median": statistics.median(times),
        "min": times[0],
        "mean": statistics.fmean(times),
        "cpu": statistics.fmean(m["cpu"]),
    }


def corpus_facts(corpus):
    files, size = 0, 0
    for root, _, names in os.walk(corpus):
        for name in names:
            files += 1
            size += os.path.getsize(os.path.join(root, name))
    return files, size


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    rg = subprocess.run(["rg", "--version"], capture_output=True, text=True).stdout.splitlines()
    return f"{os.cpu_count()} CPUs ({cpu}), load average {load:.1f} at the end; {rg[0] if rg else 'rg ?'}"


def main():
    out, corpus = sys.argv[1], sys.argv[2]
    lines = ["# copilot-ls benchmark", ""]
    lines.append(f"Machine: {machine()}.")
    lines.append("")

    searches = []
    for name in ("rare", "common", "regex"):
        rounds = sorted(glob.glob(os.path.join(out, f"search-{name}-*.json")))
        if not rounds:
            continue
        merged = {}
        for path in rounds:
            with open(path) as f:
                for r in json.load(f)["results"]:
                    tool = r["command"].split()[0]
                    m = merged.setdefault(tool, {"times": [], "cpu": []})
                    m["times"] += r["times"]
                    m["cpu"] += [r["user"] + r["system"]] * len(r["times"])
        count_path = os.path.join(out, f"search-{name}.count")
        count = open(count_path).read().strip() if os.path.exists(count_path) else "?"
        searches.append((name, count, stats(merged["rg"]), stats(merged["copilot-ls"]), len(rounds)))
    if searches:
        files, size = corpus_facts(corpus)
        runs, rounds = len(searches[0][2]["times"]), searches[0][4]
        lines.append(
            f"## search_code vs rg ({files} files, {size / 1e6:.0f} MB on disk incl. ignored "
            f"and binary files; warm cache; hyperfine, {runs} runs each in {rounds} rounds)"
        )
        lines.append("")
        lines.append(
            "| query | matching lines | rg median (min) | copilot-ls median (min) | ratio median "
            "| ratio min | rg CPU | copilot-ls CPU | ratio CPU | target ≤ 1.1× (median) |"
        )
        lines.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
        for name, count, rg, ours, _ in searches:
            ratio = ours["median"] / rg["median"]
            lines.append(
                f"| {name} | {count} | {ms(rg['median'])} ({ms(rg['min'])}) | "
                f"{ms(ours['median'])} ({ms(ours['min'])}) | {ratio:.2f}× | "
                f"{ours['min'] / rg['min']:.2f}× | {ms(rg['cpu'])} | {ms(ours['cpu'])} | "
                f"{ours['cpu'] / rg['cpu']:.2f}× | {verdict(ratio <= SEARCH_TARGET)} |"
            )
        lines.append("")
        lines.append(
            "Times are wall clock per search; CPU is user + system time. rg prints every "
            "matching line (to /dev/null), copilot-ls the first 100 and a count."
        )
        lines.append("")

    edits_path = os.path.join(out, "edits.json")
    if os.path.exists(edits_path):
        with open(edits_path) as f:
            edits = json.load(f)
        lines.append(f"## {edits['edits']} incremental edits, 10 KB vs 10 MB document")
        lines.append("")
        lines.append("| document | in-process mean / edit | median / edit | p99 | LSP end-to-end / edit |")
        lines.append("| --- | ---: | ---: | ---: | ---: |")
        for row in edits["rows"]:
            lsp = us(row["lsp_per_edit_ns"]) if row["lsp_per_edit_ns"] is not None else "-"
            lines.append(
                f"| {row['document']} | {us(row['mean_ns'])} | {us(row['median_ns'])} | "
                f"{us(row['p99_ns'])} | {lsp} |"
            )
        lines.append("")
        ratio = edits["ratio_median"]
        text = (
            f"Ratio 10 MB / 10 KB: in-process median {ratio:.2f}×, mean {edits['ratio_mean']:.2f}×"
        )
        if edits.get("ratio_lsp") is not None:
            text += f", LSP end-to-end {edits['ratio_lsp']:.2f}×"
        # The verdict uses the median and the end-to-end total: on a shared machine one
        # 10 ms preemption adds 1 µs to a 10,000-edit mean, which is noise, not edit cost.
        worst = max(r for r in (ratio, edits.get("ratio_lsp")) if r is not None)
        lines.append(
            f"{text} (target ≤ {EDIT_TARGET}× on the median and end to end: "
            f"{verdict(worst <= EDIT_TARGET)})."
        )
        lines.append("")

    print("\n".join(lines))


if __name__ == "__main__":
    main()
