#!/usr/bin/env bash
# SIGKILL convergence at scale (a bench, not a CI test): adopt a generated
# corpus once uninterrupted, then K times kill an adopt at a random point,
# check HEAD is a complete batch (a gardener commit or the init commit) and
# `git fsck` is clean, re-run, and compare the tree with the reference.
#   bash bench/gardener-kill.sh N [LAYOUT] [K] [WORKDIR]
# FOREST_BIN=path skips the release build; SRC=path adopts that tree (as
# made by forests/gen_corpus.py with the same N and LAYOUT) instead of
# generating one.
set -euo pipefail
N="${1:-100000}"; LAYOUT="${2:-wide}"; K="${3:-10}"
W="${4:-/tmp/forest-kill-$LAYOUT-$N}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ -z "${FOREST_BIN:-}" ]; then
  cargo build --release -q -p forest-cli
  FOREST_BIN="$PWD/target/release/forest"
fi
B="$FOREST_BIN"
rm -rf "$W"; mkdir -p "$W"
if [ -n "${SRC:-}" ]; then
  ln -s "$SRC" "$W/src"
else
  python3 forests/gen_corpus.py --files "$N" --out "$W/src" --layout "$LAYOUT"
fi
"$B" init "$W/ref" --title Bench >/dev/null
s=$(date +%s.%N)
"$B" adopt --forest "$W/ref" "$W/src/" --name drive >/dev/null
full=$(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$s" "$(date +%s.%N)")
want=$(git -C "$W/ref" rev-parse 'HEAD^{tree}')
echo "reference adopt: ${full}s, tree $want"
ok=0
for i in $(seq 1 "$K"); do
  frac=$(python3 -c "import random; random.seed($i * 7919); print(round(random.uniform(0.03, 0.97), 3))")
  d="$W/k$i"; "$B" init "$d" --title Bench >/dev/null
  "$B" adopt --forest "$d" "$W/src/" --name drive >/dev/null 2>&1 &
  pid=$!
  sleep "$(python3 -c "print($full * $frac)")"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  subject=$(git -C "$d" log -1 --format=%s)
  case "$subject" in gardener\(adopt\):*|init:*) complete=yes ;; *) complete="NO ($subject)" ;; esac
  fsck=$(git -C "$d" fsck --strict --no-dangling >/dev/null 2>&1 && echo clean || echo DIRTY)
  "$B" adopt --forest "$d" "$W/src/" --name drive >/dev/null 2>&1 || echo "  re-run exited $?"
  got=$(git -C "$d" rev-parse 'HEAD^{tree}')
  status=$(git -C "$d" status --porcelain --untracked-files=no | wc -l)
  same=$([ "$got" = "$want" ] && echo same || echo DIFFERENT)
  echo "kill $i at $frac: HEAD complete batch $complete, fsck $fsck, re-run tree $same, dirty paths $status"
  [ "$complete" = yes ] && [ "$fsck" = clean ] && [ "$same" = same ] && [ "$status" = 0 ] && ok=$((ok + 1))
  rm -rf "$d"
done
echo "$ok/$K kills converged"
