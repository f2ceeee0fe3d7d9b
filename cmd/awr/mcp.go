package main

import (
	"log/slog"

	"github.com/awr-dev/awr/mcpserver"
)

type mcpCmd struct {
	LogLevel slog.Level `name:"log-level" help:"Least severe log level written to stderr (debug, info, warn, error)." default:"info" placeholder:"LEVEL"`
}

// Run serves the MCP tools on stdio; logs go to stderr.
func (c *mcpCmd) Run(app *App) error {
	p, err := app.project()
	if err != nil {
		return err
	}
	dir := p.Dir()
	logger := slog.New(slog.NewTextHandler(app.Stderr, &slog.HandlerOptions{Level: c.LogLevel}))
	return mcpserver.ServeStdio(app.Ctx, mcpserver.Options{Project: dir, Version: Version(), Timeout: app.timeout, Now: app.Now, Logger: logger})
}
