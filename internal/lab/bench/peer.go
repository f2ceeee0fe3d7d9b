package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
	"github.com/awr-dev/awr/projections"
)

// The sides of a peer comparison: awr as a CLI process, through one warm
// awr-mcp on stdio and through the HTTP service; beads (bd) direct (a
// process that opens the database itself) and through its daemon.
const (
	SideCLI    = "awr"
	SideStdio  = "awr-mcp stdio"
	SideHTTP   = "awr-mcp http"
	SideDirect = "bd --no-daemon"
	SideDaemon = "bd daemon"
)

// PeerOptions says what ComparePeer measures.
type PeerOptions struct {
	// Exe is the awr binary; MCPExe awr-mcp (empty: the resident sides
	// are not measured, and the result says so).
	Exe, MCPExe string
	// Peer names the peer: "bd" (beads), or "postgres": the same project
	// held in PostgreSQL (Store) against the embedded file.
	Peer string
	// Store is the PostgreSQL database the peer postgres writes its
	// twins into (a URL without a password).
	Store string
	// PeerBin is the peer's binary (--peer-bin); empty: found on PATH.
	// A peer that is missing is said so, and awr's sides are measured.
	PeerBin string
	// Sizes are the numbers of work items of the workloads (default 150
	// and 10,000); the first and the last are compared for scaling.
	Sizes []int
	// Rounds is the number of timed rounds of each operation (default
	// 10); ImportRounds of the import (default 3).
	Rounds, ImportRounds int
	// Dir is the scratch directory (created, kept); empty: a temporary
	// one, removed at the end.
	Dir string
	// Progress, if set, is told each step as it starts.
	Progress func(string)
}

// PeerResult is the answer of `awr bench compare`.
type PeerResult struct {
	Peer string `json:"peer"`
	// PeerBin and PeerVersion are the peer binary run and what its
	// `version` said; PeerMissing says why no peer was run.
	PeerBin     string `json:"peer_bin"`
	PeerVersion string `json:"peer_version"`
	PeerMissing string `json:"peer_missing,omitempty"`
	// Resident is the awr-mcp run, or why none was.
	Resident string `json:"resident"`
	Rounds   int    `json:"rounds"`
	// LoadBefore and LoadAfter are the machine's load averages (1, 5 and
	// 15 minutes) as the run began and ended.
	LoadBefore [3]float64 `json:"load_before"`
	LoadAfter  [3]float64 `json:"load_after"`
	Dir        string     `json:"dir,omitempty"`
	Sizes      []PeerSize `json:"sizes"`
	// Scaling is each read at the largest workload over the same at the
	// smallest, per side (median over median).
	Scaling []PeerFigure `json:"scaling"`
	// Limited is `ready --limit 10` over the full `ready`, per side and
	// workload (median over median).
	Limited []PeerFigure `json:"limited"`
	// Postgres is the comparison of the stores (the peer postgres); Sizes,
	// Scaling and Limited are then empty.
	Postgres *PostgresResult `json:"postgres,omitempty"`
}

// PeerSize is one workload measured on every side.
type PeerSize struct {
	Items int `json:"items"`
	// Edges is the number of dependencies (required: blocking in bd).
	Edges int `json:"edges"`
	// Ready is awr's ready set; PeerReady bd's (its stats' ready count,
	// open and unblocked), PeerReadyListed the open items `bd ready`
	// lists (it also lists unblocked in-progress ones, which awr's ready
	// leaves out); PeerItems bd's total. Same says all four agree.
	Ready           int  `json:"ready"`
	PeerItems       int  `json:"peer_items"`
	PeerReady       int  `json:"peer_ready"`
	PeerReadyListed int  `json:"peer_ready_listed"`
	Same            bool `json:"same"`
	// SearchWord is the word searched (awr search --kind work, bd list
	// --title), SearchHits what each side found (at most 200).
	SearchWord string         `json:"search_word"`
	SearchHits map[string]int `json:"search_hits"`
	Ops        []PeerOp       `json:"ops"`
}

