package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/awr-dev/awr/internal/fault"
)

type mcpCmd struct {
	LogLevel string `name:"log-level" help:"Least severe log level written to stderr." enum:"debug,info,warn,error" default:"info" placeholder:"LEVEL"`
}

// Run serves the MCP tools on stdio by becoming awr-mcp: the process is
// replaced (execve), so the host's pipes, signals and process id are the
// server's own. The MCP SDK lives only in awr-mcp: linked into awr, its
// packages' initialisation cost every awr call 14% of its start-up
// (docs/notes/benchmarks.md, "The MCP SDK out of the CLI").
func (c *mcpCmd) Run(app *App) error {
	p, err := app.project()
	if err != nil {
		return err
	}
	bin, err := awrMCPBinary()
	if err != nil {
		return err
	}
	argv := []string{bin, "--project", p.Dir(), "--timeout", app.timeout.String(), "--log-level", c.LogLevel}
	if err := syscall.Exec(bin, argv, os.Environ()); err != nil {
		return fault.Wrap(fault.Storage, err, "awr mcp: start %s", bin)
	}
	return nil
}

// awrMCPBinary finds awr-mcp: beside the running awr (both install into
// one directory), else on PATH.
func awrMCPBinary() (string, error) {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "awr-mcp")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath("awr-mcp"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs, nil
		}
	}
	where := "the directory of awr"
	if exe, err := os.Executable(); err == nil {
		where = filepath.Dir(exe)
	}
	return "", fault.New(fault.NotFound, "awr mcp: the MCP server, awr-mcp, is neither in %s nor on PATH; install it: CGO_ENABLED=0 go install -trimpath github.com/awr-dev/awr/cmd/awr-mcp@latest", where).
		With("looked_in", where)
}
