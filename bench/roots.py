#!/usr/bin/env python3
"""What several roots cost: the same files as one root and as two roots of half each.

Usage: roots.py BIN [--files 50000] [--rounds 2] [--corpus DIR]

The corpus is `DIR/both/a` and `DIR/both/b`, each a generated corpus of FILES/2 files
(`gen_corpus.py`). One root is `DIR/both`; two roots are `DIR/both/a` and `DIR/both/b`:
exactly the same files. Side by side, alternating, each run on an empty cache:
- `copilot-ls index --json` (cold build): wall seconds, CPU seconds (user and system,
  steadier than wall time on a shared machine) and the process's peak resident set
  (`wait4`'s ru_maxrss);
- `copilot-ls serve` on the first round's warm caches, with the roots as LSP workspace
  folders: its resident set once the index's refresh has ended;
- then, on the two roots' warm caches, adding the second root to the first:
  `index --json` with both roots after an index of `a` alone reads only `b`'s files
  (`filesRead` of `a` is 0: adding a folder never rebuilds the others).
Prints the medians and the ratios two roots / one root; the issue's target is at most
1.2x for both.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def arg(name, default):
    if name in sys.argv:
        return sys.argv[sys.argv.index(name) + 1]
    return default


def run(binary, roots, cache):
    """`index --json` over `roots` with `cache`: (wall seconds, CPU seconds, peak RSS MB,
    report)."""
    args = [binary, "index", "--json"]
    for root in roots:
        args += ["--workspace", root]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "COPILOT_LS_CACHE_DIR": cache,
           "COPILOT_LS_HISTORY": "off"}
    started = time.monotonic()
    process = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.monotonic() - started
    if status != 0:
        raise SystemExit(f"index failed ({status}): {' '.join(args)}")
    cpu = usage.ru_utime + usage.ru_stime
    return seconds, cpu, usage.ru_maxrss / 1024, json.loads(out)


def server_rss(binary, roots, cache):
    """`copilot-ls serve` over `roots` on a warm `cache`: its resident set (MB) once the
    index's refresh has ended, as an editor would have it running."""
    sys.path.insert(0, os.path.join(REPO, "bench"))
    from index_bench import Lsp
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "COPILOT_LS_CACHE_DIR": cache,
           "COPILOT_LS_HISTORY": "off"}
    server = Lsp(binary, roots[0], env)
    try:
        folders = [{"uri": "file://" + root, "name": os.path.basename(root)} for root in roots]
        server.request("initialize", {"processId": None, "rootUri": folders[0]["uri"],
                                      "workspaceFolders": folders,
                                      "capabilities": {"window": {"workDoneProgress": True}}})
        server.notify("initialized", {})
        server.wait_indexed()
        return server.rss_mb()
    finally:
        server.close()


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    files = int(arg("--files", "50000"))
    rounds = int(arg("--rounds", "2"))
    corpus = os.path.abspath(arg("--corpus", None) or tempfile.mkdtemp(prefix="copilot-ls-roots-"))
    both = os.path.join(corpus, "both")
    halves = [os.path.join(both, "a"), os.path.join(both, "b")]
    for half in halves:
        if not os.path.isdir(half):
            subprocess.run([sys.executable, os.path.join(REPO, "bench", "gen_corpus.py"), half,
                            "--files", str(files // 2)], check=True, stdout=subprocess.DEVNULL)
    caches = os.path.join(corpus, "caches")
    measured = {"one": [], "two": []}
    for round_ in range(rounds):
        order = ["one", "two"] if round_ % 2 == 0 else ["two", "one"]
        for kind in order:
            cache = os.path.join(caches, f"{kind}-{round_}")
            shutil.rmtree(cache, ignore_errors=True)
            os.makedirs(cache)
            roots = [both] if kind == "one" else halves
            seconds, cpu, peak, report = run(binary, roots, cache)
            measured[kind].append((seconds, cpu, peak, report["files"]))
            print(f"round {round_ + 1} {kind} root(s): {seconds:.1f} s, CPU {cpu:.1f} s, "
                  f"peak {peak:.0f} MB, {report['files']} files", file=sys.stderr)
    # A server on the first round's warm caches: what an editor holds.
    resident = {kind: server_rss(binary, [both] if kind == "one" else halves,
                                 os.path.join(caches, f"{kind}-0")) for kind in ("one", "two")}
    # Adding a root: `a` alone, then both.
    cache = os.path.join(caches, "added")
    shutil.rmtree(cache, ignore_errors=True)
    os.makedirs(cache)
    run(binary, halves[:1], cache)
    _, _, _, added = run(binary, halves, cache)
    read = [root["filesRead"] for root in added["roots"]]

    def median(kind, i):
        return statistics.median(m[i] for m in measured[kind])

    print("| build | files | cold build s | CPU s | peak RSS MB |")
    print("| --- | --- | --- | --- | --- |")
    for kind, label in [("one", "one root"), ("two", "two roots of half each")]:
        print(f"| {label} | {measured[kind][0][3]} | {median(kind, 0):.1f} | {median(kind, 1):.1f} "
              f"| {median(kind, 2):.0f} |")
    ratio = lambda i: median("two", i) / median("one", i)
    print(f"| ratio two / one | | {ratio(0):.2f}x | {ratio(1):.2f}x | {ratio(2):.2f}x |")
    print(f"\nA server on the warm index, resident once its refresh ended: one root "
          f"{resident['one']:.0f} MB, two roots {resident['two']:.0f} MB "
          f"({resident['two'] / resident['one']:.2f}x).")
    print(f"\nAdding the second root to the first's index read {read[0]} files of the first "
          f"and {read[1]} of the second.")


if __name__ == "__main__":
    main()
