package commands

import (
	"context"
	"fmt"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
)

// ExecRunRequest runs a side effect at most once per (work item, key):
// `awr exec run`. The CLI only: no MCP tool runs commands on the server's
// machine.
type ExecRunRequest struct {
	SessionID    string   `name:"session" required:"" json:"session" help:"Session id (it must hold the live claim on its work item to run the command)." placeholder:"ID"`
	Key          string   `name:"key" required:"" json:"key" help:"What the command does, once per work item (e.g. migrate-db-2026-05): a second run of the key returns the recorded result without running." placeholder:"KEY"`
	Purpose      string   `name:"purpose" json:"purpose,omitempty" help:"Why it runs, for a successor reading the log." placeholder:"TEXT"`
	RetryUnknown bool     `name:"retry-unknown" json:"retry_unknown,omitempty" help:"Run again a key whose last execution started but recorded no finish (its process died), after a look at awr exec show."`
	RetryFailed  bool     `name:"retry-failed" json:"retry_failed,omitempty" help:"Run again a key whose last execution failed (a non-zero exit); without it the failure is replayed."`
	Argv         []string `arg:"" name:"command" passthrough:"" json:"argv" help:"The command and its arguments, after --." placeholder:"CMD"`
	// Cwd (relative to the project root), Repo and Process are what the
	// door found before the run: where it runs, the repository then and
	// the awr process that runs it. No front end sets them.
	Cwd     string                   `kong:"-" json:"-"`
	Repo    *events.ExecutionRepo    `kong:"-" json:"-"`
	Process *events.ExecutionProcess `kong:"-" json:"-"`
	// Alive tells whether the process that started an execution still
	// runs; nil counts every such process as gone. No front end sets it.
	Alive func(*events.ExecutionProcess) bool `kong:"-" json:"-"`
}

// ExecStartResult is the decision StartExecution took: Run when the
// caller must now run the command and record its finish (the execution
// was started in the log), Replayed when the key already ran and
// Execution is its recorded result.
type ExecStartResult struct {
	Execution       projections.Execution `json:"execution"`
	Run             bool                  `json:"run"`
	Replayed        bool                  `json:"replayed"`
	ProjectRevision int64                 `json:"project_revision"`
}

// MaxExecArgvBytes bounds a recorded command line.
const MaxExecArgvBytes = 16 << 10

// checkExecRequest refuses a request that cannot be recorded.
func checkExecRequest(req ExecRunRequest) error {
	for _, f := range [][2]string{{"session", req.SessionID}, {"key", req.Key}} {
		if err := required(f[0], f[1]); err != nil {
			return err
		}
	}
	if len(req.Argv) == 0 || strings.TrimSpace(req.Argv[0]) == "" {
		return fault.New(fault.InvalidInput, "exec run: no command: give it after --").With("field", "argv").
			WithHint("awr exec run --session %s --key %s -- CMD ARGS...", req.SessionID, req.Key)
	}
	if len(req.Key) > MaxLabelBytes {
		return fault.New(fault.InvalidInput, "exec run: key is %d bytes, more than the %d a key may have", len(req.Key), MaxLabelBytes).With("field", "key").With("max", MaxLabelBytes)
	}
	for _, r := range req.Key {
		if r < 0x20 || r == 0x7f {
			return fault.New(fault.InvalidInput, "exec run: key holds a control character (%q); a key is one plain line", r).With("field", "key")
		}
	}
	n := 0
	fields := [][2]string{{"key", req.Key}, {"purpose", req.Purpose}}
	for i, a := range req.Argv {
		n += len(a)
		fields = append(fields, [2]string{fmt.Sprintf("argv[%d]", i), a})
	}
	if n > MaxExecArgvBytes {
		return fault.New(fault.InvalidInput, "exec run: the command line is %d bytes, more than the %d awr records", n, MaxExecArgvBytes).With("field", "argv").With("max", MaxExecArgvBytes)
	}
	return refuseSecrets("exec run", fields...)
}

