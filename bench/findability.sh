#!/usr/bin/env bash
# Findability benchmark (issue 26): can an agent find a node by a question
# somebody else wrote, without an LLM? See bench/findability/*.py.
#   bash bench/findability.sh [LABEL]
# Env: FOREST_BIN (the binary under test; else a release build), SETS (the
# corpora and question sets, default /tmp/findability; rebuilt by
# bench/findability/build_sets.py when absent), CORPORA (default "usd py"),
# REUSE=1 (measure the forests already adopted under $SETS/forests/LABEL),
# K (locate depth for MRR, default 10), HYBRID=1 (measure the default,
# hybrid `locate` over a canopy built with ENCODER=fast|full, default full;
# needs FOREST_EMBED_MODEL; else BM25 alone, `--fusion bm25`).
# Prints a table; writes $SETS/results-LABEL.json.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
B="$(forest_bin)"
LABEL=${1:-run}
SETS=${SETS:-/tmp/findability}
K=${K:-10}
[ -f "$SETS/usd/questions.json" ] || python3 bench/findability/build_sets.py "$SETS"
F="$SETS/forests/$LABEL"
mkdir -p "$F"
RES="$SETS/results-$LABEL.json"
echo "{" > "$RES.tmp"
echo "binary $B; load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for c in ${CORPORA:-usd py}; do
  if [ "${REUSE:-0}" != 1 ] || [ ! -d "$F/$c" ]; then
    rm -rf "$F/$c"
    "$B" init "$F/$c" >/dev/null
    printf 'adopt %-4s ' "$c" >&2
    peak "$F/$c.adopt.json" "$B" adopt --forest "$F/$c" "$SETS/$c/src" --json >&2
  fi
  if [ "${HYBRID:-0}" = 1 ]; then
    # The canopy (issue 31): FOREST_EMBED_MODEL names the model directory.
    printf 'canopy %-4s ' "$c" >&2
    peak "$F/$c.canopy.json" "$B" canopy build --forest "$F/$c" --encoder "${ENCODER:-full}" >&2
  fi
  printf '"%s": ' "$c" >> "$RES.tmp"
  LOCATE_EXTRA="$([ "${HYBRID:-0}" = 1 ] || echo --fusion bm25)" \
    python3 bench/findability/measure.py "$B" "$F/$c" "$SETS/$c/questions.json" --k "$K" >> "$RES.tmp"
  echo "," >> "$RES.tmp"
done
# The reference question sets, over the forest they belong to.
rm -rf "$F/fixture-forest"
cp -r forests/fixtures/fixture-forest "$F/fixture-forest"
"$B" reindex --forest "$F/fixture-forest" >/dev/null
for q in forests/fixtures/questions-*.json bench/questions-v2*.json; do
  [ -f "$q" ] || continue
  printf '"ref:%s": ' "$(basename "$q" .json)" >> "$RES.tmp"
  python3 bench/findability/measure.py "$B" "$F/fixture-forest" "$q" --ref >> "$RES.tmp"
  echo "," >> "$RES.tmp"
done
echo "\"label\": \"$LABEL\", \"binary\": \"$B\"}" >> "$RES.tmp"
mv "$RES.tmp" "$RES"
python3 - "$RES" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"{'set':<22} {'q':>4}  {'locate R@1/R@5/MRR':<20} {'BM25 body R@1/R@5/MRR':<22} {'descent':>7}  tags>=2/100w  generic titles")
for k, v in r.items():
    if not isinstance(v, dict):
        continue
    l = v["locate"]
    if "bm25_body" in v:
        b, s = v["bm25_body"], v["scent"]
        print(f"{k:<22} {v['questions']:>4}  {l['R@1']:.3f}/{l['R@5']:.3f}/{l['MRR']:.3f}    "
              f"{b['R@1']:.3f}/{b['R@5']:.3f}/{b['MRR']:.3f}      {v['descent']['success']:>7.3f}  "
              f"{s['leaves_100_words_with_2_tags']}/{s['leaves_100_words']}      {s['generic_titles']}")
    else:
        print(f"{k:<22} {v['questions']:>4}  -/{l['R@5']:.3f}/{l['MRR']:.3f}")
print(f"json: {sys.argv[1]}")
PY
