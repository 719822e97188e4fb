#!/usr/bin/env node
// before_tool: deny dangerous shell commands.
//
// Rules, in order (the first that matches wins): `sudo`, `rm-recursive-force`,
// `mkfs`, `dd`, `fork-bomb`. A command line is split into simple commands at
// `;`, `&&`, `||`, `|`, `&` and newlines; a simple command is split into words
// at whitespace. This is a tripwire for honest mistakes, not a sandbox: it
// does not parse quoting, so pair it with approval for real isolation.

import { Hook, deny } from "@hookhost/sdk";

const SHELL_TOOLS = new Set(["shell", "bash", "Bash", "exec"]);
const SEPARATOR = /&&|\|\||[;|&\n]/;
const FORK_BOMB = ":(){:|:&};:";

/** The letters of every short option cluster (`-rfv` gives `rfv`). */
const shortFlags = (words) => words.filter((w) => w.startsWith("-") && !w.startsWith("--")).map((w) => w.slice(1)).join("");

function rmRecursiveForce(words) {
  if (words[0] !== "rm") return false;
  const flags = shortFlags(words.slice(1));
  const recursive = words.includes("--recursive") || flags.includes("r") || flags.includes("R");
  return recursive && (words.includes("--force") || flags.includes("f"));
}

const RULES = [
  ["sudo", (words) => words[0] === "sudo"],
  ["rm-recursive-force", rmRecursiveForce],
  ["mkfs", (words) => words[0] === "mkfs" || words[0].startsWith("mkfs.")],
  ["dd", (words) => words[0] === "dd" && words.some((w) => w.startsWith("if="))],
];

function violatedRule(command) {
  const commands = command.split(SEPARATOR).map((piece) => piece.split(/\s+/).filter(Boolean)).filter((w) => w.length);
  for (const [rule, matches] of RULES) {
    if (commands.some(matches)) return rule;
  }
  return command.split(/\s+/).join("").includes(FORK_BOMB) ? "fork-bomb" : null;
}

new Hook("guard")
  .beforeTool((call) => {
    const command = call.arguments.command;
    if (SHELL_TOOLS.has(call.tool) && typeof command === "string") {
      const rule = violatedRule(command);
      if (rule !== null) return deny(`guard: rule \`${rule}\` denies this command: ${command}`);
    }
    return undefined;
  })
  .run();
