package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/awr-dev/awr/project"
)

type recoveryCmd struct {
	Inspect recoveryInspectCmd `cmd:"" help:"Where a session stands and the exact command to run next (read-only)."`
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
			fmt.Fprintf(w, "last checkpoint %s%s: %s\nnext action: %s\n", cp.ID, from, cp.Digest, cp.NextAction)
			for _, l := range cp.OpenLoops {
				fmt.Fprintf(w, "open loop: %s\n", l)
			}
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
		fmt.Fprintf(w, "next: %s\n", rep.NextStep)
	})
}
