package main

import (
	"encoding/json"
	"fmt"
	"math/rand"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// benchReview is the review every timed call sends: the one benches/policy_review.rs times. It
// passes the 3 matchConditions and matches only the last rule, so both servers run every rule.
func benchReview() authorizer.AttributesRecord {
	return authorizer.AttributesRecord{
		User: &user.DefaultInfo{Name: "owner-ann", UID: "42", Groups: []string{"dev", "system:authenticated"},
			Extra: map[string][]string{"scopes": {"a", "b"}}},
		Verb: "get", Namespace: "shop", APIGroup: "apps", APIVersion: "v1", Resource: "deployments",
		Name: "web", ResourceRequest: true,
	}
}

func resource(name string, groups []string, verb, ns, res string) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{
		User: &user.DefaultInfo{Name: name, UID: "1", Groups: groups},
		Verb: verb, Namespace: ns, APIGroup: "apps", APIVersion: "v1", Resource: res, Name: "x",
		ResourceRequest: true,
	}
}

func nonResource(name string, groups []string, verb, path string) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{User: &user.DefaultInfo{Name: name, UID: "1", Groups: groups}, Verb: verb, Path: path}
}

// handReviews are reviews written for each branch of the policy: every rule matching alone, the
// three matchConditions each failing, precedence of Deny over Allow, first match in file order,
// near misses, and no opinion.
func handReviews() []authorizer.AttributesRecord {
	var out []authorizer.AttributesRecord
	out = append(out, benchReview())
	for i := 0; i < 19; i++ {
		if i%2 == 0 {
			ns := fmt.Sprintf("ns-%d", i)
			out = append(out,
				resource("bob", []string{"dev"}, "delete", ns, "pods"),        // Deny rule-i
				resource("bob", []string{"dev"}, "get", ns, "pods"),           // near miss: verb
				resource("owner-x", []string{"team-1"}, "delete", ns, "pods"), // Deny beats Allow
			)
		} else {
			out = append(out,
				resource("bob", []string{fmt.Sprintf("team-%d", i)}, "list", "shop", "secrets"), // Allow rule-i
				nonResource("bob", []string{fmt.Sprintf("team-%d", i)}, "get", "/healthz"),      // no resourceAttributes
			)
		}
	}
	out = append(out,
		resource("owner-ann", []string{"team-5"}, "get", "shop", "pods"),                // rule-5 before owners
		resource("bob", []string{"team-7", "team-3"}, "get", "shop", "pods"),            // rule-3 first in file order
		resource("owner-ann", nil, "get", "shop", "services"),                           // owners: resource not listed
		resource("owner", nil, "get", "shop", "pods"),                                   // owners: no dash
		resource("system:owner-ann", nil, "get", "shop", "pods"),                        // matchCondition 3
		resource("system:admin", []string{"team-1"}, "delete", "ns-0", "pods"),          // matchCondition 3
		resource("owner-ann", []string{"system:masters"}, "get", "shop", "pods"),        // matchCondition 2
		resource("bob", []string{"system:masters", "team-1"}, "delete", "ns-0", "pods"), // matchCondition 2
		nonResource("owner-ann", nil, "get", "/api"),                                    // matchCondition 1
		resource("bob", []string{"dev"}, "get", "shop", "pods"),                         // no opinion
		resource("bob", []string{"team-2"}, "delete", "ns-1", "pods"),                   // no rule for team-2, ns-1
		resource("bob", nil, "delete", "", "namespaces"),                                // cluster scoped
		resource("", nil, "delete", "ns-0", "pods"),                                     // no user name
		resource("bob", []string{"team-19"}, "get", "shop", "pods"),                     // no rule-19 group rule
	)
	return out
}

// generatedReviews are n reviews drawn (seeded, so every run sends the same ones) from values
// around each rule's boundary.
func generatedReviews(n int) []authorizer.AttributesRecord {
	rng := rand.New(rand.NewSource(14))
	users := []string{"owner-ann", "owner-", "owner", "bob", "system:kube-scheduler", "system:serviceaccount:a:b", "Owner-x", ""}
	groupPool := []string{"dev", "system:authenticated", "system:masters", "system:nodes"}
	for i := 0; i < 21; i++ {
		groupPool = append(groupPool, fmt.Sprintf("team-%d", i))
	}
	verbs := []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
	var namespaces []string
	for i := 0; i < 21; i++ {
		namespaces = append(namespaces, fmt.Sprintf("ns-%d", i))
	}
	namespaces = append(namespaces, "", "shop", "kube-system", "NS-0")
	resources := []string{"deployments", "pods", "services", "secrets", "namespaces", "Pods", "deployment"}
	pick := func(xs []string) string { return xs[rng.Intn(len(xs))] }
	out := make([]authorizer.AttributesRecord, 0, n)
	for len(out) < n {
		var groups []string
		for k := rng.Intn(4); k > 0; k-- {
			groups = append(groups, pick(groupPool))
		}
		if rng.Intn(8) == 0 {
			out = append(out, nonResource(pick(users), groups, pick(verbs), "/metrics"))
			continue
		}
		out = append(out, resource(pick(users), groups, pick(verbs), pick(namespaces), pick(resources)))
	}
	return out
}

// describe renders a review for an error message.
func describe(a authorizer.AttributesRecord) string {
	u := a.User
	view := map[string]any{"user": u.GetName(), "groups": u.GetGroups(), "verb": a.Verb}
	if a.ResourceRequest {
		view["resourceAttributes"] = map[string]string{"namespace": a.Namespace, "group": a.APIGroup,
			"version": a.APIVersion, "resource": a.Resource, "name": a.Name}
	} else {
		view["nonResourceAttributes"] = map[string]string{"path": a.Path}
	}
	b, _ := json.Marshal(view)
	return string(b)
}
