#!/usr/bin/env bash
# Snapshot streaming benchmark: a forest whose payloads (20 SQLite datasets
# plus one large `_assets/` original) far exceed what should
# ever sit in memory; `forest snapshot create` then `restore`, wall time and
# peak RSS of each (GNU time), and the container's size.
#   bash bench/snapshot.sh [ASSET_MIB=1024] [DIR]
# FOREST_BIN overrides the binary (default: a release build). Peak RSS must
# stay flat in ASSET_MIB: members are copied through 1 MiB buffers.
set -euo pipefail
MIB="${1:-1024}"
W="${2:-$(mktemp -d /tmp/forest-bench-snapshot.XXXX)}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ -z "${FOREST_BIN:-}" ]; then
  cargo build --release -q -p forest-cli
  FOREST_BIN="$PWD/target/release/forest"
fi
B="$FOREST_BIN"
rm -rf "$W/src" "$W/forest" "$W/restored" "$W/s.forest"
mkdir -p "$W/src/data"
for i in $(seq 1 20); do
  { echo "id,region,amount,note"; for j in $(seq 1 2000); do echo "$j,r$((j % 7)),$((j * i)),row $j of table $i"; done; } >"$W/src/data/t$i.csv"
done
"$B" init "$W/forest" --title Bench >/dev/null
"$B" adopt --forest "$W/forest" "$W/src" --json >/dev/null
# An archived original, incompressible: the stored member is as large as the file.
mkdir -p "$W/forest/data/_assets"
head -c "$((MIB * 1024 * 1024))" /dev/urandom >"$W/forest/data/_assets/big.bin"
payload=$(du -sb --exclude=.git --exclude=_derived "$W/forest" | cut -f1)
measure() { # label, command...
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$W/time" "$@" >/dev/null
  read -r wall rss <"$W/time"
  printf '%-8s wall %6.2f s  peak RSS %6.1f MiB\n' "$label" "$wall" "$(echo "$rss / 1024" | bc -l)"
}
echo "forest work tree (payloads included): $((payload / 1024 / 1024)) MiB, asset ${MIB} MiB"
measure create "$B" snapshot create "$W/s.forest" --forest "$W/forest"
echo "snapshot: $(($(stat -c %s "$W/s.forest") / 1024 / 1024)) MiB"
measure restore "$B" snapshot restore "$W/s.forest" "$W/restored"
cmp "$W/forest/data/_assets/big.bin" "$W/restored/data/_assets/big.bin" && echo "asset bytes identical"
