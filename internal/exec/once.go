package exec

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/repo"
	"github.com/awr-dev/awr/projections"
)

// Once runs req's command at most once per (work item of the session,
// key) (see commands.StartExecution): it records execution_started with
// the repository of dir and this process, runs the command in dir (Run,
// its output kept under root's .awr/executions/<id>/), and records
// execution_finished with HEAD after. A key already run runs nothing:
// the execution recorded then is the answer (replayed). It returns the
// execution and the revision that recorded it.
// Errors: those of commands.StartExecution, Run and
// commands.FinishExecution.
func Once(ctx context.Context, env *commands.Env, req commands.ExecRunRequest, root, dir string, stdin io.Reader, stdout, stderr io.Writer) (x *projections.Execution, replayed bool, rev int64, err error) {
	req.Repo = RepoOf(ctx, dir)
	req.Process = SelfProcess()
	req.Alive = ProcessAlive
	start, err := commands.StartExecution(ctx, env, req)
	if err != nil {
		return nil, false, 0, err
	}
	if !start.Run {
		return &start.Execution, true, start.ProjectRevision, nil
	}
	fin, err := Run(ctx, &start.Execution, root, dir, stdin, stdout, stderr)
	if err != nil {
		return nil, false, 0, err
	}
	fin.RepoAfter = RepoOf(ctx, dir)
	// The command ran: its finish is recorded even when awr was asked to
	// stop meanwhile.
	done, err := commands.FinishExecution(context.WithoutCancel(ctx), env, *fin)
	if err != nil {
		return nil, false, 0, err
	}
	return &done.Execution, false, done.ProjectRevision, nil
}

// RepoOf captures HEAD and the dirty fingerprint of dir's repository for
// an execution; a repository that cannot be read is recorded as
// unverifiable, with the reason.
func RepoOf(ctx context.Context, dir string) *events.ExecutionRepo {
	st, err := repo.Capture(ctx, dir)
	if err != nil {
		return &events.ExecutionRepo{Unverifiable: repo.ReasonOf(err)}
	}
	return &events.ExecutionRepo{Head: st.Head, Branch: st.Branch, Dirty: st.Dirty, DirtyFingerprint: st.DirtyFingerprint}
}

// Next is what to do about v, an execution whose finish was never
// recorded and that no run retried: check whether the command had its
// effect, then run it again with --retry-unknown. "" for any other.
func Next(v View) string {
	if v.State != Unknown || v.RetriedBy != "" {
		return ""
	}
	return fmt.Sprintf("check whether the command had its effect (output in %s), then: awr exec run --session SESSION --key %s --retry-unknown -- %s",
		v.OutputDir, v.Key, strings.Join(v.Argv, " "))
}
