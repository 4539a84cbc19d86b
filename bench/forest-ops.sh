#!/usr/bin/env bash
# validate / reindex / locate / ranger on an existing forest (for example the
# one bench/gardener.sh 100000 leaves in /tmp/forest-bench-100000/forest, or
# the 10^6-node one `cargo run --release -p forest-ranger --example gen_forest`
# writes).
#   bash bench/forest-ops.sh FOREST [QUERIES]    (FOREST_BIN=path skips the build)
# locate: QUERIES (default 300) whole `forest locate` processes, queries drawn
# from the catalog (alternately a node's title and 3-6 consecutive words of a
# node's summary; fixed seed). ranger: two runs at the same --now instant.
set -euo pipefail
F="${1:?forest dir}"
NQ="${2:-300}"
NOW="${FOREST_BENCH_NOW:-2026-01-01T00:00:00Z}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
B="$(forest_bin)"
O=/tmp/forest-ops.$$.out
# A detached `git gc --auto` of an earlier Ranger run may be repacking:
# a vanished object directory must not end the bench.
N=$( (find "$F" -name '*.md' -not -path '*/.git/*' 2>/dev/null || true) | wc -l)
echo "nodes: $N"
echo "validate: $(peak "$O" "$B" validate --forest "$F")"
tail -n 2 "$O"
rm -rf "$F/_derived/catalog.db"*
echo "reindex:  $(peak "$O" "$B" reindex --forest "$F")"
python3 - "$B" "$F" "$NQ" <<'PY'
import random, sqlite3, subprocess, sys, time
b, f, nq = sys.argv[1], sys.argv[2], int(sys.argv[3])
db = sqlite3.connect(f"file:{f}/_derived/catalog.db?mode=ro", uri=True)
top = db.execute("SELECT MAX(rowid) FROM nodes").fetchone()[0]
rng = random.Random(14)
qs = []
while len(qs) < nq:
    row = db.execute("SELECT title, summary FROM nodes WHERE rowid = ?", (rng.randint(1, top),)).fetchone()
    if not row:
        continue
    if len(qs) % 2 == 0:
        qs.append(row[0])
    else:
        w = row[1].split()
        if not w:
            continue
        n = min(len(w), rng.randint(3, 6))
        at = rng.randint(0, len(w) - n)
        qs.append(" ".join(w[at:at + n]))
ts = []
for q in qs:
    t = time.perf_counter()
    subprocess.run([b, "locate", "--forest", f, "--json", q], check=True, capture_output=True)
    ts.append((time.perf_counter() - t) * 1000)
ts.sort()
print(f"locate (whole process, {len(ts)} queries from titles/summaries): "
      f"p50 {ts[len(ts)//2]:.1f} ms, p95 {ts[int(len(ts)*0.95)]:.1f} ms, max {ts[-1]:.1f} ms")
PY
echo "ranger run: $(peak "$O" "$B" ranger run --forest "$F" --now "$NOW" --json)"
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('  commit', r['commit'], 'promoted', len(r['links']['promoted']), 'pruned', len(r['links']['pruned']), 'timings_ms', r['timings_ms'])" "$O" || tail -3 "$O"
echo "ranger run (again, same --now): $(peak "$O" "$B" ranger run --forest "$F" --now "$NOW" --json)"
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('  commit', r['commit'], 'timings_ms', r['timings_ms'])" "$O" || tail -3 "$O"
rm -f "$O" "$O.err"
