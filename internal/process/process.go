// Package process identifies a process across PID reuse and machine
// restarts: by host, boot id, PID and start time. awr records the process
// that owns a restore attempt or an execution, and later asks whether it
// still runs. Output keeps what a child writes while others read it.
package process

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Identity names one process: its host, the boot it runs in (Linux's
// boot_id, "" elsewhere), its PID and its start time in clock ticks after
// boot (0 when unknown).
type Identity struct {
	Host       string
	BootID     string
	PID        int
	StartTicks int64
}

// Self identifies the calling process.
func Self() Identity {
	host, _ := os.Hostname()
	id := Identity{Host: host, BootID: bootID(), PID: os.Getpid()}
	id.StartTicks, _ = startTicks(id.PID)
	return id
}

// Running reports whether the process id names still runs. One on another
// host, or one that cannot be told apart, counts as running: awr refuses
// rather than do twice what another machine may be doing. A machine
// restarted since (another boot id) and a reused PID (another start time)
// count as gone, and so does a zombie.
func Running(id Identity) bool {
	if host, _ := os.Hostname(); id.Host != host {
		return true
	}
	if boot := bootID(); id.BootID != "" && boot != "" && id.BootID != boot {
		return false
	}
	if ticks, ok := startTicks(id.PID); ok && id.StartTicks != 0 {
		return ticks == id.StartTicks
	}
	err := syscall.Kill(id.PID, 0)
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
// after the parenthesised command name); a zombie's is -1.
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
	if f[0] == "Z" || f[0] == "X" {
		return -1, true
	}
	n, err := strconv.ParseInt(f[19], 10, 64)
	return n, err == nil
}
