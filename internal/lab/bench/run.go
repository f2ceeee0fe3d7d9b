package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"

	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/project"
	"github.com/awr-dev/awr/internal/workcontext"
	"github.com/awr-dev/awr/projections"
)

// RunOptions says what Run measures and how often.
type RunOptions struct {
	// Exe is the awr binary run as child processes (os.Executable).
	Exe string
	// MCPExe is awr-mcp, the resident server the per-call measurements
	// go through (on stdio and as the HTTP service); empty when it was
	// not found, and RunResult.Resident says so.
	MCPExe string
	// Count is the number of repetitions of each measurement (default 20).
	Count int
	// ReplayCount is the number of full replays (default 3).
	ReplayCount int
	// Budget is the token budget of the context packets (default 5000).
	Budget int
	// Progress, if set, is told the name of each measurement as it starts.
	Progress func(name string)
	// Compare also measures every figure of issue #17's targets (see
	// Target) as paired, interleaved runs, into RunResult.Targets.
	Compare bool
	// Pairs is the number of paired runs of each target ratio (default 40).
	Pairs int
	// Floor is a hello-world binary for the startup target; when empty,
	// one is built with `go` from PATH and cached in FloorCache.
	Floor      string
	FloorCache string
	// Memory also runs each long job (replay, replay --verify, export,
	// import, bench generate, awr ui) once as a child process and records
	// its time and peak RSS, into RunResult.Memory.
	Memory bool
	// Baseline, with Compare, is a project of the same register with a
	// shorter history: status and ready (target 3) and a session
	// checkpoint (target 7, as a process) are measured on p over it, as
	// paired runs. Run starts and ends a session of its own there too.
	Baseline *project.Project
}

// Measurement is the distribution of one measured operation.
type Measurement struct {
	Name   string  `json:"name"`
	Unit   string  `json:"unit"`
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	P95    float64 `json:"p95"`
	Count  int     `json:"count"`
}

// Economy compares reading a project's sources with reading one packet.
type Economy struct {
	// Budget is the token budget every packet was compiled at.
	Budget int `json:"budget"`
	// SourceFiles and SourceTokens: the manifest's files and the o200k_base
	// tokens it takes to read all of them.
	SourceFiles  int `json:"source_files"`
	SourceTokens int `json:"source_tokens"`
	// Packets is the number of work items compiled (all of them).
	Packets int `json:"packets"`
	// LargestPacketTokens and LargestPacketWork: the largest rendered packet.
	LargestPacketTokens int    `json:"largest_packet_tokens"`
	LargestPacketWork   string `json:"largest_packet_work"`
	// Ratio is SourceTokens / LargestPacketTokens.
	Ratio float64 `json:"ratio"`
	// RequiredFacts is, summed over every packet, what it must hold: the
	// item's status, acceptance criteria, next action, blocker, goal,
	// unresolved required dependencies and the hard rules in scope.
	// FactsPresent is how many it holds; Missing names the first few gaps.
	RequiredFacts int      `json:"required_facts"`
	FactsPresent  int      `json:"facts_present"`
	Missing       []string `json:"missing"`
}

// RunResult is the answer of `awr bench run`.
type RunResult struct {
	Project         string `json:"project"`
	ProjectRevision int64  `json:"project_revision"`
	// Events is the size of the log measured (its head before Run wrote
	// its own session and checkpoints).
	Events int64 `json:"events"`
	Tasks  int   `json:"tasks"`
	// EarlyRevision is the revision near the start that --at reads use:
	// 1,000 events after the first session started (or the head, if
	// sooner).
	EarlyRevision int64         `json:"early_revision"`
	Session       string        `json:"session"`
	Work          string        `json:"work"`
	Measurements  []Measurement `json:"measurements"`
	Context       Economy       `json:"context"`
	// Resident says how the per-call measurements through a warm awr-mcp
	// were taken, or why they were not.
	Resident string `json:"resident"`
	// ResidentCPU is awr-mcp's own CPU time per call of each tool and
	// mode (Linux: read from /proc), beside the wall times.
	ResidentCPU []ResidentCPU `json:"resident_cpu,omitempty"`
	// Targets and Floor are set by --compare (RunOptions.Compare) only.
	Targets []Target `json:"targets,omitempty"`
	Floor   *Floor   `json:"floor,omitempty"`
	// Memory is set by RunOptions.Memory only.
	Memory []MemoryFigure `json:"memory,omitempty"`
}

