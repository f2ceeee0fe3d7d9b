package main

import (
	"fmt"
	"io"

	"github.com/awr-dev/awr/internal/project"
)

type anchorCmd struct {
	project.AnchorRequest
}

// Run records the log's head outside the database.
func (c *anchorCmd) Run(app *App) error {
	return call(app, (*project.Project).Anchor, c.AnchorRequest, func(w io.Writer, res *project.AnchorResult) {
		switch res.To {
		case "git":
			fmt.Fprintf(w, "anchored seq %d (hash %s) as a git note (%s) on commit %s of %s\n", res.Seq, res.Hash, res.Ref, res.Commit, res.Repository)
		default:
			fmt.Fprintf(w, "anchored seq %d (hash %s) in %s\n", res.Seq, res.Hash, res.Where)
		}
		fmt.Fprintf(w, "  %s\n", res.Line)
		fmt.Fprintf(w, "next: %s\n", res.Next)
	})
}
