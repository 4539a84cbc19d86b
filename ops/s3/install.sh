#!/usr/bin/env bash
# Install a local S3-compatible server for tests (see docs/test-servers.md): a venv
# with moto's standalone server (`moto_server`, in-memory, any credentials).
# Idempotent: does nothing when the venv already has moto_server.
set -euo pipefail

OPS_DIR="${FOREST_OPS_DIR:-/tmp/forest-ops}"
VENV="${FOREST_S3_VENV:-$OPS_DIR/s3-venv}"
PYTHON="${PYTHON:-python3}"
MOTO_VERSION="${FOREST_MOTO_VERSION:-5.2.1}"

mkdir -p "$OPS_DIR"

if [ -x "$VENV/bin/moto_server" ] \
   && "$VENV/bin/python" -c 'import moto, flask, flask_cors' >/dev/null 2>&1; then
  echo "install.sh: venv ready at $VENV (skipping install)" >&2
else
  echo "install.sh: creating venv at $VENV" >&2
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/pip" install --quiet "moto[s3]==$MOTO_VERSION" flask flask-cors
fi

# Print the server binary path.
echo "$VENV/bin/moto_server"
