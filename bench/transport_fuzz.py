#!/usr/bin/env python3
"""Fuzz-style driver for the transport: sends N malformed inputs, each followed by a valid
request, to a copilot-ls binary over stdio and counts how many ended the process, how
many left the valid request unanswered, and how many were answered.

    python3 bench/transport_fuzz.py target/debug/copilot-ls [N] [--seed S]

The inputs are the classes of PROTOCOL.md section 6 (lower-case headers, Content-Type
variants, batches, invalid JSON or UTF-8, ids that are not ids, bad Content-Length,
empty frames, garbage between frames, `$/` requests). Deterministic for a seed. When
the process ends it is started again, so every input is tried."""

import json
import os
import random
import select
import subprocess
import sys
import time

WAIT = 2.0  # seconds for the valid request's reply


def frame(body: bytes, header: str = "Content-Length") -> bytes:
    return f"{header}: {len(body)}\r\n\r\n".encode() + body


def msg(obj) -> bytes:
    return json.dumps(obj).encode()


def malformed(rng: random.Random, i: int):
    """One malformed input and its class name."""
    kinds = [
        "lowercase-header", "upper-header", "content-type-no-charset", "content-type-utf8-upper",
        "content-type-utf8", "batch", "invalid-json", "invalid-utf8", "id-true", "id-float",
        "id-object", "id-array", "bad-content-length", "missing-content-length",
        "short-content-length", "zero-length", "garbage", "not-an-object", "wrong-version",
        "dollar-request", "method-not-string", "huge-id",
    ]
    kind = kinds[i % len(kinds)]
    ping = msg({"jsonrpc": "2.0", "method": "fuzz/notification", "params": {"n": i}})
    if kind == "lowercase-header":
        return kind, frame(ping, "content-length")
    if kind == "upper-header":
        return kind, frame(ping, "CONTENT-LENGTH")
    if kind == "content-type-no-charset":
        return kind, b"Content-Type: application/vscode-jsonrpc\r\n" + frame(ping)
    if kind == "content-type-utf8-upper":
        return kind, frame(ping) .replace(b"\r\n\r\n", b"\r\nContent-Type: application/vscode-jsonrpc; charset=UTF-8\r\n\r\n", 1)
    if kind == "content-type-utf8":
        return kind, b"Content-Type: application/vscode-jsonrpc; charset=utf8\r\n" + frame(ping)
    if kind == "batch":
        return kind, frame(msg([{"jsonrpc": "2.0", "id": 10_000_000 + i, "method": "fuzz/x"}]))
    if kind == "invalid-json":
        text = json.dumps({"jsonrpc": "2.0", "id": i, "method": "fuzz/x", "params": {"a": [1, 2]}})
        cut = rng.randrange(1, len(text) - 1)
        return kind, frame(text[:cut].encode())
    if kind == "invalid-utf8":
        return kind, frame(b'{"jsonrpc":"2.0","method":"fuzz/x","params":"' + bytes([0xff, 0xfe, rng.randrange(0x80, 0xff)]) + b'"}')
    if kind == "id-true":
        return kind, frame(msg({"jsonrpc": "2.0", "id": True, "method": "fuzz/x"}))
    if kind == "id-float":
        return kind, frame(msg({"jsonrpc": "2.0", "id": 1.5, "method": "fuzz/x"}))
    if kind == "id-object":
        return kind, frame(msg({"jsonrpc": "2.0", "id": {"n": i}, "method": "fuzz/x"}))
    if kind == "id-array":
        return kind, frame(msg({"jsonrpc": "2.0", "id": [i], "method": "fuzz/x"}))
    if kind == "bad-content-length":
        value = rng.choice(["abc", "-5", "12x", "", "1e3", "99999999999999999999999"])
        return kind, f"Content-Length: {value}\r\n\r\n".encode() + ping
    if kind == "missing-content-length":
        return kind, b"X-Thing: 1\r\n\r\n" + ping
    if kind == "short-content-length":
        body = ping
        return kind, f"Content-Length: {rng.randrange(1, len(body))}\r\n\r\n".encode() + body
    if kind == "zero-length":
        return kind, b"Content-Length: 0\r\n\r\n"
    if kind == "garbage":
        junk = bytes(rng.choice(b"abcxyz{}[]:;\r\n\t 0123456789\xff") for _ in range(rng.randrange(1, 60)))
        return kind, junk + b"\r\n\r\n"
    if kind == "not-an-object":
        return kind, frame(rng.choice([b"42", b'"text"', b"null", b"true"]))
    if kind == "wrong-version":
        return kind, frame(msg({"jsonrpc": "1.0", "id": i, "method": "fuzz/x"}))
    if kind == "dollar-request":
        return kind, frame(msg({"jsonrpc": "2.0", "id": 20_000_000 + i, "method": rng.choice(["$/unknown", "$/setTrace"]), "params": {"value": "off"}}))
    if kind == "method-not-string":
        return kind, frame(msg({"jsonrpc": "2.0", "id": i, "method": 7}))
    if kind == "huge-id":
        return kind, frame(b'{"jsonrpc":"2.0","id":18446744073709551616,"method":"fuzz/x"}')
    raise AssertionError(kind)


