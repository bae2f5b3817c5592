"""Sessions that outlive their process: random ids, conversations kept under the cache
directory, `session/load` replaying and continuing them, `session/list`, and the LSP
side continuing one by the same id (PROTOCOL.md section 9, ACP)."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path

from acp import text_block

from conftest import (COPILOT_LS_BIN, TIMEOUT, EditorClient, FakeProvider, agent_env, run,
                      running_agent)
from test_acp import by_kind, turn


def test_session_ids_are_random_and_unique_across_processes(workspace):
    async def one_process():
        client = EditorClient()
        async with running_agent(workspace, None, client) as agent:
            await agent.initialize()
            return [await agent.new_session(), await agent.new_session()]

    ids = run(one_process()) + run(one_process())
    assert len(set(ids)) == 4, ids
    assert all(re.fullmatch(r"[0-9a-f]{32}", id) for id in ids), ids


def test_a_kept_conversation_is_replayed_by_load_and_continued_in_a_new_process(
        workspace, fake_dir):
    fake = FakeProvider([
        turn("Let me look.", ("call-1", "read_file", {"path": "src/lib.rs"})),
        turn("`add` subtracts: see src/lib.rs:3."),
        turn("Yes, it should add."),
    ], fake_dir)

    async def first():
        client = EditorClient()
        async with running_agent(workspace, fake, client) as agent:
            initialized = await agent.initialize()
            session = await agent.new_session()
            await agent.prompt(session, text_block("What does add do?"))
        return initialized, session

    async def second(session):
        client = EditorClient()
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize()
            loaded = await asyncio.wait_for(agent.connection.load_session(
                cwd=str(workspace), session_id=session, mcp_servers=[]), TIMEOUT)
            replayed = len(client.wire)
            response = await agent.prompt(session, text_block("Is that a bug?"))
        return client, loaded, replayed, response

    try:
        initialized, session = run(first())
        client, loaded, replayed, response = run(second(session))
    finally:
        fake.stop()
    capabilities = initialized.agent_capabilities
    assert capabilities.load_session is True
    assert capabilities.session_capabilities.list is not None
    # The replay came before load's answer: user and agent chunks and the tool call.
    answered = next(i for i, m in enumerate(client.wire[:replayed])
                    if "result" in m and "modes" in (m["result"] or {}))
    before = [m["params"]["update"] for m in client.wire[:answered]
              if m.get("method") == "session/update"]
    kinds = [u["sessionUpdate"] for u in before]
    assert kinds[0] == "user_message_chunk", kinds
    assert before[0]["content"]["text"] == "What does add do?"
    assert "tool_call" in kinds and "agent_message_chunk" in kinds, kinds
    call = by_kind(before, "tool_call")[0]
    assert call["title"] == "read_file: src/lib.rs" and call["status"] == "completed", call
    answer = "".join(u["content"]["text"] for u in by_kind(before, "agent_message_chunk"))
    assert "`add` subtracts" in answer and "Let me look." in answer, answer
    assert loaded.modes.current_mode_id == "edit"
    assert response.stop_reason == "end_turn"
    # The model saw the whole first exchange: the follow-up continues it.
    messages = fake.messages(2)
    contents = [str(m.get("content")) for m in messages]
    assert any("What does add do?" in c for c in contents), contents
    assert any("`add` subtracts" in c for c in contents), contents
    assert "Is that a bug?" in contents[-1]
    # Nothing was written inside the workspace.
    assert sorted(p.name for p in workspace.rglob("*")) == ["lib.rs", "src"]


def test_a_session_that_asked_nothing_yet_can_be_loaded_elsewhere(workspace):
    async def create():
        client = EditorClient()
        async with running_agent(workspace, None, client) as agent:
            await agent.initialize()
            return await agent.new_session()

    async def load(session):
        client = EditorClient()
        async with running_agent(workspace, None, client) as agent:
            await agent.initialize()
            await agent.connection.load_session(cwd=str(workspace), session_id=session,
                                                mcp_servers=[])
            before = await agent.connection.list_sessions(cwd=str(workspace))
            response = await agent.prompt(session, text_block("Where is add?"))
            after = await agent.connection.list_sessions(cwd=str(workspace))
        return client, before, response, after

    session = run(create())
    client, before, response, after = run(load(session))
    # Nothing asked yet: loadable, but nothing to resume, so not listed (a client that
    # opens a session per chat window would list every empty one as a bare id).
    assert before.sessions == []
    assert response.stop_reason == "end_turn"
    assert [(s.session_id, s.title) for s in after.sessions] == [(session, "Where is add?")]
    commands = [u for u in client.session_updates()
                if u["sessionUpdate"] == "available_commands_update"]
    assert commands, "commands are sent after session/load too"


def test_loading_an_unknown_session_is_an_error_and_the_agent_goes_on(workspace):
    async def body():
        client = EditorClient()
        async with running_agent(workspace, None, client) as agent:
            await agent.initialize()
            try:
                await agent.connection.load_session(cwd=str(workspace), session_id="f" * 32,
                                                    mcp_servers=[])
            except Exception as error:  # noqa: BLE001 - the SDK's RequestError
                failure = error
            else:
                failure = None
            session = await agent.new_session()
        return failure, session

    failure, session = run(body())
    assert failure is not None and "f" * 32 in str(failure)
    assert session


def test_session_list_shows_kept_sessions_with_their_first_question(workspace, fake_dir, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "main.py").write_text("print('hi')\n")
    fake = FakeProvider([turn("One."), turn("Two."), turn("Three.")], fake_dir)

    async def body():
        client = EditorClient()
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize()
            first = await agent.new_session()
            await agent.prompt(first, text_block("Where is add defined?"))
            await agent.prompt(first, text_block("And who calls it?"))
            second = await agent.new_session(cwd=other.resolve())
            await agent.prompt(second, text_block("What does main.py print?"))
            # A chat opened and never asked in has nothing to resume: not listed.
            await agent.new_session()
            here = await agent.connection.list_sessions(cwd=str(workspace))
            everywhere = await agent.connection.list_sessions()
        return first, second, here, everywhere

    try:
        first, second, here, everywhere = run(body())
    finally:
        fake.stop()
    assert [s.session_id for s in here.sessions] == [first]
    listed = here.sessions[0]
    assert listed.title == "Where is add defined?"
    assert listed.cwd == str(workspace)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", listed.updated_at), listed.updated_at
    assert {s.session_id for s in everywhere.sessions} == {first, second}


def lsp_frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


async def lsp_read(reader: asyncio.StreamReader) -> dict:
    length = 0
    while True:
        line = await reader.readline()
        assert line, "the server closed its output"
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(await reader.readexactly(length))


def test_the_lsp_side_continues_a_kept_conversation_by_its_id(workspace, fake_dir):
    fake = FakeProvider([turn("It adds, badly."), turn("From the LSP side: yes.")], fake_dir)

    async def acp_side():
        client = EditorClient()
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize()
            session = await agent.new_session()
            await agent.prompt(session, text_block("What does add do?"))
        return session

    async def lsp_side(session):
        env = agent_env(workspace, fake)
        process = await asyncio.create_subprocess_exec(
            COPILOT_LS_BIN, cwd=str(workspace), env=env, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
        try:
            send = lambda m: process.stdin.write(lsp_frame(m))  # noqa: E731
            send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "processId": os.getpid(), "rootUri": workspace.as_uri(), "capabilities": {}}})
            while (await lsp_read(process.stdout)).get("id") != 1:
                pass
            send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            send({"jsonrpc": "2.0", "id": 2, "method": "copilot/ask", "params": {
                "question": "Is that right?", "conversationId": session}})
            while True:
                message = await asyncio.wait_for(lsp_read(process.stdout), TIMEOUT)
                if message.get("id") == 2 and "method" not in message:
                    return message
                if "method" in message and "id" in message:
                    send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        finally:
            process.kill()
            await process.wait()

    try:
        session = run(acp_side())
        reply = run(lsp_side(session))
    finally:
        fake.stop()
    assert reply["result"]["conversationId"] == session, reply
    contents = [str(m.get("content")) for m in fake.messages(1)]
    assert any("What does add do?" in c for c in contents), contents
    assert any("It adds, badly." in c for c in contents), contents
    assert "Is that right?" in contents[-1]


def test_a_corrupt_kept_conversation_is_skipped(workspace):
    cache = workspace.parent / (workspace.name + "-cache") / "copilot-ls" / "conversations"

    async def body():
        client = EditorClient()
        async with running_agent(workspace, None, client) as agent:
            await agent.initialize()
            session = await agent.new_session()
            await agent.prompt(session, text_block("Where is add?"))
        files = list(cache.rglob("*.json"))
        assert len(files) == 1, files
        (files[0].parent / "broken.json").write_text("{not json")
        files[0].write_bytes(b"\xff\xfe")
        client = EditorClient()
        async with running_agent(workspace, None, client) as agent:
            await agent.initialize()
            listed = await agent.connection.list_sessions(cwd=str(workspace))
            again = await agent.new_session()
        return listed, again

    listed, again = run(body())
    assert listed.sessions == []
    assert again


def test_slash_commands_and_cancelled_prompts_are_replayed_but_not_told_to_the_model(
        workspace, fake_dir):
    fake = FakeProvider([{"hang": True}, turn("Answered after the load.")], fake_dir)

    async def first():
        client = EditorClient()
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize()
            session = await agent.new_session()
            await agent.prompt(session, text_block("/find add"))
            prompt = asyncio.create_task(agent.prompt(session, text_block("Slow question")))
            await fake.wait_for_requests(1)
            await agent.connection.cancel(session_id=session)
            cancelled = await asyncio.wait_for(prompt, 5)
        return session, cancelled

    async def second(session):
        client = EditorClient()
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize()
            await asyncio.wait_for(agent.connection.load_session(
                cwd=str(workspace), session_id=session, mcp_servers=[]), TIMEOUT)
            replayed = client.session_updates()
            await agent.prompt(session, text_block("Next question"))
        return replayed

    try:
        session, cancelled = run(first())
        replayed = run(second(session))
    finally:
        fake.stop()
    assert cancelled.stop_reason == "cancelled"
    said = [(u["sessionUpdate"], u["content"]["text"]) for u in replayed
            if u["sessionUpdate"] in ("user_message_chunk", "agent_message_chunk")]
    assert said[0] == ("user_message_chunk", "/find add"), said
    assert said[1][0] == "agent_message_chunk" and "src/lib.rs:2" in said[1][1], said
    assert said[2:] == [("user_message_chunk", "Slow question"),
                        ("agent_message_chunk", "*(cancelled)*")], said
    # The model's history holds neither: they were never its turns.
    texts = [str(m.get("content")) for m in fake.messages(1)]
    assert not any("Slow question" in t or "/find add" in t for t in texts), texts


def test_additional_directories_are_roots_kept_with_the_session_and_restored_by_load(
        workspace, fake_dir, tmp_path):
    """`additionalDirectories` on `session/new` are roots beside `cwd` (paths under each
    root's name), kept with the session: `session/load` in a new process restores them
    without being told again, and `session/list` reports them."""
    shared = tmp_path / "shared-lib"
    (shared / "src").mkdir(parents=True)
    (shared / "src" / "helper.py").write_text("def clamp_total(total):\n    return max(total, 0)\n")
    own = f"{workspace.name}/src/lib.rs"
    fake = FakeProvider([
        turn("Both.", ("c1", "read_file", {"path": own}), ("c2", "read_file", {"path": "shared-lib/src/helper.py"})),
        turn("`clamp_total` keeps totals at zero or more."),
        turn("Again.", ("c3", "read_file", {"path": "shared-lib/src/helper.py"})),
        turn("Still there."),
    ], fake_dir)

    async def first():
        client = EditorClient()
        async with running_agent(workspace, fake, client) as agent:
            initialized = await agent.initialize()
            response = await agent.connection.new_session(
                cwd=str(workspace), mcp_servers=[], additional_directories=[str(shared)])
            await agent.prompt(response.session_id, text_block("What do the helpers do?"))
            return initialized, response.session_id

    async def second(session):
        client = EditorClient()
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize()
            await asyncio.wait_for(agent.connection.load_session(
                cwd=str(workspace), session_id=session, mcp_servers=[]), TIMEOUT)
            await agent.prompt(session, text_block("And now?"))
            listed = await agent.connection.list_sessions(cwd=str(workspace))
            return listed

    try:
        initialized, session = run(first())
        listed = run(second(session))
    finally:
        fake.stop()
    assert initialized.agent_capabilities.session_capabilities.additional_directories is not None
    # Both roots were read, each under its name.
    results = [str(m.get("content")) for m in fake.messages(1) if m.get("role") == "tool"]
    assert any("pub fn add" in r for r in results), results
    assert any("def clamp_total" in r for r in results), results
    # Restored by load without being named again.
    results = [str(m.get("content")) for m in fake.messages(3) if m.get("role") == "tool"]
    assert any("def clamp_total" in r and "Error" not in r for r in results[-1:]), results
    info = next(s for s in listed.sessions if s.session_id == session)
    assert info.additional_directories == [str(shared.resolve())], info
