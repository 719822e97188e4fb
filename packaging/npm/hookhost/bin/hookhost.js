#!/usr/bin/env node
// `hookhost` from npm: runs the native binary that npm installed beside
// this package as the optional dependency for this platform
// (@hookhost/<platform>-<arch>), with the same arguments, standard streams,
// exit code and signals.
//
// Agents never go through this file: `hookhost install` writes the native
// binary's own path into their settings, so a hook call does not pay for
// starting Node.
"use strict";

const { spawn } = require("node:child_process");
const { constants } = require("node:os");
const path = require("node:path");

const PLATFORMS = require("../platforms.json");

/** Prints why hookhost cannot run here and exits as a usage error would. */
function fail(message) {
  process.stderr.write(`hookhost: ${message}\n`);
  process.exit(2);
}

/** The native binary's path, from this platform's package. */
function binary() {
  const key = `${process.platform}-${process.arch}`;
  const platform = PLATFORMS[key];
  if (!platform) {
    fail(
      `no build for ${key} (built: ${Object.keys(PLATFORMS).join(", ")}); ` +
        "build it from source with `cargo install hookhost-cli`",
    );
  }
  const name = `@hookhost/${key}`;
  let root;
  try {
    root = path.dirname(require.resolve(`${name}/package.json`));
  } catch {
    fail(
      `${name}, which holds the binary for this machine, is not installed. Either npm ` +
        "skipped it (--omit=optional, --no-optional): reinstall with `npm install -g hookhost`; " +
        `or no build for ${key} was published: hookhost runs on Linux only today, ` +
        "and `cargo install hookhost-cli` is the way elsewhere",
    );
  }
  return path.join(root, "bin", platform.exe);
}

/** Runs the binary; this process ends as it ends. */
function run(exe) {
  const child = spawn(exe, process.argv.slice(2), { stdio: "inherit" });
  // The binary has the terminal too, so a Ctrl-C reaches it directly; a
  // signal sent to this process alone (kill, a service manager) is passed on.
  const forward = (signal) => child.kill(signal);
  const signals = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
  for (const signal of signals) process.on(signal, forward);
  child.on("error", (error) => fail(`cannot run ${exe}: ${error.message}`));
  child.on("exit", (code, signal) => {
    for (const s of signals) process.off(s, forward);
    if (signal) {
      // End by the same signal, so a caller sees what the binary saw; if
      // Node ignores that signal, end with the shell's code for it.
      process.kill(process.pid, signal);
      process.exit(128 + (constants.signals[signal] ?? 0));
    }
    process.exit(code ?? 1);
  });
}

run(binary());
