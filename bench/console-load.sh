#!/usr/bin/env bash
# The web console at scale: a generated N-node forest
# (pipelines/forest-ranger/examples/gen_forest.rs) served by
# `forest serve --readonly --transport http`; one signed-in browser session
# (an unscoped read token) requests every console page R times in turn
# (bench/console_load.py, stdlib HTTP) and the p50/p95/max of each page
# are printed, with the first (cold) health page apart: it is gathered once
# per HEAD and scope, then served from memory for 30 s.
# usage: bench/console-load.sh [N] [R]   (defaults 1000000 200; HEAT=rows of heat, 100000;
#        FOREST=DIR serves an existing generated and indexed forest instead)
# Needs N x ~6 KiB of disk under $TMPDIR (10^6: ~12 GB with the catalog);
# the forest is deleted on exit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
N="${1:-1000000}"; R="${2:-200}"
PROFILE="${PROFILE:-release}"; DIR=release; [ "$PROFILE" = dev ] && DIR=debug
TGT="${CARGO_TARGET_DIR:-target}"
cargo build --profile "$PROFILE" -q -p forest-cli
cargo build --profile "$PROFILE" -q -p forest-ranger --example gen_forest
WORK="$(mktemp -d)"; trap 'kill "${SERVER:-0}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
if [ -n "${FOREST:-}" ]; then
  # An existing gen_forest forest (kept: the caller deletes it).
  echo "forest: $FOREST ($PROFILE build)"
else
  FOREST="$WORK/forest"
  t0=$(date +%s)
  "$TGT/$DIR/examples/gen_forest" "$FOREST" "$N" 180 0 "${HEAT:-100000}" >/dev/null
  "$TGT/$DIR/forest" reindex --forest "$FOREST" >/dev/null
  echo "forest: $N nodes ($PROFILE build), generated and indexed in $(( $(date +%s) - t0 )) s"
fi
"$TGT/$DIR/forest" token revoke console --forest "$FOREST" >/dev/null 2>&1 || true
TOKEN="$("$TGT/$DIR/forest" token create console --scope read --forest "$FOREST" 2>/dev/null | tail -1)"
"$TGT/$DIR/forest" serve --readonly --transport http --port 0 --forest "$FOREST" 2> "$WORK/serve.err" &
SERVER=$!
for _ in $(seq 600); do grep -q "http://" "$WORK/serve.err" 2>/dev/null && break; sleep 0.1; done
ADDR="$(grep -o 'http://[^/ ]*' "$WORK/serve.err" | head -1)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
python3 bench/console_load.py "$ADDR" "$TOKEN" "$R"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
grep VmHWM "/proc/$SERVER/status"
