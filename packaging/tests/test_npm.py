"""hookhost from npm, installed from a real registry as its users install it:
`npm install -g hookhost` and `npx hookhost`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from install_support import REPO, NpmRegistry, clean_env, run, workspace_version

# The first test builds every package (scripts/package: the static binary
# takes minutes on a clean clone) and starts the registries.
pytestmark = pytest.mark.timeout(1800)


def npm_env(registry: NpmRegistry, home: Path) -> dict[str, str]:
    env = clean_env(home)
    env["npm_config_userconfig"] = str(registry.npmrc)
    env["npm_config_cache"] = str(home / "npm-cache")
    env["npm_config_prefix"] = str(home / "global")
    env["PATH"] = f"{home / 'global' / 'bin'}:{env['PATH']}"
    return env


def installed_globally(registry: NpmRegistry, home: Path) -> dict[str, str]:
    """`npm install -g hookhost` for a user whose home is `home`; their environment."""
    env = npm_env(registry, home)
    run(["npm", "install", "-g", "hookhost", "--no-audit", "--no-fund"], env)
    return env


def test_npm_install_global_gives_the_workspace_version(npm_registry: NpmRegistry, tmp_path: Path) -> None:
    env = installed_globally(npm_registry, tmp_path)
    done = run(["hookhost", "--version"], env)
    assert done.stdout.strip() == f"hookhost {workspace_version()}"


def test_install_writes_the_native_binary_not_the_node_launcher(npm_registry: NpmRegistry, tmp_path: Path) -> None:
    """An agent runs what install writes at every hook call: it must be the
    binary itself, so no call pays for starting Node."""
    env = installed_globally(npm_registry, tmp_path)
    done = run(["hookhost", "install", "claude-code", "--dry-run"], env)
    binary = tmp_path / "global" / "lib" / "node_modules" / "hookhost" / "node_modules" / "@hookhost" / "linux-x64" / "bin" / "hookhost"
    assert binary.is_file()
    assert f'"command": "{binary} relay --dialect claude-code' in done.stdout, done.stdout
    assert not (tmp_path / ".claude" / "settings.json").exists(), "--dry-run wrote the settings"
    assert "cache" not in done.stdout, done.stdout


def test_npx_runs_hookhost_without_an_install(npm_registry: NpmRegistry, tmp_path: Path) -> None:
    env = npm_env(npm_registry, tmp_path)
    work = tmp_path / "project"
    work.mkdir()
    done = run(["npx", "--yes", "hookhost", "--version"], env, cwd=work)
    assert done.stdout.strip() == f"hookhost {workspace_version()}"


def test_install_from_npx_warns_that_the_path_it_writes_may_vanish(npm_registry: NpmRegistry, tmp_path: Path) -> None:
    env = npm_env(npm_registry, tmp_path)
    done = run(["npx", "--yes", "hookhost", "install", "claude-code", "--dry-run"], env, cwd=tmp_path)
    assert "warning: this hookhost runs from npx's cache" in done.stdout, done.stdout


def test_the_launcher_passes_on_the_binarys_exit_status(npm_registry: NpmRegistry, tmp_path: Path) -> None:
    env = installed_globally(npm_registry, tmp_path)
    done = subprocess.run(["hookhost", "relay", "--dialect", "no-such-agent"], env=env, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done
    assert "no-such-agent" in done.stderr, done.stderr


def test_without_the_platform_package_the_launcher_says_why(npm_registry: NpmRegistry, tmp_path: Path) -> None:
    """As on a platform with no build, or after an install that skipped
    optional dependencies: the launcher refuses with the reasons and the
    ways out, never a Node stack trace."""
    env = installed_globally(npm_registry, tmp_path)
    shutil.rmtree(tmp_path / "global" / "lib" / "node_modules" / "hookhost" / "node_modules" / "@hookhost" / "linux-x64")
    done = subprocess.run(["hookhost", "--version"], env=env, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done
    assert "@hookhost/linux-x64, which holds the binary for this machine, is not installed" in done.stderr, done.stderr


def test_the_node_sdk_from_the_registry_serves_the_example_guard(npm_registry: NpmRegistry, tmp_path: Path) -> None:
    """The example guard, in a project of its own with `@hookhost/sdk`
    installed from the registry, passes conformance under the installed
    `hookhost`, as the Python and Rust SDKs' guards do."""
    env = installed_globally(npm_registry, tmp_path)
    project = tmp_path / "hook"
    project.mkdir()
    (project / "package.json").write_text('{"name": "my-hook", "private": true, "type": "module"}\n')
    run(["npm", "install", "@hookhost/sdk", "--no-audit", "--no-fund"], env, cwd=project)
    shutil.copy(REPO / "examples" / "node" / "guard.mjs", project / "guard.mjs")
    done = run(["hookhost", "conformance", "--", "node", "guard.mjs"], env, cwd=project)
    assert done.stdout.rstrip().endswith("0 warnings, 0 failed"), done.stdout
