"""`copilot-ls acp` driven by the official ACP Python SDK against the fake provider."""

from __future__ import annotations

import asyncio
import json
import subprocess

import pytest

import acp
from acp import resource_block, resource_link_block, text_block
from acp.helpers import embedded_text_resource

from conftest import (COPILOT_LS_BIN, TIMEOUT, EditorClient, FakeProvider, prompt_once, run,
                      running_agent)

LIB_BEFORE = "// Arithmetic.\npub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n"
LIB_AFTER = "// Arithmetic.\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"


def turn(text: str = "", *calls: tuple[str, str, dict]) -> dict:
    step: dict = {"text": text}
    if calls:
        step["tool_calls"] = [{"id": i, "name": n, "arguments": a} for i, n, a in calls]
    return step


def by_kind(updates: list[dict], kind: str) -> list[dict]:
    return [u for u in updates if u["sessionUpdate"] == kind]


def test_initialize_names_the_agent_and_its_capabilities(workspace):
    async def body():
        client = EditorClient()
        async with running_agent(workspace, None, client) as agent:
            response = await agent.initialize()
        return response

    response = run(body())
    # `copilot-ls 0.4.0 (0123456789)`: the version, then the commit built from.
    version = subprocess.run([COPILOT_LS_BIN, "--version"], capture_output=True, text=True,
                             check=True).stdout.split()[1]
    assert response.protocol_version == 1
    assert response.agent_info.name == "copilot-ls"
    assert response.agent_info.version == version
    assert response.agent_capabilities.prompt_capabilities.embedded_context is True


def test_an_answer_streams_with_tool_calls_and_locations_before_the_response(workspace, fake_dir):
    fake = FakeProvider([
        turn("Let me read the file.",
             ("call-1", "read_file", {"path": "src/lib.rs", "start_line": 2})),
        turn("`add` subtracts: see src/lib.rs:2-3."),
    ], fake_dir)

    client, response = prompt_once(workspace, fake, [text_block("What does add do?")])
    assert response.stop_reason == "end_turn"
    # In wire order: the first turn's text as it streams (several chunks), its tool call
    # started then finished, the answer's chunks, and only then the prompt's response.
    updates = client.wire_updates()
    kinds = [u["sessionUpdate"] for u in updates]
    runs = [k for i, k in enumerate(kinds) if i == 0 or kinds[i - 1] != k]
    assert runs == ["agent_message_chunk", "tool_call", "tool_call_update",
                    "agent_message_chunk"], kinds
    first_turn = kinds.index("tool_call")
    assert first_turn > 1, f"the first turn's text arrived in one piece: {kinds}"
    assert "".join(u["content"]["text"] for u in updates[:first_turn]) == "Let me read the file."
    last = client.wire[-1]
    assert "result" in last and last["result"]["stopReason"] == "end_turn", last

    call = by_kind(client.wire_updates(), "tool_call")[0]
    assert call["toolCallId"] == "call-1"
    assert call["title"] == "read_file: src/lib.rs:2"
    assert call["kind"] == "read"
    assert call["status"] in ("pending", "in_progress")
    assert call["locations"] == [{"path": str(workspace / "src" / "lib.rs"), "line": 2}]
    done = by_kind(client.wire_updates(), "tool_call_update")[0]
    assert done["toolCallId"] == "call-1" and done["status"] == "completed"

    text = client.text()
    assert text.count("`add` subtracts: see src/lib.rs:2-3.") == 1, text
    uri = (workspace / "src" / "lib.rs").as_uri()
    assert f"[src/lib.rs:2-3]({uri}#L2:3)" in text, text
    # The model saw the file through the tool.
    results = [m for m in fake.messages(1) if m["role"] == "tool"]
    assert "pub fn add" in results[0]["content"]


