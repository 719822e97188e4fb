// What `npm pack` makes of sdk-node (scripts/package runs it) is what a user
// installs: only the sources, types and README; installable with no
// registry (no dependencies); and a hook importing "@hookhost/sdk" from the
// installed package answers over stdio, typed for TypeScript through
// `exports`.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { HookProcess } from "../src/testing.js";

const SDK = fileURLToPath(new URL("..", import.meta.url));
const npm = (args, cwd) => execFileSync("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], { cwd, timeout: 120_000 }).toString();

test("the packed tarball holds only what it should and installs offline into a working hook", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hookhost-sdk-pack-"));
  const [packed] = JSON.parse(npm(["pack", "--json", "--pack-destination", dir], SDK));
  const files = packed.files.map((f) => f.path).sort();
  const version = JSON.parse(readFileSync(join(SDK, "package.json"), "utf8")).version;
  assert.equal(packed.name, "@hookhost/sdk");
  assert.equal(packed.version, version);
  assert.deepEqual(files.filter((f) => !/^src\/[a-z-]+\.(js|d\.ts)$/.test(f)), ["README.md", "package.json"]);
  for (const f of ["src/index.js", "src/index.d.ts", "src/testing.js", "src/testing.d.ts", "src/server.js"]) {
    assert.ok(files.includes(f), f);
  }

  const app = join(dir, "app");
  mkdirSync(app);
  npm(["init", "-y"], app);
  npm(["install", "--offline", join(dir, packed.filename)], app);
  writeFileSync(join(app, "hook.mjs"), [
    'import { Hook, deny } from "@hookhost/sdk";',
    'new Hook("packed").beforeTool((c) => (c.tool === "rm" ? deny("no rm") : undefined)).run();',
  ].join("\n"));
  const hook = await HookProcess.start([process.execPath, "hook.mjs"], { cwd: app, env: { PATH: process.env.PATH } });
  assert.equal(hook.helloResult.name, "packed");
  assert.deepEqual(await hook.call("before_tool", { tool: "rm" }), { action: "deny_tool", reason: "no rm" });
  assert.equal(await hook.close(), 0);

  // TypeScript resolves the installed package's types through `exports`.
  writeFileSync(join(app, "check.mts"), [
    'import { Hook, deny } from "@hookhost/sdk";',
    'import { HookProcess } from "@hookhost/sdk/testing";',
    'new Hook("t").beforeTool((c) => deny(c.tool));',
    "// @ts-expect-error: a reason is a string",
    "deny(1);",
    "void HookProcess;",
  ].join("\n"));
  const tsc = join(SDK, "node_modules", ".bin", "tsc");
  execFileSync(tsc, ["--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext", "check.mts"], {
    cwd: app, timeout: 120_000,
  });
});
