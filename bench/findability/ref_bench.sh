#!/usr/bin/env bash
# Entry search (`forest locate`) on the reference engine's own Monkey Bench.
#
# Provenance
#   Repository: https://github.com/JimmyWesley/MonkeyLLM
#   Commit used: 70bdc69aa93c5de065680489c6320438ae9dc563
#                (main, "Merge pull request #12", release 0.59.0, 2026-08-21)
#   Files read from it:
#     forests/scripts/build_bench_forest.py  bench forest (153 nodes, Telemetrix);
#                                            regenerates questions v2/v3/v4
#     forests/scripts/build_fixture.py       Phase-0 fixture forest (82 nodes)
#     bench/questions-v2.json                18 questions, bench forest (the set of
#                                            the paper's §5.1 table: scent-weighted
#                                            BM25 R@1 0.778, R@5 1.00, MRR 0.866)
#     bench/questions-v3.json, -v4.json      chained / fork tiers, bench forest
#     bench/questions-v1.json                10 questions, fixture forest
#     examples/demo/questions*.json          demo sets, fixture forest
#     scripts/bench_locate.py                the reference's locate measure; its
#                                            definitions are reproduced below
#   Both generators are deterministic (random.Random(SEED)) and need no LLM: the
#   summaries, titles and tags ARE the curated scent, written by the templates.
#   They import only monkeyllm.indexer (entry_line, count_coverage) and
#   monkeyllm.parser (serialize_node); those two modules are byte-identical in
#   the commit's src/ and in PyPI monkeyllm 0.83.0, so building with the
#   installed reference engine gives the forest the commit would.
#
# Metrics (scripts/bench_locate.py, k = max(KS) = 5, KS = (1, 3, 5)):
#   first_hit_rank = 1-based rank of the first result whose id is in
#                    expected_nodes (None if none in the top 5)
#   recall@k       = share of questions with first_hit_rank <= k
#   MRR            = mean over questions of 1/first_hit_rank (0 when None)
#   (not measure.py --ref, which counts expected nodes found, not questions)
#
# Usage
#   bench/findability/ref_bench.sh REF_DIR          # or REF_REPO=REF_DIR ...
#   REF_DIR: a clone, a bare git dir (e.g. a mirror), or a plain checkout copy.
# Environment (defaults):
#   OUT=/tmp/refbench                 work dir (OUT/forest, OUT/fixture, OUT/ref are rebuilt)
#   FOREST_BIN=/tmp/forest-dbg        the forest binary under test
#   REF_PY=/tmp/forest-ops/monkeyllm-venv/bin/python   python with monkeyllm installed
#   REF_COMMIT=HEAD                   commit to read when REF_DIR is a git repo
#   FUSIONS="default bm25 rrf"        locate arms (`default` = no --fusion flag)
#   MISSES_FOR=v2                     sets whose R@1 misses are printed with the top 5
#   CANOPY=                           fast|full: build that canopy on both forests
#                                     (FOREST_EMBED_MODEL names the model), so
#                                     the default arm is hybrid
#   REF_LOCATE=0                      1: also run the reference's own bench_locate.py
#                                     (installed engine, and the commit's src/) on copies
# Plain bash + python3, no network. Results: OUT/results.json.
set -euo pipefail

REF=${1:-${REF_REPO:-}}
[ -n "$REF" ] && [ -d "$REF" ] || { echo "usage: $0 REF_DIR (or REF_REPO=REF_DIR)" >&2; exit 2; }
OUT=${OUT:-/tmp/refbench}
FOREST_BIN=${FOREST_BIN:-/tmp/forest-dbg}
REF_PY=${REF_PY:-/tmp/forest-ops/monkeyllm-venv/bin/python}
REF_COMMIT=${REF_COMMIT:-HEAD}
FUSIONS=${FUSIONS:-default bm25 rrf}
MISSES_FOR=${MISSES_FOR:-v2}
REF_LOCATE=${REF_LOCATE:-0}
PINNED=70bdc69aa93c5de065680489c6320438ae9dc563
case "$OUT" in /|"") echo "refusing OUT=$OUT" >&2; exit 2;; esac

