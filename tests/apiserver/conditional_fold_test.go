package apiserver

// An API server that did not opt in to conditional authorization (the main tier's
// v1.35, which sends no authorizationOptions) gets, from a guard that authors conditions, the
// answer its `conditions.whenUnsupported` says: Fold (the types' documented fold: Deny, since the
// guard's conditions are Deny conditions) or ValidationRing (NoOpinion: RBAC, then the validation
// ring, which is installed on this API server, judge the object).

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func foldConfig(when string) string {
	return fmt.Sprintf(`apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
- type: DeletionGuard
  name: guard
  conditions:
    whenUnsupported: %s
  matchConditions:
  - expression: "has(request.resourceAttributes) && request.resourceAttributes.namespace == 'fold'"
  guard:
    protectionLabel: %s
    ticketAnnotation: %s
`, when, protectionLabel, ticketAnnotation)
}

func TestConditionsFoldForAnAPIServerThatDidNotOptIn(t *testing.T) {
	a := E.scenarios
	ensureNamespace(t, a, "fold")
	makeDeployment(t, a, "fold", "one")
	makeDeployment(t, a, "fold", "two")

	// Fold: the guard's Deny conditions fold to a Deny the API server enforces at authorization.
	setWarrantConfig(t, foldConfig("Fold"))
	c := sre(t, a, nil).AppsV1().Deployments("fold")
	m := markAudit()
	err := c.Delete(ctx(t), "one", metav1.DeleteOptions{})
	wantForbidden(t, err, "guard")
	r := waitAudit(t, m, "the folded delete", isReview(ringUser, "delete", "deployments", "fold"))
	if r.Decision != "Deny" {
		t.Fatalf("a caller that did not opt in must get the folded Deny, got %+v", r)
	}
	if _, err := client(t, a, "admin").AppsV1().Deployments("fold").Get(ctx(t), "one", metav1.GetOptions{}); err != nil {
		t.Fatalf("the folded Deny must keep the deployment: %v", err)
	}

	// ValidationRing: no opinion at authorization; RBAC allows and the ring judges the
	// (unlabelled, so LOW-risk) deployment at admission and admits it.
	setWarrantConfig(t, foldConfig("ValidationRing"))
	m = markAudit()
	mw := markLog(E.ring.audit)
	if err := c.Delete(ctx(t), "two", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("with whenUnsupported: ValidationRing the delete is left to RBAC and the ring: %v", err)
	}
	r = waitAudit(t, m, "the delegated delete", isReview(ringUser, "delete", "deployments", "fold"))
	if r.Decision != "NoOpinion" {
		t.Fatalf("a caller that did not opt in must get NoOpinion with ValidationRing, got %+v", r)
	}
	// The ring judged the object.
	rec := waitFor(t, mw, "the ring's judgement of the delete", func(r admissionRecord) bool { return r.is("DELETE", "fold", "two") })
	if g := rec.guard(t); g == nil || !rec.Allowed {
		t.Fatalf("the validation ring must judge and admit the unlabelled deployment: %+v", rec)
	}
}
