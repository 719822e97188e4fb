#!/usr/bin/env node
// PostToolUse(Bash): after a failing `npm test`, tell Codex what to do next.
const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', () => {
  const event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  const command = (event.tool_input && event.tool_input.command) || '';
  const output = JSON.stringify(event.tool_response ?? '');
  const failing = output.match(/(\d+) failing/);
  if (!command.startsWith('npm test') || !failing) return;
  console.log(JSON.stringify({
    hookSpecificOutput: {
      hookEventName: 'PostToolUse',
      additionalContext: `${failing[1]} tests failing: fix them first; never skip or delete a test.`,
    },
  }));
});
