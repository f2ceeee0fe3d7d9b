package bench

import (
	"context"
	"fmt"
	"maps"
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
	"github.com/awr-dev/awr/internal/project"
)

// Target is one figure of issue #17's targets as this run measured it: a
// ratio of paired, interleaved runs (or a rate), against the bound the
// target names. Measured, Min, Median, P95 and Met are null when the
// figure cannot be measured on one project or without a floor; Reason
// then says why, and Command what measures it.
type Target struct {
	// ID is the target's number in the issue (1–7); a target with several
	// figures has one entry per figure.
	ID int `json:"id"`
	// Issue is the issue the target is of, when not #17's: 44 for the
	// resident path (its item 2) and for what a shared log (PostgreSQL)
	// adds to a command on the file (its item 6).
	Issue int `json:"issue,omitempty"`
	// Name says what is divided by what.
	Name string `json:"name"`
	// Unit is "ratio", "events/s" or "ms" (a difference of medians).
	Unit string `json:"unit"`
	// Bound is "max" (measured must be at most Target) or "min" (at least).
	Bound  string  `json:"bound"`
	Target float64 `json:"target"`
	// Measured is the figure the target names: for a ratio, the median of
	// the first side over the median of the second (and MeasuredP95 the
	// same of their p95s, where the target names both); for a rate, the
	// median rate.
	Measured    *float64 `json:"measured"`
	MeasuredP95 *float64 `json:"measured_p95,omitempty"`
	// Min, Median and P95 are of the per-pair ratios (or of the rates).
	Min    *float64 `json:"min"`
	Median *float64 `json:"median"`
	P95    *float64 `json:"p95"`
	// Pairs is the number of paired runs (or of rate samples).
	Pairs int `json:"pairs"`
	// Met is whether Measured (and MeasuredP95) are within the bound.
	Met *bool `json:"met"`
	// Of and Over are the two sides of a ratio, in milliseconds.
	Of   *Measurement `json:"of,omitempty"`
	Over *Measurement `json:"over,omitempty"`
	// Reason says why a figure is null, or how it was taken.
	Reason string `json:"reason,omitempty"`
	// Command is what measures a figure this run cannot.
	Command string `json:"command,omitempty"`
}

