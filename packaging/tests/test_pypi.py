"""hookhost and its Python SDK from PyPI, installed from a real package
index as their users install them: `pip install hookhost`, `uvx hookhost`,
`pip install hookhost-sdk`."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from install_support import REPO, clean_env, run, workspace_version

# The first test builds every package (scripts/package: the static binary
# takes minutes on a clean clone) and starts the registries.
pytestmark = pytest.mark.timeout(1800)


def venv(path: Path, index: str, *packages: str) -> Path:
    """A fresh venv with `packages` pip-installed from `index` alone; its bin folder."""
    env = clean_env(path)
    run([sys.executable, "-m", "venv", str(path / "venv")], env)
    bin_dir = path / "venv" / "bin"
    run([str(bin_dir / "python"), "-m", "pip", "install", "--no-cache-dir", "--index-url", index, *packages], env)
    return bin_dir


def test_pip_install_gives_the_workspace_version(py_index: str, tmp_path: Path) -> None:
    bin_dir = venv(tmp_path, py_index, "hookhost")
    done = run([str(bin_dir / "hookhost"), "--version"], clean_env(tmp_path))
    assert done.stdout.strip() == f"hookhost {workspace_version()}"
    done = run([str(bin_dir / "hookhost"), "install", "claude-code", "--dry-run"], clean_env(tmp_path))
    assert f'"command": "{bin_dir / "hookhost"} relay --dialect claude-code' in done.stdout, done.stdout
    assert "cache" not in done.stdout, done.stdout


def uv_env(home: Path) -> dict[str, str]:
    env = clean_env(home)
    env["UV_CACHE_DIR"] = str(home / "uv-cache")
    env["UV_TOOL_DIR"] = str(home / "uv-tools")
    return env


def test_uvx_runs_hookhost(py_index: str, tools: Path, tmp_path: Path) -> None:
    done = run([str(tools / "uvx"), "--index-url", py_index, "hookhost", "--version"], uv_env(tmp_path))
    assert done.stdout.strip() == f"hookhost {workspace_version()}"


def test_install_from_uvx_warns_that_the_path_it_writes_may_vanish(py_index: str, tools: Path, tmp_path: Path) -> None:
    argv = [str(tools / "uvx"), "--index-url", py_index, "hookhost", "install", "claude-code", "--dry-run"]
    done = run(argv, uv_env(tmp_path))
    assert "warning: this hookhost runs from uvx's cache" in done.stdout, done.stdout


def test_the_python_sdk_from_the_index_serves_the_example_guard(py_index: str, tmp_path: Path) -> None:
    """The example guard, alone in a folder (no SDK beside it), runs on the
    installed `hookhost-sdk` and passes conformance under the installed
    `hookhost`."""
    bin_dir = venv(tmp_path, py_index, "hookhost", "hookhost-sdk")
    hook = tmp_path / "hook"
    hook.mkdir()
    shutil.copy(REPO / "examples" / "python" / "guard.py", hook / "guard.py")
    done = run([str(bin_dir / "hookhost"), "conformance", "--", str(bin_dir / "python"), "guard.py"], clean_env(tmp_path), cwd=hook)
    assert done.stdout.rstrip().endswith("0 warnings, 0 failed"), done.stdout
