#!/usr/bin/env python3
"""First use, side by side: what a new user's first minute costs on a real checkout and on
a generated 50,000-file corpus, for this build and a baseline binary (issue #26).

Usage: first_use.py BIN BASELINE_BIN --real DIR [--real DIR2 ...] [--files 50000] [--mixed]
                    [--question TEXT]

For each workspace and binary, alternating which goes first so a noisy machine weighs on
both alike, on an empty cache (COPILOT_LS_CACHE_DIR under .tmp/bench-first-use/):
- cold `copilot-ls index --json`: wall seconds, CPU seconds (user + system, the process
  and its threads), the process's peak RSS (wait4), and with
  COPILOT_LS_INDEX_PROFILE=1 the time every file was searchable (a build that has one
  phase is searchable when it ends);
- warm `index`: the same again, nothing changed;
- first answer: on an empty cache again, `copilot-ls ask --json` with no model: the
  seconds until the answer is on stdout and until the process exits (it may merge the
  index after answering), and how much of the index the answer saw
  (`index.filesIndexed`/`filesTotal`; a binary without that field is shown as `?`);
- MCP's first `locate`: on an empty cache again, `copilot-ls mcp --workspace DIR` started
  and its first `locate` called at once: seconds from the start to the reply.
Prints one Markdown table, then this build's ratios to the baseline's (issue #54's
targets: the first answer at most 0.3x, the complete build at most 0.6x in wall and CPU
time, peak memory no higher). Set --files 0 to skip the generated corpus. The generated
corpus is code of one language per file (`gen_corpus.py`); --mixed measures the corpus of
lines from every language mixed in each file instead, which parses about 6x slower (the
corpus of the figures before 2026-12-03).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, ".tmp", "bench-first-use")


def measured(argv, env):
    """argv run under a small Python parent that reports the child's own peak RSS."""
    helper = ("import os,sys,resource,subprocess,time;t=time.perf_counter();"
              "p=subprocess.run(sys.argv[1:],capture_output=True,text=True);"
              "w=time.perf_counter()-t;u=resource.getrusage(resource.RUSAGE_CHILDREN);"
              "sys.stdout.write(p.stdout);sys.stderr.write(p.stderr);"
              "sys.stderr.write('\\n@@ %f %d %d %f\\n'%(w,u.ru_maxrss,p.returncode,"
              "u.ru_utime+u.ru_stime))")
    done = subprocess.run([sys.executable, "-c", helper] + argv, env=env, capture_output=True,
                          text=True)
    out, err = done.stdout, done.stderr
    wall, rss_kb, code, cpu = err.rsplit("@@ ", 1)[1].split()
    return out, err, float(wall), int(rss_kb) / 1024, int(code), float(cpu)


def cold_index(binary, root, env):
    shutil.rmtree(env["COPILOT_LS_CACHE_DIR"], ignore_errors=True)
    env = dict(env, COPILOT_LS_INDEX_PROFILE="1")
    out, err, wall, rss, code, cpu = measured([binary, "index", "--json", "--workspace", root],
                                              env)
    if code != 0:
        raise SystemExit(f"{binary} index failed: {err[-500:]}")
    found = re.search(r"searchable after ([0-9.]+)s", err)
    searchable = float(found.group(1)) if found and float(found.group(1)) > 0 else wall
    return json.loads(out)["files"], wall, cpu, searchable, rss


