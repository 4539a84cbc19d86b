#!/usr/bin/env bash
# Peak RSS of an adopt of real document corpora, on a quiet machine and
# beside CPU hogs (a nightly job shares its host: when conversion or the
# commit is starved, the batches in flight must still bound memory).
#   bash bench/memory.sh [CORPUS_DIR...]     (default: /usr/share/doc)
# Env: FOREST_BIN (else a release build), HOGS (CPU hogs for the contended
# run, default 2 = one per core of the project's machine).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
B="$(forest_bin)"
[ "$#" -gt 0 ] || set -- /usr/share/doc
W="$(mktemp -d /tmp/forest-memory.XXXX)"
trap 'rm -rf "$W"; kill $(jobs -p) 2>/dev/null || true' EXIT

adopt() { # adopt LABEL CORPUS
  rm -rf "$W/f"
  "$B" init "$W/f" >/dev/null
  printf '%-40s %-10s ' "$2" "$1"
  peak "$W/out.json" "$B" adopt --forest "$W/f" "$2" --json
  python3 - "$W/out.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["sources"][0]
print(f"    {s['files_seen']} files, {len(s['planted'])} planted, {len(s['errors'])} errors")
PY
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for c in "$@"; do
  adopt quiet "$c"
  hogs=()
  for _ in $(seq "${HOGS:-2}"); do (while :; do :; done) & hogs+=($!); done
  adopt contended "$c"
  kill "${hogs[@]}" 2>/dev/null || true
  wait "${hogs[@]}" 2>/dev/null || true
done
