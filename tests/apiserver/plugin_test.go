package apiserver

// The kubectl plugin as people run it: `kubectl warrant ...`, kubectl finding kubectl-warrant on
// PATH, each person with a kubeconfig of their own (KUBECONFIG). The planned removal of a
// StatefulSet end to end: the requester asks for a DeletionTicket, two approvers RBAC allows
// approve it (a bystander's approval is refused by warrant), the requester's delete is admitted
// and the buffer ring holds it, `holds` shows it held with who asked, the requester cannot
// confirm their own deletion, an approver confirms it with a ticket of their own, and the
// StatefulSet goes. `why` explains the refusal of an unticketed deletion. Every refusal is
// asserted on what the person sees and on warrant-admission's audit record.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	plNS        = "pl-shop"
	plRequester = "pl-requester"
	plApprover1 = "pl-approver1"
	plApprover2 = "pl-approver2"
	plBystander = "pl-bystander"
)

// pluginConfig: the guard reads the protection label and the cluster's tickets (two approvals
// for critical), and holds CRITICAL StatefulSets for a short cool-down and a confirmation. The
// thresholds make a critical label and business hours CRITICAL (40 + 10 >= 50).
func pluginConfig() string {
	return fmt.Sprintf(`apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
  - type: DeletionGuard
    name: deletion-guard
    failurePolicy: Deny
    guard:
      timeZone: UTC
      businessHours: {days: [Mon, Tue, Wed, Thu, Fri, Sat, Sun], start: %q, end: %q}
      protectionLabel: %s
      riskThresholds: {medium: 10, high: 30, critical: 50}
      tickets:
        source: {cluster: {}}
        requiredFor: [critical]
        approvals: {critical: 2, high: 1, standard: 0}
      buffer:
        finalizeAt: high
        resources: [{group: apps, resource: statefulsets}]
        cooldown: 2s
        requireConfirmation: true
        maxHold: 1h
`, ringDayStart, ringDayEnd, protectionLabel)
}

// kubectlWarrant runs `kubectl warrant ARGS` as user: kubectl finds the plugin on PATH, and
// KUBECONFIG is the user's own (for kube-apiserver "scenarios", admin's token acting `as:` the
// user). stdout, stderr, exit status.
func kubectlWarrant(t *testing.T, user string, args ...string) (string, string, int) {
	t.Helper()
	if E.pluginBin == "" {
		t.Fatal("set KUBECTL_WARRANT_BIN (tests/apiserver/run.sh does)")
	}
	kc := filepath.Join(E.dir, "kubectl-"+user+".kubeconfig")
	text := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: scenarios, cluster: {server: %q, certificate-authority-data: %s}}]
