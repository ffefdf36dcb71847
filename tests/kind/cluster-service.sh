#!/usr/bin/env bash
# The cluster-service layout on kind, called by run.sh once the cluster is up and the
# image loaded: deploy/warrant.yaml (3 replicas, leader election, the buffer ring's controller),
# the chain tests/kind/cluster-chain.yaml with its tickets, the serving Secret, and
# deploy/validating-webhook.yaml with the CA bundle filled in; then the buffer ring end to end:
# a critical StatefulSet gets the finalizer, a ticketed deletion is held (Terminating, requester
# recorded), and goes once its cool-down has passed. Inputs: $gen (run.sh's generated dir) and
# kubectl's current context. Needs the same tools as run.sh.
set -euo pipefail
gen=${gen:?set by run.sh}
pass=0; fail=0
ok() { pass=$((pass+1)); echo "ok   $1"; }
bad() { fail=$((fail+1)); echo "FAIL $1"; }
# until SECONDS DESCRIPTION COMMAND...: polls COMMAND once a second.
until_ok() {
  local t=$1 what=$2; shift 2
  for _ in $(seq "$t"); do if "$@" >/dev/null 2>&1; then ok "$what"; return 0; fi; sleep 1; done
  bad "$what (not within ${t}s)"; return 0
}

echo "== cluster service: deploy/warrant.yaml"
kubectl apply -f deploy/warrant.yaml
kubectl -n warrant-system create configmap warrant-config \
  --from-file=warrant.yaml=tests/kind/cluster-chain.yaml \
  --from-file=cluster-tickets.yaml=tests/kind/cluster-tickets.yaml
kubectl -n warrant-system create secret generic warrant-tls \
  --from-file=tls.crt="$gen/tls/service.crt" --from-file=tls.key="$gen/tls/service.key" \
  --from-file=ca.crt="$gen/tls/ca.crt"
sed "s/CA_BUNDLE_BASE64/$(base64 -w0 "$gen/tls/ca.crt")/" deploy/validating-webhook.yaml | kubectl apply -f -
kubectl -n warrant-system rollout status deployment/warrant --timeout=180s && ok "3 replicas ready" || bad "3 replicas ready"
until_ok 60 "one replica holds the Lease" \
  bash -c '[ -n "$(kubectl -n warrant-system get lease warrant -o jsonpath={.spec.holderIdentity})" ]'

echo "== buffer ring"
kubectl create namespace shop --dry-run=client -o yaml | kubectl apply -f -
kubectl -n shop apply -f - <<'YAML'
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  labels: {sre.example.com/protection-level: critical}
  annotations: {sre.example.com/ticket: CHG-300}
spec:
  serviceName: db
  replicas: 0
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: registry.k8s.io/pause:3.10}]}
YAML
until_ok 60 "the controller put the finalizer on the critical StatefulSet" \
  bash -c 'kubectl -n shop get statefulset db -o jsonpath={.metadata.finalizers} | grep -q warrant.dev/deletion-cooldown'
kubectl -n shop delete statefulset db --wait=false --as alice --as-group sre
until_ok 20 "the deletion is held (Terminating)" \
  bash -c '[ -n "$(kubectl -n shop get statefulset db -o jsonpath={.metadata.deletionTimestamp})" ]'
until_ok 20 "the requester is recorded" \
  bash -c '[ "$(kubectl -n shop get statefulset db -o jsonpath="{.metadata.annotations.warrant\.dev/deletion-requested-by}")" = alice ]'
until_ok 20 "an Event says why it is held" \
  bash -c 'kubectl -n shop get events --field-selector involvedObject.name=db -o name | grep -q .'
until_ok 120 "gone after the cool-down" \
  bash -c '! kubectl -n shop get statefulset db'
echo "cluster service: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
