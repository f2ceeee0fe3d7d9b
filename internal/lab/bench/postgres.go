package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/events/pgstore"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/project"
	"github.com/jackc/pgx/v5"
)

// The paths a command takes in a comparison of the two stores: the CLI
// (on PostgreSQL through this user's connection holder, as by default),
// the CLI connecting anew (AWR_STORE_HOLD=off), and one warm awr-mcp on
// stdio and over HTTP.
const (
	PathCLI    = "awr"
	PathDirect = "awr, AWR_STORE_HOLD=off"
	PathStdio  = "awr-mcp stdio"
	PathHTTP   = "awr-mcp http"
)

// PostgresHistory is the number of events `awr bench generate` appends
// to each workload of a comparison of the stores before it is copied; a
// workload of fewer than PostgresHistoryFrom items gets none (the history's
// agents would hold every ready item).
const PostgresHistory = 1000

// PostgresHistoryFrom is the least number of items a workload has for
// PostgresHistory events to be generated into it.
const PostgresHistoryFrom = 100

// CLIBound is what a command on PostgreSQL may add to the same command
// on the file, in ms, at p50 and at p95 (issue #44 item 6, issue #40).
const CLIBound = 10.0

// PostgresResult is `awr bench compare --peer postgres`: the same
// project held in the embedded file and in PostgreSQL, every command
// timed on both in interleaved rounds, beside the network's floor.
type PostgresResult struct {
	// Store is the database, without any credential (host, port,
	// database, user); ServerVersion what the server says it is.
	Store         string `json:"store"`
	ServerVersion string `json:"server_version"`
	// Floor is what the network costs, measured in the same run, back to
	// back; each size also times its round trips between the calls
	// (PostgresSize.BetweenCalls, WriteBetweenCalls), which the resident
	// paths are judged by.
	Floor PostgresFloor  `json:"floor"`
	Sizes []PostgresSize `json:"sizes"`
}

// PostgresFloor is the floor a command on PostgreSQL stands on: one round
// trip over a connection already open (SELECT 1 on a held connection),
// one round trip that writes (Write: on the held connection, one implicit
// transaction that appends a row of floorPayload bytes to a table of its
// own and advances a head row, as a write appends its event and advances
// the log's head; floorTables), and a new connection (dial, start-up,
// authentication, one SELECT 1, close), as this process makes them with
// the driver awr uses, back to back (5 of each a round, interleaved): a
// backend that is never idle.
type PostgresFloor struct {
	RoundTrip Measurement `json:"round_trip"`
	Write     Measurement `json:"write"`
	Connect   Measurement `json:"connect"`
}

// PostgresSize is one workload on both stores.
type PostgresSize struct {
	Items int `json:"items"`
	// Events is the head of both twins' logs when the rounds began.
	Events int64 `json:"events"`
	// Key is the PostgreSQL twin's key in the database: a project of its
	// own, left there (the log is append-only).
	Key string `json:"key"`
	// Work is the item shown and checkpointed on; Claimed the one claimed
	// and let go each round; SearchWord the word searched.
	Work       string         `json:"work"`
	Claimed    string         `json:"claimed"`
	SearchWord string         `json:"search_word"`
	Ops        []PostgresOp   `json:"ops"`
	RoundTrips []PostgresTrip `json:"round_trips"`
	// BetweenCalls is the floor's round trip as the reads meet it: SELECT
	// 1 on a held connection timed as one more path in every read's
	// rounds, so that its backend sits idle between two trips as long as
	// a warm server's does between two calls (the other paths' calls, CLI
	// processes among them, run in between). WriteBetweenCalls is the
	// floor's write (PostgresFloor.Write) timed the same way in every
	// write's rounds, after an untimed SELECT 1, as the server's write
	// follows its untimed read. Every op's samples together; each op's
	// own median is its Trip.
	BetweenCalls      Measurement `json:"round_trip_between_calls"`
	WriteBetweenCalls Measurement `json:"write_between_calls"`
}

