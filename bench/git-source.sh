#!/usr/bin/env bash
# git source benchmark: a generated corpus of N files committed to a bare
# repository, adopted as `git:` and, beside it, adopted from a checkout of
# the same commit. Then 10 files change in one commit (the checkout gets the
# same edits) and both are synced: the git sync diffs the recorded tree
# against the new one and reads only the changed blobs; the local sync
# walks and stats the whole checkout. Wall time and the forest process's
# peak RSS (the adopts are printed for scale).
#   bash bench/git-source.sh 100000 [WORKDIR]
# FOREST_BIN=path skips the release build.
set -euo pipefail
N="${1:-10000}"
W="${2:-/tmp/forest-bench-git-$N}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
B="$(forest_bin)"
rm -rf "$W"; mkdir -p "$W"
python3 forests/gen_corpus.py --files "$N" --out "$W/checkout" >/dev/null
G=(git -c user.name=Bench -c user.email=bench@example.org -c commit.gpgsign=false)
(cd "$W/checkout" && git init -q -b main && git add -A && "${G[@]}" commit -q -m corpus)
git clone -q --bare "$W/checkout" "$W/repo.git"

measure() { # label, command... (stdout -> $W/last.json)
  local label="$1"; shift
  polled "$W/last.json" "$@" || true
  tail -3 "$W/last.json.err" >&2
  python3 - "$label" "$POLL_START" "$POLL_END" "$POLL_PEAK_KB" "$W/last.json" <<'PY'
import json, sys
label, s, e, peak, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
try:
    src = json.load(open(path))["sources"][0]
    extra = (f"files_seen {src['files_seen']}  blobs_read {src.get('blobs_read', 0)}  planted {len(src['planted'])}"
             f"  updated {len(src['updated'])}  errors {len(src['errors'])}")
except Exception as ex:
    extra = f"(no report: {ex})"
print(f"{label:<34} {e - s:8.2f} s  peak RSS {peak / 1024:7.1f} MiB  {extra}")
PY
}

echo "load before: $(uptime)"
"$B" init "$W/local" --title BenchLocal >/dev/null
"$B" init "$W/git" --title BenchGit >/dev/null
measure "git: adopt" "$B" adopt --forest "$W/git" "git:$W/repo.git" --json
measure "local checkout: adopt" "$B" adopt --forest "$W/local" "$W/checkout" --json
measure "git: no-change sync" "$B" sync --forest "$W/git" --json
# 10 changed files, one commit, pushed to the bare repository.
find "$W/checkout" -name '*.md' -not -path '*/.git/*' | sort | sed -n 1,10p \
  | while read -r p; do echo "Appended line for the benchmark." >> "$p"; done
(cd "$W/checkout" && "${G[@]}" commit -q -a -m "10 changes" && git push -q "$W/repo.git" main)
measure "git: sync (10 changed)" "$B" sync --forest "$W/git" --json
measure "local checkout: sync (10 changed)" "$B" sync --forest "$W/local" --json
echo "load after: $(uptime)"
a=$(cd "$W/local" && find . -name '*.md' -not -path './_derived/*' | sort | md5sum)
b=$(cd "$W/git" && find . -name '*.md' -not -path './_derived/*' | sort | md5sum)
[ "$a" = "$b" ] && echo "same node paths in both forests" || echo "NODE PATHS DIFFER"
