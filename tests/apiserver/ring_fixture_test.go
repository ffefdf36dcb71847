package apiserver

// What the validation-ring scenarios build on kube-apiserver "scenarios". There is no controller
// manager and no kubelet: the tests create the ReplicaSet and the Pods a Deployment would have,
// with owner references, and set the status a kubelet or the PV controller would set (Running,
// Bound) through the status subresource, as admin.

import (
	"fmt"
	"sync"
	"testing"

	admregv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	netv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

// The chain file's guard settings the scenarios and the shipped webhook file share.
const (
	protectionLabel  = "sre.example.com/protection-level"
	ticketAnnotation = "sre.example.com/ticket"
	// Business hours of the ring's guard: every day 00:00-23:59 UTC (a window cannot be 24h),
	// so the +10 applies unless warrant judges in the last minute of the day; the tests read
	// which from the time warrant recorded.
	ringDayStart, ringDayEnd = "00:00", "23:59"
)

// workload is a Deployment with what a cluster would hang off it.
type workload struct {
	ns, name    string
	labels      map[string]string // on the Deployment
	annotations map[string]string // on the Deployment
	pods        int               // running pods (through a ReplicaSet)
	claim       string            // a bound PVC the pods mount ("" for none)
	service     bool              // a Service selecting the pods
	ingress     bool              // an Ingress to that Service
}

// build creates the workload as admin and returns the Deployment.
func (w workload) build(t *testing.T, a *apiserver) *appsv1.Deployment {
	t.Helper()
	c := client(t, a, "admin")
	d := bareDeployment(w.name, w.labels)
	d.Annotations = w.annotations
	replicas := int32(w.pods)
	d.Spec.Replicas = &replicas
	if w.claim != "" {
		d.Spec.Template.Spec.Volumes = claimVolume(w.claim)
	}
	d, err := c.AppsV1().Deployments(w.ns).Create(ctx(t), d, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("deployment %s/%s: %v", w.ns, w.name, err)
	}
	if w.claim != "" {
		boundClaim(t, c, w.ns, w.claim)
	}
	if w.pods > 0 {
		rs := replicaSetOf(t, c, d)
		runningPods(t, c, rs, w.pods, d.Spec.Template.Spec.Volumes)
	}
	if w.service {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: w.name},
			Spec: corev1.ServiceSpec{
				Selector: d.Spec.Selector.MatchLabels,
				Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
			},
		}
		if _, err := c.CoreV1().Services(w.ns).Create(ctx(t), svc, metav1.CreateOptions{}); err != nil {
			t.Fatalf("service %s/%s: %v", w.ns, w.name, err)
		}
	}
	if w.ingress {
		prefix := netv1.PathTypePrefix
		ing := &netv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Name: w.name},
			Spec: netv1.IngressSpec{Rules: []netv1.IngressRule{{
				Host: w.name + ".example.com",
				IngressRuleValue: netv1.IngressRuleValue{HTTP: &netv1.HTTPIngressRuleValue{Paths: []netv1.HTTPIngressPath{{
					Path: "/", PathType: &prefix,
					Backend: netv1.IngressBackend{Service: &netv1.IngressServiceBackend{
						Name: w.name, Port: netv1.ServiceBackendPort{Number: 80}}},
				}}}},
			}}},
		}
		if _, err := c.NetworkingV1().Ingresses(w.ns).Create(ctx(t), ing, metav1.CreateOptions{}); err != nil {
			t.Fatalf("ingress %s/%s: %v", w.ns, w.name, err)
		}
	}
	return d
}

func claimVolume(claim string) []corev1.Volume {
	return []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}
}

// boundClaim creates a PVC and sets status.phase Bound, as the PV controller would.
func boundClaim(t *testing.T, c *kubernetes.Clientset, ns, name string) {
	t.Helper()
	pvc, err := c.CoreV1().PersistentVolumeClaims(ns).Create(ctx(t), &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("pvc %s/%s: %v", ns, name, err)
	}
	pvc.Status.Phase = corev1.ClaimBound
	pvc.Status.AccessModes = pvc.Spec.AccessModes
	pvc.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
	if _, err := c.CoreV1().PersistentVolumeClaims(ns).UpdateStatus(ctx(t), pvc, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("pvc %s/%s status Bound: %v", ns, name, err)
	}
}

// replicaSetOf creates the ReplicaSet the Deployment controller would, owned by the Deployment.
func replicaSetOf(t *testing.T, c *kubernetes.Clientset, d *appsv1.Deployment) *appsv1.ReplicaSet {
	t.Helper()
	const hash = "5d8f7c9b6"
	sel := map[string]string{"pod-template-hash": hash}
	for k, v := range d.Spec.Selector.MatchLabels {
		sel[k] = v
	}
	tmpl := d.Spec.Template.DeepCopy()
	tmpl.Labels = sel
	yes := true
	rs, err := c.AppsV1().ReplicaSets(d.Namespace).Create(ctx(t), &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: d.Name + "-" + hash, Labels: sel,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: &yes}},
		},
		Spec: appsv1.ReplicaSetSpec{Replicas: d.Spec.Replicas, Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: *tmpl},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("replicaset of %s/%s: %v", d.Namespace, d.Name, err)
	}
	return rs
}