// PostgresOp is one command on one path, on the file and on PostgreSQL.
type PostgresOp struct {
	Op   string `json:"op"`
	Path string `json:"path"`
	// Commands are what ran, on the file and on PostgreSQL.
	File     Measurement `json:"file"`
	Postgres Measurement `json:"postgres"`
	Commands [2]string   `json:"commands"`
	// Added is PostgreSQL's median less the file's, AddedP95 the same of
	// their p95s, in ms; Trip is the median of the floor's round trip (a
	// write's, for a write) timed between the calls in the same rounds
	// (PostgresSize.BetweenCalls, WriteBetweenCalls), and RoundTrips is
	// Added over it.
	Added      float64 `json:"added_ms"`
	AddedP95   float64 `json:"added_p95_ms"`
	Trip       float64 `json:"round_trip_ms"`
	RoundTrips float64 `json:"added_round_trips"`
	// Bound is what the path may add (ms; the CLI at p50 and p95, the
	// resident server at p50: one round trip, Trip); Met is null where
	// there is none (the CLI connecting anew).
	Bound float64 `json:"bound_ms,omitempty"`
	Met   *bool   `json:"met"`
}

// PostgresTrip is what one command costs the network, counted on the
// connection (pgstore.Traffic): as a CLI process (a connection of its
// own, or one from the holder) and as one call of a warm server.
type PostgresTrip struct {
	Op          string `json:"op"`
	Connections int64  `json:"cli_connections"`
	CLI         int64  `json:"cli_round_trips"`
	Resident    int64  `json:"resident_round_trips"`
}

// comparePostgres is ComparePeer with the peer postgres: each workload
// of opts.Sizes is built once (`awr bench project`, init, PostgresHistory
// events of `bench generate`), copied, and the copy moved into the
// database at opts.Store under a key of its own (awr migrate); then, in
// interleaved rounds, status, ready, work show, search, context compile,
// a checkpoint and a claim (session start --claim, ended untimed) run on
// both twins as CLI processes (on PostgreSQL through the holder and
// connecting anew) and through a warm awr-mcp per twin on stdio and over
// HTTP (a write there after the same server's untimed read of the status,
// pgOp.writes). The floor (SELECT 1 on a held connection, a write on it,
// a new connection) is measured in the same run, back to back and, the
// round trip and the write, between the calls of every op's rounds; each
// command's connections and round trips are counted in process.
func comparePostgres(ctx context.Context, opts PeerOptions, dir string, res *PeerResult) error {
	if opts.Store == "" {
		return fault.New(fault.InvalidInput, "bench compare: --peer postgres needs --store URL, a database the comparison may write projects into").
			With("flag", "--store").WithHint("awr bench compare --peer postgres --store postgres://USER@HOST:5432/DB")
	}
	if err := intake.CheckStoreURL("--store", opts.Store); err != nil {
		return err
	}
	cfg, err := pgx.ParseConfig(opts.Store)
	if err != nil {
		return fault.New(fault.InvalidInput, "bench compare: --store: %v", err).
			With("flag", "--store").WithHint("awr bench compare --peer postgres --store postgres://USER@HOST:5432/DB")
	}
	host := cfg.Host
	if strings.HasPrefix(host, "/") {
		host = "socket " + host
	}
	pg := &PostgresResult{Store: fmt.Sprintf("%s:%d/%s as %s", host, cfg.Port, cfg.Database, cfg.User), Sizes: []PostgresSize{}}
	res.Postgres = pg
	c := &pgRun{ctx: ctx, opts: opts, history: PostgresHistory}
	if err := c.hold(); err != nil {
		return err
	}
	defer c.held.Close(context.WithoutCancel(ctx))
	pg.ServerVersion = c.held.PgConn().ParameterStatus("server_version")
	if err := c.floor(pg); err != nil {
		return err
	}
	stamp := time.Now().UTC().Format("20060102-150405")
	for _, n := range opts.Sizes {
		size, err := c.workload(filepath.Join(dir, strconv.Itoa(n)), n, fmt.Sprintf("awr-bench-%s-%d", stamp, n))
		if err != nil {
			return err
		}
		pg.Sizes = append(pg.Sizes, *size)
	}
	return nil
}

