// Package exec runs one recorded execution of `awr exec run` (Once
// records its start and finish through commands): the command runs with
// the caller's streams passed through while each output stream is kept,
// capped and with every line that looks like a secret withheld, under
// .awr/executions/<id>/, hashed and counted whole. It also says how a
// reader sees an execution (View): running while the awr process that
// runs it lives, unknown once it is gone. The other processes a person's
// command starts live here too: an evidence command (RunEvidence, `awr
// evidence add --command`) and the awr binary a host's hook command
// names (CheckHookCommand, `awr client install`).
package exec

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/process"
	"github.com/awr-dev/awr/internal/secret"
	"github.com/awr-dev/awr/projections"
	"golang.org/x/sys/unix"
	"zombiezen.com/go/sqlite"
)

// MaxKeptOutput is how much of each output stream of an execution awr
// keeps under .awr/executions/<id>/: 1 MiB; the rest is counted and
// hashed, not kept.
const MaxKeptOutput = 1 << 20

// The states of an execution as a reader sees it.
const (
	// Running: started, no finish recorded, and the awr process that
	// runs it still lives.
	Running = "running"
	// Unknown: started, no finish recorded, and that process is gone:
	// the command may or may not have had its effect.
	Unknown = "unknown"
	// Succeeded and Failed: finished, with exit code 0 or not.
	Succeeded = projections.ExecSucceeded
	Failed    = projections.ExecFailed
)

// View is an execution as `awr exec list|show|run` report it:
// State is running, unknown, succeeded or failed; OutputDir is where its
// output is kept, relative to the project root.
type View struct {
	projections.Execution
	State     string `json:"state"`
	OutputDir string `json:"output_dir"`
}

// ExecutionDir returns the directory an execution's output is kept in,
// relative to the project root.
func ExecutionDir(id string) string { return filepath.ToSlash(filepath.Join(".awr", "executions", id)) }

// Run runs x's command in dir, keeping its output under
// ExecutionDir(x.ID) of the project at root, and describes how it ended
// (the caller adds the repository after it). A command that fails or
// never starts is a result; the error is Storage when the output cannot
// be kept.
func Run(ctx context.Context, x *projections.Execution, root, dir string, stdin io.Reader, stdout, stderr io.Writer) (*events.ExecutionFinished, error) {
	out := filepath.Join(root, filepath.FromSlash(ExecutionDir(x.ID)))
	if err := os.MkdirAll(out, 0o700); err != nil {
		return nil, fault.Wrap(fault.Storage, err, "exec run: make %s", ExecutionDir(x.ID))
	}
	keptOut, err := newKept(filepath.Join(out, "stdout"))
	if err != nil {
		return nil, err
	}
	defer keptOut.f.Close()
	keptErr, err := newKept(filepath.Join(out, "stderr"))
	if err != nil {
		return nil, err
	}
	defer keptErr.f.Close()
	cmd := osexec.Command(x.Argv[0], x.Argv[1:]...)
	cmd.Dir = dir
	cmd.Stdin = stdin
	// The two streams are copied by two goroutines, and may go to one
	// writer (with --json both go to stderr): one lock for both.
	var mu sync.Mutex
	cmd.Stdout = io.MultiWriter(keptOut, passthrough{w: stdout, mu: &mu})
	cmd.Stderr = io.MultiWriter(keptErr, passthrough{w: stderr, mu: &mu})
	// The duration is the machine's monotonic time, not the event clock.
	began := time.Now()
	fin := &events.ExecutionFinished{ExecutionID: x.ID}
	err = cmd.Run()
	fin.DurationMs = time.Since(began).Milliseconds()
	var ee *osexec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		fin.ExitCode = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			fin.ExitCode, fin.Signal = -1, unix.SignalName(ws.Signal())
		}
	default:
		// It never started (not found, not executable).
		fin.ExitCode, fin.Error = 127, err.Error()
		fmt.Fprintf(stderr, "awr: %s\n", err)
	}
	fin.Stdout, fin.Stderr = keptOut.finish(), keptErr.finish()
	return fin, nil
}

// ExitStatus is the status awr exits with for x: its exit code, 128 plus
// its signal's number, or 127 for a command that never started.
func ExitStatus(x *projections.Execution) int {
	switch {
	case x.ExitCode == nil:
		return 0
	case x.Signal != "":
		if n := unix.SignalNum(x.Signal); n != 0 {
			return 128 + int(n)
		}
		return 128
	}
	return *x.ExitCode
}

