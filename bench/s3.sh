#!/usr/bin/env bash
# S3 source benchmark against a local moto server (ops/s3/start.sh):
# adopt, no-change sync, a 10-object change sync, bytes fetched per changed
# object, and payload-cache hit latency.
#   bash bench/s3.sh 10000 [WORKDIR]
# The corpus is forests/gen_corpus.py's md/txt/csv mix uploaded with boto3
# (moto's own dependency) from 32 threads. FOREST_BIN=path skips the build.
set -euo pipefail
N="${1:-10000}"
W="${2:-/tmp/forest-bench-s3-$N}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export FOREST_OPS_DIR="${FOREST_OPS_DIR:-/tmp/forest-ops-bench}"
export FOREST_S3_PORT="${FOREST_S3_PORT:-19200}"
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1
source bench/lib.sh
B="$(forest_bin)"
EP="$(bash ops/s3/start.sh)"
PY="$FOREST_OPS_DIR/s3-venv/bin/python"
BUCKET="bench-$N-$(date +%s)"
rm -rf "$W"; mkdir -p "$W"
python3 forests/gen_corpus.py --files "$N" --out "$W/src"
SRC_BYTES=$(du -sb "$W/src" | cut -f1)

# Upload: the source tree becomes s3://BUCKET/drive/..., plus one 8 MB binary
# for the cache-latency probe.
head -c 8000000 /dev/urandom > "$W/probe.png"
"$PY" - "$EP" "$BUCKET" "$W/src" "$W/probe.png" <<'PY'
import os, sys, time, boto3
from concurrent.futures import ThreadPoolExecutor
ep, bucket, root, probe = sys.argv[1:5]
s3 = boto3.client("s3", endpoint_url=ep)
s3.create_bucket(Bucket=bucket)
files = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]
t = time.time()
def put(p):
    with open(p, "rb") as fh:
        s3.put_object(Bucket=bucket, Key="drive/" + os.path.relpath(p, root), Body=fh.read())
with ThreadPoolExecutor(32) as ex:
    list(ex.map(put, files))
with open(probe, "rb") as fh:
    s3.put_object(Bucket=bucket, Key="drive/probe/probe.png", Body=fh.read())
print(f"uploaded {len(files)} objects in {time.time() - t:.1f} s", file=sys.stderr)
PY
"$B" init "$W/forest" --title BenchS3 >/dev/null

measure() { # label, objects, command... (stdout of the command -> $W/last.json)
  local label="$1" n="$2"; shift 2
  polled "$W/last.json" "$@" || true
  cat "$W/last.json.err" >&2
  python3 - "$label" "$POLL_START" "$POLL_END" "$POLL_PEAK_KB" "$n" "$W/last.json" <<'PY'
import json, sys
label, s, e, peak, n, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
t = e - s
try:
    src = json.load(open(path))["sources"][0]
    extra = f"bytes_read {src['bytes_read']}  planted {len(src['planted'])}  updated {len(src['updated'])}  unchanged {src['unchanged']}"
except Exception:
    extra = ""
print(f"{label:<22} {t:8.2f} s  {n/t:10.0f} objects/s  peak RSS {peak/1024:7.1f} MiB  {extra}")
PY
}

TOTAL=$((N + 1))
measure "adopt" "$TOTAL" "$B" adopt --forest "$W/forest" "s3://$BUCKET/drive/" --endpoint-url "$EP" --json
measure "no-change sync" "$TOTAL" "$B" sync --forest "$W/forest" --json
# Change 10 objects (re-upload with an appended line).
"$PY" - "$EP" "$BUCKET" "$W/src" <<'PY'
import os, sys, boto3
ep, bucket, root = sys.argv[1:4]
s3 = boto3.client("s3", endpoint_url=ep)
files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".md"))[:10]
for p in files:
    body = open(p, "rb").read() + b"Appended line for the benchmark.\n"
    s3.put_object(Bucket=bucket, Key="drive/" + os.path.relpath(p, root), Body=body)
PY
measure "sync (10 changed)" "$TOTAL" "$B" sync --forest "$W/forest" --json
python3 - "$W/last.json" <<'PY'
import json, sys
src = json.load(open(sys.argv[1]))["sources"][0]
print(f"bytes fetched per changed object: {src['bytes_read'] / max(1, len(src['updated'])):.0f}")
PY

# Payload cache: first fetch (download + verify) then hits (re-verify + touch).
python3 - "$B" "$W/forest" <<'PY'
import subprocess, sys, time
b, forest = sys.argv[1:3]
def fetch():
    t = time.time()
    subprocess.run([b, "fetch", "--forest", forest, "probe/probe"], check=True, stdout=subprocess.DEVNULL)
    return time.time() - t
miss = fetch()
hits = sorted(fetch() for _ in range(20))
print(f"fetch 8 MB payload: miss {miss*1000:.0f} ms, hit p50 {hits[10]*1000:.0f} ms, p95 {hits[18]*1000:.0f} ms (whole CLI process)")
PY
echo "source bytes: $SRC_BYTES + 8000000"
echo "forest bytes (excluding .git): $(du -sb --exclude=.git "$W/forest" | cut -f1)"
echo "commits: $(git -C "$W/forest" rev-list --count HEAD)"
