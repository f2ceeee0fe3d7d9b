// Command awr-mcp serves awr's tools to an agent host over the Model
// Context Protocol on stdio: `awr-mcp --project PATH`. It is the same
// server as `awr mcp`. Stdout carries only protocol messages; logs go to
// stderr. With `--listen ADDR --registry FILE` it is instead one service
// shared by several clients over Streamable HTTP, serving the projects a
// registry lists to the clients it names, each with a bearer token and
// read or write grants.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/alecthomas/kong"
	"github.com/awr-dev/awr/internal/buildinfo"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/serve/mcpserver"
)

// version is set with -ldflags "-X main.version=..." by release builds.
var version = ""

func main() {
	residentGC()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// residentGC sets the garbage collector for a long-lived server whose
// live heap is small and whose every answer allocates several times it:
// a collection every 400% of growth rather than 100%, under a soft
// limit of 512 MiB (GOGC and GOMEMLIMIT, when set, win). Measured
// through a warm awr-mcp on the 150-item project with 10k events, the
// server's CPU per status call fell by a fifth to a third
// (docs/notes/benchmarks.md, "Beside beads and the resident path").
func residentGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(512 << 20)
	}
}

// flags is awr-mcp's command line, in the same style as awr's.
type flags struct {
	Project  string        `help:"Project directory (default: the nearest directory from here up that holds .awr/, as git finds .git; else the current directory)." env:"AWR_PROJECT" placeholder:"PATH"`
	Timeout  time.Duration `help:"How long a write waits for a busy project database." default:"30s"`
	LogLevel string        `name:"log-level" help:"Least severe log level written to stderr." enum:"debug,info,warn,error" default:"info"`
	Version  bool          `help:"Print the version and exit."`
	Listen   string        `help:"Serve the registry's projects over MCP Streamable HTTP at http://ADDR/mcp instead of one project on stdio (with --registry)." placeholder:"ADDR"`
	Registry string        `help:"The shared service's registry (TOML): projects, clients with their token's environment variable and grants, allowed hosts and origins (with --listen)." placeholder:"FILE" type:"path"`
}

type exitCode int

func run(args []string, stdout, stderr io.Writer) (code int) {
	var c flags
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(exitCode)
			if !ok {
				panic(r)
			}
			code = int(e)
		}
	}()
	parser, err := kong.New(&c,
		kong.Name("awr-mcp"),
		kong.Description("awr-mcp serves awr's tools, resources and prompts to an agent host over the Model Context Protocol on stdio (the same server as awr mcp), or, with --listen and --registry, the tools of several projects to the clients of a registry over Streamable HTTP. Stdout carries only protocol messages; logs go to stderr."),
		kong.Writers(stdout, stderr),
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.Exit(func(code int) { panic(exitCode(code)) }),
	)
	if err != nil {
		fmt.Fprintln(stderr, "awr-mcp:", err)
		return 2
	}
	if _, err := parser.Parse(args); err != nil {
		fmt.Fprintf(stderr, "awr-mcp: %s (Usage)\n  next: awr-mcp --help\n", err)
		return 2
	}
	if c.Version {
		fmt.Fprintf(stdout, "awr-mcp %s\n", buildinfo.Version(version))
		return 0
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.LogLevel)); err != nil {
		fmt.Fprintf(stderr, "awr-mcp: --log-level %s: %v\n", c.LogLevel, err)
		return 2
	}
	if (c.Listen == "") != (c.Registry == "") {
		fmt.Fprintf(stderr, "awr-mcp: --listen and --registry go together: the shared service needs both (Usage)\n  next: awr-mcp --help\n")
		return 2
	}
	if c.Listen != "" && c.Project != "" && os.Getenv("AWR_PROJECT") != c.Project {
		fmt.Fprintf(stderr, "awr-mcp: --project serves one project on stdio; the shared service serves the registry's projects (Usage)\n  next: awr-mcp --help\n")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl}))
	if c.Listen != "" {
		return serveShared(ctx, c, stderr, logger)
	}
	// An empty project is found as the CLI finds it (project.Open).
	err = mcpserver.ServeStdio(ctx, mcpserver.Options{Project: c.Project, Version: buildinfo.Version(version), Timeout: c.Timeout, Logger: logger})
	if err != nil {
		logger.Error("awr-mcp stopped", "err", err)
		return 1
	}
	return 0
}

// serveShared runs the shared service until ctx is done: the registry is
// read, the address listened on and every project checked before
// anything is served; the URL is logged on stderr once it is.
func serveShared(ctx context.Context, c flags, stderr io.Writer, logger *slog.Logger) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "awr-mcp: %s (%s)\n", err, fault.As(err).Code)
		if h := fault.As(err).Hint; h != "" {
			fmt.Fprintf(stderr, "  next: %s\n", h)
		}
		return 1
	}
	reg, err := mcpserver.ReadRegistry(c.Registry, nil)
	if err != nil {
		return fail(err)
	}
	ln, err := mcpserver.Listen(c.Listen)
	if err != nil {
		return fail(err)
	}
	sh, err := mcpserver.NewShared(ctx, mcpserver.SharedOptions{Registry: reg, Version: buildinfo.Version(version), Timeout: c.Timeout, Logger: logger})
	if err != nil {
		ln.Close()
		return fail(err)
	}
	defer sh.Close()
	logger.Info("awr-mcp serving", "url", "http://"+ln.Addr().String()+mcpserver.SharedPath, "projects", len(reg.Projects), "clients", len(reg.Clients), "version", buildinfo.Version(version))
	if err := sh.Serve(ctx, ln, logger); err != nil {
		return fail(err)
	}
	return 0
}
