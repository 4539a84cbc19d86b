#!/usr/bin/env bash
# Stop the local S3 server started by start.sh (by its pid file only).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OPS_DIR="${FOREST_OPS_DIR:-/tmp/forest-ops}"
PORT="${FOREST_S3_PORT:-${1:-19000}}"
exec bash "$HERE/../lib/stop-pidfile.sh" "$OPS_DIR/s3-$PORT.pid"
