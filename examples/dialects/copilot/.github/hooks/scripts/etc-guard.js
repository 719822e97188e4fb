#!/usr/bin/env node
// preToolUse: prints an allow, but exits 2 (with the reason on stderr) when
// a bash command touches /etc/. A non-zero exit denies the call in
// Copilot CLI's preToolUse, whatever stdout said.
let raw = '';
process.stdin.on('data', (c) => { raw += c; });
process.stdin.on('end', () => {
  const event = JSON.parse(raw);
  let args = event.toolArgs || {};
  if (typeof args === 'string') args = JSON.parse(args);
  console.log(JSON.stringify({ permissionDecision: 'allow' }));
  if (event.toolName === 'bash' && (args.command || '').includes('/etc/')) {
    console.error(`No changes under /etc/ from the agent: ${args.command}`);
    process.exit(2);
  }
});
