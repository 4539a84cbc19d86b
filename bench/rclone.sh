#!/usr/bin/env bash
# rclone source benchmark (issue 30): the same generated corpus adopted from
# the local folder and through `rclone serve webdav` on loopback; adopt,
# no-change sync and a 10-file change sync, wall time and the forest
# process's peak RSS (rclone's own processes are not counted; their peak is
# printed apart).
#   bash bench/rclone.sh 100000 [WORKDIR]
# Needs Debian's rclone. FOREST_BIN=path skips the release build.
set -euo pipefail
N="${1:-10000}"
W="${2:-/tmp/forest-bench-rclone-$N}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
B="$(forest_bin)"
rm -rf "$W"; mkdir -p "$W"
python3 forests/gen_corpus.py --files "$N" --out "$W/src"
PORT="${FOREST_RCLONE_PORT:-19300}"
# The server keeps rclone's default directory cache (with it off, every
# lookup re-reads each parent folder: a 10^5-file listing took over 30
# minutes); it is restarted before each sync so that it sees the edits.
serve() {
  [ -z "${SERVE:-}" ] || { kill "$SERVE" 2>/dev/null || true; wait "$SERVE" 2>/dev/null || true; }
  rclone serve webdav --addr "127.0.0.1:$PORT" "$W/src" >>"$W/serve.log" 2>&1 &
  SERVE=$!
  for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
}
trap 'kill $SERVE 2>/dev/null || true' EXIT
serve
printf '[drive]\ntype = webdav\nurl = http://127.0.0.1:%s\nvendor = other\n' "$PORT" > "$W/rclone.conf"

measure() { # label, command... (stdout -> $W/last.json)
  local label="$1"; shift
  polled "$W/last.json" "$@" || true
  tail -3 "$W/last.json.err" >&2
  python3 - "$label" "$POLL_START" "$POLL_END" "$POLL_PEAK_KB" "$N" "$W/last.json" <<'PY'
import json, sys
label, s, e, peak, n, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
try:
    src = json.load(open(path))["sources"][0]
    extra = f"bytes_read {src['bytes_read']}  planted {len(src['planted'])}  updated {len(src['updated'])}  unchanged {src['unchanged']}"
except Exception as ex:
    extra = f"(no report: {ex})"
print(f"{label:<30} {e - s:8.2f} s  {n / (e - s):8.0f} files/s  peak RSS {peak / 1024:7.1f} MiB  {extra}")
PY
}

"$B" init "$W/local" --title BenchLocal >/dev/null
"$B" init "$W/remote" --title BenchRclone >/dev/null
measure "local: adopt" "$B" adopt --forest "$W/local" "$W/src" --json
measure "local: no-change sync" "$B" sync --forest "$W/local" --json
measure "rclone webdav: adopt" "$B" adopt --forest "$W/remote" rclone:drive: --rclone-config "$W/rclone.conf" --json
serve
measure "rclone webdav: no-change sync" "$B" sync --forest "$W/remote" --json
# 10 changed files.
find "$W/src" -name '*.md' | sort | sed -n 1,10p | while read -r p; do echo "Appended line for the benchmark." >> "$p"; done
serve
measure "rclone webdav: sync (10 changed)" "$B" sync --forest "$W/remote" --json
# The two trees hold the same nodes.
a=$(cd "$W/local" && find . -name '*.md' -not -path './_derived/*' | sort | md5sum)
b=$(cd "$W/remote" && find . -name '*.md' -not -path './_derived/*' | sort | md5sum)
[ "$a" = "$b" ] && echo "same node paths in both forests" || echo "NODE PATHS DIFFER"
echo "rclone serve peak RSS: $(awk '/VmHWM/{print $2/1024 " MiB"}' /proc/$SERVE/status 2>/dev/null || echo n/a)"
