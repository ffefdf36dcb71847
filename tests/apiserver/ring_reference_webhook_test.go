package apiserver

// The reference webhook: the least a validating admission webhook can do, to tell what any
// webhook call costs on this machine from what warrant adds beyond it.

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admregv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// referenceWebhook is a Go HTTPS server (net/http: HTTP/2 over TLS, warrant's serving
// certificate) that decodes each AdmissionReview and allows it: no policy, no cluster cache,
// no audit. kube-apiserver calls it the way it calls warrant.
type referenceWebhook struct {
	url   string
	calls atomic.Int64
}

// startReferenceWebhook serves the reference webhook on loopback until the test ends.
func startReferenceWebhook(t *testing.T) *referenceWebhook {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := &referenceWebhook{url: "https://" + ln.Addr().String() + "/"}
	srv := &http.Server{Handler: w, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.ServeTLS(ln, E.files.warrantCrt, E.files.warrantKey) }()
	t.Cleanup(func() { _ = srv.Close() })
	return w
}

// ServeHTTP allows every AdmissionReview it can decode and answers 400 otherwise.
func (w *referenceWebhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(rw, fmt.Sprintf("not an AdmissionReview: %v", err), http.StatusBadRequest)
		return
	}
	w.calls.Add(1)
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(admissionv1.AdmissionReview{
		TypeMeta: review.TypeMeta,
		Response: &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true},
	})
}

// installReferenceWebhook sends every Deployment DELETE in namespace ns to w (failurePolicy
// Fail, as warrant's protected scope is sent) until the test ends, and waits until
// kube-apiserver calls it. It returns the webhook's name.
func installReferenceWebhook(t *testing.T, admin *kubernetes.Clientset, w *referenceWebhook, ns string) string {
	t.Helper()
	ca, err := os.ReadFile(E.files.ca)
	if err != nil {
		t.Fatal(err)
	}
	const config, name = "ring-reference-webhook", "reference.ring.warrant.dev"
	fail, none := admregv1.Fail, admregv1.SideEffectClassNone
	timeout := int32(10)
	url := w.url
	_, err = admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx(t), &admregv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: config},
		Webhooks: []admregv1.ValidatingWebhook{{
			Name:         name,
			ClientConfig: admregv1.WebhookClientConfig{URL: &url, CABundle: ca},
			Rules: []admregv1.RuleWithOperations{{
				Operations: []admregv1.OperationType{admregv1.Delete},
				Rule:       admregv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
			}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("reference webhook configuration: %v", err)
	}
	t.Cleanup(func() {
		_ = admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx(t), config, metav1.DeleteOptions{})
	})
	// kube-apiserver's webhook informer is asynchronous: delete probes until one reaches w.
	probe := 0
	eventually(t, 20*time.Second, "kube-apiserver calling the reference webhook", func() error {
		probe++
		d := bareDeployment(fmt.Sprintf("reference-probe-%d", probe), nil)
		if _, err := admin.AppsV1().Deployments(ns).Create(ctx(t), d, metav1.CreateOptions{}); err != nil {
			return err
		}
		if err := admin.AppsV1().Deployments(ns).Delete(ctx(t), d.Name, metav1.DeleteOptions{}); err != nil {
			return err
		}
		if w.calls.Load() == 0 {
			return fmt.Errorf("no call yet")
		}
		return nil
	})
	return name
}
