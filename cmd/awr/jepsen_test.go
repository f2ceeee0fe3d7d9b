package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/awr-dev/awr/events/pgstore/pgtest"
	"github.com/awr-dev/awr/fixtures"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// The claims model the history is checked against (issue #40, item 3):
// per work item, at most one live holder, fencing tokens strictly
// increasing, a lease judged by the server's clock.

// claimIn is an operation's input.
type claimIn struct {
	Op      string // acquire, renew, release, checkpoint
	Work    string
	Session string // "" for acquire: the session is its output
}

// claimOut is an operation's output: OK false when it was refused (it
// had no effect).
type claimOut struct {
	OK      bool
	Session string
	Token   int64
	Start   int64 // server time of the write (ms): expires - ttl
	Expires int64
}

// claimState is one work item's claim.
type claimState struct {
	LastToken    int64
	Holder       string // "" once released
	Expires      int64
	LastAcquirer string
}

var claimModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range h {
			w := op.Input.(claimIn).Work
			if _, ok := by[w]; !ok {
				keys = append(keys, w)
			}
			by[w] = append(by[w], op)
		}
		sort.Strings(keys)
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, by[k])
		}
		return out
	},
	Init: func() any { return claimState{} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(claimState), input.(claimIn), output.(claimOut)
		if !out.OK {
			return true, s
		}
		switch in.Op {
		case "acquire":
			// A new holder only when the item is free or its lease
			// lapsed by the server's clock, with a greater token.
			if out.Token <= s.LastToken || (s.Holder != "" && s.Expires > out.Start) {
				return false, s
			}
			return true, claimState{LastToken: out.Token, Holder: out.Session, Expires: out.Expires, LastAcquirer: out.Session}
		case "renew":
			if s.Holder != in.Session || s.LastAcquirer != in.Session {
				return false, s
			}
			s.Expires = out.Expires
			return true, s
		case "release":
			// A release names its session's own claim: the holder's frees
			// the item; one of a claim superseded after its lease lapsed
			// closes that old claim and leaves the new holder's alone.
			if s.Holder == in.Session {
				s.Holder = ""
			}
			return true, s
		case "checkpoint":
			// Only the latest claimant writes: a session fenced by a later
			// claim is refused.
			return s.LastAcquirer == in.Session, s
		}
		return false, s
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(claimIn), output.(claimOut)
		return fmt.Sprintf("%s %s %s -> %+v", in.Op, in.Work, in.Session, out)
	},
}

// link is one machine's network link to the server: a TCP front piped
// to the cluster's Unix socket. Where the test runs as root with ip(8)
// (CI), the machine is a network namespace of its own joined to the host
// by a veth pair, the front listens on the host's end, and a partition
// takes that link down: the machine's packets are dropped, its
// connections hang until their deadlines, as in a real partition.
// Elsewhere the front is on loopback, and a partition cuts every
// connection and refuses new ones.
type link struct {
	ln    net.Listener
	sock  string
	ns    string // the machine's network namespace, "" on loopback
	dev   string // the host's end of the veth pair
	mu    sync.Mutex
	down  bool
	conns map[net.Conn]bool
}

// netnsOK reports whether the test can make network namespaces: root,
// with ip(8).
func netnsOK() bool {
	if os.Getuid() != 0 {
		return false
	}
	_, err := exec.LookPath("ip")
	return err == nil
}

