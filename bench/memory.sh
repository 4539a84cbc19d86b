#!/usr/bin/env bash
# Issue 25: peak RSS of a real-corpus adopt, quiet and under contention.
#
# Each corpus (a source folder per argument) is adopted into a fresh forest
# twice: on a quiet machine, then beside HOGS busy loops (default: one per
# core) with `forest` itself at nice 10, so that conversion and the commit
# both run slower than on a quiet machine and by different amounts (a
# nightly job shares its host). The batch budget bounds what is in flight,
# so the two peaks should be close. BATCH_MIB=M passes `--batch-mib M`.
#
#   bash bench/memory.sh [CORPUS_DIR|pdfs...]   (default: /usr/share/doc)
# `pdfs` is the 176 PDFs of the OCRmyPDF, pikepdf and pypdf source
# distributions together (bench/pdf-corpus.sh downloads them once into
# PDF_CORPUS, default /tmp/forest-pdf-corpus): page images of 243 MB,
# deflate-heavy streams, broken files.
# Corpora used in bench/README.md: `bench/findability/build_sets.py` builds
# `usd` (a copy of /usr/share/doc) and `py` (installed Python
# distributions). FOREST_BIN=path skips the release build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
B="$(forest_bin)"
[ "$#" -gt 0 ] || set -- /usr/share/doc
W="$(mktemp -d /tmp/forest-memory.XXXX)"
HOGS="${HOGS:-$(nproc)}"
extra=()
[ -n "${BATCH_MIB:-}" ] && extra=(--batch-mib "$BATCH_MIB")
hogs=()
stop_hogs() { for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done; hogs=(); }
trap 'stop_hogs; rm -rf "$W"' EXIT

adopt() { # label corpus nice
  local label="$1" corpus="$2" n="$3" f="$W/forest-$RANDOM"
  "$B" init "$f" --title Bench >/dev/null
  printf '%-44s ' "$label"
  peak "$W/adopt.json" nice -n "$n" "$B" adopt --forest "$f" "$corpus" --json "${extra[@]}"
  python3 - "$W/adopt.json" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
    s = r["sources"][0]
    print(f"    planted {len(s['planted'])}, errors {len(s['errors'])}, commits {len(r['commits'])}")
except Exception as e:
    print(f"    (no report: {e})")
PY
  rm -rf "$f"
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); batch budget: ${BATCH_MIB:-default}"
for corpus in "$@"; do
  [ "$corpus" = pdfs ] && corpus="$(bash bench/pdf-corpus.sh "${PDF_CORPUS:-/tmp/forest-pdf-corpus}")"
  files=$(find "$corpus" -type f | wc -l); mb=$(du -sm "$corpus" | cut -f1)
  echo "== $corpus ($files files, $mb MB)"
  adopt "quiet" "$corpus" 0
  for _ in $(seq "$HOGS"); do (while :; do :; done) & hogs+=($!); done
  sleep 1
  adopt "beside $HOGS CPU hogs, forest at nice 10" "$corpus" 10
  stop_hogs
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
