package main

import (
	"fmt"
	"io"

	"github.com/awr-dev/awr/internal/project"
)

type importCmd struct {
	project.ImportRequest
}

// Run imports a log into an empty project.
func (c *importCmd) Run(app *App) error {
	p, err := app.project()
	if err != nil {
		return err
	}
	res, err := p.Import(app.Ctx, c.ImportRequest, app.Stdin)
	if err != nil {
		return err
	}
	return app.render(res, func(w io.Writer) {
		fmt.Fprintf(w, "imported %d events, chain verified (project_revision %d, head hash %s)\n", res.Events, res.ProjectRevision, res.HeadHash)
		if a := res.Anchors; a != nil && a.Latest != nil {
			fmt.Fprintf(w, "anchors: %d held (%s), the latest at seq %d (%s)\n", a.Checked, a.Source, a.Latest.Seq, a.Latest.Where)
		}
		fmt.Fprintln(w, "next: awr status")
	})
}