users: [{name: %s, user: {token: tok-admin, as: %s}}]
contexts: [{name: %s, context: {cluster: scenarios, user: %s, namespace: %s}}]
current-context: %s
`, E.scenarios.url, base64.StdEncoding.EncodeToString(E.pki.caPEM), user, user, user, user, plNS, user)
	if err := os.WriteFile(kc, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(c, filepath.Join(E.kubeBin, "kubectl"), append([]string{"warrant"}, args...)...)
	cmd.Env = append(os.Environ(),
		"KUBECONFIG="+kc,
		"PATH="+filepath.Dir(E.pluginBin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+E.dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return stdout.String(), stderr.String(), 0
	case errors.As(err, &exit):
		return stdout.String(), stderr.String(), exit.ExitCode()
	default:
		t.Fatalf("kubectl warrant %v: %v", args, err)
		return "", "", -1
	}
}

// bindIn binds user to clusterRole in ns, or to a Role of rules when clusterRole is "".
func bindIn(t *testing.T, ns, user, clusterRole string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	c := client(t, E.scenarios, "admin")
	name := fmt.Sprintf("%s-%s", user, clusterRole)
	ref := rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: clusterRole}
	if clusterRole == "" {
		name = user + "-own"
		ref = rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name}
		if _, err := c.RbacV1().Roles(ns).Create(ctx(t), &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	if _, err := c.RbacV1().RoleBindings(ns).Create(ctx(t), &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, RoleRef: ref,
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// clusterReader lets user list and watch, everywhere, what the validation ring's cache lists
// (what `why` reads), until the test ends.
func clusterReader(t *testing.T, user string) {
	t.Helper()
	c := client(t, E.scenarios, "admin")
	name := user + "-cache-reader"
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods", "services", "persistentvolumeclaims", "namespaces"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"apps"}, Resources: []string{"replicasets", "deployments", "statefulsets", "daemonsets"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs", "cronjobs"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses"}, Verbs: []string{"get", "list", "watch"}},
	}}
	if _, err := c.RbacV1().ClusterRoles().Create(ctx(t), role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}}}
	if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx(t), binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		bg, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.RbacV1().ClusterRoleBindings().Delete(bg, name, metav1.DeleteOptions{})
		_ = c.RbacV1().ClusterRoles().Delete(bg, name, metav1.DeleteOptions{})
	})
}

// heldRow is one element of `kubectl warrant holds -o json`.
type heldRow struct {
	Resource            string `json:"resource"`
	Namespace           string `json:"namespace"`
	Name                string `json:"name"`
	RequestedBy         string `json:"requestedBy"`
	Waiting             string `json:"waiting"`
	SecondsLeft         int64  `json:"secondsLeft"`
	RequireConfirmation bool   `json:"requireConfirmation"`
	ConfirmedWith       string `json:"confirmedWith"`
}

func TestPluginCarriesAPlannedStatefulSetRemovalThroughTheRings(t *testing.T) {
	setWarrantConfig(t, pluginConfig())
	time.Sleep(1500 * time.Millisecond) // the buffer controller's look at the new settings
	cfg := E.warrantCfg
	labelledNamespace(t, E.scenarios, plNS, nil)
	sets := rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"get", "list", "watch", "delete", "patch"}}
	bindIn(t, plNS, plRequester, "warrant-ticket-requester")
	bindIn(t, plNS, plRequester, "warrant-ticket-approver")
	bindIn(t, plNS, plRequester, "", sets)
	bindIn(t, plNS, plApprover1, "warrant-ticket-requester")
	bindIn(t, plNS, plApprover1, "warrant-ticket-approver")
	bindIn(t, plNS, plApprover1, "", rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"get", "list", "patch"}})
	bindIn(t, plNS, plApprover2, "warrant-ticket-approver")
	bindIn(t, plNS, plApprover2, "", rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"get", "list"}})
	bindIn(t, plNS, plBystander, "", rbacv1.PolicyRule{APIGroups: []string{"warrant.dev"}, Resources: []string{"deletiontickets", "deletiontickets/status"}, Verbs: []string{"get", "update"}})
	clusterReader(t, plRequester)
	requester := impersonating(t, E.scenarios, plRequester)
	eventually(t, 20*time.Second, "the DeletionTicket CRD served and the requester's RBAC", func() error {
		_, errText, code := kubectlWarrant(t, plRequester, "ticket", "list")
		if code != 0 {
			return errors.New(errText)
		}
		return nil
	})
	admin := client(t, E.scenarios, "admin")
	protectedSet(t, admin, plNS, "orders-db", "critical", 2)
	protectedSet(t, admin, plNS, "payments-db", "critical", 2)

	// Until warrant-admission's watch of DeletionTickets has listed, the guard applies its
	// failure policy; then the unticketed delete is MISSING_TICKET.
	eventually(t, 15*time.Second, "the ticket watch listed: an unticketed delete is MISSING_TICKET", func() error {
		err := requester.AppsV1().StatefulSets(plNS).Delete(ctx(t), "orders-db", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil {
			t.Fatal("an unticketed delete of a critical StatefulSet was admitted")
		}
		if !strings.Contains(err.Error(), "[MISSING_TICKET]") {
			return err
		}
		return nil
	})

	// `why` on the protected target: each ring's answer and the guard's risk report.
	out, errText, code := kubectlWarrant(t, plRequester, "why", "statefulsets.apps/payments-db", "-n", plNS, "--config", cfg)
	for _, want := range []string{
		"deletion of statefulsets.apps/payments-db in namespace " + plNS + " by " + plRequester,
		protectionLabel + "=critical",
		"validation ring: refused",
		"[MISSING_TICKET]",
		"risk CRITICAL score",
		"takes down: running pods 2",
		"tickets naming it (in this namespace: you may not list tickets everywhere):",
	} {
		if code != 3 || !strings.Contains(out, want) {
			t.Fatalf("kubectl warrant why: status %d, want %q in:\n%s\nstderr: %s", code, want, out, errText)
		}
	}
	t.Logf("kubectl warrant why statefulsets.apps/payments-db:\n%s", out)
	out, errText, code = kubectlWarrant(t, plRequester, "why", "statefulsets.apps/payments-db", "--config", cfg, "-o", "json")
	var why struct {
		User       string
		Labels     map[string]string
		Validation struct {
			Decision, Code string
			Assessment     struct {
				RiskLevel string `json:"riskLevel"`
				Impact    struct {
					RunningPods int `json:"runningPods"`
				}
			}
		}
	}
	if code != 3 || json.Unmarshal([]byte(out), &why) != nil || why.User != plRequester || why.Labels[protectionLabel] != "critical" ||
		why.Validation.Decision != "refused" || why.Validation.Code != "MISSING_TICKET" || why.Validation.Assessment.RiskLevel != "CRITICAL" ||
		why.Validation.Assessment.Impact.RunningPods != 2 {
		t.Fatalf("why -o json: status %d, %q %q", code, out, errText)
	}

	// The request and its approvals, through the plugin.
	out, errText, code = kubectlWarrant(t, plRequester, "ticket", "request", "statefulsets.apps/orders-db",
		"--name", "retire-orders-db", "--single-use", "--reason", "orders moved to the new cluster")
	if code != 0 || out != "deletionticket.warrant.dev/retire-orders-db created\n" {
		t.Fatalf("ticket request: status %d, %q %q", code, out, errText)
	}
	m := markLog(E.ring.audit)
	out, errText, code = kubectlWarrant(t, plBystander, "ticket", "approve", "retire-orders-db")
	if code != 1 || !strings.Contains(errText, "[TICKET_APPROVER_NOT_AUTHORIZED]") {
		t.Fatalf("the bystander's approval: status %d, %q %q", code, out, errText)
	}
	refusedWith(t, m, errors.New(errText), "TICKET_APPROVER_NOT_AUTHORIZED")
	for _, who := range []string{plApprover1, plApprover2} {
		out, errText, code = kubectlWarrant(t, who, "ticket", "approve", "retire-orders-db", "--comment", "backups checked")
		if code != 0 || out != "deletionticket.warrant.dev/retire-orders-db approved\n" {
			t.Fatalf("%s's approval: status %d, %q %q", who, code, out, errText)
		}
	}
	approved := time.Now()

	// The requester's delete is admitted once warrant-admission's cache has both approvals, and
	// the buffer ring holds it.
	m = markLog(E.ring.audit)
	var admitted time.Duration
	eventually(t, 15*time.Second, "the requester's delete admitted on the approved ticket", func() error {
		err := requester.AppsV1().StatefulSets(plNS).Delete(ctx(t), "orders-db", metav1.DeleteOptions{})
		if err == nil {
			admitted = time.Since(approved)
		}
		return err
	})
	t.Logf("PLUGIN: second approval (kubectl warrant ticket approve returned) to admitted delete: %s", admitted.Round(time.Millisecond))
	held := waitBuffer(t, m, "DELETION_HELD", plNS, "orders-db", 15*time.Second)
	if held.RequestedBy != plRequester {
		t.Fatalf("the hold record names %q as the requester", held.RequestedBy)
	}
	got, err := admin.AppsV1().StatefulSets(plNS).Get(ctx(t), "orders-db", metav1.GetOptions{})
	if err != nil || got.DeletionTimestamp == nil {
		t.Fatalf("the deleted StatefulSet is not held Terminating: %v", err)
	}

	// `holds`, as the second approver: a table, and JSON.
	out, errText, code = kubectlWarrant(t, plApprover2, "holds", "-n", plNS, "--config", cfg)
	if code != 0 || !strings.HasPrefix(out, "NAME ") || !strings.Contains(out, "statefulsets.apps/orders-db") || !strings.Contains(out, plRequester) {
		t.Fatalf("holds: status %d, %q %q", code, out, errText)
	}
	t.Logf("kubectl warrant holds:\n%s", out)
	out, errText, code = kubectlWarrant(t, plApprover2, "holds", "--config", cfg, "-o", "json")
	var rows []heldRow
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 {
		t.Fatalf("holds -o json: status %d, %q %q", code, out, errText)
	}
	if r := rows[0]; r.Resource != "statefulsets.apps" || r.Namespace != plNS || r.Name != "orders-db" || r.RequestedBy != plRequester ||
		!r.RequireConfirmation || (r.Waiting != "cooldown" && r.Waiting != "confirmation") {
		t.Fatalf("holds -o json: %+v", r)
	}

	// The requester cannot confirm their own deletion.
	m = markLog(E.ring.audit)
	out, errText, code = kubectlWarrant(t, plRequester, "confirm", "statefulsets.apps/orders-db", "--ticket", "retire-orders-db", "--config", cfg)
	if code != 1 || !strings.Contains(errText, "[CONFIRMATION_BY_REQUESTER]") {
		t.Fatalf("the requester's confirmation: status %d, %q %q", code, out, errText)
	}
	refusedWith(t, m, errors.New(errText), "CONFIRMATION_BY_REQUESTER")
	// The requester's ticket covers the requester only: it does not confirm for someone else.
	out, errText, code = kubectlWarrant(t, plApprover1, "confirm", "statefulsets.apps/orders-db", "--ticket", "retire-orders-db", "--config", cfg)
	if code != 1 || !strings.Contains(errText, "[TICKET_") {
		t.Fatalf("a confirmation with the requester's ticket: status %d, %q %q", code, out, errText)
	}
	t.Logf("a confirmation with the requester's ticket: %s", strings.TrimSpace(errText))

	// The first approver confirms with a ticket of their own, approved by two others.
	out, errText, code = kubectlWarrant(t, plApprover1, "ticket", "request", "statefulsets.apps/orders-db",
		"--name", "confirm-orders-db", "--reason", "second pair of eyes")
	if code != 0 {
		t.Fatalf("the confirmer's ticket: status %d, %q %q", code, out, errText)
	}
	for _, who := range []string{plApprover2, plRequester} {
		if out, errText, code = kubectlWarrant(t, who, "ticket", "approve", "confirm-orders-db"); code != 0 {
			t.Fatalf("%s's approval of the confirmer's ticket: status %d, %q %q", who, code, out, errText)
		}
	}
	m = markLog(E.ring.audit)
	eventually(t, 15*time.Second, "the confirmation admitted", func() error {
		out, errText, code := kubectlWarrant(t, plApprover1, "confirm", "statefulsets.apps/orders-db", "-n", plNS, "--ticket", "confirm-orders-db", "--config", cfg)
		switch {
		case code == 0 && out == "statefulsets.apps/orders-db confirmed\n":
			return nil
		case code == 1 && strings.Contains(errText, "[INSUFFICIENT_APPROVALS]"):
			return errors.New(errText) // warrant-admission's cache has not seen both approvals yet
		default:
			t.Fatalf("the confirmation: status %d, %q %q", code, out, errText)
			return nil
		}
	})
	waitBuffer(t, m, "CONFIRMED", plNS, "orders-db", 15*time.Second)
	eventually(t, 15*time.Second, "the StatefulSet gone", func() error {
		_, err := admin.AppsV1().StatefulSets(plNS).Get(ctx(t), "orders-db", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there: %v", err)
	})
	out, errText, code = kubectlWarrant(t, plApprover2, "holds", "--config", cfg)
	if code != 0 || out != "No resources found.\n" {
		t.Fatalf("holds after the release: status %d, %q %q", code, out, errText)
	}
}
