package main

import (
	"fmt"
	"io"

	"github.com/awr-dev/awr/project"
)

type verifyCmd struct {
	project.VerifyRequest
}

// Run verifies the log and projections.
func (c *verifyCmd) Run(app *App) error {
	p, err := app.project()
	if err != nil {
		return err
	}
	res, err := p.Verify(app.Ctx, c.VerifyRequest)
	if res == nil {
		return err
	}
	if rerr := app.render(res, func(w io.Writer) {
		for _, c := range res.Checks {
			mark := "ok  "
			if !c.OK {
				mark = "FAIL"
			}
			fmt.Fprintf(w, "%s %-32s %s\n", mark, c.Name, c.Detail)
		}
		if res.OK {
			fmt.Fprintf(w, "verified: project_revision %d, head hash %s\n", res.ProjectRevision, res.HeadHash)
		}
	}); rerr != nil {
		return rerr
	}
	return err
}
