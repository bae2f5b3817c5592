"""acpx (npm `acpx`, a real third-party ACP client, installed by run.sh) driving the real
`copilot-ls acp` against the fake provider: sessions in two directories, prompts, a
follow-up in a new agent process through `session/load`, cancel, and an edit allowed
and denied. HOME is a temporary folder holding acpx's config and session records."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import COPILOT_LS_BIN, TIMEOUT, FakeProvider
from test_acp import LIB_AFTER, LIB_BEFORE, turn

ACPX = os.environ.get("ACPX_BIN", "")
NODE_DIR = os.environ.get("ACPX_NODE_DIR", "")



class Acpx:
    """acpx with its own HOME, configured to start copilot-ls against `fake`."""

    def __init__(self, home: Path, fake: FakeProvider, cache: Path) -> None:
        # run.sh installs acpx from npm; without it these tests fail, never skip.
        assert ACPX and NODE_DIR, "ACPX_BIN and ACPX_NODE_DIR are set by run.sh"
        self.home = home
        (home / ".acpx").mkdir(parents=True)
        (home / ".acpx" / "config.json").write_text(json.dumps({
            "agents": {"copilot-ls": {"command": f"{COPILOT_LS_BIN} acp"}}}))
        self.env = {
            "HOME": str(home),
            "PATH": f"{NODE_DIR}:{os.environ.get('PATH', '')}",
            "COPILOT_LS_PROVIDER": "openai",
            "COPILOT_LS_BASE_URL": fake.url,
            "COPILOT_LS_MODEL": "fake-model",
            "OPENAI_API_KEY": "sk-test-not-a-real-key",
            "COPILOT_LS_CACHE_DIR": str(cache),
            "COPILOT_LS_LOG": "info",
        }
        self.started: list[subprocess.Popen] = []

    def command(self, cwd: Path, *args: str) -> list[str]:
        # A short queue-owner TTL: each prompt below may need its own agent process.
        return [ACPX, "--cwd", str(cwd), "--ttl", "1", *args]

    def run(self, cwd: Path, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(self.command(cwd, *args), cwd=cwd, env=self.env,
                              capture_output=True, text=True, timeout=2 * TIMEOUT)

    def start(self, cwd: Path, *args: str) -> subprocess.Popen:
        process = subprocess.Popen(self.command(cwd, *args), cwd=cwd, env=self.env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True)
        self.started.append(process)
        return process

    def processes(self) -> list[int]:
        """What acpx left running (its queue owner, the copilot-ls agent it started):
        every process with this HOME, found by its environment."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                environ = (entry / "environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if f"HOME={self.home}".encode() in environ:
                found.append(int(entry.name))
        return found

    def wait_for_no_agent(self) -> None:
        """Until acpx's queue owner has let its agent go and ended (its TTL is 1 s): a
        prompt sent while it shuts down fails with "Queue owner is shutting down"."""
        deadline = time.monotonic() + TIMEOUT
        while self.processes():
            assert time.monotonic() < deadline, "acpx's queue owner or agent did not end"
            time.sleep(0.05)

    def stop(self) -> None:
        for process in self.started:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@pytest.fixture
def acpx_env(fake_dir):
    home = Path(tempfile.mkdtemp(prefix="copilot-ls-acpx-home-"))
    cache = Path(tempfile.mkdtemp(prefix="copilot-ls-acpx-cache-"))
    workspaces = []
    for name in ("one", "two"):
        directory = Path(tempfile.mkdtemp(prefix=f"copilot-ls-acpx-{name}-")).resolve()
        (directory / "src").mkdir()
        (directory / "src" / "lib.rs").write_text(LIB_BEFORE)
        workspaces.append(directory)
    yield home, cache, workspaces
    for directory in (home, cache, *workspaces):
        shutil.rmtree(directory, ignore_errors=True)


def sessions_of(home: Path) -> list[dict]:
    records = []
    for path in sorted((home / ".acpx" / "sessions").glob("*.json")):
        records.append(json.loads(path.read_text()))
    return records


