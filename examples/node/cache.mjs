#!/usr/bin/env node
// Answer repeated read-only tool calls from a cache instead of running them.
//
// after_tool fills the cache; before_tool answers a call with the same tool
// and the same arguments (compared as canonical JSON) with `respond` while the
// entry is younger than CACHE_TTL_SECONDS (default 300). Only calls that
// cannot change anything are cached: `read_file`, `list_dir`, and shell tools
// running one simple command whose first word is cat, head, tail, ls, wc or
// stat. Failed results are never cached.

import { Hook, respond } from "@hookhost/sdk";

const SHELL_TOOLS = new Set(["shell", "bash", "Bash", "exec"]);
const READ_ONLY_TOOLS = new Set(["read_file", "list_dir"]);
const READ_ONLY_COMMANDS = new Set(["cat", "head", "tail", "ls", "wc", "stat"]);
const SHELL_SYNTAX = [";", "&", "|", ">", "<", "`", "$(", "\n"];
const TTL_MS = Number.parseFloat(process.env.CACHE_TTL_SECONDS ?? "300") * 1000;

const cache = new Map(); // key -> [stored at (ms), tool result]

/** JSON with object keys sorted at every depth, so equal arguments give equal keys. */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** The cache key of a read-only call, or null when the call may write. */
function cacheKey(call) {
  if (SHELL_TOOLS.has(call.tool)) {
    const command = call.arguments.command;
    if (typeof command !== "string" || SHELL_SYNTAX.some((s) => command.includes(s))) return null;
    const words = command.split(/\s+/).filter(Boolean);
    if (words.length === 0 || !READ_ONLY_COMMANDS.has(words[0])) return null;
  } else if (!READ_ONLY_TOOLS.has(call.tool)) {
    return null;
  }
  return canonical([call.tool, call.arguments]);
}

new Hook("cache")
  .beforeTool((call) => {
    const key = cacheKey(call);
    const entry = key === null ? undefined : cache.get(key);
    if (entry !== undefined && performance.now() - entry[0] < TTL_MS) return respond(entry[1]);
    return undefined;
  })
  .afterTool((output) => {
    const key = cacheKey(output);
    if (key !== null && !output.result.is_error) {
      const kept = Object.fromEntries(
        Object.entries(output.result).filter(([k]) => ["for_llm", "for_user", "silent"].includes(k)),
      );
      cache.set(key, [performance.now(), kept]);
    }
    return undefined;
  })
  .run();
