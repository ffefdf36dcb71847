#!/usr/bin/env bash
# Renders deploy/warrant.yaml (with the chart's CRDs, DeletionTicket) and
# deploy/validating-webhook.yaml from charts/warrant, and deploy/pod-security.yaml (the
# SecurityContextConstraints CRD, defaults and RBAC) from its podSecurity template.
# Usage: tests/chart/render-deploy.sh [OUT_DIR]   (default: deploy/ of this checkout)
# HELM: the helm binary (default: built by build-helm.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$root/deploy}"
helm="${HELM:-$("$here/build-helm.sh")}"
"$helm" template warrant "$root/charts/warrant" --namespace warrant-system --include-crds \
  --values "$here/raw-manifests-values.yaml" | python3 "$here/render-deploy.py" "$out"
{
  cat <<'HEADER'
# GENERATED from charts/warrant by tests/chart/render-deploy.sh (values:
# tests/chart/raw-manifests-values.yaml, podSecurity.enabled=true, templates/pod-security.yaml):
# do not edit; change the chart and run the script.
#
# Identity-bound pod security (docs/pod-security.md): the SecurityContextConstraints CRD,
# warrant's permission to watch it, a ClusterRole warrant:scc:NAME per default constraint, use
# of restricted-v2 for system:authenticated, and the default constraints. The constraints need
# the CRD established first: kubectl apply -f deploy/pod-security.yaml, then
# kubectl wait --for condition=established crd/securitycontextconstraints.security.openshift.io,
# then apply the file again. The webhooks (MutatingWebhookConfiguration POST /mutate,
# ValidatingWebhookConfiguration POST /admit for pods) need CA_BUNDLE_BASE64 replaced, and the
# Deployment of deploy/warrant.yaml the arguments --pod-security=Enforce (or Observe) and
# --pod-security-unavailable=Fail.
HEADER
  "$helm" template warrant "$root/charts/warrant" --namespace warrant-system \
    --values "$here/raw-manifests-values.yaml" --set podSecurity.enabled=true \
    --show-only templates/pod-security.yaml | sed '/^# Source: /d'
} >"$out/pod-security.yaml"
