package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/awr-dev/awr/internal/project"
)

type intakeCmd struct {
	Inspect intakeInspectCmd `cmd:"" help:"Report how organized the project is and what to do before work can start."`
}

type intakeInspectCmd struct {
	project.IntakeInspectRequest
}

// Run prints the organization report.
func (c *intakeInspectCmd) Run(app *App) error {
	app.hints.commands = true
	return call(app, (*project.Project).IntakeInspect, c.IntakeInspectRequest, func(w io.Writer, res *project.IntakeResult) {
		fmt.Fprintf(w, "project_revision %d", res.ProjectRevision)
		printOrganization(w, res.Organization, 50)
		fmt.Fprintln(w, "\nactions:")
		for i, a := range res.Organization.Actions {
			fmt.Fprintf(w, "  %d. %s\n     done when: %s\n", i+1, project.SafeLine(a.Instruction), project.SafeLine(a.DoneWhen))
			if a.Command != "" {
				fmt.Fprintf(w, "     run: %s\n", project.SafeLine(a.Command))
			}
		}
		if len(res.AwaitingVerification) > 0 {
			fmt.Fprintf(w, "\nawaiting_verification (completed in the source, no work_verified in the log): %s\n", project.SafeLine(strings.Join(res.AwaitingVerification, ", ")))
		}
		fmt.Fprintf(w, "next: %s\n", res.NextAction)
	})
}
