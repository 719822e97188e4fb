"""The README's quickstart, its three lines run as written by a Claude Code
user who has a hook of their own, with npm pointed at the local registry.
Then the real Claude Code (pinned in cli/tests/agents, offline against a
fake model API) runs a session whose model asks for `rm -rf build`: the
user's hook, adopted and run by the daemon, must still refuse it, with its
own reason reaching the model. The PreToolUse command install wrote is
also run alone as Claude Code runs it (`sh -c`, the event on stdin), for a
call no hook decides."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fake_claude_api import FakeClaudeApi
from install_support import REPO, NpmRegistry, clean_env

#: The pinned Claude Code the Rust tests drive too (`npm ci --prefix cli/tests/agents`).
CLAUDE = REPO / "cli" / "tests" / "agents" / "node_modules" / ".bin" / "claude"
#: The user's own hook, as a Claude Code user writes it (bash + jq).
GUARD = REPO / "examples" / "dialects" / "claude-code" / ".claude" / "hooks" / "bash-guard.sh"

# The first test builds every package (scripts/package: the static binary
# takes minutes on a clean clone) and starts the registries.
pytestmark = pytest.mark.timeout(1800)


def quickstart_lines() -> list[str]:
    """The commands between the README's quickstart markers."""
    readme = (REPO / "README.md").read_text()
    block = re.search(r"<!-- quickstart:start -->\n```sh\n(.*?)```\n<!-- quickstart:end -->", readme, re.S)
    assert block, "README.md lost its quickstart block (<!-- quickstart:start --> ... end)"
    return [line for line in block.group(1).splitlines() if line.strip()]


def user_with_a_hook(home: Path) -> None:
    hooks = home / ".claude" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "bash-guard.sh").write_bytes(GUARD.read_bytes())
    (hooks / "bash-guard.sh").chmod(0o755)
    settings = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/.claude/hooks/bash-guard.sh"}]}]}}
    (home / ".claude" / "settings.json").write_text(json.dumps(settings))


@pytest.fixture
def user(npm_registry: NpmRegistry, tmp_path: Path) -> Iterator[dict[str, str]]:
    """A user's environment: an empty home but for their Claude Code hook,
    npm pointed at the local registry; the daemon the quickstart leaves
    running is stopped afterwards."""
    home = tmp_path / "home"
    user_with_a_hook(home)
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = clean_env(home)
    env.update(
        npm_config_userconfig=str(npm_registry.npmrc),
        npm_config_cache=str(tmp_path / "npm-cache"),
        npm_config_prefix=str(tmp_path / "global"),
        XDG_RUNTIME_DIR=str(runtime),
        PATH=f"{tmp_path / 'global' / 'bin'}:{os.environ['PATH']}",
    )
    yield env
    pid_file = tmp_path / "daemon.pid"
    if pid_file.exists():
        try:
            os.kill(int(pid_file.read_text()), signal.SIGTERM)
        except ProcessLookupError:
            pass


def pre_tool_use(env: dict[str, str], command: str) -> subprocess.CompletedProcess[str]:
    """Runs the PreToolUse command that install wrote, as Claude Code would."""
    settings = json.loads((Path(env["HOME"]) / ".claude" / "settings.json").read_text())
    entry = settings["hooks"]["PreToolUse"][0]["hooks"][0]
    event = {
        "session_id": "quickstart",
        "transcript_path": "/dev/null",
        "cwd": env["HOME"],
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
    }
    return subprocess.run(["sh", "-c", entry["command"]], input=json.dumps(event), env=env, capture_output=True, text=True, timeout=30)


def claude_session(env: dict[str, str], project: Path, command: str) -> tuple[subprocess.CompletedProcess[str], FakeClaudeApi]:
    """`claude -p` in `project`, its model asking for Bash `command` once."""
    assert CLAUDE.exists(), f"{CLAUDE} is missing: run `npm ci --prefix cli/tests/agents` (scripts/test does)"
    api = FakeClaudeApi(command)
    claude_env = dict(
        env,
        ANTHROPIC_BASE_URL=api.url,
        ANTHROPIC_API_KEY="sk-test-offline",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    argv = [str(CLAUDE), "-p", "clean up the build", "--output-format", "json", "--allowedTools", "Bash"]
    try:
        done = subprocess.run(argv, env=claude_env, cwd=project, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    finally:
        api.close()
    return done, api


def wait_for_daemon(env: dict[str, str]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if subprocess.run(["hookhost", "status"], env=env, capture_output=True, timeout=15).returncode == 0:
            return
        time.sleep(0.1)
    pytest.fail("the daemon the quickstart started never answered `hookhost status`")


def test_the_quickstart_runs_as_written(user: dict[str, str], tmp_path: Path) -> None:
    lines = quickstart_lines()
    assert len(lines) == 3, lines
    pid_file = tmp_path / "daemon.pid"
    script = "set -e\n" + "\n".join(lines) + f"\necho $! > {pid_file}\n"
    # To a file, not a pipe: the daemon left running keeps it open.
    log = tmp_path / "quickstart.log"
    with log.open("wb") as out:
        done = subprocess.run(["bash", "-c", script], env=user, cwd=user["HOME"], stdout=out, stderr=subprocess.STDOUT, timeout=600)
    assert done.returncode == 0, log.read_text()
    wait_for_daemon(user)

    # The real Claude Code: the model asks for `rm -rf build`; the adopted
    # hook refuses it, the folder stays, and the model reads the hook's reason.
    project = tmp_path / "project"
    (project / "build").mkdir(parents=True)
    session, api = claude_session(user, project, "rm -rf build")
    assert session.returncode == 0, f"{session.stdout}\n{session.stderr}"
    assert (project / "build").is_dir(), "Claude Code ran the command the user's hook refuses"
    results = api.tool_results()
    assert len(results) == 1, results
    assert "Blocked: 'rm -rf' is not allowed in this repo" in json.dumps(results[0]), results[0]

    refused = pre_tool_use(user, "rm -rf build")
    answer = json.loads(refused.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    # The user's own hook's reason: not the relay's refusal of a daemon it cannot reach.
    assert answer["permissionDecisionReason"].startswith("Blocked: 'rm -rf'"), answer

    # No hook decides `ls`: no answer at all, so Claude decides as without hookhost.
    undecided = pre_tool_use(user, "ls")
    assert (undecided.returncode, undecided.stdout.strip()) == (0, ""), undecided

    status = subprocess.run(["hookhost", "status", "--json"], env=user, capture_output=True, text=True, timeout=15)
    hooks = json.loads(status.stdout)["hooks"]
    adopted = [h for h in hooks if h["kind"] == "command"]
    # Claude Code's call and the two above.
    assert adopted and adopted[0]["calls"] == 3, hooks
