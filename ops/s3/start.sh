#!/usr/bin/env bash
# Start the local S3-compatible server (moto) in the background (installing
# it first when needed), wait until it answers HTTP, print the endpoint URL
# on stdout.
# Env: FOREST_OPS_DIR (default /tmp/forest-ops), FOREST_S3_PORT (19000),
#      FOREST_S3_HEALTH_TIMEOUT (60 s). Idempotent: an already running,
#      healthy server is reused.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OPS_DIR="${FOREST_OPS_DIR:-/tmp/forest-ops}"
VENV="${FOREST_S3_VENV:-$OPS_DIR/s3-venv}"
PORT="${FOREST_S3_PORT:-${1:-19000}}"
TIMEOUT="${FOREST_S3_HEALTH_TIMEOUT:-60}"
PIDFILE="$OPS_DIR/s3-$PORT.pid"
LOG="$OPS_DIR/s3-$PORT.log"
BASE="http://127.0.0.1:$PORT"

# Any HTTP answer below 500 means the server is up (moto lists buckets on /).
healthy() {
  "$VENV/bin/python" - "$BASE/" <<'PY' >/dev/null 2>&1
import sys, urllib.request, urllib.error
try:
    with urllib.request.urlopen(sys.argv[1], timeout=2) as r:
        sys.exit(0 if r.status < 500 else 1)
except urllib.error.HTTPError as e:
    sys.exit(0 if e.code < 500 else 1)
PY
}

SERVER="$(FOREST_OPS_DIR="$OPS_DIR" FOREST_S3_VENV="$VENV" bash "$HERE/install.sh")"

if [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
  if healthy; then
    echo "start.sh: already running (pid $(cat "$PIDFILE"))" >&2
    echo "$BASE"
    exit 0
  fi
else
  rm -f "$PIDFILE"
  nohup "$SERVER" -H 127.0.0.1 -p "$PORT" >"$LOG" 2>&1 </dev/null &
  echo $! >"$PIDFILE"
  echo "start.sh: started pid $(cat "$PIDFILE"), log $LOG" >&2
fi

deadline=$(( $(date +%s) + TIMEOUT ))
until healthy; do
  if ! kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
    echo "start.sh: server exited; last log lines:" >&2
    tail -n 20 "$LOG" >&2 || true
    rm -f "$PIDFILE"
    exit 1
  fi
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "start.sh: $BASE not answering after ${TIMEOUT}s (see $LOG)" >&2
    exit 1
  fi
  sleep 0.5
done
echo "$BASE"