// pgRun is one comparison of the stores.
type pgRun struct {
	ctx  context.Context
	opts PeerOptions
	// history is the number of events generated into each workload.
	history int64
	// held is the connection the floor's round trips are timed on (hold);
	// run is the floor's row in floorTables' head, seq its last row.
	held *pgx.Conn
	run  string
	seq  int64
}

// floorTables are the tables the floor's write appends to and advances,
// in the database --store names (next to the twins' logs): a row of
// floorPayload bytes under the run's key, and the run's head row.
var floorTables = []string{
	`CREATE TABLE IF NOT EXISTS awr_bench_floor_rows (run text NOT NULL, seq bigint NOT NULL, payload bytea NOT NULL, PRIMARY KEY (run, seq))`,
	`CREATE TABLE IF NOT EXISTS awr_bench_floor_heads (run text PRIMARY KEY, seq bigint NOT NULL)`,
}

// floorPayload is the size of the floor's row, about a checkpoint's
// event.
const floorPayload = 512

// hold opens the connection the floor's round trips are timed on, and
// the floor's tables and head row; the connection is closed again when
// they cannot be made.
func (c *pgRun) hold() (err error) {
	if c.held, err = pgx.Connect(c.ctx, c.opts.Store); err != nil {
		return fault.Wrap(fault.Storage, err, "bench compare: connect to --store")
	}
	c.run = fmt.Sprintf("%d-%d", time.Now().UnixNano(), os.Getpid())
	exec := func(sql string, args ...any) error { _, err := c.held.Exec(c.ctx, sql, args...); return err }
	for _, stmt := range floorTables {
		if err = exec(stmt); err != nil {
			break
		}
	}
	if err == nil {
		err = exec(`INSERT INTO awr_bench_floor_heads (run, seq) VALUES ($1, 0)`, c.run)
	}
	if err != nil {
		c.held.Close(context.WithoutCancel(c.ctx))
		return fault.Wrap(fault.Storage, err, "bench compare: the floor's tables in --store")
	}
	return nil
}

// trip is one round trip of the floor on the held connection.
func (c *pgRun) trip() error {
	_, err := c.held.Exec(c.ctx, "SELECT 1")
	return err
}

