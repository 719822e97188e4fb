#!/usr/bin/env bash
# PreToolUse: refuses commands listed in the user's own blocklist,
# ~/.config/agent-blocklist, one word a line. Written as such scripts
# are: `set -euo pipefail`, $HOME read directly.
set -euo pipefail
list="$HOME/.config/agent-blocklist"
cmd=$(jq -r '.tool_input.command // ""')
[ -f "$list" ] || exit 0
while read -r word; do
  if [ -n "$word" ] && [[ "$cmd" == *"$word"* ]]; then
    echo "'$word' is on your blocklist ($list)" >&2
    exit 2
  fi
done < "$list"
