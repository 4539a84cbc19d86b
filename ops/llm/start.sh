#!/usr/bin/env bash
# Start the local LLM server in the background (installing it first when
# needed), wait for /health, print the OpenAI base URL on stdout.
# Env: FOREST_OPS_DIR (default /tmp/forest-ops), FOREST_LLM_PORT (18080),
#      FOREST_LLM_HEALTH_TIMEOUT (120 s), FOREST_LLM_PARALLEL (server slots, 1). Idempotent: an already running,
#      healthy server is reused.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OPS_DIR="${FOREST_OPS_DIR:-/tmp/forest-ops}"
VENV="${FOREST_LLM_VENV:-$OPS_DIR/llm-venv}"
PORT="${FOREST_LLM_PORT:-${1:-18080}}"
TIMEOUT="${FOREST_LLM_HEALTH_TIMEOUT:-120}"
PIDFILE="$OPS_DIR/llm-$PORT.pid"
LOG="$OPS_DIR/llm-$PORT.log"
BASE="http://127.0.0.1:$PORT"

healthy() {
  "$VENV/bin/python" - "$BASE/health" <<'PY' >/dev/null 2>&1
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=2) as r:
    sys.exit(0 if r.status == 200 else 1)
PY
}

MODEL="$(FOREST_OPS_DIR="$OPS_DIR" FOREST_LLM_VENV="$VENV" bash "$HERE/install.sh")"

if [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
  if healthy; then
    echo "start.sh: already running (pid $(cat "$PIDFILE"))" >&2
    echo "$BASE/v1"
    exit 0
  fi
else
  rm -f "$PIDFILE"
  nohup "$VENV/bin/python" "$HERE/server.py" --model "$MODEL" \
    --host 127.0.0.1 --port "$PORT" --parallel "${FOREST_LLM_PARALLEL:-1}" >"$LOG" 2>&1 </dev/null &
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
    echo "start.sh: /health not ready after ${TIMEOUT}s (see $LOG)" >&2
    exit 1
  fi
  sleep 1
done
echo "$BASE/v1"
