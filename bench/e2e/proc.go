package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat (100 on Linux/amd64).
const clockTicks = 100

// cpuTime is a process's user plus system CPU time so far, from /proc/PID/stat (fields 14 and 15,
// counted after the parenthesised command name, which may hold spaces).
func cpuTime(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(raw)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	fields := strings.Fields(s[end+1:])
	// fields[0] is field 3 (state); utime is field 14, stime field 15.
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: short", pid)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad utime/stime", pid)
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// rssBytes is VmRSS from /proc/PID/status.
func rssBytes(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmRSS", pid)
}

// selfCPU is the user plus system CPU time so far of this process and of the children it has
// waited for (the h2load runs; the servers are waited for only once stopped, after all runs).
func selfCPU() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}

// coreBusy is the time core `cpu` has spent busy so far (every /proc/stat column but idle and
// iowait), whoever ran on it.
func coreBusy(cpu int) (time.Duration, error) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	prefix := fmt.Sprintf("cpu%d ", cpu)
	for _, line := range strings.Split(string(raw), "\n") {
		rest, ok := strings.CutPrefix(line, prefix)
		if !ok {
			continue
		}
		var busy int64
		for i, f := range strings.Fields(rest) {
			v, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				return 0, err
			}
			// user nice system idle iowait irq softirq steal (guest time is inside user).
			if i != 3 && i != 4 && i < 8 {
				busy += v
			}
		}
		return time.Duration(busy) * time.Second / clockTicks, nil
	}
	return 0, fmt.Errorf("/proc/stat: no cpu%d", cpu)
}

// runDelay is how long the threads of process pid have waited on a run queue so far: runnable but
// not running, because something else had the core (second field of each
// /proc/PID/task/TID/schedstat, in ns). Threads that have exited are not counted.
func runDelay(pid int) (time.Duration, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, t := range tasks {
		raw, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread has exited
		}
		f := strings.Fields(string(raw))
		if len(f) < 2 {
			continue
		}
		if v, err := strconv.ParseInt(f[1], 10, 64); err == nil {
			total += v
		}
	}
	return time.Duration(total), nil
}
