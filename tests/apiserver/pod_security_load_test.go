package apiserver

// The latency pod security adds to pod creates through a real kube-apiserver, open loop at 100
// creates/s: bob (restricted-v2 by his group, nothing else) creates plain pods in a namespace
// the pod security webhooks cover and in one they leave out, alternating A B B A so that
// neither gains from running second; every pod through the webhooks must come back defaulted
// into restricted-v2. A measurement, run when WARRANT_POD_LOAD is set (with a release
// WARRANT_BIN, on a quiet machine): go test -run TestPodSecurityLatencyAt100CreatesPerSecond.

import (
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

func TestPodSecurityLatencyAt100CreatesPerSecond(t *testing.T) {
	if os.Getenv("WARRANT_POD_LOAD") == "" {
		t.Skip("a measurement: set WARRANT_POD_LOAD=1 (with a release WARRANT_BIN, on a quiet machine)")
	}
	const covered, left, rate, seconds = "scc-load", "scc-load-base", 100, 10
	admin := installPodSecurity(t, []string{covered})
	c := ctx(t)
	for _, ns := range []string{covered, left} {
		if _, err := admin.CoreV1().Namespaces().Create(c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.CoreV1().ServiceAccounts(ns).Create(c, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"create", "role", "pod-creator", "--verb=create,get", "--resource=pods"},
			{"create", "rolebinding", "bob-pods", "--role=pod-creator", "--user=bob"}} {
			if out, err := kubectl(t, E.scenarios, append([]string{"-n", ns}, args...)...); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
		}
		ns := ns
		t.Cleanup(func() { _ = admin.CoreV1().Namespaces().Delete(ctx(t), ns, metav1.DeleteOptions{}) })
	}
	allocated(t, admin, covered)
	bob := impersonating(t, E.scenarios, "bob", "system:authenticated")
	plain := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}}}
	}
	if _, err := createPodWhenJudged(t, bob, covered, plain("warm")); err != nil {
		t.Fatalf("the first pod: %v", err)
	}
	round := 0
	burst := func(ns string) []time.Duration {
		round++
		return openLoopCreates(t, bob, ns, fmt.Sprintf("r%d", round), rate, seconds, plain, ns == covered)
	}
	var base, through []time.Duration
	base = append(base, burst(left)...)
	through = append(through, burst(covered)...)
	through = append(through, burst(covered)...)
	base = append(base, burst(left)...)
	p := func(l []time.Duration, q int) time.Duration {
		sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
		return l[len(l)*q/100]
	}
	fmt.Printf("POD SECURITY LATENCY (pod creates by bob at %d/s, %d per round, A B B A; baseline: a namespace the webhooks leave out)\n", rate, rate*seconds)
	fmt.Printf("  baseline p50 %9s p99 %9s | through /mutate and /admit p50 %9s p99 %9s | added p50 %9s p99 %9s\n",
		p(base, 50), p(base, 99), p(through, 50), p(through, 99), p(through, 50)-p(base, 50), p(through, 99)-p(base, 99))
}

// openLoopCreates creates rate pods a second for seconds in ns (call i at start + i/rate,
// timed from then), each named prefix-i; every create must succeed, and with judged every pod
// must come back admitted with restricted-v2. The latencies.
func openLoopCreates(t *testing.T, c *kubernetes.Clientset, ns, prefix string, rate, seconds int,
	pod func(string) *corev1.Pod, judged bool) []time.Duration {
	t.Helper()
	n := rate * seconds
	latencies := make([]time.Duration, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < n; i++ {
		at := start.Add(time.Duration(i) * time.Second / time.Duration(rate))
		time.Sleep(time.Until(at))
		wg.Add(1)
		go func(i int, at time.Time) {
			defer wg.Done()
			created, err := c.CoreV1().Pods(ns).Create(ctx(t), pod(fmt.Sprintf("%s-%04d", prefix, i)), metav1.CreateOptions{})
			latencies[i] = time.Since(at)
			switch {
			case err != nil:
				errs <- err
			case judged && created.Annotations["openshift.io/scc"] != "restricted-v2":
				errs <- fmt.Errorf("%s admitted with %q", created.Name, created.Annotations["openshift.io/scc"])
			}
		}(i, at)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a create in %s: %v", ns, err)
	}
	return latencies
}
