package main

import (
	"io"

	"github.com/awr-dev/awr/project"
)

type contextCmd struct {
	Compile contextCompileCmd `cmd:"" help:"Compile the bounded context packet for a work item (prints the packet)."`
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