// ResidentCPU is the server's CPU time per call of one tool through
// awr-mcp: the mean over Calls calls.
type ResidentCPU struct {
	Tool  string  `json:"tool"`
	Mode  string  `json:"mode"`
	Calls int     `json:"calls"`
	CPUms float64 `json:"cpu_ms_per_call"`
}

// baseline is the shorter history of RunOptions.Baseline, as compare
// measures it.
type baseline struct {
	dir     string
	events  int64
	session string // Run's session there
	shared  bool   // its log is shared (PostgreSQL)
	proc    func(args ...string) func() error
}

// checkBaseline checks, before Run writes anything, that b holds the
// same register as the measured project (items), and reads its head.
// Errors: InvalidInput when the registers differ; any error of opening b.
func checkBaseline(ctx context.Context, b *project.Project, exe string, items []projections.WorkItem) (*baseline, error) {
	store, err := b.EventLog(ctx)
	if err != nil {
		return nil, err
	}
	var theirs []projections.WorkItem
	var head int64
	if err := store.Read(ctx, func(r *events.Reader) error {
		head = r.Head
		var err error
		theirs, err = projections.WorkItemsAt(r.Conn, r.Head, true)
		return err
	}); err != nil {
		return nil, err
	}
	keys := func(list []projections.WorkItem) []string {
		out := make([]string, len(list))
		for i, it := range list {
			out[i] = it.Key
		}
		sort.Strings(out)
		return out
	}
	if mine, other := keys(items), keys(theirs); !slices.Equal(mine, other) {
		return nil, fault.New(fault.InvalidInput, "bench run: --baseline %s holds another register (%d work items against this project's %d): the ratios of target 3 need the same one", b.Dir(), len(other), len(mine)).
			With("flag", "--baseline").WithHint("awr bench project BASELINE_DIR --tasks %d --seed 1", len(mine))
	}
	return &baseline{dir: b.Dir(), events: head, shared: store.Upstream() != nil, proc: func(args ...string) func() error {
		full := append([]string{"--project", b.Dir()}, args...)
		return func() error { return runChild(ctx, exe, full) }
	}}, nil
}

// start starts Run's session on the baseline (on its first ready item,
// with a claim, as on the measured project), ended by the func it
// returns.
func (bl *baseline) start(ctx context.Context, b *project.Project, items []projections.WorkItem) (func(), error) {
	start := project.SessionStartRequest{Work: items[0].Key, Agent: "bench-run", Provider: "bench", Model: "none"}
	one := 1
	ready, err := b.Ready(ctx, project.ReadyRequest{Limit: &one})
	if err != nil {
		return nil, err
	}
	if len(ready.Ready) > 0 {
		start.Work, start.Claim, start.TTLms = ready.Ready[0].Key, true, new(int64(3_600_000))
	}
	started, err := b.SessionStart(ctx, start)
	if err != nil {
		return nil, err
	}
	bl.session = started.Session.ID
	return func() {
		_, _ = b.SessionEnd(context.WithoutCancel(ctx), project.SessionEndRequest{SessionID: bl.session, Outcome: events.OutcomeIncomplete, Agent: "bench-run"})
	}, nil
}

