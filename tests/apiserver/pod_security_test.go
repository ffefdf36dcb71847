package apiserver

// The SecurityContextConstraints CRD and the default constraints the chart ships
// (charts/warrant/files/pod-security/), applied to a real kube-apiserver: the structural schema
// is accepted, the ten defaults are stored and read back field for field (restricted-v2 has no
// priority, anyuid keeps priority 10), the printer columns show, and a strategy type the schema does
// not list is refused. The CRD is removed afterwards so the other scenarios see no trace.

import (
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func TestPodSecurityConstraintsInstallOnARealAPIServer(t *testing.T) {
	files := filepath.Join(repoRoot, "charts", "warrant", "files", "pod-security")
	crd := filepath.Join(files, "crd.yaml")
	if out, err := kubectl(t, E.scenarios, "apply", "-f", crd); err != nil {
		t.Fatalf("applying the CRD: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := kubectl(t, E.scenarios, "delete", "-f", crd, "--wait=true"); err != nil {
			t.Logf("removing the CRD: %v\n%s", err, out)
		}
	})
	if out, err := kubectl(t, E.scenarios, "wait", "--for", "condition=established", "--timeout=30s",
		"crd/securitycontextconstraints.security.openshift.io"); err != nil {
		t.Fatalf("the CRD is not established: %v\n%s", err, out)
	}
	if out, err := kubectl(t, E.scenarios, "apply", "-f", filepath.Join(files, "defaults.yaml")); err != nil {
		t.Fatalf("applying the defaults: %v\n%s", err, out)
	}
	out, err := kubectl(t, E.scenarios, "get", "scc", "-o", "json")
	if err != nil {
		t.Fatalf("listing: %v\n%s", err, out)
	}
	var list struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("decoding the list: %v", err)
	}
	byName := map[string]map[string]any{}
	var names []string
	for _, item := range list.Items {
		name, _ := item["metadata"].(map[string]any)["name"].(string)
		byName[name] = item
		names = append(names, name)
	}
	sort.Strings(names)
	want := "anyuid hostaccess hostmount-anyuid hostnetwork hostnetwork-v2 nonroot nonroot-v2 privileged restricted restricted-v2"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("stored constraints: %s, want %s", got, want)
	}
	rv2 := byName["restricted-v2"]
	if p := rv2["priority"]; p != nil {
		t.Errorf("restricted-v2 priority: %v, want none", p)
	}
	if got := rv2["runAsUser"].(map[string]any)["type"]; got != "MustRunAsRange" {
		t.Errorf("restricted-v2 runAsUser.type: %v", got)
	}
	if got := rv2["requiredDropCapabilities"]; !jsonEqual(got, []any{"ALL"}) {
		t.Errorf("restricted-v2 requiredDropCapabilities: %v", got)
	}
	if got := rv2["allowPrivilegeEscalation"]; got != false {
		t.Errorf("restricted-v2 allowPrivilegeEscalation: %v", got)
	}
	if got := byName["anyuid"]["priority"]; got != float64(10) {
		t.Errorf("anyuid priority: %v, want 10", got)
	}
	if got := byName["privileged"]["volumes"]; !jsonEqual(got, []any{"*"}) {
		t.Errorf("privileged volumes: %v", got)
	}
	table, err := kubectl(t, E.scenarios, "get", "scc", "restricted-v2")
	if err != nil {
		t.Fatalf("kubectl get scc: %v\n%s", err, table)
	}
	for _, column := range []string{"PRIV", "CAPS", "SELINUX", "RUNASUSER", "FSGROUP", "SUPGROUP", "PRIORITY", "READONLYROOTFS", "VOLUMES"} {
		if !strings.Contains(table, column) {
			t.Errorf("kubectl get scc lacks the %s column:\n%s", column, table)
		}
	}
	bogus := `apiVersion: security.openshift.io/v1
kind: SecurityContextConstraints
metadata: {name: bogus}
allowHostDirVolumePlugin: false
allowHostIPC: false
allowHostNetwork: false
allowHostPID: false
allowHostPorts: false
allowPrivilegedContainer: false
allowedCapabilities: null
defaultAddCapabilities: null
priority: null
readOnlyRootFilesystem: false
requiredDropCapabilities: null
volumes: null
runAsUser: {type: AnyoneReally}
`
	bogusFile := filepath.Join(t.TempDir(), "bogus.yaml")
	writeFile(t, bogusFile, bogus)
	out, err = kubectl(t, E.scenarios, "apply", "-f", bogusFile)
	if err == nil || !strings.Contains(out, "Unsupported value: \"AnyoneReally\"") {
		t.Errorf("an unknown runAsUser strategy was not refused by the schema: %v\n%s", err, out)
	}
	missing := strings.Replace(bogus, "runAsUser: {type: AnyoneReally}\n", "", 1)
	missing = strings.Replace(missing, "allowHostPorts: false\n", "", 1)
	writeFile(t, bogusFile, missing)
	out, err = kubectl(t, E.scenarios, "apply", "-f", bogusFile)
	if err == nil || !strings.Contains(out, "allowHostPorts: Required value") {
		t.Errorf("a constraint without allowHostPorts was not refused: %v\n%s", err, out)
	}
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
