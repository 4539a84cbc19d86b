#!/usr/bin/env bash
# Latency of the Vine primitives: in process (bench_vine) and over MCP stdio
# (official Python SDK client, ops/mcp/client.py) against `forest serve`, and
# the same stdio script against the reference engine's `vine serve`
# (monkeyllm 0.83 from PyPI) when WITH_REFERENCE=1.
# usage: bench/vine.sh FOREST [ROUNDS]      (FOREST must be a git forest)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
FOREST="$(cd "$1" && pwd)"; ROUNDS="${2:-100}"
# PROFILE=dev measures the debug build (deps at opt-level 1) when no release build fits.
PROFILE="${PROFILE:-release}"; DIR=release; [ "$PROFILE" = dev ] && DIR=debug
cargo build --profile "$PROFILE" -q -p forest-cli
cargo build --profile "$PROFILE" -q -p forest-vine --example bench_vine
echo "== in process ($PROFILE)"
"target/$DIR/examples/bench_vine" "$FOREST" "$ROUNDS"
PY="$(bash ops/mcp/install.sh)"
OUT="$(mktemp -d)"
"$PY" bench/vine_script.py "$FOREST" "$ROUNDS" > "$OUT/script.json"
summarise() { "$PY" bench/vine_summary.py "$1" "$OUT/script.json"; }
echo "== stdio: forest serve --readonly"
"$PY" ops/mcp/client.py "$OUT/script.json" -- "target/$DIR/forest" serve --readonly --forest "$FOREST" > "$OUT/forest.json"
summarise "$OUT/forest.json"
if [ "${WITH_REFERENCE:-0}" = "1" ]; then
  WITH_REFERENCE=1 bash ops/mcp/install.sh >/dev/null
  VINE="$(dirname "$PY")/vine"
  echo "== stdio: reference vine serve --readonly (monkeyllm 0.83)"
  # Its own copy: the reference keeps its own catalog and traces in _derived/.
  cp -r "$FOREST" "$OUT/ref-forest" && rm -rf "$OUT/ref-forest/_derived" "$OUT/ref-forest/.vine.lock"
  (cd "$OUT/ref-forest" && "$VINE" reindex >/dev/null 2>&1 || true)
  "$PY" ops/mcp/client.py "$OUT/script.json" -- "$VINE" serve --readonly --forest "$OUT/ref-forest" > "$OUT/ref.json"
  summarise "$OUT/ref.json"
fi
rm -rf "$OUT"
