package apiserver

// DeletionTickets through a real kube-apiserver: the CRD and the ticket roles as deploy/warrant.yaml
// ships them, the shipped webhook deletion-tickets.warrant.dev sending every ticket write to
// warrant-admission, which asks the API server (SubjectAccessReview) whether an approver may
// approve, and a guard reading the cluster's tickets (tickets.source.cluster). Four people:
// a requester (who may also approve others' tickets, so the self-approval reaches warrant), two
// approvers, and a bystander who may write ticket status through RBAC but is not allowed
// `approve`. Every refusal is asserted on what the client sees and on warrant-admission's
// audit record.

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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	tkNS        = "tk-shop"
	tkRequester = "tk-requester"
	tkApprover1 = "tk-approver1"
	tkApprover2 = "tk-approver2"
	tkBystander = "tk-bystander"
)

var ticketGVR = schema.GroupVersionResource{Group: "warrant.dev", Version: "v1alpha1", Resource: "deletiontickets"}

// ticketsConfig: one guard reading the protection label on objects, its tickets from the
// cluster, two approvals for critical.
func ticketsConfig() string {
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
      tickets:
        source: {cluster: {}}
        requiredFor: [critical]
        approvals: {critical: 2, high: 1, standard: 0}
`, ringDayStart, ringDayEnd, protectionLabel)
}

// as is a dynamic client and a typed client acting as user (admin impersonating).
func as(t *testing.T, user string) (dynamic.ResourceInterface, *kubernetes.Clientset) {
	t.Helper()
	cfg := restConfig(E.scenarios, "tok-admin")
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dc.Resource(ticketGVR).Namespace(tkNS), impersonating(t, E.scenarios, user)
}

// presenting is a typed client acting as user presenting ticket as the user extra
// warrant.dev/ticket (a ticket is found without it only while it is valid: the guard then
// names what is wrong with the one presented).
func presenting(t *testing.T, user, ticket string) *kubernetes.Clientset {
	t.Helper()
	cfg := restConfig(E.scenarios, "tok-admin")
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Extra: map[string][]string{"warrant.dev/ticket": {ticket}}}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// plugin runs `warrant ticket ARGS` (the commands kubectl-warrant runs) as user, with a
// kubeconfig for kube-apiserver "scenarios" that acts as user (admin's token, `as: user`):
// stdout, stderr and the exit status.
func plugin(t *testing.T, user string, args ...string) (string, string, int) {
	t.Helper()
	kc := filepath.Join(E.dir, "plugin-"+user+".kubeconfig")
	text := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: scenarios, cluster: {server: %q, certificate-authority-data: %s}}]
users: [{name: %s, user: {token: tok-admin, as: %s}}]
contexts: [{name: %s, context: {cluster: scenarios, user: %s, namespace: %s}}]
current-context: %s
`, E.scenarios.url, base64.StdEncoding.EncodeToString(E.pki.caPEM), user, user, user, user, tkNS, user)
	if err := os.WriteFile(kc, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(c, E.warrantBin, append([]string{"ticket", "--kubeconfig", kc}, args...)...)
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
		t.Fatalf("warrant ticket %v: %v", args, err)
		return "", "", -1
	}
}

// grant binds user to clusterRole in tkNS, or to a Role of rules when clusterRole is "".
func grant(t *testing.T, user, clusterRole string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	c := client(t, E.scenarios, "admin")
	name := fmt.Sprintf("%s-%s", user, clusterRole)
	ref := rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: clusterRole}
	if clusterRole == "" {
		name = user + "-own"
		ref = rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name}
		if _, err := c.RbacV1().Roles(tkNS).Create(ctx(t), &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	if _, err := c.RbacV1().RoleBindings(tkNS).Create(ctx(t), &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, RoleRef: ref,
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// newTicket is a DeletionTicket of requestedBy for the Deployment name in tkNS.
func newTicket(ticket, requestedBy, target string, expires time.Time, singleUse bool) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "warrant.dev/v1alpha1", "kind": "DeletionTicket",
		"metadata": map[string]any{"name": ticket},
		"spec": map[string]any{
			"requestedBy": requestedBy,
			"targets":     []any{map[string]any{"group": "apps", "resource": "deployments", "namespace": tkNS, "name": target}},
			"reason":      "tier test",
			"expiresAt":   expires.UTC().Format(time.RFC3339),
			"singleUse":   singleUse,
		},
	}}
}

