#!/usr/bin/env bash
# Check every manifest under ops/k8s/ against the Kubernetes OpenAPI schemas
# shipped by the PyPI package kubernetes-validate (no cluster, no network
# beyond the package index). Unknown fields are errors (--strict).
# Usage: bash ops/k8s/validate.sh   (venv under $FOREST_OPS_DIR, reused)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ops="${FOREST_OPS_DIR:-/tmp/forest-ops}"
venv="$ops/k8s-validate-venv"
k8s_version="${FOREST_K8S_VERSION:-1.33.0}"
if [ ! -x "$venv/bin/kubernetes-validate" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "kubernetes-validate==1.37.0"
fi
"$venv/bin/kubernetes-validate" --strict --kubernetes-version "$k8s_version" "$here"/*.yaml
