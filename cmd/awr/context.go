package main

import (
	"fmt"
	"io"

	"github.com/awr-dev/awr/internal/project"
)

type contextCmd struct {
	Compile contextCompileCmd `cmd:"" help:"Compile the bounded context packet for a work item (prints the packet)."`
	Hygiene contextHygieneCmd `cmd:"" help:"List what deserves pruning (long-open loops, unconfirmed hypotheses, knowledge older than a source change, checkpoints off the current history), each with the command that retires it (read-only)."`
}

type contextHygieneCmd struct {
	project.HygieneRequest
}

// Run lists hygiene findings.
func (c *contextHygieneCmd) Run(app *App) error {
	app.hints.commands = true
	return call(app, (*project.Project).ContextHygiene, c.HygieneRequest, func(w io.Writer, res *project.HygieneReport) {
		if len(res.Findings) == 0 {
			fmt.Fprintf(w, "nothing to prune (project_revision %d, repository %s)\n", res.ProjectRevision, res.Repository)
			return
		}
		for _, f := range res.Findings {
			fmt.Fprintf(w, "%s %s %s: %s\n  %s\n", f.Work, f.ID, f.Kind, f.Reason, f.Command)
		}
	})
}

type contextCompileCmd struct {
	project.ContextCompileRequest
}

// Run compiles a context packet. Without --json it prints the packet; an
// incomplete packet is printed, marked, and exits 1.
func (c *contextCompileCmd) Run(app *App) error {
	shortLived()
	project.WarmTokenizer()
	return call(app, (*project.Project).ContextCompile, c.ContextCompileRequest, func(w io.Writer, res *project.CompileResult) { io.WriteString(w, res.WorkContext.RenderedContext) })
}
