#!/usr/bin/env bash
# Prints the set-up lines of README.md: the shell block between `<!-- setup:begin` and `<!-- setup:end -->`,
# without its fences. scripts/check-fresh-setup.sh and .ci/run run these lines, so the README cannot drift
# from what CI does.
#   scripts/readme-setup-lines.sh [README.md]
set -euo pipefail
readme="${1:-$(dirname "$0")/../README.md}"
lines="$(awk '/^<!-- setup:begin/ { on = 1; next } /^<!-- setup:end/ { on = 0 } on && !/^```/' "$readme")"
if [ -z "$lines" ]; then
  echo "readme-setup-lines: no set-up block (<!-- setup:begin … <!-- setup:end -->) in $readme" >&2
  exit 2
fi
printf '%s\n' "$lines"
