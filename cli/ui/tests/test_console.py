"""The console (`GET /ui`) in Debian's Chromium, driven by Playwright (PyPI,
pinned in scripts/test) with the system browser, against a real daemon
(`hookhost serve --socket --listen --token-file`) whose chain has a real
command hook that refuses `rm`, and a repository's hook that waits for the
user's trust. Agents' events come from the real `hookhost relay`.

Checked: nothing of the console without the token; a refused call in the
stream within a second, naming the hook; the latency plot drawn; a filter
narrowing the list; approving the repository's hook from the page makes
the next event run it; "try an event" gives what `relay` gives; a page of
another origin cannot post. The run saves the README's screenshots.
"""

import json
import os
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
HOOKHOST = Path(os.environ.get("HOOKHOST_BIN", ROOT / "target/debug/hookhost"))
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SHOTS = ROOT / "docs/src/img"

playwright = pytest.importorskip("playwright.sync_api")

GUARD = """#!/bin/sh
input=$(cat)
case "$input" in
  *'rm -rf'*) echo "rm -rf is not run here" >&2; exit 2 ;;
esac
exit 0
"""


def event(session, command, name="PreToolUse"):
    return {
        "session_id": session,
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/tmp",
        "hook_event_name": name,
        "tool_name": "Bash",
        "tool_input": {"command": command},
    }


