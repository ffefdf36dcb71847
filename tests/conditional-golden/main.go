// Command conditional-golden writes the golden JSON fixtures of warrant's conditional
// authorization wire format (KEP-5681) by marshalling the real Go types of k8s.io/api
// v0.38.0-beta.0 with encoding/json, as kube-apiserver's webhook client does. The Rust tests in
// src/review/tests_conditional.rs decode and re-encode them.
//
// Run: cd tests/conditional-golden && GOTOOLCHAIN=go1.27.3 go run . testdata
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	authorizationv1alpha1 "k8s.io/api/authorization/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// guardCondition is the deny condition warrant's guard authors for label protection.
var guardCondition = authorizationv1.Condition{
	ID:          "warrant.dev/protection-critical",
	Condition:   "has(oldObject.metadata.labels) && 'warrant.dev/protection' in oldObject.metadata.labels && oldObject.metadata.labels['warrant.dev/protection'] == 'critical'",
	Type:        "authorizer.kubernetes.io/cel",
	Description: "guard: deleting an object labelled warrant.dev/protection=critical is refused [LABEL_PROTECTED]",
}

func main() {
	dir := os.Args[1]
	tm := func(v string, k string) metav1.TypeMeta { return metav1.TypeMeta{APIVersion: v, Kind: k} }
	conditionsMap := authorizationv1.ConditionsAwareDecision{
		Type: authorizationv1.ConditionsAwareDecisionTypeConditionsMap,
		ConditionsMap: &authorizationv1.ConditionsMap{
			DenyConditions: []authorizationv1.Condition{guardCondition},
		},
	}
	union := authorizationv1.ConditionsAwareDecision{
		Type: authorizationv1.ConditionsAwareDecisionTypeUnion,
		Union: []authorizationv1.NamedConditionsAwareDecision{
			{AuthorizerName: "guard", Decision: conditionsMap},
			{AuthorizerName: "owners", Decision: authorizationv1.ConditionsAwareDecision{
				Type: authorizationv1.ConditionsAwareDecisionTypeConditionsMap,
				ConditionsMap: &authorizationv1.ConditionsMap{
					AllowConditions: []authorizationv1.Condition{{ID: "warrant.dev/owner-matches", Condition: "object.metadata.labels['owner'] == 'team-a'"}},
				},
			}},
			{AuthorizerName: "tail", Decision: authorizationv1.ConditionsAwareDecision{
				Type:  authorizationv1.ConditionsAwareDecisionTypeAllow,
				Allow: &authorizationv1.UnconditionalDecision{Reason: "allowed"},
			}},
		},
	}
	spec := authorizationv1.SubjectAccessReviewSpec{
		User:   "jane",
		Groups: []string{"team-a", "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: "prod", Verb: "delete", Group: "apps", Version: "v1", Resource: "deployments", Name: "web",
		},
		// What webhook.go's ConditionsAwareAuthorize sends when a conditions review client is set.
		AuthorizationOptions: &authorizationv1.AuthorizationOptions{
			HandledDecisionTypes: authorizationv1.ConditionalAuthorizationDecisionTypesList(),
		},
	}
	old := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "prod", "labels": map[string]any{"warrant.dev/protection": "critical"}},
	}
	oldRaw, _ := json.Marshal(old)
	fixtures := map[string]any{
		"sar-request-conditional.json": authorizationv1.SubjectAccessReview{TypeMeta: tm("authorization.k8s.io/v1", "SubjectAccessReview"), Spec: spec},
		"sar-request-unknown-types.json": authorizationv1.SubjectAccessReview{
			TypeMeta: tm("authorization.k8s.io/v1", "SubjectAccessReview"),
			Spec: authorizationv1.SubjectAccessReviewSpec{
				User:               "jane",
				ResourceAttributes: spec.ResourceAttributes,
				AuthorizationOptions: &authorizationv1.AuthorizationOptions{
					HandledDecisionTypes: []authorizationv1.ConditionsAwareDecisionType{"Allow", "Deny", "NoOpinion", "SomethingNew"},
				},
			},
		},
		"sar-response-conditions-map.json": authorizationv1.SubjectAccessReview{
			TypeMeta: tm("authorization.k8s.io/v1", "SubjectAccessReview"),
			Status:   authorizationv1.SubjectAccessReviewStatus{ConditionalDecision: &conditionsMap},
		},
		"sar-response-union.json": authorizationv1.SubjectAccessReview{
			TypeMeta: tm("authorization.k8s.io/v1", "SubjectAccessReview"),
			Status:   authorizationv1.SubjectAccessReviewStatus{ConditionalDecision: &union},
		},
		"acr-request-delete.json": authorizationv1alpha1.AuthorizationConditionsReview{
			TypeMeta: tm("authorization.k8s.io/v1alpha1", "AuthorizationConditionsReview"),
			Request: &authorizationv1alpha1.AuthorizationConditionsRequest{
				Decision: conditionsMap,
				AdmissionRequest: &admissionv1.AdmissionRequest{
					UID:       "0b8c5f57-6a1e-4d35-9d8b-1b2a0f6f1c11",
					Kind:      metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
					Resource:  metav1.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
					Name:      "web",
					Namespace: "prod",
					Operation: admissionv1.Delete,
					UserInfo:  authenticationv1.UserInfo{Username: "jane", Groups: []string{"team-a"}},
					OldObject: runtime.RawExtension{Raw: oldRaw},
					DryRun:    new(false),
				},
			},
		},
		"acr-response-deny.json": authorizationv1alpha1.AuthorizationConditionsReview{
			TypeMeta: tm("authorization.k8s.io/v1alpha1", "AuthorizationConditionsReview"),
			Response: &authorizationv1alpha1.AuthorizationConditionsResponse{
				UID: "0b8c5f57-6a1e-4d35-9d8b-1b2a0f6f1c11",
				Decision: authorizationv1.ConditionsAwareDecision{
					Type: authorizationv1.ConditionsAwareDecisionTypeDeny,
					Deny: &authorizationv1.UnconditionalDecision{Reason: guardCondition.Description},
				},
			},
		},
	}
	for name, v := range fixtures {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			fmt.Fprintln(os.Stderr, name, err)
			os.Exit(1)
		}
		if err := os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
