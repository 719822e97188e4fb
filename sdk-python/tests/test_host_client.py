"""hookhost_sdk.host against the real `hookhost serve --stdio`.

The binary is $HOOKHOST_BIN, else target/debug/hookhost (scripts/test builds
it with `cargo test` before pytest runs). The hooks are hookhost's builtins
and a small SDK hook written to a temporary folder; spec/vectors/sidecar.json
runs both on the wire and through the client.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hookhost_sdk.host import Host, HostError, HostExited, HostTimeout

REPO = Path(__file__).resolve().parents[2]
SDK_SRC = REPO / "sdk-python" / "src"

BUILTINS = """
[hooks.builtins.deny_tools]
config = { tools = ["shell"], reason = "no shell here" }
[hooks.builtins.redact_secrets]
[hooks.builtins.max_iterations]
config = { max = 3 }
"""

# One SDK hook with an answer for every stage and lifecycle request; tools
# named `slow` sleep first (and say so on stderr), `echo` rewrites.
HOOK = """
import sys, time
from hookhost_sdk import App, abort, allow, approve, ask, block, context, modify, modify_arguments, modify_response
from hookhost_sdk import refuse, respond, summary, system_message

app = App("inline", max_workers=64)

@app.before_llm
def before_llm(req):
    if req.model == "rewrite":
        return modify({"options": {"temperature": 0}})
    if req.model == "stop":
        return abort("inline: stop", hard=True)

@app.after_llm
def after_llm(resp):
    if resp.content == "shout":
        return modify_response(content="SHOUT")

@app.before_tool
def before_tool(call):
    if call.tool == "slow":
        print(f"slow call {call.arguments.get('n')} started", file=sys.stderr, flush=True)
        time.sleep(call.arguments["seconds"])
    if call.tool in ("slow", "echo"):
        return modify_arguments(echo=call.arguments["n"])
    if call.tool == "cached":
        return respond("from the cache")
    if call.tool == "stop":
        return abort()
    if call.tool == "risky":
        return ask("this deletes files").with_context("build/ is generated")
    if call.tool == "safe":
        return allow("read-only")
    if call.tool == "safe_rewrite":
        return allow(call={"arguments": {"h": True}})

@app.approve_tool
def approve_tool(call):
    if call.tool == "ok":
        return approve("listed")
    if call.tool == "no":
        return refuse("not listed")

@app.after_tool
def after_tool(out):
    if out.for_llm == "boom":
        return abort("inline: boom")

@app.lifecycle("session_start", "user_prompt_submit", "before_compaction", "stop")
def lifecycle(ev):
    if ev.event == "stop" and not ev.payload.get("stop_hook_active"):
        return block(f"keep going ({ev.payload.get('loop_count')})")
    if ev.event == "session_start":
        return context("use tabs") + system_message("rules loaded")
    if ev.event == "user_prompt_submit" and "secret" in (ev.prompt or ""):
        return block("no secrets")
    if ev.event == "before_compaction":
        return summary("short")

app.run()
"""


def hookhost_bin() -> str:
    configured = os.environ.get("HOOKHOST_BIN")
    if configured:
        if not os.access(configured, os.X_OK):
            pytest.fail(f"HOOKHOST_BIN={configured} is not an executable file")
        return configured
    built = REPO / "target" / "debug" / "hookhost"
    if not built.exists():
        pytest.fail(f"no hookhost binary at {built}: run `cargo build -p hookhost-cli` (or set HOOKHOST_BIN)")
    return str(built)


@pytest.fixture(scope="module")
def binary() -> str:
    return hookhost_bin()


def inline_config(folder: Path, extra: str = "") -> Path:
    (folder / "hook.py").write_text(HOOK, encoding="utf-8")
    config = folder / "hooks.toml"
    config.write_text(
        f"""
