#!/usr/bin/env node
// PreToolUse(Bash): keep the agent out of /etc. It was first written to
// print an allow for everything else; the allow is still printed, but for
// /etc it exits 2, and in Claude Code exit 2 blocks whatever stdout says.
let raw = '';
process.stdin.on('data', (chunk) => { raw += chunk; });
process.stdin.on('end', () => {
  const event = JSON.parse(raw);
  const command = (event.tool_input && event.tool_input.command) || '';
  process.stdout.write(JSON.stringify({
    hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow' },
  }) + '\n');
  if (command.includes('/etc/')) {
    process.stderr.write(`Refusing to touch /etc/ from the agent: ${command}\n`);
    process.exit(2);
  }
});