// PeerOp is one operation's wall time on each side, with awr's ratios
// to bd's.
type PeerOp struct {
	Op string `json:"op"`
	// What each side ran, by side.
	Commands map[string]string `json:"commands"`
	Sides    []Measurement     `json:"sides"`
	// Ratios are awr/bd, median over median, for each awr side against
	// each bd side.
	Ratios []PeerRatio `json:"ratios"`
}

// PeerRatio is one awr side's median over one bd side's.
type PeerRatio struct {
	AWR   string  `json:"awr"`
	Peer  string  `json:"peer"`
	Ratio float64 `json:"ratio"`
}

// PeerFigure is a ratio of one side's medians: Of over Over.
type PeerFigure struct {
	Op    string  `json:"op"`
	Side  string  `json:"side"`
	Items int     `json:"items,omitempty"`
	Of    float64 `json:"of_ms"`
	Over  float64 `json:"over_ms"`
	Ratio float64 `json:"ratio"`
}

// ComparePeer builds the same workload in awr and in the peer (beads,
// bd) at each size (the synthetic register of `awr bench project`, its
// work items and dependencies imported into bd as JSONL) and times, in
// interleaved rounds (each round runs the operation once on every side,
// starting from another side each time), ready (full and --limit 10),
// show, claim (awr session start --claim; bd update --status
// in_progress; each undone untimed), the status overview (awr status; bd
// stats), search (awr search --kind work; bd list --title, both at most
// 200) and the import (awr init --accept of the register; bd import of
// its JSONL into a new database). bd's daemon is started in the scratch
// directory and stopped at the end of each workload, also on error; bd
// runs with HOME in the scratch directory, so nothing is left behind.
//
// With the peer postgres it compares the stores instead
// (comparePostgres).
//
// Errors: InvalidInput for an unknown peer, a --peer-bin that is not an
// executable file, a size out of 1 to MaxTasks, or (postgres) a --store
// that is missing or not a postgres:// URL without a password; Storage
// when the store cannot be reached; any error of a command either side
// runs (with its stderr).
func ComparePeer(ctx context.Context, opts PeerOptions) (res *PeerResult, err error) {
	if opts.Peer != "bd" && opts.Peer != "postgres" {
		return nil, fault.New(fault.InvalidInput, "bench compare: --peer %q: the peers known are bd (beads) and postgres (the same project in PostgreSQL)", opts.Peer).
			With("flag", "--peer").WithHint("awr bench compare --help")
	}
	if len(opts.Sizes) == 0 {
		opts.Sizes = []int{150, 10_000}
	}
	for _, n := range opts.Sizes {
		if n < 1 || n > MaxTasks {
			return nil, fault.New(fault.InvalidInput, "bench compare: --tasks %d: want 1 to %d", n, MaxTasks).
				With("flag", "--tasks").WithHint("awr bench compare --help")
		}
	}
	if opts.Rounds <= 0 {
		opts.Rounds = 10
	}
	if opts.ImportRounds <= 0 {
		opts.ImportRounds = 3
	}
	res = &PeerResult{Peer: opts.Peer, Rounds: opts.Rounds, Sizes: []PeerSize{}, Scaling: []PeerFigure{}, Limited: []PeerFigure{}, LoadBefore: loadAverage()}
	res.Resident = opts.MCPExe
	if opts.MCPExe == "" {
		res.Resident = "not measured: awr-mcp is neither beside awr nor on PATH"
	}
	dir := opts.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "awr-bench-compare-"); err != nil {
			return nil, fault.Wrap(fault.Storage, err, "bench compare: temporary directory")
		}
		defer os.RemoveAll(dir)
	} else {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fault.Wrap(fault.Storage, err, "bench compare: --dir %s", dir)
		}
		res.Dir = dir
	}
	if opts.Peer == "postgres" {
		if err := comparePostgres(ctx, opts, dir, res); err != nil {
			return nil, err
		}
		res.LoadAfter = loadAverage()
		return res, nil
	}
	bd, err := findPeer(opts.PeerBin)
	if err != nil {
		return nil, err
	}
	res.PeerBin = bd
	if bd == "" {
		res.PeerMissing = "no bd on PATH and no --peer-bin: install it with `go install github.com/steveyegge/beads/cmd/bd@v0.22.0`; awr's sides are measured alone"
	}
	c := &peerRun{ctx: ctx, opts: opts, bd: bd, home: filepath.Join(dir, "home")}
	if err := os.MkdirAll(c.home, 0o755); err != nil {
		return nil, fault.Wrap(fault.Storage, err, "bench compare: %s", c.home)
	}
	if bd != "" {
		out, err := c.bdRun(dir, "version")
		if err != nil {
			return nil, err
		}
		res.PeerVersion = strings.TrimSpace(string(out))
	}
	for _, n := range opts.Sizes {
		size, err := c.workload(filepath.Join(dir, strconv.Itoa(n)), n)
		if err != nil {
			return nil, err
		}
		res.Sizes = append(res.Sizes, *size)
	}
	res.Scaling, res.Limited = scaling(res.Sizes)
	res.LoadAfter = loadAverage()
	return res, nil
}

