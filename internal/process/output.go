package process

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"sync"
)

// Output is what a child process writes to one of its streams, kept in
// memory: the copier os/exec starts writes it while others read it
// (String), so every access holds its lock.
type Output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

// String returns what was written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// Run runs cmd and returns what it wrote to stdout. When it fails, the
// error's text is what it wrote to stderr, trimmed, or the run's own
// error when it wrote nothing there; stdout is returned all the same.
func Run(cmd *exec.Cmd) ([]byte, error) {
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return out.Bytes(), errors.New(msg)
	}
	return out.Bytes(), nil
}
