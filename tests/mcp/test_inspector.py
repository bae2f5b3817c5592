"""The MCP Inspector's command-line mode (npm `@modelcontextprotocol/inspector`,
`--cli`) as a client of the real binary, in both protocol eras: tools listed with no
schema portability problem (`--strict`), a tool called, the resources listed."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import COPILOT_LS_BIN, TIMEOUT, server_env

INSPECTOR = os.environ.get("MCP_INSPECTOR_BIN", "")


def inspector(workspace: Path, cache: Path, home: Path, *args: str) -> tuple[int, str, str]:
    assert INSPECTOR, "MCP_INSPECTOR_BIN is not set (tests/mcp/run.sh installs the Inspector)"
    env = dict(os.environ)
    # The Inspector keeps a catalog under $HOME: a temporary one.
    env["HOME"] = str(home)
    env["MCP_CATALOG_PATH"] = str(home / "mcp.json")
    done = subprocess.run(
        [
            INSPECTOR,
            "--cli",
            "--format",
            "json",
            "--quiet",
            *args,
            *[f"-e{key}={value}" for key, value in server_env(cache).items()],
            "--",
            COPILOT_LS_BIN,
            "mcp",
            "--workspace",
            str(workspace),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT * 2,
    )
    return done.returncode, done.stdout, done.stderr


def payload(out: str) -> dict[str, Any]:
    """The JSON the Inspector prints: the method's result, under `result`."""
    value = json.loads(out)
    return value.get("result", value)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_inspector_lists_the_tools_strictly(sample: Path, cache: Path, home: Path, era: str) -> None:
    code, out, err = inspector(sample, cache, home, "--protocol-era", era, "--method", "tools/list", "--strict")
    assert code == 0, (out, err)
    listed: dict[str, Any] = payload(out)
    names = [tool["name"] for tool in listed["tools"]]
    assert names == [
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
    for tool in listed["tools"]:
        assert tool["annotations"]["readOnlyHint"] is True
        assert tool["outputSchema"]["type"] == "object"


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_inspector_calls_a_tool(sample: Path, cache: Path, home: Path, era: str) -> None:
    code, out, err = inspector(
        sample,
        cache,
        home,
        "--protocol-era",
        era,
        "--method",
        "tools/call",
        "--tool-name",
        "find_references",
        "--tool-args-json",
        json.dumps({"name": "refill"}),
    )
    assert code == 0, (out, err)
    result = payload(out)
    assert not result.get("isError")
    places = result["structuredContent"]["places"]
    assert any(place["path"] == "src/rate_limit.rs" for place in places), result
    assert "src/rate_limit.rs:" in result["content"][0]["text"]


def test_the_inspector_sees_an_error_result_and_the_resources(sample: Path, cache: Path, home: Path) -> None:
    code, out, err = inspector(
        sample,
        cache,
        home,
        "--method",
        "tools/call",
        "--tool-name",
        "search_code",
        "--tool-args-json",
        json.dumps({"pattern": "(", "regex": True}),
    )
    text = out + err
    assert "invalid regex" in text, (code, out, err)
    code, out, err = inspector(sample, cache, home, "--method", "resources/list")
    assert code == 0, (out, err)
    assert [r["name"] for r in payload(out)["resources"]] == ["AGENTS.md"]