// findPeer returns the bd binary: path when set (it must be an
// executable file), else bd on PATH, else "".
func findPeer(path string) (string, error) {
	if path == "" {
		p, err := exec.LookPath("bd")
		if err != nil {
			return "", nil
		}
		abs, _ := filepath.Abs(p)
		return abs, nil
	}
	fi, err := os.Stat(path)
	if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fault.New(fault.InvalidInput, "bench compare: --peer-bin %s: not an executable file", path).
			With("flag", "--peer-bin").WithHint("awr bench compare --help")
	}
	abs, _ := filepath.Abs(path)
	return abs, nil
}

// loadAverage reads the machine's load averages (zeros where the system
// does not say).
func loadAverage() [3]float64 {
	var out [3]float64
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return out
	}
	f := strings.Fields(string(raw))
	for i := 0; i < 3 && i < len(f); i++ {
		out[i], _ = strconv.ParseFloat(f[i], 64)
	}
	return out
}

// peerRun is one comparison: the options, bd's binary and the HOME it
// runs with.
type peerRun struct {
	ctx  context.Context
	opts PeerOptions
	bd   string
	home string
}

func (c *peerRun) progress(s string) {
	if c.opts.Progress != nil {
		c.opts.Progress(s)
	}
}

// bdRun runs bd in dir with args and returns its stdout. Its HOME is the
// scratch directory's and it never starts a daemon of its own.
func (c *peerRun) bdRun(dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(c.ctx, c.bd, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+c.home, "BEADS_AUTO_START_DAEMON=false", "BD_ACTOR=bench")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("bench compare: %w", childError("bd", args, err, &stderr))
	}
	return out, nil
}

// awrRun runs awr with args and returns its stdout.
func (c *peerRun) awrRun(args ...string) ([]byte, error) {
	out, err := outputChild(c.ctx, c.opts.Exe, args, nil)
	if err != nil {
		return nil, fmt.Errorf("bench compare: %w", err)
	}
	return out, nil
}

// side is one way of running an operation: a timed step, and an untimed
// one after it (the undo of a claim), both optional.
type side struct {
	name    string
	command string
	timed   func() error
	after   func() error
}

