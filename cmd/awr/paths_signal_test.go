package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSignal_EndsABlockedRead: awr import reading a pipe that never ends
// (nothing more comes, nothing closes it) is ended by SIGTERM and by
// SIGINT, and leaves no log behind (as TestSignal_StopsABlockedCommand
// for recovery verify). The signal is sent once awr holds the project
// directory's lock, right before it reads, without sleeping for it.
func TestSignal_EndsABlockedRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := buildAWR(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			proj := filepath.Join(dir, "p-"+strconv.Itoa(int(sig)))
			require.NoError(t, os.Mkdir(proj, 0o755))
			pr, pw, err := os.Pipe()
			require.NoError(t, err)
			defer pw.Close()
			cmd := exec.Command(bin, "import", "-", "--project", proj, "--json")
			cmd.Stdin = pr
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Start())
			pr.Close()
			defer cmd.Process.Kill()
			_, err = pw.Write([]byte(`{"seq":1,`)) // a line begun, never ended
			require.NoError(t, err)
			waitFor(t, func() bool { return holdsFlock(cmd.Process.Pid) })
			require.NoError(t, cmd.Process.Signal(sig))
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				t.Fatalf("awr import still reads after %s", sig)
			}
			require.Error(t, err, "stopped, not finished: %s", stderr.String())
			_, err = os.Stat(filepath.Join(proj, ".awr", "awr.db"))
			require.ErrorIs(t, err, os.ErrNotExist, "no log left behind")
		})
	}
}

// holdsFlock reports whether process pid holds a flock (/proc/locks).
func holdsFlock(pid int) bool {
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && f[1] == "FLOCK" && f[4] == strconv.Itoa(pid) {
			return true
		}
	}
	return false
}

// waitFor polls cond until it holds, failing after a long while.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 6000; i++ {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("condition never held")
}
