#!/usr/bin/env bash
# Stop the local LLM server started by start.sh (by its pid file only).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OPS_DIR="${FOREST_OPS_DIR:-/tmp/forest-ops}"
PORT="${FOREST_LLM_PORT:-${1:-18080}}"
exec bash "$HERE/../lib/stop-pidfile.sh" "$OPS_DIR/llm-$PORT.pid"
