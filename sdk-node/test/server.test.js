// The stdio server, driven as the host drives it: a real child process
// (test/fixtures/everything.mjs) over its stdin and stdout.

import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { HookProcess, HookError } from "../src/testing.js";

const FIXTURE = fileURLToPath(new URL("fixtures/everything.mjs", import.meta.url));
const start = (options) => HookProcess.start([process.execPath, FIXTURE], { env: { PATH: process.env.PATH }, ...options });
const rpc = (id, method, params) => JSON.stringify({ jsonrpc: "2.0", id, method, params });
const waitFor = async (check, ms = 5000) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 10));
  }
};

test("hello declares exactly the registered stages and patterns, named after the script", async () => {
  const hook = await start();
  assert.deepEqual(hook.helloResult, {
    name: "everything", version: 1, intercept: ["before_tool", "approve_tool", "lifecycle"], observe: ["agent.*"],
  });
  assert.equal(await hook.close(), 0);
});

test("console.log, console.info and process.stdout.write go to stderr, never to the wire", async () => {
  const hook = await start();
  assert.deepEqual(await hook.call("before_tool", { tool: "print" }), { action: "continue" });
  assert.equal(await hook.close(), 0);
  assert.deepEqual(hook.garbage, []);
  for (const text of ["console.log output", "console.info output", "process.stdout.write output"]) {
    assert.ok(hook.stderr.includes(text), hook.stderr);
  }
});

test("a slow call does not hold up others; answers come by id, in any order", async () => {
  const hook = await start();
  const slow = hook.call("before_tool", { tool: "slow", arguments: { ms: 400 } });
  const began = Date.now();
  assert.deepEqual(await hook.call("before_tool", { tool: "sync" }), { action: "deny_tool", reason: "sync answer" });
  assert.ok(Date.now() - began < 300, "the fast call waited for the slow one");
  assert.deepEqual(await slow, { action: "deny_tool", reason: "slept 400" });
  const calls = Array.from({ length: 64 }, (_, i) =>
    hook.call("before_tool", { tool: "slow", arguments: { ms: 64 - i } }));
  const answers = await Promise.all(calls);
  answers.forEach((a, i) => assert.equal(a.reason, `slept ${64 - i}`));
  assert.equal(await hook.close(), 0);
});

test("string and integer ids are echoed exactly", async () => {
  const hook = await start();
  for (const id of ["7", 7, "id with spaces", 9007199254740991]) {
    const msg = await hook.request("hook.before_tool", { tool: "sync" }, id);
    assert.equal(msg.id, id);
  }
  hook.sendLine(rpc(1, "x", {}).replace('"id":1', '"id":9223372036854775807'));
  await waitFor(() => hook.messages.length === 6);
  assert.equal(hook.messages[5].error.code, -32601);
  assert.equal(await hook.close(), 0);
});

test("$/cancel_request aborts the handler's signal and answers -32800; unknown ids are ignored", async () => {
  const hook = await start();
  const pending = hook.request("hook.before_tool", { tool: "wait_for_cancel" }, 50);
  await new Promise((r) => setTimeout(r, 50));
  hook.notify("$/cancel_request", { id: 50 });
  hook.notify("$/cancel_request", { id: 999 });
  assert.deepEqual((await pending).error, { code: -32800, message: "request cancelled" });
  await waitFor(() => hook.stderr.includes("handler saw the abort"));
  assert.deepEqual(await hook.call("before_tool", { tool: "sync" }), { action: "deny_tool", reason: "sync answer" });
  assert.equal(await hook.close(), 0);
  assert.equal(hook.messages.filter((m) => m.id === 999).length, 0);
});

