"""What the install tests share: the packages `scripts/package` builds, and
the two registries they are published to and installed from, each a real
server on loopback (Verdaccio for npm, pypiserver for PyPI), started once
per run. Nothing here reaches the network: Verdaccio has no uplink, and
every client is pointed at these two alone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from install_support import REPO, VERDACCIO, NpmRegistry, clean_env, free_port, run, stop, wait_for


@pytest.fixture(scope="session")
def dist() -> Path:
    """target/dist, freshly built by `scripts/package` (cheap when the build is current)."""
    done = subprocess.run([str(REPO / "scripts" / "package")], cwd=REPO, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        pytest.fail(f"scripts/package exited {done.returncode}:\n{done.stderr[-4000:]}")
    return Path(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def tools(dist: Path) -> Path:
    """The pinned build tools scripts/package installed (uv among them)."""
    return REPO / "target" / "package-tools" / "bin"


@pytest.fixture(scope="session")
def npm_registry(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NpmRegistry]:
    """Verdaccio on loopback with every npm package of target/dist published to it."""
    run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], dict(os.environ), cwd=VERDACCIO)
    root = tmp_path_factory.mktemp("verdaccio")
    port = free_port()
    config = root / "config.yaml"
    config.write_text(
        f"storage: {root / 'storage'}\n"
        f"auth:\n  htpasswd:\n    file: {root / 'htpasswd'}\n    max_users: 1\n"
        "uplinks: {}\n"
        "packages:\n  '**':\n    access: $all\n    publish: $authenticated\n"
        "log: { type: stdout, format: pretty, level: warn }\n"
        # The native package is a static binary of some 9 MB, base64 in the
        # publish request: past Verdaccio's default 10mb body. npmjs.com
        # takes packages far larger (Codex's native packages among them).
        "max_body_size: 200mb\n"
    )
    url = f"http://127.0.0.1:{port}/"
    log = root / "log"
    server = subprocess.Popen(
        [str(VERDACCIO / "node_modules" / ".bin" / "verdaccio"), "--config", str(config), "--listen", f"127.0.0.1:{port}"],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_for(url + "-/ping", server, log)
        registry = NpmRegistry(url, root / "npmrc")
        registry.npmrc.write_text(f"registry={url}\n//127.0.0.1:{port}/:_authToken={adduser(url)}\n")
        env = clean_env(root)
        env["npm_config_userconfig"] = str(registry.npmrc)
        for tarball in sorted(dist.glob("*.tgz")):
            run(["npm", "publish", str(tarball), "--loglevel=warn"], env)
        yield registry
    finally:
        stop(server)


def adduser(url: str) -> str:
    """Creates the publishing user through npm's registry API; returns its token."""
    body = json.dumps({"name": "ci", "password": "ci-publisher-1"}).encode()
    request = urllib.request.Request(url + "-/user/org.couchdb.user:ci", data=body, method="PUT", headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.load(answer)["token"]


@pytest.fixture(scope="session")
def py_index(dist: Path, tools: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """pypiserver on loopback with every wheel and sdist of target/dist uploaded by `uv publish`; its simple index URL."""
    root = tmp_path_factory.mktemp("pypiserver")
    (root / "packages").mkdir()
    port = free_port()
    log = root / "log"
    server = subprocess.Popen(
        [sys.executable, "-m", "pypiserver", "run", "-i", "127.0.0.1", "-p", str(port), "-a", ".", "-P", ".", str(root / "packages")],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_for(f"http://127.0.0.1:{port}/simple/", server, log)
        files = [str(p) for p in sorted(dist.iterdir()) if p.suffix == ".whl" or p.name.endswith(".tar.gz")]
        env = clean_env(root)
        run([str(tools / "uv"), "publish", "--publish-url", f"http://127.0.0.1:{port}/", "-u", "ci", "-p", "ci", *files], env)
        yield f"http://127.0.0.1:{port}/simple/"
    finally:
        stop(server)
