#!/usr/bin/env bash
# Distributed ingest throughput (issue 16): curated docs/s of the workers
# from 1 to 4 workers and from 1 to 4 endpoints, against a scripted LLM
# that answers in 200 ms with 4 slots per endpoint (bench/scripted_llm.py),
# and the committer's own time per 10^4 prepared files.
#
#   bash bench/dist.sh            # DOCS=400 COMMIT_FILES=10000 by default
#
# Needs a release build (cargo build --release -p forest-cli). Per worker the
# Curator keeps FOREST_LLM_CONCURRENCY (=1 here) requests in flight per
# endpoint, so the server slots, not one worker, bound the throughput:
#   workers W over 4 endpoints: W*4 in flight of 16 slots;
#   4 workers over E endpoints: 4*E in flight of 4*E slots.
# Stores are directories (the S3 path is covered by the acceptance test).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BIN="${FOREST_BIN:-$PWD/target/release/forest}"
DOCS="${DOCS:-400}"
COMMIT_FILES="${COMMIT_FILES:-10000}"
BASE_PORT="${BENCH_LLM_PORT:-18300}"
W="$(mktemp -d /tmp/forest-bench-dist.XXXXXX)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$W"; }
trap cleanup EXIT
export FOREST_TODAY=2026-11-29 MONKEYLLM_LLM_MODEL=bench-model FOREST_LLM_CONCURRENCY=1

for i in 0 1 2 3; do
  python3 bench/scripted_llm.py --port $((BASE_PORT + i)) --slots 4 --latency-ms 200 &
  pids+=($!)
done
sleep 1
endpoints() { # first N endpoints, comma separated
  local n=$1 out=""
  for ((i = 0; i < n; i++)); do out+="${out:+,}http://127.0.0.1:$((BASE_PORT + i))/v1"; done
  echo "$out"
}

python3 forests/gen_corpus.py --files "$DOCS" --out "$W/corpus" >/dev/null
"$BIN" init "$W/forest" >/dev/null
"$BIN" adopt --forest "$W/forest" "$W/corpus" --name drive --record-only >/dev/null
for i in 0 1 2 3; do git clone -q "$W/forest" "$W/clone$i"; done

# run_workers WORKERS ENDPOINTS -> prints docs/s of curated documents
run=0
run_workers() {
  run=$((run + 1))
  local workers=$1 eps=$2 store="$W/store-$run"
  local t0 t1 curated=0 wpids=()
  # Fresh state per run: no curation cache hits from an earlier run.
  for ((i = 0; i < workers; i++)); do rm -rf "$W/clone$i/_derived"; done
  t0=$(date +%s.%N)
  for ((i = 0; i < workers; i++)); do
    MONKEYLLM_LLM_ENDPOINT="$(endpoints "$eps")" "$BIN" sync --forest "$W/clone$i" --shard "$i/$workers" \
      --store "$store" --curate --json >"$W/w$i.json" &
    wpids+=($!)
  done
  for p in "${wpids[@]}"; do wait "$p"; done
  t1=$(date +%s.%N)
  for ((i = 0; i < workers; i++)); do
    curated=$((curated + $(python3 -c 'import json,sys; print(sum(s["curated"] for s in json.load(open(sys.argv[1]))["sources"]))' "$W/w$i.json")))
  done
  python3 -c "import sys; c,t=int(sys.argv[1]),float(sys.argv[2]); print(f'{c} curated in {t:.1f} s = {c/t:.1f} docs/s')" "$curated" "$(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$t0" "$t1")"
}

echo "== workers (4 endpoints x 4 slots, 200 ms, 1 request in flight per endpoint per worker), $DOCS docs"
for w in 1 2 4; do printf 'workers=%d: ' "$w"; run_workers "$w" 4; done
echo "== endpoints (4 workers)"
for e in 1 2 4; do printf 'endpoints=%d: ' "$e"; run_workers 4 "$e"; done

echo "== committer time per $COMMIT_FILES prepared files (no --curate: store lookups, plan, commit)"
python3 forests/gen_corpus.py --files "$COMMIT_FILES" --out "$W/big" >/dev/null
"$BIN" init "$W/bigforest" >/dev/null
"$BIN" adopt --forest "$W/bigforest" "$W/big" --name drive --record-only >/dev/null
git clone -q "$W/bigforest" "$W/bigclone"
"$BIN" sync --forest "$W/bigclone" --shard 0/1 --store "$W/bigstore" --json >"$W/bigw.json"
t0=$(date +%s.%N)
"$BIN" sync --forest "$W/bigforest" --store "$W/bigstore" --json >"$W/bigc.json"
t1=$(date +%s.%N)
python3 - "$W/bigc.json" "$(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$t0" "$t1")" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["sources"][0]
t = float(sys.argv[2])
print(f"committer: {len(r['planted'])} planted, store_hits {r['store_hits']}, local_conversions {r['local_conversions']} in {t:.1f} s")
PY
