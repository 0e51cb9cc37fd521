#!/usr/bin/env bash
# The whole suite N times in a row with two busy loops beside it (issue 33's "Done when": three
# passes on a loaded two-core machine). Prints each pass's wall time, exit code and vitest's own
# summary line, then a line per pass; the busy loops are stopped however the script ends.
#
#   scripts/loaded-suite.sh [passes=3] [busy loops=2]
#
# Run it from a fresh clone after `npm ci`, as CI would; `npm test` builds dist/ before each pass.
# Each pass's full output is kept in $LOADED_SUITE_LOGS (default: a new folder under /tmp).
set -u
passes="${1:-3}"
loops="${2:-2}"
logs="${LOADED_SUITE_LOGS:-$(mktemp -d /tmp/skillsmith-loaded-suite-XXXXXX)}"
mkdir -p "$logs"
cd "$(dirname "$0")/.." || exit 1

busy=()
stop_busy() {
  for pid in "${busy[@]}"; do kill "$pid" 2>/dev/null; done
  wait "${busy[@]}" 2>/dev/null
}
trap stop_busy EXIT
trap 'exit 130' INT TERM
for _ in $(seq 1 "$loops"); do
  # A busy loop that keeps one core busy for as long as the script runs.
  yes >/dev/null &
  busy+=("$!")
done

echo "suite passes: $passes, busy loops: $loops (pids ${busy[*]}), logs in $logs"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
summary=()
failed=0
for pass in $(seq 1 "$passes"); do
  log="$logs/pass-$pass.log"
  started=$(date +%s)
  npm test >"$log" 2>&1
  code=$?
  seconds=$(($(date +%s) - started))
  # Vitest's "Test Files  ..." and "Tests  ..." lines, without colour codes.
  counts=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^ +(Test Files|Tests) ' | tr -s ' ' | sed 's/^ //' | paste -sd';' | sed 's/;/; /g')
  line="pass $pass: exit $code, ${seconds} s wall (load $(cut -d' ' -f1-3 /proc/loadavg)); ${counts:-no vitest summary}"
  echo "$line"
  sed 's/\x1b\[[0-9;]*m//g' "$log" | sed -n '/^Slowest /,/^Total: /p'
  summary+=("$line")
  [ "$code" -eq 0 ] || failed=$((failed + 1))
done

echo
printf '%s\n' "${summary[@]}"
echo "$((passes - failed)) of $passes passes passed"
[ "$failed" -eq 0 ]
