"""The protocol around the tools: version negotiation, the instruction files as
resources, logging/setLevel, the workspace from the client's roots, progress while a
cold index builds, cancellation, 2,000 malformed lines, and exiting when stdin closes."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

import mcp_types as types

from conftest import TIMEOUT, connect, generated_workspace

pytestmark = pytest.mark.anyio


def text_of(result: Any) -> str:
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def test_the_current_and_the_previous_revision_are_negotiated(
    sample: Path, cache: Path, raw_server: Any
) -> None:
    async with connect(sample, cache, modern=True) as session:
        assert session.protocol_version == "2026-07-28"
        assert session.discover_result is not None
        assert "2025-11-25" in session.discover_result.supported_versions
    server = raw_server(sample, cache)
    assert server.initialize("2025-11-25")["result"]["protocolVersion"] == "2025-11-25"
    # A revision the server does not know is answered with the newest handshake one.
    other = raw_server(sample, cache)
    assert other.initialize("2099-01-01")["result"]["protocolVersion"] == "2025-11-25"


async def test_instruction_files_are_resources(sample: Path, cache: Path) -> None:
    (sample / "CLAUDE.md").write_text("Prefer small commits.\n")
    async with connect(sample, cache) as session:
        listed = await session.list_resources()
        names = sorted(resource.name for resource in listed.resources)
        assert names == ["AGENTS.md", "CLAUDE.md"]
        agents = next(r for r in listed.resources if r.name == "AGENTS.md")
        assert str(agents.uri).startswith("file://") and agents.mime_type == "text/markdown"
        read = await session.read_resource(agents.uri)
        assert read.contents[0].text == (sample / "AGENTS.md").read_text()


async def test_logging_set_level_is_accepted(sample: Path, cache: Path) -> None:
    async with connect(sample, cache) as session:
        await session.set_logging_level("debug")
        await session.set_logging_level("error")
        assert not (await session.call_tool("list_directory", {})).is_error


async def test_the_workspace_is_the_clients_root_and_follows_changes(
    tmp_path: Path, cache: Path
) -> None:
    first = tmp_path / "first"
    (first / "lib").mkdir(parents=True)
    (first / "lib" / "alpha.py").write_text("def alpha():\n    return 1\n")
    second = tmp_path / "second"
    second.mkdir()
    (second / "beta.go").write_text("package b\n\nfunc Beta() {}\n")
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    (elsewhere / "cwd_only.txt").write_text("x\n")
    current = {"root": first}

    async def roots(_context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=current["root"].as_uri(), name="main")])

    async with connect(None, cache, cwd=elsewhere, roots=roots) as session:
        listing = text_of(await session.call_tool("list_directory", {}))
        assert listing == "lib/\n", listing
        found = await session.call_tool("find_symbol", {"name": "alpha"})
        assert "lib/alpha.py:1" in text_of(found)
        current["root"] = second
        await session.send_roots_list_changed()
        with anyio.fail_after(TIMEOUT):
            while "beta.go" not in text_of(await session.call_tool("list_directory", {})):
                await anyio.sleep(0.05)
        assert "beta.go:3" in text_of(await session.call_tool("find_symbol", {"name": "Beta"}))

    # Without roots (or a flag) the workspace is the current directory.
    async with connect(None, cache, cwd=elsewhere) as session:
        assert text_of(await session.call_tool("list_directory", {})) == "cwd_only.txt\n"


async def test_progress_is_reported_while_a_cold_index_builds(tmp_path: Path, cache: Path) -> None:
    workspace = generated_workspace(tmp_path / "big", 6000)
    reports: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        reports.append((done, total, message))

    async with connect(workspace, cache) as session:
        result = await session.call_tool("find_references", {"name": "shared_helper"}, progress_callback=progress)
        assert not result.is_error
        text = text_of(result)
        assert "still being built" not in text
        assert "(… 5900 more uses; 6000 in 6000 files" in text, text[-300:]
    assert reports, "no progress notification"
    assert all(total and total >= done for done, total, _ in reports), reports
    assert [done for done, _, _ in reports] == sorted(done for done, _, _ in reports)
    assert all(message and message.startswith("indexing ") for _, _, message in reports)


async def test_a_cancelled_call_gets_no_reply_and_the_server_goes_on(
    tmp_path: Path, cache: Path, raw_server: Any
) -> None:
    workspace = generated_workspace(tmp_path / "big", 6000)
    server = raw_server(workspace, cache)
    server.initialize()
    # The index is cold: this call waits for the build, long enough to be cancelled.
    server.send(
        {
            "jsonrpc": "2.0",
            "id": "slow",
            "method": "tools/call",
            "params": {"name": "find_references", "arguments": {"name": "shared_helper"}, "_meta": {"progressToken": "p1"}},
        }
    )
    server.wait_for(lambda ms: any(m.get("method") == "notifications/progress" for m in ms))
    server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "slow", "reason": "test"}})
    started = time.monotonic()
    server.send({"jsonrpc": "2.0", "id": "after", "method": "tools/call", "params": {"name": "list_directory", "arguments": {}}})
    server.wait_for(lambda ms: any(m.get("id") == "after" for m in ms))
    assert time.monotonic() - started < TIMEOUT / 2
    # The index finishes; the cancelled call still never answers.
    server.send({"jsonrpc": "2.0", "id": "done", "method": "tools/call", "params": {"name": "find_symbol", "arguments": {"name": "shared_helper"}}})
    server.wait_for(lambda ms: any(m.get("id") == "done" for m in ms))
    assert server.responses("slow") == []


async def test_2000_malformed_lines_are_answered_and_every_request_once(
    sample: Path, cache: Path, raw_server: Any
) -> None:
    server = raw_server(sample, cache)
    server.initialize()
    rng = random.Random(22)
    malformed = [
        b"{not json",
        b"[1, 2, 3]",
        b'{"jsonrpc": "2.0"}',
        b"\xff\xfe\x00 invalid utf-8",
        b'"just a string"',
        b"42",
        b'{"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"}',
        b'{"jsonrpc": "2.0", "method": 5, "id": 3}',
        b"}",
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": 7, ',
    ]
    valid: list[str] = []
    malformed_sent = 0
    for i in range(2000):
        server.send_bytes(rng.choice(malformed) + b"\n")
        malformed_sent += 1
        if i % 20 == 0:
            request_id = f"ok-{i}"
            method = rng.choice(["ping", "tools/list", "tools/call"])
            params: dict[str, Any] = {}
            if method == "tools/call":
                params = {"name": "search_code", "arguments": {"pattern": "TokenBucket"}}
            server.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            valid.append(request_id)
    messages = server.wait_for(lambda ms: all(any(m.get("id") == rid for m in ms) for rid in valid))
    for request_id in valid:
        replies = [m for m in messages if m.get("id") == request_id]
        assert len(replies) == 1, (request_id, replies)
        assert "result" in replies[0], replies[0]
    # Every malformed line got its own error reply.
    errors = server.wait_for(
        lambda ms: sum(1 for m in ms if "error" in m and m.get("id") in (None, 1, 3)) >= malformed_sent
    )
    codes = {m["error"]["code"] for m in errors if "error" in m}
    assert codes <= {-32700, -32600, -32602}, codes
    assert server.unparsed == []
    # Still serving, and stdin closing ends it at once.
    server.send({"jsonrpc": "2.0", "id": "last", "method": "tools/call", "params": {"name": "find_symbol", "arguments": {"name": "TokenBucket"}}})
    last = server.wait_for(lambda ms: any(m.get("id") == "last" for m in ms))
    reply = next(m for m in last if m.get("id") == "last")
    assert "src/rate_limit.rs" in json.dumps(reply)
    assert server.close() < 5.0
    assert server.process.returncode == 0


async def test_stdin_closing_ends_the_server_even_while_indexing(
    tmp_path: Path, cache: Path, raw_server: Any
) -> None:
    workspace = generated_workspace(tmp_path / "big", 6000)
    server = raw_server(workspace, cache)
    server.initialize()
    server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "locate", "arguments": {"question": "handler"}}})
    assert server.close() < 5.0
