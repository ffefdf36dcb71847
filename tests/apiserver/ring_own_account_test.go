package apiserver

import (
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// warrant's own service account is left out of the validation ring only for the changes warrant
// makes (its finalizer, its requester annotation): with its token, lowering a protection label
// is sent to warrant through the shipped webhooks and refused without a ticket, while its
// requester-annotation patch is not sent at all.
func TestRingOwnAccountCannotLowerAProtectionLabelUnseen(t *testing.T) {
	a := E.scenarios
	setRing(t, "Enforce")
	const ns, name = "ring-own", "labelled"
	labelledNamespace(t, a, ns, nil)
	critical := map[string]string{protectionLabel: "critical"}
	bindClusterAdmin(t, a, ns, "warrant-sa-admin-own", rbacv1.Subject{Kind: "ServiceAccount", Name: "warrant", Namespace: "warrant-system"})
	workload{ns: ns, name: name, labels: critical}.build(t, a)
	if expectedHook(t, a, "UPDATE", "apps", "deployments", ns, critical) == "" {
		t.Fatalf("no shipped webhook covers an UPDATE of a labelled Deployment")
	}
	own := impersonating(t, a, warrantSA, "system:serviceaccounts", "system:serviceaccounts:warrant-system")
	mw := markLog(E.ring.audit)

	// Its own change: the requester annotation. Admitted without a call to warrant.
	requester := []byte(`{"metadata":{"annotations":{"warrant.dev/deletion-requested-by":"ring-sre"}}}`)
	eventually(t, 10*time.Second, "warrant's requester annotation", func() error {
		_, err := own.AppsV1().Deployments(ns).Patch(ctx(t), name, types.MergePatchType, requester, metav1.PatchOptions{})
		return err
	})

	// Not its change: lowering the protection label. Judged, and refused without a ticket.
	lower := []byte(`{"metadata":{"labels":{"` + protectionLabel + `":"standard"}}}`)
	_, err := own.AppsV1().Deployments(ns).Patch(ctx(t), name, types.MergePatchType, lower, metav1.PatchOptions{})
	if err == nil || !strings.Contains(err.Error(), "MISSING_TICKET") {
		t.Fatalf("warrant's account lowered the protection label unjudged: %v", err)
	}
	rec := waitFor(t, mw, "the refused label change", func(r admissionRecord) bool { return r.is("UPDATE", ns, name) })
	if rec.Allowed || rec.User != warrantSA || rec.Code != "MISSING_TICKET" {
		t.Fatalf("warrant-admission's record of the label change: %+v", rec)
	}
	// The requester annotation, had it been sent, would have been admitted: every UPDATE record
	// of the object must be the refused label change (kube-apiserver may judge that one patch
	// more than once when it retries the write after a conflict).
	for _, r := range readRecords[admissionRecord](mw) {
		if r.isAny("UPDATE", ns, name) && (r.Allowed || r.Code != "MISSING_TICKET") {
			t.Fatalf("want only the refused label change judged (the requester annotation is warrant's own), got %+v", r)
		}
	}
	d, err := client(t, a, "admin").AppsV1().Deployments(ns).Get(ctx(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Labels[protectionLabel] != "critical" || d.Annotations["warrant.dev/deletion-requested-by"] != "ring-sre" {
		t.Fatalf("labels %v, annotations %v", d.Labels, d.Annotations)
	}
}
