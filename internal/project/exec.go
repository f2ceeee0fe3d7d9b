package project

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
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/process"
	"github.com/awr-dev/awr/internal/secret"
	"github.com/awr-dev/awr/projections"
	"golang.org/x/sys/unix"
)

// ExecRunRequest is `awr exec run` (CLI only: no MCP tool runs commands).
type ExecRunRequest = commands.ExecRunRequest

// MaxKeptOutput is how much of each output stream of an execution awr
// keeps under .awr/executions/<id>/: 1 MiB; the rest is counted and
// hashed, not kept.
const MaxKeptOutput = 1 << 20

// The states of an execution as a reader sees it.
const (
	// ExecRunning: started, no finish recorded, and the awr process that
	// runs it still lives.
	ExecRunning = "running"
	// ExecUnknown: started, no finish recorded, and that process is gone:
	// the command may or may not have had its effect.
	ExecUnknown = "unknown"
	// ExecSucceeded and ExecFailed: finished, with exit code 0 or not.
	ExecSucceeded = projections.ExecSucceeded
	ExecFailed    = projections.ExecFailed
)

// ExecutionView is an execution as `awr exec list|show|run` report it:
// State is running, unknown, succeeded or failed; OutputDir is where its
// output is kept, relative to the project root.
type ExecutionView struct {
	projections.Execution
	State     string `json:"state"`
	OutputDir string `json:"output_dir"`
}

// ExecRunResult is `awr exec run`: the execution (just run, or the one
// recorded before when Replayed) and the exit status awr exits with.
type ExecRunResult struct {
	Execution ExecutionView `json:"execution"`
	// Replayed is true when the key had already run: nothing ran, and
	// this is the recorded result.
	Replayed bool `json:"replayed"`
	// ExitStatus is the command's exit code, or 128 plus the signal that
	// ended it, or 127 when it could not start; awr exits with it.
	ExitStatus      int   `json:"exit_status"`
	ProjectRevision int64 `json:"project_revision"`
}

// ExecRun runs req's command at most once per (work item of the session,
// key) (see commands.StartExecution): it records execution_started, runs
// the command in the caller's working directory (the project root when
// the caller is outside the project) with stdin, stdout and stderr passed
// through, keeps each output stream (capped at MaxKeptOutput, every line
// that looks like a secret withheld) under .awr/executions/<id>/, and
// records execution_finished with the exit code, duration, output hashes
// and HEAD after. A failing command is a result, not an error. If awr dies
// before the finish is recorded, the key is unknown until a run with
// RetryUnknown.
// Errors: those of commands.StartExecution and commands.FinishExecution;
// Storage when the output directory cannot be made.
func (p *Project) ExecRun(ctx context.Context, req ExecRunRequest, stdin io.Reader, stdout, stderr io.Writer) (*ExecRunResult, error) {
	env, err := p.Env(ctx)
	if err != nil {
		return nil, err
	}
	dir, rel, err := p.workdir("")
	if err != nil {
		return nil, err
	}
	req.Cwd = rel
	if req.Cwd == "" {
		req.Cwd = "."
	}
	req.Repo = execRepo(ctx, dir)
	req.Process = selfProcess()
	req.Alive = processAlive
	start, err := commands.StartExecution(ctx, env, req)
	if err != nil {
		return nil, err
	}
	if !start.Run {
		v := p.execView(&start.Execution, true, nil)
		return &ExecRunResult{Execution: v, Replayed: true, ExitStatus: exitStatus(&start.Execution), ProjectRevision: start.ProjectRevision}, nil
	}
	x := &start.Execution
	fin, err := p.runExecution(ctx, x, dir, stdin, stdout, stderr)
	if err != nil {
		return nil, err
	}
	// The command ran: its finish is recorded even when awr was asked to
	// stop meanwhile.
	done, err := commands.FinishExecution(context.WithoutCancel(ctx), env, *fin)
	if err != nil {
		return nil, err
	}
	v := p.execView(&done.Execution, true, nil)
	return &ExecRunResult{Execution: v, ExitStatus: exitStatus(&done.Execution), ProjectRevision: done.ProjectRevision}, nil
}

// ExecutionDir returns the directory an execution's output is kept in,
// relative to the project root.
func ExecutionDir(id string) string { return filepath.ToSlash(filepath.Join(".awr", "executions", id)) }

// runExecution runs x's command in dir and describes how it ended.
func (p *Project) runExecution(ctx context.Context, x *projections.Execution, dir string, stdin io.Reader, stdout, stderr io.Writer) (*events.ExecutionFinished, error) {
	out := filepath.Join(p.dir, filepath.FromSlash(ExecutionDir(x.ID)))
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
	cmd := exec.Command(x.Argv[0], x.Argv[1:]...)
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
	var ee *exec.ExitError
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
	fin.RepoAfter = execRepo(ctx, dir)
	return fin, nil
}

