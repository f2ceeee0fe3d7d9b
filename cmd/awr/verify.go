package main

import (
	"fmt"
	"io"

	"github.com/awr-dev/awr/internal/project"
)

type verifyCmd struct {
	project.VerifyRequest
}

// Run verifies the log and projections.
func (c *verifyCmd) Run(app *App) error {
	return call(app, (*project.Project).Verify, c.VerifyRequest, func(w io.Writer, res *project.VerifyResult) {
		for _, c := range res.Checks {
			mark := "ok  "
			if !c.OK {
				mark = "FAIL"
			}
			fmt.Fprintf(w, "%s %-32s %s\n", mark, c.Name, c.Detail)
		}
		if res.OK {
			// What a pass proves: without an anchor, only that the chain is
			// self-consistent (res.Verdict says so, and how to do better).
			fmt.Fprintf(w, "%s\n  project_revision %d, head hash %s\n", res.Verdict, res.ProjectRevision, res.HeadHash)
		}
	})
}
