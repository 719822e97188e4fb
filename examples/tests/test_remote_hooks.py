"""The README's network example end to end: the Python example guard served
with `--listen`, wired as `[hooks.remotes]` over WebSocket and over HTTP,
asked through the real `hookhost call`; and both SDKs' guards served with
`--token-file`, reached by a host whose remote `headers` carry the token.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import hookhost_bin

REPO = Path(__file__).resolve().parents[2]
GUARD = REPO / "examples" / "python" / "guard.py"




@contextlib.contextmanager
def served(argv: list[str]) -> Iterator[str]:
    """Run a hook with ``--listen 127.0.0.1:0`` among ``argv``; yield the address it printed."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("listening on ws://"), line
        yield line.removeprefix("listening on ws://")
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0


@pytest.fixture
def guard_address() -> Iterator[str]:
    with served([sys.executable, str(GUARD), "--listen", "127.0.0.1:0"]) as address:
        yield address


def call(
    tmp_path: Path, url: str, command: str, *, headers: str = "", env: dict[str, str] | None = None
) -> dict[str, object]:
    config = tmp_path / "hooks.toml"
    config.write_text(
        f'[hooks.remotes.guard]\nurl = "{url}"\nintercept = ["before_tool"]\non_error = "deny"\n{headers}',
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
        env=None if env is None else {**os.environ, **env},
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


TOKEN = "e2e-token-0123456789"
HEADERS = 'headers = { Authorization = "Bearer ${env:HOOK_TOKEN}" }\n'
DENIED_BY_POLICY = "hook `guard` failed (on_error = deny)"


def rust_guard() -> str:
    built = REPO / "target" / "debug" / "guard"
    if not built.exists():
        pytest.fail(f"no Rust guard at {built}: run `cargo build -p hookhost-examples`")
    return str(built)


@pytest.fixture(params=["python", "rust"])
def guard_with_token(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    token_file = tmp_path / "guard.token"
    token_file.write_text(TOKEN + "\n", encoding="utf-8")
    command = [sys.executable, str(GUARD)] if request.param == "python" else [rust_guard()]
    with served([*command, "--listen", "127.0.0.1:0", "--token-file", str(token_file)]) as address:
        yield address


@pytest.mark.parametrize("scheme", ["ws", "http"])
def test_a_hook_with_a_token_answers_only_a_host_that_sends_it(
    tmp_path: Path, guard_with_token: str, scheme: str
) -> None:
    url = f"{scheme}://{guard_with_token}"
    sudo = "sudo rm -rf /"
    # The remote's headers carry the token, read from hookhost's environment.
    assert call(tmp_path, url, sudo, headers=HEADERS, env={"HOOK_TOKEN": TOKEN}) == {
        "action": "deny_tool",
        "reason": "guard: rule `sudo` denies this command: sudo rm -rf /",
    }
    assert call(tmp_path, url, "ls", headers=HEADERS, env={"HOOK_TOKEN": TOKEN}) == {"action": "continue"}
    # Without it, or with a wrong one, the hook refuses the host (401) and
    # the host's policy answers: on_error = "deny" even for a harmless ls.
    for headers, env in (("", None), (HEADERS, {"HOOK_TOKEN": "wrong"})):
        result = call(tmp_path, url, "ls", headers=headers, env=env)
        assert result["action"] == "deny_tool" and DENIED_BY_POLICY in str(result["reason"]), result