// Run measures awr on the initialized project p: latency of a checkpoint
// append (a child process and in process), of `context compile`, `ready`,
// `status` and `recovery inspect` (child processes; the reads at the head
// and at a revision near the start), the process floor (`awr version`),
// replay throughput (in process: Store.Rebuild, every projection dropped
// and folded again from the whole log, as `awr replay` does before it
// checksums),
// and the context economy of the project (see Economy). To measure
// appends it starts a session named bench-run, records checkpoints in it
// and ends it, so the log grows by 2×Count+4 events (a session start,
// its claim, two checkpoints per count, the claim's release and the end).
//
// Errors: NotFound when the project has no work item or session history;
// InvalidInput when RunOptions.Baseline holds another register (checked
// before anything is written);
// InvalidInput for non-positive counts; any error of the commands or of a
// child process (with its stderr).
func Run(ctx context.Context, p *project.Project, opts RunOptions) (*RunResult, error) {
	store, err := p.EventLog(ctx)
	if err != nil {
		return nil, err
	}
	if opts.Count <= 0 {
		opts.Count = 20
	}
	if opts.ReplayCount <= 0 {
		opts.ReplayCount = 3
	}
	if opts.Budget <= 0 {
		opts.Budget = 5000
	}
	m := &measurer{ctx: ctx, p: p, store: store, opts: opts, res: &RunResult{Project: p.Dir(), Measurements: []Measurement{}}}
	if err := m.survey(); err != nil {
		return nil, err
	}
	var base *baseline
	if opts.Compare && opts.Baseline != nil {
		if base, err = checkBaseline(ctx, opts.Baseline, opts.Exe, m.items); err != nil {
			return nil, err
		}
	}
	if err := m.begin(); err != nil {
		return nil, err
	}
	ended := false
	defer func() {
		// A run that fails part way must not leave its session (and a
		// claim) open in the user's project.
		if !ended {
			_, _ = p.SessionEnd(context.WithoutCancel(ctx), project.SessionEndRequest{SessionID: m.sid, Outcome: events.OutcomeAbandoned,
				Reason: "bench run failed", Agent: "bench-run"})
		}
	}()
	if err := m.latencies(); err != nil {
		return nil, err
	}
	if err := m.resident(); err != nil {
		return nil, err
	}
	if opts.Compare {
		if err := m.targets(base); err != nil {
			return nil, err
		}
	}
	if _, err := p.SessionEnd(ctx, project.SessionEndRequest{SessionID: m.sid, Outcome: events.OutcomeIncomplete, Agent: "bench-run"}); err != nil {
		return nil, err
	}
	ended = true
	if err := m.replay(); err != nil {
		return nil, err
	}
	if opts.Memory {
		if err := m.memory(); err != nil {
			return nil, err
		}
	}
	if opts.Progress != nil {
		opts.Progress("context economy")
	}
	if m.res.Context, err = economy(ctx, p, m.items, opts.Budget); err != nil {
		return nil, err
	}
	if err := store.Read(ctx, func(r *events.Reader) error { m.res.ProjectRevision = r.Head; return nil }); err != nil {
		return nil, err
	}
	return m.res, nil
}

// measurer is one bench run: the project, what survey found in it, and
// the session the run appends to (sid, on work).
type measurer struct {
	ctx   context.Context
	p     *project.Project
	store *events.Store
	opts  RunOptions
	res   *RunResult
	items []projections.WorkItem
	// first is the project's first session, firstSeq where it started;
	// early the revision the --at reads are measured at.
	first     string
	firstSeq  int64
	early     string
	sid, work string
	// residentTargets are issue #44's per-call figures through awr-mcp,
	// added to the targets by --compare.
	residentTargets []Target
}

// survey reads the work items and the first session of the project.
// Errors: NotFound when it has no work item or no session history.
func (m *measurer) survey() error {
	if err := m.store.Read(m.ctx, func(r *events.Reader) error {
		m.res.Events = r.Head
		var err error
		if m.items, err = projections.WorkItemsAt(r.Conn, r.Head, true); err != nil {
			return err
		}
		// The first session starts right after the sources are indexed.
		return events.ScanEvents(r.Conn, 1, min(r.Head, 10_000), func(e *events.Event) error {
			if e.Kind != events.KindSessionStarted || m.first != "" {
				return nil
			}
			v, err := events.Decode(e)
			if err != nil {
				return err
			}
			m.first, m.firstSeq = v.(*events.SessionStarted).SessionID, e.Seq
			return nil
		})
	}); err != nil {
		return err
	}
	if len(m.items) == 0 {
		return fault.New(fault.NotFound, "bench run: the project has no work items").WithHint("awr bench project DIR")
	}
	if m.first == "" {
		return fault.New(fault.NotFound, "bench run: the project has no session history to measure").WithHint("awr bench generate --events 10000")
	}
	m.res.Tasks = len(m.items)
	m.res.EarlyRevision = min(m.res.Events, m.firstSeq+1000)
	m.early = strconv.FormatInt(m.res.EarlyRevision, 10)
	return nil
}