def test_an_answer_tool_answer_is_sent_once_with_its_citations(workspace, fake_dir):
    fake = FakeProvider([
        turn("Answering.", ("call-1", "answer", {
            "answer": "It subtracts instead of adding.",
            "citations": [{"path": "src/lib.rs", "line": 3, "note": "the bug"}],
        })),
    ], fake_dir)

    client, response = prompt_once(workspace, fake, [text_block("What is wrong with add?")])
    assert response.stop_reason == "end_turn"
    text = client.text()
    assert text.count("It subtracts instead of adding.") == 1, text
    assert text.index("Answering.") < text.index("It subtracts")
    uri = (workspace / "src" / "lib.rs").as_uri()
    assert f"[src/lib.rs:3]({uri}#L3) — the bug" in text, text
    # The answer tool is not shown as a tool call.
    assert by_kind(client.wire_updates(), "tool_call") == []


def sse(*deltas: dict, finish: str = "stop") -> str:
    """An OpenAI-compatible stream with these deltas, as a server sends it."""
    chunks = [{"id": "c", "object": "chat.completion.chunk", "model": "fake-model",
               "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    chunks.append({"id": "c", "object": "chat.completion.chunk", "model": "fake-model",
                   "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


def test_reasoning_streamed_apart_is_a_thought(workspace, fake_dir):
    fake = FakeProvider([{"raw": sse(
        {"role": "assistant", "reasoning_content": "The user asks about add."},
        {"content": "It adds two numbers."},
    )}], fake_dir)

    client, response = prompt_once(workspace, fake, [text_block("What does add do?")])
    assert response.stop_reason == "end_turn"
    updates = client.wire_updates()
    kinds = [u["sessionUpdate"] for u in updates]
    assert kinds.index("agent_thought_chunk") < kinds.index("agent_message_chunk"), kinds
    thought = "".join(u["content"]["text"] for u in by_kind(updates, "agent_thought_chunk"))
    assert thought == "The user asks about add."
    assert "The user asks" not in client.text()
    assert client.text().count("It adds two numbers.") == 1


def test_a_follow_up_continues_the_session_conversation(workspace, fake_dir):
    fake = FakeProvider([turn("It adds numbers."), turn("Yes, two of them.")], fake_dir)

    async def body():
        client = EditorClient()
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize()
            session = await agent.new_session()
            first = await agent.prompt(session, text_block("What does add do?"))
            second = await agent.prompt(session, text_block("Only two numbers?"))
        return first, second

    try:
        first, second = run(body())
    finally:
        fake.stop()
    assert first.stop_reason == second.stop_reason == "end_turn"
    contents = [str(m.get("content")) for m in fake.messages(1)]
    assert any("What does add do?" in c for c in contents), contents
    assert any("It adds numbers." in c for c in contents), contents
    assert "Only two numbers?" in contents[-1]


def test_resources_are_the_context_of_the_question(workspace, fake_dir):
    fake = FakeProvider([turn("Noted.")], fake_dir)
    lib = workspace / "src" / "lib.rs"

    async def body():
        client = EditorClient()
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize()
            session = await agent.new_session()
            return await agent.prompt(
                session,
                text_block("Why subtract here?"),
                resource_block(embedded_text_resource(f"{lib.as_uri()}#L3:3", "    a - b\n")),
                resource_link_block("README.md", (workspace / "README.md").as_uri()),
            )

    try:
        response = run(body())
    finally:
        fake.stop()
    assert response.stop_reason == "end_turn"
    question = str(fake.messages(0)[-1]["content"])
    assert "Why subtract here?" in question
    assert "src/lib.rs (line 3):" in question and "    a - b" in question
    assert "README.md" in question


def test_cancel_stops_the_ask_and_the_session_keeps_serving(workspace, fake_dir):
    fake = FakeProvider([{"hang": True}, turn("Back again.")], fake_dir)

    async def body():
        client = EditorClient()
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize()
            session = await agent.new_session()
            prompt = asyncio.create_task(agent.prompt(session, text_block("Slow question")))
            await fake.wait_for_requests(1)
            await agent.connection.cancel(session_id=session)
            cancelled = await asyncio.wait_for(prompt, 5)
            requests_after_cancel = len(fake.requests())
            again = await agent.prompt(session, text_block("Next question"))
        return cancelled, requests_after_cancel, again

    try:
        cancelled, requests_after_cancel, again = run(body())
    finally:
        fake.stop()
    assert cancelled.stop_reason == "cancelled"
    assert requests_after_cancel == 1, "no further model call after the cancel"
    assert again.stop_reason == "end_turn"
    # The cancelled ask left nothing in the conversation.
    assert not any("Slow question" in str(m.get("content")) for m in fake.messages(1))


def test_the_agent_exits_when_its_input_closes_during_an_ask(workspace, fake_dir):
    fake = FakeProvider([{"hang": True}], fake_dir)

    async def body():
        client = EditorClient()
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize()
            session = await agent.new_session()
            prompt = asyncio.create_task(agent.prompt(session, text_block("Slow question")))
            await fake.wait_for_requests(1)
            process = agent.process
            started = asyncio.get_running_loop().time()
            process.stdin.close()
            code = await asyncio.wait_for(process.wait(), 5)
            elapsed = asyncio.get_running_loop().time() - started
            prompt.cancel()
        return code, elapsed

    try:
        code, elapsed = run(body())
    finally:
        fake.stop()
    assert code == 0
    print(f"exit after input closed: {elapsed:.3f}s")
    assert elapsed < 1.5, f"took {elapsed:.2f}s to exit"
    assert len(fake.requests()) == 1


def edit_script() -> list[dict]:
    return [
        turn("", ("edit-1", "propose_edit", {
            "path": "src/lib.rs", "old_text": "a - b", "new_text": "a + b", "title": "Fix add",
        })),
        turn("I proposed a fix for add."),
    ]


def run_edit(workspace, fake_dir, permission: str, write: bool = True):
    fake = FakeProvider(edit_script(), fake_dir)

    async def body():
        client = EditorClient(permission=permission)
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize(write=write)
            session = await agent.new_session()
            response = await agent.prompt(session, text_block("Fix add"))
        return client, response

    try:
        return run(body())
    finally:
        fake.stop()


def diffs(client: EditorClient) -> list[dict]:
    return [c for u in client.wire_updates() if u["sessionUpdate"] == "tool_call_update"
            for c in (u.get("content") or []) if c["type"] == "diff"]


def test_an_allowed_edit_is_written_through_the_client(workspace, fake_dir):
    client, response = run_edit(workspace, fake_dir, "allow_once")
    lib = str(workspace / "src" / "lib.rs")
    assert response.stop_reason == "end_turn"
    shown = diffs(client)[0]
    assert shown == {"type": "diff", "path": lib, "oldText": LIB_BEFORE, "newText": LIB_AFTER}
    assert len(client.permission_requests) == 1
    tool_call, options = client.permission_requests[0]
    assert tool_call.tool_call_id == "edit-1" and tool_call.kind == "edit"
    assert {o.kind for o in options} >= {"allow_once", "reject_once"}
    assert client.writes == [(lib, LIB_AFTER)]
    assert (workspace / "src" / "lib.rs").read_text() == LIB_AFTER
    final = [u for u in client.wire_updates()
             if u["sessionUpdate"] == "tool_call_update" and u["toolCallId"] == "edit-1"][-1]
    assert final["status"] == "completed"


@pytest.mark.parametrize("permission", ["reject_once", "cancel"])
def test_a_rejected_edit_writes_nothing(workspace, fake_dir, permission):
    client, response = run_edit(workspace, fake_dir, permission)
    assert len(client.permission_requests) == 1
    assert client.writes == []
    assert (workspace / "src" / "lib.rs").read_text() == LIB_BEFORE
    final = [u for u in client.wire_updates()
             if u["sessionUpdate"] == "tool_call_update" and u["toolCallId"] == "edit-1"][-1]
    assert final["status"] == "failed"
    assert response.stop_reason == ("cancelled" if permission == "cancel" else "end_turn")


def test_without_write_capability_the_diff_is_shown_and_nothing_written(workspace, fake_dir):
    client, response = run_edit(workspace, fake_dir, "allow_once", write=False)
    assert response.stop_reason == "end_turn"
    assert diffs(client)[0]["newText"] == LIB_AFTER
    assert client.permission_requests == []
    assert client.writes == []
    assert (workspace / "src" / "lib.rs").read_text() == LIB_BEFORE


def test_tools_read_unsaved_text_through_the_client(workspace, fake_dir):
    fake = FakeProvider([
        turn("", ("call-1", "read_file", {"path": "src/lib.rs"})),
        turn("It is unsaved."),
    ], fake_dir)
    lib = str(workspace / "src" / "lib.rs")

    async def body():
        client = EditorClient()
        client.buffers[lib] = "pub fn unsaved_marker() {}\n"
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize(read=True)
            session = await agent.new_session()
            await agent.prompt(session, text_block("What is in lib.rs?"))
        return client

    try:
        client = run(body())
    finally:
        fake.stop()
    assert lib in client.reads
    result = [m for m in fake.messages(1) if m["role"] == "tool"][0]["content"]
    assert "unsaved_marker" in result, result
    assert "open in the editor" in result
    assert "a - b" not in result


def test_file_outline_reads_unsaved_text_through_the_client(workspace, fake_dir):
    fake = FakeProvider([
        turn("", ("call-1", "file_outline", {"path": "src/lib.rs"})),
        turn("Outlined."),
    ], fake_dir)
    lib = str(workspace / "src" / "lib.rs")

    async def body():
        client = EditorClient()
        client.buffers[lib] = "pub struct Unsaved;\n\nimpl Unsaved {\n    pub fn marker(&self) {}\n}\n"
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize(read=True)
            session = await agent.new_session()
            await agent.prompt(session, text_block("Outline lib.rs"))
        return client

    try:
        client = run(body())
    finally:
        fake.stop()
    assert lib in client.reads
    result = [m for m in fake.messages(1) if m["role"] == "tool"][0]["content"]
    assert result == "1-1 struct Unsaved\n3-5 impl Unsaved\n  4-4 fn marker\n", result


def test_a_provider_error_fails_the_prompt_and_the_agent_keeps_serving(workspace, fake_dir):
    fake = FakeProvider([
        {"status": 401, "body": {"error": {"message": "bad key sk-test-not-a-real-key"}}},
        turn("Working again."),
    ], fake_dir)

    async def body():
        client = EditorClient()
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize()
            session = await agent.new_session()
            with pytest.raises(acp.RequestError) as failure:
                await agent.prompt(session, text_block("Anything"))
            again = await agent.prompt(session, text_block("Again"))
        return failure.value, again

    try:
        error, again = run(body())
    finally:
        fake.stop()
    assert error.code == -32603
    assert "401" in str(error)
    assert "sk-test-not-a-real-key" not in str(error) + str(error.data)
    assert again.stop_reason == "end_turn"


def test_a_prompt_without_text_or_resources_is_invalid_params(workspace):
    async def body():
        client = EditorClient()
        async with running_agent(workspace, None, client) as agent:
            await agent.initialize()
            session = await agent.new_session()
            with pytest.raises(acp.RequestError) as failure:
                await agent.prompt(session, text_block("   "))
            with pytest.raises(acp.RequestError) as unknown:
                await agent.prompt("no-such-session", text_block("Hello"))
            again = await agent.prompt(session, text_block("Where is add?"))
        return failure.value, unknown.value, again, client

    error, unknown, again, client = run(body())
    assert error.code == -32602
    assert unknown.code == -32602 and "no-such-session" in str(unknown)
    # No provider configured: the answer lists places found by the server's own search.
    assert again.stop_reason == "end_turn"
    assert "src/lib.rs" in client.text()


def test_the_step_limit_is_max_turn_requests(workspace, fake_dir):
    fake = FakeProvider([
        turn("Looking.", ("call-1", "list_directory", {"path": "."})),
        turn("Still looking.", ("call-2", "list_directory", {"path": "src"})),
    ], fake_dir)

    async def body():
        client = EditorClient()
        async with running_agent(workspace, fake, client, COPILOT_LS_MAX_STEPS="2") as agent:
            await agent.initialize()
            session = await agent.new_session()
            return client, await agent.prompt(session, text_block("Look around"))

    try:
        client, response = run(body())
    finally:
        fake.stop()
    assert response.stop_reason == "max_turn_requests"
    assert len(fake.requests()) == 2
    assert "maxSteps" in client.text()
