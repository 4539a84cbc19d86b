#!/usr/bin/env bash
# Install the reference engine (monkeyllm, PyPI) for the engine-interchange
# tests: a venv with `vine` at a pinned version. Idempotent: does nothing
# when the venv already has that version. Prints the venv's bin directory,
# which is what the tests read from FOREST_TEST_MONKEYLLM:
#
#   export FOREST_TEST_MONKEYLLM=$(bash ops/monkeyllm/install.sh)
set -euo pipefail

OPS_DIR="${FOREST_OPS_DIR:-/tmp/forest-ops}"
VENV="${FOREST_MONKEYLLM_VENV:-$OPS_DIR/monkeyllm-venv}"
PYTHON="${PYTHON:-python3}"
VERSION="${FOREST_MONKEYLLM_VERSION:-0.83.0}"

mkdir -p "$OPS_DIR"

have() {
  [ -x "$VENV/bin/vine" ] && [ "$("$VENV/bin/python" -c \
    'import importlib.metadata as m; print(m.version("monkeyllm"))' 2>/dev/null)" = "$VERSION" ]
}

if have; then
  echo "install.sh: monkeyllm $VERSION ready at $VENV (skipping install)" >&2
else
  echo "install.sh: installing monkeyllm $VERSION into $VENV" >&2
  "$PYTHON" -m venv "$VENV" || { echo "install.sh: cannot create a venv (is python3-venv installed?)" >&2; exit 1; }
  "$VENV/bin/pip" install --quiet "monkeyllm==$VERSION"
  have || { echo "install.sh: monkeyllm $VERSION did not install" >&2; exit 1; }
fi

echo "$VENV/bin"
