#!/usr/bin/env bash
# Gardener benchmark: adopt, no-change sync and a 10-file change sync of a
# generated corpus (md/txt/csv mix, nested up to 4 deep).
#   bash bench/gardener.sh 10000 [WORKDIR]
# Prints wall time, files/s, MB/s, peak RSS (from /proc via a poller), forest size.
set -euo pipefail
N="${1:-10000}"
W="${2:-/tmp/forest-bench-$N}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --release -q -p forest-cli
B="$PWD/target/release/forest"
rm -rf "$W"; mkdir -p "$W"
python3 forests/gen_corpus.py --files "$N" --out "$W/src"
SRC_BYTES=$(du -sb "$W/src" | cut -f1)
"$B" init "$W/forest" --title Bench >/dev/null

measure() { # label, command...
  local label="$1"; shift
  local start end peak=0 pid
  start=$(date +%s.%N)
  "$@" >/dev/null &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    r=$(awk '/VmHWM/{print $2}' /proc/$pid/status 2>/dev/null || echo 0)
    [ -n "$r" ] && [ "$r" -gt "$peak" ] && peak=$r
    sleep 0.05
  done
  wait "$pid" || true
  end=$(date +%s.%N)
  python3 - "$label" "$start" "$end" "$peak" "$N" "$SRC_BYTES" <<'PY'
import sys
label, s, e, peak, n, b = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
t = e - s
print(f"{label:<22} {t:8.2f} s  {n/t:10.0f} files/s  {b/t/1e6:8.1f} MB/s  peak RSS {peak/1024:7.1f} MiB")
PY
}

measure "adopt" "$B" adopt --forest "$W/forest" "$W/src" --json
measure "no-change sync" "$B" sync --forest "$W/forest" --json
# Change 10 files.
python3 - "$W/src" <<'PY'
import os, sys
files = sorted(os.path.join(d, f) for d, _, fs in os.walk(sys.argv[1]) for f in fs if f.endswith(".md"))[:10]
for p in files:
    open(p, "a").write("Appended line for the benchmark.\n")
PY
measure "sync (10 changed)" "$B" sync --forest "$W/forest" --json
echo "source bytes: $SRC_BYTES"
echo "forest bytes (excluding .git, _derived): $(du -sb --exclude=.git --exclude=_derived "$W/forest" | cut -f1)"
echo "forest .git bytes: $(du -sb "$W/forest/.git" | cut -f1)"
echo "commits: $(git -C "$W/forest" rev-list --count HEAD)"
