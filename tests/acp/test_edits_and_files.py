"""Permission at the edit (the model learns what the user decided) and files through
the client: only `read_file`, `read_open_buffer` and `file_outline` read through it, and
a file missing on disk is not an open buffer because a client answered its read with
empty text (PROTOCOL.md section 9, ACP)."""

from __future__ import annotations

import pytest
from acp import text_block

from conftest import EditorClient, FakeProvider, prompt_once, run, running_agent
from test_acp import LIB_AFTER, LIB_BEFORE, turn


def edit_then_answer() -> list[dict]:
    return [
        turn("Fixing.", ("edit-1", "propose_edit", {
            "path": "src/lib.rs", "old_text": "a - b", "new_text": "a + b", "title": "Fix add",
        })),
        turn("Done."),
    ]


def tool_result(fake: FakeProvider, request: int) -> str:
    return [m["content"] for m in fake.messages(request) if m["role"] == "tool"][-1]


@pytest.mark.parametrize("permission, word", [("allow_once", "applied"),
                                              ("reject_once", "rejected")])
def test_the_permission_is_asked_at_the_edit_and_the_model_learns_the_decision(
        workspace, fake_dir, permission, word):
    fake = FakeProvider(edit_then_answer(), fake_dir)
    asked_at = []

    async def body():
        client = EditorClient(permission=permission)
        client.on_permission = lambda *_: asked_at.append(
            (len(fake.requests()), "Done." in client.text()))
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize()
            session = await agent.new_session()
            response = await agent.prompt(session, text_block("Fix add"))
        return client, response

    try:
        client, response = run(body())
    finally:
        fake.stop()
    assert response.stop_reason == "end_turn"
    # Asked while the model waited for the tool's result: one request made, the
    # answer not streamed yet.
    assert asked_at == [(1, False)], asked_at
    result = tool_result(fake, 1)
    assert result.startswith(f"{word}:"), result
    expected = LIB_AFTER if word == "applied" else LIB_BEFORE
    assert (workspace / "src" / "lib.rs").read_text() == expected
    # In wire order: the tool call, its diff, the permission, then the answer.
    methods = [m.get("method") for m in client.wire]
    answer = [i for i, m in enumerate(client.wire) if m.get("method") == "session/update"
              and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
              and "Done." in m["params"]["update"]["content"]["text"]]
    diff = [i for i, m in enumerate(client.wire) if m.get("method") == "session/update"
            and m["params"]["update"]["sessionUpdate"] == "tool_call_update"
            and any(c.get("type") == "diff" for c in m["params"]["update"].get("content") or [])]
    assert diff and answer, client.wire
    assert diff[0] < methods.index("session/request_permission") < answer[0]


def test_a_failed_write_gives_the_model_the_clients_reason(workspace, fake_dir):
    fake = FakeProvider(edit_then_answer(), fake_dir)

    client, response = prompt_once(workspace, fake, [text_block("Fix add")],
                                   client=EditorClient(write_error="the buffer is read-only"))
    assert response.stop_reason == "end_turn"
    result = tool_result(fake, 1)
    assert result.startswith("Error:") and "the buffer is read-only" in result, result
    final = [u for u in client.wire_updates() if u.get("toolCallId") == "edit-1"][-1]
    assert final["status"] == "failed"
    assert "the buffer is read-only" in final["content"][0]["content"]["text"], final


def test_retrieval_and_search_read_the_disk_not_the_client(workspace, fake_dir):
    (workspace / "AGENTS.md").write_text("Answer briefly.\n")
    fake = FakeProvider([
        turn("", ("call-1", "search_code", {"pattern": "a - b"}),
             ("call-2", "find_symbol", {"name": "add"})),
        turn("See src/lib.rs:2."),
    ], fake_dir)

    client, response = prompt_once(workspace, fake, [text_block("Where is add?")])
    assert response.stop_reason == "end_turn"
    assert client.reads == [], client.reads
    assert "Answer briefly." in fake.requests()[0]["body"]["messages"][0]["content"]


def test_a_missing_file_answered_as_empty_is_not_an_open_buffer(workspace, fake_dir):
    fake = FakeProvider([
        turn("", ("call-1", "read_file", {"path": "NOTES.md"}),
             ("call-2", "read_open_buffer", {"path": "NOTES.md"}),
             ("call-3", "list_open_buffers", {})),
        turn("", ("call-4", "propose_edit", {"path": "NOTES.md", "old_text": "",
                                             "new_text": "# Notes\n"})),
        turn("Created."),
    ], fake_dir)
    notes = workspace / "NOTES.md"

    client, response = prompt_once(workspace, fake, [text_block("Start a notes file")],
                                   client=EditorClient(missing_as_empty=True))
    assert response.stop_reason == "end_turn"
    read, buffer, listed = [m["content"] for m in fake.messages(1) if m["role"] == "tool"]
    assert read.startswith("Error:") and "open in the editor" not in read, read
    assert buffer.startswith("Error:") and "not open" in buffer, buffer
    assert "no documents are open" in listed, listed
    created = tool_result(fake, 2)
    assert created.startswith("applied:"), created
    assert notes.read_text() == "# Notes\n"


def test_an_unsaved_buffer_read_is_listed_as_open(workspace, fake_dir):
    fake = FakeProvider([
        turn("", ("call-1", "read_open_buffer", {"path": "src/lib.rs"})),
        turn("", ("call-2", "list_open_buffers", {})),
        turn("It is open."),
    ], fake_dir)
    lib = str(workspace / "src" / "lib.rs")

    async def body():
        client = EditorClient()
        client.buffers[lib] = "pub fn unsaved() {}\n"
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize()
            session = await agent.new_session()
            return await agent.prompt(session, text_block("What is open?"))

    try:
        response = run(body())
    finally:
        fake.stop()
    assert response.stop_reason == "end_turn"
    assert "unsaved" in tool_result(fake, 1)
    listed = tool_result(fake, 2)
    assert "src/lib.rs" in listed and "modified" in listed, listed