mkdir -p "$OUT"
rm -rf "$OUT/ref" "$OUT/forest" "$OUT/fixture" "$OUT/generated"
mkdir -p "$OUT/ref" "$OUT/generated"
PATHS=(forests/scripts bench examples/demo scripts/bench_locate.py src)

# 1. The reference's files --------------------------------------------------
if git -C "$REF" rev-parse --git-dir >/dev/null 2>&1; then
  COMMIT=$(git -C "$REF" rev-parse "$REF_COMMIT^{commit}")
  git -C "$REF" archive "$COMMIT" "${PATHS[@]}" | tar -x -C "$OUT/ref"
else
  COMMIT="unknown (not a git repository: $REF)"
  for p in "${PATHS[@]}"; do
    mkdir -p "$OUT/ref/$(dirname "$p")"; cp -r "$REF/$p" "$OUT/ref/$p"
  done
fi
echo "reference: $REF at $COMMIT"
[ "$COMMIT" = "$PINNED" ] || echo "note: not the pinned commit $PINNED" >&2
# The generators put REPO/src first on sys.path; keep the commit's src aside so
# they import the installed engine (REF_PY), as the measure is meant to.
mv "$OUT/ref/src" "$OUT/ref-src.tmp"; rm -rf "$OUT/ref-src"; mv "$OUT/ref-src.tmp" "$OUT/ref-src"
"$REF_PY" -c 'import monkeyllm, sys; print("engine: monkeyllm", getattr(monkeyllm, "__version__", "?"), "at", monkeyllm.__file__)'

# 2. Build the forests with the reference engine ----------------------------
"$REF_PY" "$OUT/ref/forests/scripts/build_bench_forest.py" --out "$OUT/forest" \
  --questions-out "$OUT/generated/questions-v2.json" \
  --questions-v3-out "$OUT/generated/questions-v3.json" \
  --questions-v4-out "$OUT/generated/questions-v4.json"
"$REF_PY" "$OUT/ref/forests/scripts/build_fixture.py" --out "$OUT/fixture"
for v in v2 v3 v4; do
  if cmp -s "$OUT/generated/questions-$v.json" "$OUT/ref/bench/questions-$v.json"; then
    echo "questions-$v: regenerated == shipped"
  else
    echo "questions-$v: regenerated differs from shipped (the shipped file is measured)"
  fi
done
for f in "$OUT/forest" "$OUT/fixture"; do
  [ -f "$f/_index.md" ] || { echo "no _index.md in $f" >&2; exit 1; }
  if ! git -C "$f" rev-parse --verify -q HEAD >/dev/null; then
    git -C "$f" init -q
    git -C "$f" add -A
    git -C "$f" -c user.name=bench -c user.email=bench@localhost commit -q -m "reference forest"
  fi
  "$FOREST_BIN" reindex --forest "$f"
  if [ -n "${CANOPY:-}" ]; then
    "$FOREST_BIN" canopy build --forest "$f" --encoder "$CANOPY" >/dev/null
  fi
done

# Optional: the reference's own locate numbers, on throwaway copies.
if [ "$REF_LOCATE" = 1 ]; then
  for eng in installed commit; do
    d="$OUT/refloc-$eng"; rm -rf "$d"; mkdir -p "$d/scripts"
    cp "$OUT/ref/scripts/bench_locate.py" "$d/scripts/"
    [ "$eng" = commit ] && cp -r "$OUT/ref-src" "$d/src"
    cp -r "$OUT/forest" "$d/forest"; rm -rf "$d/forest/_derived"
    echo "== reference bench_locate.py, $eng engine, v2"
    "$REF_PY" "$d/scripts/bench_locate.py" --forest "$d/forest" \
      --questions "$OUT/ref/bench/questions-v2.json" --repeats 0 | sed -n '/MONKEY BENCH/,/^$/p'
  done
