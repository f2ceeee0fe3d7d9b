package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/awr-dev/awr/queries"
)

type readyCmd struct {
	atFlag
	All   bool `help:"Also list every other item with the reasons it is not ready."`
	Limit int  `help:"At most N ready items (0 for all)." placeholder:"N"`
}

// Run lists claimable work.
func (c *readyCmd) Run(app *App) error {
	st, err := app.Store()
	if err != nil {
		return err
	}
	rev, err := c.rev()
	if err != nil {
		return err
	}
	res, err := queries.Ready(app.Ctx, st, queries.At{Rev: rev, Now: app.Now()}, c.Limit, c.All)
	if err != nil {
		return err
	}
	return app.render(res, func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		if len(res.Ready) == 0 {
			fmt.Fprintf(tw, "no work is ready (project_revision %d)\n", res.ProjectRevision)
		} else {
			fmt.Fprintln(tw, "KEY\tPRIORITY\tTITLE\tNEXT ACTION\tSOURCE")
		}
		for _, it := range res.Ready {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s:%d\n", it.Key, it.Priority, it.Title, clip(it.NextAction, 60), it.Source.Path, it.Source.LineStart)
		}
		if res.ReadyTotal > len(res.Ready) {
			fmt.Fprintf(tw, "… %d ready in all\n", res.ReadyTotal)
		}
		if res.NotReady != nil && len(*res.NotReady) > 0 {
			fmt.Fprintln(tw, "\nNOT READY\tSTATUS\tWHY")
			for _, it := range *res.NotReady {
				var why []string
				for _, r := range it.Reasons {
					why = append(why, r.Message)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", it.Key, it.Status, strings.Join(why, "; "))
			}
		}
		tw.Flush()
		if len(res.Ready) > 0 {
			fmt.Fprintf(w, "next: awr session start --work %s --agent NAME --claim\n", res.Ready[0].Key)
		}
	})
}

type intakeCmd struct {
	Inspect intakeInspectCmd `cmd:"" help:"Report how organized the project is and what to do before work can start."`
}

type intakeInspectCmd struct {
	atFlag
}

// Run prints the organization report.
func (c *intakeInspectCmd) Run(app *App) error {
	dir, err := app.projectDir()
	if err != nil {
		return err
	}
	rev, err := c.rev()
	if err != nil {
		return err
	}
	st, err := app.Store()
	if err != nil {
		if !isNotFound(err) {
			return err
		}
		st = nil
	}
	res, err := queries.Intake(app.Ctx, st, dir, queries.At{Rev: rev, Now: app.Now()})
	if err != nil {
		return err
	}
	return app.render(res, func(w io.Writer) {
		fmt.Fprintf(w, "project_revision %d", res.ProjectRevision)
		printOrganization(w, res.Organization, 50)
		fmt.Fprintln(w, "\nactions:")
		for i, a := range res.Organization.Actions {
			fmt.Fprintf(w, "  %d. %s\n     done when: %s\n", i+1, a.Instruction, a.DoneWhen)
			if a.Command != "" {
				fmt.Fprintf(w, "     run: %s\n", a.Command)
			}
		}
		fmt.Fprintf(w, "next: %s\n", res.NextAction)
	})
}
