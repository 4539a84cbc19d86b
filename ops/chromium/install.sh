#!/usr/bin/env bash
# Install the web console's browser-test tools and print the venv's python:
# Chromium and its WebDriver from the Debian archive (when missing; needs
# root or sudo) and Selenium (PyPI, pinned) in a venv under the ops dir.
# Wire into .ci/run as: bash ops/chromium/install.sh >/dev/null
# ops/test.sh exports its output as FOREST_TEST_BROWSER_PYTHON. Without
# Chromium the browser tests are skipped and listed.
set -euo pipefail
OPS="${FOREST_OPS_DIR:-/tmp/forest-ops}"
VENV="$OPS/browser-venv"
if ! command -v chromedriver >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "install.sh: not root and no sudo: chromium not installed" >&2; SUDO=none; }
    [ "$SUDO" = none ] || SUDO="sudo -n"
  fi
  if [ "$SUDO" != none ]; then
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq >/dev/null && $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null \
      || echo "install.sh: apt-get install chromium chromium-driver failed: the browser tests will be skipped" >&2
  fi
fi
command -v chromium >/dev/null 2>&1 && chromium --version 2>/dev/null | sed -n 1p >&2  # sed reads all: no SIGPIPE
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import selenium' >/dev/null 2>&1; then
  mkdir -p "$OPS"
  python3 -m venv "$VENV" >&2
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "selenium==4.27.1" >&2
fi
echo "$VENV/bin/python"