// approve writes one approval in approval's name as writer; the error the API server returned.
func approve(t *testing.T, writer, ticket, approval string) error {
	t.Helper()
	tickets, _ := as(t, writer)
	cur, err := tickets.Get(ctx(t), ticket, metav1.GetOptions{})
	if err != nil {
		return err
	}
	approvals, _, _ := unstructured.NestedSlice(cur.Object, "status", "approvals")
	approvals = append(approvals, map[string]any{"user": approval, "time": time.Now().UTC().Format(time.RFC3339), "comment": "tier"})
	if err := unstructured.SetNestedSlice(cur.Object, approvals, "status", "approvals"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(cur.Object, "Approved", "status", "phase"); err != nil {
		t.Fatal(err)
	}
	_, err = tickets.UpdateStatus(ctx(t), cur, metav1.UpdateOptions{})
	return err
}

// refusedWith asserts err is warrant's refusal with code and that warrant-admission audited a
// refusal with that code since m.
func refusedWith(t *testing.T, m logMark, err error, code string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), "["+code+"]") {
		t.Fatalf("want a refusal [%s], got %v", code, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, r := range readRecords[admissionRecord](m) {
			if r.Code == code && r.Denied {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no audit record of a refusal [%s]", code)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func TestDeletionTicketsApprovedUnderRBAC(t *testing.T) {
	setWarrantConfig(t, ticketsConfig())
	labelledNamespace(t, E.scenarios, tkNS, nil)
	grant(t, tkRequester, "warrant-ticket-requester")
	grant(t, tkRequester, "warrant-ticket-approver")
	grant(t, tkRequester, "", rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list", "delete"}})
	grant(t, tkApprover1, "warrant-ticket-approver")
	grant(t, tkApprover2, "warrant-ticket-approver")
	grant(t, tkBystander, "", rbacv1.PolicyRule{APIGroups: []string{"warrant.dev"}, Resources: []string{"deletiontickets", "deletiontickets/status"}, Verbs: []string{"get", "update"}})
	requesterTickets, requester := as(t, tkRequester)
	eventually(t, 20*time.Second, "the DeletionTicket CRD served and the requester's RBAC", func() error {
		_, err := requesterTickets.List(ctx(t), metav1.ListOptions{Limit: 1})
		return err
	})
	critical := map[string]string{protectionLabel: "critical"}
	workload{ns: tkNS, name: "tk-db", labels: critical}.build(t, E.scenarios)
	workload{ns: tkNS, name: "tk-cache", labels: critical}.build(t, E.scenarios)

	// Until warrant-admission's watch of DeletionTickets has listed, a deletion that needs a
	// ticket is refused by the guard's failure policy (no ticket is assumed missing); then
	// the ticket is missing.
	eventually(t, 15*time.Second, "the ticket watch listed: an unticketed delete is MISSING_TICKET", func() error {
		m := markLog(E.ring.audit)
		err := requester.AppsV1().Deployments(tkNS).Delete(ctx(t), "tk-db", metav1.DeleteOptions{})
		if err == nil {
			t.Fatal("an unticketed delete of a critical Deployment was admitted")
		}
		if !strings.Contains(err.Error(), "[MISSING_TICKET]") {
			if !strings.Contains(err.Error(), "ticket source unavailable") {
				t.Fatalf("before the watch listed: %v", err)
			}
			return err
		}
		refusedWith(t, m, err, "MISSING_TICKET")
		return nil
	})
	var err error
	var m logMark

	m = markLog(E.ring.audit)
	_, err = requesterTickets.Create(ctx(t), newTicket("forged", tkApprover1, "tk-db", time.Now().Add(time.Hour), true), metav1.CreateOptions{})
	refusedWith(t, m, err, "TICKET_REQUESTER_MISMATCH")
	// A ticket naming its target with a wildcard is refused at create: the guard's profile
	// leaves tickets.allowWildcardTargets false, so a ticket lists each object.
	m = markLog(E.ring.audit)
	_, err = requesterTickets.Create(ctx(t), newTicket("everything", tkRequester, "*", time.Now().Add(time.Hour), true), metav1.CreateOptions{})
	refusedWith(t, m, err, "TICKET_WILDCARD_TARGET")
	if !strings.Contains(err.Error(), `spec.targets[0].name is "*"`) {
		t.Fatalf("the wildcard refusal does not say which target: %v", err)
	}

	if _, err := requesterTickets.Create(ctx(t), newTicket("drop-db", tkRequester, "tk-db", time.Now().Add(time.Hour), true), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the ticket: %v", err)
	}

	m = markLog(E.ring.audit)
	refusedWith(t, m, approve(t, tkRequester, "drop-db", tkRequester), "TICKET_SELF_APPROVAL")
	m = markLog(E.ring.audit)
	refusedWith(t, m, approve(t, tkBystander, "drop-db", tkBystander), "TICKET_APPROVER_NOT_AUTHORIZED")
	m = markLog(E.ring.audit)
	refusedWith(t, m, approve(t, tkApprover1, "drop-db", tkApprover2), "TICKET_APPROVER_FORGED")

	if err := approve(t, tkApprover1, "drop-db", tkApprover1); err != nil {
		t.Fatalf("approver1's approval: %v", err)
	}
	m = markLog(E.ring.audit)
	refusedWith(t, m, approve(t, tkApprover1, "drop-db", tkApprover1), "TICKET_ALREADY_APPROVED")
	// One approval of two: the guard counts them from status (once its cache has the first).
	eventually(t, 10*time.Second, "one approval of two counted", func() error {
		m := markLog(E.ring.audit)
		err := presenting(t, tkRequester, "drop-db").AppsV1().Deployments(tkNS).Delete(ctx(t), "tk-db", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil || !strings.Contains(err.Error(), "[INSUFFICIENT_APPROVALS]") {
			return fmt.Errorf("with one approval: %v", err)
		}
		refusedWith(t, m, err, "INSUFFICIENT_APPROVALS")
		return nil
	})

	// The plugin, as a user runs it: the requester's own approval refused (exit status 1,
	// warrant's reason), approver2's admitted.
	m = markLog(E.ring.audit)
	out, errText, code := plugin(t, tkRequester, "approve", "drop-db", "--comment", "mine")
	if code != 1 || !strings.Contains(errText, "[TICKET_SELF_APPROVAL]") {
		t.Fatalf("plugin approve by the requester: status %d, %q %q", code, out, errText)
	}
	refusedWith(t, m, errors.New(errText), "TICKET_SELF_APPROVAL")
	out, errText, code = plugin(t, tkApprover2, "approve", "drop-db", "--comment", "backups checked")
	if code != 0 || out != "deletionticket.warrant.dev/drop-db approved\n" {
		t.Fatalf("plugin approve by approver2: status %d, %q %q", code, out, errText)
	}
	approved := time.Now()
	var admitted time.Duration
	eventually(t, 10*time.Second, "the requester's delete admitted on the approved ticket", func() error {
		err := requester.AppsV1().Deployments(tkNS).Delete(ctx(t), "tk-db", metav1.DeleteOptions{})
		if err == nil {
			admitted = time.Since(approved)
		}
		return err
	})
	fmt.Printf("TICKETS: second approval to admitted delete: %s\n", admitted.Round(time.Millisecond))

	// The single-use ticket is Used for that object.
	used, err := requesterTickets.Get(ctx(t), "drop-db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	phase, _, _ := unstructured.NestedString(used.Object, "status", "phase")
	uid, _, _ := unstructured.NestedString(used.Object, "status", "usedFor", "uid")
	if phase != "Used" || uid == "" {
		status, _ := json.Marshal(used.Object["status"])
		t.Fatalf("after the deletion the ticket's status is %s", status)
	}
	out, errText, code = plugin(t, tkRequester, "list", "-o", "json")
	var listed struct {
		Kind  string `json:"kind"`
		Items []struct {
			Metadata struct{ Name string } `json:"metadata"`
			Status   struct {
				Phase     string `json:"phase"`
				Approvals []struct{ User, Comment string }
			} `json:"status"`
		} `json:"items"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &listed) != nil || listed.Kind != "List" || len(listed.Items) != 1 ||
		listed.Items[0].Status.Phase != "Used" || len(listed.Items[0].Status.Approvals) != 2 ||
		listed.Items[0].Status.Approvals[1].User != tkApprover2 || listed.Items[0].Status.Approvals[1].Comment != "backups checked" {
		t.Fatalf("plugin list -o json: status %d, %q %q", code, out, errText)
	}
	// A second deletion on it (the same name, a new object) is refused once the cache has
	// seen it Used.
	workload{ns: tkNS, name: "tk-db", labels: critical}.build(t, E.scenarios)
	eventually(t, 10*time.Second, "a second deletion on the used ticket refused", func() error {
		m := markLog(E.ring.audit)
		err := presenting(t, tkRequester, "drop-db").AppsV1().Deployments(tkNS).Delete(ctx(t), "tk-db", metav1.DeleteOptions{})
		if err == nil {
			t.Fatal("a second deletion was admitted on a single-use ticket")
		}
		if !strings.Contains(err.Error(), "[TICKET_USED]") {
			return err
		}
		refusedWith(t, m, err, "TICKET_USED")
		return nil
	})

	// An expired ticket: approved by both in time, past expiresAt at the delete.
	out, errText, code = plugin(t, tkRequester, "request", "deployments.apps/tk-cache", "--name", "drop-cache", "--expires-in", "6s", "--reason", "short")
	if code != 0 || out != "deletionticket.warrant.dev/drop-cache created\n" {
		t.Fatalf("plugin request: status %d, %q %q", code, out, errText)
	}
	short, err := requesterTickets.Get(ctx(t), "drop-cache", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	by, _, _ := unstructured.NestedString(short.Object, "spec", "requestedBy")
	at, _, _ := unstructured.NestedString(short.Object, "spec", "expiresAt")
	expires, err := time.Parse(time.RFC3339, at)
	if by != tkRequester || err != nil {
		t.Fatalf("the requested ticket: requestedBy %q, expiresAt %q", by, at)
	}
	for _, who := range []string{tkApprover1, tkApprover2} {
		if err := approve(t, who, "drop-cache", who); err != nil {
			t.Fatalf("%s's approval of the short ticket: %v", who, err)
		}
	}
	time.Sleep(time.Until(expires) + 500*time.Millisecond)
	m = markLog(E.ring.audit)
	err = presenting(t, tkRequester, "drop-cache").AppsV1().Deployments(tkNS).Delete(ctx(t), "tk-cache", metav1.DeleteOptions{})
	refusedWith(t, m, err, "TICKET_EXPIRED")

	// A ticket selecting its targets by label covers, at admission, the objects whose labels
	// match, and no other. The CRD's own rule refuses a target with both a name and a selector
	// before warrant is asked.
	both := newTicket("both", tkRequester, "tk-batch-1", time.Now().Add(time.Hour), false)
	targets, _, _ := unstructured.NestedSlice(both.Object, "spec", "targets")
	targets[0].(map[string]any)["selector"] = map[string]any{"matchLabels": map[string]any{"job": "nightly"}}
	_ = unstructured.SetNestedSlice(both.Object, targets, "spec", "targets")
	_, err = requesterTickets.Create(ctx(t), both, metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "not both and not neither") {
		t.Fatalf("a target with a name and a selector: %v", err)
	}
	nightly := map[string]string{protectionLabel: "critical", "job": "nightly"}
	workload{ns: tkNS, name: "tk-batch-1", labels: nightly}.build(t, E.scenarios)
	workload{ns: tkNS, name: "tk-batch-2", labels: nightly}.build(t, E.scenarios)
	workload{ns: tkNS, name: "tk-batch-weekly", labels: map[string]string{protectionLabel: "critical", "job": "weekly"}}.build(t, E.scenarios)
	out, errText, code = plugin(t, tkRequester, "request", "deployments.apps", "-l", "job=nightly", "--name", "drop-nightly", "--reason", "retire the nightly jobs")
	if code != 0 || out != "deletionticket.warrant.dev/drop-nightly created\n" {
		t.Fatalf("plugin request -l: status %d, %q %q", code, out, errText)
	}
	for _, who := range []string{tkApprover1, tkApprover2} {
		if err := approve(t, who, "drop-nightly", who); err != nil {
			t.Fatalf("%s's approval of the selector ticket: %v", who, err)
		}
	}
	for _, name := range []string{"tk-batch-1", "tk-batch-2"} {
		eventually(t, 10*time.Second, "the requester's delete of "+name+" admitted on the selector ticket", func() error {
			return requester.AppsV1().Deployments(tkNS).Delete(ctx(t), name, metav1.DeleteOptions{})
		})
	}
	m = markLog(E.ring.audit)
	err = presenting(t, tkRequester, "drop-nightly").AppsV1().Deployments(tkNS).Delete(ctx(t), "tk-batch-weekly", metav1.DeleteOptions{})
	refusedWith(t, m, err, "TICKET_SCOPE")
}
