#!/usr/bin/env bash
# Install the official MCP Python SDK (PyPI `mcp`) in a venv under the ops
# dir, for the MCP client tests and benches. Prints the venv's python.
# Wire into .ci/run as: export FOREST_TEST_MCP_PYTHON="$(bash ops/mcp/install.sh)"
# Set WITH_REFERENCE=1 to also install the reference engine (monkeyllm 0.83).
set -euo pipefail
OPS="${FOREST_OPS_DIR:-/tmp/forest-ops}"
VENV="$OPS/mcp-venv"
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import mcp' >/dev/null 2>&1; then
  mkdir -p "$OPS"
  python3 -m venv "$VENV" >&2
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "mcp==2.3.0" >&2
fi
if [ "${WITH_REFERENCE:-0}" = "1" ] && ! "$VENV/bin/python" -c 'import monkeyllm' >/dev/null 2>&1; then
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "monkeyllm==0.83.0" >&2
fi
echo "$VENV/bin/python"
