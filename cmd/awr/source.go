package main

import (
	"fmt"
	"io"

	"github.com/awr-dev/awr/internal/project"
)

type sourceCmd struct {
	Add     sourceAddCmd     `cmd:"" help:"Add a file of the project to the manifest and index it."`
	Reindex sourceReindexCmd `cmd:"" help:"Index the sources whose content changed since they were last indexed."`
	List    sourceListCmd    `cmd:"" help:"List the sources with adapter, hash, revision indexed and freshness."`
}

type sourceReindexCmd struct {
	project.SourceReindexRequest
}

// Run reads every manifest source and appends source_indexed for each one
// that changed, in one transaction.
func (c *sourceReindexCmd) Run(app *App) error {
	return call(app, (*project.Project).SourceReindex, c.SourceReindexRequest, func(w io.Writer, res *project.ReindexResult) {
		for _, s := range res.IndexSourcesResult.Indexed {
			fmt.Fprintf(w, "indexed   %s (seq %d)\n", project.SafeLine(s.Path), s.Seq)
		}
		for _, p := range res.IndexSourcesResult.Unchanged {
			fmt.Fprintf(w, "unchanged %s\n", project.SafeLine(p))
		}
		for _, p := range res.IndexSourcesResult.Removed {
			fmt.Fprintf(w, "removed   %s (no longer in the manifest)\n", project.SafeLine(p))
		}
		for _, p := range res.Missing {
			fmt.Fprintf(w, "MISSING   %s (in the manifest, not on disk)\n", project.SafeLine(p))
		}
		fmt.Fprintf(w, "project_revision %d\n", res.IndexSourcesResult.ProjectRevision)
	})
}

type sourceListCmd struct {
	project.SourceListRequest
}

// Run lists the sources.
func (c *sourceListCmd) Run(app *App) error {
	return call(app, (*project.Project).SourceList, c.SourceListRequest, func(w io.Writer, res *project.SourcesResult) {
		tw := newTable(w)
		fmt.Fprintln(tw, "PATH\tADAPTER\tROLE\tITEMS\tISSUES\tINDEXED AT REV\tFRESHNESS")
		for _, s := range res.Sources {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\n", project.SafeLine(s.Path), s.Adapter, s.Role, s.Items, s.Issues, s.RevisionIndexed, s.Freshness)
		}
		tw.Flush()
	})
}

type sourceAddCmd struct {
	project.SourceAddRequest
}

// Run adds a source to the manifest and indexes it.
func (c *sourceAddCmd) Run(app *App) error {
	return call(app, (*project.Project).SourceAdd, c.SourceAddRequest, func(w io.Writer, res *project.SourceAddResult) {
		fmt.Fprintf(w, "added %s (%s, %s) to the manifest and indexed it: %d items (project_revision %d)\nnext: awr intake inspect\n", project.SafeLine(res.Source.Path), res.Source.Adapter, res.Source.Role, res.Items, res.ProjectRevision)
	})
}
