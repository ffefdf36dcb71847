#!/usr/bin/env bash
# The kind tier, for machines with a Docker engine (not this project's CI, which runs
# tests/apiserver/run.sh). Builds the image from the Dockerfile, creates a kind cluster whose
# kube-apiserver uses the shipped authz-config/apiserver-authorization-config.yaml (paths
# substituted), loads the image, deploys warrant as the static pod of deploy/static-pod.yaml and
# runs the scenarios of tests/apiserver with kubectl; then deploys the cluster-service layout
# (deploy/warrant.yaml, deploy/validating-webhook.yaml) and runs the buffer ring through it
# (cluster-service.sh). Needs docker, kind, kubectl, openssl.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
cluster="${KIND_CLUSTER:-warrant}"
gen=tests/kind/generated/warrant
for tool in docker kind kubectl openssl; do
  command -v "$tool" >/dev/null || { echo "$tool is required" >&2; exit 2; }
done

echo "== certificates and configs in $gen"
rm -rf tests/kind/generated && mkdir -p "$gen/tls" "$gen/authz-config"
openssl ecparam -name prime256v1 -genkey -noout -out "$gen/tls/ca.key"
openssl req -x509 -new -key "$gen/tls/ca.key" -subj /CN=warrant-kind-ca -days 2 -out "$gen/tls/ca.crt" \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign
leaf() { # NAME CN EXT
  openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out "$gen/tls/$1.key"
  openssl req -new -key "$gen/tls/$1.key" -subj "/CN=$2" -out "$gen/tls/$1.csr"
  openssl x509 -req -in "$gen/tls/$1.csr" -CA "$gen/tls/ca.crt" -CAkey "$gen/tls/ca.key" -CAcreateserial \
    -days 2 -out "$gen/tls/$1.crt" -extfile <(printf '%s\n' "$3")
}
leaf tls warrant "subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth"
leaf client kube-apiserver "extendedKeyUsage=clientAuth"
# The cluster service's certificate (cluster-service.sh): the Service's DNS name.
leaf service warrant "subjectAltName=DNS:warrant.warrant-system.svc
extendedKeyUsage=serverAuth"
# kube-apiserver's admission client presents its client certificate to the Service
# (AdmissionConfiguration -> WebhookAdmissionConfiguration -> a kubeconfig whose user entry is
# named after the webhook's host:port).
cat > "$gen/admission-kubeconfig.yaml" <<YAML
apiVersion: v1
kind: Config
users:
  - name: warrant.warrant-system.svc:443
    user: {client-certificate: /etc/kubernetes/warrant/tls/client.crt, client-key: /etc/kubernetes/warrant/tls/client.key}
YAML
cat > "$gen/admission-config.yaml" <<YAML
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: ValidatingAdmissionWebhook
    configuration:
      apiVersion: apiserver.config.k8s.io/v1
      kind: WebhookAdmissionConfiguration
      kubeConfigFile: /etc/kubernetes/warrant/admission-kubeconfig.yaml
YAML
cp "$gen/tls/ca.crt" "$gen/tls/client-ca.crt"
chmod 0644 "$gen"/tls/*
cp authz-config/warrant.yaml "$gen/authz-config/warrant.yaml"
# In-node paths; only the placeholders of the shipped templates are replaced.
node=/etc/kubernetes/warrant
sed -e "s#WARRANT_HOST#127.0.0.1#" -e "s#WARRANT_CA_FILE#$node/tls/ca.crt#" \
    -e "s#CLIENT_CERT_FILE#$node/tls/client.crt#" -e "s#CLIENT_KEY_FILE#$node/tls/client.key#" \
    kubeconfigs/apiserver-to-warrant.yaml > "$gen/kubeconfig.yaml"
sed -e "s#WARRANT_KUBECONFIG#$node/kubeconfig.yaml#" authz-config/apiserver-authorization-config.yaml \
    > "$gen/apiserver-authorization-config.yaml"

echo "== image"
docker build -t warrant:dev .
echo "== cluster $cluster"
kind delete cluster --name "$cluster" >/dev/null 2>&1 || true
trap 'kind delete cluster --name "$cluster" >/dev/null 2>&1 || true' EXIT
kind create cluster --name "$cluster" --config tests/kind/kind-config.yaml --wait 120s
kind load docker-image warrant:dev --name "$cluster"
docker cp deploy/static-pod.yaml "$cluster-control-plane:/etc/kubernetes/manifests/warrant.yaml"
kubectl wait -n kube-system --for=condition=Ready "pod/warrant-$cluster-control-plane" --timeout=120s

echo "== scenarios"
fail=0; pass=0
check() { # NAME EXPECTED-SUBSTRING COMMAND...
  local name=$1 want=$2; shift 2
  local out; out=$("$@" 2>&1 || true)
  if [[ "$out" == *"$want"* ]]; then pass=$((pass+1)); echo "ok   $name"; else fail=$((fail+1)); echo "FAIL $name: $out"; fi
}
kubectl create namespace production
kubectl create namespace dev
kubectl create configmap web -n production --from-literal=k=v
kubectl create configmap web -n dev --from-literal=k=v
kubectl create clusterrolebinding alice-edit --clusterrole=edit --user=alice
# warrant's default chain denies what reaches it: deletions in protected namespaces.
check "warrant denies a protected delete with its reason" "protected-deletions: Everything is forbidden." \
  kubectl delete configmap web -n production --as alice --as-group dev
check "can-i follows warrant (no)" "no" kubectl auth can-i delete configmaps/web -n production --as alice
check "outside protected namespaces RBAC decides" 'configmap "web" deleted' \
  kubectl delete configmap web -n dev --as alice
check "the control plane keeps working" "namespace/production" \
  kubectl get namespaces -o name --as system:kube-controller-manager
check "warrant saw alice's delete" '"user":"alice"' \
  kubectl logs -n kube-system "warrant-$cluster-control-plane"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
# The cluster-service layout and the buffer ring.
gen="$gen" bash tests/kind/cluster-service.sh