// ip runs ip(8) with args.
func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// machineNet makes machine m's namespace and its veth link to the host,
// removed when the test ends, and returns the namespace, the host's end
// and its address. Names and the /30 carry the process id, so that runs
// side by side do not meet.
func machineNet(t *testing.T, m int) (ns, dev, hostIP string) {
	t.Helper()
	id := os.Getpid() % 100000
	ns, dev, peer := fmt.Sprintf("awrj%dm%d", id, m), fmt.Sprintf("aj%dh%d", id, m), fmt.Sprintf("aj%dn%d", id, m)
	net3 := (id%60)*4 + m
	hostIP, nsIP := fmt.Sprintf("10.213.%d.1", net3), fmt.Sprintf("10.213.%d.2", net3)
	t.Cleanup(func() {
		_ = ip("link", "del", dev)
		_ = ip("netns", "del", ns)
	})
	for _, args := range [][]string{
		{"netns", "add", ns},
		{"link", "add", dev, "type", "veth", "peer", "name", peer},
		{"link", "set", peer, "netns", ns},
		{"addr", "add", hostIP + "/30", "dev", dev},
		{"link", "set", dev, "up"},
		{"-n", ns, "addr", "add", nsIP + "/30", "dev", peer},
		{"-n", ns, "link", "set", peer, "up"},
		{"-n", ns, "link", "set", "lo", "up"},
	} {
		require.NoError(t, ip(args...))
	}
	return ns, dev, hostIP
}

func newLink(t *testing.T, sock string, m int) *link {
	t.Helper()
	l := &link{sock: sock, conns: map[net.Conn]bool{}}
	addr := "127.0.0.1:0"
	if netnsOK() {
		var hostIP string
		l.ns, l.dev, hostIP = machineNet(t, m)
		addr = hostIP + ":0"
	}
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	l.ln = ln
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.mu.Lock()
			if l.down {
				l.mu.Unlock()
				c.Close()
				continue
			}
			l.conns[c] = true
			l.mu.Unlock()
			go l.pipe(c)
		}
	}()
	return l
}

// command is the awr command args run on the link's machine.
func (l *link) command(bin string, args ...string) *exec.Cmd {
	if l.ns == "" {
		return exec.Command(bin, args...)
	}
	return exec.Command("ip", append([]string{"netns", "exec", l.ns, bin}, args...)...)
}

func (l *link) pipe(c net.Conn) {
	defer func() {
		c.Close()
		l.mu.Lock()
		delete(l.conns, c)
		l.mu.Unlock()
	}()
	s, err := net.Dial("unix", l.sock)
	if err != nil {
		return
	}
	l.mu.Lock()
	l.conns[s] = true
	l.mu.Unlock()
	defer func() {
		s.Close()
		l.mu.Lock()
		delete(l.conns, s)
		l.mu.Unlock()
	}()
	// A side that ends ends the other, as a FIN or a reset crosses a
	// real link: a client killed mid-write is seen gone by its backend,
	// which rolls back and releases the head row's lock. (Copying only
	// until the server's side ended left such a backend idle in its
	// transaction, holding the lock, until the next restart or storm.)
	ended := make(chan struct{}, 2)
	go func() { io.Copy(s, c); ended <- struct{}{} }()
	go func() { io.Copy(c, s); ended <- struct{}{} }()
	<-ended
}

