"""The editor's MCP servers (`mcpServers` in session/new and session/load): a real MCP
server from npm (`@modelcontextprotocol/server-everything`, installed by run.sh) whose
tools the model is offered as `mcp__SERVER__TOOL`, each call asked about first; and
servers that fail to start, hang or crash, reported once (PROTOCOL.md section 9)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from acp import text_block
from acp.schema import McpServerStdio

from conftest import EditorClient, FakeProvider, run, running_agent
from test_acp import by_kind, turn

NODE = os.environ.get("NODE_BIN", "")
EVERYTHING = os.environ.get("MCP_SERVER_EVERYTHING", "")
FAKE_MCP = str(Path(__file__).parent / "fake_mcp_server.py")
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"

def everything() -> McpServerStdio:
    # run.sh installs the server from npm; without it these tests fail, never skip.
    assert NODE and EVERYTHING, "NODE_BIN and MCP_SERVER_EVERYTHING are set by run.sh"
    return McpServerStdio(name="everything", command=NODE, args=[EVERYTHING, "stdio"], env=[])


def tool_results(fake: FakeProvider, request: int) -> list[str]:
    return [m["content"] for m in fake.messages(request) if m["role"] == "tool"]


def test_mcp_tools_are_offered_asked_about_shown_and_their_results_bounded(workspace, fake_dir):
    long_message = "y" * (100 * 1024)
    fake = FakeProvider([
        turn("Echoing.", ("call-1", "mcp__everything__echo", {"message": f"hi {GITHUB_TOKEN}"})),
        turn("", ("call-2", "mcp__everything__echo", {"message": long_message})),
        turn("Done."),
    ], fake_dir)
    seen_requests = []

    async def body():
        client = EditorClient(permission="allow_once")
        client.on_permission = lambda *_: seen_requests.append(len(fake.requests()))
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize()
            session = await agent.new_session(mcp_servers=[everything()])
            response = await agent.prompt(session, text_block("Echo something"))
        return client, response

    try:
        client, response = run(body())
    finally:
        fake.stop()
    assert response.stop_reason == "end_turn"
    tools = {t["function"]["name"] for t in fake.requests()[0]["body"]["tools"]}
    assert "mcp__everything__echo" in tools and "read_file" in tools, tools
    # Asked at each call, before the model was called again.
    assert len(client.permission_requests) == 2
    assert seen_requests == [1, 2]
    tool_call, options = client.permission_requests[0]
    assert tool_call.tool_call_id == "call-1"
    assert {o.kind for o in options} == {"allow_once", "allow_always", "reject_once"}
    shown = by_kind(client.wire_updates(), "tool_call")[0]
    # `other` is ACP's default kind, which the SDK leaves out of the JSON.
    assert shown.get("kind", "other") == "other" and shown["title"] == "everything: echo", shown
    final = [u for u in client.wire_updates() if u.get("toolCallId") == "call-1"][-1]
    assert final["status"] == "completed"
    first, = tool_results(fake, 1)
    assert first.startswith("Echo: hi "), first
    assert GITHUB_TOKEN not in first and "[redacted" in first, first
    second = tool_results(fake, 2)[-1]
    assert len(second) < 64 * 1024 + 512, len(second)
    assert "(cut off" in second


def test_allow_always_covers_later_calls_and_reject_runs_nothing(workspace, fake_dir):
    fake = FakeProvider([
        turn("", ("call-1", "mcp__everything__echo", {"message": "one"})),
        turn("", ("call-2", "mcp__everything__echo", {"message": "two"})),
        turn("Both echoed."),
        turn("", ("call-3", "mcp__everything__get-sum", {"a": 1, "b": 2})),
        turn("Not summed."),
    ], fake_dir)

    async def body():
        client = EditorClient(permission="allow_always")
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize()
            session = await agent.new_session(mcp_servers=[everything()])
            first = await agent.prompt(session, text_block("Echo twice"))
            asked_first = len(client.permission_requests)
            client.permission = "reject_once"
            second = await agent.prompt(session, text_block("Add 1 and 2"))
        return client, first, asked_first, second

    try:
        client, first, asked_first, second = run(body())
    finally:
        fake.stop()
    assert first.stop_reason == second.stop_reason == "end_turn"
    assert asked_first == 1, "allowed always after the first call"
    assert "Echo: two" in tool_results(fake, 2)[-1]
    assert len(client.permission_requests) == 2
    rejected = tool_results(fake, 4)[-1]
    assert "rejected" in rejected and "3" not in rejected, rejected
    final = [u for u in client.wire_updates() if u.get("toolCallId") == "call-3"][-1]
    assert final["status"] == "failed"


def test_failing_mcp_servers_are_reported_once_and_the_session_goes_on(workspace, fake_dir):
    fake = FakeProvider([
        turn("", ("call-1", "mcp__crashes__boom", {})),
        turn("The tool crashed."),
        turn("Still here."),
    ], fake_dir)
    servers = [
        McpServerStdio(name="missing", command="/nonexistent/mcp-server", args=[], env=[]),
        McpServerStdio(name="hangs", command=sys.executable, args=[FAKE_MCP, "hang"], env=[]),
        McpServerStdio(name="crashes", command=sys.executable, args=[FAKE_MCP, "crash"], env=[]),
    ]

    async def body():
        client = EditorClient()
        async with running_agent(workspace, fake, client, COPILOT_LS_MCP_TIMEOUT_SECS="2") as agent:
            await agent.initialize()
            session = await agent.new_session(mcp_servers=servers)
            first = await agent.prompt(session, text_block("Use the tool"))
            first_text = client.text()
            second = await agent.prompt(session, text_block("Again"))
            second_text = client.text()[len(first_text):]
        return first, first_text, second, second_text

    try:
        first, first_text, second, second_text = run(body())
    finally:
        fake.stop()
    assert first.stop_reason == second.stop_reason == "end_turn"
    for server in ("missing", "hangs", "crashes"):
        assert first_text.count(f"`{server}`") == 1, (server, first_text)
        assert f"`{server}`" not in second_text, (server, second_text)
    # The crashed server's tool is not offered again.
    tools = {t["function"]["name"] for t in fake.requests()[2]["body"]["tools"]}
    assert "mcp__crashes__boom" not in tools
    assert "Error:" in tool_results(fake, 1)[-1]


def test_mcp_servers_given_to_session_load_are_started(workspace, fake_dir):
    fake = FakeProvider([
        turn("First."),
        turn("", ("call-1", "mcp__everything__echo", {"message": "after load"})),
        turn("Echoed."),
    ], fake_dir)

    async def first():
        client = EditorClient()
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize()
            session = await agent.new_session()
            await agent.prompt(session, text_block("Hello"))
        return session

    async def second(session):
        client = EditorClient()
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize()
            await agent.connection.load_session(cwd=str(workspace), session_id=session,
                                                mcp_servers=[everything()])
            return await agent.prompt(session, text_block("Echo after load"))

    try:
        session = run(first())
        response = run(second(session))
    finally:
        fake.stop()
    assert response.stop_reason == "end_turn"
    assert "Echo: after load" in tool_results(fake, 2)[-1]
