#!/usr/bin/env bash
# Whole-process `forest locate` on a forest with a canopy: N random node
# titles as queries (from its catalog), the query memo removed before each
# (every query embedded in a fresh process), hybrid (the default) and then
# BM25 alone (`--fusion bm25`). Needs FOREST_EMBED_MODEL.
#   bash bench/locate-hybrid.sh FOREST [N=300]
set -euo pipefail
F="${1:?forest directory (with _derived/catalog.db and a canopy)}"
N="${2:-300}"
: "${FOREST_EMBED_MODEL:?name the embedding model directory (bash ops/embed/install.sh)}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
B="$(forest_bin)"
python3 - "$B" "$F" "$N" <<'PY'
import os, random, sqlite3, subprocess, sys, time
b, forest, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
db = sqlite3.connect(f"file:{forest}/_derived/catalog.db?mode=ro", uri=True)
titles = [t for (t,) in db.execute("SELECT title FROM nodes WHERE title != ''")]
random.seed(7)
qs = random.sample(titles, min(n, len(titles)))
memo = os.path.join(forest, "_derived", "embed-memo.db")
for label, extra in (("hybrid", []), ("bm25", ["--fusion", "bm25"])):
    ts = []
    for q in qs:
        for suf in ("", "-wal", "-shm"):
            try:
                os.remove(memo + suf)
            except FileNotFoundError:
                pass
        t = time.perf_counter()
        subprocess.run([b, "locate", "--forest", forest, *extra, "--json", q], check=True, capture_output=True)
        ts.append((time.perf_counter() - t) * 1000)
    ts.sort()
    print(f"{label}: {len(ts)} queries, p50 {ts[len(ts) // 2]:.1f} ms, p95 {ts[int(len(ts) * 0.95)]:.1f} ms, "
          f"slowest {ts[-1]:.1f} ms, load {os.getloadavg()[0]:.2f}")
PY
