package apiserver

// Scenarios that need warrant's `Policy` type (warrant.dev/v1alpha1, rules in CEL).

import (
	"strings"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const cfgPolicy = `apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
  - type: Policy
    name: cluster-rules
    failurePolicy: Deny
    matchConditions:
      - expression: "has(request.resourceAttributes)"
    policy:
      rules:
        - name: list-needs-label-selector
          effect: Deny
          expression: >-
            request.resourceAttributes.resource == 'configmaps' &&
            request.resourceAttributes.verb == 'list' &&
            request.?resourceAttributes.labelSelector.requirements.orValue([]).size() == 0
          message: "listing configmaps needs a label selector"
          code: SELECTOR_REQUIRED
        - name: no-negative-field-selector
          effect: Deny
          expression: >-
            request.resourceAttributes.verb == 'list' &&
            request.?resourceAttributes.fieldSelector.requirements.orValue([]).exists(r, r.operator == 'NotIn')
          message: "negative field selectors are not allowed"
          code: FIELD_NOTIN
        # The constrained verbs too (impersonate:user-info, ...): the API server tries every
        # impersonation mode, so a Deny of the legacy verb alone is walked around.
        - name: impersonate-only-qa-bot
          effect: Deny
          expression: >-
            (request.resourceAttributes.verb == 'impersonate' ||
             request.resourceAttributes.verb.startsWith('impersonate:')) &&
            !(request.resourceAttributes.resource == 'users' && request.resourceAttributes.name == 'qa-bot')
          message: "only qa-bot may be impersonated"
          code: IMPERSONATION
        - name: team-a
          effect: Allow
          expression: "'team-a' in request.groups || request.user == 'qa-bot'"
          message: "team-a may act"
`

// warrant denies with a Policy rule -> 403 with the reason and the code.
func TestPolicyDenyCarriesReasonAndCode(t *testing.T) {
	requirePolicy(t)
	a := E.scenarios
	ensureNamespace(t, a, "team")
	setWarrantConfig(t, cfgPolicy)
	m := markAudit()
	_, err := client(t, a, "pol-alice").CoreV1().ConfigMaps("team").List(ctx(t), metav1.ListOptions{})
	wantForbidden(t, err, "cluster-rules/list-needs-label-selector: listing configmaps needs a label selector [SELECTOR_REQUIRED]")
	r := waitAudit(t, m, "pol-alice's list", isReview("pol-alice", "list", "configmaps", "team"))
	if r.Decision != "Deny" || r.Code != "SELECTOR_REQUIRED" {
		t.Fatalf("audit: %+v", r)
	}
}

// warrant has no opinion -> RBAC decides: no binding 403, after a RoleBinding allowed.
func TestPolicyNoOpinionFallsToRBAC(t *testing.T) {
	requirePolicy(t)
	a := E.scenarios
	ensureNamespace(t, a, "team-b")
	makeConfigMap(t, a, "team-b", "x", nil)
	setWarrantConfig(t, cfgPolicy)
	m := markAudit()
	_, err := client(t, a, "pol-bob").CoreV1().ConfigMaps("team-b").Get(ctx(t), "x", metav1.GetOptions{})
	wantForbidden(t, err, `User "pol-bob" cannot get resource "configmaps"`)
	r := waitAudit(t, m, "pol-bob's get", isReview("pol-bob", "get", "configmaps", "team-b"))
	if r.Decision != "NoOpinion" {
		t.Fatalf("audit: %+v", r)
	}
	bindRole(t, a, "team-b", "pol-bob", "get")
	eventually(t, 10*time.Second, "RBAC allows after the binding", func() error {
		_, err := client(t, a, "pol-bob").CoreV1().ConfigMaps("team-b").Get(ctx(t), "x", metav1.GetOptions{})
		return err
	})
}

// List with label and field selectors: rules on labelSelector/fieldSelector requirements (KEP-4601).
func TestPolicySelectors(t *testing.T) {
	requirePolicy(t)
	a := E.scenarios
	ensureNamespace(t, a, "team")
	makeConfigMap(t, a, "team", "web", map[string]string{"app": "web"})
	setWarrantConfig(t, cfgPolicy)
	c := client(t, a, "pol-alice").CoreV1().ConfigMaps("team")

	m := markAudit()
	list, err := c.List(ctx(t), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list with a label selector must be allowed: %v", err)
	}
	r := waitAudit(t, m, "the selector list", isReview("pol-alice", "list", "configmaps", "team"))
	if !strings.Contains(string(r.ResourceAttributes.LabelSelector), `"key":"app"`) || r.Decision != "Allow" {
		t.Fatalf("warrant must have seen the label requirement: %+v %s", r, r.ResourceAttributes.LabelSelector)
	}

	_, err = c.List(ctx(t), metav1.ListOptions{LabelSelector: "app=web", FieldSelector: "metadata.name!=other"})
	wantForbidden(t, err, "negative field selectors are not allowed [FIELD_NOTIN]")
	if _, err := c.List(ctx(t), metav1.ListOptions{LabelSelector: "app=web", FieldSelector: "metadata.name=web"}); err != nil {
		t.Fatalf("positive field selector must be allowed: %v", err)
	}
}

// `kubectl auth can-i` and SSAR answer yes/no per rule.
func TestPolicyCanIPerRule(t *testing.T) {
	requirePolicy(t)
	a := E.scenarios
	ensureNamespace(t, a, "team")
	setWarrantConfig(t, cfgPolicy)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "configmaps", "-n", "team"}, "yes"},
		// kubectl prints the deciding rule's reason after a "no".
		{[]string{"list", "configmaps", "-n", "team"}, "no - cluster-rules/list-needs-label-selector: listing configmaps needs a label selector [SELECTOR_REQUIRED]"},
	} {
		out, _ := kubectlAs(t, a, "tok-pol-alice", append([]string{"auth", "can-i"}, tc.args...)...)
		if strings.TrimSpace(out) != tc.want {
			t.Fatalf("can-i %v: %q, want %q", tc.args, out, tc.want)
		}
	}
	ssar, err := client(t, a, "pol-alice").AuthorizationV1().SelfSubjectAccessReviews().Create(ctx(t), &authzv1.SelfSubjectAccessReview{
		Spec: authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authzv1.ResourceAttributes{
			Namespace: "team", Verb: "list", Resource: "configmaps",
			LabelSelector: &authzv1.LabelSelectorAttributes{RawSelector: "app=web"}}},
	}, metav1.CreateOptions{})
	if err != nil || !ssar.Status.Allowed {
		t.Fatalf("SSAR list with a label selector must be allowed: %v %+v", err, ssar)
	}
}

