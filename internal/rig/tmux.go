package rig

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/awr-dev/awr/internal/process"
)

// Tmux drives a tmux server through its command line. Socket, when set,
// selects a private server (tmux -L); tests use one per test.
type Tmux struct {
	Socket string
}

func (t Tmux) run(ctx context.Context, args ...string) (string, error) {
	if t.Socket != "" {
		args = append([]string{"-L", t.Socket}, args...)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "tmux", args...)
	out, err := process.Run(cmd)
	if err != nil {
		return string(out), fmt.Errorf("tmux %s: %s", args[0], err)
	}
	return string(out), nil
}

// Available reports whether the tmux program can be found.
func (t Tmux) Available() error {
	_, err := exec.LookPath("tmux")
	return err
}

// NewSession starts the shell command in a detached session named name, in
// cwd, with env added to the session's environment (tmux takes PATH from
// the client, so a command that needs its own PATH sets it itself). The pane stays after the
// command exits, so its exit status and last lines can be read.
func (t Tmux) NewSession(ctx context.Context, name, cwd string, env map[string]string, command string) error {
	args := []string{"new-session", "-d", "-s", name, "-c", cwd, "-x", "200", "-y", "50"}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "-e", k+"="+env[k])
	}
	// The command runs under /bin/sh directly: given as one string, tmux
	// would run it through the user's login shell, whose profile may reset
	// PATH or leave background jobs holding the pane open. The option is
	// set in the same command sequence, before the server can reap a
	// command that exits at once.
	args = append(args, "/bin/sh", "-c", command, ";", "set-option", "-p", "-t", name, "remain-on-exit", "on")
	_, err := t.run(ctx, args...)
	return err
}

// Has reports whether session name exists.
func (t Tmux) Has(ctx context.Context, name string) bool {
	if name == "" {
		return false
	}
	_, err := t.run(ctx, "has-session", "-t", "="+name)
	return err == nil
}

// Kill stops session name; a missing session is not an error.
func (t Tmux) Kill(ctx context.Context, name string) error {
	if !t.Has(ctx, name) {
		return nil
	}
	_, err := t.run(ctx, "kill-session", "-t", "="+name)
	return err
}

// SendLine types text into the session's pane, then Enter.
func (t Tmux) SendLine(ctx context.Context, name, text string) error {
	if _, err := t.run(ctx, "send-keys", "-t", "="+name+":", "-l", text); err != nil {
		return err
	}
	_, err := t.run(ctx, "send-keys", "-t", "="+name+":", "Enter")
	return err
}

// PaneState is whether the pane's command has exited, and with what.
type PaneState struct {
	Dead bool
	// Status is the exit status (128+N for signal N) when StatusKnown.
	Status      int
	StatusKnown bool
}

// Pane reads the state of the session's pane. tmux marks a pane dead when
// its terminal closes and records the exit status when it reaps the
// process, which can come later (or, rarely, not at all): a dead pane's
// status may be unknown.
func (t Tmux) Pane(ctx context.Context, name string) (PaneState, error) {
	out, err := t.run(ctx, "display-message", "-p", "-t", "="+name+":", "#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}")
	if err != nil {
		return PaneState{}, err
	}
	f := strings.Split(strings.TrimSpace(out), ":")
	if len(f) < 3 || f[0] != "1" {
		return PaneState{}, nil
	}
	if status, err := strconv.Atoi(f[1]); err == nil {
		return PaneState{Dead: true, Status: status, StatusKnown: true}, nil
	}
	if sig, err := strconv.Atoi(f[2]); err == nil {
		return PaneState{Dead: true, Status: 128 + sig, StatusKnown: true}, nil
	}
	return PaneState{Dead: true}, nil
}

// SettledTail is Tail once the pane's output has settled: an agent that
// has just reported (bound its conversation) is still printing what it
// did, so the pane is read again every 50 ms until two reads agree, for at
// most a second.
func (t Tmux) SettledTail(ctx context.Context, name string, n int) []string {
	lines := t.Tail(ctx, name, n)
	for range 20 {
		select {
		case <-ctx.Done():
			return lines
		case <-time.After(50 * time.Millisecond):
		}
		again := t.Tail(ctx, name, n)
		if slices.Equal(again, lines) {
			return lines
		}
		lines = again
	}
	return lines
}

// Tail returns the last n non-empty lines of the session's pane.
func (t Tmux) Tail(ctx context.Context, name string, n int) []string {
	out, err := t.run(ctx, "capture-pane", "-p", "-J", "-t", "="+name+":", "-S", "-200")
	if err != nil {
		return nil
	}
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimRight(l, " "); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// sendChunk bounds the literal text of one send-keys: tmux refuses a
// command longer than its message size (about 16 KiB).
const sendChunk = 4096

// SendText types text into the session's pane as literal keys, in pieces
// tmux accepts (a newline is typed as one), then Enter.
func (t Tmux) SendText(ctx context.Context, name, text string) error {
	for len(text) > 0 {
		n := min(len(text), sendChunk)
		for n < len(text) && !utf8.RuneStart(text[n]) {
			n--
		}
		if _, err := t.run(ctx, "send-keys", "-t", "="+name+":", "-l", text[:n]); err != nil {
			return err
		}
		text = text[n:]
	}
	_, err := t.run(ctx, "send-keys", "-t", "="+name+":", "Enter")
	return err
}

// Capture returns the last n lines of the session's pane, its history
// included (wrapped lines joined, trailing spaces and the blank lines
// below the last output dropped).
func (t Tmux) Capture(ctx context.Context, name string, n int) ([]string, error) {
	out, err := t.run(ctx, "capture-pane", "-p", "-J", "-t", "="+name+":", "-S", "-"+strconv.Itoa(n))
	if err != nil {
		return nil, err
	}
	lines := strings.Split(out, "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines, nil
}
