package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fault"
	"github.com/awr-dev/awr/intake"
	"github.com/awr-dev/awr/queries"
)

type sourceCmd struct {
	Add     sourceAddCmd     `cmd:"" help:"Add a file of the project to the manifest and index it."`
	Reindex sourceReindexCmd `cmd:"" help:"Index the sources whose content changed since they were last indexed."`
	List    sourceListCmd    `cmd:"" help:"List the sources with adapter, hash, revision indexed and freshness."`
}

type sourceReindexCmd struct {
	Force bool `help:"Index every source, changed or not."`
	writeFlags
}

// Run reads every manifest source and appends source_indexed for each one
// that changed, in one transaction.
func (c *sourceReindexCmd) Run(app *App) error {
	p, err := app.project()
	if err != nil {
		return err
	}
	res, err := p.Reindex(app.Ctx, c.Force, c.meta())
	if err != nil {
		return err
	}
	out := res.IndexSourcesResult
	return app.render(res, func(w io.Writer) {
		for _, s := range out.Indexed {
			fmt.Fprintf(w, "indexed   %s (seq %d)\n", s.Path, s.Seq)
		}
		for _, p := range out.Unchanged {
			fmt.Fprintf(w, "unchanged %s\n", p)
		}
		for _, p := range out.Removed {
			fmt.Fprintf(w, "removed   %s (no longer in the manifest)\n", p)
		}
		for _, p := range res.Missing {
			fmt.Fprintf(w, "MISSING   %s (in the manifest, not on disk)\n", p)
		}
		fmt.Fprintf(w, "project_revision %d\n", out.ProjectRevision)
	})
}

type sourceListCmd struct {
	atFlag
}

// Run lists the sources.
func (c *sourceListCmd) Run(app *App) error {
	st, err := app.Store()
	if err != nil {
		return err
	}
	dir, err := app.projectDir()
	if err != nil {
		return err
	}
	rev, err := c.rev()
	if err != nil {
		return err
	}
	res, err := queries.Sources(app.Ctx, st, dir, queries.At{Rev: rev, Now: app.Now()})
	if err != nil {
		return err
	}
	return app.render(res, func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "PATH\tADAPTER\tROLE\tITEMS\tISSUES\tINDEXED AT REV\tFRESHNESS")
		for _, s := range res.Sources {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\n", s.Path, s.Adapter, s.Role, s.Items, s.Issues, s.RevisionIndexed, s.Freshness)
		}
		tw.Flush()
	})
}

type sourceAddCmd struct {
	Path    string `arg:"" help:"Project-relative path of the file."`
	Adapter string `help:"Adapter (default: chosen by name and content)." placeholder:"NAME"`
	Role    string `help:"tasks, goals, plan or rules (default: chosen by name)." placeholder:"ROLE"`
}

// addResult is `awr source add`.
type addResult struct {
	Source          intake.ManifestSource `json:"source"`
	Indexed         *commands.IndexResult `json:"indexed"`
	ProjectRevision int64                 `json:"project_revision"`
}

// Run adds a source to the manifest and indexes it, in that order: the
// manifest changes only once the file has been read.
func (c *sourceAddCmd) Run(app *App) error {
	if _, err := app.Store(); err != nil {
		return err
	}
	dir, err := app.projectDir()
	if err != nil {
		return err
	}
	m, ms, err := intake.AddSource(dir, c.Path, c.Adapter, c.Role)
	if err != nil {
		return err
	}
	si, missing := intake.Read(dir, ms)
	if missing {
		return fault.New(fault.InvalidInput, "source add: %s is missing", ms.Path).With("path", ms.Path)
	}
	env, err := app.Env()
	if err != nil {
		return err
	}
	out, err := commands.IndexSources(app.Ctx, env, commands.IndexSourcesRequest{Sources: []events.SourceIndexed{si}})
	if err != nil {
		return err
	}
	if err := intake.WriteManifest(dir, m); err != nil {
		return err
	}
	res := &addResult{Source: ms, ProjectRevision: out.ProjectRevision}
	if len(out.Indexed) > 0 {
		res.Indexed = &out.Indexed[0]
	}
	return app.render(res, func(w io.Writer) {
		fmt.Fprintf(w, "added %s (%s, %s) to the manifest and indexed it: %d items (project_revision %d)\nnext: awr intake inspect\n", ms.Path, ms.Adapter, ms.Role, len(si.Items), out.ProjectRevision)
	})
}