// setDown takes the link down (a partition of its machine) or up again.
func (l *link) setDown(down bool) error {
	if l.ns != "" {
		state := "up"
		if down {
			state = "down"
		}
		return ip("link", "set", l.dev, state)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.down = down
	if down {
		for c := range l.conns {
			c.Close()
		}
	}
	return nil
}

// TestShared_Jepsen (issue #40, item 3): three machines (checkouts, each
// reaching the server through a link of its own), twelve agents acquiring,
// renewing, releasing claims on four work items and checkpointing, while
// the test restarts the server, ends every connection
// (pg_terminate_backend storms), takes one machine's link down, kills awr
// processes mid-write (SIGKILL) and runs one machine's clock minutes
// ahead. Every operation is recorded with its invocation and return
// times as ok, fail or unknown; unknowns (a kill, a lost connection) are
// resolved from the shared log's request records (each write carries a
// request id). The history is checked with porcupine against the claims
// model; every acknowledged write is in the log; the log verifies. A few
// seconds by default, 60 s with AWR_LONG=1 (AWR_JEPSEN_DURATION sets
// another length, 10m for the long form of the issue).
//
// Each machine is a network namespace of its own with a veth link to the
// server's host where the test runs as root (CI); elsewhere its link is a
// TCP front on loopback (see link).
func TestShared_Jepsen(t *testing.T) {
	duration := 6 * time.Second
	if os.Getenv("AWR_LONG") == "1" {
		duration = 60 * time.Second
	}
	if d, err := time.ParseDuration(os.Getenv("AWR_JEPSEN_DURATION")); err == nil && d > 0 {
		duration = d
	}
	cl := pgtest.OwnCluster(t)
	bin := buildAWR(t)
	cl.CreateDatabase(t, "jepsen")
	ctx := context.Background()
	sock := filepath.Join(cl.Dir, ".s.PGSQL.5432")
	direct := fmt.Sprintf("postgres:///jepsen?host=%s&port=5432&user=postgres", cl.Dir)

	dir, err := fixtures.CopyProject("checkout", t.TempDir())
	require.NoError(t, err)
	items := []string{"W-1", "W-2", "W-3", "W-4"}
	var ledger strings.Builder
	ledger.WriteString("items:\n")
	for _, w := range items {
		fmt.Fprintf(&ledger, "  - id: %s\n    title: Item %s\n    status: planned\n    kind: feature\n    priority: p1\n    next_action: Do %s\n", w, w, w)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ledger", "work-ledger.yaml"), []byte(ledger.String()), 0o644))
	runJSON(t, awrIn(bin, dir)("init", "--name", "jepsen", "--store", direct, "--accept", "--json"), &struct{}{})
	manifest := manifestOf(t, dir)

	const machines, agents = 3, 12
	links := make([]*link, machines)
	dirs := make([]string, machines)
	for m := range machines {
		links[m] = newLink(t, sock, m)
		d, _ := machine(t, bin, manifest)
		require.NoError(t, os.WriteFile(filepath.Join(d, "ledger", "work-ledger.yaml"), []byte(ledger.String()), 0o644))
		dirs[m] = d
	}
	// The machines' connection holders live in a runtime directory of the
	// test's own, and end with it (their store's address is the test's
	// front, which .ci/pg-down does not know).
	runtime, err := os.MkdirTemp("/tmp", "awrj")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(runtime, 0o700))
	t.Cleanup(func() {
		for _, pid := range holders(t, runtime) {
			syscall.Kill(pid, syscall.SIGTERM)
		}
		os.RemoveAll(runtime)
	})
	const skew = 3 * time.Minute // machine 2's clock runs ahead
	start := time.Now()
	now := func() int64 { return int64(time.Since(start)) }
	// AWR_JEPSEN_TRACE=FILE writes, tab-separated, a line per operation
	// (its start in s, machine, command, duration, outcome, error), one
	// per fault, and every 2 s the database's sessions (their state, what
	// they wait on, how long their transaction has run): where a run's
	// time went.
	var trace *os.File
	if p := os.Getenv("AWR_JEPSEN_TRACE"); p != "" {
		trace, err = os.Create(p)
		require.NoError(t, err)
		defer trace.Close()
	}

	var (
		mu      sync.Mutex
		history []porcupine.Operation
		unknown []int // indexes into history of unknown outcomes
		running = map[*exec.Cmd]bool{}
		counts  = map[string]int{}
		reasons = map[string]int{} // why operations were unknown
		// The time the agents spent in operations, by outcome, and the
		// longest: where a run's time goes when a fault slows it.
		spent   = map[string]time.Duration{}
		longest = map[string]time.Duration{}
	)
	run := func(m int, args ...string) (out []byte, fe cliError, outcome string) {
		began := time.Now()
		defer func() {
			took := time.Since(began)
			mu.Lock()
			spent[outcome] += took
			longest[outcome] = max(longest[outcome], took)
			if trace != nil {
				fmt.Fprintf(trace, "%.3f\t%d\t%s\t%.3f\t%s\t%s\t%s\n", began.Sub(start).Seconds(), m, args[0]+" "+args[1], took.Seconds(), outcome, fe.Code, firstWords(fe.Message, 14))
			}
			mu.Unlock()
		}()
		cmd := links[m].command(bin, args...)
		cmd.Dir = dirs[m]
		addr := links[m].ln.Addr().String()
		host, port, _ := net.SplitHostPort(addr)
		cmd.Env = append(os.Environ(), "AWR_PROJECT="+dirs[m], "AWR_TIMEOUT=5s", "TZ=UTC", "NO_COLOR=1", "XDG_RUNTIME_DIR="+runtime,
			fmt.Sprintf("AWR_STORE=postgres://%s:%s/jepsen?sslmode=disable&user=postgres&connect_timeout=2", host, port))
		if m == 2 {
			cmd.Env = append(cmd.Env, fmt.Sprintf("AWR_TEST_NOW=%d", time.Now().Add(skew).UnixMilli()))
		}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			return nil, cliError{Message: err.Error()}, "unknown"
		}
		mu.Lock()
		running[cmd] = true
		mu.Unlock()
		err := cmd.Wait()
		mu.Lock()
		delete(running, cmd)
		mu.Unlock()
		var ee *exec.ExitError
		switch {
		case err == nil:
			return stdout.Bytes(), cliError{}, "ok"
		case errors.As(err, &ee) && ee.ExitCode() == 1 && json.Unmarshal(stderr.Bytes(), &fe) == nil:
			if fe.Code == "Storage" || fe.Code == "Internal" {
				mu.Lock()
				reasons[fe.Code+": "+firstWords(fe.Message, 12)]++
				mu.Unlock()
				return nil, fe, "unknown" // nothing written, or perhaps: the log says
			}
			return nil, fe, "fail"
		}
		mu.Lock()
		reasons["killed"]++
		mu.Unlock()
		return nil, cliError{Message: stderr.String()}, "unknown" // killed
	}
	record := func(agent int, in claimIn, call int64, out claimOut, outcome, rid string) {
		mu.Lock()
		defer mu.Unlock()
		counts[outcome]++
		op := porcupine.Operation{ClientId: agent, Input: in, Call: call, Output: out, Return: now(), Metadata: rid}
		if outcome == "unknown" {
			unknown = append(unknown, len(history))
		}
		history = append(history, op)
	}
	type claimJSON struct {
		Session struct{ ID string } `json:"session"`
		Claim   *struct {
			ExpiresAt    int64 `json:"expires_at"`
			TTLMs        int64 `json:"ttl_ms"`
			FencingToken int64 `json:"fencing_token"`
		} `json:"claim"`
	}

	if trace != nil {
		watching := make(chan struct{})
		defer close(watching)
		go func() {
			for {
				select {
				case <-watching:
					return
				case <-time.After(2 * time.Second):
				}
				c, err := pgx.Connect(ctx, direct)
				if err != nil {
					continue
				}
				rows, err := c.Query(ctx, `SELECT pid, coalesce(state,''), coalesce(wait_event_type,''), coalesce(wait_event,''), coalesce(extract(epoch from now()-xact_start)::text,''), left(query, 60) FROM pg_stat_activity WHERE datname = 'jepsen' AND pid <> pg_backend_pid()`)
				if err == nil {
					for rows.Next() {
						var pid int
						var st, wt, we, xa, q string
						if rows.Scan(&pid, &st, &wt, &we, &xa, &q) == nil {
							fmt.Fprintf(trace, "%.3f\tPG\t%d\t%s\t%s/%s\txact=%s\t%q\n", time.Since(start).Seconds(), pid, st, wt, we, xa, q)
						}
					}
					rows.Close()
				}
				c.Close(ctx)
			}
		}()
	}
	deadline := time.Now().Add(duration)
	var wg sync.WaitGroup
	for a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := a % machines
			rng := rand.New(rand.NewSource(int64(a)))
			for n := 0; time.Now().Before(deadline); n++ {
				w := items[rng.Intn(len(items))]
				rid := fmt.Sprintf("a%d-%d-acquire", a, n)
				call := now()
				out, _, outcome := run(m, "session", "start", "--work", w, "--agent", fmt.Sprintf("agent-%d", a), "--claim", "--ttl-ms", "2000", "--request-id", rid, "--json")
				var res claimOut
				if outcome == "ok" {
					var cj claimJSON
					if json.Unmarshal(out, &cj) != nil || cj.Claim == nil {
						outcome = "unknown"
					} else {
						res = claimOut{OK: true, Session: cj.Session.ID, Token: cj.Claim.FencingToken, Start: cj.Claim.ExpiresAt - cj.Claim.TTLMs, Expires: cj.Claim.ExpiresAt}
					}
				}
				record(a, claimIn{Op: "acquire", Work: w}, call, res, outcome, rid)
				if outcome != "ok" {
					time.Sleep(time.Duration(rng.Intn(200)) * time.Millisecond)
					continue
				}
				s := res.Session
				for k := range rng.Intn(3) + 1 {
					op := "checkpoint"
					args := []string{"session", "checkpoint", "--session", s, "--agent", fmt.Sprintf("agent-%d", a), "--digest", fmt.Sprintf("step %d of %s", k, rid), "--next-action", "go on"}
					if rng.Intn(2) == 0 {
						op = "renew"
						args = []string{"claim", "renew", "--session", s, "--ttl-ms", "2000"}
					}
					r := fmt.Sprintf("a%d-%d-%s-%d", a, n, op, k)
					call := now()
					out, _, outcome := run(m, append(args, "--request-id", r, "--json")...)
					res := claimOut{OK: outcome == "ok", Session: s}
					if op == "renew" && outcome == "ok" {
						var cj claimJSON
						if json.Unmarshal(out, &cj) == nil && cj.Claim != nil {
							res.Expires = cj.Claim.ExpiresAt
						} else {
							var renewed struct {
								ExpiresAt int64 `json:"expires_at"`
							}
							json.Unmarshal(out, &renewed)
							res.Expires = renewed.ExpiresAt
						}
					}
					record(a, claimIn{Op: op, Work: w, Session: s}, call, res, outcome, r)
				}
				if rng.Intn(3) > 0 {
					r := fmt.Sprintf("a%d-%d-release", a, n)
					call := now()
					_, _, outcome := run(m, "claim", "release", "--session", s, "--request-id", r, "--json")
					record(a, claimIn{Op: "release", Work: w, Session: s}, call, claimOut{OK: outcome == "ok", Session: s}, outcome, r)
				} // else the claim lapses
			}
		}()
	}

	// The nemesis.
	faults := map[string]int{}
	var kills atomic.Int64
	stop := make(chan struct{})
	var nemesis sync.WaitGroup
	nemesis.Add(2)
	go func() { // processes killed mid-write
		defer nemesis.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Second):
			}
			mu.Lock()
			for cmd := range running {
				if cmd.Process != nil && cmd.Process.Signal(syscall.SIGKILL) == nil {
					kills.Add(1)
				}
				break
			}
			mu.Unlock()
		}
	}()
	go func() {
		defer nemesis.Done()
		step := duration / 6
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(step):
			}
			if trace != nil {
				fmt.Fprintf(trace, "%.3f\tNEMESIS\t%d\n", time.Since(start).Seconds(), i%3)
			}
			switch i % 3 {
			case 0:
				if _, err := cl.Terminate("jepsen"); err == nil {
					faults["terminate storms"]++
				}
			case 1:
				m := i % machines
				if err := links[m].setDown(true); err != nil {
					t.Errorf("partition: %v", err)
				}
				faults["partitions"]++
				time.Sleep(step / 2)
				if trace != nil {
					fmt.Fprintf(trace, "%.3f\tNEMESIS\tup\n", time.Since(start).Seconds())
				}
				if err := links[m].setDown(false); err != nil {
					t.Errorf("partition: %v", err)
				}
			case 2:
				if err := cl.Restart(); err == nil {
					faults["server restarts"]++
				} else {
					t.Logf("restart: %v", err)
				}
			}
		}
	}()
	wg.Wait()
	t.Logf("agents done after %s", time.Since(start).Round(time.Millisecond))
	close(stop)
	nemesis.Wait()
	t.Logf("nemesis done")
	for _, l := range links {
		require.NoError(t, l.setDown(false))
	}

	// Resolve the unknowns from the shared log's request records.
	conn, err := pgx.Connect(ctx, direct)
	require.NoError(t, err)
	defer conn.Close(ctx)
	records := map[string]string{}
	rows, err := conn.Query(ctx, "SELECT request_id, result FROM awr_requests WHERE project = 'jepsen'")
	require.NoError(t, err)
	for rows.Next() {
		var id, result string
		require.NoError(t, rows.Scan(&id, &result))
		records[id] = result
	}
	require.NoError(t, rows.Err())
	end := int64(math.MaxInt64 / 2)
	resolved, vanished := 0, 0
	var final []porcupine.Operation
	isUnknown := map[int]bool{}
	for _, i := range unknown {
		isUnknown[i] = true
	}
	for i, op := range history {
		rid := op.Metadata.(string)
		result, landed := records[rid]
		if !isUnknown[i] {
			if op.Output.(claimOut).OK {
				require.True(t, landed, "acknowledged write %s is not in the log", rid)
			}
			final = append(final, op)
			continue
		}
		if !landed {
			vanished++
			continue // it never took effect
		}
		resolved++
		in := op.Input.(claimIn)
		out := claimOut{OK: true, Session: in.Session}
		var cj claimJSON
		require.NoError(t, json.Unmarshal([]byte(result), &cj), "%s", result)
		switch in.Op {
		case "acquire":
			require.NotNil(t, cj.Claim, "%s", result)
			out = claimOut{OK: true, Session: cj.Session.ID, Token: cj.Claim.FencingToken, Start: cj.Claim.ExpiresAt - cj.Claim.TTLMs, Expires: cj.Claim.ExpiresAt}
		case "renew":
			if cj.Claim != nil {
				out.Expires = cj.Claim.ExpiresAt
			} else {
				var renewed struct {
					ExpiresAt int64 `json:"expires_at"`
				}
				json.Unmarshal([]byte(result), &renewed)
				out.Expires = renewed.ExpiresAt
			}
		}
		op.Output, op.Return = out, end
		final = append(final, op)
	}
	t.Logf("checking %d operations", len(final))
	res, info := porcupine.CheckOperationsVerbose(claimModel, final, 2*time.Minute)
	t.Logf("checked: %s", res)
	if res != porcupine.Ok {
		f, _ := os.CreateTemp("", "awr-jepsen-*.html")
		if f != nil {
			porcupine.Visualize(claimModel, info, f)
			f.Close()
			t.Logf("visualization: %s", f.Name())
		}
	}
	// Fencing tokens strictly increase per item, in the log's order.
	tokens := map[string]int64{}
	rows, err = conn.Query(ctx, "SELECT payload FROM awr_events WHERE project = 'jepsen' AND kind = 'claim_acquired' ORDER BY seq")
	require.NoError(t, err)
	acquired := 0
	for rows.Next() {
		var payload []byte
		require.NoError(t, rows.Scan(&payload))
		var p struct {
			Work         string `json:"work"`
			FencingToken int64  `json:"fencing_token"`
		}
		require.NoError(t, json.Unmarshal(payload, &p))
		require.Greater(t, p.FencingToken, tokens[p.Work], "fencing token of %s", p.Work)
		tokens[p.Work] = p.FencingToken
		acquired++
	}
	require.NoError(t, rows.Err())
	var verify struct {
		OK bool `json:"ok"`
	}
	runJSON(t, awrIn(bin, dir)("verify", "--json"), &verify)
	nets := "TCP fronts on loopback"
	if links[0].ns != "" {
		nets = "network namespaces with veth links"
	}
	t.Logf("jepsen: %s, 3 machines (%s), %d agents: %d operations (%d ok, %d fail, %d unknown: %d took effect, %d did not), %d claims acquired; faults: %d processes killed, %v; porcupine: %s",
		duration, nets, agents, len(history), counts["ok"], counts["fail"], counts["unknown"], resolved, vanished, acquired, kills.Load(), faults, res)
	t.Logf("unknown because: %v", reasons)
	for _, o := range []string{"ok", "fail", "unknown"} {
		t.Logf("time in %s operations: %s in all, the longest %s", o, spent[o].Round(time.Millisecond), longest[o].Round(time.Millisecond))
	}
	require.True(t, verify.OK, "the log verifies")
	require.Equal(t, porcupine.Ok, res, "the history of claims is linearizable")
	require.Greater(t, counts["ok"], 0)
}

