"""A stdio MCP server that misbehaves on purpose, for the agent's failure handling.

`python fake_mcp_server.py MODE`: `hang` never answers `initialize`; `crash` serves one
tool, `boom`, and exits when it is called.
"""

import json
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main():
    mode = sys.argv[1]
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        if mode == "hang":
            continue
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake", "version": "1"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": [{
                "name": "boom", "description": "Exits when called.",
                "inputSchema": {"type": "object", "properties": {}}}]}})
        elif method == "tools/call":
            sys.exit(3)
        elif "id" in message and method is not None:
            send({"jsonrpc": "2.0", "id": message["id"], "result": {}})


if __name__ == "__main__":
    main()
