"""The README's network example end to end: the Python example guard served
with `--listen`, wired as `[hooks.remotes]` over WebSocket and over HTTP,
asked through the real `hookhost call`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GUARD = REPO / "examples" / "python" / "guard.py"


def hookhost_bin() -> str:
    configured = os.environ.get("HOOKHOST_BIN")
    if configured:
        return configured
    built = REPO / "target" / "debug" / "hookhost"
    if not built.exists():
        pytest.fail(f"no hookhost binary at {built}: run `cargo build -p hookhost` (or set HOOKHOST_BIN)")
    return str(built)


@pytest.fixture
def guard_address() -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, str(GUARD), "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("listening on ws://"), line
        yield line.removeprefix("listening on ws://")
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0


def call(tmp_path: Path, url: str, command: str) -> dict[str, object]:
    config = tmp_path / "hooks.toml"
    config.write_text(
        f'[hooks.remotes.guard]\nurl = "{url}"\nintercept = ["before_tool"]\non_error = "deny"\n',
        encoding="utf-8",
    )
    done = subprocess.run(
        [
            hookhost_bin(),
            "call",
            "-c",
            str(config),
            "before_tool",
            "--input",
            json.dumps({"tool": "shell", "arguments": {"command": command}}),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize("scheme", ["ws", "http"])
def test_a_python_hook_served_over_the_network_decides(tmp_path: Path, guard_address: str, scheme: str) -> None:
    url = f"{scheme}://{guard_address}"
    assert call(tmp_path, url, "sudo rm -rf /") == {
        "action": "deny_tool",
        "reason": "guard: rule `sudo` denies this command: sudo rm -rf /",
    }
    assert call(tmp_path, url, "ls") == {"action": "continue"}


def test_a_remote_that_is_down_is_decided_by_its_policy(tmp_path: Path) -> None:
    # Nothing listens on port 9 (discard) on loopback in CI.
    result = call(tmp_path, "ws://127.0.0.1:9", "ls")
    assert result["action"] == "deny_tool"
    assert "hook `guard` failed (on_error = deny)" in str(result["reason"])
