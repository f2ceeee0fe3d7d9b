package main

import (
	"fmt"
	"io"

	"github.com/awr-dev/awr/fault"
	"github.com/awr-dev/awr/project"
)

type exportCmd struct {
	project.ExportRequest
}

// Run exports the log.
func (c *exportCmd) Run(app *App) error {
	if c.Output == "" && app.JSON {
		return fault.New(fault.Usage, "export: --json needs --output FILE (stdout carries the JSONL)").WithHint("awr export --output FILE --json")
	}
	p, err := app.project()
	if err != nil {
		return err
	}
	res, err := p.Export(app.Ctx, c.ExportRequest, app.Stdout)
	if err != nil || c.Output == "" {
		return err
	}
	return app.render(res, func(w io.Writer) {
		fmt.Fprintf(w, "exported %d events to %s (head hash %s)\n", res.Events, c.Output, res.HeadHash)
	})
}

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
		fmt.Fprintln(w, "next: awr status")
	})
}
