#!/usr/bin/env bash
# A forest's first Ranger run after an adopt (issue 14): adopt a wide corpus
# of N files, add MANAGED uncertain links and HEAT heat rows
# (gen_forest --augment, which rewrites MANAGED passports outside the
# Gardener), then `forest ranger run` twice at the same instant. The
# Gardener fills the health cache as it writes, so the first run re-reads
# only the passports written outside it; the health cache's hits and misses
# are printed from the `ranger.health_cache` event.
#   bash bench/ranger-first.sh N [WORKDIR] [MANAGED] [HEAT]
# FOREST_BIN=path skips the release build; SRC=dir reuses a corpus
# (forests/gen_corpus.py --layout wide); REUSE=1 keeps an adopted
# $W/forest (and skips the adopt and the augment).
set -euo pipefail
N="${1:-20000}"
W="${2:-/tmp/forest-bench-ranger-$N}"
MANAGED="${3:-$((N / 10))}"
HEAT="${4:-$N}"
NOW="${FOREST_BENCH_NOW:-2026-01-01T00:00:00Z}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
B="$(forest_bin)"
cargo build --release -q -p forest-ranger --example gen_forest
GEN="$PWD/target/release/examples/gen_forest"
if [ "${REUSE:-0}" = 1 ] && [ -d "$W/forest" ]; then
  echo "reusing $W/forest"
else
  S="${SRC:-$W/src}"
  rm -rf "$W/forest"; mkdir -p "$W"
  [ -d "$S" ] || python3 forests/gen_corpus.py --files "$N" --out "$S" --layout wide
  "$B" init "$W/forest" --title Bench >/dev/null
  echo "adopt:   $(peak "$W/adopt.json" "$B" adopt "$S" --forest "$W/forest" --json)"
  echo "augment: $(peak "$W/augment.out" "$GEN" --augment "$W/forest" "$MANAGED" "$HEAT")"
fi
echo "nodes: $( (find "$W/forest" -name '*.md' -not -path '*/.git/*' 2>/dev/null || true) | wc -l)"
for run in first second; do
  echo "ranger run ($run, --now $NOW): $(FOREST_LOG=off,forest_ranger=info peak "$W/ranger-$run.json" "$B" ranger run --forest "$W/forest" --now "$NOW" --json)"
  python3 bench/ranger_summary.py "$W/ranger-$run.json"
done
