#!/usr/bin/env bash
# BeforeTool(run_shell_command): `npm install` -> `npm ci`. Gemini merges
# hookSpecificOutput.tool_input over the call's arguments, so only the
# changed field is sent.
cmd=$(jq -r '.tool_input.command // ""')
if [[ "$cmd" =~ ^[[:space:]]*npm[[:space:]]+(install|i)[[:space:]]*$ ]]; then
  jq -cn '{
    decision: "allow",
    hookSpecificOutput: { hookEventName: "BeforeTool", tool_input: { command: "npm ci" } }
  }'
fi
exit 0
