"""deploy/kubernetes/ against Kubernetes' own schemas and against the binary
it runs: every manifest passes `kubernetes-validate --strict` (the API's
OpenAPI schemas, bundled, so it runs offline), every flag the Deployment
gives `hookhost serve` is one the binary takes, and the policy in the
ConfigMap loads (`hookhost check`)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
MANIFESTS = sorted((REPO / "deploy" / "kubernetes").glob("*.yaml"))
KINDS = {"ConfigMap", "Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget"}


def hookhost() -> str:
    binary = os.environ.get("HOOKHOST_BIN") or str(REPO / "target" / "debug" / "hookhost")
    assert Path(binary).exists(), f"no {binary}: run `cargo build -p hookhost-cli` or set HOOKHOST_BIN"
    return binary


def docs() -> dict[str, dict]:
    return {d["kind"]: d for path in MANIFESTS for d in yaml.safe_load_all(path.read_text()) if d}


def test_every_manifest_passes_the_api_schemas_strictly() -> None:
    assert {d for d in docs()} == KINDS
    validator = Path(sys.executable).parent / "kubernetes-validate"
    done = subprocess.run(
        [str(validator), "--strict", *map(str, MANIFESTS)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("passed") == len(MANIFESTS), done.stdout


def test_the_deployment_gives_serve_only_flags_it_takes() -> None:
    container = docs()["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    args = container["args"]
    assert args[0] == "serve"
    help_text = subprocess.run([hookhost(), "serve", "--help"], capture_output=True, text=True, check=True).stdout
    taken = set(re.findall(r"--[a-z][a-z-]+", help_text)) | {"-c"}
    given = {a for a in args if a.startswith("-")}
    assert given <= taken, given - taken
    mounted = {m["mountPath"] for m in container["volumeMounts"]}
    for path in (a for a in args if a.startswith("/etc/") or a.startswith("tokens:/etc/")):
        folder = str(Path(path.removeprefix("tokens:")).parent)
        assert folder in mounted, f"{path} is on no mounted volume"


def test_the_policy_in_the_configmap_loads(tmp_path: Path) -> None:
    policy = docs()["ConfigMap"]["data"]["hooks.toml"]
    config = tmp_path / "hooks.toml"
    # The database is the cluster's; `check` loads the config and starts
    # the hooks, and the audit store is opened lazily, so none is needed.
    config.write_text(policy)
    done = subprocess.run([hookhost(), "check", "-c", str(config)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no_force_push" in done.stdout and "deny_tools" in done.stdout, done.stdout