// exitStatus is the status awr exits with for x: its exit code, 128 plus
// its signal's number, or 127 for a command that never started.
func exitStatus(x *projections.Execution) int {
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

// execRepo captures HEAD and the dirty fingerprint of dir's repository.
func execRepo(ctx context.Context, dir string) *events.ExecutionRepo {
	rec, st := captureRepo(ctx, dir)
	if st == nil {
		return &events.ExecutionRepo{Unverifiable: rec.Unverifiable}
	}
	return &events.ExecutionRepo{Head: st.Head, Branch: st.Branch, Dirty: st.Dirty, DirtyFingerprint: st.DirtyFingerprint}
}

// selfProcess identifies this awr process for execution_started.
func selfProcess() *events.ExecutionProcess {
	id := process.Self()
	return &events.ExecutionProcess{Host: id.Host, BootID: id.BootID, PID: id.PID, StartTicks: id.StartTicks}
}

// processAlive reports whether the process pr names still runs (see
// process.Running).
func processAlive(pr *events.ExecutionProcess) bool {
	return pr != nil && process.Running(process.Identity{Host: pr.Host, BootID: pr.BootID, PID: pr.PID, StartTicks: pr.StartTicks})
}

// execView is x as a reader sees it. An unfinished execution is running
// while its process lives (at the head), unknown once it is gone; at a
// past revision, head is its version at the head: one that finished later
// was running then.
func (p *Project) execView(x *projections.Execution, atHead bool, head *projections.Execution) ExecutionView {
	v := ExecutionView{Execution: *x, State: x.State, OutputDir: ExecutionDir(x.ID)}
	if x.State == projections.ExecStarted {
		switch {
		case !atHead && head != nil && head.State != projections.ExecStarted:
			v.State = ExecRunning
		case processAlive(x.Process):
			v.State = ExecRunning
		default:
			v.State = ExecUnknown
		}
	}
	return v
}

// ExecListRequest is `awr exec list` and awr_exec_list.
type ExecListRequest struct {
	Work    string `name:"work" json:"work,omitempty" help:"Only the executions of this work item." placeholder:"KEY"`
	Session string `name:"session" json:"session,omitempty" help:"Only the executions this session ran." placeholder:"ID"`
	Read
}

// ExecList is `awr exec list`.
type ExecList struct {
	Executions      []ExecutionView `json:"executions"`
	ProjectRevision int64           `json:"project_revision"`
}

// ExecList lists the executions as of the request's revision, oldest
// first.
func (p *Project) ExecList(ctx context.Context, req ExecListRequest) (*ExecList, error) {
	out := &ExecList{Executions: []ExecutionView{}}
	err := p.read(ctx, req.Read, func(r *events.Reader, rev, _ int64) error {
		out.ProjectRevision = rev
		xs, err := projections.ExecutionsAt(r.Conn, rev, req.Work, req.Session)
		if err != nil {
			return err
		}
		for i := range xs {
			v, err := p.viewAt(r, rev, &xs[i])
			if err != nil {
				return err
			}
			out.Executions = append(out.Executions, v)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// viewAt is x, read at rev, as a reader sees it.
func (p *Project) viewAt(r *events.Reader, rev int64, x *projections.Execution) (ExecutionView, error) {
	if rev == r.Head || x.State != projections.ExecStarted {
		return p.execView(x, rev == r.Head, nil), nil
	}
	head, err := projections.ExecutionAt(r.Conn, x.ID, r.Head)
	if err != nil {
		return ExecutionView{}, err
	}
	return p.execView(x, false, head), nil
}

// ExecShowRequest is `awr exec show` and awr_exec_show.
type ExecShowRequest struct {
	ID string `arg:"" name:"id" json:"id" help:"Execution id (from exec run or exec list)." placeholder:"ID"`
	Read
}

// ExecShowResult is `awr exec show`.
type ExecShowResult struct {
	Execution ExecutionView `json:"execution"`
	// Next says what to do about an execution whose finish was never
	// recorded.
	Next            string `json:"next,omitempty"`
	ProjectRevision int64  `json:"project_revision"`
}

// ExecShow returns one execution as of the request's revision.
// Errors: NotFound for an execution unknown at that revision.
func (p *Project) ExecShow(ctx context.Context, req ExecShowRequest) (*ExecShowResult, error) {
	out := &ExecShowResult{}
	err := p.read(ctx, req.Read, func(r *events.Reader, rev, _ int64) error {
		out.ProjectRevision = rev
		x, err := projections.ExecutionAt(r.Conn, req.ID, rev)
		if err != nil {
			return err
		}
		if x == nil {
			return fault.New(fault.NotFound, "exec show: execution %s not found at revision %d", req.ID, rev).With("execution_id", req.ID).WithHint("awr exec list")
		}
		out.Execution, err = p.viewAt(r, rev, x)
		return err
	})
	if err != nil {
		return nil, err
	}
	if out.Execution.State == ExecUnknown && out.Execution.RetriedBy == "" {
		out.Next = fmt.Sprintf("check whether the command had its effect (output in %s), then: awr exec run --session SESSION --key %s --retry-unknown -- %s",
			out.Execution.OutputDir, out.Execution.Key, strings.Join(out.Execution.Argv, " "))
	}
	return out, nil
}
