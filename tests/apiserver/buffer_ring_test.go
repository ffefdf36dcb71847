package apiserver

// The validation ring's side of the buffer ring through a real kube-apiserver and the
// shipped ValidatingWebhookConfiguration: the requester annotation warrant patches onto an object
// carrying the buffer's finalizer when it admits its DELETE (and why that converges: kube-apiserver
// runs the DELETE's validation again after the patch, and the second run writes nothing), the
// confirmation annotation (not by the deleter, ticketed), the hand removal of the finalizer
// (ticketed) and the requester annotation reserved to warrant. There is no buffer controller
// here: the finalizer is put on by hand at creation, and taken off as warrant's service account.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	bufferConfirmation = "warrant.dev/deletion-confirmed"
	bufferRequester    = "warrant.dev/deletion-requested-by"
	bufferNS           = "buffer-shop"
	bufferConfirmer    = "buffer-confirmer"
)

// ringBufferTickets: CHG-BUF-1 approves changes in buffer-shop (two approvers, as critical needs);
// CHG-BUF-ONE has one approver only.
const ringBufferTickets = `tickets:
  - id: CHG-BUF-1
    status: Approved
    approvers: [carol, dave]
    expires: "2030-01-01T00:00:00Z"
    scope: {namespaces: [buffer-shop]}
  - id: CHG-BUF-ONE
    status: Approved
    approvers: [carol]
    expires: "2030-01-01T00:00:00Z"
    scope: {namespaces: [buffer-shop]}
`

// setBufferRing serves the ring's chain with a buffer block requiring confirmation. The
// controller runs too (warrant-admission leads): the thresholds make a critical label and
// business hours CRITICAL (40 + 10 >= 50) and the cool-down is long, so it holds these
// scenarios' objects instead of releasing them while they are judged.
func setBufferRing(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(filepath.Dir(E.warrantCfg), "ring-tickets.yaml"), []byte(ringBufferTickets), 0o600); err != nil {
		t.Fatal(err)
	}
	setWarrantConfig(t, ringConfig("Enforce")+`      riskThresholds: {medium: 10, high: 30, critical: 50}
      buffer:
        finalizeAt: high
        requireConfirmation: true
        cooldown: 1h
`)
	time.Sleep(1500 * time.Millisecond) // the controller's look at the new settings (setBuffer)
}

// bufferUser is a cluster-admin client impersonating user (through RBAC; warrant's rings still
// judge it).
func bufferUser(t *testing.T, user string) *kubernetes.Clientset {
	t.Helper()
	bindClusterAdmin(t, E.scenarios, "", user+"-admin", rbacv1.Subject{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user})
	cfg := restConfig(E.scenarios, "tok-admin")
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, user+"'s RBAC binding", func() error {
		_, err := c.AppsV1().Deployments("default").List(ctx(t), metav1.ListOptions{Limit: 1})
		return err
	})
	return c
}

// finalized creates Deployment name in buffer-shop labelled critical, carrying the buffer's
// finalizer and annotations, and removes the finalizer (as warrant's service account) when the
// test ends.
func finalized(t *testing.T, name string, annotations map[string]string) *appsv1.Deployment {
	t.Helper()
	a := E.scenarios
	d := bareDeployment(name, map[string]string{protectionLabel: "critical"})
	d.Finalizers = []string{bufferFinalizer}
	d.Annotations = annotations
	got, err := client(t, a, "admin").AppsV1().Deployments(bufferNS).Create(ctx(t), d, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	own := client(t, a, warrantSA)
	t.Cleanup(func() {
		bg, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		_, err := own.AppsV1().Deployments(bufferNS).Patch(bg, name, types.MergePatchType, patch, metav1.PatchOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup: remove the finalizer of %s as warrant: %v", name, err)
		}
	})
	return got
}

// annotate merge-patches annotation key=value (null when value is nil) onto Deployment name.
func annotate(c *kubernetes.Clientset, t *testing.T, name, key string, value *string) (*appsv1.Deployment, error) {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{key: value}}})
	if err != nil {
		t.Fatal(err)
	}
	return c.AppsV1().Deployments(bufferNS).Patch(ctx(t), name, types.MergePatchType, patch, metav1.PatchOptions{})
}

func str(s string) *string { return &s }

