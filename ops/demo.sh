#!/usr/bin/env bash
# The README's first command: build `forest`, adopt the sample drive shipped
# in forests/sample-drive (30 mixed files: Markdown, text, CSV, JSON, HTML
# manuals) into a new forest, validate it, run one search, and say where the
# forest is and what to try next. No network, no LLM.
#   bash ops/demo.sh [WORKDIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO="$PWD"
W="${1:-$(mktemp -d /tmp/forest-demo.XXXX)}"
mkdir -p "$W"
# The dev profile (dependencies optimised, see Cargo.toml): the same build
# ops/test.sh uses, so the test command after this one compiles only the
# tests. `cargo build --release -p forest-cli` is the binary to install.
echo "== building forest (the dev profile ops/test.sh shares; a cold build takes many minutes on 2 cores)" >&2
cargo build --locked -p forest-cli
B="$REPO/target/debug/forest"
rm -rf "$W/drive" "$W/forest"
cp -r forests/sample-drive "$W/drive"
echo "== forest init + adopt" >&2
"$B" init "$W/forest" --title "Sample drive"
"$B" adopt --forest "$W/forest" "$W/drive"
echo "== validate" >&2
"$B" validate --forest "$W/forest"
echo "== locate \"falcon arm quarterly update\"" >&2
"$B" locate --forest "$W/forest" "falcon arm quarterly update" -k 3
cat <<MSG

Your forest is in $W/forest (a git repository: try 'git -C $W/forest log --stat').
Its source is $W/drive. Next:
  $B locate --forest $W/forest "libffi closures" -k 5
  $B health --forest $W/forest
  echo "new note" > $W/drive/notes/new.txt && $B sync --forest $W/forest
  $B ranger run --forest $W/forest
  $B adopt --forest $W/forest --curate $W/drive   # LLM scent (needs MONKEYLLM_LLM_ENDPOINT)
MSG
