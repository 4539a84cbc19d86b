#!/usr/bin/env bash
# Issue 31: hybrid `locate` over a canopy of N nodes (default 10^6).
#
# Embedding 10^6 scents with the CPU model takes ~17 h on 2 cores, so this
# bench does NOT embed the whole forest: it embeds SAMPLE real scents
# spread over the forest and fills every other row with a vector DERIVED
# from real ones (a normalised mix of two real vectors plus noise;
# crates/forest-vine/examples/canopy_scale.rs). The search cost measured
# here (an int8 scan of every row, the best candidates rescored in float32,
# then fusion with BM25) depends on the row count and width, not on the
# values; recall is measured elsewhere (bench/findability.sh).
#
# Steps: a generated N-node forest (pipelines/forest-ranger/examples/
# gen_forest.rs, as bench/serve-load.sh) and `forest reindex`; the canopy
# (fill); in-process hybrid `locate` p50/p95 (canopy_scale query, one
# engine, the model loaded once); whole-process `forest locate --hybrid`
# wall time for QUERIES queries (model load, catalog open, embed, scan,
# fusion, JSON) with the query memo missing (every query embedded) and
# then hit (`_derived/embed-memo.db`, K.6), beside `forest locate`
# BM25-only for comparison; the
# vector search alone (crates/forest-canopy/examples/canopy_scan.rs: int8
# scan vs binary pass, recall@25 against an exact scan) and the model load
# a fresh process pays, and the warm query embedding alone over QUERIES
# distinct queries (`canopy_scan embed`).
#
# usage: bench/canopy-scale.sh [N] [SAMPLE] [QUERIES] [DIR]
#   defaults 1000000 2000 50 and a temporary DIR (removed at the end); a
#   given DIR keeps the forest, and a forest already in DIR/forest is reused
#   (REFILL=1 rebuilds its canopy).
# needs FOREST_EMBED_MODEL (bash ops/embed/install.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
N="${1:-1000000}"; SAMPLE="${2:-2000}"; QUERIES="${3:-50}"; DIR="${4:-}"
: "${FOREST_EMBED_MODEL:?name the embedding model directory (bash ops/embed/install.sh)}"
PROFILE="${PROFILE:-release}"; OUT=release; [ "$PROFILE" = dev ] && OUT=debug
TGT="${CARGO_TARGET_DIR:-target}"
cargo build --profile "$PROFILE" -q -p forest-cli
cargo build --profile "$PROFILE" -q -p forest-ranger --example gen_forest
cargo build --profile "$PROFILE" -q -p forest-vine --example canopy_scale
cargo build --profile "$PROFILE" -q -p forest-canopy --example canopy_scan
BIN="$TGT/$OUT/forest"; EX="$TGT/$OUT/examples"
if [ -z "$DIR" ]; then
  DIR="$(mktemp -d)"; trap 'rm -rf "$DIR"' EXIT
fi
FOREST="$DIR/forest"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ ! -d "$FOREST" ]; then
  /usr/bin/time -f "gen_forest: %e s, peak RSS %M KiB" "$EX/gen_forest" "$FOREST" "$N" 180 0 0 >/dev/null
  /usr/bin/time -f "reindex: %e s, peak RSS %M KiB" "$BIN" reindex --forest "$FOREST" >/dev/null
fi
if [ ! -f "$FOREST/_derived/canopy/index.json" ] || [ "${REFILL:-0}" = 1 ]; then
  /usr/bin/time -f "fill: %e s, peak RSS %M KiB" "$EX/canopy_scale" fill "$FOREST" "$SAMPLE"
fi
du -sh "$FOREST/_derived/canopy" | sed 's/^/canopy on disk: /'
"$EX/canopy_scale" query "$FOREST" "$QUERIES"
# the vector search alone, int8 vs binary pass, with recall@25 against an
# exact float scan; then what a fresh process pays before its first search
"$EX/canopy_scan" time "$FOREST/_derived/canopy" "$QUERIES"
"$EX/canopy_scan" load
"$EX/canopy_scan" embed "$QUERIES"
python3 - "$BIN" "$FOREST" "$QUERIES" <<'PY'
import os, sqlite3, subprocess, sys, time
b, forest, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
db = sqlite3.connect(f"file:{forest}/_derived/catalog.db?mode=ro", uri=True)
titles = [r[0] for r in db.execute("SELECT title FROM nodes ORDER BY id")]
qs = titles[:: max(1, len(titles) // n)][:n]
memo = f"{forest}/_derived/embed-memo.db"
def forget():
    # the query memo (K.6): a removed file makes every query a miss
    for s in ("", "-wal", "-shm"):
        try:
            os.remove(memo + s)
        except FileNotFoundError:
            pass
def run(extra, check, miss=False):
    ts = []
    for q in qs:
        if miss:
            forget()
        t = time.perf_counter()
        p = subprocess.run([b, "locate", q, "--json", "--forest", forest, *extra], capture_output=True, text=True)
        ts.append((time.perf_counter() - t) * 1000)
        if p.returncode != 0 or (check and "BM25 only" in p.stderr):
            sys.exit(f"locate {extra} failed or fell back: {p.stderr.strip()}")
    ts.sort()
    return f"p50 {ts[len(ts)//2]:.1f} ms, p95 {ts[min(len(ts)-1, int(len(ts)*0.95))]:.1f} ms, max {ts[-1]:.1f} ms"
run(["--hybrid"], True, miss=True)  # warm the page cache once
print(f"forest locate --hybrid, whole process, memo miss (model load + embedding), {len(qs)} queries: {run(['--hybrid'], True, miss=True)}")
forget()
run(["--hybrid"], True)  # the queries' vectors memoised
print(f"forest locate --hybrid, whole process, memo hit, {len(qs)} queries: {run(['--hybrid'], True)}")
print(f"forest locate (BM25 only), whole process, {len(qs)} queries: {run([], False)}")
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
