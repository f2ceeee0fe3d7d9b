package main

import (
	"fmt"
	"io"

	"github.com/awr-dev/awr/internal/project"
)

type auditCmd struct {
	project.AuditRequest
}

// Run writes the chain-of-custody report: the rendering itself on stdout
// (byte for byte, never rewritten), or with --output the file's path;
// --json gives the report as data. A broken chain prints the report (which
// says so) and then fails with VerifyFailed.
func (c *auditCmd) Run(app *App) error {
	p, err := app.project()
	if err != nil {
		return err
	}
	res, err := p.Audit(app.Ctx, c.AuditRequest)
	if res == nil {
		return err
	}
	if !app.JSON && res.Output == "" {
		if _, werr := io.WriteString(app.Stdout, res.Text); werr != nil {
			return werr
		}
		return err
	}
	if rerr := app.render(res, func(w io.Writer) { fmt.Fprintln(w, res.Output) }); rerr != nil {
		return rerr
	}
	return err
}
