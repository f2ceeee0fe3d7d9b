package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/awr-dev/awr/project"
)

type recoveryCmd struct {
	Inspect recoveryInspectCmd `cmd:"" help:"Where a session stands and the exact command to run next (read-only)."`
	Verify  recoveryVerifyCmd  `cmd:"" help:"Prove a handoff was understood: check a successor's restatement against the recorded state and the repository."`
}

type recoveryVerifyCmd struct {
	project.RecoveryVerifyRequest
}

// Run checks a restatement; exit 1 (RestatementMismatch) unless verified.
func (c *recoveryVerifyCmd) Run(app *App) error {
	verify := func(p *project.Project, ctx context.Context, req project.RecoveryVerifyRequest) (*project.RestatementResult, error) {
		return p.RecoveryVerify(ctx, req, app.Stdin)
	}
	return call(app, verify, c.RecoveryVerifyRequest, func(w io.Writer, res *project.RestatementResult) {
		fmt.Fprintf(w, "restatement of session %s (checkpoint %s): %s (seq %d)\n", res.Session, res.Checkpoint, res.Verdict, res.Seq)
		for _, it := range res.Items {
			fmt.Fprintf(w, "%-12s %-16s expected %q, stated %q\n", it.Status, it.Field, it.Expected, it.Stated)
		}
	})
}

type recoveryInspectCmd struct {
	project.RecoveryInspectRequest
}

// Run reports recovery state.
func (c *recoveryInspectCmd) Run(app *App) error {
	return call(app, (*project.Project).RecoveryInspect, c.RecoveryInspectRequest, func(w io.Writer, rep *project.RecoveryReport) {
		s := rep.Session
		fmt.Fprintf(w, "session %s on %s: %s (project_revision %d)\n", s.ID, s.Work, strings.TrimSpace(s.Status+" "+s.Outcome), rep.ProjectRevision)
		if rep.Claim != nil {
			fmt.Fprintf(w, "claim: %s, fencing token %d, %s\n", rep.Claim.StateNow, rep.Claim.FencingToken, leaseEnd(rep.Claim.ExpiresAt, rep.Claim.StateNow == "expired"))
		} else {
			fmt.Fprintln(w, "claim: none")
		}
		if cp := rep.Checkpoint; cp != nil {
			from := ""
			if rep.Inherited {
				from = " (inherited from " + cp.SessionID + ")"
			}
			fmt.Fprintf(w, "last checkpoint %s%s: %s\nnext action: %s\n", cp.ID, from, safe(cp.Digest), safe(cp.NextAction))
			if rep.NextAction.DiffersFromSource {
				fmt.Fprintf(w, "the register's next action differs: %s\n", safe(rep.NextAction.Source))
			}
			for _, c := range rep.RegisterChanges {
				fmt.Fprintf(w, "changed in the register since the checkpoint: %s (seq %d): %q -> %q\n", c.Field, c.Seq, c.Then, c.Now)
			}
			printKnowledge(w, rep.Knowledge)
			printRepository(w, rep.Repository)
		} else {
			fmt.Fprintln(w, "no checkpoint recorded")
		}
		for _, b := range rep.Bindings {
			fmt.Fprintf(w, "bound: %s (%s)\n", b.ExternalSession, b.Client)
		}
		if rep.PredecessorID != "" {
			fmt.Fprintf(w, "predecessor: %s\n", rep.PredecessorID)
		}
		if rep.SuccessorID != "" {
			fmt.Fprintf(w, "successor: %s\n", rep.SuccessorID)
		}
		if n := len(rep.ChangedSince); n > 0 {
			var kinds []string
			for _, e := range rep.ChangedSince {
				kinds = append(kinds, fmt.Sprintf("%d %s", e.Seq, e.Kind))
			}
			fmt.Fprintf(w, "changed on %s since the checkpoint: %s\n", s.Work, strings.Join(kinds, ", "))
		}
		for _, x := range rep.Executions {
			fmt.Fprintf(w, "executed: %s %s%s (seq %d; awr exec show %s)\n", safe(x.Key), x.State, exitText(&x), x.StartedSeq, x.ID)
		}
		fmt.Fprintf(w, "next: %s\n", rep.NextStep)
	})
}

// printRepository writes one line on what the repository did since the
// checkpoint it was compared with.
func printRepository(w io.Writer, r *project.RepoCheck) {
	if r == nil {
		return
	}
	fmt.Fprintf(w, "repository since checkpoint %s: %s", r.Checkpoint, r.Status)
	switch {
	case r.Status == "unverifiable":
		fmt.Fprintf(w, " (%s)", safe(r.Reason))
	case r.HeadRewritten:
		fmt.Fprintf(w, "; HEAD %.12s is not an ancestor of HEAD %.12s", r.RecordedHead, r.CurrentHead)
	case r.HeadMoved:
		fmt.Fprintf(w, "; HEAD moved %.12s -> %.12s (%d commits)", r.RecordedHead, r.CurrentHead, r.CommitsBetween)
	}
	if r.WorktreeChanged {
		fmt.Fprint(w, "; worktree changed")
	}
	if n := len(r.FilesChanged); n > 0 {
		fmt.Fprintf(w, "; files changed: %d", n)
	}
	fmt.Fprintln(w)
}
