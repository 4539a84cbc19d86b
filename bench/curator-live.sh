#!/usr/bin/env bash
# Curated adopt side by side with the real small model (issue 35): the
# first N documents of bench/curator-input.list (forests/real-corpus built
# at CORPUS), as converted Markdown (the bodies of our uncurated adopt, the
# only input both engines convert), each in its own folder, adopted with
# --curate by ours and by the reference engine (monkeyllm 0.83, `vine adopt
# --curate`) through bench/recording_llm.py --upstream LLM, which logs
# every request's kind, the server's prompt-token count and its seconds.
#   bash bench/curator-live.sh [N=30] [CORPUS=/tmp/real-corpus] [FOREST_BIN] [VINE_BIN]
# Env: LLM (OpenAI-compatible /v1 of the test setup's llama.cpp server,
# default http://127.0.0.1:18081/v1), CONCURRENCY (1), GROUNDING_BIN (a
# built grounding_rate example; else cargo runs it), REFERENCE_FROM (the
# workdir of an earlier run of this script with the same N and corpus: its
# reference engine's logs, forest and wall time are reused instead of
# running monkeyllm again, which takes ~22 minutes at N=30).
# Prints per engine: wall seconds per document, requests per document by
# kind, server prompt tokens per document, leaves with a model summary /
# kept derived, both validators' errors, and the grounding rate of the
# model summaries (crates/forest-curator/examples/grounding_rate.rs: every
# number, version and proper name occurs in the source).
set -euo pipefail
N="${1:-30}"
CORPUS="${2:-/tmp/real-corpus}"
BIN="${3:-$PWD/target/release/forest}"
VINE="${4:-/tmp/forest-ops/monkeyllm-venv/bin/vine}"
LLM="${LLM:-http://127.0.0.1:18081/v1}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
W="$(mktemp -d /tmp/forest-bench-live.XXXX)"
PORT="${PORT:-18350}"
echo "workdir $W"
source "$HERE/lib.sh"
curator_docs "$W" "$CORPUS" "$BIN" "$N"
DOCS=$(find "$W/md" -name '*.md' | wc -l)
PY="$(dirname "$VINE")/python"
if ! "$PY" -c 'import httpx' 2>/dev/null; then # monkeyllm 0.83 imports httpx; the venv has httpx2
  mkdir -p "$W/shim/httpx"
  printf 'from httpx2 import *  # noqa\nfrom httpx2 import Client  # noqa\n' >"$W/shim/httpx/__init__.py"
  export PYTHONPATH="$W/shim${PYTHONPATH:+:$PYTHONPATH}"
fi
run() { # NAME CMD...
  local name=$1; shift
  python3 "$HERE/recording_llm.py" --port "$PORT" --log "$W/$name.jsonl" --upstream "$LLM" & local pid=$!
  sleep 0.5
  local t0; t0=$(date +%s.%N)
  MONKEYLLM_LLM_ENDPOINT="http://127.0.0.1:$PORT/v1" FOREST_LLM_CONCURRENCY="${CONCURRENCY:-1}" \
    MONKEYLLM_LLM_CONCURRENCY="${CONCURRENCY:-1}" "$@" >"$W/$name.out" 2>"$W/$name.err" || echo "$name: exit $?" >&2
  echo "$name $(echo "$(date +%s.%N) - $t0" | bc)" >>"$W/wall.txt"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  PORT=$((PORT + 1))
}
"$BIN" init "$W/ours" --title Bench >/dev/null
run ours "$BIN" adopt --forest "$W/ours" "$W/md" --curate --json
if [ -n "${REFERENCE_FROM:-}" ]; then
  cp -r "$REFERENCE_FROM/reference" "$W/reference"
  cp "$REFERENCE_FROM"/reference.{jsonl,out,err} "$W/"
  grep '^reference ' "$REFERENCE_FROM/wall.txt" >>"$W/wall.txt"
  echo "reference: reused from $REFERENCE_FROM"
