#!/usr/bin/env node
// BeforeTool(run_shell_command): deny `rm -rf`, ask the user before `git push`.
let raw = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { raw += chunk; });
process.stdin.on('end', () => {
  const { tool_input: input = {} } = JSON.parse(raw);
  const command = input.command || '';
  if (/(^|[^\w])rm\s+-(rf|fr)(\s|$)/.test(command)) {
    console.log(JSON.stringify({
      decision: 'deny',
      reason: 'rm -rf is blocked by the project policy; delete specific files.',
    }));
  } else if (/(^|[^\w])git\s+push(\s|$)/.test(command)) {
    console.log(JSON.stringify({
      decision: 'ask',
      reason: 'git push publishes commits: confirm it.',
    }));
  }
});
