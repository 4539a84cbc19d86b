#!/usr/bin/env bash
# Converter benchmark on the real corpus (forests/real-corpus/build.sh):
#   bash bench/convert-corpus.sh CORPUS_DIR [PROFILE]   (PROFILE: release | dev, default release)
# 1. per-format files/s, MB/s and share planted (examples/convert_corpus.rs), as a table;
# 2. PDF pages/s beside pdftotext (poppler-utils) on the same files, and word coverage;
# 3. whole-corpus `forest adopt`: wall time, peak RSS, stderr lines, report counts.
# Env: FOREST_BIN (a built `forest`, e.g. target/release/forest: nothing is built for it),
#      CONVERT_BIN (a built `convert_corpus` example), BENCH_OUT (output dir),
#      SKIP_ADOPT=1 (converters only).
set -euo pipefail
C="${1:?usage: convert-corpus.sh CORPUS_DIR [release|dev]}"; C=$(cd "$C" && pwd)
P="${2:-release}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
FLAG=$([ "$P" = release ] && echo --release || true)
DIR=$([ "$P" = release ] && echo release || echo debug)
OUT="${BENCH_OUT:-/tmp/forest-convert-bench}"; rm -rf "$OUT"; mkdir -p "$OUT"
EX="${CONVERT_BIN:-}"
if [ -z "$EX" ]; then cargo build $FLAG -q -p forest-convert --example convert_corpus; EX="$PWD/target/$DIR/examples/convert_corpus"; fi
B="${FOREST_BIN:-}"
if [ -z "$B" ] && [ -z "${SKIP_ADOPT:-}" ]; then cargo build $FLAG -q -p forest-cli; B="$PWD/target/$DIR/forest"; fi
echo "== converters: $EX ($P)"
DUMP_DIR="$OUT/bodies" "$EX" "$C/files" > "$OUT/per-file.tsv" 2> "$OUT/per-format.tsv"
echo "== per format"
python3 - "$OUT/per-format.tsv" "$OUT/per-file.tsv" <<'PY'
import collections, sys
rows = [r for r in (l.rstrip("\n").split("\t") for l in open(sys.argv[1])) if len(r) == 6][1:]
skipped = collections.Counter(l.split("\t")[0] for l in open(sys.argv[2]) if l.split("\t")[1] == "skipped")
print("| ext | files | planted | skipped | share planted | files/s | MB/s |")
print("|---|---|---|---|---|---|---|")
tot = [0, 0, 0]
for ext, n, ok, share, fps, mbs in sorted(rows, key=lambda r: -int(r[1])):
    tot[0] += int(n); tot[1] += int(ok); tot[2] += skipped[ext]
    print(f"| {ext} | {n} | {ok} | {skipped[ext]} | {float(share):.1%} | {fps} | {mbs} |")
print(f"| all | {tot[0]} | {tot[1]} | {tot[2]} | {tot[1] / max(tot[0], 1):.1%} | | |")
PY
echo "== status counts"; cut -f2 "$OUT/per-file.tsv" | sort | uniq -c
echo "== PDF: word coverage against pdftotext, pages/s (ours beside pdftotext)"
python3 bench/pdf_coverage.py "$C/files" "$OUT/per-file.tsv" "$OUT/bodies"
[ -n "${SKIP_ADOPT:-}" ] && exit 0

"$B" init "$OUT/forest" --title "Real corpus" >/dev/null
start=$(date +%s.%N)
"$B" adopt "$C/files" --forest "$OUT/forest" --json > "$OUT/adopt.json" 2> "$OUT/adopt.stderr" &
pid=$!; peak=0
while kill -0 "$pid" 2>/dev/null; do
  r=$(awk '/VmHWM/{print $2}' /proc/$pid/status 2>/dev/null || echo 0)
  [ -n "$r" ] && [ "$r" -gt "$peak" ] && peak=$r; sleep 0.1
done
rc=0; wait "$pid" || rc=$?; end=$(date +%s.%N)
echo "== adopt: rc=$rc wall=$(python3 -c "print(round($end-$start,1))")s peak_rss=$((peak/1024))MiB stderr_lines=$(wc -l < "$OUT/adopt.stderr") panics=$(grep -c panicked "$OUT/adopt.stderr" || true)"
python3 - "$OUT/adopt.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r = r[0] if isinstance(r, list) else r
for s in (r.get("sources") or [r]):
    n = {k: len(v) for k, v in s.items() if isinstance(v, list)}
    print("report lists:", n)
PY

echo "== validate"
"$B" validate --forest "$OUT/forest" > "$OUT/validate.txt" 2>&1 || true
echo "validate: $(tail -1 "$OUT/validate.txt")"
