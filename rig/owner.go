package rig

import (
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/awr-dev/awr/events"
)

// self identifies this process for restore_started.
func self() *events.RestoreOwner {
	host, _ := os.Hostname()
	o := &events.RestoreOwner{Host: host, BootID: bootID(), PID: os.Getpid()}
	o.StartTicks, _ = startTicks(o.PID)
	return o
}

// running reports whether the process o names still runs. A process on
// another host, or one that cannot be identified, counts as running: awr
// refuses rather than relaunch what another machine is restoring.
func running(o *events.RestoreOwner) bool {
	if o == nil {
		return false // written before owners were recorded: treat as crashed
	}
	if host, _ := os.Hostname(); o.Host != host {
		return true
	}
	if o.BootID != "" && bootID() != "" && o.BootID != bootID() {
		return false // the machine restarted since
	}
	if ticks, ok := startTicks(o.PID); ok && o.StartTicks != 0 {
		return ticks == o.StartTicks // the PID may have been reused
	}
	err := syscall.Kill(o.PID, 0)
	return err == nil || err == syscall.EPERM
}

func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// startTicks reads a process's start time from /proc/PID/stat (field 22,
// after the parenthesised command name).
func startTicks(pid int) (int64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0, false
	}
	n, err := strconv.ParseInt(f[19], 10, 64)
	return n, err == nil
}
