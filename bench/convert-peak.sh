#!/usr/bin/env bash
# Transient memory of one conversion, per file and per format: each file is
# converted alone in a fresh process (examples/convert_peak.rs) and its peak
# RSS (VmHWM) recorded; per extension, the largest peak and the largest
# (peak - 6 MiB process floor) / file size. These are the figures behind
# the Gardener's per-format transient costs (stages/transient.rs).
#   bash bench/convert-peak.sh DIR...    (env CONVERT_PEAK: a built example)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
EX="${CONVERT_PEAK:-}"
if [ -z "$EX" ]; then cargo build --release -q -p forest-convert --example convert_peak; EX="$PWD/target/release/examples/convert_peak"; fi
OUT="$(mktemp /tmp/forest-peak.XXXX.tsv)"
trap 'rm -f "$OUT"' EXIT
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
find "$@" -type f -print0 | while IFS= read -r -d '' f; do "$EX" "$f" >> "$OUT" 2>/dev/null || true; done
python3 - "$OUT" <<'PY'
import collections, sys
by = collections.defaultdict(list)
for l in open(sys.argv[1]):
    ext, status, size, peak, path = l.rstrip("\n").split("\t", 4)
    by[ext].append((int(size), int(peak) / 1024, status, path))
print("| ext | files | largest file | peak RSS: median | max | max (peak-6 MiB)/size | dearest file |")
print("|---|---|---|---|---|---|---|")
for ext, rows in sorted(by.items(), key=lambda kv: -len(kv[1])):
    peaks = sorted(r[1] for r in rows)
    ratio = max(max(r[1] - 6, 0) * 2**20 / max(r[0], 1) for r in rows)
    top = max(rows, key=lambda r: r[1])
    print(f"| {ext} | {len(rows)} | {max(r[0] for r in rows)/1e6:.1f} MB | {peaks[len(peaks)//2]:.0f} MiB "
          f"| {peaks[-1]:.0f} MiB | {ratio:.1f} | {top[3].rsplit('/',1)[-1]} ({top[0]/1e6:.1f} MB, {top[2]}) |")
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
