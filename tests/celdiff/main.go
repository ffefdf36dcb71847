// Command celdiff judges every case of the differential corpus with Kubernetes' own
// authorization CEL: k8s.io/apiserver's compiler (as kube-apiserver compiles
// AuthorizationConfiguration matchConditions) and its CELMatcher (as kube-apiserver evaluates
// them, per-call cost limit included). For each case it prints one JSON line:
// {"id", "outcome": "true"|"false"|"compile_error"|"eval_error", "detail"}.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/debug"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apiserver/pkg/authorization/cel"
	"sigs.k8s.io/yaml"
)

type corpus struct {
	Reviews map[string]json.RawMessage `json:"reviews"`
	Cases   []struct {
		ID         string `json:"id"`
		Expression string `json:"expression"`
		Review     string `json:"review"`
	} `json:"cases"`
}

type result struct {
	ID      string `json:"id"`
	Outcome string `json:"outcome"`
	Detail  string `json:"detail"`
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "celdiff: "+format+"\n", args...)
	os.Exit(2)
}

func main() {
	corpusPath := flag.String("corpus", "corpus.yaml", "the corpus file")
	outPath := flag.String("out", "results.jsonl", "where to write the results")
	versions := flag.Bool("versions", false, "print the k8s.io/apiserver and cel-go versions and exit")
	flag.Parse()
	if *versions {
		if info, ok := debug.ReadBuildInfo(); ok {
			for _, m := range info.Deps {
				if m.Path == "k8s.io/apiserver" || m.Path == "github.com/google/cel-go" {
					fmt.Printf("%s %s\n", m.Path, m.Version)
				}
			}
		}
		return
	}
	raw, err := os.ReadFile(*corpusPath)
	if err != nil {
		fail("%v", err)
	}
	var c corpus
	if err := yaml.UnmarshalStrict(raw, &c); err != nil {
		fail("%s: %v", *corpusPath, err)
	}
	specs := map[string]*authorizationv1.SubjectAccessReview{}
	for name, spec := range c.Reviews {
		sar := &authorizationv1.SubjectAccessReview{}
		if err := json.Unmarshal(spec, &sar.Spec); err != nil {
			fail("review %s: %v", name, err)
		}
		specs[name] = sar
	}
	out, err := os.Create(*outPath)
	if err != nil {
		fail("%v", err)
	}
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	compiler := cel.NewDefaultCompiler()
	seen := map[string]bool{}
	for _, tc := range c.Cases {
		if seen[tc.ID] {
			fail("duplicate case id %q", tc.ID)
		}
		seen[tc.ID] = true
		sar, ok := specs[tc.Review]
		if !ok {
			fail("case %s: unknown review %q", tc.ID, tc.Review)
		}
		r := result{ID: tc.ID}
		compiled, err := compiler.CompileCELExpression(&cel.SubjectAccessReviewMatchCondition{Expression: tc.Expression})
		if err != nil {
			r.Outcome, r.Detail = "compile_error", err.Error()
		} else {
			m := &cel.CELMatcher{
				CompilationResults: []cel.CompilationResult{compiled},
				UsesFieldSelector:  compiled.UsesFieldSelector,
				UsesLabelSelector:  compiled.UsesLabelSelector,
			}
			ok, err := m.Eval(context.Background(), sar)
			switch {
			case err != nil:
				r.Outcome, r.Detail = "eval_error", err.Error()
			case ok:
				r.Outcome = "true"
			default:
				r.Outcome = "false"
			}
		}
		if err := enc.Encode(r); err != nil {
			fail("%v", err)
		}
	}
	if err := w.Flush(); err != nil {
		fail("%v", err)
	}
	if err := out.Close(); err != nil {
		fail("%v", err)
	}
	fmt.Fprintf(os.Stderr, "celdiff: %d cases judged -> %s\n", len(c.Cases), *outPath)
}