// workload builds the workload of n items under dir and measures it.
func (c *peerRun) workload(dir string, n int) (*PeerSize, error) {
	c.progress(fmt.Sprintf("%d items: build the workload", n))
	awrDir, bdDir := filepath.Join(dir, "awr"), filepath.Join(dir, "bd")
	p, items, err := c.awrProject(awrDir, n)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	jsonl, edges := bdJSONL(items)
	size := &PeerSize{Items: len(items), Edges: edges, Ops: []PeerOp{}, SearchHits: map[string]int{}}
	ready, err := p.Ready(c.ctx, project.ReadyRequest{})
	if err != nil {
		return nil, err
	}
	size.Ready = ready.ReadyTotal
	if size.Ready == 0 {
		return nil, fault.New(fault.Internal, "bench compare: the workload of %d items has nothing ready to claim", n)
	}
	claimKey, showKey := ready.Ready[0].Key, items[len(items)/2].Key
	size.SearchWord = titleWord(items[0].Title)

	var sides []side
	add := func(s side) { sides = append(sides, s) }

	// The peer: a database of its own, the JSONL imported.
	jsonlPath := filepath.Join(dir, "issues-import.jsonl")
	if err := os.WriteFile(jsonlPath, jsonl, 0o644); err != nil {
		return nil, fault.Wrap(fault.Storage, err, "bench compare: %s", jsonlPath)
	}
	var stopDaemon func()
	if c.bd != "" {
		if err := c.bdInit(bdDir, jsonlPath); err != nil {
			return nil, err
		}
		if err := c.bdSame(bdDir, size); err != nil {
			return nil, err
		}
		if stopDaemon, err = c.startDaemon(bdDir); err != nil {
			return nil, err
		}
		defer stopDaemon()
	}

	// awr's resident sides.
	var stdio, web *resident
	if c.opts.MCPExe != "" {
		st, err := p.Status(c.ctx, project.StatusRequest{})
		if err != nil {
			return nil, err
		}
		if stdio, err = startStdio(c.ctx, c.opts.MCPExe, awrDir); err != nil {
			return nil, fmt.Errorf("bench compare: awr-mcp stdio: %w", err)
		}
		defer stdio.Close()
		if web, err = startHTTP(c.ctx, c.opts.MCPExe, awrDir, st.ProjectID); err != nil {
			return nil, fmt.Errorf("bench compare: awr-mcp http: %w", err)
		}
		defer web.Close()
	}

	ops := []struct {
		op   string
		awr  []string
		tool string
		args map[string]any
		bd   []string
	}{
		// ready is each side's first page of ready work: awr's default
		// (commands.DefaultPage), the same --limit for bd.
		{"ready", []string{"ready", "--json"}, "awr_ready", map[string]any{}, []string{"ready", "--json", "--limit", strconv.Itoa(commands.DefaultPage)}},
		{"ready --limit 10", []string{"ready", "--limit", "10", "--json"}, "awr_ready", map[string]any{"limit": 10}, []string{"ready", "--json", "--limit", "10"}},
		{"show", []string{"work", "show", showKey, "--json"}, "awr_work_show", map[string]any{"key": showKey}, []string{"show", showKey, "--json"}},
		{"status", []string{"status", "--json"}, "awr_status", map[string]any{}, []string{"stats", "--json"}},
		{"search", []string{"search", size.SearchWord, "--kind", "work", "--limit", "200", "--json"}, "awr_search",
			map[string]any{"query": size.SearchWord, "kind": "work", "limit": 200}, []string{"list", "--title", size.SearchWord, "--limit", "200", "--json"}},
	}
	for _, o := range ops {
		sides = sides[:0]
		cli := append([]string{"--project", awrDir}, o.awr...)
		add(side{name: SideCLI, command: "awr " + strings.Join(cli, " "), timed: func() error { _, err := c.awrRun(cli...); return err }})
		c.residentSides(add, stdio, web, o.tool, o.args, nil)
		c.bdSides(add, bdDir, o.bd, nil)
		op, err := c.measure(fmt.Sprintf("%d items: %s", n, o.op), o.op, sides, c.opts.Rounds)
		if err != nil {
			return nil, err
		}
		size.Ops = append(size.Ops, *op)
	}
	if err := c.searchHits(size, awrDir, bdDir, stdio); err != nil {
		return nil, err
	}

	// The claim, undone after each timed step.
	sides = sides[:0]
	endSession := func(raw []byte) error { return endStarted(c.ctx, p, raw) }
	var started []byte
	cli := []string{"--project", awrDir, "session", "start", "--work", claimKey, "--agent", "bench-compare", "--claim", "--json"}
	add(side{name: SideCLI, command: "awr " + strings.Join(cli, " "),
		timed: func() (err error) { started, err = c.awrRun(cli...); return err },
		after: func() error { return endSession(started) }})
	c.residentSides(add, stdio, web, "awr_session_start", map[string]any{"work": claimKey, "agent": "bench-compare", "claim": true}, endSession)
	c.bdSides(add, bdDir, []string{"update", claimKey, "--status", "in_progress", "--json"}, []string{"update", claimKey, "--status", "open", "--json"})
	op, err := c.measure(fmt.Sprintf("%d items: claim", n), "claim", sides, c.opts.Rounds)
	if err != nil {
		return nil, err
	}
	size.Ops = append(size.Ops, *op)

	// The import into a new project or database.
	if op, err = c.importOp(dir, n, jsonlPath); err != nil {
		return nil, err
	}
	size.Ops = append(size.Ops, *op)
	return size, nil
}

