package apiserver

// The buffer ring's cost with many cached objects (the figures of its design), opt-in:
//
//	WARRANT_BUFFER_SCALE=10000 go test -count=1 -run TestBufferScale -v .
//
// N small ConfigMaps labelled critical in one namespace; the chain's buffer block names
// configmaps, so warrant-admission's controller lists and watches them (metadata only) and puts
// its finalizer on every one. Reported: warrant-admission's RSS before and after, the CPU time
// and wall time it took to finalize all N, and its CPU over an idle minute with N cached.
// ConfigMaps are not among the kinds the shipped ClusterRole grants, so the test binds a role
// for them to warrant's service account for its duration.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

func TestBufferScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("WARRANT_BUFFER_SCALE"))
	if n <= 0 {
		t.Skip("set WARRANT_BUFFER_SCALE=N to measure the buffer ring with N cached objects")
	}
	admin := client(t, E.scenarios, "admin")
	grantConfigMaps(t, admin)
	const ns = "buf-scale"
	labelledNamespace(t, E.scenarios, ns, nil)
	recv := newReceiver(t)
	cfg := strings.Replace(bufferConfig(bufferKnobs{cooldown: "1m", maxHold: "1h", receiver: recv.url}),
		"resources: [{group: apps, resource: statefulsets}]", `resources: [{group: "", resource: configmaps}]`, 1)
	pid := E.ring.admission.cmd.Process.Pid
	rss0, cpu0 := procStats(t, pid)
	setWarrantConfig(t, cfg)
	start := time.Now()
	createConfigMaps(t, admin, ns, n)
	created := time.Since(start)
	eventually(t, 10*time.Minute, "the finalizer on every ConfigMap", func() error {
		v := bufferMetric("warrant_buffer_finalizer_attachments_total")
		if got, _ := strconv.Atoi(v); got < n {
			return fmt.Errorf("%s of %d finalized", v, n)
		}
		return nil
	})
	finalized := time.Since(start)
	rss1, cpu1 := procStats(t, pid)
	time.Sleep(60 * time.Second)
	rss2, cpu2 := procStats(t, pid)
	t.Logf("%d ConfigMaps: created in %s, all finalized %s after the first create", n, created.Round(time.Millisecond), finalized.Round(time.Millisecond))
	t.Logf("warrant-admission RSS: %.1f MiB before, %.1f MiB with %d finalized, %.1f MiB after an idle minute",
		mib(rss0), mib(rss1), n, mib(rss2))
	t.Logf("warrant-admission CPU: %.2fs to list, watch and finalize %d; %.3fs over the idle minute",
		cpu1-cpu0, n, cpu2-cpu1)
	// Leave nothing behind: the ring's chain retires the finalizer from every ConfigMap.
	setRing(t, "Enforce")
	eventually(t, 10*time.Minute, "the finalizer retired from every ConfigMap", func() error {
		v := bufferMetric(`warrant_buffer_finalizer_removals_total{outcome="RETIRED"}`)
		if got, _ := strconv.Atoi(v); got < n {
			return fmt.Errorf("%s of %d retired", v, n)
		}
		return nil
	})
	_, cpu3 := procStats(t, pid)
	t.Logf("warrant-admission CPU: %.2fs to retire the finalizer from %d", cpu3-cpu2, n)
}

// grantConfigMaps lets warrant's service account list, watch, get and patch ConfigMaps until
// the test ends.
func grantConfigMaps(t *testing.T, c *kubernetes.Clientset) {
	t.Helper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "warrant-buffer-scale"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list", "watch", "get", "patch"}}}}
	if _, err := c.RbacV1().ClusterRoles().Create(ctx(t), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "warrant-buffer-scale"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "warrant", Namespace: "warrant-system"}}}
	if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx(t), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.RbacV1().ClusterRoleBindings().Delete(ctx(t), binding.Name, metav1.DeleteOptions{})
		_ = c.RbacV1().ClusterRoles().Delete(ctx(t), role.Name, metav1.DeleteOptions{})
	})
}

// createConfigMaps creates n small ConfigMaps labelled critical, 32 at a time.
func createConfigMaps(t *testing.T, c *kubernetes.Clientset, ns string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 32)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i),
				Labels: map[string]string{protectionLabel: "critical", "app": "scale"}},
				Data: map[string]string{"k": strings.Repeat("v", 256)}}
			if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx(t), cm, metav1.CreateOptions{}); err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// procStats reads a process's resident set (bytes) and CPU time (user + system, seconds).
func procStats(t *testing.T, pid int) (float64, float64) {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	var rss float64
	for _, l := range strings.Split(string(status), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			rss = kb * 1024
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name (which is in parentheses): utime and stime are 14 and 15.
	rest := strings.Fields(string(stat)[strings.LastIndexByte(string(stat), ')')+2:])
	ut, _ := strconv.ParseFloat(rest[11], 64)
	st, _ := strconv.ParseFloat(rest[12], 64)
	return rss, (ut + st) / 100 // USER_HZ is 100 on Linux
}

func mib(b float64) float64 { return b / (1 << 20) }
