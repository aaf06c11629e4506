#!/usr/bin/env bash
# Runs the already built tests (swift test --skip-build, extra arguments passed on) and
# then lists the tests that were skipped — a missing tool or data set makes a test skip
# with its reason, never pass — by name, with their count. The exit status is swift test's.
set -uo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
${SWIFT:-swift} test --skip-build "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
skipped=$(grep -E '^➜ Test .*( skipped| was cancelled)' "$log" | sed -E 's/^➜ //' | sort -u || true)
count=$(printf '%s' "$skipped" | grep -c . || true)
echo
echo "skipped tests: $count"
[ -n "$skipped" ] && printf '%s\n' "$skipped" | sed 's/^/  /'
exit "$status"
