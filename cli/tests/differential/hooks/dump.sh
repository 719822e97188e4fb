#!/usr/bin/env bash
# A logging hook, as people write them: keeps what the agent sent (stdin),
# the folder it ran in and the variables it was given, under out/ in the
# project (two folders above this script). Answers nothing.
set -eu
out="$(cd "$(dirname "$0")/../.." && pwd)/out"
mkdir -p "$out"
name="${1:-event}"
cat > "$out/$name.json"
{
  echo "cwd=$(pwd)"
  for v in HOME USER LANG CLAUDE_PROJECT_DIR CLAUDE_PLUGIN_ROOT CLAUDE_ENV_FILE \
           GEMINI_PROJECT_DIR GEMINI_CWD GEMINI_SESSION_ID GEMINI_PLANS_DIR CODEX_HOME; do
    if [ -n "${!v+x}" ]; then echo "$v=${!v}"; else echo "$v unset"; fi
  done
} > "$out/$name.env"
