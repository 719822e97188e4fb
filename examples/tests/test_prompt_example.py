"""examples/prompts end to end, as its README runs it: the stand-in
provider on loopback, the real `hookhost call --stats` with the example's
hooks.toml, a deny for `rm -rf /` with the model's reason and the tokens in
the stats table, an allow for `ls`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import hookhost_bin

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "prompts"




@pytest.fixture
def provider() -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, str(EXAMPLE / "fake_provider.py")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("listening on http://"), line
        yield line.removeprefix("listening on ")
    finally:
        proc.kill()
        proc.wait()


def call(url: str, command: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    config = tmp / "hooks.toml"
    config.write_text((EXAMPLE / "hooks.toml").read_text())
    env = dict(os.environ, JUDGE_BASE_URL=f"{url}/v1", OPENAI_API_KEY="unused")
    event = json.dumps({"tool": "shell", "arguments": {"command": command}})
    argv = [hookhost_bin(), "call", "--stats", "-c", str(config), "before_tool", "--input", event]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)


def test_the_model_denies_rm_rf_with_its_reason_and_tokens_show(provider: str, tmp_path: Path) -> None:
    out = call(provider, "rm -rf /", tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"action": "deny_tool", "reason": "rm -rf deletes files beyond recovery"}
    judge = next(line.split() for line in out.stderr.splitlines() if line.startswith("judge"))
    assert judge[1] == "prompt" and judge[-2:] == ["180+24", "0"], out.stderr
    audit = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert audit[0]["tokens_in"] == 180 and audit[0]["cached"] is False


def test_a_harmless_command_is_allowed(provider: str, tmp_path: Path) -> None:
    out = call(provider, "ls", tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"action": "continue"}
