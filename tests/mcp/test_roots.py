"""Several roots over MCP (PROTOCOL.md section 10, "Several roots"): every root of the
client's `roots/list` is a root of the workspace, refreshed on
`notifications/roots/list_changed`, and `--workspace` may be given more than once.
Every path is `<root name>/<path>`; `list_directory` of "" lists the roots."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client

from conftest import COPILOT_LS_BIN, TIMEOUT, connect, server_env

pytestmark = pytest.mark.anyio


def text_of(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


def folders(tmp_path: Path) -> dict[str, Path]:
    api = tmp_path / "api"
    (api / "src").mkdir(parents=True)
    (api / "src" / "orders.py").write_text(
        "def place_order(cart):\n    \"\"\"Places an order for everything in the cart.\"\"\"\n    return len(cart)\n"
    )
    web = tmp_path / "web"
    (web / "src").mkdir(parents=True)
    (web / "src" / "checkout.ts").write_text(
        "export function submitCheckout(): number {\n  return placeOrderRequest();\n}\n"
    )
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.go").write_text("package docs\n\nfunc RenderGuide() {}\n")
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    return {"api": api, "web": web, "docs": docs, "cwd": elsewhere}


async def test_every_root_of_the_client_is_a_root_and_follows_list_changed(tmp_path: Path, cache: Path) -> None:
    dirs = folders(tmp_path)
    current = {"roots": [dirs["api"], dirs["web"]]}

    async def roots(_context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(
            roots=[types.Root(uri=path.as_uri(), name=path.name) for path in current["roots"]]
        )

    async with connect(None, cache, cwd=dirs["cwd"], roots=roots) as session:
        assert text_of(await session.call_tool("list_directory", {})) == "(the workspace's 2 roots)\napi/\nweb/\n"
        found = text_of(await session.call_tool("find_symbol", {"name": "submitCheckout"}))
        assert found.startswith("web/src/checkout.ts:1:"), found
        located = await session.call_tool("locate", {"question": "where is an order placed for the cart"})
        assert not located.is_error
        assert "api/src/orders.py" in text_of(located).splitlines()[0], text_of(located)
        places = (located.structured_content or {}).get("places", [])
        assert places and places[0]["path"] == "api/src/orders.py", places
        read = await session.call_tool("read_file", {"path": "api/src/orders.py", "start_line": 1, "end_line": 1})
        assert text_of(read).startswith("1\tdef place_order"), text_of(read)
        # A path without its root's name, or between the roots, is refused.
        for path in ["src/orders.py", str(tmp_path / "cwd"), "api/../web/src/checkout.ts"]:
            refused = await session.call_tool("read_file", {"path": path})
            assert refused.is_error, path

        # One root removed, another added.
        current["roots"] = [dirs["web"], dirs["docs"]]
        await session.send_roots_list_changed()
        with anyio.fail_after(TIMEOUT):
            while "docs/" not in text_of(await session.call_tool("list_directory", {})):
                await anyio.sleep(0.05)
        assert text_of(await session.call_tool("list_directory", {})) == "(the workspace's 2 roots)\nweb/\ndocs/\n"
        found = text_of(await session.call_tool("find_symbol", {"name": "RenderGuide"}))
        assert found.startswith("docs/guide.go:3:"), found
        gone = await session.call_tool("read_file", {"path": "api/src/orders.py"})
        assert gone.is_error

        # Back to one root: paths are the root's own again.
        current["roots"] = [dirs["docs"]]
        await session.send_roots_list_changed()
        with anyio.fail_after(TIMEOUT):
            while text_of(await session.call_tool("list_directory", {})) != "guide.go\n":
                await anyio.sleep(0.05)


async def test_workspace_may_be_given_more_than_once(tmp_path: Path, cache: Path) -> None:
    dirs = folders(tmp_path)
    done = subprocess.run(
        [COPILOT_LS_BIN, "mcp", "--workspace", str(dirs["api"]), "--workspace", str(tmp_path / "missing")],
        env=server_env(cache),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert "cannot use" in done.stderr and "missing" in done.stderr

    async def no_roots(_context: Any) -> types.ListRootsResult:
        raise AssertionError("the flags fix the roots: roots/list is not asked")

    args = ["mcp"]
    for path in [dirs["api"], dirs["web"]]:
        args += ["--workspace", str(path)]
    params = StdioServerParameters(command=COPILOT_LS_BIN, args=args, env=server_env(cache))
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=TIMEOUT, list_roots_callback=no_roots) as session:
                await session.initialize()
                listing = text_of(await session.call_tool("list_directory", {}))
                assert listing == "(the workspace's 2 roots)\napi/\nweb/\n", listing
                uses = text_of(await session.call_tool("search_code", {"pattern": "placeOrder|place_order", "regex": True}))
                assert "api/src/orders.py:1:" in uses and "web/src/checkout.ts:2:" in uses, uses
