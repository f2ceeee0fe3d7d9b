// Command awr-mcp serves awr's tools to an agent host over the Model
// Context Protocol on stdio: `awr-mcp --project PATH`. It is the same
// server as `awr mcp`. Stdout carries only protocol messages; logs go to
// stderr.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/awr-dev/awr/buildinfo"
	"github.com/awr-dev/awr/mcpserver"
)

// version is set with -ldflags "-X main.version=..." by release builds.
var version = ""

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("awr-mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	project := fs.String("project", os.Getenv("AWR_PROJECT"), "project directory (default: $AWR_PROJECT, else the current directory)")
	showVersion := fs.Bool("version", false, "print the version and exit")
	timeout := fs.Duration("timeout", 30*time.Second, "how long a write waits for a busy project database")
	level := fs.String("log-level", "info", "least severe log level written to stderr: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "awr-mcp: unexpected argument %s\n", fs.Arg(0))
		return 2
	}
	if *showVersion {
		fmt.Fprintf(stdout, "awr-mcp %s\n", buildinfo.Version(version))
		return 0
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		fmt.Fprintf(stderr, "awr-mcp: --log-level %s: %v\n", *level, err)
		return 2
	}
	dir := *project
	if dir == "" {
		dir = "."
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl}))
	err := mcpserver.ServeStdio(ctx, mcpserver.Options{Project: dir, Version: buildinfo.Version(version), Timeout: *timeout, Logger: logger})
	if err != nil {
		logger.Error("awr-mcp stopped", "err", err)
		return 1
	}
	return 0
}
