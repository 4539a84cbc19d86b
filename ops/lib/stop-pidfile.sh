#!/usr/bin/env bash
# Stop the process named by a pid file (SIGTERM, then SIGKILL after 10 s),
# then remove the file. Shared by ops/llm/stop.sh and ops/s3/stop.sh.
#   stop-pidfile.sh PIDFILE
set -euo pipefail
PIDFILE="$1"

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
