"""Helpers of the install tests: the workspace's version, a clean user
environment, running a registry client and a registry server."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import tomllib
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VERDACCIO = REPO / "packaging" / "tests" / "verdaccio"
#: How long a registry may take to start; Verdaccio takes ~3 s here.
START_WAIT = 60.0


def workspace_version() -> str:
    """The version every package must carry: the Cargo workspace's."""
    with open(REPO / "Cargo.toml", "rb") as f:
        return tomllib.load(f)["workspace"]["package"]["version"]


def run(argv: list[str], env: dict[str, str], cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Runs a client as its user would; fails the test with its output when it fails."""
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        pytest.fail(f"{' '.join(map(str, argv))} exited {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}")
    return done


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    """Returns once `url` answers; fails (with the server's log) if it exits or never does."""
    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"{url}: the server exited {server.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    pytest.fail(f"{url} did not answer within {START_WAIT} s:\n{log.read_text()}")


def stop(server: subprocess.Popen[bytes]) -> None:
    server.terminate()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def clean_env(home: Path) -> dict[str, str]:
    """A user with an empty home: no npm, pip or uv config of the machine's applies."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NPM_", "npm_", "PIP_", "UV_", "XDG_", "HOOKHOST_"))}
    env["HOME"] = str(home)
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["UV_PYTHON_DOWNLOADS"] = "never"
    env["UV_NO_CONFIG"] = "1"
    return env


@dataclass
class NpmRegistry:
    url: str
    #: An npm user config holding the registry and its publish token.
    npmrc: Path
