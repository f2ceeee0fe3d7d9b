// Package lab is the lab's door: the one way a front end reaches the
// measurements (internal/lab/bench) and the scripted handoff
// (internal/lab/demo), which write synthetic histories through the
// command code and so stand behind the door. Only cmd/awr may import it,
// for `awr bench` and `awr demo`; bench and demo are imported by nothing
// else (their own tests and commands aside). What it hands out carries no
// event store and no command environment: TestSingleDoor (cmd/awr) checks
// both.
package lab

import (
	"context"

	"github.com/awr-dev/awr/internal/lab/bench"
	"github.com/awr-dev/awr/internal/lab/demo"
	"github.com/awr-dev/awr/internal/project"
)

// The options and results of the lab's operations.
type (
	BenchFile       = bench.File
	GenerateOptions = bench.GenerateOptions
	GenerateResult  = bench.GenerateResult
	RunOptions      = bench.RunOptions
	RunResult       = bench.RunResult
	ContextOptions  = bench.ContextOptions
	ContextResult   = bench.ContextResult
	PeerOptions     = bench.PeerOptions
	PeerResult      = bench.PeerResult
	DemoOptions     = demo.Options
	DemoReport      = demo.Report
)

// MaxTasks is the most tasks `awr bench project` writes.
const MaxTasks = bench.MaxTasks

// WriteProject writes a synthetic project of n tasks into dir
// (bench.WriteProject).
func WriteProject(dir string, n int, seed int64) ([]BenchFile, error) {
	return bench.WriteProject(dir, n, seed)
}

// Generate appends a generated history to p's log through the command
// code (bench.Generate). Errors: those of opening the log and of
// bench.Generate.
func Generate(ctx context.Context, p *project.Project, opts GenerateOptions) (*GenerateResult, error) {
	st, err := p.EventLog(ctx)
	if err != nil {
		return nil, err
	}
	return bench.Generate(ctx, st, opts)
}

// Run measures awr on p (bench.Run).
func Run(ctx context.Context, p *project.Project, opts RunOptions) (*RunResult, error) {
	return bench.Run(ctx, p, opts)
}

// Context runs the context benchmark on its fixed 150-task project
// (bench.Context). Errors: those of bench.Context.
func Context(ctx context.Context, opts ContextOptions) (*ContextResult, error) {
	return bench.Context(ctx, opts)
}

// ComparePeer measures awr beside a peer (beads) on the same workloads
// (bench.ComparePeer). Errors: those of bench.ComparePeer.
func ComparePeer(ctx context.Context, opts PeerOptions) (*PeerResult, error) {
	return bench.ComparePeer(ctx, opts)
}

// Demo runs the scripted handoff (demo.Run).
func Demo(ctx context.Context, opts DemoOptions) (*DemoReport, error) {
	return demo.Run(ctx, opts)
}
