#!/usr/bin/env bash
# Gardener benchmark: adopt, no-change sync and a change sync (10 changed,
# 5 new, 5 deleted, 2 moved) of a generated corpus.
#   bash bench/gardener.sh N [LAYOUT] [WORKDIR]
# LAYOUT: mixed (default; md/txt/csv nested 1-4 deep), wide (~5,000 files
# per flat folder) or deep (6-8 levels, ~30 files per folder); see
# forests/gen_corpus.py. FOREST_BIN=path skips the release build;
# COMMIT_EVERY (default 5000) sets the adopt batch size; REUSE_SRC=1 skips
# regenerating an untouched source tree.
# Prints wall time, files/s, MB/s, peak RSS (VmHWM polled from /proc), the
# per-file cost of the first and last tenth of the adopt's batches (from the
# `gardener.batch` log events), forest size and commits.
set -euo pipefail
N="${1:-10000}"
LAYOUT="${2:-mixed}"
W="${3:-/tmp/forest-bench-$LAYOUT-$N}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
B="$(forest_bin)"
# REUSE_SRC=1 keeps an untouched $W/src from an earlier generation (the
# generator is deterministic; the change sync below edits src, so only a
# run that stopped before it leaves src reusable).
if [ "${REUSE_SRC:-0}" = 1 ] && [ -d "$W/src" ]; then
  rm -rf "$W/forest" "$W"/*.log "$W"/*.json
else
  rm -rf "$W"; mkdir -p "$W"
  python3 forests/gen_corpus.py --files "$N" --out "$W/src" --layout "$LAYOUT"
fi
# Trailing slash: a symlinked src (shared between workdirs) is followed.
SRC_BYTES=$(du -sb "$W/src/" | cut -f1)
"$B" init "$W/forest" --title Bench >/dev/null

measure() { # label, log file, command...
  local label="$1" log="$2" rc=0; shift 2
  FOREST_LOG=info polled "$log.json" "$@" || rc=$?
  [ "$rc" = 0 ] || echo "($label exited $rc)"
  mv -f "$log.json.err" "$log"
  python3 - "$label" "$POLL_START" "$POLL_END" "$POLL_PEAK_KB" "$N" "$SRC_BYTES" "$log" <<'PY'
import json, re, sys
label, s, e, peak, n, b, log = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), sys.argv[7]
t = e - s
print(f"{label:<24} {t:8.2f} s  {n/t:10.0f} files/s  {b/t/1e6:8.1f} MB/s  peak RSS {peak/1024:7.1f} MiB")
batches = []
for line in open(log, errors="replace"):
    line = re.sub(r"\x1b\[[0-9;]*m", "", line)
    if 'event="gardener.batch"' in line:
        f = re.search(r"\bfiles=(\d+)", line); ms = re.search(r"\bms=(\d+)", line)
        if f and ms and int(f.group(1)) > 0:
            batches.append((int(f.group(1)), int(ms.group(1))))
if len(batches) >= 10:
    k = max(1, len(batches) // 10)
    per = lambda bs: sum(m for _, m in bs) / max(1, sum(f for f, _ in bs))
    first, last = per(batches[:k]), per(batches[-k:])
    print(f"{'':<24} {len(batches)} batches; first tenth {first:.3f} ms/file, last tenth {last:.3f} ms/file (x{last/first:.2f})")
try:
    r = json.load(open(log + ".json"))
    for src in r.get("sources", []):
        print(f"{'':<24} planted {len(src['planted'])} updated {len(src['updated'])} moved {len(src['moved'])} "
              f"stale {len(src['stale'])} unchanged {src['unchanged']} errors {len(src['errors'])} commits {len(r.get('commits', []))}")
except Exception as ex:
    print(f"{'':<24} (no JSON report: {ex})")
PY
}

measure "adopt" "$W/adopt.log" "$B" adopt --forest "$W/forest" "$W/src" --json --commit-every "${COMMIT_EVERY:-5000}"
measure "no-change sync" "$W/sync0.log" "$B" sync --forest "$W/forest" --json
# 10 changed, 5 new, 5 deleted, 2 moved (renamed into a new folder).
python3 - "$W/src" <<'PY'
import os, sys
root = sys.argv[1]
files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".md"))
step = max(1, len(files) // 40)
picked = files[::step]
for p in picked[:10]:
    open(p, "a").write("Appended line for the benchmark.\n")
for p in picked[10:15]:
    os.remove(p)
os.makedirs(os.path.join(root, "moved-here"), exist_ok=True)
for p in picked[15:17]:
    os.rename(p, os.path.join(root, "moved-here", os.path.basename(p)))
for i in range(5):
    with open(os.path.join(root, "moved-here", f"fresh-{i}.md"), "w") as f:
        f.write(f"# Fresh {i}\n\nA new note for the change sync, number {i}.\n")
PY
measure "sync (10/5/5/2)" "$W/sync1.log" "$B" sync --forest "$W/forest" --json
echo "source bytes: $SRC_BYTES"
echo "forest bytes (excluding .git, _derived): $(du -sb --exclude=.git --exclude=_derived "$W/forest" | cut -f1)"
echo "forest .git bytes: $(du -sb "$W/forest/.git" | cut -f1)"
echo "commits: $(git -C "$W/forest" rev-list --count HEAD)"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) (the CPU is shared)"