fi

# 3. Measure forest locate --------------------------------------------------
FOREST_BIN="$FOREST_BIN" OUT="$OUT" FUSIONS="$FUSIONS" MISSES_FOR="$MISSES_FOR" COMMIT="$COMMIT" python3 - <<'PY'
import json, os, subprocess

out, binary = os.environ["OUT"], os.environ["FOREST_BIN"]
fusions = os.environ["FUSIONS"].split()
misses_for = set(os.environ["MISSES_FOR"].split())
KS = (1, 3, 5)
SETS = [  # (name, forest, question file)
    ("v2", "forest", "bench/questions-v2.json"),
    ("v3", "forest", "bench/questions-v3.json"),
    ("v4", "forest", "bench/questions-v4.json"),
    ("v1", "fixture", "bench/questions-v1.json"),
    ("demo", "fixture", "examples/demo/questions.json"),
    ("demo-buried", "fixture", "examples/demo/questions-buried.json"),
    ("demo-failed", "fixture", "examples/demo/questions-failed.json"),
]

def locate(forest, question, fusion):
    cmd = [binary, "locate", "--forest", forest, "--json", "-k", str(max(KS))]
    if fusion != "default":
        cmd += ["--fusion", fusion]
    o = subprocess.run(cmd + ["--", question], capture_output=True, text=True)
    if o.returncode != 0:
        raise SystemExit(f"locate failed ({o.returncode}): {o.stderr.strip()}")
    return [r["id"] for r in json.loads(o.stdout).get("results", [])]

def first_hit_rank(ids, expected):  # scripts/bench_locate.py
    for i, rid in enumerate(ids):
        if rid in expected:
            return i + 1
    return None

report = {"reference_commit": os.environ["COMMIT"], "binary": binary, "sets": {}}
print(f"\n{'set':<12} {'n':>3} {'fusion':<8} {'R@1':>6} {'R@3':>6} {'R@5':>6} {'MRR':>6}")
for name, fdir, qfile in SETS:
    forest = os.path.join(out, fdir)
    qs = json.load(open(os.path.join(out, "ref", qfile), encoding="utf-8"))
    report["sets"][name] = {"forest": forest, "questions": os.path.join("ref", qfile), "n": len(qs)}
    for fusion in fusions:
        per_q, rr, rec = [], [], {k: 0 for k in KS}
        for q in qs:
            ids = locate(forest, q["question"], fusion)
            rank = first_hit_rank(ids, set(q["expected_nodes"]))
            for k in KS:
                rec[k] += rank is not None and rank <= k
            rr.append(1.0 / rank if rank else 0.0)
            per_q.append({"id": q["id"], "rank": rank, "top": ids})
        n = len(qs)
        m = {f"R@{k}": round(rec[k] / n, 3) for k in KS}
        m["MRR"] = round(sum(rr) / n, 3)
        report["sets"][name][fusion] = {**m, "per_question": per_q}
        print(f"{name:<12} {n:>3} {fusion:<8} {m['R@1']:>6} {m['R@3']:>6} {m['R@5']:>6} {m['MRR']:>6}")
        if name in misses_for and fusion == fusions[0]:
            by_id = {q["id"]: q for q in qs}
            for pq in per_q:
                if pq["rank"] == 1:
                    continue
                q = by_id[pq["id"]]
                print(f"    miss {pq['id']} rank={pq['rank']}: {q['question']}")
                print(f"      expected: {q['expected_nodes']}")
                for i, t in enumerate(pq["top"], 1):
                    print(f"      {i}. {t}{'  <- expected' if t in q['expected_nodes'] else ''}")
with open(os.path.join(out, "results.json"), "w", encoding="utf-8") as f:
    json.dump(report, f, indent=1)
print(f"\nresults: {os.path.join(out, 'results.json')}")
PY
