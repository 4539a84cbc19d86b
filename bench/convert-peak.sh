#!/usr/bin/env bash
# Transient memory of one conversion, per file and per format: each file is
# adopted alone into a fresh forest (a fresh `forest` process) and its peak
# RSS recorded (/usr/bin/time); per extension, the largest peak and the
# largest (peak - FLOOR) / file size, FLOOR being the peak of adopting a
# 6-byte text file. These are the figures behind the Gardener's per-format
# transient costs (pipelines/forest-gardener/src/stages/transient.rs).
#   bash bench/convert-peak.sh FILE_OR_DIR...    (FOREST_BIN: else a release build)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
B="$(forest_bin)"
W="$(mktemp -d /tmp/forest-peak.XXXX)"
trap 'rm -rf "$W"' EXIT
one() { # file -> "ext size peak_kib name"
  local f="$1" d="$W/one"
  rm -rf "$d"; mkdir -p "$d/src"; cp "$f" "$d/src/"
  "$B" init "$d/forest" --title Peak >/dev/null 2>&1
  /usr/bin/time -f %M -o "$d/t" "$B" adopt --forest "$d/forest" "$d/src" --json >/dev/null 2>&1 || true
  local ext="${f##*.}"
  printf '%s\t%s\t%s\t%s\n' "${ext,,}" "$(stat -c %s "$f")" "$(tail -1 "$d/t")" "$(basename "$f")"
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'x\n' > "$W/floor.txt"
floor=$(one "$W/floor.txt" | cut -f3)
find "$@" -type f | while IFS= read -r f; do one "$f"; done > "$W/peaks.tsv"
python3 - "$W/peaks.tsv" "$floor" <<'PY'
import collections, sys
floor = int(sys.argv[2]) / 1024
by = collections.defaultdict(list)
for l in open(sys.argv[1]):
    ext, size, peak, name = l.rstrip("\n").split("\t", 3)
    by[ext].append((int(size), int(peak) / 1024, name))
print(f"floor (a 6-byte text file): {floor:.0f} MiB")
print("| ext | files | largest file | peak RSS median | max | max (peak - floor) / size | dearest file |")
print("|---|---|---|---|---|---|---|")
for ext, rows in sorted(by.items(), key=lambda kv: -len(kv[1])):
    peaks = sorted(r[1] for r in rows)
    ratio = max(max(r[1] - floor, 0) * 2**20 / max(r[0], 1) for r in rows)
    top = max(rows, key=lambda r: r[1])
    print(f"| {ext} | {len(rows)} | {max(r[0] for r in rows)/1e6:.1f} MB | {peaks[len(peaks)//2]:.0f} MiB "
          f"| {peaks[-1]:.0f} MiB | {ratio:.1f} | {top[2]} ({top[0]/1e6:.2f} MB) |")
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
