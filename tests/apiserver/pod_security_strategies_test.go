package apiserver

// Pod security's strategies through a real kube-apiserver, in a namespace with hand-written
// ranges (the allocator leaves them alone): a pod created as the ReplicaSet controller's
// identity is judged on its service account only; fsGroup and supplementalGroups MustRunAs
// inside and outside the namespace's range, and left out under RunAsAny; hostNetwork and an
// added capability refused with OpenShift's reasons; anyuid's priority beating the more
// restrictive restricted-v2.

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodSecurityJudgesControllersGroupsAndHostAccessThroughTheAPIServer(t *testing.T) {
	ns := "scc-team-b"
	admin := installPodSecurity(t, []string{ns})
	c := ctx(t)
	if _, err := admin.CoreV1().Namespaces().Create(c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Annotations: map[string]string{
		uidRangeAnnotation: "1000700000/10000",
		groupsAnnotation:   "1000700000/10000",
		mcsAnnotation:      "s0:c27,c4",
	}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.CoreV1().Namespaces().Delete(ctx(t), ns, metav1.DeleteOptions{}) })
	controller := "system:serviceaccount:kube-system:replicaset-controller"
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-creator", Namespace: ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create", "get"}}}}
	if _, err := admin.RbacV1().Roles(ns).Create(c, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bind := func(name, roleKind, roleName string, subjects ...rbacv1.Subject) {
		t.Helper()
		b := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: roleKind, Name: roleName}, Subjects: subjects}
		if _, err := admin.RbacV1().RoleBindings(ns).Create(c, b, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	user := func(n string) rbacv1.Subject { return rbacv1.Subject{Kind: "User", Name: n} }
	sa := func(n string) rbacv1.Subject { return rbacv1.Subject{Kind: "ServiceAccount", Name: n, Namespace: ns} }
	bind("pods", "Role", "pod-creator", user("alice"), user("bob"), user("erin"), user("frank"), user(controller))
	// The controller and erin may use anyuid; so may the service account root-app, not app.
	bind("anyuid", "ClusterRole", "warrant:scc:anyuid", user(controller), user("erin"), sa("root-app"))
	bind("restricted-v2", "ClusterRole", "warrant:scc:restricted-v2", sa("app"), sa("root-app"))
	bind("hostnetwork-v2", "ClusterRole", "warrant:scc:hostnetwork-v2", user("frank"))
	for _, name := range []string{"app", "root-app"} {
		if _, err := admin.CoreV1().ServiceAccounts(ns).Create(c, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	root := int64(0)
	pod := func(name, account string, sc *corev1.SecurityContext, psc *corev1.PodSecurityContext) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{ServiceAccountName: account, SecurityContext: psc,
				Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1", SecurityContext: sc}}}}
	}
	wantRefused := func(who string, err error, wants ...string) {
		t.Helper()
		for _, want := range wants {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v\nwant %s", who, err, want)
			}
		}
	}

	// The ReplicaSet controller may use anyuid, but its pod is judged on its service account.
	rs := impersonating(t, E.scenarios, controller, "system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated")
	_, err := createPodWhenJudged(t, rs, ns, pod("rs-root", "app", &corev1.SecurityContext{RunAsUser: &root}, nil))
	wantRefused("the controller's root pod for service account app", err,
		"unable to validate against any security context constraint",
		`provider "anyuid": Forbidden: not usable by user or serviceaccount`,
		"provider restricted-v2: .containers[0].runAsUser: Invalid value: 0: must be in the ranges: [1000700000, 1000709999]")
	byAccount, err := rs.CoreV1().Pods(ns).Create(c, pod("rs-root-app", "root-app", &corev1.SecurityContext{RunAsUser: &root}, nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the controller's root pod for service account root-app: %v", err)
	}
	if got := byAccount.Annotations["openshift.io/scc"]; got != "anyuid" {
		t.Errorf("root-app's pod was admitted with %q, want anyuid", got)
	}
	if got := byAccount.Annotations["security.openshift.io/validated-scc-subject-type"]; got != "serviceaccount" {
		t.Errorf("root-app's pod subject type %q, want serviceaccount", got)
	}
	// The same pod created directly by erin, who may use anyuid: her access counts.
	erin := impersonating(t, E.scenarios, "erin", "system:authenticated")
	byErin, err := erin.CoreV1().Pods(ns).Create(c, pod("erin-root", "app", &corev1.SecurityContext{RunAsUser: &root}, nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("erin's root pod: %v", err)
	}
	if got := byErin.Annotations["openshift.io/scc"]; got != "anyuid" {
		t.Errorf("erin's pod was admitted with %q, want anyuid", got)
	}

	// fsGroup MustRunAs (restricted-v2): exactly the first id of the namespace's groups.
	bob := impersonating(t, E.scenarios, "bob", "system:authenticated")
	first, outside := int64(1000700000), int64(1000700005)
	kept, err := bob.CoreV1().Pods(ns).Create(c, pod("fs-first", "", nil, &corev1.PodSecurityContext{FSGroup: &first}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("bob's pod with fsGroup %d: %v", first, err)
	}
	if g := kept.Spec.SecurityContext.FSGroup; g == nil || *g != first {
		t.Errorf("bob's fsGroup became %v", g)
	}
	_, err = bob.CoreV1().Pods(ns).Create(c, pod("fs-other", "", nil, &corev1.PodSecurityContext{FSGroup: &outside}), metav1.CreateOptions{})
	wantRefused("bob's pod with fsGroup 1000700005", err, "fsGroup: Invalid value: []int64{1000700005}: 1000700005 is not an allowed group")
	// supplementalGroups RunAsAny (restricted-v2): any id, and none stays none.
	five := int64(5)
	anyGroups, err := bob.CoreV1().Pods(ns).Create(c, pod("groups-any", "", nil, &corev1.PodSecurityContext{SupplementalGroups: []int64{five}}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("bob's pod with supplemental group 5 under RunAsAny: %v", err)
	}
	if g := anyGroups.Spec.SecurityContext.SupplementalGroups; len(g) != 1 || g[0] != five {
		t.Errorf("bob's supplemental groups became %v", g)
	}
	// fsGroup RunAsAny (anyuid, alice's by its users list): an omitted fsGroup stays omitted,
	// and anyuid's priority beats the more restrictive restricted-v2 for a plain pod.
	alice := impersonating(t, E.scenarios, "alice", "system:authenticated")
	plain, err := alice.CoreV1().Pods(ns).Create(c, pod("alice-plain", "", nil, nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("alice's plain pod: %v", err)
	}
	if got := plain.Annotations["openshift.io/scc"]; got != "anyuid" {
		t.Errorf("alice's plain pod was admitted with %q, want anyuid (priority 10 before restricted-v2)", got)
	}
	if ps := plain.Spec.SecurityContext; ps != nil && ps.FSGroup != nil {
		t.Errorf("alice's pod got fsGroup %d under RunAsAny", *ps.FSGroup)
	}
	if sc := plain.Spec.Containers[0].SecurityContext; sc != nil && sc.RunAsUser != nil {
		t.Errorf("alice's pod got uid %d under anyuid", *sc.RunAsUser)
	}

	// supplementalGroups MustRunAs (hostnetwork-v2, frank's by RBAC): inside the range, outside.
	frank := impersonating(t, E.scenarios, "frank", "system:authenticated")
	hostNet := func(name string, groups []int64) *corev1.Pod {
		p := pod(name, "", nil, &corev1.PodSecurityContext{SupplementalGroups: groups})
		p.Spec.HostNetwork = true
		return p
	}
	inside, err := frank.CoreV1().Pods(ns).Create(c, hostNet("hn-inside", []int64{1000700001}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("frank's hostNetwork pod with a group inside the range: %v", err)
	}
	if got := inside.Annotations["openshift.io/scc"]; got != "hostnetwork-v2" {
		t.Errorf("frank's pod was admitted with %q, want hostnetwork-v2", got)
	}
	_, err = frank.CoreV1().Pods(ns).Create(c, hostNet("hn-outside", []int64{five}), metav1.CreateOptions{})
	wantRefused("frank's hostNetwork pod with group 5", err,
		"provider hostnetwork-v2: .spec.securityContext.supplementalGroups: Invalid value: []int64{5}: 5 is not an allowed group")

	// hostNetwork and an added capability, refused for bob with the listed reasons.
	_, err = bob.CoreV1().Pods(ns).Create(c, hostNet("bob-hostnet", nil), metav1.CreateOptions{})
	wantRefused("bob's hostNetwork pod", err,
		"unable to validate against any security context constraint",
		"provider restricted-v2: ",
		"hostNetwork: Invalid value: true: Host network is not allowed to be used",
		`provider "hostnetwork-v2": Forbidden: not usable by user or serviceaccount`)
	caps := &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}}}
	_, err = bob.CoreV1().Pods(ns).Create(c, pod("bob-caps", "", caps, nil), metav1.CreateOptions{})
	wantRefused("bob's SYS_ADMIN pod", err,
		`provider restricted-v2: .containers[0].capabilities.add: Invalid value: "SYS_ADMIN": capability may not be added`)
}