// StartExecution decides whether the key of req runs now, on the work
// item of req's session, and if so records execution_started before the
// command runs. The latest execution of the key decides:
//
//   - none: it runs;
//   - succeeded: it is replayed (nothing runs, nothing is written);
//   - failed: it is replayed, unless RetryFailed asks to run it again;
//   - started without a finish, its process alive: refused (running);
//   - started without a finish, its process gone (unknown): refused unless
//     RetryUnknown asks to run it again.
//
// A run again records a new execution that names the one it retries. To
// run, the session must hold the claim on its work item (a lapsed lease
// no one took is renewed, as any write by the holder renews it).
// Errors: InvalidInput for a missing session, key or command, or one too
// long; RuleViolation for a field that looks like a secret; NotFound and
// InvalidTransition for a missing or ended session; InvalidTransition for
// a running or unknown execution (hint: awr exec show ID) and for a
// session that holds no claim; ClaimConflict when another session holds
// the work or this session's claim was superseded.
func StartExecution(ctx context.Context, env *Env, req ExecRunRequest) (*ExecStartResult, error) {
	if err := checkExecRequest(req); err != nil {
		return nil, err
	}
	return write(ctx, env, "awr", WriteMeta{}, []string{"session/" + req.SessionID}, nil, func(tx *events.Tx) (*ExecStartResult, error) {
		s, err := activeSession(tx, "exec run", req.SessionID)
		if err != nil {
			return nil, err
		}
		last, err := projections.LatestExecutionOfKey(tx.Conn, s.Work, req.Key)
		if err != nil {
			return nil, err
		}
		retries := ""
		if last != nil {
			switch {
			case last.State == projections.ExecSucceeded || last.State == projections.ExecFailed && !req.RetryFailed:
				return &ExecStartResult{Execution: *last, Replayed: true, ProjectRevision: tx.Head()}, nil
			case last.State == projections.ExecStarted && req.Alive != nil && req.Alive(last.Process):
				return nil, fault.New(fault.InvalidTransition, "exec run: key %s on %s is running: execution %s started at seq %d and its process (pid %d) still runs",
					req.Key, s.Work, last.ID, last.StartedSeq, pid(last.Process)).
					With("execution_id", last.ID).With("key", req.Key).With("work", s.Work).With("state", "running").WithHint("awr exec show %s", last.ID)
			case last.State == projections.ExecStarted && !req.RetryUnknown:
				return nil, fault.New(fault.InvalidTransition, "exec run: key %s on %s is unknown: execution %s started at seq %d and recorded no finish, so it may or may not have had its effect",
					req.Key, s.Work, last.ID, last.StartedSeq).
					With("execution_id", last.ID).With("key", req.Key).With("work", s.Work).With("state", "unknown").With("flag", "--retry-unknown").
					WithHint("awr exec show %s", last.ID)
			}
			retries = last.ID
		}
		if err := fence(tx, "exec run", s); err != nil {
			return nil, err
		}
		c, err := heldClaim(tx, s.ID)
		if err != nil {
			return nil, err
		}
		if c == nil {
			e := fault.New(fault.InvalidTransition, "exec run: session %s holds no claim on %s; only the holder runs its side effects", s.ID, s.Work).
				With("session_id", s.ID).With("work", s.Work).WithHint("awr claim acquire --session %s", s.ID)
			if live, err := projections.LiveClaimAt(tx.Conn, s.Work, tx.Head(), tx.Now().UnixMilli(), true); err == nil && live != nil {
				e = fault.New(fault.ClaimConflict, "exec run: session %s holds no claim on %s; session %s does", s.ID, s.Work, live.SessionID).
					With("session_id", s.ID).With("work", s.Work).With("holder_session", live.SessionID).With("holder_agent", live.Agent).
					WithHint("awr recovery inspect --session %s", s.ID)
			}
			return nil, e
		}
		if err := renewHeld(tx, s); err != nil {
			return nil, err
		}
		prev := tx.SetActor(s.Agent)
		defer tx.SetActor(prev)
		id := tx.NewID()
		e, err := tx.Append(events.NewEvent{Stream: events.ExecutionStream(s.Work, req.Key), ID: id, Payload: events.ExecutionStarted{
			ExecutionID: id, Work: s.Work, SessionID: s.ID, Key: req.Key, Purpose: req.Purpose, Argv: req.Argv, Cwd: req.Cwd,
			Repo: req.Repo, Process: req.Process, ClaimID: c.ID, FencingToken: c.FencingToken, Retries: retries,
		}})
		if err != nil {
			return nil, err
		}
		x, err := projections.ExecutionAt(tx.Conn, id, e.Seq)
		if err != nil || x == nil {
			return nil, fault.New(fault.Internal, "exec run: execution %s is not in the projection it was just written to", id)
		}
		return &ExecStartResult{Execution: *x, Run: true, ProjectRevision: tx.Head()}, nil
	})
}

func pid(p *events.ExecutionProcess) int {
	if p == nil {
		return 0
	}
	return p.PID
}

// ExecFinishResult is the execution with its finish recorded.
type ExecFinishResult struct {
	Execution       projections.Execution `json:"execution"`
	ProjectRevision int64                 `json:"project_revision"`
}

// FinishExecution records how execution fin.ExecutionID ended
// (execution_finished); its work, key and session come from the start.
// It is recorded whatever became of the session meanwhile (it may have
// ended or lost its claim): the command ran, and the log must say so.
// Errors: NotFound for an execution never started; InvalidTransition for
// one already finished.
func FinishExecution(ctx context.Context, env *Env, fin events.ExecutionFinished) (*ExecFinishResult, error) {
	return write(ctx, env, "awr", WriteMeta{}, nil, nil, func(tx *events.Tx) (*ExecFinishResult, error) {
		x, err := projections.ExecutionAt(tx.Conn, fin.ExecutionID, tx.Head())
		if err != nil {
			return nil, err
		}
		if x == nil {
			return nil, fault.New(fault.NotFound, "exec finish: execution %s not found", fin.ExecutionID).With("execution_id", fin.ExecutionID).WithHint("awr exec list")
		}
		if x.State != projections.ExecStarted {
			return nil, fault.New(fault.InvalidTransition, "exec finish: execution %s already finished at seq %d", x.ID, x.FinishedSeq).
				With("execution_id", x.ID).WithHint("awr exec show %s", x.ID)
		}
		fin.Work, fin.Key, fin.SessionID = x.Work, x.Key, x.SessionID
		if s, err := projections.SessionAt(tx.Conn, x.SessionID, tx.Head()); err == nil && s != nil {
			prev := tx.SetActor(s.Agent)
			defer tx.SetActor(prev)
		}
		e, err := tx.Append(events.NewEvent{Stream: events.ExecutionStream(x.Work, x.Key), Payload: fin})
		if err != nil {
			return nil, err
		}
		if x, err = projections.ExecutionAt(tx.Conn, fin.ExecutionID, e.Seq); err != nil {
			return nil, err
		}
		return &ExecFinishResult{Execution: *x, ProjectRevision: tx.Head()}, nil
	})
}