test("failures stay local: each gets its error code and the hook serves on", async () => {
  const hook = await start();
  const code = async (method, params) => (await hook.request(method, params)).error?.code;
  assert.equal(await code("hook.before_tool", { tool: "throw" }), -32603);
  const illegal = await hook.request("hook.before_tool", { tool: "illegal" });
  assert.match(illegal.error.message, /modifyResult\(\) is not allowed at before_tool; it belongs to after_tool/);
  const bad = await hook.request("hook.before_tool", { tool: "bad_object" });
  assert.match(bad.error.message, /unknown action "explode"/);
  assert.equal(await code("hook.no_such_method", {}), -32601);
  assert.equal(await code("hook.after_tool", { tool: "x", result: { for_llm: "" } }), -32601);
  const params = await hook.request("hook.before_tool", { tool: 5 });
  assert.equal(params.error.code, -32602);
  assert.match(params.error.message, /invalid type: integer `5`, expected a string/);
  assert.match(hook.stderr, /TypeError: boom/);
  hook.sendLine("not json");
  hook.sendLine('{"jsonrpc":"2.0","id":3,"method":');
  hook.sendLine("[1,2]");
  hook.sendLine("");
  hook.notify("hook.runtime_event", { id: "e", kind: "other.kind", time: "t" });
  hook.notify("hook.unknown", {});
  assert.deepEqual(await hook.call("approve_tool", { tool: "yes" }), { approved: true });
  assert.deepEqual(await hook.call("approve_tool", { tool: "no" }), { action: "continue" });
  const nulls = hook.messages.filter((m) => m.id === null).map((m) => m.error.code);
  assert.deepEqual(nulls, [-32700, -32700, -32600]);
  assert.equal(await hook.close(), 0);
  assert.deepEqual(hook.garbage, []);
});

test("a line that is not UTF-8 is a parse error (id null); one holding U+FFFD itself is a call", async () => {
  const hook = await start();
  hook.proc.stdin.write(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":3,"method":"hook.before_tool","params":{"tool":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}}\n')]));
  const answer = await hook.request("hook.before_tool", { tool: "sync\uFFFD" });
  assert.deepEqual(answer.result, { action: "continue" });
  const first = hook.messages[1];
  assert.deepEqual(first, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error: the message is not JSON" } });
  assert.equal(await hook.close(), 0);
});

test("a second request under an id still in flight is refused -32600, the first still answered", async () => {
  const hook = await start();
  hook.sendLine(rpc(5, "hook.before_tool", { tool: "slow", arguments: { ms: 200 } }));
  hook.sendLine(rpc(5, "hook.before_tool", { tool: "sync" }));
  await waitFor(() => hook.messages.filter((m) => m.id === 5).length === 2);
  const [refused, answered] = hook.messages.filter((m) => m.id === 5);
  assert.equal(refused.error.code, -32600);
  assert.deepEqual(answered.result, { action: "deny_tool", reason: "slept 200" });
  assert.equal(await hook.close(), 0);
});

test("lifecycle answers are checked against the event; unhandled request events pass", async () => {
  const hook = await start();
  const call = (event, payload) => hook.call("lifecycle", { event, payload });
  assert.deepEqual(await call("session_start", { source: "startup" }), {
    action: "continue", additional_context: "rules", system_message: "hi",
  });
  await assert.rejects(call("session_start", { source: "block" }), (err) =>
    err instanceof HookError && /block\(\) is not allowed at lifecycle event session_start/.test(err.message));
  assert.deepEqual(await call("before_compaction", {}), { action: "continue", summary: "short" });
  assert.deepEqual(await call("stop", {}), { action: "continue" });
  await assert.rejects(call("session_end", {}), (err) => err.code === -32602);
  assert.equal(await hook.close(), 0);
});

test("runtime events run one at a time in arrival order, all before the exit at EOF", async () => {
  const hook = await start();
  const event = (n, ms) => ({ id: `ev-${n}`, kind: "agent.turn.start", time: "2026-05-02T09:14:03Z", payload: { ms } });
  hook.notify("hook.runtime_event", event(1, 120));
  hook.notify("hook.runtime_event", event(2, 0));
  hook.notify("hook.runtime_event", event(3, 30));
  assert.equal(await hook.close(), 0);
  assert.match(hook.stderr, /seen ev-1,ev-2,ev-3\n/);
  assert.equal(hook.messages.length, 1, "only the hello is answered");
});

test("stdin EOF ends the hook within the grace period even with a handler that never settles", async () => {
  const hook = await start();
  hook.request("hook.before_tool", { tool: "wait_for_cancel" }).catch(() => {});
  await new Promise((r) => setTimeout(r, 50));
  const began = Date.now();
  assert.equal(await hook.close(), 0);
  assert.ok(Date.now() - began < 2000, `took ${Date.now() - began} ms`);
});

test("SIGTERM ends the hook with status 0", async () => {
  const hook = await start();
  hook.proc.kill("SIGTERM");
  assert.equal(await hook.exited, 0);
});

test("a 4 MiB argument arrives whole", async () => {
  const hook = await start();
  const data = "é".repeat(2 * 1024 * 1024);
  assert.deepEqual(await hook.call("before_tool", { tool: "echo_size", arguments: { data } }), {
    action: "respond", result: { for_llm: String(data.length) },
  });
  assert.equal(await hook.close(), 0);
});
