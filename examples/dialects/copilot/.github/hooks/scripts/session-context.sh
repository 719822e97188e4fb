#!/usr/bin/env bash
# sessionStart: tell the agent the house rules once, as additionalContext.
source=$(jq -r '.source // "startup"')
jq -cn --arg s "$source" '{
  additionalContext: "House rules (\($s)): install with npm ci, run npm test before saying you are done, and never push without asking."
}'