def test_acpx_sessions_prompts_follow_up_through_load_and_cancel(acpx_env, fake_dir):
    home, cache, (one, two) = acpx_env
    fake = FakeProvider([
        turn("Answer one."),
        turn("Answer two."),
        turn("Follow-up answer."),
        {"hang": True},
        turn("After the cancel."),
    ], fake_dir)
    acpx = Acpx(home, fake, cache)
    try:
        created = [acpx.run(one, "copilot-ls", "sessions", "new"),
                   acpx.run(two, "copilot-ls", "sessions", "new")]
        for result in created:
            assert result.returncode == 0, result.stderr
        records = sessions_of(home)
        ids = {r["acp_session_id"] for r in records}
        assert len(records) == 2 and len(ids) == 2, records
        first = acpx.run(one, "copilot-ls", "What does add do?")
        assert first.returncode == 0, first.stderr
        assert "Answer one." in first.stdout, first.stdout
        second = acpx.run(two, "copilot-ls", "What is in this folder?")
        assert "Answer two." in second.stdout, second.stdout
        # The prompts continued the sessions `sessions new` made (loaded, not replaced).
        assert {r["acp_session_id"] for r in sessions_of(home)} == ids
        # A new agent process for the follow-up: it loads the session.
        acpx.wait_for_no_agent()
        follow = acpx.run(one, "copilot-ls", "Only two numbers?")
        assert follow.returncode == 0, follow.stderr
        assert "Follow-up answer." in follow.stdout, follow.stdout
        assert "No acpx session found" not in follow.stdout + follow.stderr
        contents = [str(m.get("content")) for m in fake.messages(2)]
        assert any("What does add do?" in c for c in contents), contents
        assert any("Answer one." in c for c in contents), contents
        assert not any("What is in this folder?" in c for c in contents), contents
        # The agent's own list shows both directories' sessions.
        listed = acpx.run(one, "copilot-ls", "sessions", "list")
        assert listed.returncode == 0, listed.stderr
        one_id = next(r["acp_session_id"] for r in sessions_of(home) if r["cwd"] == str(one))
        assert one_id in listed.stdout and "What does add do?" in listed.stdout, listed.stdout
        # Cancel a prompt that hangs at the provider. `sessions list` asked an agent, whose
        # queue owner refuses new prompts while its TTL runs out: wait until it has ended.
        acpx.wait_for_no_agent()
        slow = acpx.start(one, "copilot-ls", "A slow question")
        fake_deadline = time.monotonic() + TIMEOUT
        while len(fake.requests()) < 4:
            if slow.poll() is not None:
                out, err = slow.communicate()
                pytest.fail(f"the slow prompt ended before reaching the model: {out}{err}")
            assert time.monotonic() < fake_deadline, "the slow prompt never reached the model"
            time.sleep(0.05)
        cancelled = acpx.run(one, "copilot-ls", "cancel")
        assert cancelled.returncode == 0, cancelled.stderr
        out, err = slow.communicate(timeout=TIMEOUT)
        assert "cancelled" in (out + err).lower(), out + err
        # The cancelled prompt's agent stays until the queue owner's TTL ends it.
        acpx.wait_for_no_agent()
        after = acpx.run(one, "copilot-ls", "Are you still there?")
        assert "After the cancel." in after.stdout, after.stdout
    finally:
        acpx.stop()
        fake.stop()


@pytest.mark.parametrize("policy, expected, word", [("--approve-all", LIB_AFTER, "applied"),
                                                    ("--deny-all", LIB_BEFORE, "rejected")])
def test_acpx_edit_allowed_and_denied(acpx_env, fake_dir, policy, expected, word):
    home, cache, (one, _) = acpx_env
    fake = FakeProvider([
        turn("", ("edit-1", "propose_edit", {"path": "src/lib.rs", "old_text": "a - b",
                                             "new_text": "a + b", "title": "Fix add"})),
        turn("Finished."),
    ], fake_dir)
    acpx = Acpx(home, fake, cache)
    try:
        assert acpx.run(one, "copilot-ls", "sessions", "new").returncode == 0
        result = acpx.run(one, policy, "copilot-ls", "Fix add")
        assert "Finished." in result.stdout, result.stdout + result.stderr
    finally:
        acpx.stop()
        fake.stop()
    assert (one / "src" / "lib.rs").read_text() == expected
    results = [m["content"] for m in fake.messages(1) if m["role"] == "tool"]
    assert results[-1].startswith(f"{word}:"), results
