#!/usr/bin/env python3
"""A scripted agent that embeds hookhost through the sidecar client.

The "model" is a script: each turn it asks for a few tool calls, then sums
up what the tools returned. The agent asks hookhost at every step, does what
the merged verdicts say, and prints a transcript. With examples/hooks.toml:
the guard denies `sudo`, ls_human turns `ls` into `ls -h`, redact masks a
key in a tool's output, the cache answers a repeated read, approval refuses
`curl`, and audit_log records the agent.* events the agent emits.

    cargo build -p hookhost-cli
    python3 examples/python/sidecar_agent.py            # --json: one record per tool call

hookhost is $HOOKHOST_BIN, else `hookhost` on PATH, else this repo's target/.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

from hookhost_sdk.host import Host

EXAMPLES = Path(__file__).resolve().parents[1]

# The scripted session: a prompt and the tool calls the model makes for it.
TURNS: list[tuple[str, list[dict[str, Any]]]] = [
    ("What is in this folder?", [{"tool": "shell", "arguments": {"command": "ls"}},
                                 {"tool": "shell", "arguments": {"command": "cat notes.md"}}]),
    ("Free some disk space.", [{"tool": "shell", "arguments": {"command": "sudo rm -rf /"}}]),
    ("Check the config and the weather.", [{"tool": "shell", "arguments": {"command": "cat .env"}},
                                           {"tool": "shell", "arguments": {"command": "cat notes.md"}},
                                           {"tool": "curl", "arguments": {"url": "https://wttr.in"}}]),
]
FILES = {"notes.md": "buy milk", ".env": "OPENAI_API_KEY=sk-live0123456789abcdefghij"}


def run_tool(call: dict[str, Any]) -> dict[str, Any]:
    """The fake tools: a shell that knows `ls` and `cat`, and nothing else."""
    command = call["arguments"].get("command", "")
    words = command.split()
    if call["tool"] == "shell" and words[:1] == ["ls"]:
        sizes = "  ".join(f"{len(text)}B {name}" if "-h" in words else name for name, text in FILES.items())
        return {"for_llm": sizes}
    if call["tool"] == "shell" and words[:1] == ["cat"] and len(words) == 2 and words[1] in FILES:
        return {"for_llm": FILES[words[1]]}
    return {"for_llm": f"{call['tool']}: cannot do that here", "is_error": True}


def hookhost_binary() -> str | None:
    found = os.environ.get("HOOKHOST_BIN") or shutil.which("hookhost")
    for build in ("release", "debug"):
        candidate = EXAMPLES.parent / "target" / build / "hookhost"
        if not found and candidate.exists():
            found = str(candidate)
    return found


class Agent:
    def __init__(self, host: Host, session: str) -> None:
        self.host = host
        self.scope = {"agent_id": "sidecar-demo", "session_key": session}
        self.records: list[dict[str, Any]] = []
        self.iteration = 0
        self.quiet = False

    def say(self, text: str) -> None:
        if not self.quiet:
            print(text)

    def llm(self, messages: list[dict[str, Any]], response: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
        """One model call (its answer is scripted), with hookhost before and after it."""
        self.iteration += 1
        meta = {**meta, "iteration": self.iteration}
        before = self.host.before_llm({"model": "scripted", "messages": messages, "meta": meta})
        if before.aborted:
            raise RuntimeError(f"before_llm: {before.reason}")
        after = self.host.after_llm({"model": "scripted", "response": response, "meta": meta})
        if after.aborted:
            raise RuntimeError(f"after_llm: {after.reason}")
        answer: dict[str, Any] = after.params["response"]
        return answer

    def tool(self, turn: int, call: dict[str, Any], meta: dict[str, Any]) -> str:
        """One tool call through before_tool, approve_tool and after_tool; what the model sees."""
        record: dict[str, Any] = {"turn": turn, "tool": call["tool"], "arguments": call["arguments"]}
        self.records.append(record)
        self.say(f"  model asks: {call['tool']} {json.dumps(call['arguments'])}")
        verdict = self.host.before_tool({**call, "meta": meta})
        record["before_tool"] = verdict.action
        if verdict.modified:
            self.say(f"    hooks rewrote it: {json.dumps(verdict.params['arguments'])}")
        if verdict.action == "respond":
            assert verdict.result is not None
            record["for_llm"] = verdict.result["for_llm"]
            self.say(f"    answered by a hook without running: {record['for_llm']!r}")
            return str(record["for_llm"])
        if not verdict.proceed:
            record["reason"] = verdict.reason
            self.say(f"    {verdict.action}: {verdict.reason}")
            return f"denied: {verdict.reason}"
        call = verdict.params
        approval = self.host.approve_tool(call)
        record["approved"] = approval.approved
        # No hook decided (None): a real agent would ask its user here;
        # this scripted one has nobody to ask, so it does not run the tool.
        if approval.approved is not True:
            record["reason"] = approval.reason
            self.say(f"    not approved: {approval.reason}")
            return f"not approved: {approval.reason}"
        self.host.emit("agent.tool.exec_start", {"tool": call["tool"]}, source="agent", scope=self.scope)
        result = run_tool(call)
        record["ran"] = call["arguments"]
        self.host.emit("agent.tool.exec_end", {"tool": call["tool"]}, source="agent", scope=self.scope)
        after = self.host.after_tool({**call, "result": result})
        record["after_tool"] = after.action
        record["for_llm"] = after.params["result"]["for_llm"]
        self.say(f"    ran it: {record['for_llm']!r}" + (" (masked by a hook)" if after.modified else ""))
        return str(record["for_llm"])

    def run(self, quiet: bool = False) -> None:
        self.quiet = quiet
        start = self.host.lifecycle("session_start", {"source": "startup"}, meta=self.scope)
        messages: list[dict[str, Any]] = [{"role": "system", "content": start.additional_context or "You are helpful."}]
        for turn, (prompt, tool_calls) in enumerate(TURNS, 1):
            meta = {**self.scope, "turn_id": f"t{turn}"}
            self.say(f"turn {turn}, user: {prompt}")
            if self.host.lifecycle("user_prompt_submit", {"prompt": prompt}, meta=meta).blocked:
                self.say("  the prompt was blocked")
                continue
            self.host.emit("agent.turn.start", {"turn": turn}, source="agent", scope=meta)
            messages.append({"role": "user", "content": prompt})
            response = self.llm(messages, {"content": "", "tool_calls": tool_calls}, meta)
            outputs = [self.tool(turn, call, meta) for call in response.get("tool_calls", [])]
            messages += [{"role": "tool", "content": text} for text in outputs]
            answer = self.llm(messages, {"content": "Done: " + " | ".join(outputs)}, meta)
            self.say(f"  model: {answer['content']}")
            self.host.emit("agent.turn.end", {"turn": turn}, source="agent", scope=meta)
            self.host.lifecycle("turn_end", {"turn_id": f"t{turn}"}, meta=meta)
        self.host.lifecycle("session_end", {}, meta=self.scope)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=str(EXAMPLES / "hooks.toml"))
    parser.add_argument("--session", default=f"demo-{uuid.uuid4().hex[:8]}", help="the session_key in events")
    parser.add_argument("--json", action="store_true", help="print one JSON record per tool call instead")
    args = parser.parse_args()
    binary = hookhost_binary()
    if binary is None:
        parser.error("no hookhost: run `cargo build -p hookhost-cli`, or set HOOKHOST_BIN")
    with Host.start(args.config, hookhost=binary) as host:
        agent = Agent(host, args.session)
        agent.run(quiet=args.json)
        calls = {s["hook"]: s["calls"] for s in host.stats()}
        code = host.close()
    for record in agent.records if args.json else []:
        print(json.dumps(record))
    if not args.json:
        print(f"hook calls: {json.dumps(calls)}; hookhost exited with status {code}")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
