"""The Python example hooks: every shared case in examples/cases.json, each
against the real example process, then end to end through the real
`hookhost` binary with examples/hooks.toml, and the PicoClaw compat hook.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hookhost_sdk.testing import HookProcess

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
CASES = json.loads((EXAMPLES / "cases.json").read_text(encoding="utf-8"))
EXAMPLE_NAMES = ["guard", "ls_human", "cache", "audit_log", "approval", "redact"]
STAGES = {"before_llm", "after_llm", "before_tool", "after_tool", "approve_tool"}


def example(name: str, env: dict[str, str] | None = None) -> HookProcess:
    """Start an example as the host would: cwd examples/, only PATH plus `env`.

    No PYTHONPATH: the example finds the SDK through the symlink next to it.
    """
    full_env = {"PATH": os.environ.get("PATH", ""), **(env or {})}
    return HookProcess([sys.executable, f"python/{name}.py"], cwd=EXAMPLES, env=full_env, name=name)


def case_params() -> list[Any]:
    out = []
    for name, cases in CASES.items():
        if name == "about":
            continue
        assert name in EXAMPLE_NAMES, f"cases.json has cases for {name!r}, which has no Python example"
        out += [pytest.param(name, case, id=f"{name}: {case['name']}") for case in cases]
    return out


@pytest.mark.parametrize(("name", "case"), case_params())
def test_shared_case(name: str, case: dict[str, Any]) -> None:
    unknown = set(case) - {"name", "stage", "params", "expect", "state", "env"}
    assert not unknown, f"unknown members {unknown}"
    assert case["stage"] in STAGES
    with example(name, case.get("env")) as hook:
        assert case["stage"] in hook.hello_result["intercept"]
        for call in case.get("state", []):
            hook.call(call["stage"], call["params"])
        assert hook.call(case["stage"], case["params"]) == case["expect"]
        assert hook.garbage == []
        assert hook.close() == 0


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_every_example_declares_what_it_handles_and_exits_cleanly(name: str, tmp_path: Path) -> None:
    env = {"AUDIT_LOG_FILE": str(tmp_path / "audit.log")}
    with example(name, env) as hook:
        hello = hook.hello_result
        assert hello["version"] == 1 and hello["name"] == name
        assert hello["intercept"] or hello["observe"]
        assert hook.close() == 0
        assert hook.garbage == []


def test_cache_answers_only_within_the_ttl() -> None:
    read = {"tool": "shell", "arguments": {"command": "cat a"}}
    with example("cache", {"CACHE_TTL_SECONDS": "0.3"}) as hook:
        hook.call("after_tool", {**read, "result": {"for_llm": "A", "silent": True}})
        assert hook.call("before_tool", read) == {"action": "respond", "result": {"for_llm": "A", "silent": True}}
        time.sleep(0.4)
        assert hook.call("before_tool", read) == {"action": "continue"}


@pytest.mark.parametrize("command", ["cat a | grep x", "cat a > b", "cat $(x)", "cat `x`", "cat a; rm b", "cp a b"])
def test_cache_never_stores_commands_that_may_write(command: str) -> None:
    call = {"tool": "bash", "arguments": {"command": command}}
    with example("cache") as hook:
        hook.call("after_tool", {**call, "result": {"for_llm": "out"}})
        assert hook.call("before_tool", call) == {"action": "continue"}


def test_guard_checks_rules_in_order_and_leaves_other_commands() -> None:
    with example("guard") as hook:
        for command, rule in [
            ("ls\nsudo reboot", "sudo"),
            ("rm -rf x & mkfs /dev/sda", "rm-recursive-force"),
            ("mkfs -t ext4 /dev/sda", "mkfs"),
            ("dd of=/dev/sda if=/dev/zero", "dd"),
            ("x || rm --recursive -f y", "rm-recursive-force"),
        ]:
            result = hook.call("before_tool", {"tool": "shell", "arguments": {"command": command}})
            assert result == {"action": "deny_tool", "reason": f"guard: rule `{rule}` denies this command: {command}"}
        for command in ["dd of=/dev/null", "rm -f x", "rm --recursive x", "echo sudo", "sudoedit x"]:
            assert hook.call("before_tool", {"tool": "shell", "arguments": {"command": command}}) == {"action": "continue"}


def event(n: int, kind: str) -> dict[str, Any]:
    return {"id": f"ev-{n}", "kind": kind, "time": "2026-05-02T09:14:03Z", "source": "agent", "payload": {"n": n}}


def test_audit_log_appends_each_agent_event_as_one_json_line(tmp_path: Path) -> None:
    log = tmp_path / "audit.log"
    log.write_text('{"earlier": true}\n')
    events = [event(1, "agent.turn.start"), event(2, "llm.call"), event(3, "agent.tool.exec_start"), event(4, "agent")]
    with example("audit_log", {"AUDIT_LOG_FILE": str(log)}) as hook:
        assert hook.hello_result["observe"] == ["agent.*"] and hook.hello_result["intercept"] == []
        for ev in events:
            hook.notify("hook.runtime_event", ev)
        assert hook.close() == 0
        assert len(hook.messages) == 1  # the hello answer; events are never answered
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert lines == [{"earlier": True}, events[0], events[2]]


def test_audit_log_without_a_file_warns_once_and_does_nothing() -> None:
    before = sorted(p.name for p in EXAMPLES.iterdir())
    with example("audit_log") as hook:
        hook.notify("hook.runtime_event", event(1, "agent.turn.start"))
        hook.notify("hook.runtime_event", event(2, "agent.turn.end"))
        assert hook.close() == 0
        assert hook.stderr().count("AUDIT_LOG_FILE is not set") == 1
        assert "Traceback" not in hook.stderr()
    assert sorted(p.name for p in EXAMPLES.iterdir()) == before


def test_approval_without_its_allowlist_fails_at_start(tmp_path: Path) -> None:
    full_env = {"PATH": os.environ.get("PATH", ""), "APPROVAL_ALLOWLIST": str(tmp_path / "missing.toml")}
    done = subprocess.run(
        [sys.executable, "python/approval.py"], cwd=EXAMPLES, env=full_env, input=b"", capture_output=True, timeout=30
    )
    assert done.returncode != 0 and b"cannot read the allowlist" in done.stderr


# --- end to end through the real host ------------------------------------------


@pytest.fixture(scope="session")
def hookhost() -> Path:
    """The hookhost binary: $HOOKHOST_BIN, else the newest of target/{release,debug}, else build it."""
    if os.environ.get("HOOKHOST_BIN"):
        return Path(os.environ["HOOKHOST_BIN"])
    built = [p for p in (REPO / "target/release/hookhost", REPO / "target/debug/hookhost") if p.exists()]
    if not built:
        if shutil.which("cargo") is None:
            pytest.fail("no hookhost binary: set HOOKHOST_BIN or install cargo")
        subprocess.run(["cargo", "build", "-q", "-p", "hookhost-cli"], cwd=REPO, check=True, timeout=1800)
        built = [REPO / "target/debug/hookhost"]
    return max(built, key=lambda p: p.stat().st_mtime)


def host_call(binary: Path, config: str, stage: str, params: dict[str, Any]) -> Any:
    done = subprocess.run(
        [str(binary), "call", "-c", config, stage, "--input", json.dumps(params)],
        cwd=REPO,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return json.loads(done.stdout)


@pytest.fixture
def python3_on_path() -> Iterator[None]:
    """hooks.toml runs `python3` from PATH, with no SDK installed: the symlink must do."""
    if shutil.which("python3") is None:
        pytest.skip("no python3 on PATH")
    yield


def test_host_sudo_is_denied_by_the_guard(hookhost: Path, python3_on_path: None) -> None:
    params = {"tool": "shell", "arguments": {"command": "sudo rm -rf /"}}
    assert host_call(hookhost, "examples/hooks.toml", "before_tool", params) == {
        "action": "deny_tool",
        "reason": "guard: rule `sudo` denies this command: sudo rm -rf /",
    }


def test_host_ls_is_rewritten_and_other_arguments_survive(hookhost: Path, python3_on_path: None) -> None:
    params = {"tool": "shell", "arguments": {"command": "ls", "cwd": "/tmp"}, "tool_call_id": "c1"}
    assert host_call(hookhost, "examples/hooks.toml", "before_tool", params) == {
        "action": "modify",
        "call": {"tool": "shell", "arguments": {"command": "ls -h", "cwd": "/tmp"}, "tool_call_id": "c1"},
    }


def test_host_approval_refuses_unlisted_and_approves_listed_tools(hookhost: Path, python3_on_path: None) -> None:
    assert host_call(hookhost, "examples/hooks.toml", "approve_tool", {"tool": "curl"}) == {
        "approved": False,
        "reason": "approval: tool `curl` is not on the allowlist",
    }
    assert host_call(hookhost, "examples/hooks.toml", "approve_tool", {"tool": "read_file"}) == {"approved": True}


def test_host_redact_masks_secrets_in_tool_output(hookhost: Path, python3_on_path: None) -> None:
    params = {
        "tool": "shell",
        "arguments": {"command": "env"},
        "result": {"for_llm": "KEY=sk-abcdefghijklmnopqrstuvwxyz", "for_user": "clean"},
    }
    assert host_call(hookhost, "examples/hooks.toml", "after_tool", params) == {
        "action": "modify",
        "result": {**params, "result": {"for_llm": "KEY=[REDACTED]", "for_user": "clean"}},
    }


def test_host_ordinary_calls_pass_the_whole_chain(hookhost: Path, python3_on_path: None) -> None:
    params = {"tool": "shell", "arguments": {"command": "echo hi"}}
    assert host_call(hookhost, "examples/hooks.toml", "before_tool", params) == {"action": "continue"}


# --- PicoClaw compat --------------------------------------------------------------


def test_picoclaw_hook_runs_under_hookhost_unchanged(hookhost: Path, python3_on_path: None) -> None:
    config = "examples/picoclaw_compat/config.json"
    params = {"tool": "shell", "arguments": {"command": "ls"}, "tool_call_id": "c1", "meta": {"turn_id": "t1"}}
    # The whole-object `modify` is applied as a merge patch: nothing is lost.
    assert host_call(hookhost, config, "before_tool", params) == {
        "action": "modify",
        "call": {**params, "arguments": {"command": "ls", "timeout": 30}},
    }
    assert host_call(hookhost, config, "before_tool", {"tool": "read_file"}) == {"action": "continue"}
    assert host_call(hookhost, config, "approve_tool", {"tool": "shell"}) == {"approved": True}


def test_picoclaw_hook_speaks_the_picoclaw_protocol() -> None:
    hook = HookProcess(
        [sys.executable, "review_gate.py"],
        cwd=EXAMPLES / "picoclaw_compat",
        env={"PATH": os.environ.get("PATH", "")},
    )
    with hook:
        assert hook.hello_result == {"ok": True, "name": "python-review-gate"}
        hook.notify("hook.runtime_event", event(1, "agent.tool.exec_start"))
        assert hook.call("after_tool", {"tool": "x", "result": {"for_llm": ""}}) == {"action": "continue"}
        assert hook.request("hook.unknown", {})["error"]["code"] == -32000
        assert hook.stderr_contains("observed event agent.tool.exec_start")
        assert hook.close() == 0
