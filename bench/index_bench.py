#!/usr/bin/env python3
"""The workspace index benchmark: cold build, warm start, idle RSS, bytes on disk and
ask latency on generated corpora of 20, 20,000 and 50,000 files and on a real checkout.

Usage: index_bench.py BIN OUT_DIR [--real DIR] [--sizes 20,20000,50000] [--asks N]

For each workspace, with a fresh cache dir (COPILOT_LS_CACHE_DIR under OUT_DIR):
- cold build: `copilot-ls index --json` on an empty cache (its `seconds`, `bytes`);
- warm start: the same again (nothing changed; `filesRead` must be 0), wall time;
- server: `copilot-ls serve` on the warm cache, LSP over stdio: time from `initialized`
  to the end of the `Indexing` progress (ready), then the resident set (VmRSS) after
  the index is up to date, then N asks with no provider (`copilot/ask`, which is
  retrieval plus composing the answer), latency p50/p95 as the client sees it;
- server cold: the same server on an empty cache, its VmRSS once it has built the index.
Prints one Markdown table.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUESTIONS = [
    "how are retries decided",
    "where is the configuration parsed",
    "what happens when the channel buffer is full",
    "how does the session cancel a request",
    "where are tokens refilled",
    "how is the cache entry evicted",
    "where is the header offset computed",
    "how does the worker queue shut down",
    "where are metrics traced",
    "how is a patch applied to the tree",
]


class Lsp:
    def __init__(self, binary, root, env):
        self.proc = subprocess.Popen(
            [binary, "serve"], cwd=root, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )
        self.next_id = 0

    def send(self, message):
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def read(self):
        length = 0
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("server closed stdout")
            line = line.strip()
            if not line:
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        message = json.loads(self.proc.stdout.read(length))
        if "id" in message and "method" in message:
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        return message

    def request(self, method, params):
        self.next_id += 1
        wanted = self.next_id
        self.send({"jsonrpc": "2.0", "id": wanted, "method": method, "params": params})
        while True:
            message = self.read()
            if message.get("id") == wanted and "method" not in message:
                return message

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_indexed(self):
        while True:
            message = self.read()
            if (message.get("method") == "$/progress"
                    and message["params"]["token"] == "copilot-ls/indexing"
                    and message["params"]["value"]["kind"] == "end"):
                return

    def rss_mb(self):
        with open(f"/proc/{self.proc.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def close(self):
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
        finally:
            self.proc.wait(timeout=30)


def run_index(binary, root, env):
    started = time.perf_counter()
    out = subprocess.run([binary, "index", "--json", "--workspace", root], env=env,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out), time.perf_counter() - started


def serve(binary, root, env, asks):
    lsp = Lsp(binary, root, env)
    uri = "file://" + root
    lsp.request("initialize", {"processId": None, "rootUri": uri,
                               "workspaceFolders": [{"uri": uri, "name": "bench"}],
                               "capabilities": {"window": {"workDoneProgress": True}},
                               "initializationOptions": {"provider": "none"}})
    started = time.perf_counter()
    lsp.notify("initialized", {})
    lsp.wait_indexed()
    ready = time.perf_counter() - started
    time.sleep(1.0)  # let the allocator settle: this is the idle figure
    rss = lsp.rss_mb()
    latencies = []
    for i in range(asks):
        question = QUESTIONS[i % len(QUESTIONS)]
        t = time.perf_counter()
        reply = lsp.request("copilot/ask", {"question": question})
        latencies.append((time.perf_counter() - t) * 1000)
        assert "result" in reply, reply
    lsp.close()
    return ready, rss, latencies


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main():
    args = sys.argv[1:]
    binary, out = os.path.abspath(args[0]), os.path.abspath(args[1])
    sizes = [20, 20000, 50000]
    real = None
    asks = 40
    if "--sizes" in args:
        sizes = [int(s) for s in args[args.index("--sizes") + 1].split(",")]
    if "--real" in args:
        real = os.path.abspath(args[args.index("--real") + 1])
    if "--asks" in args:
        asks = int(args[args.index("--asks") + 1])
    os.makedirs(out, exist_ok=True)
    workspaces = []
    for n in sizes:
        corpus = os.path.join(out, f"corpus-{n}-code")
        if not os.path.isdir(corpus):
            subprocess.run([sys.executable, os.path.join(REPO, "bench/gen_corpus.py"), corpus,
                            "--files", str(n)], check=True, stdout=subprocess.DEVNULL)
        workspaces.append((f"generated {n:,}", corpus))
    if real:
        workspaces.append((f"real: {os.path.basename(real)}", real))

    rows = []
    for name, root in workspaces:
        cache = os.path.join(out, "cache-" + os.path.basename(root))
        shutil.rmtree(cache, ignore_errors=True)
        env = {"PATH": os.environ.get("PATH", ""), "COPILOT_LS_CACHE_DIR": cache}
        cold, _ = run_index(binary, root, env)
        warm, warm_wall = run_index(binary, root, env)
        assert warm["filesRead"] == 0, warm
        ready, rss, latencies = serve(binary, root, env, asks)
        shutil.rmtree(cache, ignore_errors=True)
        _, cold_rss, _ = serve(binary, root, env, 0)
        rows.append((name, cold["files"], cold["chunks"], cold["seconds"], warm_wall, ready,
                     rss, cold_rss, cold["bytes"] / 1e6, statistics.median(latencies),
                     percentile(latencies, 95)))
        print(f"done: {name}", file=sys.stderr)
    # Ask cost relative to the smallest generated workspace (the target: at most 2x at
    # 20,000 files what it is at 20).
    base = rows[0][9] if rows and not rows[0][0].startswith("real") else None
    print("| workspace | files | chunks | cold build s | warm `index` s | server ready s (warm) "
          "| idle RSS MB (warm) | idle RSS MB (cold) | on disk MB | ask p50 ms | ask p95 ms "
          "| ask p50 / smallest |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        ratio = "%.1fx" % (row[9] / base) if base else "-"
        print("| %s | %d | %d | %.2f | %.2f | %.2f | %.0f | %.0f | %.1f | %.1f | %.1f | %s |"
              % (row + (ratio,)))


if __name__ == "__main__":
    main()