// Floor is the hello-world binary the startup target divides by.
type Floor struct {
	// Path is the binary; empty when no floor was available.
	Path string `json:"path"`
	// Source is "built" (from `go` on PATH, cached per Go version),
	// "flag" (--floor) or "unavailable".
	Source string `json:"source"`
	// GoVersion is the toolchain that built it, when built.
	GoVersion string `json:"go_version,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// HelloWorldFloor returns the hello-world binary to divide awr's startup
// by: path when it is set (--floor), else one built with `go` from PATH
// with the flags of the awr release build (CGO_ENABLED=0, -trimpath,
// -ldflags '-s -w') in a temporary directory and cached under cacheDir per
// Go version, else a Floor whose Source is "unavailable" with the reason.
//
// Errors: InvalidInput when path is set and is not an executable file.
func HelloWorldFloor(ctx context.Context, path, cacheDir string) (*Floor, error) {
	if path != "" {
		fi, err := os.Stat(path)
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return nil, fault.New(fault.InvalidInput, "bench run: --floor %s: not an executable file", path).
				With("flag", "--floor").WithHint("awr bench run --help")
		}
		abs, _ := filepath.Abs(path)
		return &Floor{Path: abs, Source: "flag"}, nil
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return &Floor{Source: "unavailable", Reason: "no go on PATH and no --floor binary: the startup ratio needs a hello-world Go binary"}, nil
	}
	out, err := exec.CommandContext(ctx, goBin, "env", "GOVERSION").Output()
	if err != nil {
		return &Floor{Source: "unavailable", Reason: "go env GOVERSION failed: " + err.Error()}, nil
	}
	version := strings.TrimSpace(string(out))
	bin := filepath.Join(cacheDir, "hello-"+version)
	if fi, err := os.Stat(bin); err == nil && !fi.IsDir() {
		return &Floor{Path: bin, Source: "built", GoVersion: version}, nil
	}
	tmp, err := os.MkdirTemp("", "awr-floor-")
	if err != nil {
		return &Floor{Source: "unavailable", Reason: "temporary directory: " + err.Error()}, nil
	}
	defer os.RemoveAll(tmp)
	files := map[string]string{
		"go.mod":  "module hello\n\ngo 1.21\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello, world\") }\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(text), 0o644); err != nil {
			return &Floor{Source: "unavailable", Reason: "write " + name + ": " + err.Error()}, nil
		}
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return &Floor{Source: "unavailable", Reason: "cache directory: " + err.Error()}, nil
	}
	part := bin + ".part"
	cmd := exec.CommandContext(ctx, goBin, "build", "-trimpath", "-ldflags", "-s -w", "-o", part, ".")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false", "GOTOOLCHAIN=local", "GOWORK=off")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return &Floor{Source: "unavailable", Reason: fmt.Sprintf("go build of the hello-world binary failed: %v: %s", err, strings.TrimSpace(string(msg)))}, nil
	}
	if err := os.Rename(part, bin); err != nil {
		return &Floor{Source: "unavailable", Reason: "cache the hello-world binary: " + err.Error()}, nil
	}
	return &Floor{Path: bin, Source: "built", GoVersion: version}, nil
}

// paired runs a and b pairs times, interleaved (a then b on even pairs, b
// then a on odd ones, so neither side always runs on a warmer cache), and
// returns both sides' wall times in milliseconds.
func paired(pairs int, a, b func() error) (as, bs []float64, err error) {
	timeOne := func(fn func() error) (float64, error) {
		t0 := time.Now()
		if err := fn(); err != nil {
			return 0, err
		}
		return float64(time.Since(t0).Microseconds()) / 1000, nil
	}
	for i := 0; i < pairs; i++ {
		first, second := a, b
		if i%2 == 1 {
			first, second = b, a
		}
		x, err := timeOne(first)
		if err != nil {
			return nil, nil, err
		}
		y, err := timeOne(second)
		if err != nil {
			return nil, nil, err
		}
		if i%2 == 1 {
			x, y = y, x
		}
		as, bs = append(as, x), append(bs, y)
	}
	return as, bs, nil
}

// ratioTarget fills t from paired samples of its two sides: Measured is
// median(of)/median(over), MeasuredP95 (when withP95) p95(of)/p95(over),
// and Min/Median/P95 those of the per-pair ratios.
func ratioTarget(t Target, of, over []float64, ofName, overName string, withP95 bool) Target {
	t.Unit = "ratio"
	mo, mv := summarize(ofName, "ms", of), summarize(overName, "ms", over)
	t.Of, t.Over = &mo, &mv
	ratios := make([]float64, len(of))
	for i := range of {
		ratios[i] = of[i] / math.Max(over[i], 0.001)
	}
	r := summarize("ratio", "ratio", ratios)
	t.Pairs = len(of)
	t.Min, t.Median, t.P95 = fig(r.Min), fig(r.Median), fig(r.P95)
	t.Measured = fig(round2(quantile(of, 0.5) / math.Max(quantile(over, 0.5), 0.001)))
	met := within(t, *t.Measured)
	if withP95 {
		t.MeasuredP95 = fig(round2(quantile(of, 0.95) / math.Max(quantile(over, 0.95), 0.001)))
		met = met && within(t, *t.MeasuredP95)
	}
	t.Met = &met
	return t
}

func within(t Target, v float64) bool {
	if t.Bound == "min" {
		return v >= t.Target
	}
	return v <= t.Target
}

func fig(v float64) *float64 { return &v }

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// quantile is the nearest-rank quantile q of samples (the median of an
// even count is the mean of the middle two), as summarize reports it.
func quantile(samples []float64, q float64) float64 {
	s := append([]float64(nil), samples...)
	sort.Float64s(s)
	if q == 0.5 && len(s)%2 == 0 && len(s) > 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// unmeasured is a target figure this run cannot take.
func unmeasured(id int, name, unit, bound string, target float64, reason, command string) Target {
	return Target{ID: id, Name: name, Unit: unit, Bound: bound, Target: target, Reason: reason, Command: command}
}

// compareEnv is what the target measurements need from Run.
type compareEnv struct {
	ctx     context.Context
	p       *project.Project
	opts    RunOptions
	proc    func(args ...string) func() error
	env     func(env []string, args ...string) func() error
	session string // Run's own session, holding its claim
	work    string
	early   string // the early revision, as text
	first   string // the first session of the history
	events  int64  // the head of the log measured, before Run wrote
	base    *baseline
}

// compare measures every figure of issue #17's targets that one project
// can show, each as paired, interleaved runs in this one run.
func compare(c *compareEnv) ([]Target, *Floor, error) {
	progress := c.progress
	var out []Target
	version := c.proc("version", "--json")

	// 1. Startup against a hello-world binary.
	t1, floor, err := c.startup(version)
	if err != nil {
		return nil, nil, err
	}
	out = append(out, t1)

	// 2. Hot commands as whole processes against awr version.
	t2, err := c.hot(version)
	if err != nil {
		return nil, nil, err
	}
	out = append(out, t2...)
	// session start --claim: each start claims a ready item and is ended
	// in process (untimed) before the next pair.
	progress("2: session start --claim")
	if t, err := c.startClaim(version); err != nil {
		return nil, nil, err
	} else {
		out = append(out, t)
	}

	// 3. Flat in history, as far as one project shows it.
	progress("3: flat in history")
	ts, err := c.flat()
	if err != nil {
		return nil, nil, err
	}
	out = append(out, ts...)

	// 4. Replay and verify of the whole log as processes.
	progress("4: replay and verify")
	t4, err := c.replayTargets()
	if err != nil {
		return nil, nil, err
	}
	out = append(out, t4...)

	// 5. Generation is measured by generating.
	out = append(out, unmeasured(5, "bench generate at 1M events", "events/s", "min", 50_000,
		"measured by generating a history, not on an existing one: events_per_second of the command",
		"awr bench project DIR --tasks 150 --seed 1 && awr --project DIR bench generate --events 1000000 --json"))

	// 6. A compile with an unwritable cache directory.
	progress("6: compile with an unwritable cache")
	t6, err := c.unwritableCache(version)
	if err != nil {
		return nil, nil, err
	}
	out = append(out, t6)

	// 7. Appends on a long log against a short one need two logs.
	if c.base == nil {
		out = append(out, unmeasured(7, "checkpoint at 1M events / at 1k (in process and as a process)", "ratio", "max", 1.2,
			"needs two histories: run this on a 1M-event project with --baseline a 1k-event one; in process: the Go benchmarks",
			"go test -run '^$' -bench 'Append_1k|Append_1M' ./internal/lab/bench; awr --project BIG bench run --compare --baseline SMALL"))
		return out, floor, nil
	}
	t7, err := c.baselineCheckpoint()
	if err != nil {
		return nil, nil, err
	}
	out = append(out, t7)

	// Issue #40 item 4 and #44 item 6: a baseline whose log is on the
	// other store (a twin moved with awr migrate) is what the shared log
	// adds to a command; the comparison of the stores measures it, with
	// the network's floor and the resident server, in a run of its own.
	here, err := c.p.EventLog(c.ctx)
	if err != nil {
		return nil, nil, err
	}
	if shared := here.Upstream() != nil; shared != c.base.shared {
		out = append(out, Target{ID: 6, Issue: 44, Name: "a command on the shared log − on the file (p50 and p95)", Unit: "ms", Bound: "max", Target: CLIBound,
			Reason:  "measured by the comparison of the stores, every command on both twins interleaved beside the network's floor",
			Command: "awr bench compare --peer postgres --store postgres://USER@HOST:5432/SCRATCH_DB --tasks 150"})
	}
	return out, floor, nil
}

// progress says which target is measured.
func (c *compareEnv) progress(name string) {
	if c.opts.Progress != nil {
		c.opts.Progress("target " + name)
	}
}

// startup is target 1: awr version against a hello-world Go binary.
func (c *compareEnv) startup(version func() error) (Target, *Floor, error) {
	o, progress := c.opts, c.progress
	progress("1: awr version / hello-world")
	floor, err := HelloWorldFloor(c.ctx, o.Floor, o.FloorCache)
	if err != nil {
		return Target{}, nil, err
	}
	t1 := Target{ID: 1, Name: "awr version / hello-world Go binary (wall, p50)", Bound: "max", Target: 3}
	if floor.Path == "" {
		t1.Unit, t1.Reason, t1.Command = "ratio", "floor unavailable: "+floor.Reason, "awr bench run --compare --floor HELLO_BINARY"
		return t1, floor, nil
	}
	hello := func() error { return runChild(c.ctx, floor.Path, nil) }
	a, b, err := paired(o.Pairs, version, hello)
	if err != nil {
		return Target{}, nil, fmt.Errorf("bench run: target 1: %w", err)
	}
	return ratioTarget(t1, a, b, "awr version", "hello-world", false), floor, nil
}

// hot is target 2: the hot commands as whole processes against awr
// version.
func (c *compareEnv) hot(version func() error) ([]Target, error) {
	o, progress := c.opts, c.progress
	var out []Target
	n := 0
	hot := []struct {
		name string
		fn   func() error
		post func() error
	}{
		{"status", c.proc("status", "--json"), nil},
		{"ready", c.proc("ready", "--json"), nil},
		{"context compile", c.proc("context", "compile", "--work", c.work, "--json"), nil},
		{"recovery inspect (head)", c.proc("recovery", "inspect", "--session", c.first, "--json"), nil},
		{"recovery inspect --at " + c.early, c.proc("recovery", "inspect", "--session", c.first, "--at", c.early, "--json"), nil},
		{"session show", c.proc("session", "show", c.session, "--json"), nil},
		{"log --limit 50", c.proc("log", "--limit", "50", "--json"), nil},
		{"session checkpoint", func() error {
			n++
			return c.proc("session", "checkpoint", "--session", c.session, "--agent", "bench-run", "--json",
				"--digest", fmt.Sprintf("Target step %d of the benchmark run.", n), "--next-action", "Record the next measurement")()
		}, nil},
		{"source reindex (nothing changed)", c.proc("source", "reindex", "--json"), nil},
	}
	for _, h := range hot {
		progress("2: " + h.name)
		a, b, err := paired(o.Pairs, h.fn, version)
		if err != nil {
			return nil, fmt.Errorf("bench run: target 2: %s: %w", h.name, err)
		}
		out = append(out, ratioTarget(Target{ID: 2, Name: h.name + " / awr version (p50 and p95)", Bound: "max", Target: 1.5}, a, b, h.name, "awr version", true))
	}
	return out, nil
}

// baselineCheckpoint is target 7: a checkpoint on this project's long
// log against one on the baseline's short one, as processes.
func (c *compareEnv) baselineCheckpoint() (Target, error) {
	o, progress := c.opts, c.progress
	progress("7: checkpoint against the baseline")
	k := 0
	checkpoint := func(proc func(args ...string) func() error, session string) func() error {
		return func() error {
			k++
			return proc("session", "checkpoint", "--session", session, "--agent", "bench-run", "--json",
				"--digest", fmt.Sprintf("Baseline step %d of the benchmark run.", k), "--next-action", "Record the next measurement")()
		}
	}
	name := fmt.Sprintf("session checkpoint at %d events / at %d, as a process", c.events, c.base.events)
	a, b, err := paired(o.Pairs, checkpoint(c.proc, c.session), checkpoint(c.base.proc, c.base.session))
	if err != nil {
		return Target{}, fmt.Errorf("bench run: target 7: %w", err)
	}
	t7 := ratioTarget(Target{ID: 7, Name: name, Bound: "max", Target: 1.2}, a, b, "checkpoint on "+c.p.Dir(), "checkpoint on "+c.base.dir, false)
	t7.Reason = "the issue names 1M events against 1k; in process: go test -run '^$' -bench 'Append_1k|Append_1M' ./internal/lab/bench"
	return t7, nil
}

// startClaim measures `session start --claim` against awr version: each
// start claims the first ready item and is ended, untimed, before the
// next pair.
func (c *compareEnv) startClaim(version func() error) (Target, error) {
	t := Target{ID: 2, Name: "session start --claim / awr version (p50 and p95)", Bound: "max", Target: 1.5}
	two := 2
	ready, err := c.p.Ready(c.ctx, project.ReadyRequest{Limit: &two})
	if err != nil {
		return t, err
	}
	work := ""
	for _, r := range ready.Ready {
		if r.Key != c.work {
			work = r.Key
			break
		}
	}
	if work == "" {
		t.Unit, t.Reason = "ratio", "no ready work item besides the one bench run holds: nothing to claim"
		return t, nil
	}
	// The end is in process; time only the start's process.
	var starts []float64
	timedStart := func() error {
		t0 := time.Now()
		cmd := exec.CommandContext(c.ctx, c.opts.Exe, "--project", c.p.Dir(), "session", "start", "--work", work, "--agent", "bench-run",
			"--claim", "--ttl-ms", "600000", "--json")
		cmd.Args[0] = "awr"
		raw, err := cmd.Output()
		starts = append(starts, float64(time.Since(t0).Microseconds())/1000)
		if err != nil {
			return fmt.Errorf("awr session start --claim: %v: %s", err, stderrOf(err))
		}
		started := startedSession(raw)
		if started == "" {
			return fmt.Errorf("awr session start --claim: no session id in %s", raw)
		}
		_, err = c.p.SessionEnd(c.ctx, project.SessionEndRequest{SessionID: started, Outcome: events.OutcomeIncomplete, Agent: "bench-run"})
		return err
	}
	_, vs, err := paired(c.opts.Pairs, timedStart, version)
	if err != nil {
		return t, fmt.Errorf("bench run: target 2: session start --claim: %w", err)
	}
	t = ratioTarget(t, starts, vs, "session start --claim", "awr version", true)
	t.Reason = "the start's process only; each session is ended in process between pairs"
	return t, nil
}

// flat measures what one project shows of target 3: reads at an early
// revision against the head, and a compile and recovery inspect of the
// session with the most checkpoints against the one with the fewest.
func (c *compareEnv) flat() ([]Target, error) {
	var out []Target
	pairs := []struct {
		name string
		of   []string
		over []string
	}{
		{"status --at " + c.early + " / status", []string{"status", "--at", c.early, "--json"}, []string{"status", "--json"}},
		{"ready --at " + c.early + " / ready", []string{"ready", "--at", c.early, "--json"}, []string{"ready", "--json"}},
		{"recovery inspect --at " + c.early + " / at the head", []string{"recovery", "inspect", "--session", c.first, "--at", c.early, "--json"},
			[]string{"recovery", "inspect", "--session", c.first, "--json"}},
	}
	long, short, nLong, nShort, lastSeq, err := c.longShortSessions()
	if err != nil {
		return nil, err
	}
	var sessionReason string
	if long != "" && short != "" && long != short {
		ls, ss := sessionWork(c, long), sessionWork(c, short)
		pairs = append(pairs,
			struct {
				name string
				of   []string
				over []string
			}{"context compile: longest session / shortest",
				[]string{"context", "compile", "--work", ls, "--at", strconv.FormatInt(lastSeq[long], 10), "--json"},
				[]string{"context", "compile", "--work", ss, "--at", strconv.FormatInt(lastSeq[short], 10), "--json"}},
			struct {
				name string
				of   []string
				over []string
			}{"recovery inspect: longest session / shortest",
				[]string{"recovery", "inspect", "--session", long, "--json"}, []string{"recovery", "inspect", "--session", short, "--json"}})
		sessionReason = fmt.Sprintf("the issue names 5,000 checkpoints against 5; this project's longest session (%d checkpoints) and shortest (%d) stand in (compile: of the session's work item at its last checkpoint)", nLong, nShort)
	}
	for _, pr := range pairs {
		a, b, err := paired(c.opts.Pairs, c.proc(pr.of...), c.proc(pr.over...))
		if err != nil {
			return nil, fmt.Errorf("bench run: target 3: %s: %w", pr.name, err)
		}
		t := ratioTarget(Target{ID: 3, Name: pr.name, Bound: "max", Target: 1.2}, a, b, strings.Join(pr.of, " "), strings.Join(pr.over, " "), false)
		if strings.Contains(pr.name, "longest") {
			t.Reason = sessionReason
		}
		out = append(out, t)
	}
	if sessionReason == "" {
		out = append(out, unmeasured(3, "compile and recovery inspect: session of 5,000 checkpoints / of 5", "ratio", "max", 1.2,
			"the project has no two sessions with different numbers of checkpoints",
			"go test ./internal/project -run '^$' -bench History_Checkpoints"))
	}
	if c.base == nil {
		out = append(out, unmeasured(3, "status and ready at 1M events / at 10k (same register)", "ratio", "max", 1.2,
			"needs two histories: run this on a 1M-event project with --baseline a 10k-event one of the same register",
			"awr bench project DIR --tasks 150 --seed 1; awr --project DIR bench generate --events N; awr --project BIG bench run --compare --baseline SMALL"))
		return out, nil
	}
	for _, cmd := range []string{"status", "ready"} {
		name := fmt.Sprintf("%s at %d events / at %d (same register)", cmd, c.events, c.base.events)
		a, b, err := paired(c.opts.Pairs, c.proc(cmd, "--json"), c.base.proc(cmd, "--json"))
		if err != nil {
			return nil, fmt.Errorf("bench run: target 3: %s: %w", name, err)
		}
		t := ratioTarget(Target{ID: 3, Name: name, Bound: "max", Target: 1.2}, a, b, cmd+" on "+c.p.Dir(), cmd+" on "+c.base.dir, false)
		t.Reason = "the issue names 1M events against 10k"
		out = append(out, t)
	}
	return out, nil
}

// longShortSessions finds the sessions with the most and the fewest
// (at least one) checkpoints of the log.
func (c *compareEnv) longShortSessions() (long, short string, nLong, nShort int, lastSeq map[string]int64, err error) {
	store, err := c.p.EventLog(c.ctx)
	if err != nil {
		return "", "", 0, 0, nil, err
	}
	counts := map[string]int{}
	lastSeq = map[string]int64{}
	err = store.Read(c.ctx, func(r *events.Reader) error {
		return events.ScanEvents(r.Conn, 1, r.Head, func(e *events.Event) error {
			if e.Kind == events.KindCheckpointRecorded && strings.HasPrefix(e.Stream, "session/") {
				id := strings.TrimPrefix(e.Stream, "session/")
				counts[id]++
				lastSeq[id] = e.Seq
			}
			return nil
		})
	})
	if err != nil {
		return "", "", 0, 0, nil, err
	}
	delete(counts, c.session)
	for _, id := range slices.Sorted(maps.Keys(counts)) {
		if long == "" || counts[id] > nLong {
			long, nLong = id, counts[id]
		}
		if short == "" || counts[id] < nShort {
			short, nShort = id, counts[id]
		}
	}
	return long, short, nLong, nShort, lastSeq, nil
}

func sessionWork(c *compareEnv, id string) string {
	res, err := c.p.SessionShow(c.ctx, project.SessionShowRequest{Session: id})
	if err != nil {
		return c.work
	}
	return res.Session.Work
}

// replayTargets times `awr replay` and `awr verify` of the whole log as
// processes, ReplayCount of each, interleaved.
func (c *compareEnv) replayTargets() ([]Target, error) {
	store, err := c.p.EventLog(c.ctx)
	if err != nil {
		return nil, err
	}
	var head int64
	if err := store.Read(c.ctx, func(r *events.Reader) error { head = r.Head; return nil }); err != nil {
		return nil, err
	}
	// The project's own connections must not hold the file while a child
	// rebuilds it; they reopen on the next use.
	rep, ver, err := paired(c.opts.ReplayCount, c.proc("replay", "--json"), c.proc("verify", "--json"))
	if err != nil {
		return nil, fmt.Errorf("bench run: target 4: %w", err)
	}
	rates := make([]float64, len(rep))
	for i, ms := range rep {
		rates[i] = math.Round(float64(head) / (ms / 1000))
	}
	r := summarize("replay", "events/s", rates)
	t := Target{ID: 4, Name: "awr replay of the whole log (as a process)", Unit: "events/s", Bound: "min", Target: 150_000,
		Measured: fig(r.Median), Min: fig(r.Min), Median: fig(r.Median), P95: fig(r.P95), Pairs: len(rates)}
	met := r.Median >= t.Target
	t.Met = &met
	t.Reason = fmt.Sprintf("%d events", head)
	if head < 1_000_000 {
		t.Reason += "; the target names the 1M-event log"
	}
	v := ratioTarget(Target{ID: 4, Name: "awr verify / awr replay (wall, p50)", Bound: "max", Target: 1.5}, ver, rep, "awr verify", "awr replay", false)
	return []Target{t, v}, nil
}

// unwritableCache measures a context compile with no writable cache
// directory (HOME and XDG_CACHE_HOME under a regular file) against awr
// version (target 6, within target 2): the rank table is embedded, so a
// compile must cost the same with nowhere to cache.
func (c *compareEnv) unwritableCache(version func() error) (Target, error) {
	t := Target{ID: 6, Name: "context compile with no writable cache directory / awr version (p50 and p95)", Bound: "max", Target: 1.5}
	dir, err := os.MkdirTemp("", "awr-nocache-")
	if err != nil {
		return t, fault.Wrap(fault.Storage, err, "bench run: temporary directory")
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		return t, fault.Wrap(fault.Storage, err, "bench run: %s", file)
	}
	env := []string{"HOME=" + filepath.Join(file, "home"), "XDG_CACHE_HOME=" + filepath.Join(file, "cache")}
	a, b, err := paired(c.opts.Pairs, c.env(env, "context", "compile", "--work", c.work, "--json"), version)
	if err != nil {
		return t, fmt.Errorf("bench run: target 6: %w", err)
	}
	t = ratioTarget(t, a, b, "context compile (no writable cache directory)", "awr version", true)
	t.Reason = "HOME and XDG_CACHE_HOME name directories under a regular file, so nothing can be cached; the rank table is embedded"
	return t, nil
}

// stderrOf is the stderr an exec error carries.
func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}
