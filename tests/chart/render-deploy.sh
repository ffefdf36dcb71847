#!/usr/bin/env bash
# Renders deploy/warrant.yaml (with the chart's CRDs, DeletionTicket) and
# deploy/validating-webhook.yaml from charts/warrant.
# Usage: tests/chart/render-deploy.sh [OUT_DIR]   (default: deploy/ of this checkout)
# HELM: the helm binary (default: built by build-helm.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$root/deploy}"
helm="${HELM:-$("$here/build-helm.sh")}"
"$helm" template warrant "$root/charts/warrant" --namespace warrant-system --include-crds \
  --values "$here/raw-manifests-values.yaml" | python3 "$here/render-deploy.py" "$out"
