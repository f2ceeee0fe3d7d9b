package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/lab"
	"github.com/awr-dev/awr/internal/project"
	"golang.org/x/term"
)

type benchCmd struct {
	Project  benchProjectCmd  `cmd:"" help:"Write a synthetic project (goals, rules, a YAML ledger, a Markdown plan) into DIR and initialize it."`
	Generate benchGenerateCmd `cmd:"" help:"Append a realistic multi-agent history to the project, through the command code, 1,000 commands per transaction."`
	Run      benchRunCmd      `cmd:"" help:"Measure latency, replay throughput and context economy on the project."`
	Context  benchContextCmd  `cmd:"" help:"Measure the context packets on a fixed 150-task project, after AWR's method: the bootstrap, the work contexts, compression, hard facts recalled, the packet over successive resumes."`
	Compare  benchCompareCmd  `cmd:"" help:"Build the same workload in awr and in a peer (beads: bd) at 150 and 10,000 items and time ready, show, claim, status, search and the import on every side, interleaved: awr as a CLI and through awr-mcp (stdio, HTTP), bd direct and through its daemon. With --peer postgres, the same project in the embedded file and in PostgreSQL (--store), beside the network's floor."`
}

type benchCompareCmd struct {
	Peer         string `help:"The peer to compare with: bd (beads), or postgres (the same project held in PostgreSQL, --store)." required:"" enum:"bd,postgres" placeholder:"NAME"`
	Store        string `help:"With --peer postgres: the database to write the twins into (postgres://USER@HOST:PORT/DB, no password; each run leaves a project of its own there, so name a scratch database)." placeholder:"URL"`
	PeerBin      string `name:"peer-bin" help:"The peer's binary (default: bd on PATH; when there is none, awr's sides are measured alone)." type:"path" placeholder:"PATH"`
	Tasks        []int  `help:"Work items of each workload, comma-separated; the first and the last are compared for scaling." default:"150,10000" sep:"," placeholder:"N,N"`
	Rounds       int    `help:"Timed rounds of each operation, every side once a round." default:"10" placeholder:"N"`
	ImportRounds int    `name:"import-rounds" help:"Timed imports of each workload on each side." default:"3" placeholder:"N"`
	Quick        bool   `help:"The short form: 20 and 100 items, 2 rounds, 1 import."`
	Dir          string `help:"Keep the workloads here (created) instead of a temporary directory." type:"path" placeholder:"DIR"`
}