// startedSession is the id of the session whose start answered raw
// (`session start --json`, awr_session_start), or "".
func startedSession(raw []byte) string {
	var got struct {
		Session struct {
			ID string `json:"id"`
		} `json:"session"`
	}
	if json.Unmarshal(raw, &got) != nil {
		return ""
	}
	return got.Session.ID
}

// endStarted ends, as incomplete, the session whose start answered raw
// (`session start --json`, awr_session_start).
func endStarted(ctx context.Context, p *project.Project, raw []byte) error {
	id := startedSession(raw)
	if id == "" {
		return fmt.Errorf("bench compare: no session id in %.200s", raw)
	}
	_, err := p.SessionEnd(ctx, project.SessionEndRequest{SessionID: id, Outcome: events.OutcomeIncomplete, Agent: "bench-compare"})
	return err
}

// residentSides adds awr-mcp's sides of a tool call (then, untimed, its
// answer to after, when set).
func (c *peerRun) residentSides(add func(side), stdio, web *resident, tool string, args map[string]any, after func([]byte) error) {
	for _, r := range []*resident{stdio, web} {
		if r == nil {
			continue
		}
		name := SideStdio
		if r.Mode == "http" {
			name = SideHTTP
		}
		var answer []byte
		s := side{name: name, command: tool + " " + mustJSON(args), timed: func() error {
			raw, err := r.Call(tool, args)
			answer = raw
			return err
		}}
		if after != nil {
			s.after = func() error { return after(answer) }
		}
		add(s)
	}
}

// bdSides adds bd's sides of args (direct and through the daemon), and
// undo after each, when set.
func (c *peerRun) bdSides(add func(side), dir string, args, undo []string) {
	if c.bd == "" {
		return
	}
	for _, direct := range []bool{true, false} {
		name, full, back := SideDaemon, args, undo
		if direct {
			name, full = SideDirect, append([]string{"--no-daemon"}, args...)
			if undo != nil {
				back = append([]string{"--no-daemon"}, undo...)
			}
		}
		s := side{name: name, command: "bd " + strings.Join(full, " "), timed: func() error { _, err := c.bdRun(dir, full...); return err }}
		if back != nil {
			s.after = func() error { _, err := c.bdRun(dir, back...); return err }
		}
		add(s)
	}
}

// measure runs sides in rounds interleaved (round i starts from side i
// mod len), after one untimed warm-up round when there are more than
// two, and returns their medians and awr's ratios to bd's.
func (c *peerRun) measure(step, name string, sides []side, rounds int) (*PeerOp, error) {
	c.progress(step)
	ms := make([][]float64, len(sides))
	first := 0
	if rounds > 2 {
		first = -1
	}
	for round := first; round < rounds; round++ {
		for k := range sides {
			i := (k + max(round, 0)) % len(sides)
			s := sides[i]
			t0 := time.Now()
			if err := s.timed(); err != nil {
				return nil, err
			}
			took := float64(time.Since(t0).Microseconds()) / 1000
			if s.after != nil {
				if err := s.after(); err != nil {
					return nil, err
				}
			}
			if round >= 0 {
				ms[i] = append(ms[i], took)
			}
		}
	}
	op := &PeerOp{Op: name, Commands: map[string]string{}, Sides: []Measurement{}, Ratios: []PeerRatio{}}
	median := map[string]float64{}
	for i, s := range sides {
		op.Commands[s.name] = s.command
		m := summarize(s.name, "ms", ms[i])
		op.Sides = append(op.Sides, m)
		median[s.name] = m.Median
	}
	for _, a := range []string{SideCLI, SideStdio, SideHTTP} {
		for _, b := range []string{SideDirect, SideDaemon} {
			va, okA := median[a]
			vb, okB := median[b]
			if okA && okB {
				op.Ratios = append(op.Ratios, PeerRatio{AWR: a, Peer: b, Ratio: ratio(va, vb)})
			}
		}
	}
	return op, nil
}

// ratio is a over b to 4 significant digits (awr-mcp over bd direct is
// below a thousandth).
func ratio(a, b float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(a/math.Max(b, 0.001), 'g', 4, 64), 64)
	return v
}

