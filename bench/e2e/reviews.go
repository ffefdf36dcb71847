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

// shape is one kind of review in the mixed workload and its weight (share of calls, in %).
type shape struct {
	weight int
	attrs  authorizer.AttributesRecord
}

func person(name string, groups ...string) *user.DefaultInfo {
	return &user.DefaultInfo{Name: name, UID: "1", Groups: append(groups, "system:authenticated")}
}

func coreRes(u *user.DefaultInfo, verb, ns, res string) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{User: u, Verb: verb, Namespace: ns, APIVersion: "v1", Resource: res,
		Name: "x", ResourceRequest: true}
}

func appsRes(u *user.DefaultInfo, verb, ns, res string) authorizer.AttributesRecord {
	a := coreRes(u, verb, ns, res)
	a.APIGroup = "apps"
	return a
}

func urlPath(u *user.DefaultInfo, p string) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{User: u, Verb: "get", Path: p}
}

// mixShapes is the mixed workload: 22 kinds of review weighted the way a cluster's authorizer
// sees them, most from components and service accounts (which the policy's matchConditions turn
// away before any rule runs), some non-resource URLs, and people whose reviews stop at the first,
// a middle or the last rule, or run every rule for no opinion. Weights sum to 100.
func mixShapes() []shape {
	sa := func(ns, name string) *user.DefaultInfo {
		return &user.DefaultInfo{Name: "system:serviceaccount:" + ns + ":" + name, UID: "2",
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
	}
	node := &user.DefaultInfo{Name: "system:node:n1", UID: "3", Groups: []string{"system:nodes", "system:authenticated"}}
	scheduler := &user.DefaultInfo{Name: "system:kube-scheduler", UID: "4", Groups: []string{"system:authenticated"}}
	kcm := &user.DefaultInfo{Name: "system:kube-controller-manager", UID: "5", Groups: []string{"system:authenticated"}}
	anonymous := &user.DefaultInfo{Name: "system:anonymous", Groups: []string{"system:unauthenticated"}}
	lease := coreRes(kcm, "update", "kube-system", "leases")
	lease.APIGroup = "coordination.k8s.io"
	return []shape{
		{10, coreRes(node, "get", "shop", "configmaps")},                                        // no opinion: system user
		{8, coreRes(scheduler, "list", "", "pods")},                                             // no opinion: system user
		{8, appsRes(sa("kube-system", "replicaset-controller"), "list", "shop", "replicasets")}, // no opinion: service account
		{6, coreRes(sa("shop", "web"), "get", "shop", "secrets")},                               // no opinion: service account
		{4, coreRes(sa("ci", "deployer"), "watch", "ci", "configmaps")},                         // no opinion: service account
		{4, lease},                                    // no opinion: system user
		{4, urlPath(anonymous, "/healthz")},           // no opinion: non-resource
		{3, urlPath(person("bob", "dev"), "/api")},    // no opinion: non-resource
		{2, urlPath(person("owner-ann"), "/version")}, // no opinion: non-resource
		{3, appsRes(person("admin", "system:masters"), "delete", "shop", "deployments")},  // no opinion: system:masters
		{6, coreRes(person("bob", "team-1"), "list", "shop", "secrets")},                  // Allow, first rule
		{5, coreRes(person("bob", "team-9"), "get", "shop", "pods")},                      // Allow, a middle rule
		{4, coreRes(person("carol", "team-17"), "get", "shop", "pods")},                   // Allow, a late rule
		{3, appsRes(person("dave", "team-3", "team-7"), "update", "shop", "deployments")}, // Allow, first match in order
		{3, coreRes(person("bob", "dev"), "delete", "ns-0", "pods")},                      // Deny, first rule
		{3, coreRes(person("bob", "dev"), "delete", "ns-10", "pods")},                     // Deny, a middle rule
		{2, coreRes(person("bob", "dev"), "delete", "ns-18", "pods")},                     // Deny, a late rule
		{3, coreRes(person("owner-x", "team-1"), "delete", "ns-2", "pods")},               // Deny over Allow
		{6, benchReview()}, // Allow, the last rule
		{4, coreRes(person("owner-ann"), "get", "shop", "services")},     // no opinion after every rule
		{6, coreRes(person("bob", "dev"), "get", "shop", "pods")},        // no opinion after every rule
		{3, coreRes(person("erin", "team-2"), "delete", "ns-1", "pods")}, // no opinion after every rule
	}
}

// mixOrder is the mixed workload's calls in the order they are sent: each shape as often as its
// weight in 100, shuffled with a fixed seed so every run and server gets the same sequence.
func mixOrder() []authorizer.AttributesRecord {
	var out []authorizer.AttributesRecord
	for _, s := range mixShapes() {
		for i := 0; i < s.weight; i++ {
			out = append(out, s.attrs)
		}
	}
	rng := rand.New(rand.NewSource(29))
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}