// Run compares awr with the peer (lab.ComparePeer).
func (c *benchCompareCmd) Run(app *App) error {
	if c.Quick {
		c.Tasks, c.Rounds, c.ImportRounds = []int{20, 100}, 2, 1
	}
	if c.Rounds <= 0 || c.ImportRounds <= 0 {
		return fault.New(fault.Usage, "bench compare: --rounds %d --import-rounds %d: want positive numbers", c.Rounds, c.ImportRounds).
			With("flag", "--rounds").WithHint("awr bench compare --help")
	}
	for _, n := range c.Tasks {
		if n < 1 || n > lab.MaxTasks {
			return fault.New(fault.Usage, "bench compare: --tasks %d: want 1 to %d", n, lab.MaxTasks).With("flag", "--tasks").WithHint("awr bench compare --help")
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return fault.Wrap(fault.Internal, err, "bench compare: find the awr binary")
	}
	mcpExe, _ := awrMCPBinary() // none: the result says so
	var progress func(string)
	if f, ok := app.Stderr.(*os.File); ok && !app.JSON && isTerminal(f) {
		progress = func(name string) { fmt.Fprintf(f, "measuring %s\n", name) }
	}
	res, err := lab.ComparePeer(app.Ctx, lab.PeerOptions{Exe: exe, MCPExe: mcpExe, Peer: c.Peer, PeerBin: c.PeerBin, Store: c.Store, Sizes: c.Tasks,
		Rounds: c.Rounds, ImportRounds: c.ImportRounds, Dir: c.Dir, Progress: progress})
	if err != nil {
		return err
	}
	return app.render(res, func(w io.Writer) { printBenchCompare(w, res) })
}

// printBenchCompare prints a comparison: per workload the medians of
// every side and awr's ratios to bd's, then scaling and limited reads.
func printBenchCompare(w io.Writer, res *lab.PeerResult) {
	if res.Postgres != nil {
		printBenchStores(w, res)
		return
	}
	if res.PeerMissing != "" {
		fmt.Fprintf(w, "peer: %s\n", res.PeerMissing)
	} else {
		fmt.Fprintf(w, "peer: %s (%s)\n", res.PeerVersion, res.PeerBin)
	}
	fmt.Fprintf(w, "awr-mcp: %s\n", res.Resident)
	fmt.Fprintf(w, "load average %.2f %.2f %.2f before, %.2f %.2f %.2f after; %d rounds, interleaved; median wall time in ms\n",
		res.LoadBefore[0], res.LoadBefore[1], res.LoadBefore[2], res.LoadAfter[0], res.LoadAfter[1], res.LoadAfter[2], res.Rounds)
	sides := []string{"awr", "awr-mcp stdio", "awr-mcp http", "bd --no-daemon", "bd daemon"}
	for _, sz := range res.Sizes {
		same := "the same work"
		if !sz.Same {
			same = "NOT the same work"
		}
		fmt.Fprintf(w, "\n%d items, %d blocking dependencies: %d ready in awr; bd %d items, %d ready, %d open listed by bd ready (%s)\n",
			sz.Items, sz.Edges, sz.Ready, sz.PeerItems, sz.PeerReady, sz.PeerReadyListed, same)
		tw := newTable(w)
		fmt.Fprintf(tw, "op\t%s\tawr/direct\tawr/daemon\tstdio/daemon\thttp/daemon\n", strings.Join(sides, "\t"))
		for _, op := range sz.Ops {
			row := []string{op.Op}
			for _, s := range sides {
				v := "-"
				for _, m := range op.Sides {
					if m.Name == s {
						v = num(m.Median)
					}
				}
				row = append(row, v)
			}
			for _, pair := range [][2]string{{"awr", "bd --no-daemon"}, {"awr", "bd daemon"}, {"awr-mcp stdio", "bd daemon"}, {"awr-mcp http", "bd daemon"}} {
				v := "-"
				for _, r := range op.Ratios {
					if r.AWR == pair[0] && r.Peer == pair[1] {
						v = fmt.Sprintf("%.4g", r.Ratio)
					}
				}
				row = append(row, v)
			}
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		tw.Flush()
	}
	if len(res.Scaling) > 0 {
		fmt.Fprintf(w, "\nreads at the largest workload / at the smallest:\n")
		tw := newTable(w)
		for _, f := range res.Scaling {
			fmt.Fprintf(tw, "  %s\t%s\t%s / %s ms\t%.2fx\n", f.Op, f.Side, num(f.Of), num(f.Over), f.Ratio)
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "\nready --limit 10 / ready:\n")
	tw := newTable(w)
	for _, f := range res.Limited {
		fmt.Fprintf(tw, "  %d items\t%s\t%s / %s ms\t%.2fx\n", f.Items, f.Side, num(f.Of), num(f.Over), f.Ratio)
	}
	tw.Flush()
}

// printBenchStores prints a comparison of the stores: the floor, then
// per workload what each command adds on PostgreSQL, per path.
func printBenchStores(w io.Writer, res *lab.PeerResult) {
	pg := res.Postgres
	fmt.Fprintf(w, "store: %s (PostgreSQL %s)\n", pg.Store, pg.ServerVersion)
	fmt.Fprintf(w, "awr-mcp: %s\n", res.Resident)
	fmt.Fprintf(w, "load average %.2f %.2f %.2f before, %.2f %.2f %.2f after; %d rounds, interleaved; wall time in ms, p50 (p95)\n",
		res.LoadBefore[0], res.LoadBefore[1], res.LoadBefore[2], res.LoadAfter[0], res.LoadAfter[1], res.LoadAfter[2], res.Rounds)
	fmt.Fprintf(w, "floor, back to back: a round trip (SELECT 1 on a held connection) %s (%s); a write (a row appended, a head advanced) %s (%s); a new connection %s (%s)\n",
		num(pg.Floor.RoundTrip.Median), num(pg.Floor.RoundTrip.P95), num(pg.Floor.Write.Median), num(pg.Floor.Write.P95), num(pg.Floor.Connect.Median), num(pg.Floor.Connect.P95))
	for _, sz := range pg.Sizes {
		fmt.Fprintf(w, "\n%d items, %d events (PostgreSQL key %s)\n", sz.Items, sz.Events, sz.Key)
		fmt.Fprintf(w, "floor between the calls, timed as one more path of every op's rounds: a round trip %s (%s); a write %s (%s); a warm server's bound is its median in the op's rounds\n",
			num(sz.BetweenCalls.Median), num(sz.BetweenCalls.P95), num(sz.WriteBetweenCalls.Median), num(sz.WriteBetweenCalls.P95))
		tw := newTable(w)
		fmt.Fprintf(tw, "op\tpath\tfile\tpostgres\tadded\tround trips\tbound\n")
		for _, op := range sz.Ops {
			bound := "-"
			if op.Met != nil {
				bound = fmt.Sprintf("%s: %s", num(op.Bound), map[bool]string{true: "met", false: "not met"}[*op.Met])
			}
			fmt.Fprintf(tw, "%s\t%s\t%s (%s)\t%s (%s)\t%+.2f (%+.2f)\t%.1f\t%s\n", op.Op, op.Path, num(op.File.Median), num(op.File.P95),
				num(op.Postgres.Median), num(op.Postgres.P95), op.Added, op.AddedP95, op.RoundTrips, bound)
		}
		tw.Flush()
		fmt.Fprintf(w, "round trips per command on PostgreSQL (counted in process):\n")
		tw = newTable(w)
		for _, t := range sz.RoundTrips {
			fmt.Fprintf(tw, "  %s\tCLI: %d connection, %d round trips\twarm server: %d\n", t.Op, t.Connections, t.CLI, t.Resident)
		}
		tw.Flush()
	}
}

type benchContextCmd struct {
	Dir     string `name:"dir" help:"Write the benchmark's project here (created; must be empty if it exists) and keep it (default: a temporary directory, removed)." type:"path" placeholder:"DIR"`
	Budget  int    `help:"Default token budget of a packet (o200k_base); the hard facts are also checked at half of it." default:"5000" placeholder:"N"`
	Resumes int    `help:"Successive resumes of one task." default:"20" placeholder:"N"`
}

// Run measures the context packets (lab.Context).
func (c *benchContextCmd) Run(app *App) error {
	if c.Budget < 2 || c.Resumes < 1 {
		return fault.New(fault.Usage, "bench context: --budget %d --resumes %d: want a budget of 2 or more and 1 resume or more", c.Budget, c.Resumes).
			With("flag", "--budget").WithHint("awr bench context --budget 5000 --resumes 20")
	}
	project.WarmTokenizer()
	res, err := lab.Context(app.Ctx, lab.ContextOptions{Dir: c.Dir, Budget: c.Budget, Resumes: c.Resumes})
	if err != nil {
		return err
	}
	return app.render(res, func(w io.Writer) {
		fmt.Fprintf(w, "context benchmark: %d tasks in %d source files, %d tokens (%s)\n", res.Tasks, res.SourceFiles, res.SourceTokens, res.Tokenizer)
		fmt.Fprintf(w, "  bootstrap (L0, before choosing work): %d tokens (target <= %d)\n", res.Bootstrap, res.BootstrapMaxGoal)
		fmt.Fprintf(w, "  work context at budget %d: mean %d, largest %d tokens (%s) over %d packets (target <= %d)\n",
			res.Budget, res.MeanPacketTokens, res.MaxPacketTokens, res.MaxPacketWork, res.Packets, res.WorkContextTarget)
		fmt.Fprintf(w, "  compression (sources / mean packet): %.1fx\n", res.Compression)
		fmt.Fprintf(w, "  hard facts recalled: %d of %d at budget %d, %d of %d at %d, %d of %d at each packet's required part alone\n",
			res.Recalled, res.HardFacts, res.Budget, res.RecalledAtHalf, res.HardFacts, res.Budget/2, res.RecalledAtRequired, res.HardFacts)
		for _, m := range res.Missing {
			fmt.Fprintf(w, "    missing at %d: %s\n", res.Budget, m)
		}
		for _, m := range res.MissingAtHalf {
			fmt.Fprintf(w, "    missing at %d: %s\n", res.Budget/2, m)
		}
		fmt.Fprintf(w, "  %d resumes of %s: packet %v tokens (required part %v); stale next actions: %d\n",
			len(res.ResumeTokens), res.ResumeWork, res.ResumeTokens, res.ResumeRequired, res.StaleNextActions)
	})
}

// initBackdate is how far back `bench project` dates the log's first
// events, so that a generated history (about three simulated days per
// million events) lies in the past of the real clock.
const initBackdate = 30 * 24 * time.Hour

type benchProjectCmd struct {
	Dir    string `arg:"" help:"Directory to write (created; must be empty if it exists)." placeholder:"DIR"`
	Tasks  int    `help:"Number of tasks." default:"150" placeholder:"N"`
	Seed   int64  `help:"Seed: the same seed writes the same bytes." default:"1" placeholder:"S"`
	NoInit bool   `name:"no-init" help:"Only write the files; do not run awr init --accept."`
}

type benchFile struct {
	Path   string `json:"path"`
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
}

type benchProjectResult struct {
	Project         string      `json:"project"`
	Tasks           int         `json:"tasks"`
	Seed            int64       `json:"seed"`
	Files           []benchFile `json:"files"`
	Initialized     bool        `json:"initialized"`
	Sources         int         `json:"sources"`
	ProjectRevision int64       `json:"project_revision"`
	Next            string      `json:"next"`
}

// Run writes and initializes a synthetic project.
func (c *benchProjectCmd) Run(app *App) error {
	if c.Tasks < 1 || c.Tasks > lab.MaxTasks {
		return fault.New(fault.Usage, "bench project: --tasks %d: want 1 to %d", c.Tasks, lab.MaxTasks).With("flag", "--tasks").WithHint("awr bench project DIR --tasks 150")
	}
	dir, err := filepath.Abs(c.Dir)
	if err != nil {
		return fault.Wrap(fault.InvalidInput, err, "bench project: %s", c.Dir)
	}
	files, err := lab.WriteProject(dir, c.Tasks, c.Seed)
	if err != nil {
		return err
	}
	res := &benchProjectResult{Project: dir, Tasks: c.Tasks, Seed: c.Seed, Files: []benchFile{}}
	for _, f := range files {
		sum := sha256.Sum256(f.Content)
		res.Files = append(res.Files, benchFile{Path: f.Path, Bytes: len(f.Content), SHA256: hex.EncodeToString(sum[:])})
	}
	res.Next = "awr init --accept --project " + quoteArg(dir)
	if !c.NoInit {
		back := app.Now().Add(-initBackdate)
		p, err := project.Open(app.Ctx, dir, project.Options{Now: func() time.Time { return back }, LockTimeout: app.timeout, Version: Version()})
		if err != nil {
			return err
		}
		defer p.Close()
		acc, err := p.Init(app.Ctx, project.InitRequest{Accept: true})
		if err != nil {
			return err
		}
		res.Initialized, res.Sources, res.ProjectRevision = true, len(acc.Mapping), acc.ProjectRevision
		res.Next = "awr bench generate --project " + quoteArg(dir) + " --events 10000"
	}
	return app.render(res, func(w io.Writer) {
		fmt.Fprintf(w, "wrote %d tasks (seed %d) to %s:\n", res.Tasks, res.Seed, res.Project)
		tw := newTable(w)
		for _, f := range res.Files {
			fmt.Fprintf(tw, "  %s\t%d bytes\n", f.Path, f.Bytes)
		}
		tw.Flush()
		if res.Initialized {
			fmt.Fprintf(w, "initialized: %d sources indexed (project_revision %d)\n", res.Sources, res.ProjectRevision)
		}
		fmt.Fprintf(w, "next: %s\n", res.Next)
	})
}

// quoteArg quotes a path for a shell when it needs it.
func quoteArg(s string) string {
	if strings.ContainsAny(s, " \t'\"$`\\") {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return s
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

type benchGenerateCmd struct {
	Events int64 `help:"Number of events to append (the last command may append a few more)." default:"10000" placeholder:"N"`
	Agents int   `help:"Number of simulated agents." default:"8" placeholder:"A"`
	Seed   int64 `help:"Seed of the history." default:"1" placeholder:"S"`
}

type benchGenerateResult struct {
	EventsAppended  int64   `json:"events_appended"`
	Head            int64   `json:"head"`
	Seconds         float64 `json:"seconds"`
	EventsPerSecond float64 `json:"events_per_second"`
	Agents          int     `json:"agents"`
	Seed            int64   `json:"seed"`
	ProjectRevision int64   `json:"project_revision"`
}

// Run appends a generated history.
func (c *benchGenerateCmd) Run(app *App) error {
	if c.Events <= 0 {
		return fault.New(fault.Usage, "bench generate: --events %d: want a positive number", c.Events).With("flag", "--events").WithHint("awr bench generate --events 10000")
	}
	if c.Agents <= 0 {
		return fault.New(fault.Usage, "bench generate: --agents %d: want a positive number", c.Agents).With("flag", "--agents").WithHint("awr bench generate --agents 8")
	}
	p, err := project.Open(app.Ctx, app.Project, project.Options{Now: app.Now, LockTimeout: app.timeout, Progress: app.progress, Version: Version(), PoolSize: 1})
	if err != nil {
		return err
	}
	defer p.Close()
	t0 := time.Now()
	res, err := lab.Generate(app.Ctx, p, lab.GenerateOptions{Events: c.Events, Agents: c.Agents, Seed: c.Seed,
		Progress: app.progress("generating")})
	if err != nil {
		return err
	}
	secs := time.Since(t0).Seconds()
	out := &benchGenerateResult{EventsAppended: res.Appended, Head: res.Head, Seconds: round2(secs),
		EventsPerSecond: float64(int64(float64(res.Appended) / secs)), Agents: c.Agents, Seed: c.Seed, ProjectRevision: res.Head}
	return app.render(out, func(w io.Writer) {
		fmt.Fprintf(w, "appended %d events in %.2f s (%.0f events/s); project_revision %d\nnext: awr bench run\n",
			out.EventsAppended, out.Seconds, out.EventsPerSecond, out.Head)
	})
}

func round2(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }

type benchRunCmd struct {
	Count       int `help:"Repetitions of each latency measurement." default:"20" placeholder:"N"`
	ReplayCount int `name:"replay-count" help:"Full replays to time." default:"3" placeholder:"N"`
	Budget      int `help:"Token budget of the context packets (o200k_base)." default:"5000" placeholder:"N"`
	// Compare adds issue #17's targets, each measured as paired runs.
	Compare bool   `help:"Also measure every target of the speed issue (#17) as paired, interleaved runs, and print each against its bound."`
	Pairs   int    `help:"Paired runs per target ratio (with --compare)." default:"40" placeholder:"N"`
	Floor   string `help:"Hello-world Go binary to divide startup by (with --compare; default: built with go from PATH, cached per Go version)." type:"path" placeholder:"PATH"`
	// Baseline is a second project for the targets that divide two
	// histories (3: status and ready; 7: a checkpoint).
	Memory   bool   `help:"Also run replay, replay --verify, export, import (into a temporary project), bench generate (2,000 events, on a copy) and awr ui (every part of its page read) once each as a process, and print each one's time and peak resident memory."`
	Baseline string `help:"With --compare: a project of the same register with a shorter history (10k events for target 3, 1k for target 7); status, ready and a checkpoint here are measured over the same there." type:"path" placeholder:"DIR"`
}

// Run measures awr on the project.
func (c *benchRunCmd) Run(app *App) error {
	for _, f := range []struct {
		name string
		v    int
	}{{"--count", c.Count}, {"--replay-count", c.ReplayCount}, {"--budget", c.Budget}, {"--pairs", c.Pairs}} {
		if f.v <= 0 {
			return fault.New(fault.Usage, "bench run: %s %d: want a positive number", f.name, f.v).With("flag", f.name).WithHint("awr bench run --help")
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return fault.Wrap(fault.Internal, err, "bench run: find the awr binary")
	}
	p, err := app.project()
	if err != nil {
		return err
	}
	var progress func(string)
	if f, ok := app.Stderr.(*os.File); ok && !app.JSON && isTerminal(f) {
		progress = func(name string) { fmt.Fprintf(f, "measuring %s\n", name) }
	}
	var baseline *project.Project
	if c.Baseline != "" {
		if !c.Compare {
			return fault.New(fault.Usage, "bench run: --baseline %s needs --compare", c.Baseline).With("flag", "--baseline").
				WithHint("awr bench run --compare --baseline %s", c.Baseline)
		}
		if baseline, err = project.Open(app.Ctx, c.Baseline, app.options()); err != nil {
			return err
		}
		defer baseline.Close()
	}
	mcpExe, _ := awrMCPBinary() // none: the resident measurements say so
	res, err := lab.Run(app.Ctx, p, lab.RunOptions{Exe: exe, MCPExe: mcpExe, Count: c.Count, ReplayCount: c.ReplayCount, Budget: c.Budget, Progress: progress,
		Compare: c.Compare, Pairs: c.Pairs, Floor: c.Floor, Baseline: baseline, Memory: c.Memory})
	if err != nil {
		return err
	}
	return app.render(res, func(w io.Writer) { printBenchRun(w, res) })
}

func printBenchRun(w io.Writer, res *lab.RunResult) {
	fmt.Fprintf(w, "%s: %d tasks, %d events (early revision %d)\n\n", res.Project, res.Tasks, res.Events, res.EarlyRevision)
	width := len("measurement")
	for _, m := range res.Measurements {
		width = max(width, len(m.Name))
	}
	fmt.Fprintf(w, "%-*s  %-8s  %9s  %9s  %9s  %5s\n", width, "measurement", "unit", "min", "median", "p95", "count")
	for _, m := range res.Measurements {
		fmt.Fprintf(w, "%-*s  %-8s  %9s  %9s  %9s  %5d\n", width, m.Name, m.Unit, num(m.Min), num(m.Median), num(m.P95), m.Count)
	}
	if len(res.ResidentCPU) > 0 {
		fmt.Fprintf(w, "\nawr-mcp CPU per call (ms):\n")
		tw := newTable(w)
		for _, c := range res.ResidentCPU {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t(%d calls)\n", c.Tool, c.Mode, num(c.CPUms), c.Calls)
		}
		tw.Flush()
	}
	e := res.Context
	fmt.Fprintf(w, "\ncontext economy (o200k_base, budget %d):\n", e.Budget)
	fmt.Fprintf(w, "  reading every source file (%d files): %d tokens\n", e.SourceFiles, e.SourceTokens)
	fmt.Fprintf(w, "  largest packet of %d (%s): %d tokens (%.1f× fewer)\n", e.Packets, e.LargestPacketWork, e.LargestPacketTokens, e.Ratio)
	fmt.Fprintf(w, "  required facts preserved: %d of %d\n", e.FactsPresent, e.RequiredFacts)
	for _, m := range e.Missing {
		fmt.Fprintf(w, "  missing: %s\n", m)
	}
	if res.Memory != nil {
		fmt.Fprintf(w, "\nmemory (each job once, as a process; peak RSS = the process's ru_maxrss):\n")
		fmt.Fprintf(w, "%-*s  %9s  %13s\n", width, "job", "seconds", "peak RSS MiB")
		for _, f := range res.Memory {
			fmt.Fprintf(w, "%-*s  %9.2f  %13.1f\n", width, f.Name, f.Seconds, f.PeakRSSMiB)
		}
	}
	if res.Targets != nil {
		printTargets(w, res)
	}
}

// printTargets prints --compare's table: each target figure against its
// bound, with the per-pair distribution.
func printTargets(w io.Writer, res *lab.RunResult) {
	fmt.Fprintf(w, "\ntargets of issue #17 (paired, interleaved runs in this one run):\n")
	if f := res.Floor; f != nil {
		switch {
		case f.Path == "":
			fmt.Fprintf(w, "  floor: unavailable (%s)\n", f.Reason)
		case f.GoVersion != "":
			fmt.Fprintf(w, "  floor: %s (built with %s)\n", f.Path, f.GoVersion)
		default:
			fmt.Fprintf(w, "  floor: %s (%s)\n", f.Path, f.Source)
		}
	}
	tw := newTable(w)
	fmt.Fprintf(tw, "id\tfigure\ttarget\tmeasured\tmin\tmedian\tp95\tmet\n")
	opt := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return num(*v)
	}
	for _, t := range res.Targets {
		bound := "<= "
		if t.Bound == "min" {
			bound = ">= "
		}
		measured := opt(t.Measured)
		if t.MeasuredP95 != nil {
			measured += " (p95 " + num(*t.MeasuredP95) + ")"
		}
		met := "n/a"
		if t.Met != nil {
			met = map[bool]string{true: "yes", false: "NO"}[*t.Met]
		}
		id, unit := strconv.Itoa(t.ID), ""
		if t.Issue != 0 { // another issue's target: #44.2, #44.6
			id = fmt.Sprintf("#%d.%d", t.Issue, t.ID)
		}
		if t.Unit == "ms" {
			unit = " ms"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s%s%s\t%s\t%s\t%s\t%s\t%s\n", id, t.Name, bound, num(t.Target), unit, measured, opt(t.Min), opt(t.Median), opt(t.P95), met)
	}
	tw.Flush()
	for _, t := range res.Targets {
		if t.Measured == nil {
			id := strconv.Itoa(t.ID)
			if t.Issue != 0 {
				id = fmt.Sprintf("#%d.%d", t.Issue, t.ID)
			}
			fmt.Fprintf(w, "  %s %s: %s; measure with: %s\n", id, t.Name, t.Reason, t.Command)
		}
	}
}

// num prints a figure with two decimals, or none from 1000 up.
func num(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
