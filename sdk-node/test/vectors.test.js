// The spec's shared test vectors (spec/vectors) against the SDK, as the
// Python SDK runs them: envelope.json (every line classified), every
// method's params (valid pass, invalid are rejected with the reference's
// words), every stage's results (decoded to the vector's decision, or
// rejected), and merge_patch.json (apply, and diff leading to the same
// result). Not run: chain.json (the host's fold) and hook.hello results (the
// SDK answers hello, it never decodes one; its own answer is checked in
// server.test.js). JavaScript numbers cannot tell 1 from 1.0, so the
// vectors' "1 and 1.0 differ" is not checked for values, only for ids,
// which the SDK reads from the line's text.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { checkParams, decodeResult } from "../src/schema.js";
import { classify } from "../src/wire.js";
import { apply, diff } from "../src/merge-patch.js";

const VECTORS = fileURLToPath(new URL("../../spec/vectors/", import.meta.url));
const load = (name) => JSON.parse(readFileSync(VECTORS + name, "utf8"));

function strictKeys(item, allowed, where) {
  const unknown = Object.keys(item).filter((k) => !allowed.includes(k));
  assert.deepEqual(unknown, [], `${where}: unknown members in case ${item.name}`);
}

test("envelope.json: every line is classified as the reference does", () => {
  const cases = load("envelope.json");
  assert.ok(cases.length > 0);
  for (const c of cases) {
    strictKeys(c, ["name", "line", "expect", "id", "method", "error_code"], "envelope.json");
    const msg = classify(c.line);
    assert.equal(msg.kind, c.expect, `${c.name}: ${msg.problem}`);
    // A 64-bit id beyond 2^53 is a BigInt here; the vector, read by JSON.parse, holds the nearest double.
    const id = typeof msg.id === "bigint" ? Number(msg.id) : msg.id;
    assert.deepEqual(id, c.id ?? null, c.name);
    if (c.expect === "request" || c.expect === "notification") {
      assert.equal(msg.method, c.method, c.name);
      assert.equal(typeof msg.params, "object", c.name);
    }
  }
});

test("an id beyond 2^53 is echoed digit for digit", () => {
  const msg = classify('{"jsonrpc":"2.0","id":9223372036854775807,"method":"m","params":{"id":1.5}}');
  assert.equal(msg.kind, "request");
  assert.equal(msg.id, 9223372036854775807n);
  assert.equal(classify('{"jsonrpc":"2.0","id":9223372036854775808,"method":"m"}').kind, "invalid");
  assert.equal(classify('{"jsonrpc":"2.0","params":{"id":1},"id":1.0,"method":"m"}').kind, "invalid");
});

const METHOD_FILES = readdirSync(VECTORS + "methods").filter((f) => f.endsWith(".json")).sort();
const KNOWN = ["hook.hello", "hook.before_llm", "hook.after_llm", "hook.before_tool", "hook.after_tool",
  "hook.approve_tool", "hook.runtime_event", "hook.lifecycle", "$/cancel_request"];

test("methods/*.json: params", () => {
  assert.ok(METHOD_FILES.length > 0, "spec/vectors/methods is empty");
  for (const file of METHOD_FILES) {
    const data = load(`methods/${file}`);
    strictKeys(data, ["method", "params", "results"], file);
    assert.ok(KNOWN.includes(data.method), `${file} names a method the SDK does not know`);
    assert.ok(data.params.valid.length && data.params.invalid.length, file);
    for (const c of data.params.valid) {
      strictKeys(c, ["name", "value"], file);
      assert.doesNotThrow(() => checkParams(data.method, c.value), `${file}: ${c.name}`);
    }
    for (const c of data.params.invalid) {
      strictKeys(c, ["name", "value", "error_contains"], file);
      assert.throws(() => checkParams(data.method, c.value), (err) => err.message.includes(c.error_contains),
        `${file}: ${c.name}: expected an error containing ${c.error_contains}`);
    }
  }
});

test("methods/*.json: results of every stage", () => {
  let checked = 0;
  for (const file of METHOD_FILES) {
    const data = load(`methods/${file}`);
    if (data.results === null || data.method === "hook.hello") continue;
    const stage = data.method.slice("hook.".length);
    for (const c of data.results.valid) {
      strictKeys(c, ["name", "value", "decision", "event"], file);
      assert.deepEqual(decodeResult(stage, c.value, c.event), c.decision, `${file}: ${c.name}`);
      checked++;
    }
    for (const c of data.results.invalid) {
      strictKeys(c, ["name", "value", "error_contains", "event"], file);
      assert.throws(() => decodeResult(stage, c.value, c.event), (err) => err.message.includes(c.error_contains),
        `${file}: ${c.name}: expected an error containing ${c.error_contains}`);
      checked++;
    }
  }
  assert.ok(checked > 50, `only ${checked} result cases`);
});

test("merge_patch.json: apply, and diff leads to the same result", () => {
  const cases = load("merge_patch.json");
  assert.ok(cases.length > 0);
  for (const c of cases) {
    strictKeys(c, ["name", "target", "patch", "expected"], "merge_patch.json");
    const before = structuredClone(c.target);
    const after = apply(c.target, c.patch);
    assert.deepEqual(after, c.expected, c.name);
    assert.deepEqual(c.target, before, `${c.name}: apply changed its target`);
    const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
    if (isObject(c.target) && isObject(c.expected)) assert.deepEqual(apply(c.target, diff(c.target, c.expected)), c.expected, c.name);
  }
});