// Impersonation is decided by warrant's rule on the impersonate verb.
func TestPolicyImpersonationRule(t *testing.T) {
	requirePolicy(t)
	a := E.scenarios
	ensureNamespace(t, a, "team")
	makeConfigMap(t, a, "team", "imp", nil)
	setWarrantConfig(t, cfgPolicy)
	out, err := kubectlAs(t, a, "tok-pol-alice", "get", "configmap", "imp", "-n", "team", "--as", "qa-bot", "-o", "name")
	if err != nil || strings.TrimSpace(out) != "configmap/imp" {
		t.Fatalf("--as qa-bot must be allowed: %v %s", err, out)
	}
	out, err = kubectlAs(t, a, "tok-pol-alice", "get", "configmap", "imp", "-n", "team", "--as", "mallory")
	if err == nil || !strings.Contains(out, "only qa-bot may be impersonated [IMPERSONATION]") {
		t.Fatalf("--as mallory must be denied by the rule: %v %s", err, out)
	}
}

// Hot reload of a Policy flips a decision through the API server (uncached entry).
func TestPolicyHotReloadFlip(t *testing.T) {
	requirePolicy(t)
	a := E.scenarios
	ensureNamespace(t, a, "team")
	makeConfigMap(t, a, "team", "flip", nil)
	setWarrantConfig(t, cfgPolicy)
	c := client(t, a, "pol-alice").CoreV1().ConfigMaps("team")
	if _, err := c.Get(ctx(t), "flip", metav1.GetOptions{}); err != nil {
		t.Fatalf("team-a may get: %v", err)
	}
	setWarrantConfig(t, strings.Replace(cfgPolicy, "effect: Allow", "effect: Deny", 1))
	_, err := c.Get(ctx(t), "flip", metav1.GetOptions{})
	wantForbidden(t, err, "cluster-rules/team-a: team-a may act")
}