def first_answer(binary, root, env, question):
    """Seconds until the answer is on stdout (its first byte: `--json` writes it whole),
    seconds until the process exits, what the answer saw and its first citation."""
    shutil.rmtree(env["COPILOT_LS_CACHE_DIR"], ignore_errors=True)
    started = time.perf_counter()
    ask = subprocess.Popen([binary, "ask", "--json", "--workspace", root, question], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # stderr (progress) is drained beside stdout, so a full pipe never stalls the ask.
    errs = []
    drain = threading.Thread(target=lambda: errs.append(ask.stderr.read()))
    drain.start()
    first = ask.stdout.read(1)
    answered = time.perf_counter() - started
    out = first + ask.stdout.read()
    code = ask.wait()
    exited = time.perf_counter() - started
    drain.join()
    if code != 0:
        raise SystemExit(f"{binary} ask failed: {errs[0][-500:].decode(errors='replace')}")
    result = json.loads(out)
    seen = result.get("index")
    coverage = (f"{seen['filesIndexed']:,}/{seen['filesTotal']:,}" if seen else "?")
    top = [c["path"] for c in result.get("citations", [])][:1]
    return answered, exited, coverage, top[0] if top else "-"


def first_locate(binary, root, env, question):
    """Seconds from starting `copilot-ls mcp` on an empty cache to the reply of its first
    `locate` (which waits for the files, as the CLI does)."""
    shutil.rmtree(env["COPILOT_LS_CACHE_DIR"], ignore_errors=True)
    started = time.perf_counter()
    server = subprocess.Popen([binary, "mcp", "--workspace", root], env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "first_use", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "locate", "arguments": {"question": question}}},
    ):
        server.stdin.write(json.dumps(message) + "\n")
    server.stdin.flush()
    reply = None
    for line in server.stdout:
        message = json.loads(line)
        if message.get("id") == 2:
            reply = message
            break
    answered = time.perf_counter() - started
    server.stdin.close()
    server.wait()
    if reply is None or "result" not in reply:
        raise SystemExit(f"{binary} mcp: no locate reply: {reply}")
    return answered


def main():
    args = sys.argv[1:]
    if len(args) < 2 or "--real" not in args:
        raise SystemExit(__doc__)
    binaries = {"this build": os.path.abspath(args[0]), "baseline": os.path.abspath(args[1])}
    reals = [os.path.abspath(args[i + 1]) for i, a in enumerate(args) if a == "--real"]
    files = int(args[args.index("--files") + 1]) if "--files" in args else 50000
    question = (args[args.index("--question") + 1] if "--question" in args
                else "where is the configuration parsed")
    mixed = "--mixed" in args
    workspaces = [(os.path.basename(real), real) for real in reals]
    if files:
        kind = "mixed" if mixed else "code"
        corpus = os.path.join(REPO, ".tmp", "bench-index", f"corpus-{files}-{kind}")
        if not os.path.isdir(corpus):
            subprocess.run([sys.executable, os.path.join(REPO, "bench/gen_corpus.py"), corpus,
                            "--files", str(files)] + (["--mixed"] if mixed else []),
                           check=True, stdout=subprocess.DEVNULL)
        workspaces.append((f"generated {files:,} ({kind})", corpus))
    rows = []
    for w, (name, root) in enumerate(workspaces):
        order = list(binaries.items())
        if w % 2:
            order.reverse()
        for label, binary in order:
            env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/"),
                   "COPILOT_LS_PROVIDER": "none",
                   "COPILOT_LS_CACHE_DIR": os.path.join(OUT, "cache")}
            indexed, cold, cpu, searchable, rss = cold_index(binary, root, env)
            _, _, warm, _, _, _ = measured([binary, "index", "--json", "--workspace", root], env)
            answer, exited, coverage, top = first_answer(binary, root, env, question)
            located = first_locate(binary, root, env, question)
            rows.append((name, label, indexed, searchable, cold, cpu, warm, rss, answer, exited,
                         located, coverage, top))
            print(f"done: {name}, {label}", file=sys.stderr)
    print(f"First use, no model; the first answer is `ask` on an empty cache (\"{question}\").\n")
    print("| workspace | binary | files | searchable s | cold build s | its CPU s "
          "| warm `index` s | peak RSS MB | first answer s | its ask exits s "
          "| MCP's first `locate` s | files the answer saw | its first citation |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
          "| --- |")
    for row in rows:
        print("| %s | %s | %d | %.1f | %.1f | %.1f | %.2f | %.0f | %.1f | %.1f | %.1f | %s | %s |"
              % row)
    print("\n| workspace | cold build, wall | its CPU | peak RSS | first answer | its ask exits "
          "| MCP's first `locate` |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, _ in workspaces:
        this = next(r for r in rows if r[0] == name and r[1] == "this build")
        base = next(r for r in rows if r[0] == name and r[1] == "baseline")
        ratio = lambda i: this[i] / base[i] if base[i] else float("nan")
        print(f"| {name} | {ratio(4):.2f}x | {ratio(5):.2f}x | {ratio(7):.2f}x "
              f"| {ratio(8):.2f}x | {ratio(9):.2f}x | {ratio(10):.2f}x |")
    load = os.getloadavg()[0]
    print(f"\nload average at the end: {load:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
