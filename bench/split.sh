#!/usr/bin/env bash
# Navigable branches (issue 14) at scale: adopt a wide corpus (~5,000 files
# per flat folder, forests/gen_corpus.py --layout wide), then report the
# branch shape (branches, buckets, widest branch in entry lines and body
# tokens, bucket depth, `forest health` needs_split), then grow every folder
# by 10% and sync: the growth must move no existing node.
#   bash bench/split.sh N [WORKDIR]
# FOREST_BIN=path skips the release build; COMMIT_EVERY (default 5000);
# REUSE=1 takes an adopted $W/forest as it is.
# The lead runs N=1000000; wall time and peak RSS of the adopt compare with
# `bench/gardener.sh N wide` figures of the same build.
set -euo pipefail
N="${1:-20000}"
W="${2:-/tmp/forest-bench-split-$N}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
B="$(forest_bin)"
# REUSE=1: $W/forest was adopted from $W/src already (for example by
# `bench/gardener.sh N wide $W`): report its shape, then grow and sync.
if [ "${REUSE:-0}" = 1 ] && [ -d "$W/forest" ]; then
  echo "reusing $W/forest"
else
  rm -rf "$W"; mkdir -p "$W"
  python3 forests/gen_corpus.py --files "$N" --out "$W/src" --layout wide
  "$B" init "$W/forest" --title Bench >/dev/null
fi

timed() { # label, json out, command...
  local label="$1" out="$2" rc=0; shift 2
  polled "$out" "$@" || rc=$?
  [ "$rc" = 0 ] || echo "($label exited $rc)"
  python3 - "$label" "$POLL_START" "$POLL_END" "$POLL_PEAK_KB" "$out" <<'PY'
import json, sys
label, s, e, peak, out = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
try:
    r = json.load(open(out))
    src = r["sources"]
    planted = sum(len(x["planted"]) for x in src); moved = sum(len(x["moved"]) for x in src)
    branches = sum(len(x["branches"]) for x in src); errors = sum(len(x["errors"]) for x in src)
    tail = f"planted {planted} moved {moved} new branches {branches} errors {errors} commits {len(r.get('commits', []))}"
except Exception as ex:
    tail = f"(no JSON report: {ex})"
print(f"{label:<16} {e - s:8.2f} s  peak RSS {peak/1024:7.1f} MiB  {tail}")
PY
}

shape() { # label
  python3 - "$W/forest" "$1" <<'PY'
import os, sys
root, label = sys.argv[1], sys.argv[2]
branches = buckets = 0; widest = (0, ""); heaviest = (0, ""); depth = 0; over = 0
for d, dirs, files in os.walk(root):
    dirs[:] = [x for x in dirs if x not in (".git", "_derived", "_meta", "_assets")]
    if "_index.md" not in files:
        continue
    body = open(os.path.join(d, "_index.md"), encoding="utf-8").read().split("\n---\n", 1)[-1]
    n = sum(1 for l in body.splitlines() if l.startswith("- [["))
    t = -(-len(body) // 4)
    rel = os.path.relpath(d, root)
    branches += 1
    k = sum(1 for c in rel.split(os.sep) if c.startswith("~"))
    buckets += k > 0; depth = max(depth, k)
    widest = max(widest, (n, rel)); heaviest = max(heaviest, (t, rel))
    over += n > 150 or t > 3000
print(f"{label:<16} branches {branches} (buckets {buckets}, bucket depth <= {depth}); "
      f"widest {widest[0]} entries ({widest[1]}); heaviest {heaviest[0]} tokens ({heaviest[1]}); over the limits {over}")
PY
  "$B" health --forest "$W/forest" --json | python3 -c 'import json,sys; h=json.load(sys.stdin); print(" " * 17 + "health needs_split: %d" % len(h["needs_split"]))'
}

[ "${REUSE:-0}" = 1 ] || timed "adopt" "$W/adopt.json" "$B" adopt --forest "$W/forest" "$W/src" --json --commit-every "${COMMIT_EVERY:-5000}"
shape "after adopt"
# +10% per folder, in the generator's md/txt/csv mix, numbered after the
# tree's largest number.
python3 bench/grow_corpus.py "$W/src/" 10 | tail -1
timed "sync +10%" "$W/sync.json" "$B" sync --forest "$W/forest" --json
shape "after +10%"
python3 - "$W/sync.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
moved = sum(len(x["moved"]) for x in r["sources"])
print(f"{'':<16} existing nodes moved by the growth sync: {moved} (must be 0)")
PY
echo "validate: $("$B" validate --forest "$W/forest" | tail -1)"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) (the CPU is shared)"
