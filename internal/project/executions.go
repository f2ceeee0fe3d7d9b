package project

import (
	"context"
	"errors"
	"io"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/cursor"
	"github.com/awr-dev/awr/internal/exec"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
)

// ExecutionView is an execution as `awr exec list|show|run` report it
// (exec.View).
type ExecutionView = exec.View

// ExecRunRequest is `awr exec run` (CLI only: no MCP tool runs commands).
type ExecRunRequest = commands.ExecRunRequest

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
// key) (exec.Once, see commands.StartExecution): it records
// execution_started, runs the command in the caller's working directory
// (the project root when the caller is outside the project) with stdin,
// stdout and stderr passed through, keeps each output stream (capped at MaxKeptOutput, every line
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
	x, replayed, rev, err := exec.Once(ctx, env, req, p.dir, dir, stdin, stdout, stderr)
	if err != nil {
		return nil, err
	}
	return &ExecRunResult{Execution: exec.ViewOf(x, true, nil), Replayed: replayed, ExitStatus: exec.ExitStatus(x), ProjectRevision: rev}, nil
}

// ExecListRequest is `awr exec list` and awr_exec_list.
type ExecListRequest struct {
	Work    string `name:"work" json:"work,omitempty" help:"Only the executions of this work item." placeholder:"KEY"`
	Session string `name:"session" json:"session,omitempty" help:"Only the executions this session ran." placeholder:"ID"`
	All     bool   `name:"all" json:"all,omitempty" help:"Every execution the filters select (no page)."`
	Limit   *int   `name:"limit" json:"limit,omitempty" help:"At most N executions (1 to 200; default 50, or all with --all)." placeholder:"N"`
	Cursor  string `name:"cursor" json:"cursor,omitempty" help:"The page after this one: the next_cursor of the page before." placeholder:"CURSOR"`
	Read
}

// ExecList is `awr exec list`.
type ExecList struct {
	Executions []ExecutionView `json:"executions"`
	// ExecutionsTotal counts every execution the filters select, on
	// every page.
	ExecutionsTotal int   `json:"executions_total"`
	ProjectRevision int64 `json:"project_revision"`
	// NextCursor, when more executions follow this page, is the --cursor
	// of the next.
	NextCursor string `json:"next_cursor,omitempty"`
}

// ExecList lists the executions as of the request's revision, oldest
// started first: one page (Limit, else commands.DefaultPage; every one
// with All) from the Cursor on, with the count of all of them and the
// cursor of the next page.
// Errors: InvalidInput for a limit outside 1 to commands.MaxLimit or a
// cursor awr did not give.
func (p *Project) ExecList(ctx context.Context, req ExecListRequest) (*ExecList, error) {
	limit, after, err := idPage("exec list", req.Limit, req.All, req.Cursor)
	if err != nil {
		return nil, err
	}
	out := &ExecList{Executions: []ExecutionView{}}
	err = p.read(ctx, req.Read, func(r *events.Reader, rev, _ int64) error {
		out.ProjectRevision = rev
		total, err := projections.ExecutionCountAt(r.Conn, rev, req.Work, req.Session)
		if err != nil {
			return err
		}
		out.ExecutionsTotal = total
		pg := projections.ExecutionPage{Work: req.Work, Session: req.Session, After: after}
		if limit > 0 {
			pg.Limit = limit + 1 // one more says whether a page follows
		}
		err = projections.ExecutionsPageAt(r.Conn, rev, pg, func(x projections.Execution) error {
			if limit > 0 && len(out.Executions) == limit {
				out.NextCursor = cursor.EncodeID(out.Executions[limit-1].ID)
				return nil
			}
			v, err := exec.ViewAt(r.Conn, r.Head, rev, &x)
			if err != nil {
				return err
			}
			out.Executions = append(out.Executions, v)
			return nil
		})
		if errors.Is(err, projections.ErrUnknownCursor) {
			return fault.New(fault.InvalidInput, "exec list: --cursor %q names no execution of this project", req.Cursor).
				With("flag", "--cursor").WithHint("awr exec list")
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
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
		out.Execution, err = exec.ViewAt(r.Conn, r.Head, rev, x)
		return err
	})
	if err != nil {
		return nil, err
	}
	out.Next = exec.Next(out.Execution)
	return out, nil
}
