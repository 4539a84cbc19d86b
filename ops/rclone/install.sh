#!/usr/bin/env bash
# Install rclone (Debian's package) for the rclone source tests, when it is
# missing. Needs root or sudo; without them the tests that need rclone are
# skipped and listed at the end of ops/test.sh.
set -euo pipefail
if command -v rclone >/dev/null 2>&1; then
  rclone version 2>&1 | sed -n 1p >&2  # sed reads all: no SIGPIPE under pipefail
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "install.sh: not root and no sudo: rclone not installed" >&2; exit 0; }
  SUDO="sudo -n"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null && $SUDO apt-get install -y -qq rclone >/dev/null \
  || echo "install.sh: apt-get install rclone failed: the rclone tests will be skipped" >&2
command -v rclone >/dev/null 2>&1 && rclone version 2>&1 | sed -n 1p >&2  # sed reads all: no SIGPIPE under pipefail
exit 0
