#!/usr/bin/env node
// approve_tool: let only the tools on an allowlist run.
//
// The allowlist is a TOML file with `allow = ["tool", ...]`, at the path in
// APPROVAL_ALLOWLIST (default `approval_allowlist.toml` in the working
// directory), read once at start. A missing or broken file stops the hook at
// start, so with `on_error = "deny"` the host refuses every tool: fail closed.
// Node has no TOML parser and the SDK has no dependencies, so the file is read
// by readAllowlist below, which accepts comments and that one key (an array of
// basic strings, on one line or several) and refuses anything else.

import { readFileSync } from "node:fs";
import { Hook, approve, refuse } from "@hookhost/sdk";

const PATH = process.env.APPROVAL_ALLOWLIST ?? "approval_allowlist.toml";

/** The `allow` array of a TOML text of the form `allow = ["a", "b"]`, comments allowed. */
function readAllowlist(text) {
  const body = text.split("\n").map((line) => line.replace(/^([^"#]*(?:"(?:[^"\\]|\\.)*"[^"#]*)*)#.*$/, "$1")).join("\n");
  const m = /^\s*allow\s*=\s*\[((?:\s*"(?:[^"\\\n]|\\.)*"\s*,?)*)\s*\]\s*$/.exec(body);
  if (m === null) {
    if (/^\s*$/.test(body)) return new Set();
    throw new Error('expected only `allow = ["tool", ...]` and comments');
  }
  return new Set([...m[1].matchAll(/"((?:[^"\\\n]|\\.)*)"/g)].map(([quoted]) => JSON.parse(quoted)));
}

let allowed;
try {
  allowed = readAllowlist(readFileSync(PATH, "utf8"));
} catch (err) {
  console.error(`approval: cannot read the allowlist ${PATH}: ${err.message}`);
  process.exit(1);
}

new Hook("approval")
  .approveTool((call) => (allowed.has(call.tool) ? approve() : refuse(`approval: tool \`${call.tool}\` is not on the allowlist`)))
  .run();
