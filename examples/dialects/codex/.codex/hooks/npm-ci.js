#!/usr/bin/env node
// PreToolUse(Bash): a bare `npm install` runs as `npm ci`. updatedInput
// replaces the input, and Codex wants a string `command` for Bash.
const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', () => {
  const event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  const input = event.tool_input || {};
  if (!/^\s*npm\s+(install|i)\s*$/.test(input.command || '')) return;
  console.log(JSON.stringify({
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'allow',
      permissionDecisionReason: 'lockfile install',
      updatedInput: { ...input, command: 'npm ci' },
    },
  }));
});
