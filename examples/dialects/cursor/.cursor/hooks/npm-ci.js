#!/usr/bin/env node
// preToolUse (Shell): run a bare `npm install` as `npm ci`. updated_input
// carries the whole input back, other keys untouched. Cursor wants JSON on
// every path, so the pass-through answer is `{}`.
const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', () => {
  const event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  const input = event.tool_input || {};
  if (/^\s*npm\s+(install|i)\s*$/.test(input.command || '')) {
    console.log(JSON.stringify({
      permission: 'allow',
      updated_input: { ...input, command: 'npm ci' },
    }));
  } else {
    console.log('{}');
  }
});