// begin starts the run's own session to append checkpoints to: on a
// ready item with a claim when there is one, else on the first item
// without.
func (m *measurer) begin() error {
	one := 1
	ready, err := m.p.Ready(m.ctx, project.ReadyRequest{Limit: &one})
	if err != nil {
		return err
	}
	start := project.SessionStartRequest{Work: m.items[0].Key, Agent: "bench-run", Provider: "bench", Model: "none"}
	if len(ready.Ready) > 0 {
		start.Work, start.Claim, start.TTLms = ready.Ready[0].Key, true, new(int64(3_600_000))
	}
	started, err := m.p.SessionStart(m.ctx, start)
	if err != nil {
		return err
	}
	m.sid, m.work = started.Session.ID, start.Work
	m.res.Session, m.res.Work = m.sid, m.work
	return nil
}

// proc is a run of the awr binary on the project.
func (m *measurer) proc(args ...string) func() error {
	full := append([]string{"--project", m.p.Dir()}, args...)
	return func() error { return runChild(m.ctx, m.opts.Exe, full) }
}

// timed runs fn count times and records its latencies as name.
func (m *measurer) timed(name string, count int, fn func() error) error {
	if m.opts.Progress != nil {
		m.opts.Progress(name)
	}
	var ms []float64
	for i := 0; i < count; i++ {
		t0 := time.Now()
		if err := fn(); err != nil {
			return fmt.Errorf("bench run: %s: %w", name, err)
		}
		ms = append(ms, float64(time.Since(t0).Microseconds())/1000)
	}
	m.res.Measurements = append(m.res.Measurements, summarize(name, "ms", ms))
	return nil
}

// latencies times each command of the run, Count times.
func (m *measurer) latencies() error {
	n := 0
	proc, early := m.proc, m.early
	steps := []struct {
		name string
		fn   func() error
	}{
		{"version (process floor)", proc("version", "--json")},
		{"checkpoint append (process)", func() error {
			n++
			return proc("session", "checkpoint", "--session", m.sid, "--agent", "bench-run", "--json",
				"--digest", fmt.Sprintf("Measured step %d of the benchmark run.", n), "--next-action", "Record the next measurement",
				"--open-loop", "Compare with the last published figures")()
		}},
		{"checkpoint append (in process)", func() error {
			n++
			_, err := m.p.SessionCheckpoint(m.ctx, project.SessionCheckpointRequest{SessionID: m.sid, Agent: "bench-run",
				Digest: fmt.Sprintf("Measured step %d of the benchmark run.", n), NextAction: "Record the next measurement",
				KnowledgeFlags: project.KnowledgeFlags{OpenLoops: []string{"Compare with the last published figures"}}})
			return err
		}},
		{"context compile (process)", proc("context", "compile", "--work", m.work, "--budget", strconv.Itoa(m.opts.Budget), "--json")},
		{"ready (process)", proc("ready", "--json")},
		{"ready --at " + early + " (process)", proc("ready", "--at", early, "--json")},
		{"status (process)", proc("status", "--json")},
		{"status --at " + early + " (process)", proc("status", "--at", early, "--json")},
		{"recovery inspect (process)", proc("recovery", "inspect", "--session", m.first, "--json")},
		{"recovery inspect --at " + early + " (process)", proc("recovery", "inspect", "--session", m.first, "--at", early, "--json")},
	}
	for _, s := range steps {
		if err := m.timed(s.name, m.opts.Count, s.fn); err != nil {
			return err
		}
	}
	return nil
}

// targets measures issue #17's targets as paired runs (--compare), with
// base's project where one divides two histories.
func (m *measurer) targets(base *baseline) error {
	opts := m.opts
	if opts.Pairs <= 0 {
		opts.Pairs = 40
	}
	if opts.FloorCache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			dir = os.TempDir()
		}
		opts.FloorCache = filepath.Join(dir, "awr", "bench-floor")
	}
	if base != nil {
		end, err := base.start(m.ctx, opts.Baseline, m.items)
		if err != nil {
			return err
		}
		defer end()
	}
	ctx, p := m.ctx, m.p
	c := &compareEnv{ctx: ctx, p: p, opts: opts, proc: m.proc, session: m.sid, work: m.work, early: m.early, first: m.first, base: base, events: m.res.Events,
		env: func(env []string, args ...string) func() error {
			full := append([]string{"--project", p.Dir()}, args...)
			return func() error { return runChildEnv(ctx, opts.Exe, full, env) }
		}}
	var err error
	m.res.Targets, m.res.Floor, err = compare(c)
	m.res.Targets = append(m.res.Targets, m.residentTargets...)
	return err
}

