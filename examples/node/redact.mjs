#!/usr/bin/env node
// after_tool: mask secrets in what the tool returned before the model sees it.
//
// Only the fields that changed are patched (`for_llm`, `for_user`), so other
// hooks' rewrites of the result survive; clean output continues untouched.
// The patterns are those of examples/python/redact.py, bounded the same way
// (JavaScript's regex engine backtracks as Python's does); Python's inline
// `(?i:...)` becomes the `i` flag where the rest of the pattern is
// case-insensitive anyway.

import { Hook, modifyResult } from "@hookhost/sdk";

const MASK = "[REDACTED]";
const PATTERNS = [ // applied in this order
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/gs, MASK],
  [/(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]{0,31}:\/\/)[^\s/@:]{1,256}:[^\s/@]{1,256}@/g, `$1${MASK}@`],
  [/(Bearer\s+)[A-Za-z0-9._~+/=-]+/g, `$1${MASK}`],
  [/(bearer\s+)[A-Za-z0-9._~+/=-]*[0-9][A-Za-z0-9._~+/=-]*/gi, `$1${MASK}`],
  [/eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/g, MASK],
  [/sk-[A-Za-z0-9_-]{16,}/g, MASK],
  [/[sr]k_(?:live|test)_[A-Za-z0-9]{10,}/g, MASK],
  [/AKIA[0-9A-Z]{16}/g, MASK],
  [/((?:aws[_-]?)?secret[_-]?access[_-]?key["']?\s*[:=]\s*["']?)[A-Za-z0-9/+]{40,}/gi, `$1${MASK}`],
  [/gh[pousr]_[A-Za-z0-9]{36,}/g, MASK],
  [/github_pat_[A-Za-z0-9_]{20,}/g, MASK],
  [/xox[abprs]-[A-Za-z0-9-]{10,}/g, MASK],
  [/AIza[0-9A-Za-z_-]{35}/g, MASK],
];

const redact = (text) => PATTERNS.reduce((out, [pattern, replacement]) => out.replace(pattern, replacement), text);

new Hook("redact")
  .afterTool((output) => {
    const changed = {};
    for (const field of ["for_llm", "for_user"]) {
      const text = output.result[field];
      if (typeof text !== "string") continue;
      const masked = redact(text);
      if (masked !== text) changed[field] = masked;
    }
    return Object.keys(changed).length ? modifyResult(changed) : undefined;
  })
  .run();
