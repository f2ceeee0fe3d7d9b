package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/awr-dev/awr/internal/project"
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

// Run reports recovery state, each line worded for the state it reports:
// a released or moved claim names no lease, a session without a
// checkpoint lists its work's log as such, and what changed since a
// checkpoint is always said, nothing included.
func (c *recoveryInspectCmd) Run(app *App) error {
	return call(app, (*project.Project).RecoveryInspect, c.RecoveryInspectRequest, func(w io.Writer, rep *project.RecoveryReport) {
		s := rep.Session
		fmt.Fprintf(w, "session %s on %s: %s (project_revision %d)\n", s.ID, s.Work, strings.TrimSpace(s.Status+" "+s.Outcome), rep.ProjectRevision)
		fmt.Fprintf(w, "claim: %s\n", claimLine(rep))
		cp := rep.Checkpoint
		if cp != nil {
			from := ""
			if rep.Inherited {
				from = " (inherited from " + cp.SessionID + ")"
			}
			fmt.Fprintf(w, "last checkpoint %s%s: %s\nnext action: %s\n", cp.ID, from, safe(cp.Digest), safe(cp.NextAction))
			if rep.NextAction.DiffersFromSource {
				fmt.Fprintf(w, "the register's next action differs: %s\n", safe(rep.NextAction.Source))
			}
			for _, ch := range rep.RegisterChanges {
				fmt.Fprintf(w, "changed in the register since the checkpoint: %s (seq %d): %q -> %q\n", ch.Field, ch.Seq, ch.Then, ch.Now)
			}
			printKnowledge(w, rep.Knowledge)
			if k := rep.Knowledge; k != nil && rep.ClosedCount > len(k.Closed) {
				fmt.Fprintf(w, "closed since the checkpoint: the latest %d of %d (every close: awr log --work %s --kind checkpoint_recorded --since %d)\n", len(k.Closed), rep.ClosedCount, s.Work, k.Since)
			}
			if rep.Repository != nil {
				printRepository(w, rep.Repository)
			} else if c.At != nil {
				fmt.Fprintln(w, "repository: not compared at a past revision (--at)")
			}
		} else {
			fmt.Fprintf(w, "no checkpoint recorded on %s\n", s.Work)
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
		var kinds []string
		for _, e := range rep.ChangedSince {
			kinds = append(kinds, fmt.Sprintf("%d %s", e.Seq, e.Kind))
		}
		list := strings.Join(kinds, ", ")
		since := int64(0)
		if cp != nil {
			since = cp.Seq
		}
		if len(rep.ChangedSince) == project.RecoveryChangedLimit {
			list += fmt.Sprintf(" (the first %d; all: awr log --work %s --since %d)", project.RecoveryChangedLimit, s.Work, since)
		}
		switch {
		case cp == nil && len(kinds) > 0:
			fmt.Fprintf(w, "log of %s (no checkpoint to compare with): %s\n", s.Work, list)
		case cp != nil && len(kinds) > 0:
			fmt.Fprintf(w, "changed on %s since the checkpoint: %s\n", s.Work, list)
		case cp != nil:
			fmt.Fprintf(w, "nothing changed on %s since the checkpoint\n", s.Work)
		}
		for _, x := range rep.Executions {
			fmt.Fprintf(w, "executed: %s %s%s (seq %d; awr exec show %s)\n", safe(x.Key), x.State, exitText(&x), x.StartedSeq, x.ID)
		}
		if len(rep.MissingSources) > 0 {
			fmt.Fprintf(w, "sources unavailable: %s (in the manifest, not on disk): the packet is incomplete and a compile refuses\n", safe(strings.Join(rep.MissingSources, ", ")))
		} else if len(rep.StaleSources) > 0 {
			fmt.Fprintf(w, "sources changed since they were indexed: %s: the packet is incomplete and a compile refuses until a reindex\n", safe(strings.Join(rep.StaleSources, ", ")))
		}
		fmt.Fprintf(w, "next: %s\n", rep.NextStep)
	})
}

// claimLine says what the session's claim is, worded for its state: only
// a live or expired claim has a lease to speak of.
func claimLine(rep *project.RecoveryReport) string {
	cl := rep.Claim
	if cl == nil {
		return "none"
	}
	switch cl.StateNow {
	case "live":
		return fmt.Sprintf("live, fencing token %d, %s", cl.FencingToken, leaseEnd(cl.ExpiresAt, false))
	case "expired":
		return fmt.Sprintf("%s, fencing token %d", leaseEnd(cl.ExpiresAt, true), cl.FencingToken)
	case "moved":
		if rep.SuccessorID != "" {
			return fmt.Sprintf("moved to successor %s (fencing token %d here)", rep.SuccessorID, cl.FencingToken)
		}
		return fmt.Sprintf("moved (fencing token %d here)", cl.FencingToken)
	}
	why := ""
	if cl.ReleaseReason != "" {
		why = " (" + cl.ReleaseReason + ")"
	}
	return fmt.Sprintf("%s%s, fencing token %d", cl.StateNow, why, cl.FencingToken)
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