// resident times the reads an agent makes through one warm awr-mcp, per
// call, on stdio and through the HTTP service: Count×10 calls of each,
// interleaved, after one untimed call of each.
func (m *measurer) resident() error {
	if m.opts.MCPExe == "" {
		m.res.Resident = "not measured: awr-mcp is neither beside awr nor on PATH"
		return nil
	}
	st, err := m.p.Status(m.ctx, project.StatusRequest{})
	if err != nil {
		return err
	}
	title := m.items[0].Title
	for _, it := range m.items {
		if it.Key == m.work {
			title = it.Title
		}
	}
	calls := residentCalls(m.work, titleWord(title), m.opts.Budget)
	count := m.opts.Count * 10
	for _, mode := range []string{"stdio", "http"} {
		if m.opts.Progress != nil {
			m.opts.Progress("awr-mcp " + mode + " (per call)")
		}
		var r *resident
		if mode == "stdio" {
			r, err = startStdio(m.ctx, m.opts.MCPExe, m.p.Dir())
		} else {
			r, err = startHTTP(m.ctx, m.opts.MCPExe, m.p.Dir(), st.ProjectID)
		}
		if err != nil {
			return fmt.Errorf("bench run: awr-mcp %s: %w", mode, err)
		}
		samples, cpu, err := residentSamples(r, calls, count)
		r.Close()
		if err != nil {
			return fmt.Errorf("bench run: %w", err)
		}
		for i, c := range calls {
			if cpu != nil {
				m.res.ResidentCPU = append(m.res.ResidentCPU, ResidentCPU{Tool: c.tool, Mode: mode, Calls: count, CPUms: cpu[i]})
			}
			name := fmt.Sprintf("%s (awr-mcp %s, per call)", c.name, mode)
			s := summarize(name, "ms", samples[i])
			m.res.Measurements = append(m.res.Measurements, s)
			met := s.Median <= c.bound
			m.residentTargets = append(m.residentTargets, Target{ID: 2, Issue: 44, Name: c.tool + " through a warm awr-mcp " + mode + " (per call, p50)",
				Unit: "ms", Bound: "max", Target: c.bound, Measured: fig(s.Median), Min: fig(s.Min), Median: fig(s.Median), P95: fig(s.P95),
				Pairs: s.Count, Met: &met, Reason: fmt.Sprintf("%d calls, one session, the same process (%s)", s.Count, m.opts.MCPExe)})
		}
	}
	m.res.Resident = fmt.Sprintf("%d calls of each tool per mode through one warm %s (stdio, then the HTTP service on loopback)", count, m.opts.MCPExe)
	return nil
}

// replay times ReplayCount full rebuilds of the projections, in events
// per second.
func (m *measurer) replay() error {
	if m.opts.Progress != nil {
		m.opts.Progress("replay")
	}
	var rates []float64
	for i := 0; i < m.opts.ReplayCount; i++ {
		var head int64
		if err := m.store.Read(m.ctx, func(r *events.Reader) error { head = r.Head; return nil }); err != nil {
			return err
		}
		t0 := time.Now()
		if err := m.store.Rebuild(m.ctx, nil); err != nil {
			return err
		}
		rates = append(rates, math.Round(float64(head)/time.Since(t0).Seconds()))
	}
	m.res.Measurements = append(m.res.Measurements, summarize("replay (in process)", "events/s", rates))
	return nil
}

// runChild runs the awr binary with args, as `awr` (argv[0]), and fails
// with its stderr when it exits non-zero.
func runChild(ctx context.Context, exe string, args []string) error {
	return runChildEnv(ctx, exe, args, nil)
}

// runChildEnv is runChild with env added to the environment.
func runChildEnv(ctx context.Context, exe string, args, env []string) error {
	var stderr bytes.Buffer
	if err := awrCommand(ctx, exe, args, env, &stderr).Run(); err != nil {
		return childError("awr", args, err, &stderr)
	}
	return nil
}

// awrCommand is the command that runs the awr binary exe with args, as
// `awr` (argv[0]), env added to its environment, its stderr written to
// stderr.
func awrCommand(ctx context.Context, exe string, args, env []string, stderr io.Writer) *exec.Cmd {
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Args[0] = "awr"
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stderr = stderr
	return cmd
}

