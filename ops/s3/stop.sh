#!/usr/bin/env bash
# Stop the local S3 server started by start.sh (by its pid file only).
set -euo pipefail

OPS_DIR="${FOREST_OPS_DIR:-/tmp/forest-ops}"
PORT="${FOREST_S3_PORT:-${1:-19000}}"
PIDFILE="$OPS_DIR/s3-$PORT.pid"

if [ ! -f "$PIDFILE" ]; then
  echo "stop.sh: no pid file $PIDFILE (not running)" >&2
  exit 0
fi
pid="$(cat "$PIDFILE")"
if kill -0 "$pid" 2>/dev/null; then
  kill -TERM "$pid"
  for _ in $(seq 1 20); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "stop.sh: pid $pid ignored SIGTERM; sending SIGKILL" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
fi
rm -f "$PIDFILE"
echo "stop.sh: stopped (pid $pid)" >&2
