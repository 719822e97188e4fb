// The Node example hooks (examples/node/): every shared case in
// examples/cases.json against the real example process, as the Python and
// Rust twins run them; the behaviour the Python tests pin beyond the cases;
// then end to end through the real `hookhost` binary with
// examples/hooks-node.toml. Run by scripts/test after
// `npm ci --prefix examples/node`, which links @hookhost/sdk.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { HookProcess } from "@hookhost/sdk/testing";

const EXAMPLES = fileURLToPath(new URL("..", import.meta.url));
const REPO = join(EXAMPLES, "..");
const CASES = JSON.parse(readFileSync(join(EXAMPLES, "cases.json"), "utf8"));
const NAMES = ["guard", "ls_human", "cache", "audit_log", "approval", "redact"];
const STAGES = ["before_llm", "after_llm", "before_tool", "after_tool", "approve_tool"];

/** Start an example as the host would: cwd examples/, only PATH plus `env`. */
const example = (name, env = {}) =>
  HookProcess.start([process.execPath, `node/${name}.mjs`], { cwd: EXAMPLES, env: { PATH: process.env.PATH, ...env } });

test("every shared case of cases.json gives exactly its expected result", async (t) => {
  for (const [name, cases] of Object.entries(CASES)) {
    if (name === "about") continue;
    assert.ok(NAMES.includes(name), `cases.json has cases for ${name}, which has no Node example`);
    for (const c of cases) {
      await t.test(`${name}: ${c.name}`, async () => {
        const unknown = Object.keys(c).filter((k) => !["name", "stage", "params", "expect", "state", "env"].includes(k));
        assert.deepEqual(unknown, []);
        assert.ok(STAGES.includes(c.stage));
        const hook = await example(name, c.env);
        assert.ok(hook.helloResult.intercept.includes(c.stage));
        for (const call of c.state ?? []) await hook.call(call.stage, call.params);
        assert.deepEqual(await hook.call(c.stage, c.params), c.expect);
        assert.equal(await hook.close(), 0);
        assert.deepEqual(hook.garbage, []);
      });
    }
  }
});

test("every example declares what it handles and exits cleanly", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hookhost-node-"));
  for (const name of NAMES) {
    const hook = await example(name, { AUDIT_LOG_FILE: join(dir, "audit.log") });
    assert.equal(hook.helloResult.version, 1);
    assert.equal(hook.helloResult.name, name);
    assert.ok(hook.helloResult.intercept.length || hook.helloResult.observe.length, name);
    assert.equal(await hook.close(), 0, name);
    assert.deepEqual(hook.garbage, []);
  }
});

test("the cache answers only within the TTL", async () => {
  const read = { tool: "shell", arguments: { command: "cat a" } };
  const hook = await example("cache", { CACHE_TTL_SECONDS: "0.3" });
  await hook.call("after_tool", { ...read, result: { for_llm: "A", silent: true } });
  assert.deepEqual(await hook.call("before_tool", read), { action: "respond", result: { for_llm: "A", silent: true } });
  await new Promise((r) => setTimeout(r, 400));
  assert.deepEqual(await hook.call("before_tool", read), { action: "continue" });
  assert.equal(await hook.close(), 0);
});

test("the cache never stores commands that may write", async () => {
  const hook = await example("cache");
  for (const command of ["cat a | grep x", "cat a > b", "cat $(x)", "cat `x`", "cat a; rm b", "cp a b"]) {
    const call = { tool: "bash", arguments: { command } };
    await hook.call("after_tool", { ...call, result: { for_llm: "out" } });
    assert.deepEqual(await hook.call("before_tool", call), { action: "continue" }, command);
  }
  assert.equal(await hook.close(), 0);
});

test("the guard checks rules in order and leaves other commands", async () => {
  const hook = await example("guard");
  for (const [command, rule] of [["ls\nsudo reboot", "sudo"], ["rm -rf x & mkfs /dev/sda", "rm-recursive-force"],
    ["mkfs -t ext4 /dev/sda", "mkfs"], ["dd of=/dev/sda if=/dev/zero", "dd"], ["x || rm --recursive -f y", "rm-recursive-force"]]) {
    assert.deepEqual(await hook.call("before_tool", { tool: "shell", arguments: { command } }), {
      action: "deny_tool", reason: `guard: rule \`${rule}\` denies this command: ${command}`,
    });
  }
  for (const command of ["dd of=/dev/null", "rm -f x", "rm --recursive x", "echo sudo", "sudoedit x"]) {
    assert.deepEqual(await hook.call("before_tool", { tool: "shell", arguments: { command } }), { action: "continue" });
  }
  assert.equal(await hook.close(), 0);
});

