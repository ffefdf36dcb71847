#!/usr/bin/env bash
# The Helm chart: builds (or reuses) helm from the pinned Go module, lints and renders the chart
# over the values matrix (matrix.py), and fails when deploy/ or the chart's values table were
# not regenerated from the chart. Usage: tests/chart/check.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
start=$(date +%s)
HELM=$("$here/build-helm.sh")
export HELM
"$HELM" version --short
python3 "$here/matrix.py" "$HELM" "$root/charts/warrant"

status=0
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$here/render-deploy.sh" "$out"
for f in warrant.yaml validating-webhook.yaml pod-security.yaml; do
  if ! diff -u "$root/deploy/$f" "$out/$f"; then
    echo "deploy/$f differs from the chart: run tests/chart/render-deploy.sh" >&2
    status=1
  fi
done
python3 "$here/values-table.py" "$root/charts/warrant/values.yaml" "$root/charts/warrant/README.head.md" > "$out/README.md"
if ! diff -u "$root/charts/warrant/README.md" "$out/README.md"; then
  echo "charts/warrant/README.md differs from values.yaml: run tests/chart/values-table.py" >&2
  status=1
fi
echo "chart check took $(( $(date +%s) - start ))s"
exit "$status"
