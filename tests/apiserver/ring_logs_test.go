package apiserver

// The two audit logs the validation-ring scenarios read: warrant-admission's records (its
// --audit-log, "stage": "admission") and kube-apiserver's own audit events (audit.k8s.io/v1,
// where the webhooks' auditAnnotations appear as `<webhook name>/<key>`).

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admregv1 "k8s.io/api/admissionregistration/v1"
)

// logMark is a position in a JSON-lines log.
type logMark struct {
	path string
	off  int64
}

func markLog(path string) logMark {
	fi, err := os.Stat(path)
	if err != nil {
		return logMark{path: path}
	}
	return logMark{path: path, off: fi.Size()}
}

// readRecords decodes every complete line written after the mark (a line being written is
// left for the next read).
func readRecords[T any](m logMark) []T {
	f, err := os.Open(m.path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if _, err := f.Seek(m.off, io.SeekStart); err != nil {
		return nil
	}
	var out []T
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return out
		}
		var v T
		if json.Unmarshal(line, &v) == nil {
			out = append(out, v)
		}
	}
}

// waitFor waits (up to 5s) for a record after the mark that satisfies pred.
func waitFor[T any](t *testing.T, m logMark, what string, pred func(T) bool) T {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, r := range readRecords[T](m) {
			if pred(r) {
				return r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has no record of %s; %d records since the mark", filepath.Base(m.path), what, len(readRecords[T](m)))
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// admissionRecord is the part of warrant's admission audit record the tests read.
type admissionRecord struct {
	Time      time.Time `json:"time"`
	Stage     string    `json:"stage"`
	Admission *struct {
		UID       string `json:"uid"`
		Operation string `json:"operation"`
		DryRun    bool   `json:"dryRun"`
	} `json:"admission"`
	User               string   `json:"user"`
	Groups             []string `json:"groups"`
	ResourceAttributes *struct {
		Namespace string `json:"namespace"`
		Verb      string `json:"verb"`
		Group     string `json:"group"`
		Resource  string `json:"resource"`
		Name      string `json:"name"`
	} `json:"resourceAttributes"`
	Authorizers []struct {
		Authorizer string          `json:"authorizer"`
		Decision   string          `json:"decision"`
		Message    string          `json:"message"`
		Code       string          `json:"code"`
		Guard      json.RawMessage `json:"guard"`
	} `json:"authorizers"`
	Decision string `json:"decision"`
	Code     string `json:"code"`
	Allowed  bool   `json:"allowed"`
	Denied   bool   `json:"denied"`
	Reason   string `json:"reason"`
}

// guardReport is the guard's assessment as warrant audits it (and as the `report` audit
// annotation carries it).
type guardReport struct {
	Mode        string   `json:"mode"`
	Code        string   `json:"code"`
	RiskScore   int      `json:"riskScore"`
	RiskLevel   string   `json:"riskLevel"`
	Protection  string   `json:"protection"`
	RiskReasons []string `json:"riskReasons"`
	Ticket      string   `json:"ticket"`
	Impact      *struct {
		RunningPods  int      `json:"runningPods"`
		Services     []string `json:"services"`
		Ingresses    []string `json:"ingresses"`
		BoundVolumes []string `json:"boundVolumes"`
		EstimatedQPS int      `json:"estimatedQps"`
	} `json:"impact"`
}

// is says whether the record is the validation ring's answer to OPERATION of namespace/name
// (not a dry run).
func (r admissionRecord) is(operation, ns, name string) bool {
	return r.isAny(operation, ns, name) && !r.Admission.DryRun
}

// isAny is is, dry runs included.
func (r admissionRecord) isAny(operation, ns, name string) bool {
	return r.Stage == "admission" && r.Admission != nil && r.Admission.Operation == operation &&
		r.ResourceAttributes != nil && r.ResourceAttributes.Namespace == ns && r.ResourceAttributes.Name == name
}

// guard is the first guard assessment of the record (nil when no guard judged it).
func (r admissionRecord) guard(t *testing.T) *guardReport {
	t.Helper()
	for _, a := range r.Authorizers {
		if len(a.Guard) > 0 {
			var g guardReport
			if err := json.Unmarshal(a.Guard, &g); err != nil {
				t.Fatalf("guard assessment: %v: %s", err, a.Guard)
			}
			return &g
		}
	}
	return nil
}

// apiEvent is the part of a kube-apiserver audit event (audit.k8s.io/v1) the tests read.
type apiEvent struct {
	AuditID string `json:"auditID"`
	Stage   string `json:"stage"`
	Verb    string `json:"verb"`
	User    struct {
		Username string `json:"username"`
	} `json:"user"`
	ImpersonatedUser *struct {
		Username string `json:"username"`
	} `json:"impersonatedUser"`
	ObjectRef *struct {
		Resource  string `json:"resource"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
		APIGroup  string `json:"apiGroup"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"responseStatus"`
	Annotations map[string]string `json:"annotations"`
}

// is says whether the event is the response to VERB on resource in namespace (name "" for a
// collection).
func (e apiEvent) is(verb, resource, ns, name string) bool {
	return e.Stage == "ResponseComplete" && e.Verb == verb && e.ObjectRef != nil &&
		e.ObjectRef.Resource == resource && e.ObjectRef.Namespace == ns && e.ObjectRef.Name == name
}

// warrantAnnotations are the event's annotations set by the shipped webhooks, by webhook name.
func (e apiEvent) warrantAnnotations() map[string]map[string]string {
	out := map[string]map[string]string{}
	for k, v := range e.Annotations {
		hook, key, ok := strings.Cut(k, "/")
		if !ok || E.ring.webhook(hook) == nil {
			continue
		}
		if out[hook] == nil {
			out[hook] = map[string]string{}
		}
		out[hook][key] = v
	}
	return out
}

// webhook is the installed webhook of that name.
func (r *ring) webhook(name string) *admregv1.ValidatingWebhook {
	for i := range r.config.Webhooks {
		if r.config.Webhooks[i].Name == name {
			return &r.config.Webhooks[i]
		}
	}
	return nil
}
