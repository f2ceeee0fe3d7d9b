//go:build awrtest

package rig

import (
	"os"
	"syscall"
)

// crash kills the process at a named point, for crash tests. Only binaries
// built with the awrtest tag (the crash tests build one) have this hook.
func (m *Manager) crash(point string) {
	if m.Crashpoint != "" && m.Crashpoint == point {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
}