// writeTrip is one round trip of the floor that writes (PostgresFloor.Write).
func (c *pgRun) writeTrip() error {
	c.seq++
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO awr_bench_floor_rows (run, seq, payload) VALUES ($1, $2, $3)`, c.run, c.seq, make([]byte, floorPayload))
	b.Queue(`UPDATE awr_bench_floor_heads SET seq = $2 WHERE run = $1`, c.run, c.seq)
	return c.held.SendBatch(c.ctx, b).Close()
}

func (c *pgRun) progress(s string) {
	if c.opts.Progress != nil {
		c.opts.Progress(s)
	}
}

// floor measures a round trip on the held connection, a write, and a new
// connection, back to back, interleaved, 5 of each a round.
func (c *pgRun) floor(pg *PostgresResult) error {
	c.progress("the floor: SELECT 1 on a held connection; a write; a new connection")
	connect := func() error {
		conn, err := pgx.Connect(c.ctx, c.opts.Store)
		if err != nil {
			return err
		}
		if _, err := conn.Exec(c.ctx, "SELECT 1"); err != nil {
			conn.Close(c.ctx)
			return err
		}
		return conn.Close(c.ctx)
	}
	fns := []func() error{c.trip, c.writeTrip, connect}
	ms := make([][]float64, len(fns))
	for round := -1; round < c.opts.Rounds; round++ {
		for range 5 {
			for i, fn := range fns {
				t0 := time.Now()
				if err := fn(); err != nil {
					return fault.Wrap(fault.Storage, err, "bench compare: the floor")
				}
				if round >= 0 {
					ms[i] = append(ms[i], float64(time.Since(t0).Microseconds())/1000)
				}
			}
		}
	}
	pg.Floor = PostgresFloor{RoundTrip: summarize("SELECT 1 on a held connection", "ms", ms[0]),
		Write:   summarize("a row appended and a head advanced, one transaction", "ms", ms[1]),
		Connect: summarize("a new connection and SELECT 1", "ms", ms[2])}
	return nil
}

// twin is one of the two copies of a workload.
type twin struct {
	dir     string
	p       *project.Project
	stdio   *resident
	web     *resident
	session string // the session the checkpoints are recorded in
}

func (t *twin) close() {
	for _, r := range []*resident{t.stdio, t.web} {
		if r != nil {
			r.Close()
		}
	}
	if t.p != nil {
		if t.session != "" {
			_, _ = t.p.SessionEnd(context.Background(), project.SessionEndRequest{SessionID: t.session, Outcome: events.OutcomeIncomplete, Agent: "bench-compare"})
		}
		t.p.Close()
	}
}

// workload builds the workload of n items under dir, its PostgreSQL twin
// under key, and measures both.
func (c *pgRun) workload(dir string, n int, key string) (*PostgresSize, error) {
	c.progress(fmt.Sprintf("%d items: build the workload and its twin in PostgreSQL (%s)", n, key))
	file, pg := &twin{dir: filepath.Join(dir, "file")}, &twin{dir: filepath.Join(dir, "postgres")}
	defer file.close()
	defer pg.close()
	if _, err := WriteProject(file.dir, n, 1); err != nil {
		return nil, err
	}
	if err := c.build(file.dir, n); err != nil {
		return nil, err
	}
	if err := copyTwin(file.dir, pg.dir); err != nil {
		return nil, fault.Wrap(fault.Storage, err, "bench compare: copy %s", file.dir)
	}
	if err := c.migrate(pg.dir, key); err != nil {
		return nil, err
	}
	var err error
	for _, t := range []*twin{file, pg} {
		if t.p, err = project.Open(c.ctx, t.dir, project.Options{}); err != nil {
			return nil, err
		}
	}
	items, err := workItems(c.ctx, file.p)
	if err != nil {
		return nil, err
	}
	two := 2
	ready, err := file.p.Ready(c.ctx, project.ReadyRequest{Limit: &two})
	if err != nil {
		return nil, err
	}
	if len(ready.Ready) < 2 {
		return nil, fault.New(fault.Internal, "bench compare: the workload of %d items has %d item(s) ready; the comparison claims two", n, len(ready.Ready))
	}
	size := &PostgresSize{Items: len(items), Key: key, Work: ready.Ready[0].Key, Claimed: ready.Ready[1].Key,
		SearchWord: titleWord(items[0].Title), Ops: []PostgresOp{}, RoundTrips: []PostgresTrip{}}
	for _, t := range []*twin{file, pg} {
		started, err := t.p.SessionStart(c.ctx, project.SessionStartRequest{Work: size.Work, Agent: "bench-compare", Claim: true, TTLms: new(int64(3_600_000))})
		if err != nil {
			return nil, err
		}
		t.session = started.Session.ID
	}
	st, err := file.p.Status(c.ctx, project.StatusRequest{})
	if err != nil {
		return nil, err
	}
	size.Events = st.ProjectRevision
	if c.opts.MCPExe != "" {
		for _, t := range []*twin{file, pg} {
			if t.stdio, err = startStdio(c.ctx, c.opts.MCPExe, t.dir); err != nil {
				return nil, fmt.Errorf("bench compare: awr-mcp stdio on %s: %w", t.dir, err)
			}
			if t.web, err = startHTTP(c.ctx, c.opts.MCPExe, t.dir, st.ProjectID); err != nil {
				return nil, fmt.Errorf("bench compare: awr-mcp http on %s: %w", t.dir, err)
			}
		}
	}
	var between, writes []float64
	for _, o := range c.ops(size) {
		ops, trips, err := c.measure(fmt.Sprintf("%d items: %s", n, o.name), o, file, pg)
		if err != nil {
			return nil, err
		}
		size.Ops = append(size.Ops, ops...)
		if o.writes {
			writes = append(writes, trips...)
		} else {
			between = append(between, trips...)
		}
	}
	size.BetweenCalls = summarize("SELECT 1 on a held connection, between the calls", "ms", between)
	size.WriteBetweenCalls = summarize("a row appended and a head advanced, between the calls", "ms", writes)
	trips, err := c.roundTrips(size, pg)
	if err != nil {
		return nil, err
	}
	size.RoundTrips = trips
	return size, nil
}

// build initializes the project at dir (awr init --accept) and appends
// c.history events to it (bench generate; none below PostgresHistoryFrom
// tasks), in process.
func (c *pgRun) build(dir string, tasks int) error {
	p, err := project.Open(c.ctx, dir, project.Options{})
	if err != nil {
		return err
	}
	defer p.Close()
	if _, err := p.Init(c.ctx, project.InitRequest{Accept: true}); err != nil {
		return err
	}
	st, err := p.EventLog(c.ctx)
	if err != nil {
		return err
	}
	if c.history > 0 && tasks >= PostgresHistoryFrom {
		_, err = Generate(c.ctx, st, GenerateOptions{Events: c.history, Agents: 8, Seed: 1})
	}
	return err
}

// copyTwin copies the project at dir into to (copyProject) with each
// file's modification time: a source whose size and time are those it
// was indexed with is fresh without being read, and the twins must read
// the same (a checkout whose times differ, as another machine's, reads and
// hashes every source before a claim).
func copyTwin(dir, to string) error {
	if err := copyProject(dir, to); err != nil {
		return err
	}
	return filepath.WalkDir(to, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(to, path)
		if err != nil {
			return err
		}
		fi, err := os.Stat(filepath.Join(dir, rel))
		if err != nil {
			return err
		}
		return os.Chtimes(path, fi.ModTime(), fi.ModTime())
	})
}

// migrate moves the project at dir into the database under key (awr
// migrate --to URL --key KEY), in process.
func (c *pgRun) migrate(dir, key string) error {
	p, err := project.Open(c.ctx, dir, project.Options{})
	if err != nil {
		return err
	}
	defer p.Close()
	_, err = p.Migrate(c.ctx, project.MigrateRequest{To: c.opts.Store, Key: key})
	return err
}

// pgOp is one command of the comparison: its CLI arguments and its tool
// (args made per call: a checkpoint's digest differs each time), what
// runs untimed after it (the end of a claim's session), and the same
// command in process, for the round trips.
type pgOp struct {
	name string
	// writes marks a write: through a warm server it is timed after an
	// untimed read of the status by the same server, as an agent reads
	// before it writes: the other paths write to the same twin between
	// its calls, and its cache would otherwise always be behind.
	writes bool
	cli    func() []string
	tool   string
	args   func() map[string]any
	after  func(t *twin, answer []byte) error
	inner  func(p *project.Project, session string) (undo func() error, err error)
}

// ops are the commands compared.
func (c *pgRun) ops(size *PostgresSize) []pgOp {
	k := 0
	digest := func() string { k++; return fmt.Sprintf("Store comparison step %d.", k) }
	limit := 200
	return []pgOp{
		{name: "status", cli: func() []string { return []string{"status", "--json"} }, tool: "awr_status", args: func() map[string]any { return map[string]any{} },
			inner: func(p *project.Project, _ string) (func() error, error) {
				_, err := p.Status(c.ctx, project.StatusRequest{})
				return nil, err
			}},
		{name: "ready", cli: func() []string { return []string{"ready", "--json"} }, tool: "awr_ready", args: func() map[string]any { return map[string]any{} },
			inner: func(p *project.Project, _ string) (func() error, error) {
				_, err := p.Ready(c.ctx, project.ReadyRequest{})
				return nil, err
			}},
		{name: "work show", cli: func() []string { return []string{"work", "show", size.Work, "--json"} }, tool: "awr_work_show",
			args: func() map[string]any { return map[string]any{"key": size.Work} },
			inner: func(p *project.Project, _ string) (func() error, error) {
				_, err := p.WorkShow(c.ctx, project.WorkShowRequest{Key: size.Work})
				return nil, err
			}},
		{name: "search", cli: func() []string { return []string{"search", size.SearchWord, "--limit", "200", "--json"} }, tool: "awr_search",
			args: func() map[string]any { return map[string]any{"query": size.SearchWord, "limit": 200} },
			inner: func(p *project.Project, _ string) (func() error, error) {
				_, err := p.Search(c.ctx, project.SearchRequest{Query: size.SearchWord, Limit: &limit})
				return nil, err
			}},
		{name: "context compile", cli: func() []string { return []string{"context", "compile", "--work", size.Work, "--json"} }, tool: "awr_context_compile",
			args: func() map[string]any { return map[string]any{"work": size.Work} },
			inner: func(p *project.Project, _ string) (func() error, error) {
				_, err := p.ContextCompile(c.ctx, project.ContextCompileRequest{Work: size.Work})
				return nil, err
			}},
		{name: "session checkpoint", writes: true, cli: func() []string {
			return []string{"session", "checkpoint", "--session", "SESSION", "--agent", "bench-compare", "--digest", digest(), "--next-action", "Take the next step", "--json"}
		}, tool: "awr_session_checkpoint", args: func() map[string]any {
			return map[string]any{"session": "SESSION", "agent": "bench-compare", "digest": digest(), "next_action": "Take the next step"}
		}, inner: func(p *project.Project, session string) (func() error, error) {
			_, err := p.SessionCheckpoint(c.ctx, project.SessionCheckpointRequest{SessionID: session, Agent: "bench-compare", Digest: digest(), NextAction: "Take the next step"})
			return nil, err
		}},
		{name: "claim (session start --claim)", writes: true, cli: func() []string {
			return []string{"session", "start", "--work", size.Claimed, "--agent", "bench-compare", "--claim", "--json"}
		}, tool: "awr_session_start", args: func() map[string]any {
			return map[string]any{"work": size.Claimed, "agent": "bench-compare", "claim": true}
		}, after: func(t *twin, answer []byte) error { return endStarted(c.ctx, t.p, answer) }, inner: func(p *project.Project, _ string) (func() error, error) {
			started, err := p.SessionStart(c.ctx, project.SessionStartRequest{Work: size.Claimed, Agent: "bench-compare", Claim: true})
			if err != nil {
				return nil, err
			}
			return func() error {
				_, err := p.SessionEnd(c.ctx, project.SessionEndRequest{SessionID: started.Session.ID, Outcome: events.OutcomeIncomplete, Agent: "bench-compare"})
				return err
			}, nil
		}},
	}
}

// withSession puts t's session where args say SESSION.
func withSession(args []string, session string) []string {
	out := append([]string(nil), args...)
	for i, a := range out {
		if a == "SESSION" {
			out[i] = session
		}
	}
	return out
}

// pgSide is one way of running an op on one twin.
type pgSide struct {
	path    string
	t       *twin
	command string
	// first runs untimed before each timed call, or is nil.
	first func() error
	timed func() ([]byte, error)
}

// measure runs o on every path of both twins in interleaved rounds (round
// i starts from side i mod the number of sides; one untimed round first
// when there are more than two), with the floor's round trip (its write,
// for a write) as one more path (PostgresSize.BetweenCalls,
// WriteBetweenCalls), and pairs each path's PostgreSQL samples with its
// file's. It returns them and the floor's samples.
func (c *pgRun) measure(step string, o pgOp, file, pg *twin) ([]PostgresOp, []float64, error) {
	c.progress(step)
	var sides []pgSide
	cli := func(t *twin, path string, env []string) pgSide {
		shown := append([]string{"awr", "--project", t.dir}, withSession(o.cli(), t.session)...)
		if len(env) > 0 {
			shown = append(append([]string{"env"}, env...), shown...)
		}
		return pgSide{path: path, t: t, command: strings.Join(shown, " "), timed: func() ([]byte, error) {
			return outputChild(c.ctx, c.opts.Exe, append([]string{"--project", t.dir}, withSession(o.cli(), t.session)...), env)
		}}
	}
	tool := func(t *twin, r *resident, path string) pgSide {
		how := "awr-mcp --project " + t.dir
		if r.Mode == "http" {
			how = "awr-mcp --listen (registry: " + t.dir + ")"
		}
		var first func() error
		if o.writes {
			first = func() error { _, err := r.Call("awr_status", map[string]any{}); return err }
		}
		return pgSide{path: path, t: t, command: how + ": " + o.tool + " " + mustJSON(o.args()), first: first, timed: func() ([]byte, error) {
			args := o.args()
			if args["session"] == "SESSION" {
				args["session"] = t.session
			}
			return r.Call(o.tool, args)
		}}
	}
	sides = append(sides, cli(file, PathCLI, nil), cli(pg, PathCLI, nil), cli(pg, PathDirect, []string{"AWR_STORE_HOLD=off"}))
	if file.stdio != nil {
		sides = append(sides, tool(file, file.stdio, PathStdio), tool(pg, pg.stdio, PathStdio), tool(file, file.web, PathHTTP), tool(pg, pg.web, PathHTTP))
	}
	floor := pgSide{path: "floor", command: "SELECT 1 on a held connection", timed: func() ([]byte, error) { return nil, c.trip() }}
	if o.writes {
		floor = pgSide{path: "floor", command: "a row appended and a head advanced on a held connection", first: c.trip,
			timed: func() ([]byte, error) { return nil, c.writeTrip() }}
	}
	sides = append(sides, floor)
	ms := make([][]float64, len(sides))
	first := 0
	if c.opts.Rounds > 2 {
		first = -1
	}
	for round := first; round < c.opts.Rounds; round++ {
		for k := range sides {
			i := (k + max(round, 0)) % len(sides)
			s := sides[i]
			if s.first != nil {
				if err := s.first(); err != nil {
					return nil, nil, fmt.Errorf("bench compare: %s: the read before: %w", s.command, err)
				}
			}
			t0 := time.Now()
			answer, err := s.timed()
			if err != nil {
				return nil, nil, fmt.Errorf("bench compare: %s: %w", s.command, err)
			}
			took := float64(time.Since(t0).Microseconds()) / 1000
			if o.after != nil && s.t != nil {
				if err := o.after(s.t, answer); err != nil {
					return nil, nil, err
				}
			}
			if round >= 0 {
				ms[i] = append(ms[i], took)
			}
		}
	}
	between := ms[len(sides)-1]
	return pairedOps(o, sides, ms, file, pg, summarize(floor.command+", between the calls", "ms", between).Median), between, nil
}

// pairedOps pairs each path's PostgreSQL samples (ms, by side) with its
// file's, beside trip, the floor's round trip between the calls.
func pairedOps(o pgOp, sides []pgSide, ms [][]float64, file, pg *twin, trip float64) []PostgresOp {
	var out []PostgresOp
	for _, path := range []string{PathCLI, PathDirect, PathStdio, PathHTTP} {
		var f, p = -1, -1
		for i, s := range sides {
			switch {
			case s.t == file && (s.path == path || (path == PathDirect && s.path == PathCLI)):
				f = i
			case s.t == pg && s.path == path:
				p = i
			}
		}
		if f < 0 || p < 0 {
			continue
		}
		op := PostgresOp{Op: o.name, Path: path, File: summarize("file", "ms", ms[f]), Postgres: summarize("postgres", "ms", ms[p]),
			Commands: [2]string{sides[f].command, sides[p].command}}
		op.Added = round2(op.Postgres.Median - op.File.Median)
		op.AddedP95 = round2(op.Postgres.P95 - op.File.P95)
		op.Trip = trip
		if trip > 0 {
			op.RoundTrips = round2(op.Added / trip)
		}
		switch path {
		case PathCLI:
			op.Bound = CLIBound
			met := op.Added <= CLIBound && op.AddedP95 <= CLIBound
			op.Met = &met
		case PathStdio, PathHTTP:
			op.Bound = round2(trip)
			met := op.Added <= trip
			op.Met = &met
		}
		out = append(out, op)
	}
	return out
}

// roundTrips counts, in process, what each op costs the network on the
// PostgreSQL twin: once opened as the CLI opens a project (one command,
// through a holder that runs), and once as a warm server's second call.
func (c *pgRun) roundTrips(size *PostgresSize, pg *twin) ([]PostgresTrip, error) {
	traffic := func(p *project.Project) (pgstore.Traffic, error) {
		st, err := p.EventLog(c.ctx)
		if err != nil {
			return pgstore.Traffic{}, err
		}
		up, ok := st.Upstream().(*pgstore.Store)
		if !ok {
			return pgstore.Traffic{}, fault.New(fault.Internal, "bench compare: %s: the twin's log is not in PostgreSQL", pg.dir)
		}
		return up.Traffic(), nil
	}
	resident, err := project.Open(c.ctx, pg.dir, project.Options{})
	if err != nil {
		return nil, err
	}
	defer resident.Close()
	// run runs o on p and returns what it cost p's store; what o leaves
	// to undo (a claim's session) is undone after the count.
	run := func(p *project.Project, o pgOp) (pgstore.Traffic, error) {
		before, err := traffic(p)
		if err != nil {
			return before, err
		}
		undo, err := o.inner(p, pg.session)
		if err != nil {
			return before, err
		}
		after, err := traffic(p)
		if undo != nil {
			if uerr := undo(); err == nil {
				err = uerr
			}
		}
		return pgstore.Traffic{Connections: after.Connections - before.Connections, RoundTrips: after.RoundTrips - before.RoundTrips}, err
	}
	var out []PostgresTrip
	for _, o := range c.ops(size) {
		p, err := project.Open(c.ctx, pg.dir, project.Options{OneCommand: true})
		if err != nil {
			return nil, err
		}
		// The project's log opens (connects, reads the head) on first
		// use: counted from before it, as a CLI process pays it.
		undo, err := o.inner(p, pg.session)
		var one pgstore.Traffic
		if err == nil {
			one, err = traffic(p)
		}
		if undo != nil {
			if uerr := undo(); err == nil {
				err = uerr
			}
		}
		p.Close()
		if err != nil {
			return nil, err
		}
		if _, err := run(resident, o); err != nil { // the warm-up call
			return nil, err
		}
		warm, err := run(resident, o)
		if err != nil {
			return nil, err
		}
		out = append(out, PostgresTrip{Op: o.name, Connections: one.Connections, CLI: one.RoundTrips, Resident: warm.RoundTrips})
	}
	return out, nil
}

// outputChild runs awr with args (env added to its environment) and
// returns its stdout.
func outputChild(ctx context.Context, exe string, args, env []string) ([]byte, error) {
	var stderr bytes.Buffer
	out, err := awrCommand(ctx, exe, args, env, &stderr).Output()
	if err != nil {
		return nil, childError("awr", args, err, &stderr)
	}
	return out, nil
}
