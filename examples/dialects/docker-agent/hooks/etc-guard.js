#!/usr/bin/env node
// pre_tool_use (shell): answers allow, but exits 2 with a reason on stderr
// when the command touches /etc/. docker-agent reads JSON only on exit 0,
// so the exit 2 is what counts: the call is blocked.
let raw = '';
process.stdin.on('data', (c) => { raw += c; });
process.stdin.on('end', () => {
  const cmd = (JSON.parse(raw).tool_input || {}).cmd || '';
  process.stdout.write('{"hook_specific_output":{"hook_event_name":"pre_tool_use","permission_decision":"allow"}}\n');
  if (cmd.includes('/etc/')) {
    process.stderr.write(`the agent does not edit /etc/: ${cmd}\n`);
    process.exitCode = 2;
  }
});
