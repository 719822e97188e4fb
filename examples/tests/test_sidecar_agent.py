"""examples/python/sidecar_agent.py end to end: a scripted agent drives the
real `hookhost serve --stdio` (examples/hooks.toml, the Python example
hooks) through hookhost_sdk.host, and its transcript shows each hook's
decision.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from support import hookhost_bin

REPO = Path(__file__).resolve().parents[2]
AGENT = REPO / "examples" / "python" / "sidecar_agent.py"
AUDIT_LOG = Path("/tmp/hookhost-audit.log")  # AUDIT_LOG_FILE in examples/hooks.toml




def run_agent(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    if shutil.which("python3") is None:
        pytest.fail("examples/hooks.toml runs `python3`, which is not on PATH")
    # From an unrelated folder: the agent finds hooks.toml, and the SDK
    # through the symlink next to it, on its own.
    env = {"PATH": os.environ.get("PATH", ""), "HOOKHOST_BIN": hookhost_bin()}
    done = subprocess.run(
        [sys.executable, str(AGENT), *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


GUARD = "guard: rule `sudo` denies this command: sudo rm -rf /"


def test_each_hook_decides_its_part(tmp_path: Path) -> None:
    session = f"test-{uuid.uuid4().hex}"
    done = run_agent(tmp_path, "--json", "--session", session)
    records = [json.loads(line) for line in done.stdout.splitlines()]
    ls, cat, sudo, env, cat_again, curl = records
    # ls_human rewrote the call, and the rewritten call is the one that ran.
    assert ls["before_tool"] == "modify" and ls["ran"] == {"command": "ls -h"}
    assert ls["for_llm"] == "8B notes.md  42B .env"
    assert cat == {
        "turn": 1,
        "tool": "shell",
        "arguments": {"command": "cat notes.md"},
        "before_tool": "continue",
        "approved": True,
        "ran": {"command": "cat notes.md"},
        "after_tool": "continue",
        "for_llm": "buy milk",
    }
    # The guard denied sudo: nothing ran, nobody was asked to approve.
    assert sudo == {
        "turn": 2,
        "tool": "shell",
        "arguments": {"command": "sudo rm -rf /"},
        "before_tool": "deny_tool",
        "reason": GUARD,
    }
    # redact masked the key before the model (and the cache) saw it.
    assert (env["after_tool"], env["for_llm"]) == ("modify", "OPENAI_API_KEY=[REDACTED]")
    # The cache answered the repeated read without running it.
    assert cat_again == {
        "turn": 3,
        "tool": "shell",
        "arguments": {"command": "cat notes.md"},
        "before_tool": "respond",
        "for_llm": "buy milk",
    }
    # approval refused curl, which is not on examples/approval_allowlist.toml.
    assert (curl["before_tool"], curl["approved"], curl["reason"]) == (
        "continue",
        False,
        "approval: tool `curl` is not on the allowlist",
    )
    assert "ran" not in curl

    # audit_log recorded this session's agent.* events, in order, with the
    # id and time hookhost filled in.
    mine = [e for e in map(_json, AUDIT_LOG.read_text(encoding="utf-8").splitlines()) if _session(e) == session]
    turn = ["agent.turn.start"]
    ran = ["agent.tool.exec_start", "agent.tool.exec_end"]
    end = ["agent.turn.end"]
    assert [e["kind"] for e in mine] == turn + ran * 2 + end + turn + end + turn + ran + end
    assert all(e["id"] and e["time"] and e["source"] == "agent" for e in mine)


def _json(line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError:  # the file is shared; not every line need be ours
        return None


def _session(event: Any) -> Any:
    return event.get("scope", {}).get("session_key") if isinstance(event, dict) else None


def test_the_transcript_reads_well(tmp_path: Path) -> None:
    out = run_agent(tmp_path).stdout
    assert "hooks rewrote it: {\"command\": \"ls -h\"}" in out
    assert f"deny_tool: {GUARD}" in out
    assert "'OPENAI_API_KEY=[REDACTED]' (masked by a hook)" in out
    assert "answered by a hook without running: 'buy milk'" in out
    assert "not approved: approval: tool `curl` is not on the allowlist" in out
    assert "sk-live" not in out
    assert out.rstrip().endswith("hookhost exited with status 0")
