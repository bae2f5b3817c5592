#!/usr/bin/env python3
"""Concurrent asks: how long the first, the median and the 95th-percentile reply take when
N no-model asks arrive at once (issue #20 item 7).

Usage: load.py BIN [BASELINE_BIN] [--files 128] [--counts 1,10,50,200] [--rounds 3]

Generates a corpus of --files files (bench/gen_corpus.py, cached under .tmp/bench-load/),
starts `copilot-ls serve` on it with `provider: none`, waits for the index, then for each
count writes that many `copilot/ask` requests in one write and times every reply from
that write. With a baseline binary the two run side by side, alternating by round, so a
noisy machine weighs on both alike. Prints one Markdown table: first reply, p50, p95 and
last reply in ms (medians over the rounds), and the first reply in single-ask times.
A server that sends nothing for 60 s in a burst is stopped and reported as stalled.
"""

import os
import shutil
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from index_bench import QUESTIONS, Lsp, percentile  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, ".tmp", "bench-load")
STALL_S = 60


def option(args, name, default):
    return args[args.index(name) + 1] if name in args else default


def start(binary, root, cache):
    shutil.rmtree(cache, ignore_errors=True)
    env = {"PATH": os.environ.get("PATH", ""), "COPILOT_LS_CACHE_DIR": cache}
    lsp = Lsp(binary, root, env)
    uri = "file://" + root
    lsp.request("initialize", {"processId": None, "rootUri": uri,
                               "workspaceFolders": [{"uri": uri, "name": "load"}],
                               "capabilities": {"window": {"workDoneProgress": True}},
                               "initializationOptions": {"provider": "none"}})
    lsp.notify("initialized", {})
    lsp.wait_indexed()
    # One ask first: opening the index and warming the page cache is not load.
    lsp.request("copilot/ask", {"question": QUESTIONS[0]})
    return lsp


def burst(lsp, count):
    """Writes `count` asks back to back; the ms from the first write to each reply."""
    ids = []
    frames = []
    for i in range(count):
        lsp.next_id += 1
        ids.append(lsp.next_id)
        body = ('{"jsonrpc":"2.0","id":%d,"method":"copilot/ask","params":{"question":"%s"}}'
                % (lsp.next_id, QUESTIONS[i % len(QUESTIONS)])).encode()
        frames.append(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    waiting = set(ids)
    started = time.perf_counter()

    def write():
        for frame in frames:
            lsp.proc.stdin.write(frame)
            lsp.proc.stdin.flush()

    # Written beside the reading, as an editor does: a server that stops reading while
    # its replies are not read would otherwise hold both ends still.
    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    times = []
    # A server that answers nothing for STALL_S has stalled (the binary before #20
    # item 7 did at 200 asks with server-created progress): it is stopped and reported.
    # One watchdog per burst (not a timer per message, which would load the client).
    last = [time.monotonic()]
    done = threading.Event()

    def watch():
        while not done.wait(1.0):
            if time.monotonic() - last[0] > STALL_S:
                lsp.proc.kill()
                return

    threading.Thread(target=watch, daemon=True).start()
    try:
        while waiting:
            message = lsp.read()
            last[0] = time.monotonic()
            if message.get("id") in waiting and "method" not in message:
                assert "result" in message, message
                waiting.discard(message["id"])
                times.append((time.perf_counter() - started) * 1000)
    except (RuntimeError, ValueError, OSError):
        return None
    finally:
        done.set()
    writer.join()
    return sorted(times)


def main():
    args = sys.argv[1:]
    binaries = [os.path.abspath(a) for a in args if not a.startswith("--")
                and (args.index(a) == 0 or not args[args.index(a) - 1].startswith("--"))]
    files = int(option(args, "--files", "128"))
    counts = [int(c) for c in option(args, "--counts", "1,10,50,200").split(",")]
    rounds = int(option(args, "--rounds", "3"))
    corpus = os.path.join(OUT, f"corpus-{files}-code")
    if not os.path.isdir(corpus):
        subprocess.run([sys.executable, os.path.join(REPO, "bench/gen_corpus.py"), corpus,
                        "--files", str(files)], check=True, stdout=subprocess.DEVNULL)
    names = ["this build"] + ["baseline"] * (len(binaries) > 1)
    results = {(name, n): [] for name in names for n in counts}
    servers = {name: start(binary, corpus, os.path.join(OUT, f"cache-{i}"))
               for i, (name, binary) in enumerate(zip(names, binaries))}
    stalled = {}
    for r in range(rounds):
        order = names if r % 2 == 0 else names[::-1]
        for n in counts:
            for name in order:
                if name in stalled:
                    continue
                times = burst(servers[name], n)
                if times is None:
                    stalled[name] = n
                else:
                    results[(name, n)].append(times)
        print(f"round {r + 1} of {rounds} done", file=sys.stderr)
    for name, lsp in servers.items():
        if name not in stalled:
            lsp.close()
    print(f"{files} files, no model; ms from writing N asks at once to each reply "
          f"(medians of {rounds} rounds)\n")
    print("| binary | N | first | p50 | p95 | last | first / single ask |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in names:
        single = statistics.median(t[0] for t in results[(name, counts[0])])
        for n in counts:
            runs = results[(name, n)]
            if not runs:
                print(f"| {name} | {n} | stalled: no reply for {STALL_S} s, stopped | | | | |")
                continue
            first = statistics.median(t[0] for t in runs)
            p50 = statistics.median(percentile(t, 50) for t in runs)
            p95 = statistics.median(percentile(t, 95) for t in runs)
            last = statistics.median(t[-1] for t in runs)
            print(f"| {name} | {n} | {first:.0f} | {p50:.0f} | {p95:.0f} | {last:.0f} "
                  f"| {first / single:.1f}x |")


if __name__ == "__main__":
    main()
