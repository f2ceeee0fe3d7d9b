package main

import (
	"fmt"
	"io"

	"github.com/awr-dev/awr/demo"
)

type demoCmd struct {
	Dir string `help:"Run in this (empty) directory and keep the project afterwards." type:"path" placeholder:"DIR"`
}

// Run runs the scripted handoff.
func (c *demoCmd) Run(app *App) error {
	opts := demo.Options{Dir: c.Dir, Now: app.Now}
	if !app.JSON {
		opts.Out = app.Stdout
	}
	rep, err := demo.Run(app.Ctx, opts)
	if err != nil {
		return err
	}
	return app.render(rep, func(w io.Writer) {
		fmt.Fprintf(w, "\nhandoff complete: project_revision %d, verified %v, re-import identical %v\n", rep.ProjectRevision, rep.Verified, rep.ImportMatches)
	})
}
