#!/usr/bin/env bash
# Whole-process locate latency on an existing catalog (e.g. the 10^6-node one
# `bench_locate 1000000 DIR` leaves in DIR/catalog.db): N processes of
# `bench_locate --once` (open catalog + heat store, locate, JSON), queries
# drawn from the catalog's titles and summaries.
#   bash bench/locate-process.sh DIR/catalog.db [N]
set -euo pipefail
C="${1:?catalog.db}"
N="${2:-300}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --release -q -p forest-catalog --example bench_locate
B="$PWD/target/release/examples/bench_locate"
"$B" --queries "$C" "$N" > /tmp/locate-queries.$$
python3 - "$B" "$C" /tmp/locate-queries.$$ <<'PY'
import resource, subprocess, sys, time
b, c, qf = sys.argv[1:4]
qs = [l.rstrip("\n") for l in open(qf) if l.strip()]
ts, cpu = [], []
for q in qs:
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([b, "--once", c, q], check=True, capture_output=True)
    ts.append((time.perf_counter() - t) * 1000)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu.append((r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) * 1000)
ts.sort(); cpu.sort()
print(f"locate (whole process, {len(ts)} queries from titles/summaries): wall p50 {ts[len(ts)//2]:.1f} ms, "
      f"p95 {ts[int(len(ts)*0.95)]:.1f} ms, max {ts[-1]:.1f} ms; cpu p50 {cpu[len(cpu)//2]:.1f} ms, "
      f"p95 {cpu[int(len(cpu)*0.95)]:.1f} ms")
PY
rm -f /tmp/locate-queries.$$