// passthrough streams the command's output to a terminal that may go
// away: a failed write there never stops the command or its record. mu
// serialises the writes of both streams.
type passthrough struct {
	w  io.Writer
	mu *sync.Mutex
}

func (t passthrough) Write(b []byte) (int, error) {
	if t.w != nil {
		t.mu.Lock()
		t.w.Write(b)
		t.mu.Unlock()
	}
	return len(b), nil
}

// kept writes one output stream to its file line by line, every line that
// looks like a secret replaced by a note, up to MaxKeptOutput, while
// hashing and counting everything the command wrote.
type kept struct {
	f         *os.File
	h         hash.Hash
	total     int64
	kept      int64
	truncated bool
	withheld  int
	partial   []byte
}

func newKept(path string) (*kept, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fault.Wrap(fault.Storage, err, "exec run: keep output")
	}
	return &kept{f: f, h: sha256.New()}, nil
}

// maxLine is the longest partial line held before it is judged as one.
const maxLine = 64 << 10

func (k *kept) Write(b []byte) (int, error) {
	k.h.Write(b)
	k.total += int64(len(b))
	k.partial = append(k.partial, b...)
	for {
		i := bytes.IndexByte(k.partial, '\n')
		if i < 0 {
			if len(k.partial) > maxLine {
				k.line(k.partial)
				k.partial = k.partial[:0]
			}
			return len(b), nil
		}
		k.line(k.partial[:i+1])
		k.partial = k.partial[i+1:]
	}
}

// line keeps one line (with its newline, if any).
func (k *kept) line(l []byte) {
	if f, ok := secret.Find(string(l)); ok {
		k.withheld++
		nl := ""
		if bytes.HasSuffix(l, []byte("\n")) {
			nl = "\n"
		}
		l = []byte("[line withheld: it looks like a " + f.Kind + "]" + nl)
	}
	if k.truncated || k.kept+int64(len(l)) > MaxKeptOutput {
		k.truncated = true
		return
	}
	n, _ := k.f.Write(l)
	k.kept += int64(n)
}

func (k *kept) finish() events.ExecutionOutput {
	if len(k.partial) > 0 {
		k.line(k.partial)
		k.partial = nil
	}
	return events.ExecutionOutput{SHA256: "sha256:" + hex.EncodeToString(k.h.Sum(nil)), Bytes: k.total, Kept: k.kept, Truncated: k.truncated, Withheld: k.withheld}
}

// SelfProcess identifies this awr process for execution_started.
func SelfProcess() *events.ExecutionProcess {
	id := process.Self()
	return &events.ExecutionProcess{Host: id.Host, BootID: id.BootID, PID: id.PID, StartTicks: id.StartTicks}
}

// ProcessAlive reports whether the process pr names still runs (see
// process.Running).
func ProcessAlive(pr *events.ExecutionProcess) bool {
	return pr != nil && process.Running(process.Identity{Host: pr.Host, BootID: pr.BootID, PID: pr.PID, StartTicks: pr.StartTicks})
}

// ViewOf is x as a reader sees it. An unfinished execution is running
// while its process lives (at the head), unknown once it is gone; at a
// past revision, head is its version at the head: one that finished later
// was running then.
func ViewOf(x *projections.Execution, atHead bool, head *projections.Execution) View {
	v := View{Execution: *x, State: x.State, OutputDir: ExecutionDir(x.ID)}
	if x.State == projections.ExecStarted {
		switch {
		case !atHead && head != nil && head.State != projections.ExecStarted:
			v.State = Running
		case ProcessAlive(x.Process):
			v.State = Running
		default:
			v.State = Unknown
		}
	}
	return v
}

// ViewAt is x, read at rev of a log whose head is head, as a reader sees
// it (ViewOf): at a past revision, an execution unfinished then is judged
// by its version at the head.
func ViewAt(conn *sqlite.Conn, head, rev int64, x *projections.Execution) (View, error) {
	if rev == head || x.State != projections.ExecStarted {
		return ViewOf(x, rev == head, nil), nil
	}
	now, err := projections.ExecutionAt(conn, x.ID, head)
	if err != nil {
		return View{}, err
	}
	return ViewOf(x, false, now), nil
}