// runningPods creates n pods owned by the ReplicaSet and marks them Running, as a kubelet would.
func runningPods(t *testing.T, c *kubernetes.Clientset, rs *appsv1.ReplicaSet, n int, volumes []corev1.Volume) {
	t.Helper()
	yes := true
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 8)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{
					Name: fmt.Sprintf("%s-%03d", rs.Name, i), Labels: rs.Spec.Template.Labels,
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &yes}},
				},
				Spec: *rs.Spec.Template.Spec.DeepCopy(),
			}
			pod.Spec.Volumes = volumes
			pod.Spec.NodeName = "node-1"
			created, err := c.CoreV1().Pods(rs.Namespace).Create(ctx(t), pod, metav1.CreateOptions{})
			if err != nil {
				errs <- fmt.Errorf("pod %s: %w", pod.Name, err)
				return
			}
			created.Status.Phase = corev1.PodRunning
			if _, err := c.CoreV1().Pods(rs.Namespace).UpdateStatus(ctx(t), created, metav1.UpdateOptions{}); err != nil {
				errs <- fmt.Errorf("pod %s status Running: %w", pod.Name, err)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// labelledNamespace creates (or relabels) a namespace.
func labelledNamespace(t *testing.T, a *apiserver, ns string, lbls map[string]string) {
	t.Helper()
	c := client(t, a, "admin")
	_, err := c.CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: lbls}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("namespace %s: %v", ns, err)
	}
}

// bindClusterAdmin makes a user or service account cluster-admin, cluster-wide (ns "") or in
// one namespace, until the test ends.
func bindClusterAdmin(t *testing.T, a *apiserver, ns, name string, subject rbacv1.Subject) {
	t.Helper()
	c := client(t, a, "admin")
	ref := rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"}
	var err error
	if ns == "" {
		_, err = c.RbacV1().ClusterRoleBindings().Create(ctx(t), &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name}, RoleRef: ref, Subjects: []rbacv1.Subject{subject}}, metav1.CreateOptions{})
	} else {
		_, err = c.RbacV1().RoleBindings(ns).Create(ctx(t), &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name}, RoleRef: ref, Subjects: []rbacv1.Subject{subject}}, metav1.CreateOptions{})
	}
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("binding %s: %v", name, err)
	}
	// The API server is shared by every test: the grant ends with the test that made it.
	t.Cleanup(func() {
		if ns == "" {
			_ = c.RbacV1().ClusterRoleBindings().Delete(ctx(t), name, metav1.DeleteOptions{})
		} else {
			_ = c.RbacV1().RoleBindings(ns).Delete(ctx(t), name, metav1.DeleteOptions{})
		}
	})
}

// expectedHook is the name of the one shipped webhook whose rules and selectors send OPERATION
// on the object to warrant, computed from the installed configuration (the shipped webhooks'
// selectors are meant to exclude each other: two matches fail the test); "" when none does.
// matchConditions are not evaluated here: the scenarios' identities pass them.
func expectedHook(t *testing.T, a *apiserver, operation, group, resource, ns string, objLabels map[string]string) string {
	t.Helper()
	nsObj, err := client(t, a, "admin").CoreV1().Namespaces().Get(ctx(t), ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, h := range E.ring.config.Webhooks {
		if !ruleCovers(h.Rules, operation, group, resource) ||
			!selects(t, h.NamespaceSelector, nsObj.Labels) || !selects(t, h.ObjectSelector, objLabels) {
			continue
		}
		found = append(found, h.Name)
	}
	if len(found) > 1 {
		t.Fatalf("%s %s/%s in %s is sent to %d shipped webhooks: %v", operation, group, resource, ns, len(found), found)
	}
	if len(found) == 0 {
		return ""
	}
	return found[0]
}

func ruleCovers(rules []admregv1.RuleWithOperations, operation, group, resource string) bool {
	for _, r := range rules {
		var ops []string
		for _, o := range r.Operations {
			ops = append(ops, string(o))
		}
		if has(ops, operation) && has(r.APIGroups, group) && has(r.Resources, resource) {
			return true
		}
	}
	return false
}

func has(xs []string, x string) bool {
	for _, y := range xs {
		if y == x || y == "*" {
			return true
		}
	}
	return false
}

func selects(t *testing.T, sel *metav1.LabelSelector, lbls map[string]string) bool {
	t.Helper()
	if sel == nil {
		return true
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatalf("shipped selector %v: %v", sel, err)
	}
	return s.Matches(labels.Set(lbls))
}
