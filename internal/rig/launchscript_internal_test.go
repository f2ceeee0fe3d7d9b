package rig

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/awr-dev/awr/projections"
)

// A command that prints why it failed and exits at once keeps its last
// words: the launch's shell holds the pane open after the exit file is
// written, until awr says it has read the pane. Without that hold, tmux
// dropped such output about once in 200 launches (measured on this
// machine under load), and a failed seat's evidence said nothing.
func TestLaunchScript_HoldsThePaneUntilRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	tm := Tmux{Socket: fmt.Sprintf("awr-launch-%d-%d", os.Getpid(), launchSockets.Add(1))}
	t.Cleanup(func() { exec.Command("tmux", "-L", tm.Socket, "kill-server").Run() })
	m := &Manager{Dir: dir, Tmux: tm}
	seats := filepath.Join(dir, ".awr", "seats", "a@r")
	if err := os.MkdirAll(seats, 0o700); err != nil {
		t.Fatal(err)
	}

	const n = 8
	files := make([]string, n)
	for i := range n {
		files[i] = filepath.Join(seats, fmt.Sprintf("c%d.md", i))
		script := launchScript(os.Getenv("PATH"), fmt.Sprintf("sh -c 'printf \"last words %d\\\\n\"; exit 3'", i), files[i])
		if err := tm.NewSession(ctx, fmt.Sprintf("s%d", i), dir, nil, script); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		name := fmt.Sprintf("s%d", i)
		status, ok := waitFor(t, func() (int, bool) { return exitStatus(ctx, files[i]) })
		if !ok || status != 3 {
			t.Fatalf("%s: exit status %d (%v), want 3", name, status, ok)
		}
		// The command has exited; its shell still holds the pane.
		if p, err := tm.Pane(ctx, name); err != nil || p.Dead {
			t.Fatalf("%s: the pane died before awr read it: %+v %v", name, p, err)
		}
		if m.paneAlive(ctx, &projections.Seat{TmuxSession: name, ContextFile: files[i]}) {
			t.Fatalf("%s: a command that left its exit status counts as running", name)
		}
		tail := tm.SettledTail(ctx, name, 10)
		if !slices.ContainsFunc(tail, func(l string) bool { return strings.Contains(l, fmt.Sprintf("last words %d", i)) }) {
			t.Fatalf("%s: the pane lost the command's output: %q", name, tail)
		}
		m.paneRead(files[i])
		// Told, the shell ends (tmux may not record its status: the exit
		// file has it).
		p, _ := waitFor(t, func() (PaneState, bool) {
			p, err := tm.Pane(ctx, name)
			return p, err == nil && p.Dead
		})
		if p.StatusKnown && p.Status != 3 {
			t.Fatalf("%s: tmux recorded status %d, want 3", name, p.Status)
		}
	}

	// A context file outside the seats directory gets no read file.
	outside := filepath.Join(dir, "elsewhere.md")
	m.paneRead(outside)
	if _, err := os.Stat(readFile(outside)); !os.IsNotExist(err) {
		t.Fatalf("paneRead wrote outside the seats directory: %v", err)
	}
}

var launchSockets atomic.Int64

// waitFor polls f until it says ok, for at most a minute.
func waitFor[T any](t *testing.T, f func() (T, bool)) (T, bool) {
	t.Helper()
	var v T
	var ok bool
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if v, ok = f(); ok {
			return v, true
		}
	}
	t.Fatal("waited a minute")
	return v, ok
}
