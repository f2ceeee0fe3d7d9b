package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/awr-dev/awr/internal/project"
)

type doctorCmd struct {
	Check  doctorCheckCmd  `cmd:"" default:"1" help:"Look for what keeps the project from continuing cleanly (the default; writes nothing)."`
	Repair doctorRepairCmd `cmd:"" help:"Write the event that repairs one finding, with a reason."`
}

type doctorCheckCmd struct {
	project.DoctorRequest
}

// Run reports the doctor's findings.
func (c *doctorCheckCmd) Run(app *App) error {
	return call(app, (*project.Project).Doctor, c.DoctorRequest, func(w io.Writer, r *project.DoctorResult) {
		if st := r.Store; st != nil {
			fmt.Fprintf(w, "store: %s, PostgreSQL %s, round trip %d ms, shared log at %d, this cache was %d behind, clock %+d ms from the server's\n",
				st.Shared, st.ServerVersion, st.RoundTripMs, st.SharedRevision, st.CacheLag, st.ClockOffsetMs)
			if st.MovedTo != "" {
				fmt.Fprintf(w, "store: fenced, the log moved to %s\n", st.MovedTo)
			}
		}
		defer func() {
			for _, h := range r.Hooks {
				ran := "none ran here yet"
				if h.LastRanAt != "" {
					ran = "last ran " + h.LastRanAt + " (" + h.LastEvent + ")"
				}
				if h.NotAnswered > 0 {
					ran += fmt.Sprintf("; %d not answered (.awr/hooks.log)", h.NotAnswered)
				}
				fmt.Fprintf(w, "hooks: %s: %s; installed in %s\n", h.Client, ran, strings.Join(h.Installed, ", "))
			}
		}()
		if len(r.Findings) == 0 {
			fmt.Fprintf(w, "doctor: nothing to repair (project_revision %d)\n", r.ProjectRevision)
			return
		}
		fmt.Fprintf(w, "doctor: %d error(s), %d warning(s), %d note(s) (project_revision %d)\n", r.Counts[project.SeverityError], r.Counts[project.SeverityWarning], r.Counts[project.SeverityInfo], r.ProjectRevision)
		for _, f := range r.Findings {
			fmt.Fprintf(w, "  %-7s %-20s %s\n", f.Severity, f.Code, project.SafeText(f.Message))
			fmt.Fprintf(w, "  %-7s %-20s repair: %s\n", "", "", f.Repair)
		}
		if len(r.NotListed) > 0 {
			codes := slices.Sorted(maps.Keys(r.NotListed))
			var more []string
			for _, c := range codes {
				more = append(more, fmt.Sprintf("%d %s", r.NotListed[c], c))
			}
			fmt.Fprintf(w, "not listed: %s (every finding: awr doctor --all)\n", strings.Join(more, ", "))
		}
		fmt.Fprintf(w, "next: %s\n", r.Findings[0].Repair)
	})
}

type doctorRepairCmd struct {
	ExpireClaim      doctorExpireClaimCmd      `cmd:"" name:"expire-claim" help:"Release a claim no live agent will release (claim_released, reason repaired)."`
	EndSession       doctorEndSessionCmd       `cmd:"" name:"end-session" help:"End a stale session as abandoned (session_ended)."`
	AbandonExecution doctorAbandonExecutionCmd `cmd:"" name:"abandon-execution" help:"Record the finish of an execution whose process died (execution_finished, exit -1)."`
}

type doctorExpireClaimCmd struct {
	project.RepairRequest
}

// Run releases a claim.
func (c *doctorExpireClaimCmd) Run(app *App) error {
	return call(app, (*project.Project).DoctorExpireClaim, c.RepairRequest, printRepair)
}

type doctorEndSessionCmd struct {
	project.RepairRequest
}

// Run ends a stale session.
func (c *doctorEndSessionCmd) Run(app *App) error {
	return call(app, (*project.Project).DoctorEndSession, c.RepairRequest, printRepair)
}

type doctorAbandonExecutionCmd struct {
	project.RepairRequest
}

// Run abandons an execution.
func (c *doctorAbandonExecutionCmd) Run(app *App) error {
	return call(app, (*project.Project).DoctorAbandonExecution, c.RepairRequest, printRepair)
}

func printRepair(w io.Writer, r *project.RepairResult) {
	fmt.Fprintf(w, "repaired %s: %s %s at seq %d: %s\n", r.ID, r.Repair, r.Kind, r.Seq, project.SafeText(r.Reason))
	fmt.Fprintln(w, "next: awr doctor")
}
