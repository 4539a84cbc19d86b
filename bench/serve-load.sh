#!/usr/bin/env bash
# Issue 27: does one heavy client stall the others? A generated N-node forest
# (pipelines/forest-ranger/examples/gen_forest.rs) served by
# `forest serve --readonly --transport http`; CLIENTS MCP clients (official
# Python SDK, bench/serve_load.py) call `look` in a loop while one client runs
# forest-wide sniffs and huge locates. Prints the p50/p95/max of the others'
# `look` with and without the heavy client, the heavy calls' outcomes, and
# the server's VmHWM. Each client holds its own token. PACE=S makes each
# looker call once per S seconds (an agent thinking between calls) instead
# of back to back.
# usage: bench/serve-load.sh [N] [CLIENTS] [SECONDS]   (defaults 100000 50 20)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
N="${1:-100000}"; CLIENTS="${2:-50}"; SECONDS_="${3:-20}"
PROFILE="${PROFILE:-release}"; DIR=release; [ "$PROFILE" = dev ] && DIR=debug
TGT="${CARGO_TARGET_DIR:-target}"
cargo build --profile "$PROFILE" -q -p forest-cli
cargo build --profile "$PROFILE" -q -p forest-ranger --example gen_forest
PY="$(bash ops/mcp/install.sh)"
WORK="$(mktemp -d)"; trap 'kill "${SERVER:-0}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
FOREST="$WORK/forest"
"$TGT/$DIR/examples/gen_forest" "$FOREST" "$N" 180 0 0 >/dev/null
"$TGT/$DIR/forest" reindex --forest "$FOREST" >/dev/null
echo "forest: $N nodes ($PROFILE build)"
# One token per client (a team's agents each hold their own; the server
# caps requests in flight per token).
for i in $(seq 0 "$CLIENTS"); do
  "$TGT/$DIR/forest" token create "agent-$i" --scope read --forest "$FOREST" 2>/dev/null | tail -1 >> "$WORK/tokens"
done
"$TGT/$DIR/forest" serve --readonly --transport http --port 0 --forest "$FOREST" 2> "$WORK/serve.err" &
SERVER=$!
for _ in $(seq 100); do grep -q "http://" "$WORK/serve.err" 2>/dev/null && break; sleep 0.1; done
URL="$(grep -o 'http://[^ ]*' "$WORK/serve.err" | head -1)"
"$PY" bench/serve_load.py "$URL" "$CLIENTS" "$SECONDS_" "$WORK/tokens"
grep VmHWM "/proc/$SERVER/status"
