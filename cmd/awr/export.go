package main

import (
	"fmt"
	"io"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
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
