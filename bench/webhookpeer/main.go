// Command webhookpeer times a cache hit of kube-apiserver's own webhook authorizer
// (k8s.io/apiserver/plugin/pkg/authorizer/webhook, the client kube-apiserver runs for a
// `type: Webhook` entry) for the review warrant's criterion benchmark
// benches/webhook_cache_hit.rs uses. The downstream is an in-process TLS server on 127.0.0.1
// that allows; after one call warms the cache, every Authorize is a hit. It prints one line:
// `webhookpeer ns_per_hit=<n> downstream_calls=<n>`.
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"encoding/pem"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	authorizationcel "k8s.io/apiserver/pkg/authorization/cel"
	"k8s.io/apiserver/plugin/pkg/authorizer/webhook"
	"k8s.io/apiserver/plugin/pkg/authorizer/webhook/metrics"
	"k8s.io/client-go/rest"
)

func main() {
	var calls atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","status":{"allowed":true,"reason":"ok"}}`)
	}))
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	config := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
	backoff := wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
	authz, err := webhook.New(config, "v1", 5*time.Minute, 30*time.Second, backoff,
		authorizer.DecisionNoOpinion, nil, "peer", metrics.NoopAuthorizerMetrics{}, authorizationcel.NewDefaultCompiler())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	attrs := authorizer.AttributesRecord{
		User:            &user.DefaultInfo{Name: "alice", UID: "1", Groups: []string{"group1", "group2"}},
		Verb:            "get",
		Namespace:       "kittensandponies",
		APIGroup:        "apps",
		APIVersion:      "v1",
		Resource:        "deployments",
		Name:            "web",
		ResourceRequest: true,
	}
	ctx := context.Background()
	if d, _, err := authz.Authorize(ctx, attrs); err != nil || d != authorizer.DecisionAllow {
		fmt.Fprintln(os.Stderr, "warm-up call failed:", d, err)
		os.Exit(1)
	}
	r := testing.Benchmark(func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if d, _, _ := authz.Authorize(ctx, attrs); d != authorizer.DecisionAllow {
				b.Fatal("not a cached allow")
			}
		}
	})
	fmt.Printf("webhookpeer ns_per_hit=%d downstream_calls=%d iterations=%d\n", r.NsPerOp(), calls.Load(), r.N)
}
