#!/usr/bin/env bash
# The README's test line runs this: install what the suite needs from Debian when it is
# missing (browser tests, ACME, SMTP tools), then run the whole suite with bun test, one worker
# process per core.
set -uo pipefail
cd "$(dirname "$0")/.."

need=()
updated=0
command -v pebble >/dev/null 2>&1 || need+=(pebble)
command -v git >/dev/null 2>&1 || need+=(git)
command -v swaks >/dev/null 2>&1 || need+=(swaks)
perl -MNet::SSLeay -e1 >/dev/null 2>&1 || need+=(libnet-ssleay-perl) # swaks --tls
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test.sh: installing missing Debian packages: ${need[*]}" >&2
    updated=1
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}") >&2 \
      || echo "test.sh: could not install ${need[*]}; tests that need them will fail" >&2
  else
    echo "test.sh: missing ${need[*]} and cannot apt-get install (not root); tests that need them will fail" >&2
  fi
fi
# Page tests drive Chromium's headless shell, Debian's build of the same Chromium (D320: a
# browser context costs it a third of the CPU); the full `chromium` is the fallback.
if ! command -v chromium-headless-shell >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  [ "$updated" = 1 ] || apt-get update -qq >&2
  for browser in chromium-headless-shell chromium; do
    echo "test.sh: installing $browser for the page tests" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$browser" >&2 && break
  done
fi
command -v chromium-headless-shell >/dev/null 2>&1 || command -v chromium >/dev/null 2>&1 \
  || echo "test.sh: no Chromium (apt-get install chromium-headless-shell); the page tests will fail" >&2

# The type check (TypeScript 7's native compiler: about 12 s of one core, D325) runs beside the
# tests instead of before them; its errors are printed, and fail the run, once the tests are done.
echo "test.sh: type-checking (beside the tests)" >&2
typecheck_out=$(mktemp)
./node_modules/.bin/tsc --noEmit -p . >"$typecheck_out" 2>&1 &
typecheck_pid=$!
# A failed type check is printed and counted as one failure in the totals (a JUnit report of its own).
typecheck_result() {
  if wait "$typecheck_pid"; then
    rm -f "$typecheck_out"
    return 0
  fi
  echo "test.sh: the type check failed (tsc --noEmit -p .):" >&2
  cat "$typecheck_out" >&2
  rm -f "$typecheck_out"
  local report
  report=$(mktemp --suffix=.xml)
  printf '<testsuites tests="1" failures="1" skipped="0">\n  <testsuite name="tsc --noEmit -p ." tests="1" failures="1">\n  </testsuite>\n</testsuites>\n' >"$report"
  reports+=("$report")
  return 1
}

# Formatting is part of the suite (Biome, pinned; biome.json): `npm run format` fixes it.
echo "test.sh: checking formatting" >&2
./node_modules/.bin/biome format . >/dev/null 2>&1 \
  || { echo "test.sh: files are not formatted: run npm run format (npm run format:check lists them)" >&2; exit 1; }

# Integration tests start real servers (argon2id, SMTP, Chromium): give each test 30 s on a
# busy 2-core machine instead of bun's 5 s default (bunfig.toml cannot set it).
# With PIER_TEST_JOBS=N, test files run in N test processes (1 runs them all in one process):
# most of a test's time is spent waiting on servers, timers and child processes, so two on two
# cores nearly halve the suite. They take the slowest files first, by the
# per-file durations in test/timings.json (PIER_TEST_UPDATE_TIMINGS=1 rewrites it from this run).
# --no-isolate keeps what a serial run had: the files one process runs share one module
# registry, so the e2e files build the binary once per process, not once per file.
# (PIER_TEST_WORKERS is another knob: serving workers for every test server, test/helpers/pier.ts.)
# One process per core (at most 4) by default since full parallel runs passed on 2 cores under
# load 8-10 (D209): serial, the suite had reached the 10 minutes it has. PIER_TEST_JOBS=1 runs
# every file in one process.
# Bun's allocator (mimalloc) hands freed memory back to the system after 10 ms by default, and the
# test processes allocate and free servers, databases and pages all run long: they spent a tenth
# of their CPU faulting the same pages in again. A second's delay keeps that memory for reuse
# (D328); the test that measures a process's memory still catches a page held whole per view
# (checked by raising the in-memory file limit past its page).
export MIMALLOC_PURGE_DELAY="${MIMALLOC_PURGE_DELAY:-1000}"
cores=$(nproc 2>/dev/null || echo 1)
jobs=${PIER_TEST_JOBS:-$((cores > 4 ? 4 : cores))}
# Files whose assertions time something against this machine (a render within its own limit, an
# answer within a second, two medians alike), and the two that start dozens of `pier` commands
# at once (each loads the bundled CLI, test/helpers/cli.ts: half a core-second apiece, near their
# time limits when another process competes): they run afterwards in one process of their own, so
# a neighbouring test process's CPU does not decide them. A new such file is added here.
alone=(
  ./test/integration/accounts/admin-cli.test.ts
  ./test/integration/cli/client-commands.test.ts
  ./test/integration/mail/smtp-receiver.test.ts
  ./test/unit/readme-render-queue.test.ts
  ./test/unit/site-rules.test.ts
  ./test/security/analytics-flood.test.ts
  ./test/security/blob-possession.test.ts
  ./test/security/event-loop.test.ts
  ./test/security/mime.property.test.ts
  ./test/security/properties.test.ts
  ./test/security/request-bodies.test.ts
)
reports=()
run() {
  local report
  report=$(mktemp --suffix=.xml)
  reports+=("$report")
  ./node_modules/.bin/bun test --timeout 30000 "$@" --reporter=junit --reporter-outfile="$report"
}
if [ "$jobs" -le 1 ] || [ $# -gt 0 ]; then
  spread=()
  [ "$jobs" -gt 1 ] && spread=(--parallel="$jobs" --no-isolate --timings=test/timings.json)
  run "${spread[@]}" "$@"
  rc=$?
  typecheck_result || rc=1
else
  spread=(--parallel="$jobs" --no-isolate --timings=test/timings.json)
  [ "${PIER_TEST_UPDATE_TIMINGS:-}" = 1 ] && spread+=(--update-timings)
  for f in "${alone[@]}"; do spread+=(--path-ignore-patterns="${f#./}"); done
  run "${spread[@]}"
  rc=$?
  echo "test.sh: the files that time themselves or fill the CPU, in one process of their own" >&2
  run "${alone[@]}" || rc=1
  typecheck_result || rc=1
  # The totals of both runs, last, in bun's own words (.ci/run reads the last pass/fail lines).
  ./node_modules/.bin/bun run scripts/test-failures.ts --totals "${reports[@]}"
fi
[ "$rc" = 0 ] || ./node_modules/.bin/bun run scripts/test-failures.ts "${reports[@]}"
rm -f "${reports[@]}"
exit "$rc"
