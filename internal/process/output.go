package process

import (
	"bytes"
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
