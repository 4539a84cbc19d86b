#!/usr/bin/env bash
# The Ranger's cold first run on a fresh clone: a generated N-node forest
# (gen_forest: MANAGED uncertain links, HEAT heat rows) is cloned with git,
# so the clone has no `_derived/` (no catalog, no health cache); only the
# heat store is copied in (it lives in `_derived/` too, never in git).
# Then `forest ranger run` at the generator's clock, twice (cold, then
# warm), each with wall time, peak RSS, phase timings and the health
# cache's hits and misses.
#   bash bench/ranger-clone.sh N [WORKDIR] [MANAGED] [HEAT]
# FOREST_BIN=path skips the release build (BASE_BIN=path adds a run of
# that binary on its own fresh clone first, for a before/after pair at the
# same load); REUSE=1 keeps a generated $W/forest.
set -euo pipefail
N="${1:-100000}"
W="${2:-/tmp/forest-bench-ranger-clone-$N}"
MANAGED="${3:-$((N / 10))}"
HEAT="${4:-$((N / 10))}"
NOW="${FOREST_BENCH_NOW:-2026-01-01T00:00:00Z}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
B="$(forest_bin)"
GEN="${GEN_BIN:-}"
if [ -z "$GEN" ]; then
  cargo build --release -q -p forest-ranger --example gen_forest
  GEN="$PWD/target/release/examples/gen_forest"
fi
if [ "${REUSE:-0}" = 1 ] && [ -d "$W/forest" ]; then
  echo "reusing $W/forest"
else
  rm -rf "$W/forest"; mkdir -p "$W"
  echo "generate: $(peak "$W/gen.out" "$GEN" "$W/forest" "$N" 180 "$MANAGED" "$HEAT")"
fi
echo "nodes: $(git -C "$W/forest" ls-files '*.md' | wc -l), load: $(cut -d' ' -f1-3 /proc/loadavg)"

# one_clone BIN LABEL: a fresh clone with the heat store, then two runs.
one_clone() {
  local bin=$1 label=$2 c="$W/clone-$2"
  rm -rf "$c"
  git clone -q "$W/forest" "$c"
  mkdir -p "$c/_derived"
  cp "$W/forest/_derived/trails.db" "$c/_derived/"
  for run in cold warm; do
    echo "$label ranger run ($run, --now $NOW, load $(cut -d' ' -f1 /proc/loadavg)): $(FOREST_LOG=off,forest_ranger=info,forest_derived=info peak "$W/$label-$run.json" "$bin" ranger run --forest "$c" --now "$NOW" --json)"
    python3 bench/ranger_summary.py "$W/$label-$run.json"
  done
  rm -rf "$c"
}

[ -n "${BASE_BIN:-}" ] && one_clone "$BASE_BIN" before
one_clone "$B" after
