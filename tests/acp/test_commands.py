"""Slash commands answered without a model, and the `ask` / `edit` modes
(PROTOCOL.md section 9, ACP)."""

from __future__ import annotations

import asyncio
import time

from acp import text_block

from conftest import TIMEOUT, EditorClient, FakeProvider, run, running_agent
from test_acp import by_kind, turn


def test_commands_are_advertised_after_session_new_and_answer_without_a_model(workspace, fake_dir):
    fake = FakeProvider([], fake_dir)
    (workspace / "src" / "main.rs").write_text(
        "mod lib;\nfn main() {\n    println!(\"{}\", add(1, 2));\n}\n")

    async def body():
        client = EditorClient()
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize()
            session = await agent.new_session()
            # The commands answer from the index: wait until its first build is done.
            deadline = time.monotonic() + TIMEOUT
            while True:
                start = len(client.text())
                await agent.prompt(session, text_block("/index"))
                if "It is complete" in client.text()[start:]:
                    break
                assert time.monotonic() < deadline, client.text()[start:]
                await asyncio.sleep(0.05)
            answers = {}
            for command in ("/find add", "/outline src/lib.rs", "/search a - b",
                            "/locate where are numbers added", "/index", "/references add",
                            "/find"):
                start = len(client.text())
                response = await agent.prompt(session, text_block(command))
                assert response.stop_reason == "end_turn", command
                answers[command] = client.text()[start:]
        return client, session, answers

    try:
        client, session, answers = run(body())
    finally:
        fake.stop()
    assert fake.requests() == [], "no model was called"
    # Right after the session/new answer.
    new_answer = next(i for i, m in enumerate(client.wire)
                      if "result" in m and "sessionId" in (m["result"] or {}))
    update = client.wire[new_answer + 1]["params"]["update"]
    assert update["sessionUpdate"] == "available_commands_update", update
    names = [c["name"] for c in update["availableCommands"]]
    assert names == ["find", "references", "outline", "search", "locate", "index"], names
    assert "src/lib.rs:2: function add" in answers["/find add"], answers["/find add"]
    assert "2-4 fn add" in answers["/outline src/lib.rs"], answers["/outline src/lib.rs"]
    assert "src/lib.rs:3:" in answers["/search a - b"], answers["/search a - b"]
    assert "src/lib.rs" in answers["/locate where are numbers added"]
    assert "No model is configured" not in answers["/locate where are numbers added"]
    assert "files" in answers["/index"] and "complete" in answers["/index"], answers["/index"]
    references = answers["/references add"]
    assert "src/main.rs:3:" in references or "not available" in references, references
    assert answers["/find"].startswith("Usage: `/find NAME`"), answers["/find"]


def test_ask_mode_offers_no_edit_tool_and_edit_mode_does(workspace, fake_dir):
    fake = FakeProvider([
        turn("", ("call-1", "propose_edit", {"path": "src/lib.rs", "old_text": "a - b",
                                             "new_text": "a + b"})),
        turn("I cannot edit in ask mode."),
        turn("Back in edit mode."),
    ], fake_dir)

    async def body():
        client = EditorClient()
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize()
            created = await agent.connection.new_session(cwd=str(workspace), mcp_servers=[])
            session = created.session_id
            await agent.connection.set_session_mode(session_id=session, mode_id="ask")
            asked = await agent.prompt(session, text_block("Fix add"))
            await agent.connection.set_session_mode(session_id=session, mode_id="edit")
            edited = await agent.prompt(session, text_block("Now?"))
        return client, created, asked, edited

    try:
        client, created, asked, edited = run(body())
    finally:
        fake.stop()
    assert created.modes.current_mode_id == "edit"
    assert {m.id for m in created.modes.available_modes} == {"ask", "edit"}
    modes = [u["currentModeId"] for u in by_kind(client.session_updates(), "current_mode_update")]
    assert modes == ["ask", "edit"]
    ask_tools = {t["function"]["name"] for t in fake.requests()[0]["body"]["tools"]}
    edit_tools = {t["function"]["name"] for t in fake.requests()[2]["body"]["tools"]}
    assert "propose_edit" not in ask_tools and "read_file" in ask_tools
    assert "propose_edit" in edit_tools
    refused = [m["content"] for m in fake.messages(1) if m["role"] == "tool"][-1]
    assert refused.startswith("Error: propose_edit is not available"), refused
    assert client.permission_requests == [] and client.writes == []
    assert asked.stop_reason == edited.stop_reason == "end_turn"
