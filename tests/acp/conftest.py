"""Helpers for the ACP tests: the scripted fake provider, a temporary workspace, and an
ACP client (the official Python SDK) that records what the agent sends and plays the
editor's part: buffers with unsaved text, writing files, answering permission requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

import acp
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)

COPILOT_LS_BIN = os.environ.get("COPILOT_LS_BIN", "")
FAKE_PROVIDER_BIN = os.environ.get("FAKE_PROVIDER_BIN", "")
# Generous bounds for a loaded 2-core machine; every wait ends as soon as its event
# happens.
TIMEOUT = 30.0
# Updates about the session rather than a prompt.
SESSION_LEVEL_UPDATES = ("available_commands_update", "current_mode_update",
                         "config_option_update")


class FakeProvider:
    """The `fake-provider` binary playing `steps`, recording each request."""

    def __init__(self, steps: list[dict[str, Any]], directory: Path) -> None:
        script = directory / "script.json"
        script.write_text(json.dumps({"steps": steps}))
        self.record = directory / "record.jsonl"
        self.process = subprocess.Popen(
            [FAKE_PROVIDER_BIN, str(script), "--record", str(self.record)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        line = self.process.stdout.readline() if self.process.stdout else ""
        assert line.strip().isdigit(), f"fake-provider printed {line!r}"
        self.url = f"http://127.0.0.1:{int(line)}/v1"

    def requests(self) -> list[dict[str, Any]]:
        if not self.record.exists():
            return []
        requests = []
        for line in self.record.read_text().splitlines():
            with contextlib.suppress(json.JSONDecodeError):  # a line still being written
                requests.append(json.loads(line))
        return requests

    def messages(self, index: int) -> list[dict[str, Any]]:
        return self.requests()[index]["body"]["messages"]

    async def wait_for_requests(self, count: int) -> list[dict[str, Any]]:
        deadline = time.monotonic() + TIMEOUT
        while len(self.requests()) < count:
            assert time.monotonic() < deadline, f"fewer than {count} provider requests"
            await asyncio.sleep(0.02)
        return self.requests()

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


class EditorClient:
    """The editor's side of ACP: records every message from the agent in wire order.

    `buffers` maps absolute paths to unsaved editor text served by fs/read_text_file
    (other paths are read from disk); `permission` is the option kind the user picks
    (`allow_once`, `allow_always`, `reject_once`), `cancel`, or `hang` (never answers);
    `missing_as_empty` answers a read of a missing file with empty text (as
    CodeCompanion does); `write_error` makes every write fail with that message;
    `on_permission` is called (with the request) before a permission is answered.
    """

    def __init__(self, permission: str = "allow_once", missing_as_empty: bool = False,
                 write_error: str | None = None) -> None:
        self.buffers: dict[str, str] = {}
        self.permission = permission
        self.missing_as_empty = missing_as_empty
        self.write_error = write_error
        self.on_permission: Any = None
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self.permission_requests: list[Any] = []
        self.updates: list[Any] = []
        # Every message the agent sent, as JSON, in the order it arrived.
        self.wire: list[dict[str, Any]] = []

    def observe(self, event: Any) -> None:
        if event.direction.value == "incoming":
            self.wire.append(event.message)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def read_text_file(self, session_id: str, path: str, line: int | None = None,
                             limit: int | None = None, **kwargs: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        try:
            return ReadTextFileResponse(content=Path(path).read_text())
        except OSError as error:
            if self.missing_as_empty and not Path(path).exists():
                return ReadTextFileResponse(content="")
            raise acp.RequestError.resource_not_found(path) from error

    async def write_text_file(self, session_id: str, path: str, content: str,
                              **kwargs: Any) -> WriteTextFileResponse:
        if self.write_error is not None:
            raise acp.RequestError.internal_error({"details": self.write_error})
        self.writes.append((path, content))
        Path(path).write_text(content)
        return WriteTextFileResponse()

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any],
                                 **kwargs: Any) -> RequestPermissionResponse:
        self.permission_requests.append((tool_call, options))
        if self.on_permission is not None:
            self.on_permission(tool_call, options)
        if self.permission == "hang":
            await asyncio.Event().wait()
        for option in options:
            if option.kind == self.permission:
                return RequestPermissionResponse(
                    outcome=AllowedOutcome(outcome="selected", option_id=option.option_id))
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    def wire_updates(self) -> list[dict[str, Any]]:
        """The `update` objects of the session/update notifications about prompts, in
        wire order (the session's own, commands, mode and menus, are in
        `session_updates`)."""
        return [u for u in self.session_updates()
                if u["sessionUpdate"] not in SESSION_LEVEL_UPDATES]

    def session_updates(self) -> list[dict[str, Any]]:
        """Every `update` object of the session/update notifications, in wire order."""
        return [m["params"]["update"] for m in self.wire if m.get("method") == "session/update"]

    def text(self) -> str:
        """All agent_message_chunk text, joined."""
        return "".join(u["content"]["text"] for u in self.wire_updates()
                       if u["sessionUpdate"] == "agent_message_chunk")


class Agent:
    """A running `copilot-ls acp` connected to an EditorClient."""

    def __init__(self, connection: Any, process: Any, client: EditorClient,
                 workspace: Path) -> None:
        self.connection = connection
        self.process = process
        self.client = client
        self.workspace = workspace

    async def initialize(self, read: bool = True, write: bool = True) -> Any:
        return await self.connection.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=read, write_text_file=write)),
            client_info=acp.schema.Implementation(name="pytest", version="1"),
        )

    async def new_session(self, mcp_servers: list[Any] | None = None,
                          cwd: Path | None = None) -> str:
        response = await self.connection.new_session(
            cwd=str(cwd or self.workspace), mcp_servers=mcp_servers or [])
        return response.session_id

    async def prompt(self, session_id: str, *blocks: Any) -> Any:
        return await asyncio.wait_for(
            self.connection.prompt(session_id=session_id, prompt=list(blocks)), TIMEOUT)


@pytest.fixture
def workspace():
    directory = Path(tempfile.mkdtemp(prefix="copilot-ls-acp-"))
    (directory / "src").mkdir()
    (directory / "src" / "lib.rs").write_text(
        "// Arithmetic.\n"
        "pub fn add(a: i32, b: i32) -> i32 {\n"
        "    a - b\n"
        "}\n"
    )
    yield directory.resolve()
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def fake_dir():
    directory = Path(tempfile.mkdtemp(prefix="copilot-ls-acp-fake-"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@contextlib.asynccontextmanager
async def running_agent(workspace: Path, fake: FakeProvider | None, client: EditorClient,
                        **env: str):
    """Starts `copilot-ls acp` against the fake provider (stderr to a log file)."""
    variables = {
        "COPILOT_LS_PROVIDER": "openai" if fake else "none",
        "COPILOT_LS_BASE_URL": fake.url if fake else "",
        "COPILOT_LS_MODEL": "fake-model",
        "OPENAI_API_KEY": "sk-test-not-a-real-key",
        "COPILOT_LS_LOG": "info",
        "XDG_CACHE_HOME": str(workspace.parent / (workspace.name + "-cache")),
        **env,
    }
    log = open(workspace.parent / (workspace.name + "-agent.log"), "w")
    try:
        async with acp.spawn_agent_process(
            client, COPILOT_LS_BIN, "acp", env=variables, cwd=str(workspace),
            transport_kwargs={"stderr": log.fileno()}, observers=[client.observe],
        ) as (connection, process):
            yield Agent(connection, process, client, workspace)
    finally:
        log.close()


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, 2 * TIMEOUT))


def prompt_once(workspace: Path, fake: FakeProvider, blocks: list[Any],
                client: EditorClient | None = None, **env: str) -> tuple[EditorClient, Any]:
    """One prompt in a fresh agent and session: the client (what it saw) and the
    response. Stops the fake provider."""
    client = client or EditorClient()

    async def body():
        async with running_agent(workspace, fake, client, **env) as agent:
            await agent.initialize()
            session = await agent.new_session()
            return await agent.prompt(session, *blocks)

    try:
        return client, run(body())
    finally:
        fake.stop()


def agent_env(workspace: Path, fake: FakeProvider | None, **env: str) -> dict[str, str]:
    """The environment `running_agent` gives the agent, for agents started by hand."""
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", ""),
        "COPILOT_LS_PROVIDER": "openai" if fake else "none",
        "COPILOT_LS_BASE_URL": fake.url if fake else "",
        "COPILOT_LS_MODEL": "fake-model",
        "OPENAI_API_KEY": "sk-test-not-a-real-key",
        "COPILOT_LS_LOG": "info",
        "XDG_CACHE_HOME": str(workspace.parent / (workspace.name + "-cache")),
        **env,
    }


class RawAgent:
    """`copilot-ls acp` spoken to line by line, for what an SDK would never send."""

    def __init__(self, process: Any) -> None:
        self.process = process
        self.next_id = 100

    @classmethod
    async def start(cls, workspace: Path, fake: FakeProvider | None = None, **env: str) -> "RawAgent":
        log = open(workspace.parent / (workspace.name + "-raw-agent.log"), "a")
        process = await asyncio.create_subprocess_exec(
            COPILOT_LS_BIN, "acp", cwd=str(workspace), env=agent_env(workspace, fake, **env),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=log,
            limit=64 * 1024 * 1024)
        log.close()
        return cls(process)

    async def write(self, data: bytes) -> None:
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    async def send(self, method: str, params: Any, id: Any = None) -> Any:
        if id is None:
            self.next_id += 1
            id = self.next_id
        await self.write((json.dumps({"jsonrpc": "2.0", "id": id, "method": method,
                                      "params": params}) + "\n").encode())
        return id

    async def notify(self, method: str, params: Any) -> None:
        await self.write((json.dumps({"jsonrpc": "2.0", "method": method,
                                      "params": params}) + "\n").encode())

    async def read(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        line = await asyncio.wait_for(self.process.stdout.readline(), timeout)
        assert line, "the agent closed its output"
        return json.loads(line)

    async def reply(self, id: Any, timeout: float = TIMEOUT,
                    seen: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """Reads until the reply to `id`; other messages go to `seen`. Requests from the
        agent (fs, permission) are answered with an error."""
        deadline = time.monotonic() + timeout
        while True:
            message = await self.read(max(0.01, deadline - time.monotonic()))
            if "id" in message and message.get("id") == id and "method" not in message:
                return message
            if seen is not None:
                seen.append(message)
            if "method" in message and "id" in message:
                await self.write((json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": {
                    "code": -32601, "message": "not here"}}) + "\n").encode())

    async def initialize(self) -> dict[str, Any]:
        id = await self.send("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        return await self.reply(id)

    async def new_session(self, cwd: Path) -> str:
        id = await self.send("session/new", {"cwd": str(cwd), "mcpServers": []})
        return (await self.reply(id))["result"]["sessionId"]

    async def close(self) -> int:
        if self.process.stdin and not self.process.stdin.is_closing():
            self.process.stdin.close()
        try:
            return await asyncio.wait_for(self.process.wait(), 5)
        except asyncio.TimeoutError:
            self.process.kill()
            return await self.process.wait()