const event = (n, kind) => ({ id: `ev-${n}`, kind, time: "2026-05-02T09:14:03Z", source: "agent", payload: { n } });

test("audit_log appends each agent event as one JSON line", async () => {
  const log = join(mkdtempSync(join(tmpdir(), "hookhost-node-")), "audit.log");
  writeFileSync(log, '{"earlier": true}\n');
  const events = [event(1, "agent.turn.start"), event(2, "llm.call"), event(3, "agent.tool.exec_start"), event(4, "agent")];
  const hook = await example("audit_log", { AUDIT_LOG_FILE: log });
  assert.deepEqual(hook.helloResult.observe, ["agent.*"]);
  assert.deepEqual(hook.helloResult.intercept, []);
  for (const ev of events) hook.notify("hook.runtime_event", ev);
  assert.equal(await hook.close(), 0);
  assert.equal(hook.messages.length, 1, "events are never answered");
  const lines = readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(lines, [{ earlier: true }, events[0], events[2]]);
});

test("audit_log without a file warns once and writes nothing", async () => {
  const before = readdirSync(EXAMPLES).sort();
  const hook = await example("audit_log");
  hook.notify("hook.runtime_event", event(1, "agent.turn.start"));
  hook.notify("hook.runtime_event", event(2, "agent.turn.end"));
  assert.equal(await hook.close(), 0);
  assert.equal(hook.stderr.split("AUDIT_LOG_FILE is not set").length - 1, 1);
  assert.deepEqual(readdirSync(EXAMPLES).sort(), before);
});

test("approval without its allowlist, or with a broken one, fails at start", () => {
  const dir = mkdtempSync(join(tmpdir(), "hookhost-node-"));
  writeFileSync(join(dir, "broken.toml"), 'allow = ["shell"\n');
  writeFileSync(join(dir, "other.toml"), 'deny = ["shell"]\n');
  for (const file of ["missing.toml", "broken.toml", "other.toml"]) {
    const done = spawnSync(process.execPath, ["node/approval.mjs"], {
      cwd: EXAMPLES, env: { PATH: process.env.PATH, APPROVAL_ALLOWLIST: join(dir, file) }, input: "", timeout: 30_000,
    });
    assert.notEqual(done.status, 0, file);
    assert.match(done.stderr.toString(), /cannot read the allowlist/, file);
  }
});

// --- end to end through the real host ------------------------------------------

/** The hookhost binary: $HOOKHOST_BIN, else the newest of target/{release,debug}. */
function hookhost() {
  if (process.env.HOOKHOST_BIN) return process.env.HOOKHOST_BIN;
  const built = ["release", "debug"].map((p) => join(REPO, "target", p, "hookhost")).filter((p) => existsSync(p));
  assert.ok(built.length, "no hookhost binary: set HOOKHOST_BIN or run cargo build -p hookhost-cli");
  return built.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
}

const hostCall = (stage, params) =>
  JSON.parse(execFileSync(hookhost(), ["call", "-c", "examples/hooks-node.toml", stage, "--input", JSON.stringify(params)], {
    cwd: REPO, timeout: 60_000,
  }).toString());

test("through hookhost with hooks-node.toml: sudo denied, ls rewritten, redaction, approval, a clean pass", () => {
  assert.deepEqual(hostCall("before_tool", { tool: "shell", arguments: { command: "sudo rm -rf /" } }), {
    action: "deny_tool", reason: "guard: rule `sudo` denies this command: sudo rm -rf /",
  });
  const ls = { tool: "shell", arguments: { command: "ls", cwd: "/tmp" }, tool_call_id: "c1" };
  assert.deepEqual(hostCall("before_tool", ls), { action: "modify", call: { ...ls, arguments: { command: "ls -h", cwd: "/tmp" } } });
  const out = { tool: "shell", arguments: { command: "env" }, result: { for_llm: "KEY=sk-abcdefghijklmnopqrstuvwxyz", for_user: "clean" } };
  assert.deepEqual(hostCall("after_tool", out), {
    action: "modify", result: { ...out, result: { for_llm: "KEY=[REDACTED]", for_user: "clean" } },
  });
  assert.deepEqual(hostCall("approve_tool", { tool: "curl" }), {
    approved: false, reason: "approval: tool `curl` is not on the allowlist",
  });
  assert.deepEqual(hostCall("approve_tool", { tool: "read_file" }), { approved: true });
  assert.deepEqual(hostCall("before_tool", { tool: "shell", arguments: { command: "echo hi" } }), { action: "continue" });
});
