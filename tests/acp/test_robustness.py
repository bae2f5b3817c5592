"""Bad input never ends the agent, replies stay small, and a cancel is never lost:
`copilot-ls acp` spoken to line by line (PROTOCOL.md section 9, ACP)."""

from __future__ import annotations

import asyncio
import json
import time

from acp import image_block, text_block

from conftest import (TIMEOUT, EditorClient, FakeProvider, RawAgent, run, running_agent)
from test_acp import by_kind, turn


def test_invalid_utf8_and_json_are_parse_errors_and_the_agent_goes_on(workspace):
    async def body():
        agent = await RawAgent.start(workspace)
        try:
            # Before initialize: a byte that is not UTF-8.
            await agent.write(b"\xff\n")
            not_utf8 = await agent.read()
            initialized = await agent.initialize()
            # After: not UTF-8 again, then not JSON, then a 4 MB line that is not JSON.
            await agent.write(b"\xfe\xff{}\n")
            again = await agent.read()
            await agent.write(b"{not json\n")
            not_json = await agent.read()
            huge = b"{" + b"x" * (4 * 1024 * 1024) + b"\n"
            await agent.write(huge)
            huge_reply = await agent.read()
            session = await agent.new_session(workspace)
            # A scalar params: the error carries the request's id.
            await agent.write(b'{"jsonrpc":"2.0","id":77,"method":"session/new","params":5}\n')
            scalar = await agent.reply(77)
            # A 4 MB session id quoted back in an error: cut to 1 KB.
            big_id = "s" * (4 * 1024 * 1024)
            id = await agent.send("session/prompt", {"sessionId": big_id, "prompt": [
                {"type": "text", "text": "hi"}]})
            unknown = await agent.reply(id)
            still_alive = agent.process.returncode is None
        finally:
            code = await agent.close()
        return not_utf8, initialized, again, not_json, huge_reply, session, scalar, unknown, \
            still_alive, code

    (not_utf8, initialized, again, not_json, huge_reply, session, scalar, unknown,
     still_alive, code) = run(body())
    for reply in (not_utf8, again, not_json, huge_reply):
        assert reply["error"]["code"] == -32700, reply
        assert reply["id"] is None
    assert initialized["result"]["protocolVersion"] == 1
    assert len(json.dumps(huge_reply)) < 2048, len(json.dumps(huge_reply))
    assert session
    assert scalar["id"] == 77 and scalar["error"]["code"] == -32602, scalar
    assert unknown["error"]["code"] == -32602
    assert len(json.dumps(unknown)) < 3 * 1024, len(json.dumps(unknown))
    assert still_alive
    assert code == 0


def test_an_unsupported_protocol_version_is_answered_with_ours(workspace):
    async def body():
        agent = await RawAgent.start(workspace)
        try:
            id = await agent.send("initialize", {"protocolVersion": 99999,
                                                 "clientCapabilities": {}})
            return await agent.reply(id)
        finally:
            await agent.close()

    reply = run(body())
    assert reply["result"]["protocolVersion"] == 1, reply


def test_a_cancel_right_behind_its_prompt_is_never_lost(workspace, fake_dir):
    """session/cancel written in the same write as its session/prompt, 100 times, each
    in a fresh session. The provider would answer after 2 s: a prompt that ends any
    other way than `cancelled` lost its cancel."""
    rounds = 100
    fake = FakeProvider([{"text": "too late", "delay_ms": 2000} for _ in range(rounds)],
                        fake_dir)

    async def body():
        agent = await RawAgent.start(workspace, fake)
        lost = 0
        started = time.monotonic()
        try:
            await agent.initialize()
            for n in range(rounds):
                session = await agent.new_session(workspace)
                prompt = {"jsonrpc": "2.0", "id": 1000 + n, "method": "session/prompt",
                          "params": {"sessionId": session,
                                     "prompt": [{"type": "text", "text": f"question {n}"}]}}
                cancel = {"jsonrpc": "2.0", "method": "session/cancel",
                          "params": {"sessionId": session}}
                await agent.write((json.dumps(prompt) + "\n" + json.dumps(cancel) + "\n").encode())
                reply = await agent.reply(1000 + n)
                if reply.get("result", {}).get("stopReason") != "cancelled":
                    lost += 1
        finally:
            await agent.close()
        return lost, time.monotonic() - started

    try:
        lost, elapsed = run(body())
    finally:
        fake.stop()
    print(f"cancel race: {lost} of {rounds} cancels lost ({elapsed:.1f}s)")
    assert lost == 0, f"{lost} of {rounds} cancels lost"


def test_prompt_text_over_1_mb_is_cut_with_a_note(workspace, fake_dir):
    fake = FakeProvider([turn("Read it.")], fake_dir)

    async def body():
        client = EditorClient()
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize()
            session = await agent.new_session()
            return await agent.prompt(session, text_block("log line\n" * 400_000))

    try:
        response = run(body())
    finally:
        fake.stop()
    assert response.stop_reason == "end_turn"
    question = str(fake.messages(0)[-1]["content"])
    assert "(cut off at 1024 KiB" in question
    assert len(question) < 1024 * 1024 + 64 * 1024, len(question)


def test_an_image_block_is_named_in_the_answer(workspace, fake_dir):
    fake = FakeProvider([turn("Looked at the text.")], fake_dir)

    async def body():
        client = EditorClient()
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize()
            session = await agent.new_session()
            response = await agent.prompt(session, text_block("What is in this screenshot?"),
                                          image_block("iVBORw0KGgo=", "image/png"))
            return client, response

    try:
        client, response = run(body())
    finally:
        fake.stop()
    assert response.stop_reason == "end_turn"
    assert "image was not read" in client.text(), client.text()
    assert "The user also attached: image" in str(fake.messages(0)[-1]["content"])


def test_a_cancelled_tool_call_ends_with_a_final_update(workspace, fake_dir):
    fake = FakeProvider([
        turn("", ("edit-1", "propose_edit", {"path": "src/lib.rs", "old_text": "a - b",
                                             "new_text": "a + b"})),
        turn("never reached"),
    ], fake_dir)

    async def body():
        # The user never answers the permission: the cancel comes while the tool call is
        # still running.
        client = EditorClient(permission="hang")
        asked = asyncio.Event()
        client.on_permission = lambda *_: asked.set()
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize()
            session = await agent.new_session()
            prompt = asyncio.create_task(agent.prompt(session, text_block("Fix add")))
            await asyncio.wait_for(asked.wait(), TIMEOUT)
            await agent.connection.cancel(session_id=session)
            response = await asyncio.wait_for(prompt, 10)
        return client, response

    try:
        client, response = run(body())
    finally:
        fake.stop()
    assert response.stop_reason == "cancelled"
    updates = [u for u in client.wire_updates() if u.get("toolCallId") == "edit-1"]
    assert updates[0]["sessionUpdate"] == "tool_call"
    assert updates[-1]["sessionUpdate"] == "tool_call_update"
    assert updates[-1]["status"] in ("failed", "completed"), updates[-1]
    assert len(fake.requests()) == 1
    assert by_kind(client.wire_updates(), "tool_call")
