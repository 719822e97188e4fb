#!/usr/bin/env node
// SessionStart / UserPromptSubmit: adds the project's notes to what the
// model reads (NOTES.md in the working folder), as JSON additionalContext.
const fs = require('fs');
let raw = '';
process.stdin.on('data', (c) => { raw += c; });
process.stdin.on('end', () => {
  const event = JSON.parse(raw);
  let notes = '';
  try { notes = fs.readFileSync('NOTES.md', 'utf8').trim(); } catch (e) { notes = 'no notes'; }
  process.stdout.write(JSON.stringify({
    hookSpecificOutput: { hookEventName: event.hook_event_name, additionalContext: `Project notes: ${notes}` },
  }));
});
