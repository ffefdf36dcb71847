package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/apis/apiserver/load"
	"k8s.io/apiserver/pkg/apis/apiserver/validation"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	authorizationcel "k8s.io/apiserver/pkg/authorization/cel"
	authorizationmetrics "k8s.io/apiserver/pkg/authorization/metrics"
	webhookutil "k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/apiserver/plugin/pkg/authorizer/webhook"
	webhookmetrics "k8s.io/apiserver/plugin/pkg/authorizer/webhook/metrics"
)

// retryBackoff is kube-apiserver's webhook retry backoff: the value of
// DefaultAuthWebhookRetryBackoff in k8s.io/apiserver/pkg/server/options/authentication.go, which
// kube-apiserver's authorization options hand to every Webhook authorizer (500ms, x1.5, 20%
// jitter, 5 steps). Not imported: that package drags in most of a generic API server.
var retryBackoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}

// authorizerModes are the authorizer types kube-apiserver accepts (modes.AuthorizationModeChoices
// in k8s.io/kubernetes/pkg/kubeapiserver/authorizer/modes), for validation.
var authorizerModes = []string{"AlwaysAllow", "AlwaysDeny", "ABAC", "Webhook", "RBAC", "Node"}

// apiserverWebhookMetrics is the metrics set kube-apiserver gives its webhook authorizers
// (kubeapiserverWebhookMetrics in k8s.io/kubernetes/pkg/kubeapiserver/authorizer/reload.go): no
// request metrics, webhook and matchCondition metrics on.
type apiserverWebhookMetrics struct {
	webhookmetrics.NoopRequestMetrics
	webhookmetrics.WebhookMetrics
	authorizationcel.MatcherMetrics
}

// newAuthorizer builds the authorizer of the single Webhook entry of an AuthorizationConfiguration
// template (authorization-config.yaml with NAME and KUBECONFIG filled in) the way kube-apiserver
// does: k8s.io/kubernetes/pkg/kubeapiserver/authorizer/config.go loads and validates the file
// with apiserver's load and validation packages; reload.go loads the kubeconfig with
// webhookutil.LoadKubeconfig, applies the entry's timeout, maps failurePolicy to the decision on
// error, zeroes the TTLs the entry does not cache, calls webhook.New and wraps the result in
// InstrumentedAuthorizer.
func newAuthorizer(template, name, kubeconfig, dir string) (authorizer.Authorizer, error) {
	raw, err := os.ReadFile(template)
	if err != nil {
		return nil, err
	}
	data := strings.NewReplacer("NAME", name, "KUBECONFIG", kubeconfig).Replace(string(raw))
	path := fmt.Sprintf("%s/authorization-config-%s.yaml", dir, name)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		return nil, err
	}
	config, err := load.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	compiler := authorizationcel.NewDefaultCompiler()
	if errs := validation.ValidateAuthorizationConfiguration(compiler, nil, config,
		sets.New(authorizerModes...), sets.New("Webhook")); len(errs) != 0 {
		return nil, fmt.Errorf("validate %s: %w", path, errs.ToAggregate())
	}
	if len(config.Authorizers) != 1 || config.Authorizers[0].Type != "Webhook" {
		return nil, fmt.Errorf("%s: want exactly one Webhook authorizer", path)
	}
	entry := config.Authorizers[0]
	return webhookAuthorizer(entry.Name, entry.Webhook, compiler)
}

func webhookAuthorizer(name string, w *apiserver.WebhookConfiguration, compiler authorizationcel.Compiler) (authorizer.Authorizer, error) {
	clientConfig, err := webhookutil.LoadKubeconfig(*w.ConnectionInfo.KubeConfigFile, nil)
	if err != nil {
		return nil, err
	}
	if w.Timeout.Duration != 0 {
		clientConfig.Timeout = w.Timeout.Duration
	}
	var onError authorizer.Decision
	switch w.FailurePolicy {
	case apiserver.FailurePolicyNoOpinion:
		onError = authorizer.DecisionNoOpinion
	case apiserver.FailurePolicyDeny:
		onError = authorizer.DecisionDeny
	default:
		return nil, fmt.Errorf("unknown failurePolicy %q", w.FailurePolicy)
	}
	authorizedTTL, unauthorizedTTL := w.AuthorizedTTL.Duration, w.UnauthorizedTTL.Duration
	if !w.CacheAuthorizedRequests {
		authorizedTTL = 0
	}
	if !w.CacheUnauthorizedRequests {
		unauthorizedTTL = 0
	}
	metrics := apiserverWebhookMetrics{WebhookMetrics: webhookmetrics.NewWebhookMetrics(), MatcherMetrics: authorizationcel.NewMatcherMetrics()}
	a, err := webhook.New(clientConfig, w.SubjectAccessReviewVersion, authorizedTTL, unauthorizedTTL,
		retryBackoff, onError, w.MatchConditions, name, metrics, compiler)
	if err != nil {
		return nil, err
	}
	return authorizationmetrics.InstrumentedAuthorizer("Webhook", name, a), nil
}

// ready waits until addr accepts connections, then calls Authorize until a call succeeds or the
// timeout passes.
func ready(a authorizer.Authorizer, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		var c net.Conn
		if c, err = net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for time.Now().Before(deadline) {
		if _, _, err = a.Authorize(context.Background(), benchReview()); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}
