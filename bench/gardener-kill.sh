#!/usr/bin/env bash
# SIGKILL convergence at scale (a bench, not a CI test): adopt a generated
# corpus once uninterrupted, then K times kill an adopt at a random point,
# check HEAD is a complete batch (a gardener commit or the init commit) and
# `git fsck` is clean, re-run, and compare the tree with the reference.
#   bash bench/gardener-kill.sh N [LAYOUT] [K] [WORKDIR]
# FOREST_BIN=path skips the release build; SRC=path adopts that tree (as
# made by forests/gen_corpus.py with the same N and LAYOUT) instead of
# generating one; REF=forest reuses an uninterrupted adopt of that SRC.
# CHAIN=1 kills one adopt K times in a row instead (each re-run is the next
# run killed; after the K-th kill it runs to the end): the same checks
# after every kill and convergence at the end, in about two adopts' time
# instead of K+1 (at 10^6 files an independent kill costs ~8 minutes).
# FRACS="0.9 0.97 ..." sets the independent kills' points (fractions of the
# reference adopt's wall time) instead of seeded random ones; an entry
# after:EVENT:S kills S seconds after the run logs EVENT (for example
# after:git.index_catch_up:5 lands in the end-of-run top-k rebuild).
set -euo pipefail
N="${1:-100000}"; LAYOUT="${2:-wide}"; K="${3:-10}"
W="${4:-/tmp/forest-kill-$LAYOUT-$N}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
B="$(forest_bin)"
# Every run stamps the same day (a bench that crosses midnight would
# otherwise differ in the batches' created/updated dates); with REF, set
# FOREST_TODAY to the day the reference ran.
export FOREST_TODAY="${FOREST_TODAY:-$(date -u +%F)}"
if [ -n "${REF:-}" ]; then
  [ -n "${SRC:-}" ] || { echo "REF needs SRC" >&2; exit 2; }
  rm -rf "$W/k"*; mkdir -p "$W"; ln -sfn "$SRC" "$W/src"
  full="${REF_SECONDS:?REF_SECONDS: wall time of the reference adopt}"
else
  rm -rf "$W"; mkdir -p "$W"
  if [ -n "${SRC:-}" ]; then
    ln -s "$SRC" "$W/src"
  else
    python3 forests/gen_corpus.py --files "$N" --out "$W/src" --layout "$LAYOUT"
  fi
  REF="$W/ref"
  "$B" init "$REF" --title Bench >/dev/null
  s=$(date +%s.%N)
  "$B" adopt --forest "$REF" "$W/src/" --name drive >/dev/null
  full=$(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$s" "$(date +%s.%N)")
fi
want=$(git -C "$REF" rev-parse 'HEAD^{tree}')
echo "reference adopt: ${full}s, tree $want"
# The tree of forest $1 against the reference: "same", "same-but-run-dates"
# (only the created/updated dates of the batches differ: a run that
# crossed midnight stamps another day) or "DIFFERENT".
compare() {
  local got
  got=$(git -C "$1" rev-parse 'HEAD^{tree}')
  if [ "$got" = "$want" ]; then echo same; return; fi
  echo "$REF/.git/objects" >>"$1/.git/objects/info/alternates"
  if [ -z "$(git -C "$1" diff --name-status "$got" "$want" | grep -v '^M' | head -1)" ] &&
     [ -z "$(git -C "$1" diff -U0 "$got" "$want" | grep -E '^[-+]' | grep -vE '^(\+\+\+|---) ' |
            grep -vE "^[-+](created|updated): '[0-9]{4}-[0-9]{2}-[0-9]{2}'\$" | head -1)" ]; then
    echo same-but-run-dates
  else
    echo DIFFERENT
  fi
}
check() { # forest -> "FSCK COMPLETE..." (COMPLETE may hold spaces)
  local subject complete fsck
  subject=$(git -C "$1" log -1 --format=%s)
  case "$subject" in gardener\(adopt\):*|init:*) complete=yes ;; *) complete="NO ($subject)" ;; esac
  fsck=$(git -C "$1" fsck --strict --no-dangling >/dev/null 2>&1 && echo clean || echo DIRTY)
  echo "$fsck $complete"
}
if [ "${CHAIN:-0}" = 1 ]; then
  d="$W/chain"; rm -rf "$d"; "$B" init "$d" --title Bench >/dev/null
  ok=0
  for i in $(seq 1 "$K"); do
    wait_s=$(python3 -c "import random; random.seed($i * 7919); print(round($full * random.uniform(0.02, 0.12), 1))")
    "$B" adopt --forest "$d" "$W/src/" --name drive >/dev/null 2>&1 &
    pid=$!
    sleep "$wait_s"
    if kill -9 "$pid" 2>/dev/null; then killed=yes; else killed="no (run had ended)"; fi
    wait "$pid" 2>/dev/null || true
    read -r fsck complete <<<"$(check "$d")"
    commits=$(git -C "$d" rev-list --count HEAD)
    echo "kill $i after ${wait_s}s: killed $killed, HEAD complete batch $complete, fsck $fsck, commits $commits"
    [ "$complete" = yes ] && [ "$fsck" = clean ] && ok=$((ok + 1))
  done
  "$B" adopt --forest "$d" "$W/src/" --name drive >/dev/null 2>&1 || echo "  final re-run exited $?"
  status=$(git -C "$d" status --porcelain --untracked-files=no | wc -l)
  fsck=$(git -C "$d" fsck --strict --no-dangling >/dev/null 2>&1 && echo clean || echo DIRTY)
  same=$(compare "$d")
  echo "final re-run: tree $same, fsck $fsck, dirty paths $status"
  echo "$ok/$K kills left a complete batch and a clean fsck; converged: $same"
  exit 0
fi
ok=0
for i in $(seq 1 "$K"); do
  frac=$(python3 -c "import random; random.seed($i * 7919); print(round(random.uniform(0.03, 0.97), 3))")
  if [ -n "${FRACS:-}" ]; then
    frac=$(echo "$FRACS" | tr ' ' '\n' | sed -n "${i}p")
  fi
  d="$W/k$i"; "$B" init "$d" --title Bench >/dev/null
  FOREST_LOG=info "$B" adopt --forest "$d" "$W/src/" --name drive >/dev/null 2>"$W/k$i.log" &
  pid=$!
  case "$frac" in
    after:*) # after:EVENT:SECONDS: that many seconds after the run logs EVENT
      ev=$(echo "$frac" | cut -d: -f2); lag=$(echo "$frac" | cut -d: -f3)
      while kill -0 "$pid" 2>/dev/null && ! grep -q "\"$ev\"" "$W/k$i.log"; do sleep 0.5; done
      sleep "$lag" ;;
    *) sleep "$(python3 -c "print($full * $frac)")" ;;
  esac
  if kill -9 "$pid" 2>/dev/null; then killed=yes; else killed="no (run had ended)"; fi
  wait "$pid" 2>/dev/null || true
  read -r fsck complete <<<"$(check "$d")"
  "$B" adopt --forest "$d" "$W/src/" --name drive >/dev/null 2>&1 || echo "  re-run exited $?"
  status=$(git -C "$d" status --porcelain --untracked-files=no | wc -l)
  same=$(compare "$d")
  echo "kill $i at $frac: killed $killed, HEAD complete batch $complete, fsck $fsck, re-run tree $same, dirty paths $status"
  [ "$complete" = yes ] && [ "$fsck" = clean ] && [ "${same%-but-run-dates}" = same ] && [ "$status" = 0 ] && ok=$((ok + 1))
  rm -rf "$d"
done
echo "$ok/$K kills converged"
