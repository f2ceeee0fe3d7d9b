package main

import (
	"fmt"
	"io"

	"github.com/awr-dev/awr/internal/project"
)

type contextCmd struct {
	Compile contextCompileCmd `cmd:"" help:"Compile the bounded context packet for a work item (prints the packet)."`
	Hygiene contextHygieneCmd `cmd:"" help:"List what deserves pruning, each item for evidence quoted (a later item answering it, a commit or a ticked register item closing a loop, its source changed after it, a duplicate) and checkpoints off the current history, with the command that retires it (read-only)."`
	Confirm contextConfirmCmd `cmd:"" help:"Record that a loop, decision, fact or hypothesis still holds: hygiene stops flagging it for the evidence seen so far."`
}

type contextConfirmCmd struct {
	project.ContextConfirmRequest
}

// Run records a confirmation.
func (c *contextConfirmCmd) Run(app *App) error {
	return call(app, (*project.Project).ContextConfirm, c.ContextConfirmRequest, func(w io.Writer, res *project.ContextConfirmResult) {
		fmt.Fprintf(w, "confirmed %s %s of %s at seq %d: %s\n", res.Item.Kind, res.Item.ID, res.Item.Work, res.Seq, res.Item.Text)
		fmt.Fprintf(w, "next: awr context hygiene --work %s\n", res.Item.Work)
	})
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
			if f.Confirm != "" {
				fmt.Fprintf(w, "  still holds: %s\n", f.Confirm)
			}
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
