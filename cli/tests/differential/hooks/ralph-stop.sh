#!/usr/bin/env bash
# Stop: a loop in the style of the ralph-loop plugin (written for this
# corpus). While the project's .claude/ralph-loop.local.md says a loop is
# active, every stop is blocked and the prompt is fed back, until the
# iteration count reaches max_iterations; then the state file goes.
set -euo pipefail
state="${CLAUDE_PROJECT_DIR:-.}/.claude/ralph-loop.local.md"
cat > /dev/null
[ -f "$state" ] || exit 0
iteration=$(sed -n 's/^iteration: *//p' "$state")
max=$(sed -n 's/^max_iterations: *//p' "$state")
prompt=$(sed -n '/^---$/,$p' "$state" | sed '1d')
if [ "$iteration" -ge "$max" ]; then
  rm -f "$state"
  exit 0
fi
next=$((iteration + 1))
sed -i "s/^iteration: .*/iteration: $next/" "$state"
jq -cn --arg p "$prompt" --arg m "Ralph iteration $next" \
  '{decision: "block", reason: $p, systemMessage: $m}'