else
  "$VINE" init --forest "$W/reference" --title Bench >/dev/null
  run reference "$VINE" adopt --forest "$W/reference" --curate "$W/md"
fi
for e in ours reference; do
  "$BIN" validate --forest "$W/$e" --json >"$W/$e.validate.json" 2>/dev/null || true
  "$VINE" validate --forest "$W/$e" >"$W/$e.vine-validate.txt" 2>&1 || true
done
# Leaf summaries the model wrote (scent: llm), paired with their source.
python3 - "$W" <<'PY'
import pathlib, re, sys
w = pathlib.Path(sys.argv[1])
for e in ["ours", "reference"]:
    pairs, derived = [], 0
    for p in sorted((w / e).rglob("*.md")):
        if p.name == "_index.md" or "/." in str(p) or "_meta" in p.parts or "_derived" in p.parts:
            continue
        text = p.read_text(errors="replace")
        fm = text.split("\n---\n", 1)[0] if text.startswith("---\n") else ""
        src = w / "md" / p.parent.name / p.name
        if not src.exists():
            continue
        m = re.search(r"^summary:\s*(.*)$", fm, re.M)
        summary = m.group(1).strip().strip("'\"") if m else ""
        if re.search(r"^\s*scent:\s*llm\b", fm, re.M) or re.search(r"curated_by|model:", fm):
            pairs.append(f"{summary}\t{src}")
        else:
            derived += 1
    (w / f"{e}.pairs.tsv").write_text("\n".join(pairs) + "\n")
    (w / f"{e}.derived").write_text(str(derived))
PY
for e in ours reference; do
  if [ -n "${GROUNDING_BIN:-}" ]; then
    "$GROUNDING_BIN" "$W/$e.pairs.tsv" >"$W/$e.grounding.txt" 2>/dev/null || true
  else
    (cd "$HERE/.." && cargo run -q --release -p forest-curator --example grounding_rate "$W/$e.pairs.tsv") >"$W/$e.grounding.txt" 2>/dev/null || true
  fi
done
python3 - "$W" "$DOCS" <<'PY'
import json, sys, pathlib
w, docs = pathlib.Path(sys.argv[1]), int(sys.argv[2])
wall = dict(l.split() for l in open(w / "wall.txt"))
print(f"{docs} documents, server {len(open(w / 'ours.jsonl').readlines())} + {len(open(w / 'reference.jsonl').readlines())} requests")
print(f"{'engine':<10} {'s/doc':>6} {'req/doc':>7} {'leaf':>5} {'branch':>6} {'prop':>5} {'server prompt tok/doc':>21} {'llm/derived':>11} {'grounded':>22}")
for e in ["ours", "reference"]:
    rows = [json.loads(l) for l in open(w / f"{e}.jsonl")]
    by = lambda k: sum(1 for r in rows if r["kind"] == k)
    tok = sum((r.get("usage_prompt_tokens") or r["prompt_tokens"]) for r in rows)
    llm = sum(1 for l in open(w / f"{e}.pairs.tsv") if l.strip())
    g = open(w / f"{e}.grounding.txt").read().strip().splitlines()
    print(f"{e:<10} {float(wall[e])/docs:6.1f} {len(rows)/docs:7.2f} {by('summary')/docs:5.2f} {by('branch')/docs:6.2f} {by('proposal')/docs:5.2f} "
          f"{tok/docs:21.0f} {llm:>5}/{open(w / f'{e}.derived').read():<5} {g[-1] if g else '-':>22}")
for e in ["ours", "reference"]:
    try:
        v = json.load(open(w / f"{e}.validate.json"))
        errs = v.get("errors", v.get("summary", {}).get("errors", "?"))
    except Exception:
        errs = "?"
    vine = open(w / f"{e}.vine-validate.txt").read().strip().splitlines()
    print(f"{e}: forest validate errors {errs if not isinstance(errs, list) else len(errs)}; vine validate: {vine[-1] if vine else '-'}")
PY
