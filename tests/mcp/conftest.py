"""Helpers for the MCP tests: the real `copilot-ls mcp` binary as a server, the official
MCP Python SDK (`mcp`) as its client, a raw newline-JSON client for what an SDK would
never send, and temporary workspaces (the sample workspace, the sandbox's hostile one, a
generated one large enough that indexing it takes a while).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

COPILOT_LS_BIN = os.environ.get("COPILOT_LS_BIN", "")
REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "fixtures" / "workspace"
CANARY = "CANARY-7f3a-must-never-be-read"
# Generous bounds for a loaded 2-core machine; every wait ends as soon as its event
# happens.
TIMEOUT = 60.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def server_env(cache: Path, **extra: str) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "COPILOT_LS_CACHE_DIR": str(cache),
        "COPILOT_LS_LOG": "warn",
    }
    env.update(extra)
    return env


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    """A copy of fixtures/workspace with instruction files, so tests own its index."""
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root)
    (root / "AGENTS.md").write_text("# Agents\nRun `cargo test` before you finish.\n")
    return root


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    path = tmp_path / "cache"
    path.mkdir()
    return path


@contextlib.asynccontextmanager
async def connect(
    workspace: Path | None,
    cache: Path,
    *,
    modern: bool = False,
    cwd: Path | None = None,
    roots: Any = None,
    logging_callback: Any = None,
    env: dict[str, str] | None = None,
) -> AsyncIterator[ClientSession]:
    """A session with `copilot-ls mcp`, over the 2025-11-25 handshake or, with `modern`,
    the 2026-07-28 `server/discover` lifecycle."""
    args = ["mcp"] + (["--workspace", str(workspace)] if workspace else [])
    params = StdioServerParameters(
        command=COPILOT_LS_BIN,
        args=args,
        env=env or server_env(cache),
        cwd=str(cwd) if cwd else None,
    )
    kwargs: dict[str, Any] = {}
    if roots is not None:
        kwargs["list_roots_callback"] = roots
    if logging_callback is not None:
        kwargs["logging_callback"] = logging_callback
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=TIMEOUT, **kwargs) as session:
                if modern:
                    await session.discover()
                else:
                    await session.initialize()
                yield session


def cli_tool(workspace: Path, cache: Path, name: str, arguments: dict[str, Any]) -> str:
    """`copilot-ls tool NAME JSON --workspace DIR`: the text the model sees in an ask."""
    done = subprocess.run(
        [COPILOT_LS_BIN, "tool", name, json.dumps(arguments), "--workspace", str(workspace)],
        env=server_env(cache),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    return done.stdout


class RawServer:
    """`copilot-ls mcp` driven line by line: what no SDK would send."""

    def __init__(self, workspace: Path, cache: Path) -> None:
        self.process = subprocess.Popen(
            [COPILOT_LS_BIN, "mcp", "--workspace", str(workspace)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=server_env(cache),
        )
        self.messages: list[dict[str, Any]] = []
        self.unparsed: list[bytes] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout
        for line in self.process.stdout:
            with self._changed:
                try:
                    self.messages.append(json.loads(line))
                except ValueError:
                    self.unparsed.append(line)
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def send_bytes(self, data: bytes) -> None:
        assert self.process.stdin
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(json.dumps(message).encode() + b"\n")

    def wait_for(self, predicate: Any, timeout: float = TIMEOUT) -> list[dict[str, Any]]:
        """Waits until `predicate(messages)` holds; returns the messages."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not predicate(self.messages):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out; got {len(self.messages)} messages: {self.messages[-5:]}")
                self._changed.wait(left)
            return list(self.messages)

    def responses(self, request_id: Any) -> list[dict[str, Any]]:
        with self._changed:
            return [m for m in self.messages if m.get("id") == request_id and "method" not in m]

    def initialize(self, version: str = "2025-11-25") -> dict[str, Any]:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": "init",
                "method": "initialize",
                "params": {
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": {"name": "raw-test", "version": "0"},
                },
            }
        )
        messages = self.wait_for(lambda ms: any(m.get("id") == "init" for m in ms))
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return next(m for m in messages if m.get("id") == "init")

    def close(self) -> float:
        """Closes stdin; returns how long the server took to exit."""
        started = time.monotonic()
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(timeout=TIMEOUT)
        return time.monotonic() - started


@pytest.fixture
def raw_server() -> Any:
    servers: list[RawServer] = []

    def start(workspace: Path, cache: Path) -> RawServer:
        server = RawServer(workspace, cache)
        servers.append(server)
        return server

    yield start
    for server in servers:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait()


def hostile_workspace(base: Path) -> Path:
    """The layout tests/sandbox.rs attacks: `base/outside/` holds the canary, `base/repo/`
    is the workspace, `base/repo-backup/` a prefix sibling of the root; secrets, .git and
    symlinks inside."""

    def write(path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    outside = base / "outside"
    root = base / "repo"
    write(outside / "canary.txt", f"{CANARY}\n")
    write(base / "repo-backup" / "canary.txt", f"{CANARY}\n")
    write(root / "src" / "lib.rs", "pub fn visible() {}\npub fn caller() { visible() }\n")
    for secret in [".env", ".env.production", "certs/server.pem", "tls.key", "id_rsa", "keys/id_ed25519.pub"]:
        write(root / secret, f"{CANARY} secret\n")
    write(root / ".git" / "config", f"[remote] url = {CANARY}\n")
    write(root / ".git" / "HEAD", "ref: refs/heads/main\n")
    (root / "link_out").symlink_to(outside)
    (root / "link_canary.txt").symlink_to(outside / "canary.txt")
    (root / "git_config_link").symlink_to(root / ".git" / "config")
    (root / "innocent.txt").symlink_to(root / ".env")
    return root


def generated_workspace(root: Path, files: int) -> Path:
    """`files` small Rust files, each defining and calling a few functions."""
    for i in range(files):
        path = root / f"m{i // 100}" / f"f{i}.rs"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"/// Module {i}.\npub fn handler_{i}() -> u32 {{\n    shared_helper({i})\n}}\n\n"
            f"pub struct Widget{i} {{\n    value: u32,\n}}\n"
        )
    (root / "helper.rs").write_text("pub fn shared_helper(x: u32) -> u32 {\n    x + 1\n}\n")
    return root
