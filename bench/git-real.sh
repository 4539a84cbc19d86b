#!/usr/bin/env bash
# git source against a real public repository: its documentation folder
# adopted from a local bare clone (`git:REPO.git:SUBDIR`), through `git
# daemon` on loopback (`git:git://127.0.0.1:PORT/repo.git:SUBDIR`) and from
# a checkout of the same commit; the three forests must hold the same nodes
# (ids, scent, bodies; bench/git_compare.py), the two git ones the same git
# passport fields. Then three commits touch K files (5 edits, 2 additions,
# 1 rename, 1 deletion) and every forest syncs: the git syncs must read
# exactly the 8 blobs of the edited, added and renamed files, the rename
# must be a move, and a sync with no change must read none. Last, a
# repository with a 100 MB binary is adopted through the daemon.
#   bash bench/git-real.sh MIRROR SUBDIR [WORKDIR]
# MIRROR is a bare repository (the benchmark clones it locally, hard
# links, and never writes it). FOREST_BIN=path skips the release build.
set -euo pipefail
MIRROR="${1:?bare repository}"
SUB="${2:?documentation folder}"
W="${3:-/tmp/forest-bench-git-real}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
B="$(forest_bin)"
HERE="$PWD"
rm -rf "$W"; mkdir -p "$W/served"
G=(git -c user.name=Bench -c user.email=bench@example.org -c commit.gpgsign=false)
git clone -q --bare "$MIRROR" "$W/served/repo.git"
git clone -q "$W/served/repo.git" "$W/work"
COMMIT=$(git -C "$W/work" rev-parse HEAD)
FILES=$(git -C "$W/work" ls-tree -r --name-only HEAD -- "$SUB" | wc -l)
echo "repository $MIRROR, folder $SUB, commit $COMMIT, $FILES files"

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$(git --exec-path)/git-daemon" --export-all --reuseaddr --listen=127.0.0.1 --port="$PORT" \
  --base-path="$W/served" "$W/served" >/dev/null 2>&1 &
DAEMON=$!
trap 'kill $DAEMON 2>/dev/null || true' EXIT
for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/"$PORT") 2>/dev/null && break; sleep 0.05; done

measure() { # label, command... (stdout -> $W/last.json)
  local label="$1"; shift
  polled "$W/last.json" "$@" || true
  tail -2 "$W/last.json.err" >&2
  python3 - "$label" "$POLL_START" "$POLL_END" "$POLL_PEAK_KB" "$W/last.json" <<'PY'
import json, sys
label, s, e, peak, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
try:
    src = json.load(open(path))["sources"][0]
    extra = (f"seen {src['files_seen']}  blobs {src.get('blobs_read', 0)}  planted {len(src['planted'])}"
             f"  updated {len(src['updated'])}  moved {len(src['moved'])}  stale {len(src['stale'])}"
             f"  errors {len(src['errors'])}")
except Exception as ex:
    extra = f"(no report: {ex})"
print(f"{label:<32} {e - s:8.2f} s  peak RSS {peak / 1024:7.1f} MiB  {extra}")
PY
}
FAILED=0
check() { # what, python expression over r (the last report's source)
  python3 - "$W/last.json" "$1" "$2" <<'PY' || FAILED=1
import json, sys
r = json.load(open(sys.argv[1]))["sources"][0]
ok = eval(sys.argv[3])
print(("ok      " if ok else "FAILED  ") + sys.argv[2])
sys.exit(0 if ok else 1)
PY
}

echo "load before: $(uptime)"
for f in bare daemon local; do "$B" init "$W/$f" --title Bench >/dev/null; done
measure "git (bare clone): adopt" "$B" adopt --forest "$W/bare" "git:$W/served/repo.git:$SUB" --json
check "every listed blob read once" "r.get('blobs_read') == r['files_seen'] and not r['errors']"
measure "git (daemon): adopt" "$B" adopt --forest "$W/daemon" "git:git://127.0.0.1:$PORT/repo.git:$SUB" --json
measure "checkout: adopt" "$B" adopt --forest "$W/local" "$W/work/$SUB" --json
python3 "$HERE/bench/git_compare.py" "$W/local" "$W/bare" "$W/daemon" || FAILED=1
measure "git (bare clone): no-change sync" "$B" sync --forest "$W/bare" --json
check "no-change sync reads 0 blobs" "r.get('blobs_read', 0) == 0 and not r['updated']"
measure "git (daemon): no-change sync" "$B" sync --forest "$W/daemon" --json
check "no-change sync reads 0 blobs" "r.get('blobs_read', 0) == 0 and not r['updated']"

# Three commits touching 9 files: 5 edits, 2 additions, 1 rename, 1 deletion.
mapfile -t PICK < <(git -C "$W/work" ls-tree -r --name-only HEAD -- "$SUB" | grep '\.md$' | awk 'NR % 997 == 1' | head -7)
for p in "${PICK[@]:0:5}"; do printf '\n- Added by the benchmark.\n' >> "$W/work/$p"; done
"${G[@]}" -C "$W/work" commit -q -a -m "bench: 5 edits"
printf '# bench page one\n\n> Added by the benchmark.\n' > "$W/work/$SUB/bench-one.md"
printf '# bench page two\n\n> Added by the benchmark.\n' > "$W/work/$SUB/bench-two.md"
"${G[@]}" -C "$W/work" add -A && "${G[@]}" -C "$W/work" commit -q -m "bench: 2 additions"
"${G[@]}" -C "$W/work" mv "${PICK[5]}" "$(dirname "${PICK[5]}")/renamed-by-bench.md"
"${G[@]}" -C "$W/work" rm -q "${PICK[6]}"
"${G[@]}" -C "$W/work" commit -q -m "bench: 1 rename, 1 deletion"
git -C "$W/work" push -q origin HEAD
measure "git (bare clone): sync, 9 changed" "$B" sync --forest "$W/bare" --json
check "8 blobs, 1 move, 1 stale" "r['blobs_read'] == 8 and len(r['moved']) == 1 and len(r['stale']) == 1 and not r['errors']"
measure "git (daemon): sync, 9 changed" "$B" sync --forest "$W/daemon" --json
check "8 blobs, 1 move, 1 stale" "r['blobs_read'] == 8 and len(r['moved']) == 1 and len(r['stale']) == 1 and not r['errors']"
measure "checkout: sync, 9 changed" "$B" sync --forest "$W/local" --json
python3 "$HERE/bench/git_compare.py" "$W/local" "$W/bare" "$W/daemon" || FAILED=1
measure "git (bare clone): no-change sync" "$B" sync --forest "$W/bare" --json
check "no-change sync reads 0 blobs" "r.get('blobs_read', 0) == 0"
# A repository holding a 100 MB binary (random bytes, so packed as is)
# beside one page: the blob is streamed to disk, never held in memory.
mkdir -p "$W/big" && git -C "$W/big" init -q -b main
head -c 100000000 /dev/urandom > "$W/big/firmware.bin"
printf '# Firmware\n\nBuilt nightly.\n' > "$W/big/readme.md"
"${G[@]}" -C "$W/big" add -A && "${G[@]}" -C "$W/big" commit -q -m big
git clone -q --bare "$W/big" "$W/served/big.git"
"$B" init "$W/bigforest" --title Big >/dev/null
measure "git (daemon): 100 MB binary" "$B" adopt --forest "$W/bigforest" "git:git://127.0.0.1:$PORT/big.git" --json
check "the page planted, the binary unsupported" "len(r['planted']) == 1 and r['unsupported'] == ['firmware.bin'] and not r['errors']"
echo "load after: $(uptime)"
exit "$FAILED"
