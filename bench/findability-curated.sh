#!/usr/bin/env bash
# Does curation help finding? (issue 35) A findability set ($SET: `usd`,
# Debian package descriptions as questions, `py`, Python distributions'
# summaries, or `man`, man pages' NAME lines; bench/findability/build_sets.py):
# the first Q questions (by id) whose targets (folders or files) hold at
# most MAXFILES files. Two forests, the same except for curation: every other package
# adopted uncurated as one source, then the Q target folders adopted as a
# second source, once with --curate (the test setup's llama.cpp server
# and model) and once without. `locate` R@1/R@5/MRR of the Q questions on
# each, the Curator's report (model summaries kept, kept derived as less
# informative or ungrounded, fallbacks) and the seconds of the curated adopt.
#   bash bench/findability-curated.sh [Q=20] [MAXFILES=3]
# Env: FOREST_BIN, SETS (default /tmp/findability), SET (usd, py or man; usd), LLM (default
# http://127.0.0.1:18081/v1).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
B="$(forest_bin)"
Q="${1:-20}"
MAXFILES="${2:-3}"
SETS=${SETS:-/tmp/findability}
LLM="${LLM:-http://127.0.0.1:18081/v1}"
W="$(mktemp -d /tmp/forest-bench-fcur.XXXX)"
echo "set ${SET:-usd}; workdir $W; binary $B; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
python3 - "$SETS/${SET:-usd}" "$W" "$Q" "$MAXFILES" <<'PY'
import json, os, pathlib, shutil, sys
usd, w, q, maxfiles = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
qs = sorted(json.load(open(usd / "questions.json")), key=lambda x: x["id"])
src = usd / "src"

def files(p):
    return 1 if p.is_file() else sum(len(fs) for _, _, fs in os.walk(p))

picked = []
for x in qs:
    t = [src / p for p in x["targets"]]
    if all(p.exists() for p in t) and sum(files(p) for p in t) <= maxfiles:
        picked.append(x)
    if len(picked) == q:
        break
targets = {p.rstrip("/") for x in picked for p in x["targets"]}

def split(d, rel):
    """Copy d (src/rel) to targets/ when it is a target, to base/ when no
    target lies under it, else entry by entry (a target may be a file)."""
    under = [t for t in targets if t.startswith(rel + "/")] if rel else list(targets)
    if rel in targets or not under:
        dest = w / ("targets" if rel in targets else "base") / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(d, dest, symlinks=True) if d.is_dir() else shutil.copy2(d, dest)
        return
    for e in sorted(d.iterdir()):
        split(e, f"{rel}/{e.name}" if rel else e.name)

split(src, "")
json.dump(picked, open(w / "questions.json", "w"), indent=1)
print(f"{len(picked)} questions, {sum(1 for _ in (w / 'targets').rglob('*') if _.is_file())} target files", file=sys.stderr)
PY
for arm in derived curated; do
  "$B" init "$W/$arm" >/dev/null
  "$B" adopt --forest "$W/$arm" "$W/base" --json >"$W/$arm.base.json"
done
"$B" adopt --forest "$W/derived" "$W/targets" --json >"$W/derived.targets.json"
t0=$(date +%s.%N)
MONKEYLLM_LLM_ENDPOINT="$LLM" "$B" adopt --forest "$W/curated" "$W/targets" --curate --json >"$W/curated.targets.json" 2>"$W/curated.err" || echo "curated adopt: exit $?" >&2
echo "curated adopt of the targets: $(echo "$(date +%s.%N) - $t0" | bc) s" >&2
for arm in derived curated; do
  printf '%s: ' "$arm"
  python3 bench/findability/measure.py "$B" "$W/$arm" "$W/questions.json" --k 10 >"$W/$arm.measure.json"
  python3 - "$W/$arm.measure.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
l = r["locate"]
print(f"locate R@1 {l['R@1']:.3f} R@5 {l['R@5']:.3f} MRR {l['MRR']:.3f}; misses at 5: {', '.join(sorted(r['locate_misses_at_5']))}")
PY
done
{ grep -rl '^scent: llm' "$W/curated" --include='*.md' || true; } | sed "s|^$W/curated/|model scent: |"
python3 - "$W/curated.targets.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
def find(o, k):
    if isinstance(o, dict):
        for a, b in o.items():
            if a == k:
                yield b
            yield from find(b, k)
    elif isinstance(o, list):
        for x in o:
            yield from find(x, k)
for k in ["llm_summaries", "fallbacks", "kept_derived_less_informative", "grounding_rejections", "repeated_phrase_rejections", "branch_rollups", "branch_fallbacks", "requests", "retries"]:
    v = list(find(r, k))
    if v:
        print(f"{k}: {v[0] if not isinstance(v[0], list) else len(v[0])}")
PY
echo "json reports and forests under $W"