[hooks.processes.inline]
command = [{json.dumps(sys.executable)}, "hook.py"]
intercept = ["before_llm", "after_llm", "before_tool", "after_tool", "approve_tool", "lifecycle"]
env = {{ PYTHONPATH = {json.dumps(str(SDK_SRC))} }}
timeout_ms = 60000
{extra}""",
        encoding="utf-8",
    )
    return config


def write(folder: Path, text: str) -> Path:
    config = folder / "hooks.toml"
    config.write_text(text, encoding="utf-8")
    return config


def start(binary: str, config: Path, **kw: Any) -> Host:
    kw.setdefault("stderr", io.StringIO())
    return Host.start(config, hookhost=binary, **kw)


SHELL_LS = {"tool": "shell", "arguments": {"command": "ls"}, "tool_call_id": "c1"}


# --- the verdicts -----------------------------------------------------------------


def test_builtin_verdicts(binary: str, tmp_path: Path) -> None:
    with start(binary, write(tmp_path, BUILTINS)) as host:
        v = host.before_tool(SHELL_LS)
        assert (v.action, v.reason, v.denied, v.proceed) == ("deny_tool", "no shell here", True, False)
        assert v.params == SHELL_LS

        search = {"tool": "web_search", "arguments": {"q": "x"}}
        v = host.before_tool(search)
        assert (v.action, v.proceed, v.modified, v.params) == ("continue", True, False, search)
        assert v.raw == {"action": "continue"}
        assert v.params is not search  # a copy: the caller's dict is never shared

        secret = "key sk-abcdefghijklmnopqrstuvwxyz123456"
        output = {"tool": "web_search", "result": {"for_llm": secret, "for_user": "ok"}}
        v = host.after_tool(output)
        assert v.modified and v.proceed
        # The host always sends `arguments` (spec §8), so the whole params
        # it hands back carry them too.
        redacted = {"for_llm": "key [REDACTED]", "for_user": "ok"}
        assert v.params == {"tool": "web_search", "arguments": {}, "result": redacted}
        assert v.result is None  # after_tool's rewritten params are `params`, never `result`

        v = host.before_llm({"model": "m", "meta": {"iteration": 5}})
        assert (v.action, v.aborted) == ("abort_turn", True)
        assert v.reason == "max_iterations: iteration 5 exceeds the limit of 3"
        assert host.before_tool({"tool": "read_file", "meta": {"iteration": 4}}).action == "abort_turn"

        v = host.after_llm({"model": "m", "response": {"content": "hi"}})
        assert v.action == "continue" and v.params == {"model": "m", "response": {"content": "hi"}}

        # No approver configured: nobody decided, which is not an approval.
        approval = host.approve_tool({"tool": "shell"})
        assert (approval.approved, approval.decided, approval.refused) == (None, False, False)
        assert approval.raw == {"action": "continue"}

        assert host.lifecycle("user_prompt_submit", {"prompt": "hi"}).action == "continue"
        assert not host.lifecycle("session_end").blocked

        host.emit("agent.turn.start", {"turn": 1}, source="agent")
        stats = host.stats()
        assert [s["hook"] for s in stats] == ["deny_tools", "max_iterations", "redact_secrets"]
        assert {"kind", "calls", "errors", "timeouts", "breaker", "p50_us", "p99_us"} <= set(stats[0])
        assert host.close() == 0


def test_process_hook_verdicts(binary: str, tmp_path: Path) -> None:
    with start(binary, inline_config(tmp_path)) as host:
        v = host.before_llm({"model": "rewrite", "messages": [{"role": "user", "content": "hi"}]})
        assert v.modified
        messages = [{"role": "user", "content": "hi"}]
        assert v.params == {"model": "rewrite", "messages": messages, "options": {"temperature": 0}}
        v = host.before_llm({"model": "stop"})
        assert (v.action, v.reason, v.aborted) == ("hard_abort", "inline: stop", True)

        v = host.after_llm({"model": "m", "response": {"content": "shout", "tool_calls": []}})
        assert v.params == {"model": "m", "response": {"content": "SHOUT", "tool_calls": []}}

        v = host.before_tool({"tool": "echo", "arguments": {"n": 7, "keep": True}})
        assert v.modified and v.params == {"tool": "echo", "arguments": {"n": 7, "keep": True, "echo": 7}}
        v = host.before_tool({"tool": "cached"})
        assert (v.action, v.result, v.proceed) == ("respond", {"for_llm": "from the cache"}, False)
        v = host.before_tool({"tool": "stop"})
        assert v.action == "abort_turn" and v.reason  # hookhost supplies a default reason

        v = host.after_tool({"tool": "x", "result": {"for_llm": "boom"}})
        assert (v.action, v.reason) == ("abort_turn", "inline: boom")

        lc = host.lifecycle("session_start", {"source": "startup"}, meta={"session_key": "s-1"})
        assert (lc.action, lc.additional_context, lc.system_message, lc.blocked) == (
            "continue",
            "use tabs",
            "rules loaded",
            False,
        )
        lc = host.lifecycle("user_prompt_submit", {"prompt": "my secret"})
        assert (lc.blocked, lc.reason) == (True, "no secrets")
        assert host.lifecycle("before_compaction", {"trigger": "auto"}).summary == "short"
        assert host.close() == 0


def test_error_responses_raise_host_error(binary: str, tmp_path: Path) -> None:
    with start(binary, write(tmp_path, BUILTINS)) as host:
        with pytest.raises(HostError) as err:
            host.before_tool({"arguments": {}})
        assert err.value.code == -32602 and "missing field `tool`" in err.value.message
        assert err.value.method == "host.before_tool"
        with pytest.raises(HostError) as err:
            host.lifecycle("No-Such-Event")
        assert err.value.code == -32602 and "snake_case" in err.value.message
        with pytest.raises(HostError) as err:
            host.request("host.nope")
        assert err.value.code == -32601
        with pytest.raises(HostError) as err:
            host.request("host.stats", {"x": 1})
        assert err.value.code == -32602
        # An error answers one call; the session goes on.
        assert host.before_tool(SHELL_LS).denied
        assert host.close() == 0


def test_sidecar_vectors_on_the_wire_and_through_the_client(binary: str, tmp_path: Path) -> None:
    vectors = json.loads((REPO / "spec" / "vectors" / "sidecar.json").read_text(encoding="utf-8"))
    for n, session in enumerate(vectors["sessions"]):
        folder = tmp_path / str(n)
        folder.mkdir()
        config = write(folder, session["config"])
        lines = [s if isinstance(s, str) else json.dumps(s) for s in session["send"]]
        done = subprocess.run(
            [binary, "serve", "-c", str(config), "--stdio"],
            input="".join(line + "\n" for line in lines).encode(),
            capture_output=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        got = [json.loads(line) for line in done.stdout.splitlines()]
        assert len(got) == len(session["expect"]), (session["name"], got)
        by_id = {json.dumps(r["id"]): r for r in got if r["id"] is not None}
        nulls = [r for r in got if r["id"] is None]
        for want in session["expect"]:
            have = by_id.pop(json.dumps(want["id"])) if want["id"] is not None else nulls.pop(0)
            check_response(session["name"], want, have)

        # The same requests through the client, where it can send them.
        expected = {json.dumps(w["id"]): w for w in session["expect"]}
        with start(binary, config) as host:
            for sent in session["send"]:
                if not isinstance(sent, dict) or sent.get("jsonrpc") != "2.0" or "id" not in sent:
                    continue
                if sent["method"] == "host.emit" or not isinstance(sent.get("params", {}), dict):
                    continue  # the client never sends these
                want = expected[json.dumps(sent["id"])]
                if "result" in want:
                    assert host.request(sent["method"], sent.get("params")) == want["result"], sent
                else:
                    with pytest.raises(HostError) as err:
                        host.request(sent["method"], sent.get("params"))
                    assert err.value.code == want["error"]["code"], sent
            assert host.close() == 0


def check_response(session: str, want: dict[str, Any], have: dict[str, Any]) -> None:
    assert have["jsonrpc"] == "2.0", (session, have)
    if "result" in want:
        assert have.get("result") == want["result"], (session, have)
    else:
        error = have.get("error") or {}
        assert error.get("code") == want["error"]["code"], (session, have)
        assert want["error"]["message_contains"] in error.get("message", ""), (session, have)


# --- concurrency, timeouts, death ---------------------------------------------------


def test_fifty_concurrent_calls_each_get_their_own_answer(binary: str, tmp_path: Path) -> None:
    with start(binary, inline_config(tmp_path)) as host:
        answers: dict[int, Any] = {}
        failures: list[BaseException] = []

        def one(n: int) -> None:
            try:
                # Later calls sleep less, so answers come back out of order.
                args = {"n": n, "seconds": (50 - n) / 250}
                answers[n] = host.before_tool({"tool": "slow", "arguments": args}, timeout=30)
            except BaseException as exc:  # noqa: BLE001 - reported below
                failures.append(exc)

        threads = [threading.Thread(target=one, args=(n,)) for n in range(50)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not failures
        assert sorted(answers) == list(range(50))
        for n, v in answers.items():
            assert v.modified and v.params["arguments"] == {"n": n, "seconds": (50 - n) / 250, "echo": n}
        assert host.close() == 0


def test_a_call_without_an_answer_in_time_raises_host_timeout(binary: str, tmp_path: Path) -> None:
    with start(binary, inline_config(tmp_path)) as host:
        began = time.monotonic()
        with pytest.raises(HostTimeout) as err:
            host.before_tool({"tool": "slow", "arguments": {"n": 1, "seconds": 1.5}}, timeout=0.3)
        assert 0.3 <= time.monotonic() - began < 1.0
        assert err.value.method == "host.before_tool"
        # The late answer is dropped; later calls get their own.
        assert host.before_tool({"tool": "echo", "arguments": {"n": 2}}).params["arguments"]["echo"] == 2
        assert host.close() == 0


class _Watch(io.StringIO):
    """A stderr sink that tells a waiting test when a text has arrived."""

    def __init__(self, text: str, count: int) -> None:
        super().__init__()
        self.text, self.count, self.seen = text, count, threading.Event()

    def write(self, s: str) -> int:
        n = super().write(s)
        if self.getvalue().count(self.text) >= self.count:
            self.seen.set()
        return n


def test_killing_hookhost_fails_every_waiting_call_at_once(binary: str, tmp_path: Path) -> None:
    watch = _Watch("started", 5)
    host = start(binary, inline_config(tmp_path), stderr=watch, env={**os.environ, "HOOKHOST_LOG": "info"})
    raised: list[tuple[BaseException, float]] = []

    def one(n: int) -> None:
        try:
            host.before_tool({"tool": "slow", "arguments": {"n": n, "seconds": 30}}, timeout=60)
        except BaseException as exc:  # noqa: BLE001 - checked below
            raised.append((exc, time.monotonic()))

    threads = [threading.Thread(target=one, args=(n,)) for n in range(5)]
    for t in threads:
        t.start()
    assert watch.seen.wait(20), watch.getvalue()  # every call is in the hook
    killed = time.monotonic()
    os.kill(host.pid, signal.SIGKILL)
    for t in threads:
        t.join(5)
    assert len(raised) == 5
    for exc, when in raised:
        assert isinstance(exc, HostExited), exc
        assert exc.returncode == -signal.SIGKILL
        assert "exited with status -9" in str(exc)
        assert when - killed < 2.0
    began = time.monotonic()
    with pytest.raises(HostExited):
        host.before_tool(SHELL_LS)
    with pytest.raises(HostExited):
        host.emit("agent.x")
    assert time.monotonic() - began < 0.5
    assert host.close() == -signal.SIGKILL


def test_a_config_that_does_not_load_fails_start(binary: str, tmp_path: Path) -> None:
    config = write(tmp_path, "[hooks.builtins.no_such_builtin]\n")
    with pytest.raises(HostExited) as err:
        start(binary, config)
    assert err.value.returncode == 2
    assert "no_such_builtin" in err.value.stderr_tail


# --- the end ----------------------------------------------------------------------------


def children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found |= {int(p) for p in (task / "children").read_text().split()}
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_close_returns_0_and_leaves_no_process_or_thread(binary: str, tmp_path: Path) -> None:
    threads_before = set(threading.enumerate())
    host = start(binary, inline_config(tmp_path))
    hooks = children(host.pid)
    assert len(hooks) == 1
    # A call in flight at close is still answered.
    answer: list[Any] = []
    caller = threading.Thread(
        target=lambda: answer.append(host.before_tool({"tool": "slow", "arguments": {"n": 3, "seconds": 0.3}}))
    )
    caller.start()
    time.sleep(0.1)
    assert host.close() == 0
    caller.join(5)
    assert answer and answer[0].params["arguments"]["echo"] == 3
    assert host.proc.poll() == 0
    assert not any(alive(pid) for pid in hooks | {host.pid})
    assert set(threading.enumerate()) <= threads_before
    with pytest.raises(HostExited, match="the Host is closed"):
        host.stats()
    assert host.close() == 0  # twice is fine


def test_reload_reports_what_changed(binary: str, tmp_path: Path) -> None:
    config = write(tmp_path, BUILTINS)
    with start(binary, config) as host:
        assert host.reload() == {
            "unchanged": ["deny_tools", "max_iterations", "redact_secrets"],
            "changed": [],
            "removed": [],
        }
        config.write_text(BUILTINS.replace('tools = ["shell"]', 'tools = ["curl"]').replace("max = 3", "max = 9"))
        report = host.reload()
        assert report == {"unchanged": ["redact_secrets"], "changed": ["deny_tools", "max_iterations"], "removed": []}
        assert host.before_tool(SHELL_LS).action == "continue"
        assert host.before_tool({"tool": "curl"}).denied

        config.write_text('[hooks.builtins.deny_tools]\nconfig = { tools = ["curl"], reason = "no shell here" }\n')
        report = host.reload()
        assert report == {"unchanged": ["deny_tools"], "changed": [], "removed": ["max_iterations", "redact_secrets"]}

        config.write_text("[hooks.builtins.deny_tools]\nnot_a_key = 1\n")
        with pytest.raises(HostError) as err:
            host.reload()
        assert err.value.code == -32000 and "not_a_key" in err.value.message
        assert host.before_tool({"tool": "curl"}).denied  # the running hooks stay
        assert host.close() == 0


def test_ask_context_and_a_blocked_stop_through_the_sidecar(binary: str, tmp_path: Path) -> None:
    with start(binary, inline_config(tmp_path)) as host:
        v = host.before_tool({"tool": "risky", "arguments": {"path": "build"}})
        assert v.asked and not v.proceed and not v.denied
        assert v.reason == "this deletes files"
        assert v.params == {"tool": "risky", "arguments": {"path": "build"}}
        assert v.additional_context == "build/ is generated"
        meta = {"session_key": "s-1", "cwd": "/work", "permission_mode": "default"}
        first = host.lifecycle("stop", {}, meta=meta)
        assert (first.action, first.reason) == ("block", "keep going (0)")
        # The host tells the hook the previous stop was blocked; it lets go.
        assert host.lifecycle("stop", {}, meta=meta).action == "continue"
        assert host.lifecycle("stop", {}, meta=meta).action == "block"
        # An agent's own event is observe-only.
        assert host.lifecycle("cwd_changed", {"cwd": "/w"}, meta=meta).action == "continue"


def test_allow_and_an_abstaining_approver_through_the_sidecar(binary: str, tmp_path: Path) -> None:
    with start(binary, inline_config(tmp_path)) as host:
        v = host.before_tool({"tool": "safe", "arguments": {"path": "a"}})
        assert (v.action, v.allowed, v.proceed, v.modified, v.reason) == ("allow", True, True, False, "read-only")
        assert v.params == {"tool": "safe", "arguments": {"path": "a"}}
        v = host.before_tool({"tool": "safe_rewrite", "arguments": {"path": "a"}})
        assert (v.allowed, v.modified, v.reason) == (True, True, None)
        assert v.params == {"tool": "safe_rewrite", "arguments": {"path": "a", "h": True}}
        # A rewrite alone is never an allow.
        v = host.before_tool({"tool": "echo", "arguments": {"n": 1}})
        assert (v.action, v.allowed, v.modified) == ("modify", False, True)

        ok = host.approve_tool({"tool": "ok"})
        assert (ok.approved, ok.decided, ok.reason) == (True, True, "listed")
        no = host.approve_tool({"tool": "no"})
        assert (no.approved, no.refused, no.reason) == (False, True, "not listed")
        # The hook returned None: it abstains, so nobody decided.
        other = host.approve_tool({"tool": "other"})
        assert (other.approved, other.decided, other.refused) == (None, False, False)
        assert host.close() == 0
