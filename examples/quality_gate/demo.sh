#!/usr/bin/env bash
# Sends one sub-agent's results to `hookhost serve --stdio` one at a time
# (each waits for its answer, as an agent waits before it retries) and
# prints each answer. Run from this folder: ./demo.sh [path/to/hookhost]
set -euo pipefail
HOOKHOST=${1:-hookhost}
coproc HOST { "$HOOKHOST" serve -c hooks.toml --stdio; }
n=0
for message in "draft, TODO: tests" "tests added, TODO: docs" "TODO" "finished" "TODO again" "done, XXX"; do
  n=$((n + 1))
  printf '{"jsonrpc":"2.0","id":%d,"method":"host.lifecycle","params":{"event":"subagent_stop","meta":{"session_key":"s-1"},"payload":{"agent_id":"sub-1","last_assistant_message":"%s"}}}\n' \
    "$n" "$message" >&"${HOST[1]}"
  read -r answer <&"${HOST[0]}"
  printf '%-26s -> %s\n' "$message" "$answer"
done
exec {HOST[1]}>&-
wait
