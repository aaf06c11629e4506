#!/usr/bin/env bash
# Every `@unchecked Sendable` and `nonisolated(unsafe)` in Sources/ says why it is safe, on
# one of the three lines above ("// Safe because …"), and their number does not grow beyond the count
# recorded in scripts/unsafe-count (lower it when one goes).
set -euo pipefail
cd "$(dirname "$0")/.."
limit=$(cat scripts/unsafe-count)
count=0
missing=()
while IFS=: read -r file line _; do
    count=$((count + 1))
    # The reason on one of the three lines above (consecutive declarations share one).
    above=$(sed -n "$((line > 3 ? line - 3 : 1)),$((line - 1))p" "$file")
    if [[ "$above" != *"Safe because"* ]]; then missing+=("$file:$line"); fi
done < <(grep -rn --include='*.swift' -E '@unchecked Sendable|nonisolated\(unsafe\)' Sources | grep -v '^\S*:[0-9]*:\s*//')
if ((${#missing[@]})); then
    echo "check-unsafe: no \"// Safe because …\" line above:" >&2
    printf '  %s\n' "${missing[@]}" >&2
    exit 1
fi
if ((count > limit)); then
    echo "check-unsafe: $count unchecked-Sendable/nonisolated(unsafe) uses, more than the $limit recorded in scripts/unsafe-count" >&2
    exit 1
fi
echo "check-unsafe: $count uses (at most $limit), each with its reason"
