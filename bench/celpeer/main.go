// Command celpeer times Kubernetes' own authorization CEL (k8s.io/apiserver's compiler and
// matcher, as kube-apiserver runs matchConditions) on the review and expressions of warrant's
// criterion benchmark benches/policy_review.rs: 3 conditions and 20 rules, evaluated per review
// the way warrant's Policy evaluates them (conditions, then Deny rules, then Allow rules). It
// prints one line: `celpeer ns_per_review=<n>`.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apiserver/pkg/authorization/cel"
)

const review = `{"user":"owner-ann","uid":"42","groups":["dev","system:authenticated"],
 "extra":{"scopes":["a","b"]},
 "resourceAttributes":{"namespace":"shop","verb":"get","group":"apps","version":"v1","resource":"deployments","name":"web"}}`

func expressions() (conditions, deny, allow []string) {
	conditions = []string{
		"has(request.resourceAttributes)",
		"!('system:masters' in request.groups)",
		"!request.user.startsWith('system:')",
	}
	for i := 0; i < 19; i++ {
		if i%2 == 0 {
			deny = append(deny, fmt.Sprintf("request.resourceAttributes.namespace == 'ns-%d' && request.resourceAttributes.verb == 'delete'", i))
		} else {
			allow = append(allow, fmt.Sprintf("'team-%d' in request.groups", i))
		}
	}
	allow = append(allow, "request.user.startsWith('owner-') && request.resourceAttributes.resource in ['deployments', 'pods']")
	return
}

func matcher(compiler cel.Compiler, exprs []string) *cel.CELMatcher {
	m := &cel.CELMatcher{}
	for _, e := range exprs {
		r, err := compiler.CompileCELExpression(&cel.SubjectAccessReviewMatchCondition{Expression: e})
		if err != nil {
			fmt.Fprintln(os.Stderr, e, err)
			os.Exit(1)
		}
		m.CompilationResults = append(m.CompilationResults, r)
	}
	return m
}

// request binds the spec as kube-apiserver's authorization CEL does (the selector-free part of
// convertObjectToUnstructured in k8s.io/apiserver/pkg/authorization/cel/compile.go).
func request(s *authorizationv1.SubjectAccessReviewSpec) map[string]interface{} {
	extra := s.Extra
	if extra == nil {
		extra = map[string]authorizationv1.ExtraValue{}
	}
	out := map[string]interface{}{"user": s.User, "groups": s.Groups, "uid": s.UID, "extra": extra}
	if ra := s.ResourceAttributes; ra != nil {
		out["resourceAttributes"] = map[string]interface{}{
			"namespace": ra.Namespace, "verb": ra.Verb, "group": ra.Group, "version": ra.Version,
			"resource": ra.Resource, "subresource": ra.Subresource, "name": ra.Name,
		}
	}
	if nra := s.NonResourceAttributes; nra != nil {
		out["nonResourceAttributes"] = map[string]string{"verb": nra.Verb, "path": nra.Path}
	}
	return out
}

func main() {
	compiler := cel.NewDefaultCompiler()
	conditions, deny, allow := expressions()
	cond := matcher(compiler, conditions)
	denyRules := matcher(compiler, deny).CompilationResults
	allowRules := matcher(compiler, allow).CompilationResults
	var sar authorizationv1.SubjectAccessReview
	if err := json.Unmarshal([]byte(review), &sar.Spec); err != nil {
		panic(err)
	}
	ctx := context.Background()
	judge := func() string {
		if ok, err := cond.Eval(ctx, &sar); err != nil || !ok {
			return "excluded"
		}
		// The rules share one binding per review, as warrant's do.
		activation := map[string]interface{}{"request": request(&sar.Spec)}
		for _, r := range denyRules {
			if v, _, err := r.Program.ContextEval(ctx, activation); err == nil && v.Value() == true {
				return "deny"
			}
		}
		for _, r := range allowRules {
			if v, _, err := r.Program.ContextEval(ctx, activation); err == nil && v.Value() == true {
				return "allow"
			}
		}
		return "none"
	}
	if got := judge(); got != "allow" {
		fmt.Fprintln(os.Stderr, "unexpected decision", got)
		os.Exit(1)
	}
	r := testing.Benchmark(func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			judge()
		}
	})
	fmt.Printf("celpeer ns_per_review=%d iterations=%d\n", r.NsPerOp(), r.N)
}
