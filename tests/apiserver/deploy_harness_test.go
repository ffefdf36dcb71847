package apiserver

// The shipped cluster service (deploy/warrant.yaml) in the scenario API server: applied as it is
// with kubectl before warrant-admission starts, and warrant-admission's cluster cache runs as
// its service account, so the tier's readiness wait proves that the shipped ClusterRole is
// enough for every watch. There is no controller manager: the Deployment's pods are never
// created, the objects only have to be accepted.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// installClusterService applies deploy/warrant.yaml to the scenario API server and writes the
// kubeconfig warrant-admission watches the cluster with: the scenario API server, as warrantSA.
func (e *env) installClusterService() error {
	out, err := exec.Command(filepath.Join(e.kubeBin, "kubectl"), "--kubeconfig", e.scenarios.kcfg,
		"apply", "-f", filepath.Join(repoRoot, "deploy", "warrant.yaml")).CombinedOutput()
	if err != nil {
		return fmt.Errorf("kubectl apply -f deploy/warrant.yaml: %v\n%s", err, out)
	}
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, certificate-authority: %q}}]
users: [{name: warrant, user: {token: %q}}]
contexts: [{name: c, context: {cluster: c, user: warrant}}]
current-context: c
`, e.scenarios.url, filepath.Join(e.dir, "ca.crt"), "tok-"+warrantSA)
	return os.WriteFile(filepath.Join(e.dir, "warrant-sa-kubeconfig.yaml"), []byte(kc), 0o600)
}
