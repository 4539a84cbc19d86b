#!/usr/bin/env bash
# The agent's figures (issue 29): `forest bench` arms on the reference's
# fixture forest and question files, and on a forest adopted from a real
# corpus with a question set written by others (the findability sets).
#   bash bench/navigator.sh [OUT]
# Env: FOREST_BIN (else a release build); FOREST_TEST_LLM_URL (the small
# model's /v1; the LLM arms are skipped when unset); LLM_N (questions per
# LLM arm and set, default 3); LLM_ARMS (default "topk navigator");
# MONKEYLLM_LLM_MAX_TOKENS (completion cap, default 200 here);
# SETS (findability sets, default /tmp/findability, built when absent);
# CORPUS (usd | py, default usd); REUSE=1 (keep an adopted corpus forest);
# GREEDY_N (findability questions for greedy, default all); BUDGET (the
# navigator's step budget, default B(q)); PARTS (default "fixture corpus");
# ACTIONS (schema | text: how the LLM arms ask for actions, default schema);
# FIXTURE_SETS (fixture question files, default "v1 demo").
# Writes OUT/*.json (bench reports) and prints one line per arm and set.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
B="$(forest_bin)"
OUT=${1:-/tmp/navigator-bench}
SETS=${SETS:-/tmp/findability}
CORPUS=${CORPUS:-usd}
LLM_N=${LLM_N:-3}
export MONKEYLLM_LLM_MAX_TOKENS=${MONKEYLLM_LLM_MAX_TOKENS:-200}
mkdir -p "$OUT"
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "binary $B; load $(load)" >&2

# bench NAME QFILE FOREST ARGS... : one report, its summary lines, the load.
bench() {
  local name="$1" q="$2" forest="$3" l0
  shift 3
  l0=$(load)
  "$B" bench "$q" --forest "$forest" --json "$@" >"$OUT/$name.json" 2>"$OUT/$name.err" || {
    echo "$name: failed: $(tail -1 "$OUT/$name.err")"
    return 0
  }
  python3 - "$OUT/$name.json" "$name" "$l0" "$(load)" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for s in r["summaries"]:
    rows = r["results"].get(s["arm"].split("/")[0], [])
    reached = sum(1 for x in rows if x["banana_precision"] > 0)
    tpc = "-" if s["tokens_per_correct"] is None else f'{s["tokens_per_correct"]:.0f}'
    hops = "-" if s["hops_mean"] is None else f'{s["hops_mean"]:.2f}'
    print(f'{sys.argv[2]:<22} {s["arm"]:<10} correct {s["correct"]}/{s["n"]}  reached {reached}/{s["n"]}  '
          f'prec {s["precision_mean"]:.2f}  tok/correct {tpc}  tok_med {s["tokens_median"]}  '
          f'p50 {s["wall_s_median"]:.1f} s  p95 {s["wall_s_p95"]:.1f} s  hops {hops}  load {sys.argv[3]} -> {sys.argv[4]}')
PY
}

# first N question ids of a question file, comma-separated.
first_ids() { python3 -c 'import json,sys; print(",".join(q["id"] for q in json.load(open(sys.argv[1]))[:int(sys.argv[2])]))' "$1" "$2"; }

llm_arms() {
  local name="$1" q="$2" forest="$3" arm
  [ -n "${FOREST_TEST_LLM_URL:-}" ] || { echo "$name: LLM arms skipped (FOREST_TEST_LLM_URL unset)"; return 0; }
  for arm in ${LLM_ARMS:-topk navigator}; do
    bench "$name-$arm" "$q" "$forest" --arms "$arm" --only "$(first_ids "$q" "$LLM_N")" \
      --endpoint "$FOREST_TEST_LLM_URL" ${BUDGET:+--budget "$BUDGET"} ${ACTIONS:+--actions "$ACTIONS"}
  done
}

PARTS=${PARTS:-fixture corpus}
# The reference's fixture forest and question files.
if [[ " $PARTS " == *" fixture "* ]]; then
FF="$OUT/fixture-forest"
rm -rf "$FF"
cp -r forests/fixtures/fixture-forest "$FF"
"$B" reindex --forest "$FF" >/dev/null
for set in ${FIXTURE_SETS:-v1 demo}; do
  q="forests/fixtures/questions-$set.json"
  bench "fixture-$set-greedy" "$q" "$FF" --arms greedy
  llm_arms "fixture-$set" "$q" "$FF"
done
fi

# A real corpus adopted by forest, asked by a question set written by others.
if [[ " $PARTS " == *" corpus "* ]]; then
[ -f "$SETS/$CORPUS/questions.json" ] || python3 bench/findability/build_sets.py "$SETS"
RF="$OUT/$CORPUS"
if [ "${REUSE:-0}" != 1 ] || [ ! -d "$RF" ]; then
  rm -rf "$RF"
  "$B" init "$RF" >/dev/null
  printf 'adopt %s: ' "$CORPUS" >&2
  peak "$OUT/$CORPUS.adopt.json" "$B" adopt --forest "$RF" "$SETS/$CORPUS/src" --json >&2
fi
python3 bench/findability/to_bench.py "$RF" "$SETS/$CORPUS/questions.json" "$OUT/$CORPUS-questions.json" ${GREEDY_N:-}
bench "$CORPUS-greedy" "$OUT/$CORPUS-questions.json" "$RF" --arms greedy
llm_arms "$CORPUS" "$OUT/$CORPUS-questions.json" "$RF"
fi
echo "load at the end $(load)" >&2
