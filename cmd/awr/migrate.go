package main

import (
	"fmt"
	"io"

	"github.com/awr-dev/awr/internal/project"
)

type migrateCmd struct {
	project.MigrateRequest
}

// Run moves the project's log and says what was checked equal.
func (c *migrateCmd) Run(app *App) error {
	return call(app, (*project.Project).Migrate, c.MigrateRequest, func(w io.Writer, res *project.MigrateResult) {
		where := res.Store.Path
		if res.Store.Shared != "" {
			where = res.Store.Shared + " (this machine's cache: " + res.Store.Path + ")"
		}
		if res.Status == "unchanged" {
			fmt.Fprintf(w, "unchanged: the log is already in %s, at project_revision %d\n", where, res.ProjectRevision)
		} else {
			fmt.Fprintf(w, "migrated from %s to %s: project_revision %d, head %.12s, %d events copied, %d request records kept\n", res.From, res.To, res.ProjectRevision, res.HeadHash, res.Copied, res.Requests)
			fmt.Fprintf(w, "verified: the same head hash, and %d projections folded from the log in its new place equal the old\n", len(res.Projections))
			fmt.Fprintf(w, "the log is in %s\n", where)
		}
		fmt.Fprintf(w, "next: %s\n", res.Next)
	})
}
