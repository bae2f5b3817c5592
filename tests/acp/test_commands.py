"""Slash commands answered without a model, the `ask` / `edit` modes, and the mode and
model menus (session config options) (PROTOCOL.md section 9, ACP)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time

from acp import text_block

from conftest import TIMEOUT, EditorClient, FakeProvider, run, running_agent
from test_acp import by_kind, turn


def test_commands_are_advertised_after_session_new_and_answer_without_a_model(workspace, fake_dir):
    fake = FakeProvider([], fake_dir)
    (workspace / "src" / "main.rs").write_text(
        "mod lib;\nfn main() {\n    println!(\"{}\", add(1, 2));\n}\n")
    # A repository with one commit, for `/history`.
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(workspace), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.com",
           "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.com"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "Add arithmetic"]):
        subprocess.run(["git", *args], cwd=workspace, env=env, check=True)

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
                            "/history src/lib.rs", "/find"):
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
    assert names == ["find", "references", "outline", "search", "locate", "history",
                     "index"], names
    history = answers["/history src/lib.rs"]
    assert "Ada: Add arithmetic" in history and "src/lib.rs" in history, history
    assert "ada@example.com" not in history, history
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


def as_dict(option) -> dict:
    """A config option of a response (an SDK model) or of an update (a dict)."""
    return option if isinstance(option, dict) else option.model_dump(by_alias=True)


def menu(options: list, option_id: str) -> dict:
    """One config option of a response or update, as a plain dict."""
    for option in map(as_dict, options):
        if option["id"] == option_id:
            return option
    raise AssertionError(f"no {option_id} option in {options}")


async def menu_update(client: EditorClient) -> None:
    """Waits for the first `config_option_update` (the provider's models, listed in the
    background after `session/new`)."""
    deadline = time.monotonic() + TIMEOUT
    while not by_kind(client.session_updates(), "config_option_update"):
        assert time.monotonic() < deadline, "no config_option_update"
        await asyncio.sleep(0.02)


def test_the_model_menu_lists_the_providers_models_and_a_choice_reaches_the_provider(
        workspace, fake_dir):
    fake = FakeProvider([turn("First."), turn("Second, from the larger model.")], fake_dir)

    async def body():
        client = EditorClient()
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize()
            created = await agent.connection.new_session(cwd=str(workspace), mcp_servers=[])
            session = created.session_id
            # The provider's listing arrives after the answer, as a menu update.
            await menu_update(client)
            first = await agent.prompt(session, text_block("Which model?"))
            chosen = await agent.connection.set_config_option(
                config_id="model", session_id=session, value="fake-model-large")
            second = await agent.prompt(session, text_block("And now?"))
            refused = None
            try:
                await agent.connection.set_config_option(
                    config_id="model", session_id=session, value="no-such-model")
            except Exception as error:  # the SDK raises the JSON-RPC error
                refused = error
            moded = await agent.connection.set_config_option(
                config_id="mode", session_id=session, value="ask")
        return client, created, first, chosen, second, refused, moded

    try:
        client, created, first, chosen, second, refused, moded = run(body())
    finally:
        fake.stop()
    model = menu(created.config_options, "model")
    assert model["category"] == "model" and model["currentValue"] == "fake-model"
    assert [o["value"] for o in model["options"]] == ["fake-model"]
    assert menu(created.config_options, "mode")["currentValue"] == "edit"
    updates = by_kind(client.session_updates(), "config_option_update")
    listed = menu(updates[0]["configOptions"], "model")
    assert [o["value"] for o in listed["options"]] == ["fake-model", "fake-model-large"]
    # Sent again at the first prompt, for a client that dropped the first one (it came
    # before the client stored the session's id), and only then.
    assert len(updates) == 2 and updates[1] == updates[0], updates
    assert menu(chosen.config_options, "model")["currentValue"] == "fake-model-large"
    requests = fake.requests()
    assert [r["body"]["model"] for r in requests] == ["fake-model", "fake-model-large"]
    assert first.stop_reason == second.stop_reason == "end_turn"
    assert refused is not None and "unknown model no-such-model" in str(refused), refused
    assert menu(moded.config_options, "mode")["currentValue"] == "ask"
    modes = [u["currentModeId"] for u in by_kind(client.session_updates(), "current_mode_update")]
    assert modes == ["ask"]


def test_without_a_provider_only_the_mode_is_offered(workspace, fake_dir):
    async def body():
        client = EditorClient()
        async with running_agent(workspace, None, client) as agent:
            await agent.initialize()
            created = await agent.connection.new_session(cwd=str(workspace), mcp_servers=[])
            refused = None
            try:
                await agent.connection.set_config_option(
                    config_id="model", session_id=created.session_id, value="gpt-4.1")
            except Exception as error:
                refused = error
        return created, refused

    created, refused = run(body())
    ids = [as_dict(o)["id"] for o in created.config_options]
    assert ids == ["mode"], ids
    assert refused is not None and "no provider is configured" in str(refused), refused


def test_menu_choices_are_kept_and_restored_by_load_in_a_new_process(workspace, fake_dir):
    fake = FakeProvider([turn("First."), turn("Still the larger model.")], fake_dir)

    async def first():
        client = EditorClient()
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize()
            session = await agent.new_session()
            await agent.prompt(session, text_block("Which model?"))
            await menu_update(client)
            await agent.connection.set_config_option(
                config_id="model", session_id=session, value="fake-model-large")
            await agent.connection.set_session_mode(session_id=session, mode_id="ask")
        return session

    async def second(session):
        client = EditorClient()
        async with running_agent(workspace, fake, client) as agent:
            await agent.initialize()
            loaded = await asyncio.wait_for(agent.connection.load_session(
                cwd=str(workspace), session_id=session, mcp_servers=[]), TIMEOUT)
            await agent.prompt(session, text_block("And now?"))
        return loaded

    try:
        loaded = run(second(run(first())))
    finally:
        fake.stop()
    assert loaded.modes.current_mode_id == "ask"
    assert menu(loaded.config_options, "mode")["currentValue"] == "ask"
    assert menu(loaded.config_options, "model")["currentValue"] == "fake-model-large"
    requests = fake.requests()
    assert [r["body"]["model"] for r in requests] == ["fake-model", "fake-model-large"]
    assert "propose_edit" not in {t["function"]["name"] for t in requests[1]["body"]["tools"]}
