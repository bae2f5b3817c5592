#!/usr/bin/env python3
"""Per-tool latency of `copilot-ls mcp` on the generated corpus, beside `rg` doing the
closest search.

Usage: mcp_latency.py [--files N] [--calls K] [--binary BIN]

Generates the corpus with bench/gen_corpus.py (cached in .tmp/bench-mcp/gen-N-code), brings
its index up to date with `copilot-ls index` (cache .tmp/bench-mcp/cache), starts
`copilot-ls mcp --workspace CORPUS`, and times K `tools/call` round trips per tool (the
client writes the request line and reads the reply line; one call at a time), after one
warm-up call each. `rg` is timed as a process per search (K runs after a warm-up), so
its numbers include starting it, a few ms; the MCP server is already running. Prints a
markdown table of p50 / p95.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    k = max(0, min(len(values) - 1, round(q * (len(values) - 1))))
    return values[k]


class Server:
    def __init__(self, binary: str, root: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [binary, "mcp", "--workspace", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.next_id = 0
        self.request("initialize", {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        })
        self.notify("notifications/initialized")

    def notify(self, method: str) -> None:
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        while True:
            reply = json.loads(self.process.stdout.readline())
            if reply.get("id") == self.next_id:
                return reply

    def call(self, tool: str, arguments: dict) -> tuple[float, dict]:
        started = time.perf_counter()
        reply = self.request("tools/call", {"name": tool, "arguments": arguments})
        return time.perf_counter() - started, reply

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


def time_command(command: list[str], runs: int, cwd: Path) -> tuple[list[float], int]:
    subprocess.run(command, cwd=cwd, capture_output=True)
    times = []
    lines = 0
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(command, cwd=cwd, capture_output=True)
        times.append(time.perf_counter() - started)
        lines = done.stdout.count(b"\n")
    return times, lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--binary", default=str(REPO / "target/release/copilot-ls"))
    args = parser.parse_args()
    base = REPO / ".tmp/bench-mcp"
    corpus = base / f"gen-{args.files}-code"
    if not corpus.exists():
        subprocess.run([sys.executable, str(REPO / "bench/gen_corpus.py"), str(corpus), "--files", str(args.files)], check=True)
    env = {**os.environ, "COPILOT_LS_CACHE_DIR": str(base / "cache"), "COPILOT_LS_LOG": "error"}
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "COPILOT_LS_PROVIDER"):
        env.pop(key, None)
    started = time.perf_counter()
    subprocess.run([args.binary, "index", "--workspace", str(corpus)], env=env, check=True, capture_output=True)
    print(f"index up to date in {time.perf_counter() - started:.1f} s", file=sys.stderr)

    sample = next(p for p in sorted(corpus.rglob("*.rs")) if ".git" not in p.parts and "target" not in p.parts)
    relative = sample.relative_to(corpus).as_posix()
    folder = sample.parent.relative_to(corpus).as_posix()
    # (tool, arguments, the closest rg / coreutils command, what it is)
    cases = [
        ("find_references", {"name": "flux_capacitor_overdrive"}, ["rg", "-n", "-w", "-F", "flux_capacitor_overdrive"], "rare identifier"),
        ("find_references", {"name": "shutdown_worker"}, ["rg", "-n", "-w", "-F", "shutdown_worker"], "common identifier"),
        ("search_code", {"pattern": "flux_capacitor_overdrive"}, ["rg", "-n", "-i", "-F", "flux_capacitor_overdrive"], "rare literal"),
        ("search_code", {"pattern": "shutdown_worker"}, ["rg", "-n", "-i", "-F", "shutdown_worker"], "common literal"),
        ("find_symbol", {"name": "flux_capacitor_overdrive"}, ["rg", "-n", "-e", r"(fn|def|func|function|class|struct|interface|type)\s+flux_capacitor_overdrive"], "definition by name"),
        ("find_files", {"pattern": "**/*_test.go"}, ["rg", "--files", "-g", "*_test.go"], "glob"),
        ("file_outline", {"path": relative}, ["rg", "-n", r"^\s*(pub )?(fn|struct|enum|trait|impl) ", relative], "one file's definitions"),
        ("read_file", {"path": relative}, ["head", "-n", "400", relative], "first 400 lines"),
        ("list_directory", {"path": folder}, ["ls", "-p", folder], "one directory"),
        ("locate", {"question": "how does the worker shutdown drain the queue?"}, ["rg", "-n", "-i", "-e", "worker", "-e", "shutdown", "-e", "drain", "-e", "queue"], "question in words"),
    ]
    server = Server(args.binary, corpus, env)
    rows = []
    for tool, arguments, command, what in cases:
        warm, reply = server.call(tool, arguments)
        result = reply.get("result", {})
        if result.get("isError") or "error" in reply:
            print(f"{tool} {arguments}: {json.dumps(reply)[:300]}", file=sys.stderr)
        times = [server.call(tool, arguments)[0] for _ in range(args.calls)]
        rg_times, rg_lines = time_command(command, args.calls, corpus)
        shown = result.get("content", [{}])[0].get("text", "").count("\n")
        rows.append((tool, what, times, rg_times, shown, rg_lines, " ".join(command[:1] + [a if len(a) < 40 else a[:37] + "…" for a in command[1:]])))
    server.close()
    print(f"| tool | search | MCP p50 ms | MCP p95 ms | lines shown | closest command | its p50 ms | its p95 ms | its lines |")
    print("| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: |")
    for tool, what, times, rg_times, shown, rg_lines, command in rows:
        ms = lambda v: f"{v * 1000:.1f}"
        print(
            f"| {tool} | {what} | {ms(statistics.median(times))} | {ms(percentile(times, 0.95))} | {shown} | "
            f"`{command}` | {ms(statistics.median(rg_times))} | {ms(percentile(rg_times, 0.95))} | {rg_lines} |"
        )


if __name__ == "__main__":
    main()
