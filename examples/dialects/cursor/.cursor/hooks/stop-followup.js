#!/usr/bin/env node
// stop: when the agent finishes a run for the first time, send one follow-up
// (Cursor submits followup_message as the next user message). loop_count
// says how many follow-ups already ran; loop_limit in hooks.json caps them.
let raw = '';
process.stdin.on('data', (c) => { raw += c; });
process.stdin.on('end', () => {
  const { status, loop_count: loops = 0 } = JSON.parse(raw);
  if (status === 'completed' && loops === 0) {
    console.log(JSON.stringify({
      followup_message: 'Run npm test and tell me the result before you finish.',
    }));
  } else {
    console.log('{}');
  }
});