func mustJSON(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}

// awrProject writes the synthetic register of n tasks into dir, indexes
// it (awr init --accept, in process) and returns the project and its work
// items.
func (c *peerRun) awrProject(dir string, n int) (*project.Project, []projections.WorkItem, error) {
	if _, err := WriteProject(dir, n, 1); err != nil {
		return nil, nil, err
	}
	p, err := project.Open(c.ctx, dir, project.Options{})
	if err != nil {
		return nil, nil, err
	}
	if _, err := p.Init(c.ctx, project.InitRequest{Accept: true}); err != nil {
		p.Close()
		return nil, nil, err
	}
	items, err := workItems(c.ctx, p)
	if err != nil {
		p.Close()
		return nil, nil, err
	}
	return p, items, nil
}

func workItems(ctx context.Context, p *project.Project) ([]projections.WorkItem, error) {
	store, err := p.EventLog(ctx)
	if err != nil {
		return nil, err
	}
	var items []projections.WorkItem
	err = store.Read(ctx, func(r *events.Reader) error {
		var err error
		items, err = projections.WorkItemsAt(r.Conn, r.Head, true)
		return err
	})
	return items, err
}

// bdIssue is one line of bd's JSONL import.
type bdIssue struct {
	ID                 string   `json:"id"`
	Title              string   `json:"title"`
	Description        string   `json:"description,omitempty"`
	AcceptanceCriteria string   `json:"acceptance_criteria,omitempty"`
	Status             string   `json:"status"`
	Priority           int      `json:"priority"`
	IssueType          string   `json:"issue_type"`
	Assignee           string   `json:"assignee,omitempty"`
	Labels             []string `json:"labels,omitempty"`
	CreatedAt          string   `json:"created_at"`
	UpdatedAt          string   `json:"updated_at"`
	ClosedAt           string   `json:"closed_at,omitempty"`
	Dependencies       []bdDep  `json:"dependencies,omitempty"`
}

type bdDep struct {
	IssueID     string `json:"issue_id"`
	DependsOnID string `json:"depends_on_id"`
	Type        string `json:"type"`
	CreatedAt   string `json:"created_at"`
	CreatedBy   string `json:"created_by"`
}

// bdJSONL is items as bd's JSONL, with the same dependencies (a required
// one blocks; another is related) and statuses mapped so that bd's ready
// set is awr's: planned, ready and draft are open (blocked when the item
// names a blocker), in progress is in_progress, blocked is blocked,
// completed and cancelled are closed. Each description ends with the
// item's key: bd's import merges issues of the same content, and the
// synthetic register repeats a title and summary now and then (at 10,000
// items bd kept 9,997 without it). It returns the number of dependencies
// that block.
func bdJSONL(items []projections.WorkItem) ([]byte, int) {
	const at = "2026-01-01T00:00:00Z"
	known := map[string]bool{}
	for _, it := range items {
		known[it.Key] = true
	}
	var b bytes.Buffer
	edges := 0
	for _, it := range items {
		is := bdIssue{ID: it.Key, Title: it.Title, Description: it.Summary + " (" + it.Key + ")", AcceptanceCriteria: strings.Join(it.Acceptance, "\n"),
			Priority: min(4, max(0, projections.PriorityRank(it.Priority))), IssueType: "task", Assignee: it.Owner, Labels: it.Tags, CreatedAt: at, UpdatedAt: at}
		switch it.Status {
		case projections.StatusInProgress:
			is.Status = "in_progress"
		case projections.StatusBlocked:
			is.Status = "blocked"
		case projections.StatusCompleted, projections.StatusCancelled:
			is.Status, is.ClosedAt = "closed", at
		default:
			is.Status = "open"
			if strings.TrimSpace(it.Blocker) != "" {
				is.Status = "blocked"
			}
		}
		for _, d := range it.DependsOn {
			if !known[d.Key] {
				continue
			}
			typ := "related"
			if d.Required {
				typ = "blocks"
				edges++
			}
			is.Dependencies = append(is.Dependencies, bdDep{IssueID: it.Key, DependsOnID: d.Key, Type: typ, CreatedAt: at, CreatedBy: "bench"})
		}
		raw, _ := json.Marshal(is)
		b.Write(raw)
		b.WriteByte('\n')
	}
	return b.Bytes(), edges
}