class Daemon:
    """A daemon in a scratch HOME, with a repository beside it."""

    def __init__(self, tmp: Path):
        self.home = tmp / "home"
        self.repo = tmp / "repo"
        config_dir = self.home / ".config/hookhost"
        config_dir.mkdir(parents=True)
        (self.repo / ".claude").mkdir(parents=True)
        guard = config_dir / "guard.sh"
        guard.write_text(GUARD)
        guard.chmod(0o755)
        self.marker = self.repo / "ran"
        settings = {
            "hooks": {
                "PreToolUse": [
                    {"matcher": "Bash", "hooks": [{"type": "command", "command": f"touch {self.marker}"}]}
                ]
            }
        }
        (self.repo / ".claude/settings.json").write_text(json.dumps(settings))
        self.config = config_dir / "hooks.toml"
        self.config.write_text(
            f"""
[hooks.commands.guard]
command = "{guard}"
dialect = "claude-code"
events = ["PreToolUse"]
matcher = "Bash"

[hooks.import]
claude-code = "{self.repo / '.claude/settings.json'}"

[hooks.audit]
path = "audit.jsonl"
"""
        )
        self.token = "console-test-token-0123456789abcdef"
        (config_dir / "token").write_text(self.token + "\n")
        (config_dir / "token").chmod(0o600)
        self.socket = tmp / "hookhost.sock"
        self.env = {"PATH": os.environ["PATH"], "HOME": str(self.home)}
        self.proc = subprocess.Popen(
            [str(HOOKHOST), "serve", "-c", str(self.config), "--socket", str(self.socket),
             "--listen", "127.0.0.1:0", "--token-file", str(config_dir / "token")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env, text=True,
        )
        line = self.proc.stdout.readline()
        while line and "http" not in line and "ws://" not in line:
            line = self.proc.stdout.readline()
        assert line, self.proc.stderr.read()
        self.addr = line.strip().split("//", 1)[1].rstrip("/")
        self.url = f"http://{self.addr}"

    def relay(self, body):
        """The real relay through the socket: (code, stdout, stderr)."""
        done = subprocess.run(
            [str(HOOKHOST), "relay", "--dialect", "claude-code", "--connect", str(self.socket)],
            input=json.dumps(body), capture_output=True, text=True, env=self.env, timeout=30,
        )
        return done.returncode, done.stdout, done.stderr

    def get(self, path, headers=None):
        req = urllib.request.Request(self.url + path, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def daemon(tmp_path):
    if not HOOKHOST.exists():
        pytest.skip(f"{HOOKHOST} is not built")
    d = Daemon(tmp_path)
    yield d
    d.stop()


@pytest.fixture
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail("Debian's chromium is needed (scripts/test installs it)")
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def signed_in(browser, daemon):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(daemon.url + "/ui")
    page.fill("#token", daemon.token)
    page.click("button[type=submit]")
    page.wait_for_selector("#tab-decisions")
    return page


def test_nothing_of_the_console_without_the_token(daemon):
    for path in ["/ui/api/events", "/ui/api/hooks", "/ui/api/session", "/ui/api/trust",
                 "/ui/api/audit", "/ui/api/latency", "/ui/app.js", "/ui/vendor/uPlot.esm.js"]:
        status, body = daemon.get(path)
        assert status == 401, (path, status, body)
        assert "guard" not in body
    status, body = daemon.get("/ui")
    assert status == 200 and 'name="token"' in body and "guard" not in body
    status, _ = daemon.get("/ui/api/hooks", {"Authorization": "Bearer wrong"})
    assert status == 401
    status, body = daemon.get("/ui/api/hooks", {"Authorization": f"Bearer {daemon.token}"})
    assert status == 200 and '"guard"' in body


def test_a_refusal_is_seen_live_the_plot_draws_and_filters_narrow(browser, daemon):
    page = signed_in(browser, daemon)
    page.wait_for_selector("#stream-state:has-text('live')")
    sent = time.monotonic()
    code, _, stderr = daemon.relay(event("s1", "rm -rf /"))
    assert code == 2 and "rm -rf is not run here" in stderr
    row = page.wait_for_selector("tr.decision[data-decision='deny']", timeout=1000)
    assert time.monotonic() - sent < 2.0
    assert row.get_attribute("data-hook") == "guard"
    assert "rm -rf is not run here" in row.inner_text()
    daemon.relay(event("s2", "ls"))
    page.wait_for_selector("tr.decision >> nth=1")
    page.click("tr.decision[data-decision='deny']")
    detail = page.inner_text("#detail")
    assert "guard" in detail and "rm -rf /" in detail
    page.screenshot(path=str(SHOTS / "console-decisions.png"))

    page.fill("#filter-session", "s2")
    page.wait_for_function("document.querySelectorAll('tr.decision').length === 1")
    assert page.locator("tr.decision").inner_text().find("s2") >= 0
    page.fill("#filter-session", "")
    page.select_option("#filter-decision", "deny")
    page.wait_for_function("document.querySelectorAll('tr.decision').length === 1")

    page.click("#tab-hooks")
    page.wait_for_selector("#latency-chart canvas")
    page.wait_for_selector("#latency-chart .u-legend :text('guard')")
    page.wait_for_selector("#hooks tr[data-hook='guard']")
    page.screenshot(path=str(SHOTS / "console-hooks.png"))


def test_approving_a_repository_hook_makes_the_next_event_run_it(browser, daemon):
    daemon.relay(event("t1", "ls"))
    assert not daemon.marker.exists(), "an untrusted repository hook ran"
    page = signed_in(browser, daemon)
    page.click("#tab-trust")
    row = page.wait_for_selector("#trust tr[data-fingerprint] >> text=untrusted")
    assert row
    assert str(daemon.marker) in page.inner_text("#trust")
    page.screenshot(path=str(SHOTS / "console-trust.png"))
    page.click("#trust button.approve")
    page.wait_for_selector("#trust-note:has-text('approved')")
    deadline = time.monotonic() + 5
    while not daemon.marker.exists():
        assert time.monotonic() < deadline, "the approved hook never ran"
        time.sleep(0.2)
        daemon.relay(event("t1", "ls"))


def test_trying_an_event_answers_as_relay_does(browser, daemon):
    body = event("try-1", "rm -rf /srv")
    expected = daemon.relay(body)
    page = signed_in(browser, daemon)
    page.click("#tab-try")
    page.select_option("#try-dialect", "claude-code")
    page.fill("#try-event", json.dumps(body))
    page.click("#try-send")
    page.wait_for_selector("#try-relay")
    relay = json.loads(page.inner_text("#try-relay"))
    assert (relay["code"], relay["stdout"], relay["stderr"]) == expected
    page.screenshot(path=str(SHOTS / "console-try.png"))

    # The audit log holds both answers (the relay's and the tried one's).
    page.click("#tab-audit")
    page.fill("#audit-session", "try-1")
    page.fill("#audit-hook", "guard")
    page.click("#audit-search")
    page.wait_for_selector("tr.audit-row >> nth=1")
    rows = page.locator("tr.audit-row").all_inner_texts()
    assert all("guard" in r and "try-1" in r for r in rows), rows
    page.fill("#audit-session", "nobody")
    page.click("#audit-search")
    page.wait_for_selector("#audit :text('0 records')")


def test_a_page_of_another_origin_cannot_post(browser, daemon):
    page = signed_in(browser, daemon)
    csrf = page.evaluate("fetch('/ui/api/session').then(r => r.json()).then(s => s.csrf)")
    for origin, header, want in [
        ("http://evil.example", csrf, 403),
        (None, "wrong", 403),
        (None, None, 403),
    ]:
        headers = {"Content-Type": "application/json"}
        if origin:
            headers["Origin"] = origin
        if header:
            headers["X-Hookhost-CSRF"] = header
        r = page.request.post(daemon.url + "/ui/api/try", headers=headers,
                              data=json.dumps({"dialect": "claude-code", "event": event("x", "ls")}))
        assert r.status == want, (origin, header, r.status, r.text())
    r = page.request.post(daemon.url + "/ui/api/try",
                          headers={"Content-Type": "application/json", "X-Hookhost-CSRF": csrf},
                          data=json.dumps({"dialect": "claude-code", "event": event("x", "ls")}))
    assert r.status == 200, r.text()


def test_the_vendored_libraries_are_the_pinned_packages():
    modules = ROOT / "cli/ui/node_modules"
    if not modules.exists():
        pytest.fail("npm ci --prefix cli/ui first (scripts/test does)")
    pairs = [
        ("htm/preact/standalone.mjs", "htm-preact.mjs"),
        ("uplot/dist/uPlot.esm.js", "uPlot.esm.js"),
        ("uplot/dist/uPlot.min.css", "uPlot.min.css"),
    ]
    for published, vendored in pairs:
        assert (modules / published).read_bytes() == (ROOT / "cli/ui/vendor" / vendored).read_bytes(), vendored


class Gateway:
    """A team's gateway on loopback: callers known by `--auth tokens:FILE`."""

    def __init__(self, tmp: Path):
        self.home = tmp / "gw-home"
        self.home.mkdir()
        self.tokens = tmp / "tokens"
        self.env = {"PATH": os.environ["PATH"], "HOME": str(self.home)}
        new = subprocess.run(
            [str(HOOKHOST), "token", "new", "--file", str(self.tokens), "--tenant", "acme", "--user", "ann"],
            capture_output=True, text=True, env=self.env, check=True,
        )
        self.token = new.stdout.strip().splitlines()[-1].split()[-1]
        config = tmp / "gw.toml"
        config.write_text('[hooks.builtins.deny_tools]\nconfig = { tools = ["Bash"], reason = "no shell" }\n')
        self.proc = subprocess.Popen(
            [str(HOOKHOST), "serve", "-c", str(config), "--listen", "127.0.0.1:0",
             "--auth", f"tokens:{self.tokens}"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env, text=True,
        )
        line = self.proc.stdout.readline()
        assert "ws://" in line, self.proc.stderr.read()
        self.url = "http://" + line.strip().split("//", 1)[1].rstrip("/")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def test_a_gateways_caller_signs_in_as_its_token_and_may_not_approve(tmp_path):
    if not HOOKHOST.exists():
        pytest.skip(f"{HOOKHOST} is not built")
    gw = Gateway(tmp_path)
    try:
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        refused = urllib.request.Request(gw.url + "/ui/login", data=b"token=wrong", method="POST")
        with pytest.raises(urllib.error.HTTPError) as e:
            opener.open(refused, timeout=5)
        assert e.value.code == 401
        login = urllib.request.Request(gw.url + "/ui/login", data=f"token={gw.token}".encode(), method="POST")
        with opener.open(login, timeout=5) as r:
            assert r.status == 200 and 'id="app"' in r.read().decode()
        with opener.open(gw.url + "/ui/api/session", timeout=5) as r:
            session = json.loads(r.read())
        assert session["caller"]["tenant"] == "acme" and session["caller"]["user"] == "ann"
        approve = urllib.request.Request(
            gw.url + "/ui/api/trust", data=b'{"approve": "00000000"}', method="POST",
            headers={"X-Hookhost-CSRF": session["csrf"], "Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as e:
            opener.open(approve, timeout=5)
        assert e.value.code == 403 and "daemon's own user" in e.value.read().decode()
        # The token taken out of the gateway's file ends the session.
        gw.tokens.write_text("# nobody\n")
        deadline = time.monotonic() + 5
        while True:
            try:
                opener.open(gw.url + "/ui/api/hooks", timeout=5).close()
            except urllib.error.HTTPError as e:
                assert e.code == 401
                break
            assert time.monotonic() < deadline, "the removed token's session lived on"
            time.sleep(0.2)
    finally:
        gw.stop()
