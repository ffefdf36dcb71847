package apiserver

// An external ticket system as the guard's ticket source (tickets.source.webhook): a loopback
// HTTPS server run by this test speaks the TicketReview contract (tickets.warrant.dev/v1) and
// checks warrant's bearer token; warrant-admission asks it for the ticket a delete presents.
// A delete of a critical Deployment is admitted on an approved external ticket with two
// approvers, refused on a ticket the system does not know, and refused by the guard's failure
// policy once the system is gone.

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const tkExternal = "tk-external"

// ticketSystem answers TicketReviews: CHG-77 is approved by two people for the Deployment
// ext-db in tkNS, every other id unknown. It records what it was asked.
type ticketSystem struct {
	mu    sync.Mutex
	asked []string
}

func (s *ticketSystem) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer tier-ticket-token" {
		http.Error(w, "unauthenticated", http.StatusUnauthorized)
		return
	}
	var review struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Spec       struct {
			Ticket string `json:"ticket"`
			Target struct {
				Verb, Group, Resource, Namespace, Name string
			} `json:"target"`
			Requester struct {
				Username string `json:"username"`
			} `json:"requester"`
		} `json:"spec"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&review); err != nil || review.APIVersion != "tickets.warrant.dev/v1" || review.Kind != "TicketReview" {
		http.Error(w, "not a TicketReview", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.asked = append(s.asked, fmt.Sprintf("%s %s %s/%s by %s", review.Spec.Ticket, review.Spec.Target.Verb,
		review.Spec.Target.Namespace, review.Spec.Target.Name, review.Spec.Requester.Username))
	s.mu.Unlock()
	status := map[string]any{"found": false}
	if review.Spec.Ticket == "CHG-77" {
		status = map[string]any{
			"found":     true,
			"phase":     "Approved",
			"approvers": []any{map[string]any{"identity": "jira:bob"}, map[string]any{"identity": "jira:carol"}},
			"expiresAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
			"targets":   []any{map[string]any{"group": "apps", "resource": "deployments", "namespace": tkNS, "name": "ext-db"}},
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "tickets.warrant.dev/v1", "kind": "TicketReview", "status": status})
}

func (s *ticketSystem) questions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.asked...)
}

// externalTicketsConfig: the guard of ticketsConfig with its tickets from the system behind
// kubeconfig, no answer kept.
func externalTicketsConfig(kubeconfig string) string {
	return fmt.Sprintf(`apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
  - type: DeletionGuard
    name: deletion-guard
    failurePolicy: Deny
    guard:
      timeZone: UTC
      businessHours: {days: [Mon, Tue, Wed, Thu, Fri, Sat, Sun], start: %q, end: %q}
      protectionLabel: %s
      tickets:
        source:
          webhook:
            kubeConfigFile: %s
            timeout: 2s
            approvedTTL: 0s
            unapprovedTTL: 0s
        requiredFor: [critical]
        approvals: {critical: 2, high: 1, standard: 0}
`, ringDayStart, ringDayEnd, protectionLabel, kubeconfig)
}

func TestExternalTicketSystemAsTheTicketSource(t *testing.T) {
	system := &ticketSystem{}
	// A server certificate of the tier's CA: httptest's own certificate is a CA certificate
	// used as the server's, which rustls (webpki) rightly refuses.
	crt, key, err := E.pki.leaf(E.dir, "ticket-system", "127.0.0.1", x509.ExtKeyUsageServerAuth)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(crt, key)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(system)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	defer srv.Close()
	caPEM := E.pki.caPEM
	kc := filepath.Join(E.dir, "ticket-system.kubeconfig")
	text := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: tickets, cluster: {server: %q, certificate-authority-data: %s}}]
users: [{name: warrant, user: {token: tier-ticket-token}}]
contexts: [{name: tickets, context: {cluster: tickets, user: warrant}}]
current-context: tickets
`, srv.URL+"/tickets", base64.StdEncoding.EncodeToString(caPEM))
	if err := os.WriteFile(kc, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	setWarrantConfig(t, externalTicketsConfig(kc))
	labelledNamespace(t, E.scenarios, tkNS, nil)
	grant(t, tkExternal, "", rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list", "delete"}})
	critical := map[string]string{protectionLabel: "critical"}
	workload{ns: tkNS, name: "ext-db", labels: critical}.build(t, E.scenarios)
	workload{ns: tkNS, name: "ext-cache", labels: critical}.build(t, E.scenarios)

	// A ticket the system does not know: TICKET_NOT_FOUND (the RBAC grant may take a moment).
	eventually(t, 15*time.Second, "an unknown external ticket refused", func() error {
		m := markLog(E.ring.audit)
		err := presenting(t, tkExternal, "CHG-0").AppsV1().Deployments(tkNS).Delete(ctx(t), "ext-db", metav1.DeleteOptions{})
		if err == nil {
			t.Fatal("a delete on an unknown ticket was admitted")
		}
		if !strings.Contains(err.Error(), "[TICKET_NOT_FOUND]") {
			return err
		}
		refusedWith(t, m, err, "TICKET_NOT_FOUND")
		return nil
	})
	// The approved ticket covers ext-db, not ext-cache.
	m := markLog(E.ring.audit)
	err = presenting(t, tkExternal, "CHG-77").AppsV1().Deployments(tkNS).Delete(ctx(t), "ext-cache", metav1.DeleteOptions{})
	refusedWith(t, m, err, "TICKET_SCOPE")
	if err := presenting(t, tkExternal, "CHG-77").AppsV1().Deployments(tkNS).Delete(ctx(t), "ext-db", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("the delete on the approved external ticket: %v", err)
	}
	asked := strings.Join(system.questions(), "\n")
	if !strings.Contains(asked, "CHG-77 delete "+tkNS+"/ext-db by "+tkExternal) {
		t.Fatalf("the ticket system was asked:\n%s", asked)
	}

	// The system gone: the same approved ticket no longer lets anything through.
	srv.Close()
	workload{ns: tkNS, name: "ext-db", labels: critical}.build(t, E.scenarios)
	err = presenting(t, tkExternal, "CHG-77").AppsV1().Deployments(tkNS).Delete(ctx(t), "ext-db", metav1.DeleteOptions{})
	if err == nil {
		t.Fatal("a delete was admitted while the ticket system was down")
	}
	if !strings.Contains(err.Error(), "ticket source unavailable: ticket CHG-77: the ticket webhook is unreachable") {
		t.Fatalf("the refusal does not say the ticket system is unreachable: %v", err)
	}
}
