#!/usr/bin/env bash
# Nightly no-change sync over a drive full of files we cannot convert
# (issue 17): a copy of /usr/share/doc (or DIR) is adopted, then synced
# twice without changes. Prints, per run: exit code, bytes read, known
# problems, new errors/skips/unsupported, bytes on stderr, commits, wall time.
#   bash bench/nightly.sh [DIR] [WORKDIR] [debug|release]
set -euo pipefail
SRC_DIR="${1:-/usr/share/doc}"
W="${2:-/tmp/forest-bench-nightly}"
PROFILE="${3:-release}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ "$PROFILE" = release ]; then
  cargo build --release -q -p forest-cli
else
  cargo build -q -p forest-cli
fi
B="$PWD/target/$PROFILE/forest"
rm -rf "$W"; mkdir -p "$W"
cp -a "$SRC_DIR" "$W/drive"
echo "drive: $(find "$W/drive" -type f | wc -l) files, $(find "$W/drive" -type l | wc -l) symlinks, $(du -sb "$W/drive" | cut -f1) bytes"
"$B" init "$W/forest" --title Nightly >/dev/null

run() { # label, forest args...
  local label="$1"; shift
  local start end rc=0
  start=$(date +%s.%N)
  "$B" "$@" --forest "$W/forest" --json >"$W/$label.json" 2>"$W/$label.err" || rc=$?
  end=$(date +%s.%N)
  python3 - "$label" "$rc" "$start" "$end" "$W/$label.json" "$W/$label.err" <<'PY'
import json, os, sys
label, rc, start, end, rep, err = sys.argv[1:]
r = json.load(open(rep))
s = r["sources"][0]
print(f"{label:8} exit {rc}  bytes_read {s['bytes_read']:>10}  known {s['known_problems']:>4}  "
      f"errors {len(s['errors']):>3}  skipped {len(s['skipped']):>3}  unsupported {len(s['unsupported']):>4}  "
      f"planted {len(s['planted']):>4}  stderr {os.path.getsize(err):>6} B  commits {len(r['commits'])}  "
      f"{float(end) - float(start):.1f} s")
PY
}

run adopt adopt "$W/drive"
run sync1 sync
run sync2 sync