func getDeployment(t *testing.T, name string) *appsv1.Deployment {
	t.Helper()
	d, err := client(t, E.scenarios, "admin").AppsV1().Deployments(bufferNS).Get(ctx(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// requesterCount reads warrant_buffer_requester_annotations_total{outcome} from warrant-admission.
func requesterCount(t *testing.T, outcome string) int {
	t.Helper()
	re := regexp.MustCompile(`(?m)^warrant_buffer_requester_annotations_total\{outcome="` + outcome + `"\} (\d+)$`)
	m := re.FindStringSubmatch(metricsOf(E.ring.url))
	if m == nil {
		return 0
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// An admitted DELETE of a critical Deployment carrying the finalizer: it turns Terminating with
// the deleter recorded in the requester annotation, after two DELETE reviews (kube-apiserver
// validated the DELETE again once warrant's patch had moved the object on) and exactly one
// patch; a patch writing the same value again does not change resourceVersion; a second
// DELETE of the Terminating object leaves the first requester in place.
func TestBufferRequesterRecordedOnDelete(t *testing.T) {
	a := E.scenarios
	setBufferRing(t)
	labelledNamespace(t, a, bufferNS, nil)
	c := sre(t, a, nil)
	const name = "orders-db"
	finalized(t, name, map[string]string{ticketAnnotation: "CHG-BUF-1"})
	recorded, unchanged := requesterCount(t, "recorded"), requesterCount(t, "unchanged")

	m := markLog(E.ring.audit)
	if err := c.AppsV1().Deployments(bufferNS).Delete(ctx(t), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("the ticketed delete: %v", err)
	}
	d := getDeployment(t, name)
	if d.DeletionTimestamp == nil || d.Annotations[bufferRequester] != ringUser {
		t.Fatalf("after the admitted delete: deletionTimestamp %v, annotations %v", d.DeletionTimestamp, d.Annotations)
	}
	// Both reviews were answered before the client's; the audit writer may lag a little.
	var reviews []admissionRecord
	eventually(t, 5*time.Second, "two DELETE reviews in warrant-admission's audit", func() error {
		reviews = reviews[:0]
		for _, r := range readRecords[admissionRecord](m) {
			if r.is("DELETE", bufferNS, name) {
				reviews = append(reviews, r)
			}
		}
		if len(reviews) < 2 {
			return fmt.Errorf("%d so far", len(reviews))
		}
		return nil
	})
	time.Sleep(300 * time.Millisecond) // and no third one
	n := 0
	for _, r := range readRecords[admissionRecord](m) {
		if r.is("DELETE", bufferNS, name) {
			n++
		}
	}
	if n != 2 || !reviews[0].Allowed || !reviews[1].Allowed {
		t.Fatalf("want two admitted DELETE reviews (the second after the patch), got %d: %+v", n, reviews)
	}
	if got := requesterCount(t, "recorded") - recorded; got != 1 {
		t.Errorf("patches written: %d, want 1", got)
	}
	if got := requesterCount(t, "unchanged") - unchanged; got != 1 {
		t.Errorf("reviews that found the annotation already right: %d, want 1", got)
	}

	// The same value again (warrant's account, as the second review would have written it):
	// no write, resourceVersion unchanged, so no further round of the DELETE could follow.
	same, err := annotate(client(t, a, warrantSA), t, name, bufferRequester, str(ringUser))
	if err != nil {
		t.Fatalf("warrant's no-op patch: %v", err)
	}
	if same.ResourceVersion != d.ResourceVersion {
		t.Fatalf("a patch writing the same value moved resourceVersion %s -> %s", d.ResourceVersion, same.ResourceVersion)
	}

	// Deleting the Terminating object again (someone else): the first requester stands.
	other := bufferUser(t, bufferConfirmer)
	if err := other.AppsV1().Deployments(bufferNS).Delete(ctx(t), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("the second delete: %v", err)
	}
	if got := getDeployment(t, name).Annotations[bufferRequester]; got != ringUser {
		t.Fatalf("after a second delete the requester is %q, want %q", got, ringUser)
	}
}

// Confirming a held deletion: the deleter's own confirmation is refused, an unticketed one and
// one whose ticket lacks the approvals of the object's level too; a second person's with a valid
// ticket is admitted.
func TestBufferConfirmation(t *testing.T) {
	a := E.scenarios
	setBufferRing(t)
	labelledNamespace(t, a, bufferNS, nil)
	c := sre(t, a, nil)
	const name = "payments-db"
	finalized(t, name, map[string]string{ticketAnnotation: "CHG-BUF-1"})
	if _, err := annotate(c, t, name, bufferConfirmation, str("CHG-BUF-1")); err == nil {
		t.Fatalf("a confirmation before the deletion was admitted")
	} else {
		wantForbidden(t, err, "[NOT_TERMINATING]")
	}
	if err := c.AppsV1().Deployments(bufferNS).Delete(ctx(t), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("the ticketed delete: %v", err)
	}

	_, err := annotate(c, t, name, bufferConfirmation, str("CHG-BUF-1"))
	wantForbidden(t, err, "[CONFIRMATION_BY_REQUESTER]", ringUser+" asked for this deletion")
	other := bufferUser(t, bufferConfirmer)
	_, err = annotate(other, t, name, bufferConfirmation, str("CHG-NOPE"))
	wantForbidden(t, err, "[TICKET_NOT_FOUND]")
	_, err = annotate(other, t, name, bufferConfirmation, str("CHG-BUF-ONE"))
	wantForbidden(t, err, "[INSUFFICIENT_APPROVALS]")
	if d := getDeployment(t, name); d.Annotations[bufferConfirmation] != "" {
		t.Fatalf("a refused confirmation was written: %v", d.Annotations)
	}

	m := markLog(E.ring.audit)
	d, err := annotate(other, t, name, bufferConfirmation, str("CHG-BUF-1"))
	if err != nil {
		t.Fatalf("the second person's ticketed confirmation: %v", err)
	}
	if d.Annotations[bufferConfirmation] != "CHG-BUF-1" {
		t.Fatalf("confirmation not written: %v", d.Annotations)
	}
	// The refusals' records may still be on their way (the audit writer batches): pick the
	// admitted one.
	rec := waitFor(t, m, "the confirmation", func(r admissionRecord) bool { return r.is("UPDATE", bufferNS, name) && r.Allowed })
	if g := rec.guard(t); !rec.Allowed || g == nil || g.Code != "ALLOW" || g.Ticket != "CHG-BUF-1" || rec.User != bufferConfirmer {
		t.Fatalf("warrant-admission's record of the confirmation: %+v / %+v", rec, g)
	}
}

// Removing the finalizer by hand: refused without a ticket, admitted with one annotated in the
// same patch. Forging the requester annotation is refused; an unrelated annotation is not even
// sent to warrant (the matchCondition keeps it away).
func TestBufferHandRemovalAndForgery(t *testing.T) {
	a := E.scenarios
	setBufferRing(t)
	labelledNamespace(t, a, bufferNS, nil)
	c := sre(t, a, nil)
	const name = "ledger-db"
	finalized(t, name, nil)

	m := markLog(E.ring.audit)
	if _, err := annotate(c, t, name, "example.com/note", str("hello")); err != nil {
		t.Fatalf("an unrelated annotation: %v", err)
	}
	_, err := annotate(c, t, name, bufferRequester, str("someone-else"))
	wantForbidden(t, err, "[REQUESTER_ANNOTATION_RESERVED]")
	waitFor(t, m, "the forged annotation", func(r admissionRecord) bool { return r.is("UPDATE", bufferNS, name) })
	recs := readRecords[admissionRecord](m)
	if len(recs) != 1 || !recs[0].is("UPDATE", bufferNS, name) || recs[0].Allowed {
		t.Fatalf("want warrant-admission to see only the forged annotation, saw %d: %+v", len(recs), recs)
	}

	removal := `{"metadata":{"finalizers":null%s}}`
	_, err = c.AppsV1().Deployments(bufferNS).Patch(ctx(t), name, types.MergePatchType, []byte(fmt.Sprintf(removal, "")), metav1.PatchOptions{})
	wantForbidden(t, err, "[MISSING_TICKET]", "removing finalizer "+bufferFinalizer)
	ticketed := fmt.Sprintf(removal, fmt.Sprintf(`,"annotations":{%q:"CHG-BUF-1"}`, ticketAnnotation))
	d, err := c.AppsV1().Deployments(bufferNS).Patch(ctx(t), name, types.MergePatchType, []byte(ticketed), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("the ticketed removal: %v", err)
	}
	if len(d.Finalizers) != 0 {
		t.Fatalf("finalizers after the ticketed removal: %v", d.Finalizers)
	}
}
