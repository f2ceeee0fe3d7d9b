package main

import (
	"fmt"
	"io"

	"github.com/awr-dev/awr/internal/lab"
)

type demoCmd struct {
	Keep string `name:"keep" aliases:"dir" help:"Run in this existing, empty directory and keep the project there afterwards (--dir is the same flag); without it the demo uses a temporary project and removes it." type:"path" placeholder:"DIR"`
}

// Run runs the scripted handoff and says where its project is, or that
// it was removed.
func (c *demoCmd) Run(app *App) error {
	opts := lab.DemoOptions{Dir: c.Keep, Now: app.Now}
	if !app.JSON {
		opts.Out = app.Stdout
	}
	rep, err := lab.Demo(app.Ctx, opts)
	if err != nil {
		return err
	}
	return app.render(rep, func(w io.Writer) {
		fmt.Fprintf(w, "\nhandoff complete: project_revision %d, verified %v, re-import identical %v\n", rep.ProjectRevision, rep.Verified, rep.ImportMatches)
		if rep.Kept {
			fmt.Fprintf(w, "the project is kept in %s\nnext: awr status --project %s\n", rep.Project, rep.Project)
		} else {
			fmt.Fprintf(w, "the temporary project %s was removed; to keep one: awr demo --keep DIR (an empty directory)\n", rep.Project)
		}
	})
}