// childError is the error of the program name run with args that failed
// with err, with what it wrote to stderr.
func childError(name string, args []string, err error, stderr fmt.Stringer) error {
	return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
}

// summarize reduces samples to min, median and p95 (nearest rank).
func summarize(name, unit string, samples []float64) Measurement {
	s := append([]float64(nil), samples...)
	sort.Float64s(s)
	rank := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(s)))) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	median := rank(0.5)
	if len(s)%2 == 0 {
		median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	round := func(v float64) float64 { return math.Round(v*100) / 100 }
	return Measurement{Name: name, Unit: unit, Min: round(s[0]), Median: round(median), P95: round(rank(0.95)), Count: len(s)}
}

// economy compiles every work item's packet at the head and checks each
// for the facts it must hold, against the tokens of reading every source
// file of the manifest.
func economy(ctx context.Context, p *project.Project, items []projections.WorkItem, budget int) (Economy, error) {
	store, err := p.EventLog(ctx)
	if err != nil {
		return Economy{}, err
	}
	eco := Economy{Budget: budget, Missing: []string{}}
	m, ok, err := intake.ReadManifest(p.Dir())
	if err != nil {
		return eco, err
	}
	if ok {
		for _, s := range m.Sources {
			raw, err := os.ReadFile(filepath.Join(p.Dir(), filepath.FromSlash(s.Path)))
			if err != nil {
				return eco, fault.Wrap(fault.Storage, err, "bench run: read %s", s.Path)
			}
			n, err := workcontext.Count(string(raw))
			if err != nil {
				return eco, err
			}
			eco.SourceFiles++
			eco.SourceTokens += n
		}
	}
	var goals []events.Goal
	var rules []events.Rule
	if err := store.Read(ctx, func(r *events.Reader) error {
		var err error
		if goals, err = projections.GoalsAt(r.Conn, r.Head); err != nil {
			return err
		}
		rules, err = projections.RulesAt(r.Conn, r.Head)
		return err
	}); err != nil {
		return eco, err
	}
	status := map[string]string{}
	for _, it := range items {
		if _, dup := status[it.Key]; !dup {
			status[it.Key] = it.Status
		}
	}
	for _, it := range items {
		c, err := p.ContextCompile(ctx, project.ContextCompileRequest{Work: it.Key, Budget: &budget})
		if err != nil {
			return eco, err
		}
		eco.Packets++
		if t := c.WorkContext.TokenEstimate; t > eco.LargestPacketTokens {
			eco.LargestPacketTokens, eco.LargestPacketWork = t, it.Key
		}
		for _, f := range RequiredFacts(it, goals, rules, status) {
			eco.RequiredFacts++
			if strings.Contains(c.WorkContext.RenderedContext, f) {
				eco.FactsPresent++
			} else if len(eco.Missing) < 10 {
				eco.Missing = append(eco.Missing, it.Key+": "+f)
			}
		}
	}
	if eco.LargestPacketTokens > 0 {
		eco.Ratio = math.Round(float64(eco.SourceTokens)/float64(eco.LargestPacketTokens)*10) / 10
	}
	return eco, nil
}

// RequiredFacts lists the text a packet for it must hold: its status, next
// action, acceptance criteria, goal title, blocker, each unresolved
// required dependency with its status, and the text of every hard rule in
// scope (a rule without paths, or whose paths overlap the item's).
func RequiredFacts(it projections.WorkItem, goals []events.Goal, rules []events.Rule, status map[string]string) []string {
	facts := []string{"Status: " + it.Status, it.NextAction}
	facts = append(facts, it.Acceptance...)
	for _, g := range goals {
		if g.Key == it.Goal {
			facts = append(facts, g.Title)
			break
		}
	}
	if it.Blocker != "" {
		facts = append(facts, it.Blocker)
	}
	for _, d := range it.DependsOn {
		if d.Required && status[d.Key] != projections.StatusCompleted {
			facts = append(facts, "- "+d.Key+": "+status[d.Key])
		}
	}
	for _, r := range rules {
		if r.Strength == "hard" && workcontext.RuleInScope(r.Paths, it.Paths) {
			facts = append(facts, r.Text)
		}
	}
	return facts
}
