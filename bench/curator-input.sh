#!/usr/bin/env bash
# Prompt size of a curated adopt (issue 35): the 30 documents of
# bench/curator-input.list (forests/real-corpus, built at CORPUS) adopted
# with --curate against a recording scripted server (bench/recording_llm.py),
# once per content budget for ours. The reference engine (monkeyllm 0.83,
# `vine adopt --curate`, reads MONKEYLLM_LLM_ENDPOINT too) converts only
# Markdown and text without its optional converters, so both engines are
# also run on the same 30 documents as converted Markdown (our uncurated
# adopt's bodies): `*-md` rows.
#   bash bench/curator-input.sh [CORPUS=/tmp/real-corpus] [FOREST_BIN] [VINE_BIN]
# Prints, per run: requests per document by kind and prompt tokens per
# document (summary requests; all requests), by the project's estimator.
set -euo pipefail
CORPUS="${1:-/tmp/real-corpus}"
BIN="${2:-$PWD/target/debug/forest}"
VINE="${3:-/tmp/forest-ops/monkeyllm-venv/bin/vine}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
W="$(mktemp -d /tmp/forest-bench-input.XXXX)"
PORT="${PORT:-18310}"
source "$HERE/lib.sh"
curator_docs "$W" "$CORPUS" "$BIN" 30
run() { # NAME CMD... : one adopt against a fresh recording server
  local name=$1; shift
  python3 "$HERE/recording_llm.py" --port "$PORT" --log "$W/$name.jsonl" & local pid=$!
  sleep 0.5
  local t0; t0=$(date +%s.%N)
  MONKEYLLM_LLM_ENDPOINT="http://127.0.0.1:$PORT/v1" FOREST_LLM_CONCURRENCY=2 "$@" >"$W/$name.out" 2>"$W/$name.err" || echo "$name: exit $?" >&2
  echo "$name $(echo "$(date +%s.%N) - $t0" | bc)" >>"$W/wall.txt"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  PORT=$((PORT + 1))
}
for b in 384 512 768 1500; do
  "$BIN" init "$W/ours-$b" --title Bench >/dev/null
  FOREST_LLM_CONTENT_TOKENS=$b run "ours-$b" "$BIN" adopt --forest "$W/ours-$b" "$W/src" --curate --json
done
# monkeyllm 0.83 imports httpx; the ops venv ships httpx2 (same API) only.
PY="$(dirname "$VINE")/python"
if ! "$PY" -c 'import httpx' 2>/dev/null; then
  mkdir -p "$W/shim/httpx"
  printf 'from httpx2 import *  # noqa\nfrom httpx2 import Client  # noqa\n' >"$W/shim/httpx/__init__.py"
  export PYTHONPATH="$W/shim${PYTHONPATH:+:$PYTHONPATH}"
fi
for b in 384 512; do
  "$BIN" init "$W/ours-$b-md" --title Bench >/dev/null
  FOREST_LLM_CONTENT_TOKENS=$b run "ours-$b-md" "$BIN" adopt --forest "$W/ours-$b-md" "$W/md" --curate --json
done
"$VINE" init --forest "$W/reference-md" --title Bench >/dev/null
run reference-md "$VINE" adopt --forest "$W/reference-md" --curate "$W/md"
python3 - "$W" <<'PY'
import json, statistics, sys
w = sys.argv[1]
docs = 30
print(f"{'run':<12} {'req/doc':>7} {'summary':>7} {'retries':>7} {'branch':>6} {'proposal':>8} {'summary tok/doc':>15} {'median':>6} {'first-attempt tok/doc':>21} {'all tok/doc':>11}")
for name in ["ours-384", "ours-512", "ours-768", "ours-1500", "ours-384-md", "ours-512-md", "reference-md"]:
    rows = [json.loads(l) for l in open(f"{w}/{name}.jsonl")]
    by = lambda k: [r for r in rows if r["kind"] == k]
    s = by("summary")
    per_doc = {}
    for r in s:
        per_doc[r["title"]] = per_doc.get(r["title"], 0) + r["prompt_tokens"]
    first = [r for r in s if r["messages"] <= 2]
    print(f"{name:<12} {len(rows)/docs:7.2f} {len(s):7d} {len(s)-len(first):7d} {len(by('branch')):6d} {len(by('proposal')):8d} "
          f"{sum(r['prompt_tokens'] for r in s)/docs:15.0f} {statistics.median(per_doc.values()) if per_doc else 0:6.0f} "
          f"{sum(r['prompt_tokens'] for r in first)/docs:21.0f} {sum(r['prompt_tokens'] for r in rows)/docs:11.0f}")
# Leaf prompts per document, by the document's own size (reference-md vs ours-*-md, matched by title).
def per_title(name):
    d = {}
    for l in open(f"{w}/{name}.jsonl"):
        r = json.loads(l)
        if r["kind"] == "summary":
            d[r["title"]] = d.get(r["title"], 0) + r["prompt_tokens"]
    return d
import pathlib, re
size = {}
for p in pathlib.Path(w, "md").glob("*/*.md"):
    t = p.read_text()
    m = re.search(r"^# (.*)$", t, re.M)
    size[m.group(1).strip() if m else p.stem] = (len(t) + 3) // 4
ref = per_title("reference-md")
for name in ["ours-384-md", "ours-512-md"]:
    o = per_title(name)
    for label, keep in [("long (>1,500 tokens)", lambda n: n > 1500), ("short", lambda n: n <= 1500)]:
        ts = [t for t in set(o) & set(ref) if keep(size.get(t, 0))]
        a, b = sum(o[t] for t in ts), sum(ref[t] for t in ts)
        print(f"{name} {label}: {len(ts)} documents, ours {a/len(ts):.0f} vs reference {b/len(ts):.0f} tokens/doc: {b/a:.2f}x")
print(open(f"{w}/wall.txt").read())
PY
echo "work dir: $W"
