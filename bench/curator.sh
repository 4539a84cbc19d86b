#!/usr/bin/env bash
# Curator benchmark against the real local LLM server (SmolLM2-135M via
# llama.cpp/xllamacpp, ops/llm): curated adopt of N distinct dump-ingest
# documents at curation concurrency 1, 2, 4, 8.
#   bash bench/curator.sh [N=16] [SERVER_SLOTS=4]
# Prints documents/s, the share of wall time the run spent in the curate
# stage (overlapped with the next slice's conversion), and contract pass
# rates (first attempt / after retries or repair / fallback).
set -euo pipefail
N="${1:-16}"
SLOTS="${2:-4}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export FOREST_OPS_DIR="${FOREST_OPS_DIR:-/tmp/forest-ops-bench}"
export FOREST_LLM_PORT="${FOREST_LLM_PORT:-18095}"
export FOREST_LLM_PARALLEL="$SLOTS"
cargo build --release -q -p forest-cli
B="$PWD/target/release/forest"
URL="$(bash ops/llm/start.sh)"
W="$(mktemp -d /tmp/forest-bench-curator.XXXX)"
mkdir -p "$W/src"
find forests/fixtures/dump-ingest -type f -name '*.md' | sort | head -n "$N" | while read -r p; do
  cp "$p" "$W/src/$(basename "$p")"
done
echo "server slots: $SLOTS, documents: $N"
for c in 1 2 4 8; do
  rm -rf "$W/forest"
  "$B" init "$W/forest" --title Bench >/dev/null
  start=$(date +%s.%N)
  MONKEYLLM_LLM_ENDPOINT="$URL" FOREST_LLM_CONCURRENCY="$c" FOREST_LOG=info \
    "$B" adopt --forest "$W/forest" "$W/src" --curate --commit-every 8 --json >"$W/out.json" 2>"$W/err.log" || true
  end=$(date +%s.%N)
  python3 - "$c" "$start" "$end" "$N" "$W/out.json" "$W/err.log" <<'PY'
import json, re, sys
c, s, e, n, out, err = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
t = e - s
r = json.load(open(out))
st = r.get("curation") or {}
log = re.sub(r"\x1b\[[0-9;]*m", "", open(err).read())
curate_ms = sum(int(m) for m in re.findall(r'stage="curate".*?ms=(\d+)', log))
docs = st.get("llm_summaries", 0) + st.get("fallbacks", 0) + st.get("skipped", 0)
first = st.get("first_attempt", 0)
print(f"concurrency {c}: {t:6.1f} s  {n/t:5.2f} docs/s  curate stage {100*curate_ms/1000/t:5.1f}% of wall  "
      f"first-attempt {first}/{docs}  llm (after retries/repair) {st.get('llm_summaries',0)}/{docs}  "
      f"repaired {st.get('repaired',0)}  fallbacks {st.get('fallbacks',0)}  requests {st.get('requests',0)}  "
      f"links {st.get('links_proposed',0)}")
PY
done
FOREST_LLM_PORT="$FOREST_LLM_PORT" bash ops/llm/stop.sh >/dev/null 2>&1 || true
