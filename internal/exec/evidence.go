package exec

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	osexec "os/exec"
	"time"

	"github.com/awr-dev/awr/internal/secret"
)

// EvidenceTail is how many of an evidence command's last output lines
// RunEvidence keeps.
const EvidenceTail = 20

// Evidence is how an evidence command ran: its exit code (127 when it
// could not start, 137 when a signal killed it), its duration, the
// sha256 ("sha256:HEX") and size of its output (stdout and stderr
// interleaved) and its last EvidenceTail lines, those that look like a
// credential withheld.
type Evidence struct {
	ExitCode   int
	DurationMs int64
	Hash       string
	Size       int64
	Tail       []string
}

// RunEvidence runs cmd with sh -c in dir for `awr evidence add` (a
// person's command, never an agent's word: the door refuses that) and
// says how it ran; nothing of its output is kept but the tail.
func RunEvidence(ctx context.Context, dir, cmd string) Evidence {
	c := osexec.CommandContext(ctx, "/bin/sh", "-c", cmd)
	c.Dir = dir
	pr, pw := io.Pipe()
	c.Stdout, c.Stderr = pw, pw
	h := &countingHash{Hash: sha256.New()}
	var lines []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(io.TeeReader(pr, h))
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			lines = append(lines, sc.Text())
			if len(lines) > EvidenceTail {
				lines = lines[1:]
			}
		}
		io.Copy(h, pr)
	}()
	start := time.Now()
	err := c.Run()
	pw.Close()
	<-done
	out := Evidence{DurationMs: time.Since(start).Milliseconds(), Size: h.n}
	var ee *osexec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		out.ExitCode = ee.ExitCode()
		if out.ExitCode < 0 {
			out.ExitCode = 128 + 9 // killed by a signal
		}
	default:
		out.ExitCode = 127
	}
	for i, l := range lines {
		if _, found := secret.Find(l); found {
			lines[i] = "[line withheld: it looks like a credential]"
		}
	}
	out.Hash, out.Tail = "sha256:"+hex.EncodeToString(h.Sum(nil)), lines
	return out
}

// countingHash is a hash that counts the bytes written to it.
type countingHash struct {
	hash.Hash
	n int64
}

func (c *countingHash) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.Hash.Write(p)
}
