#!/usr/bin/env python3
"""Splits `helm template` output into deploy/'s raw manifests: the validation ring's webhook
configuration in deploy/validating-webhook.yaml, everything else in deploy/warrant.yaml.
Usage: helm template ... | render-deploy.py OUT_DIR"""
import sys

HEADER = """# GENERATED from charts/warrant by tests/chart/render-deploy.sh (values:
# tests/chart/raw-manifests-values.yaml): do not edit; change the chart and run the script.
# CI fails when this file and the chart disagree. For Helm users: helm install warrant
# charts/warrant -n warrant-system --create-namespace (docs/install-helm.md).
"""
WARRANT = HEADER + """#
# warrant as a cluster service: the validation ring (POST /admit, validating-webhook.yaml) and
# the buffer ring's controller, served by a Deployment behind Service `warrant` in
# `warrant-system`, with the DeletionTicket CRD and the ticket requester and approver
# ClusterRoles (docs/tickets.md). The authorization ring stays beside each kube-apiserver
# (deploy/static-pod.yaml). Before applying:
# - the chain: `kubectl -n warrant-system create configmap warrant-config
#   --from-file=warrant.yaml=authz-config/validation-ring-example.yaml
#   --from-file=validation-ring-tickets.yaml=authz-config/validation-ring-tickets.yaml`;
# - the serving certificate: Secret `warrant-tls` with `tls.crt`, `tls.key` and `ca.crt`; its
#   names must include `warrant.warrant-system.svc`. `ca.crt` also verifies callers' client
#   certificates (kube-apiserver's admission client, Prometheus);
# - the image: replace `warrant:dev` (built from the Dockerfile).
"""
WEBHOOK = HEADER + """#
# Before applying: replace CA_BUNDLE_BASE64 with the base64 PEM of the CA that signed warrant's
# serving certificate, and give kube-apiserver a client certificate for
# warrant.warrant-system.svc:443 (--admission-control-config-file; the chart's release notes
# print the files).
"""

docs = [d for d in sys.stdin.read().split("\n---\n") if d.strip() and d.strip() != "---"]
webhook, rest = [], []
for d in docs:
    d = d.strip("\n")
    if d.startswith("---\n"):
        d = d[4:]
    (webhook if "kind: ValidatingWebhookConfiguration" in d else rest).append(d)
if len(webhook) != 1:
    sys.exit(f"render-deploy: want one ValidatingWebhookConfiguration, got {len(webhook)}")
out = sys.argv[1]
with open(f"{out}/warrant.yaml", "w") as f:
    f.write(WARRANT + "---\n" + "\n---\n".join(rest) + "\n")
with open(f"{out}/validating-webhook.yaml", "w") as f:
    f.write(WEBHOOK + webhook[0] + "\n")
