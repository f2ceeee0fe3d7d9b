package main

import (
	"fmt"
	"io"

	"github.com/awr-dev/awr/internal/project"
)

type searchCmd struct {
	project.SearchRequest
}

// Run searches the project's texts.
func (c *searchCmd) Run(app *App) error {
	return call(app, (*project.Project).Search, c.SearchRequest, func(w io.Writer, res *project.SearchResult) {
		if len(res.Results) == 0 {
			fmt.Fprintf(w, "nothing found for %s (project_revision %d)\n", safe(res.Query), res.ProjectRevision)
			return
		}
		for _, h := range res.Results {
			fmt.Fprintf(w, "%-10s %-28s seq %-5d %s\n           %s\n", h.Kind, h.Ref, h.Seq, safe(h.Snippet), h.Show)
		}
	})
}
