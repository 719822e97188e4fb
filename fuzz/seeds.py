#!/usr/bin/env python3
"""Regenerates fuzz/corpus/<target>/ (the committed seed corpus) from the
spec's vectors and the example configs. Run from anywhere: python3 fuzz/seeds.py

Seeds are small and readable; libFuzzer grows its own corpus from them in a
scratch folder (scripts/fuzz), so this folder changes only when re-seeded.
"""
import glob
import json
import os
import re
import shutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")


def spec(path):
    with open(os.path.join(ROOT, "spec", "vectors", path)) as f:
        return json.load(f)


def compact(v):
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def write(target, seeds):
    folder = os.path.join(CORPUS, target)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    seen = set()
    n = 0
    for data in seeds:
        if isinstance(data, str):
            data = data.encode()
        if data in seen:
            continue
        seen.add(data)
        n += 1
        with open(os.path.join(folder, f"seed-{n:03}"), "wb") as f:
            f.write(data)
    print(f"{target}: {n} seeds")


def methods():
    return {os.path.basename(p)[:-5]: json.load(open(p))
            for p in sorted(glob.glob(os.path.join(ROOT, "spec", "vectors", "methods", "*.json")))}


def results(valid=6, invalid=4):
    """The first few result values of each method's vectors, valid and invalid."""
    out = []
    for m in methods().values():
        for kind, n in (("valid", valid), ("invalid", invalid)):
            out += [c["value"] for c in (m.get("results") or {}).get(kind, [])[:n]]
    return out


def framing():
    # Header: byte 0 is the read buffer's size - 1, byte 1 the line cap / 16.
    big, small = bytes([63, 255]), bytes([3, 4])  # caps 4081 and 65 bytes
    lines = [c["line"] for c in spec("envelope.json")]
    # The envelope vectors, four lines to a stream.
    seeds = [big + "\n".join(lines[i:i + 4]).encode() + b"\n" for i in range(0, len(lines), 4)]
    for i, m in enumerate(methods().values()):
        for c in m["params"]["valid"][:1]:
            seeds.append(big + compact({"jsonrpc": "2.0", "id": i, "method": m["method"],
                                        "params": c["value"]}).encode() + b"\n")
    for i, r in enumerate(results()[:12]):
        seeds.append(big + compact({"jsonrpc": "2.0", "id": i, "result": r}).encode() + b"\r\n")
    # Streams: several lines, CRLF, blank lines, garbage, an unterminated
    # tail, and lines over a small cap.
    seeds.append(small + "\n".join(lines[:6]).encode())
    seeds.append(small + b"\r\n\n" + b"x" * 200 + b"\n" + lines[0].encode() + b"\r\n" + b"y" * 70)
    seeds.append(bytes([0, 0]) + b"ab\ncd\r\n\r\n" + b"z" * 40 + b"\nend")
    return seeds


def stage_result():
    seeds = [compact(v) for v in results()]
    for m in methods().values():
        seeds += [compact(c["value"]) for c in m["params"]["valid"][:1]]
    chain = [compact(h["result"]) for case in spec("chain.json") for h in case.get("hooks", [])
             if "result" in h]
    return seeds + [r for r in dict.fromkeys(chain) if r not in seeds][:10]


def merge_patch():
    return [compact(c["target"]) + "\n" + compact(c["patch"]) for c in spec("merge_patch.json")]


def configs():
    seeds = []
    for p in ["examples/hooks.toml", "examples/hooks-rust.toml", "examples/approval_allowlist.toml",
              "examples/picoclaw_compat/config.json"]:
        with open(os.path.join(ROOT, p)) as f:
            seeds.append(f.read())
    # Inline configs from the host's tests.
    for p in sorted(glob.glob(os.path.join(ROOT, "host", "tests", "*.rs"))) + [
            os.path.join(ROOT, "host", "src", "config.rs")]:
        text = open(p).read()
        for m in re.finditer(r'r(#+)"(.*?)"\1', text, re.S):
            if "[hooks" in m.group(2) or '"hooks"' in m.group(2):
                seeds.append(m.group(2))
    # Command hooks, filters, defaults and audit, which the examples barely use.
    seeds += [
        '[hooks.commands.fmt]\ncommand = "./fmt.sh"\nevents = ["post_tool_use", "session_start"]\n'
        'matcher = "Write|Edit"\ntimeout = 30\non_error = "block"\nworking_dir = "hooks"\n',
        '[hooks.commands.gate]\nargs = ["python3", "gate.py"]\nevents = ["pre_tool_use", "permission_request"]\n'
        'if = \'tool == "shell" && arguments.command.contains("rm")\'\nenv = { MODE = "strict" }\n'
        'inherit_env = ["HOME"]\n',
        '[hooks.defaults]\nobserver_timeout_ms = 1\ninterceptor_timeout_ms = 1\napproval_timeout_ms = 1\n'
        'hello_timeout_ms = 1\nmax_line_bytes = 1\nevent_queue = 1\nshutdown_grace_ms = 0\nmax_restarts = 0\n'
        'restart_window_ms = 1\nchain_budget_ms = 1\nbreaker_failures = 1\nbreaker_window_ms = 1\n'
        'breaker_cooldown_ms = 0\n',
        '[hooks.processes.g]\ncommand = ["x"]\nobserve = ["*", "agent.*", "lifecycle.session_start"]\n'
        'intercept = ["before_llm", "after_llm", "before_tool", "after_tool", "approve_tool", "lifecycle"]\n'
        'matcher = "(shell|exec)"\nif = \'arguments.paths.exists(p, p.startsWith("/etc"))\'\n'
        'breaker_failures = 2\nbreaker_window_ms = 10\nbreaker_cooldown_ms = 5\ntimeout_ms = 9\n',
        '[hooks.builtins.redact_secrets]\nintercept = ["after_tool"]\non_error = "allow"\n'
        'if = \'model.startsWith("gpt")\'\n[hooks.builtins.max_iterations]\nconfig = { max = 3 }\n',
        '{"hooks":{"commands":{"c":{"command":"true","events":["stop"],"timeout":5}},'
        '"builtins":{"deny_tools":{"config":{"tools":["curl"]}}},"audit":{"path":"a.jsonl"}}}',
        '{"hooks":{"enabled":false,"processes":{"p":{"command":["x"],"if":"tool == \\"\\"",'
        '"matcher":"^a$","on_error":"deny"}}}}',
    ]
    return seeds


if __name__ == "__main__":
    write("framing_envelope", framing())
    write("stage_result", stage_result())
    write("merge_patch", merge_patch())
    write("config_parse", configs())
