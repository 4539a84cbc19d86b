#!/usr/bin/env bash
# validate / reindex / locate / ranger on an existing forest (for example the
# one bench/gardener.sh 100000 leaves in /tmp/forest-bench-100000/forest).
#   bash bench/forest-ops.sh /tmp/forest-bench-100000/forest
set -euo pipefail
F="${1:?forest dir}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --release -q -p forest-cli
B="$PWD/target/release/forest"
peak() { # command... -> prints "wall_s peak_MiB"
  local start end pk=0 pid r
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    r=$(awk '/VmHWM/{print $2}' /proc/$pid/status 2>/dev/null || echo 0)
    [ -n "$r" ] && [ "$r" -gt "$pk" ] && pk=$r
    sleep 0.05
  done
  wait "$pid" || true
  end=$(date +%s.%N)
  python3 -c "print(f'{$end-$start:.2f} s, peak RSS {$pk/1024:.1f} MiB')"
}
N=$(find "$F" -name '*.md' -not -path '*/.git/*' | wc -l)
echo "nodes: $N"
echo "validate: $(peak "$B" validate --forest "$F")"
rm -rf "$F/_derived/catalog.db"*
echo "reindex:  $(peak "$B" reindex --forest "$F")"
python3 - "$B" "$F" <<'PY'
import subprocess, sys, time, statistics
b, f = sys.argv[1], sys.argv[2]
qs = ["gripper torque", "quarterly budget review", "lidar", "warehouse forklift pallet", "latency outage incident",
      "contract renewal pricing", "battery", "north region revenue forecast", "camera depth", "payroll"]
ts = []
for i in range(5):
    for q in qs:
        t = time.perf_counter()
        subprocess.run([b, "locate", "--forest", f, "--json", q], check=True, capture_output=True)
        ts.append((time.perf_counter() - t) * 1000)
ts.sort()
print(f"locate (whole process, {len(ts)} runs): p50 {ts[len(ts)//2]:.1f} ms, p95 {ts[int(len(ts)*0.95)]:.1f} ms")
PY
echo "ranger run: $(peak "$B" ranger run --forest "$F" --json)"
echo "ranger run (again): $(peak "$B" ranger run --forest "$F" --json)"