class Server:
    def __init__(self, binary, cwd):
        env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", ""), "COPILOT_LS_PROVIDER": "none"}
        self.proc = subprocess.Popen([binary], cwd=cwd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.buf = b""
        self.id = 0
        uri = "file://" + os.path.abspath(cwd)
        self.request("initialize", {"processId": None, "rootUri": uri, "capabilities": {}})
        self.send(frame(msg({"jsonrpc": "2.0", "method": "initialized", "params": {}})))

    def send(self, data: bytes) -> bool:
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def read_message(self, deadline):
        """The next message, None on timeout, or 'eof'."""
        while True:
            head, sep, rest = self.buf.partition(b"\r\n\r\n")
            if sep:
                length = int(head.split(b":")[1])
                if len(rest) >= length:
                    self.buf = rest[length:]
                    return json.loads(rest[:length])
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if not ready:
                return None
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                return "eof"
            self.buf += chunk

    def request(self, method, params):
        """Sends a request: 'answered', 'unanswered' or 'ended'."""
        self.id += 1
        if not self.send(frame(msg({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}))):
            return "ended"
        deadline = time.monotonic() + WAIT
        while True:
            message = self.read_message(deadline)
            if message == "eof":
                return "ended"
            if message is None:
                return "ended" if self.proc.poll() is not None else "unanswered"
            if isinstance(message, dict) and message.get("id") == self.id and "method" not in message:
                return "answered"

    def close(self):
        try:
            self.proc.kill()
        except OSError:
            pass
        self.proc.wait()


def main():
    args = [a for a in sys.argv[1:]]
    seed = 14
    if "--seed" in args:
        at = args.index("--seed")
        seed = int(args[at + 1])
        del args[at:at + 2]
    binary = os.path.abspath(args[0])
    count = int(args[1]) if len(args) > 1 else 2754
    cwd = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "workspace")
    rng = random.Random(seed)
    totals = {"answered": 0, "unanswered": 0, "ended": 0}
    by_kind = {}
    server = Server(binary, cwd)
    for i in range(count):
        kind, data = malformed(rng, i)
        server.send(data)
        outcome = server.request("fuzz/ping", {"n": i})
        totals[outcome] += 1
        by_kind.setdefault(kind, {"answered": 0, "unanswered": 0, "ended": 0})[outcome] += 1
        if outcome != "answered":
            server.close()
            server = Server(binary, cwd)
    server.close()
    print(json.dumps({"binary": binary, "inputs": count, "seed": seed, **totals}))
    for kind, counts in sorted(by_kind.items()):
        print(f"  {kind:26} {counts}")


if __name__ == "__main__":
    main()
