"""The tools of `copilot-ls mcp` under the official MCP Python SDK: listed with their
schemas and annotations, every one called on the sample workspace with its result
validated against its outputSchema and its text the same as the ask's tool gives,
bad input as `isError` results, and the sandbox's hostile paths refused."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from mcp.shared.exceptions import MCPError

from conftest import COPILOT_LS_BIN, CANARY, cli_tool, connect, hostile_workspace, server_env

pytestmark = pytest.mark.anyio

TOOLS = [
    "locate",
    "find_symbol",
    "find_references",
    "file_outline",
    "search_code",
    "read_file",
    "list_directory",
    "find_files",
    "git_log",
    "git_blame",
    "git_diff",
]
# The sample workspace is no git repository: the git tools have a test of their own.
GIT_TOOLS = {"git_log", "git_blame", "git_diff"}

# One call of every tool on the sample workspace, and a text each result must hold.
CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("locate", {"question": "how are tokens refilled in the rate limiter?"}, "src/rate_limit.rs"),
    ("find_symbol", {"name": "TokenBucket"}, "src/rate_limit.rs"),
    ("find_symbol", {"name": "TokenBucket.refill", "kind": "method"}, "refill"),
    ("find_references", {"name": "refill"}, "src/rate_limit.rs"),
    ("find_references", {"name": "TokenBucket", "path": "src"}, "TokenBucket"),
    ("file_outline", {"path": "src/rate_limit.rs"}, "TokenBucket"),
    ("search_code", {"pattern": "fn refill"}, "src/rate_limit.rs:"),
    ("search_code", {"pattern": "struct \\w+", "regex": True, "path": "src"}, "struct"),
    ("read_file", {"path": "src/config.rs", "start_line": 1, "end_line": 5}, "1\t"),
    ("list_directory", {}, "src/"),
    ("list_directory", {"path": "src"}, "rate_limit.rs"),
    ("find_files", {"pattern": "**/*.rs"}, "src/main.rs"),
]


def text_of(result: Any) -> str:
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def tools_by_name(session: Any) -> dict[str, Any]:
    listed = await session.list_tools()
    return {tool.name: tool for tool in listed.tools}


async def test_tools_are_listed_with_schemas_and_read_only_annotations(sample: Path, cache: Path) -> None:
    async with connect(sample, cache) as session:
        assert session.initialize_result.server_info.name == "copilot-ls"
        assert session.protocol_version == "2025-11-25"
        capabilities = session.initialize_result.capabilities
        assert capabilities.tools is not None and capabilities.resources is not None
        listed = await session.list_tools()
        assert listed.next_cursor is None
        names = [tool.name for tool in listed.tools]
        assert names == TOOLS
        for tool in listed.tools:
            assert tool.description and len(tool.description) > 60, tool.name
            assert tool.input_schema["type"] == "object"
            jsonschema.Draft202012Validator.check_schema(tool.input_schema)
            jsonschema.Draft202012Validator.check_schema(tool.output_schema)
            assert tool.annotations.read_only_hint is True, tool.name
            assert tool.annotations.open_world_hint is False, tool.name
        assert tools_by_name.__name__  # the helper below is used by the other tests


@pytest.mark.parametrize("modern", [False, True], ids=["2025-11-25", "2026-07-28"])
async def test_every_tool_answers_with_valid_structured_content_and_the_asks_text(
    sample: Path, cache: Path, modern: bool
) -> None:
    async with connect(sample, cache, modern=modern) as session:
        expected_version = "2026-07-28" if modern else "2025-11-25"
        assert session.protocol_version == expected_version
        tools = await tools_by_name(session)
        called = set()
        for name, arguments, needle in CALLS:
            # The SDK validates structuredContent against the outputSchema itself (it
            # raises on a mismatch); check it here too, explicitly.
            result = await session.call_tool(name, arguments)
            assert not result.is_error, (name, text_of(result))
            text = text_of(result)
            assert needle in text, (name, arguments, text)
            jsonschema.validate(result.structured_content, tools[name].output_schema)
            if name != "locate":
                assert text == cli_tool(sample, cache, name, arguments), (name, arguments)
            called.add(name)
        assert called == set(TOOLS) - GIT_TOOLS


async def test_finders_give_places_and_read_file_gives_lines(sample: Path, cache: Path) -> None:
    async with connect(sample, cache) as session:
        found = await session.call_tool("find_symbol", {"name": "TokenBucket"})
        place = found.structured_content["places"][0]
        assert place["path"] == "src/rate_limit.rs"
        assert place["line"] <= place["endLine"]
        assert "TokenBucket" in place["symbol"]
        located = await session.call_tool("locate", {"question": "token bucket refill"})
        places = located.structured_content["places"]
        assert places and all(p["excerpt"] for p in places)
        assert located.structured_content["complete"] is True
        read = await session.call_tool("read_file", {"path": "src/config.rs", "start_line": 2, "end_line": 3})
        content = read.structured_content
        assert (content["startLine"], content["endLine"]) == (2, 3)
        lines = (sample / "src/config.rs").read_text().splitlines()
        assert content["text"] == "\n".join(lines[1:3]) + "\n"
        assert content["totalLines"] == len(lines)


BAD_INPUT: list[tuple[str, dict[str, Any], str]] = [
    ("search_code", {"pattern": "(unclosed", "regex": True}, "invalid regex"),
    ("search_code", {"pattern": ""}, "must not be empty"),
    ("search_code", {}, "missing field"),
    ("read_file", {"path": "no/such/file.rs"}, "no such file"),
    ("read_file", {"path": "src/main.rs", "start_line": 100000}, "past the end"),
    ("read_file", {"path": "src", "bogus": 1}, "unknown field"),
    ("find_files", {"pattern": "[z-a]"}, "invalid glob"),
    ("find_symbol", {"name": "x", "kind": "widget"}, "unknown kind"),
    ("find_references", {"name": "not an identifier"}, "must be an identifier"),
    ("file_outline", {"path": "README.md"}, "no outline"),
    ("list_directory", {"path": "src/main.rs"}, "not a directory"),
    ("locate", {"question": "  "}, "non-empty"),
    ("locate", {"question": "x", "limit": 3}, "takes one argument, `question`"),
    ("locate", {"question": "x", "limit": 3}, '"required": ["question"]'),
    ("locate", {"question": "x", "query": "y"}, "not both"),
]


async def test_bad_input_is_an_error_result_never_a_protocol_error(sample: Path, cache: Path) -> None:
    async with connect(sample, cache) as session:
        for name, arguments, needle in BAD_INPUT:
            result = await session.call_tool(name, arguments)
            assert result.is_error is True, (name, arguments)
            text = text_of(result)
            assert text.startswith("Error: ") and needle in text, (name, arguments, text)
        # An unknown tool is the one protocol error (-32602), and the session goes on.
        with pytest.raises(MCPError) as raised:
            await session.call_tool("write_file", {"path": "x"})
        assert raised.value.error.code == -32602
        assert not (await session.call_tool("list_directory", {})).is_error


async def test_locate_takes_query_as_its_question(sample: Path, cache: Path) -> None:
    # `git_log` takes `query`: an agent calling `locate` the same way means the question.
    async with connect(sample, cache) as session:
        asked = await session.call_tool("locate", {"question": "how are tokens refilled?"})
        aliased = await session.call_tool("locate", {"query": "how are tokens refilled?"})
        assert not aliased.is_error, text_of(aliased)
        assert text_of(aliased) == text_of(asked)


def test_an_unknown_tool_leaves_stderr_quiet(sample: Path, cache: Path) -> None:
    # Run as a user would (no COPILOT_LS_LOG): the error reply is the whole story.
    env = server_env(cache)
    del env["COPILOT_LS_LOG"]
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "quiet-test", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "write_file", "arguments": {"path": "x"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
    ]
    process = subprocess.Popen(
        [COPILOT_LS_BIN, "mcp", "--workspace", str(sample)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )
    assert process.stdin and process.stdout
    replies: dict[Any, dict[str, Any]] = {}
    for message in lines:
        process.stdin.write((json.dumps(message) + "\n").encode())
        process.stdin.flush()
        if "id" in message:
            # Each request answered before the next is sent: the order is the protocol's.
            while message["id"] not in replies:
                line = process.stdout.readline()
                assert line, "the server closed its output"
                reply = json.loads(line)
                if "id" in reply and "method" not in reply:
                    replies[reply["id"]] = reply
    assert replies[2]["error"]["code"] == -32602
    process.stdin.close()
    assert process.wait(timeout=60) == 0
    assert process.stderr
    stderr = process.stderr.read().decode()
    assert stderr == "", stderr


# The sandbox table of tests/sandbox.rs, for every MCP tool that takes a path; `abs:`
# marks a path made absolute under the temporary base.
HOSTILE: list[tuple[str, dict[str, Any], str]] = [
    ("read_file", {"path": "../outside/canary.txt"}, "path is outside the workspace"),
    ("read_file", {"path": "abs:outside/canary.txt"}, "path is outside the workspace"),
    ("read_file", {"path": "abs:repo-backup/canary.txt"}, "path is outside the workspace"),
    ("read_file", {"path": "src/../../outside/canary.txt"}, "path is outside the workspace"),
    ("read_file", {"path": "/etc/passwd"}, "path is outside the workspace"),
    ("read_file", {"path": "../../../../../../../../etc/passwd"}, "path is outside the workspace"),
    ("read_file", {"path": "link_canary.txt"}, "path is outside the workspace"),
    ("read_file", {"path": "link_out/canary.txt"}, "path is outside the workspace"),
    ("read_file", {"path": "src/lib.rs\u0000../../outside/canary.txt"}, "NUL"),
    ("read_file", {"path": ".env"}, "secret files"),
    ("read_file", {"path": ".env.production"}, "secret files"),
    ("read_file", {"path": "certs/server.pem"}, "secret files"),
    ("read_file", {"path": "tls.key"}, "secret files"),
    ("read_file", {"path": "id_rsa"}, "secret files"),
    ("read_file", {"path": "keys/id_ed25519.pub"}, "secret files"),
    ("read_file", {"path": ".git/config"}, ".git internals"),
    ("read_file", {"path": "src/../.git/HEAD"}, ".git internals"),
    ("read_file", {"path": "git_config_link"}, ".git internals"),
    ("read_file", {"path": "innocent.txt"}, "secret files"),
    ("list_directory", {"path": "../outside"}, "path is outside the workspace"),
    ("list_directory", {"path": "link_out"}, "path is outside the workspace"),
    ("list_directory", {"path": ".git"}, ".git internals"),
    ("list_directory", {"path": "abs:repo-backup"}, "path is outside the workspace"),
    ("search_code", {"pattern": "canary", "path": "link_out"}, "path is outside the workspace"),
    ("search_code", {"pattern": "canary", "path": "../outside"}, "path is outside the workspace"),
    ("search_code", {"pattern": "remote", "path": ".git"}, ".git internals"),
    ("search_code", {"pattern": "secret", "path": ".env"}, "secret files"),
    ("file_outline", {"path": "../outside/canary.txt"}, "path is outside the workspace"),
    ("file_outline", {"path": "link_canary.txt"}, "path is outside the workspace"),
    ("file_outline", {"path": ".env"}, "secret files"),
    ("find_references", {"name": "visible", "path": "../outside"}, "path is outside the workspace"),
    ("find_references", {"name": "visible", "path": "link_out"}, "path is outside the workspace"),
    ("find_references", {"name": "remote", "path": ".git"}, ".git internals"),
    ("find_references", {"name": "secret", "path": ".env"}, "secret files"),
    ("git_log", {"path": "../outside"}, "path is outside the workspace"),
    ("git_log", {"path": ".env"}, "secret files"),
    ("git_blame", {"path": "link_canary.txt"}, "path is outside the workspace"),
    ("git_blame", {"path": ".git/config"}, ".git internals"),
    ("git_diff", {"path": "../outside/canary.txt"}, "path is outside the workspace"),
    ("git_diff", {"path": "id_rsa"}, "secret files"),
]

# Calls that succeed but must not show anything outside or secret.
HOSTILE_LISTINGS: list[tuple[str, dict[str, Any], list[str]]] = [
    ("list_directory", {}, ["link_out", ".env", ".git", "id_rsa"]),
    ("search_code", {"pattern": "CANARY"}, [CANARY]),
    ("search_code", {"pattern": "C.N.RY", "regex": True}, [CANARY]),
    ("find_files", {"pattern": "**/*"}, ["canary", ".env", ".git/", "id_rsa"]),
    ("find_files", {"pattern": "../**"}, ["canary"]),
    ("find_references", {"name": "CANARY"}, [CANARY]),
    ("find_symbol", {"name": "canary"}, [CANARY]),
    ("locate", {"question": "canary secret remote url"}, [CANARY]),
]


async def test_hostile_paths_are_refused_and_the_canary_never_leaks(tmp_path: Path, cache: Path) -> None:
    base = tmp_path / "base"
    root = hostile_workspace(base)
    base = base.resolve()
    async with connect(root, cache) as session:
        failures = []
        for name, arguments, needle in HOSTILE:
            arguments = {
                k: (str(base / v[4:]) if isinstance(v, str) and v.startswith("abs:") else v)
                for k, v in arguments.items()
            }
            result = await session.call_tool(name, arguments)
            text = text_of(result)
            if not (result.is_error and text.startswith("Error: ") and needle in text) or CANARY in text:
                failures.append((name, arguments, text))
        for name, arguments, absent in HOSTILE_LISTINGS:
            result = await session.call_tool(name, arguments)
            shown = text_of(result) + repr(result.structured_content)
            if result.is_error or any(word in shown for word in absent):
                failures.append((name, arguments, shown))
        # The one inside file is found, through the same tools.
        found = await session.call_tool("find_references", {"name": "visible"})
        assert "src/lib.rs:2:" in text_of(found)
        assert not failures, failures


def git(root: Path, *args: str, day: int = 0) -> None:
    """`git ARGS` in `root` with a fixed author and date, no developer configuration."""
    date = f"{1_700_000_000 + day * 86_400} +0000"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(root.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Ada Lovelace",
        "GIT_AUTHOR_EMAIL": "ada@example.com",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_NAME": "Ada Lovelace",
        "GIT_COMMITTER_EMAIL": "ada@example.com",
        "GIT_COMMITTER_DATE": date,
    }
    subprocess.run(["git", "-c", "commit.gpgsign=false", *args], cwd=root, env=env, check=True, capture_output=True)


async def test_the_git_tools_give_commits_runs_and_a_diff(tmp_path: Path, cache: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "-c", "init.defaultBranch=main", "init", "-q")
    (root / "a.py").write_text("one = 1\ntwo = 2\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Start the module", day=1)
    (root / "a.py").write_text("one = 1\ntwo = 22\n")
    git(root, "commit", "-q", "-am", "Change two", day=2)
    # Uncommitted: a line added, a new file.
    (root / "a.py").write_text("one = 1\ntwo = 22\nthree = 3\n")
    (root / "b.py").write_text("b = 1\n")
    async with connect(root, cache) as session:
        tools = await tools_by_name(session)
        results = {}
        for name, arguments in [
            ("git_log", {"path": "a.py"}),
            ("git_blame", {"path": "a.py"}),
            ("git_diff", {}),
        ]:
            result = await session.call_tool(name, arguments)
            assert not result.is_error, (name, text_of(result))
            jsonschema.validate(result.structured_content, tools[name].output_schema)
            text = text_of(result)
            assert "ada@example.com" not in text + repr(result.structured_content)
            assert text == cli_tool(root, cache, name, arguments), (name, text)
            results[name] = result.structured_content
    commits = results["git_log"]["commits"]
    assert [c["subject"] for c in commits] == ["Change two", "Start the module"]
    assert commits[0]["date"] == "2023-11-16" and commits[0]["author"] == "Ada Lovelace"
    assert commits[0]["files"] == ["a.py"] and len(commits[0]["id"]) == 40
    runs = results["git_blame"]["runs"]
    assert [(r["startLine"], r["endLine"], r.get("subject")) for r in runs] == [
        (1, 1, "Start the module"),
        (2, 2, "Change two"),
        (3, 3, None),
    ]
    assert "id" not in runs[2] and runs[1]["id"] == commits[0]["id"]
    diff = results["git_diff"]
    assert diff["files"] == [{"path": "a.py", "status": "modified"}, {"path": "b.py", "status": "untracked"}]
    assert diff["diff"].startswith("--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,3 @@\n") and "+three = 3\n" in diff["diff"]


async def test_a_first_locate_before_the_history_is_read_says_so(tmp_path: Path, cache: Path) -> None:
    # Section 11 (issue 54): the files are waited for, the history is not. Its read is
    # held (COPILOT_LS_TEST_HISTORY_HOLD) so the call comes before it on any machine.
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "-c", "init.defaultBranch=main", "init", "-q")
    (root / "route.py").write_text("def zanzibar_route(parcel):\n    return parcel * 2\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Pick the zanzibar route by weight", day=1)
    env = server_env(cache, COPILOT_LS_TEST_HISTORY_HOLD=str(tmp_path / "gate"))
    async with connect(root, cache, env=env) as session:
        tools = await tools_by_name(session)
        result = await session.call_tool("locate", {"question": "where is the zanzibar route picked?"})
        assert not result.is_error, text_of(result)
        jsonschema.validate(result.structured_content, tools["locate"].output_schema)
        assert "route.py" in text_of(result)
        assert "history is still being read" in text_of(result), text_of(result)
        assert result.structured_content["history"] == {"complete": False, "commits": 0}


async def test_a_first_locate_does_not_wait_for_the_builds_merge(tmp_path: Path, cache: Path) -> None:
    # Issue 54: a first build's merge of its segments comes after the call waiting for the
    # files. The merge is held (COPILOT_LS_TEST_MERGE_HOLD, a gate never opened): a call
    # that waited for it would get a partial answer after the server's 60 s wait.
    root = tmp_path / "ws"
    for i in range(1_000):
        path = root / "src" / f"m{i % 20}" / f"helper_{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"def helper_{i}(x):\n    return x + {i}\n")
    (root / "src" / "route.py").write_text("def zanzibar_route(parcel):\n    return parcel * 2\n")
    env = server_env(cache, COPILOT_LS_TEST_MERGE_HOLD=str(tmp_path / "gate"))
    async with connect(root, cache, env=env) as session:
        result = await session.call_tool("locate", {"question": "where is the zanzibar route picked?"})
        assert not result.is_error, text_of(result)
        assert result.structured_content["complete"] is True, text_of(result)
        assert result.structured_content["places"][0]["path"] == "src/route.py", text_of(result)
