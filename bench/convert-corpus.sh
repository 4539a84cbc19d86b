#!/usr/bin/env bash
# Converter benchmark on the real corpus (forests/real-corpus/build.sh):
#   bash bench/convert-corpus.sh CORPUS_DIR [PROFILE]   (PROFILE: release | dev, default release)
# 1. per-format files/s, MB/s and share planted (examples/convert_corpus.rs);
# 2. whole-corpus `forest adopt`: wall time, peak RSS, stderr lines, report counts;
# 3. PDF pages/s and word coverage against pdftotext (poppler-utils) on the same files.
set -euo pipefail
C="${1:?usage: convert-corpus.sh CORPUS_DIR [release|dev]}"; C=$(cd "$C" && pwd)
P="${2:-release}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
FLAG=$([ "$P" = release ] && echo --release || true)
DIR=$([ "$P" = release ] && echo release || echo debug)
OUT="${BENCH_OUT:-/tmp/forest-convert-bench}"; rm -rf "$OUT"; mkdir -p "$OUT"
cargo build $FLAG -q -p forest-cli -p forest-convert --example convert_corpus
DUMP_DIR="$OUT/bodies" "target/$DIR/examples/convert_corpus" "$C/files" > "$OUT/per-file.tsv" 2> "$OUT/per-format.tsv"
echo "== per format (ext files planted share files/s MB/s)"; sort -t$'\t' -k2,2nr "$OUT/per-format.tsv" | head -40
echo "== status counts"; cut -f2 "$OUT/per-file.tsv" | sort | uniq -c

B="$PWD/target/$DIR/forest"
"$B" init "$OUT/forest" --title "Real corpus" >/dev/null
start=$(date +%s.%N)
"$B" adopt "$C/files" --forest "$OUT/forest" --json > "$OUT/adopt.json" 2> "$OUT/adopt.stderr" &
pid=$!; peak=0
while kill -0 "$pid" 2>/dev/null; do
  r=$(awk '/VmHWM/{print $2}' /proc/$pid/status 2>/dev/null || echo 0)
  [ -n "$r" ] && [ "$r" -gt "$peak" ] && peak=$r; sleep 0.1
done
wait "$pid"; rc=$?; end=$(date +%s.%N)
echo "== adopt: rc=$rc wall=$(python3 -c "print(round($end-$start,1))")s peak_rss=$((peak/1024))MiB stderr_lines=$(wc -l < "$OUT/adopt.stderr") panics=$(grep -c panicked "$OUT/adopt.stderr" || true)"
python3 - "$OUT/adopt.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r = r[0] if isinstance(r, list) else r
for s in (r.get("sources") or [r]):
    n = {k: len(v) for k, v in s.items() if isinstance(v, list)}
    print("report lists:", n)
PY

echo "== PDF: word coverage against pdftotext, pages/s"
python3 bench/pdf_coverage.py "$C/files" "$OUT/per-file.tsv" "$OUT/bodies"
