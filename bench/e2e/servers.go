package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// server is one webhook server under test, pinned to the server core, and the authorizer
// (kube-apiserver's webhook client) that talks to it.
type server struct {
	Name    string
	cmd     *exec.Cmd
	authz   authorizer.Authorizer
	log     string
	IdleRSS int64
	LoadRSS int64
	Proto   string
	port    int
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// started is every server process started, for the signal handler.
var (
	startedMu sync.Mutex
	started   []*server
)

// stopOnSignal stops every started server and exits when SIGINT or SIGTERM arrives (bench/run.sh
// runs the generator under `timeout`).
func stopOnSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig := <-ch
		startedMu.Lock()
		for _, s := range started {
			s.stop()
		}
		fmt.Fprintln(os.Stderr, "e2e: stopped by", sig)
		os.Exit(1)
	}()
}

// start runs `taskset -c core bin args...`, logging to dir/name.log. taskset execs the server,
// so the child's pid is the server's.
func start(dir, name, core, bin string, args ...string) (*server, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("taskset", append([]string{"-c", core, bin}, args...)...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	s := &server{Name: name, cmd: cmd, log: logPath}
	startedMu.Lock()
	started = append(started, s)
	startedMu.Unlock()
	return s, nil
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// alive is an error when the server process has exited.
func (s *server) alive() error {
	if err := s.cmd.Process.Signal(syscall.Signal(0)); err != nil {
		return fmt.Errorf("%s exited (log: %s)", s.Name, s.log)
	}
	if raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.pid())); err == nil {
		// A zombie has exited but not been reaped yet.
		for i := len(raw) - 1; i > 0; i-- {
			if raw[i] == ')' && i+2 < len(raw) && raw[i+2] == 'Z' {
				return fmt.Errorf("%s exited (log: %s)", s.Name, s.log)
			}
		}
	}
	return nil
}

// stop sends SIGTERM and waits up to 10s, then kills.
func (s *server) stop() {
	if s == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}
