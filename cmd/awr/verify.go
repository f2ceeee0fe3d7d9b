package main

import (
	"fmt"
	"io"

	"github.com/awr-dev/awr/replay"
)

type verifyCmd struct{}

// Run verifies the log and projections.
func (c *verifyCmd) Run(app *App) error {
	st, err := app.Store()
	if err != nil {
		return err
	}
	res, err := replay.Verify(app.Ctx, st, app.progress("verifying"))
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