// firstWords is s cut to its first n words, for tallies.
func firstWords(s string, n int) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(n, len(f))], " ")
}

// TestClaimModel: the model the Jepsen test checks against refuses the
// histories it must: a second live holder, a token that does not
// increase, a checkpoint by a session fenced by a later claim; and
// accepts a claim taken after the lease lapsed by the server's clock.
func TestClaimModel(t *testing.T) {
	t.Parallel()
	op := func(client int, in claimIn, call, ret int64, out claimOut) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
	}
	acquire := func(client int, call, ret int64, session string, token, start int64) porcupine.Operation {
		return op(client, claimIn{Op: "acquire", Work: "W-1"}, call, ret, claimOut{OK: true, Session: session, Token: token, Start: start, Expires: start + 1000})
	}
	for name, tc := range map[string]struct {
		h    []porcupine.Operation
		want bool
	}{
		"TwoLiveHolders":    {[]porcupine.Operation{acquire(0, 0, 10, "a", 1, 100), acquire(1, 20, 30, "b", 2, 500)}, false},
		"AfterTheLease":     {[]porcupine.Operation{acquire(0, 0, 10, "a", 1, 100), acquire(1, 20, 30, "b", 2, 1100)}, true},
		"TokenNotIncreased": {[]porcupine.Operation{acquire(0, 0, 10, "a", 2, 100), acquire(1, 20, 30, "b", 2, 1500)}, false},
		"Released": {[]porcupine.Operation{acquire(0, 0, 10, "a", 1, 100),
			op(0, claimIn{Op: "release", Work: "W-1", Session: "a"}, 11, 12, claimOut{OK: true}), acquire(1, 20, 30, "b", 2, 200)}, true},
		"SupersededRelease": {[]porcupine.Operation{acquire(0, 0, 10, "a", 1, 100), acquire(1, 20, 30, "b", 2, 1500),
			op(0, claimIn{Op: "release", Work: "W-1", Session: "a"}, 40, 50, claimOut{OK: true}), acquire(2, 60, 70, "c", 3, 1600)}, false},
		"FencedRenew": {[]porcupine.Operation{acquire(0, 0, 10, "a", 1, 100), acquire(1, 20, 30, "b", 2, 1500),
			op(0, claimIn{Op: "renew", Work: "W-1", Session: "a"}, 40, 50, claimOut{OK: true, Expires: 3000})}, false},
		"FencedCheckpoint": {[]porcupine.Operation{acquire(0, 0, 10, "a", 1, 100), acquire(1, 20, 30, "b", 2, 1500),
			op(0, claimIn{Op: "checkpoint", Work: "W-1", Session: "a"}, 40, 50, claimOut{OK: true})}, false},
	} {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, tc.want, porcupine.CheckOperations(claimModel, tc.h))
		})
	}
}
