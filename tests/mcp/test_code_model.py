"""`find_related` under the official MCP Python SDK, with a code model: none ships, so the
test writes one in train/'s artifact format (8 dimensions, vectors made to order over
the terms `copilot-ls dev terms` makes of chosen words) and names it with
COPILOT_LS_CODE_MODEL. Listed after file_outline, called with its result validated
against its outputSchema, the same text as `copilot-ls tool`, and the sandbox's paths
refused."""

from __future__ import annotations

import json
import struct
import subprocess
from pathlib import Path

import jsonschema
import pytest

from conftest import COPILOT_LS_BIN, connect, server_env

pytestmark = pytest.mark.anyio


def terms_of(words: list[str]) -> list[str]:
    done = subprocess.run(
        [COPILOT_LS_BIN, "dev", "terms"],
        input="".join(json.dumps(w) + "\n" for w in words),
        capture_output=True,
        text=True,
        check=True,
    )
    return sorted({t for line in done.stdout.splitlines() for t in json.loads(line)})


def write_model(path: Path) -> None:
    """Token-bucket words one way, configuration words another."""
    near = terms_of(["refill", "tokens", "bucket", "rate", "limit", "acquire", "capacity", "elapsed"])
    far = [t for t in terms_of(["config", "load", "parse", "path", "file", "settings"]) if t not in near]
    rows = [(t, [127, 10, 0, 0, 0, 0, 0, 0]) for t in near] + [(t, [0, 127, 10, 0, 0, 0, 0, 0]) for t in far]
    header = json.dumps({"dim": 8, "vocab": len(rows), "towers": 1, "max_terms": 256}).encode()
    out = b"CLSEMB01" + struct.pack("<I", len(header)) + header
    for term, _ in rows:
        out += bytes([len(term)]) + term.encode()
    out += struct.pack(f"<{len(rows)}f", *([1.0] * len(rows)))
    out += struct.pack(f"<{len(rows)}f", *([1 / 127] * len(rows)))
    for _, row in rows:
        out += struct.pack("<8b", *row)
    path.write_bytes(out)


async def test_find_related_is_offered_with_a_model_and_answers_with_places(sample: Path, cache: Path) -> None:
    model = cache / "code-embed.bin"
    write_model(model)
    env = server_env(cache, COPILOT_LS_CODE_MODEL=str(model))
    async with connect(sample, cache, env=env) as session:
        listed = await session.list_tools()
        names = [tool.name for tool in listed.tools]
        assert names.index("find_related") == names.index("file_outline") + 1, names
        tool = next(t for t in listed.tools if t.name == "find_related")
        assert tool.annotations.read_only_hint is True
        arguments = {"path": "src/rate_limit.rs", "line": 36}
        result = await session.call_tool("find_related", arguments)
        text = "".join(block.text for block in result.content if block.type == "text")
        assert not result.is_error, text
        assert text.startswith("src/rate_limit.rs:35: method TokenBucket::refill"), text
        jsonschema.validate(result.structured_content, tool.output_schema)
        for place in result.structured_content["places"]:
            assert (sample / place["path"]).is_file(), place
        done = subprocess.run(
            [COPILOT_LS_BIN, "tool", "find_related", json.dumps(arguments), "--workspace", str(sample)],
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.stdout == text
        for arguments, needle in [
            ({"path": "../outside/canary.txt", "line": 1}, "outside the workspace"),
            ({"path": ".env", "line": 1}, "secret files"),
        ]:
            refused = await session.call_tool("find_related", arguments)
            message = "".join(block.text for block in refused.content if block.type == "text")
            assert refused.is_error and needle in message, (arguments, message)


async def test_without_a_model_find_related_is_not_listed(sample: Path, cache: Path) -> None:
    async with connect(sample, cache) as session:
        names = [tool.name for tool in (await session.list_tools()).tools]
        assert "find_related" not in names