// bdInit makes a bd database in dir (bd init, prefix T) and imports
// jsonl into it.
func (c *peerRun) bdInit(dir, jsonl string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fault.Wrap(fault.Storage, err, "bench compare: %s", dir)
	}
	// bd's daemon runs only in a git repository.
	git := exec.CommandContext(c.ctx, "git", "init", "-q", dir)
	git.Env = append(os.Environ(), "HOME="+c.home)
	if out, err := git.CombinedOutput(); err != nil {
		return fmt.Errorf("bench compare: git init %s (bd's daemon needs a repository): %v: %s", dir, err, strings.TrimSpace(string(out)))
	}
	if _, err := c.bdRun(dir, "init", "--prefix", "T", "--quiet"); err != nil {
		return err
	}
	_, err := c.bdRun(dir, "--no-daemon", "import", "-i", jsonl)
	return err
}

// bdSame reads bd's counts into size and says whether they are awr's.
func (c *peerRun) bdSame(dir string, size *PeerSize) error {
	raw, err := c.bdRun(dir, "--no-daemon", "stats", "--json")
	if err != nil {
		return err
	}
	var st struct {
		Total int `json:"total_issues"`
		Ready int `json:"ready_issues"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return fmt.Errorf("bench compare: bd stats --json: %w", err)
	}
	if raw, err = c.bdRun(dir, "--no-daemon", "ready", "--json", "--limit", strconv.Itoa(size.Items+1)); err != nil {
		return err
	}
	var listed []struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(raw, &listed); err != nil {
		return fmt.Errorf("bench compare: bd ready --json: %w", err)
	}
	size.PeerItems, size.PeerReady = st.Total, st.Ready
	for _, l := range listed {
		if l.Status == "open" {
			size.PeerReadyListed++
		}
	}
	size.Same = size.PeerItems == size.Items && size.PeerReady == size.Ready && size.PeerReadyListed == size.Ready
	return nil
}

// startDaemon starts bd's daemon in dir and returns what stops it (bd
// daemon --stop, then a kill of the process its pid file names if it is
// still there); it waits until a command is answered through it.
func (c *peerRun) startDaemon(dir string) (func(), error) {
	stop := func() {
		_, _ = c.bdRun(dir, "daemon", "--stop")
		raw, err := os.ReadFile(filepath.Join(dir, ".beads", "daemon.pid"))
		if err != nil {
			return
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(raw))); err == nil && pid > 1 {
			if proc, err := os.FindProcess(pid); err == nil {
				_ = proc.Kill()
			}
		}
	}
	if _, err := c.bdRun(dir, "daemon", "--interval", "1h"); err != nil {
		stop()
		return nil, err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		raw, err := c.bdRun(dir, "info", "--json")
		var info struct {
			Mode      string `json:"mode"`
			Connected bool   `json:"daemon_connected"`
		}
		if err == nil && json.Unmarshal(raw, &info) == nil && info.Mode == "daemon" && info.Connected {
			return stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("bench compare: bd's daemon in %s answered nothing within 60 s: %s", dir, raw)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// searchHits records what each side's search found.
func (c *peerRun) searchHits(size *PeerSize, awrDir, bdDir string, stdio *resident) error {
	raw, err := c.awrRun("--project", awrDir, "search", size.SearchWord, "--kind", "work", "--limit", "200", "--json")
	if err != nil {
		return err
	}
	var got struct {
		Results []json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		return fmt.Errorf("bench compare: awr search --json: %w", err)
	}
	size.SearchHits[SideCLI] = len(got.Results)
	if c.bd == "" {
		return nil
	}
	if raw, err = c.bdRun(bdDir, "--no-daemon", "list", "--title", size.SearchWord, "--limit", "200", "--json"); err != nil {
		return err
	}
	var listed []json.RawMessage
	if err := json.Unmarshal(raw, &listed); err != nil {
		return fmt.Errorf("bench compare: bd list --json: %w", err)
	}
	size.SearchHits[SideDirect] = len(listed)
	return nil
}

// importOp times the import of the workload into a new project (awr
// init --accept of the register's files, written untimed) and into a new
// bd database (bd import of the JSONL after an untimed bd init).
func (c *peerRun) importOp(dir string, n int, jsonl string) (*PeerOp, error) {
	k := 0
	var awrTarget, bdTarget string
	sides := []side{{name: SideCLI, command: "awr --project DIR init --accept --json",
		timed: func() error { _, err := c.awrRun("--project", awrTarget, "init", "--accept", "--json"); return err },
	}}
	prepare := func() error {
		k++
		awrTarget = filepath.Join(dir, fmt.Sprintf("import-awr-%d", k))
		bdTarget = filepath.Join(dir, fmt.Sprintf("import-bd-%d", k))
		if _, err := WriteProject(awrTarget, n, 1); err != nil {
			return err
		}
		if c.bd == "" {
			return nil
		}
		if err := os.MkdirAll(bdTarget, 0o755); err != nil {
			return fault.Wrap(fault.Storage, err, "bench compare: %s", bdTarget)
		}
		_, err := c.bdRun(bdTarget, "init", "--prefix", "T", "--quiet")
		return err
	}
	if c.bd != "" {
		sides = append(sides, side{name: SideDirect, command: "bd --no-daemon import -i FILE (after bd init)",
			timed: func() error { _, err := c.bdRun(bdTarget, "--no-daemon", "import", "-i", jsonl); return err }})
	}
	c.progress(fmt.Sprintf("%d items: import", n))
	ms := make([][]float64, len(sides))
	// Each round imports into new targets, prepared untimed before it.
	for round := 0; round < c.opts.ImportRounds; round++ {
		if err := prepare(); err != nil {
			return nil, err
		}
		for k := range sides {
			i := (k + round) % len(sides)
			t0 := time.Now()
			if err := sides[i].timed(); err != nil {
				return nil, err
			}
			ms[i] = append(ms[i], float64(time.Since(t0).Microseconds())/1000)
		}
		_ = os.RemoveAll(awrTarget)
		_ = os.RemoveAll(bdTarget)
	}
	op := &PeerOp{Op: "import", Commands: map[string]string{}, Sides: []Measurement{}, Ratios: []PeerRatio{}}
	for i, s := range sides {
		op.Commands[s.name] = s.command
		op.Sides = append(op.Sides, summarize(s.name, "ms", ms[i]))
	}
	if len(sides) == 2 {
		op.Ratios = append(op.Ratios, PeerRatio{AWR: SideCLI, Peer: SideDirect, Ratio: ratio(op.Sides[0].Median, op.Sides[1].Median)})
	}
	return op, nil
}

// scaling divides each read at the largest workload by the same at the
// smallest, per side, and ready --limit 10 by ready at each.
func scaling(sizes []PeerSize) (scale, limited []PeerFigure) {
	scale, limited = []PeerFigure{}, []PeerFigure{}
	medians := func(s PeerSize, op string) map[string]float64 {
		out := map[string]float64{}
		for _, o := range s.Ops {
			if o.Op == op {
				for _, m := range o.Sides {
					out[m.Name] = m.Median
				}
			}
		}
		return out
	}
	sides := []string{SideCLI, SideStdio, SideHTTP, SideDirect, SideDaemon}
	if len(sizes) >= 2 {
		small, large := sizes[0], sizes[len(sizes)-1]
		for _, op := range []string{"ready", "ready --limit 10", "show", "status", "search"} {
			a, b := medians(large, op), medians(small, op)
			for _, s := range sides {
				if va, ok := a[s]; ok {
					scale = append(scale, PeerFigure{Op: fmt.Sprintf("%s at %d / at %d", op, large.Items, small.Items), Side: s, Of: va, Over: b[s], Ratio: ratio(va, b[s])})
				}
			}
		}
	}
	for _, sz := range sizes {
		a, b := medians(sz, "ready --limit 10"), medians(sz, "ready")
		for _, s := range sides {
			if va, ok := a[s]; ok {
				limited = append(limited, PeerFigure{Op: "ready --limit 10 / ready", Side: s, Items: sz.Items, Of: va, Over: b[s], Ratio: ratio(va, b[s])})
			}
		}
	}
	return scale, limited
}
