package pgstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/events/pgstore"
	"github.com/awr-dev/awr/events/pgstore/pgtest"
	"github.com/awr-dev/awr/events/storetest"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func writeOpts(seed int64, now time.Time) events.WriteOptions {
	return events.WriteOptions{Now: now, Entropy: rand.New(rand.NewSource(seed)), Actor: "pgstore-test"}
}

// requireChain checks that evs are seqs 1..n of one sound hash chain with
// gapless stream versions, and that head is its head.
func requireChain(t *testing.T, evs []*events.Event, head events.Head) {
	t.Helper()
	var chain events.ChainCheck
	versions := map[string]int64{}
	for i, e := range evs {
		require.EqualValues(t, i+1, e.Seq, "no gaps")
		require.Empty(t, chain.Check(e), "seq %d", e.Seq)
		versions[e.Stream]++
		require.Equal(t, versions[e.Stream], e.StreamVersion, "seq %d", e.Seq)
	}
	require.Equal(t, int64(len(evs)), head.Revision)
	require.Equal(t, chain.Head(), head.Hash)
}

// requireSound checks log holds one sound chain (requireChain) up to its
// head.
func requireSound(t *testing.T, log events.Log) {
	t.Helper()
	requireChain(t, storetest.All(t, log), storetest.Head(t, log))
}

// Environment of the child process TestStore_TwoProcesses starts.
const (
	envChildURL    = "AWR_PGSTORE_CHILD_URL"
	envChildName   = "AWR_PGSTORE_CHILD_NAME"
	envChildWrites = "AWR_PGSTORE_CHILD_WRITES"
)

// TestStore_TwoProcesses runs two copies of this test binary that append
// to one project at once: every write either is acknowledged or fails
// cleanly, and the log is one gapless chain holding exactly the
// acknowledged events.
func TestStore_TwoProcesses(t *testing.T) {
	t.Parallel()
	dbURL := newDatabase(t)
	open(t, dbURL, "race").Close() // the schema exists before the children race
	const writes = 40
	type child struct {
		cmd *exec.Cmd
		out *strings.Builder
	}
	var children []child
	for _, name := range []string{"p1", "p2"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess_Append$", "-test.count=1")
		cmd.Env = append(os.Environ(), envChildURL+"="+dbURL, envChildName+"="+name, envChildWrites+"="+strconv.Itoa(writes))
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		require.NoError(t, cmd.Start())
		children = append(children, child{cmd, out})
	}
	acked := map[string]int64{} // event id -> seq, as its write reported it
	for _, c := range children {
		require.NoError(t, c.cmd.Wait(), "child: %s", c.out)
		n := 0
		sc := bufio.NewScanner(strings.NewReader(c.out.String()))
		for sc.Scan() {
			id, seq, ok := strings.Cut(sc.Text(), " ")
			if !ok || !strings.HasPrefix(id, "ack:") {
				continue
			}
			s, err := strconv.ParseInt(seq, 10, 64)
			require.NoError(t, err)
			acked[strings.TrimPrefix(id, "ack:")] = s
			n++
		}
		require.Equal(t, writes*2, n, "every write of the child is acknowledged: %s", c.out)
	}
	st := open(t, dbURL, "race")
	got := storetest.All(t, st)
	requireChain(t, got, storetest.Head(t, st))
	require.Len(t, got, len(acked), "the log holds exactly the acknowledged events")
	for _, e := range got {
		seq, ok := acked[e.ID]
		require.True(t, ok, "seq %d was not acknowledged by any write", e.Seq)
		require.Equal(t, seq, e.Seq, "event %s is at the seq its write reported", e.ID)
	}
}

// TestHelperProcess_Append is the child of TestStore_TwoProcesses; run
// alone it does nothing. It appends its writes (two events each, guarded
// by its own stream) and prints "ack:ID SEQ" for each acknowledged event.
func TestHelperProcess_Append(t *testing.T) {
	dbURL := os.Getenv(envChildURL)
	if dbURL == "" {
		return
	}
	name := os.Getenv(envChildName)
	writes, err := strconv.Atoi(os.Getenv(envChildWrites))
	require.NoError(t, err)
	ctx := context.Background()
	st, err := pgstore.Open(ctx, dbURL, pgstore.Options{Project: "race"})
	require.NoError(t, err)
	defer st.Close()
	var seen int64
	for i := range writes {
		o := writeOpts(int64(len(name))*1000+int64(i)+int64(name[1])*100000, t0.Add(time.Duration(i)*time.Millisecond))
		rev := seen
		o.ExpectedRevision, o.Streams = &rev, []string{"session/" + name}
		res, err := storetest.AppendAll(ctx, st, o, storetest.Started(name), events.NewEvent{Stream: "work/" + name, Payload: events.ClaimReleased{ClaimID: "c", Work: name, Reason: events.ReleaseExplicit}})
		require.NoError(t, err)
		for _, e := range res.Events {
			fmt.Printf("ack:%s %d\n", e.ID, e.Seq)
		}
		seen = res.Revision
	}
}

// TestStore_TerminatedMidTransaction ends a writer's connection from the
// server (pg_terminate_backend) after its events are inserted and before
// it commits: the write fails with Storage, no part of it is in the log,
// and the next write continues the chain.
func TestStore_TerminatedMidTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := newDatabase(t)
	st := open(t, dbURL, "p")
	_, err := storetest.AppendAll(ctx, st, writeOpts(1, t0), storetest.Started("before"))
	require.NoError(t, err)

	admin := ownerConn(t, dbURL)
	o := writeOpts(2, t0.Add(time.Second))
	o.RequestID, o.Fingerprint = "req-killed", "fp"
	_, err = st.Append(ctx, o, func(tx events.Appender) (any, error) {
		for _, id := range []string{"k1", "k2"} {
			if _, err := tx.Append(storetest.Started(id)); err != nil {
				return nil, err
			}
		}
		pid := tx.(*pgstore.Tx).Tx.Conn().PgConn().PID()
		var ok bool
		require.NoError(t, admin.QueryRow(ctx, "SELECT pg_terminate_backend($1)", pid).Scan(&ok))
		require.True(t, ok)
		return nil, nil
	})
	require.True(t, fault.Is(err, fault.Storage), "want Storage, got %v", err)
	require.Contains(t, err.Error(), "nothing was written")

	var rows, heads int64
	require.NoError(t, admin.QueryRow(ctx, "SELECT count(*) FROM awr_events").Scan(&rows))
	require.EqualValues(t, 1, rows, "no event of the terminated write is stored")
	require.NoError(t, admin.QueryRow(ctx, "SELECT seq FROM awr_heads WHERE project = 'p'").Scan(&heads))
	require.EqualValues(t, 1, heads, "the head did not move")
	require.NoError(t, admin.QueryRow(ctx, "SELECT count(*) FROM awr_requests").Scan(&rows))
	require.Zero(t, rows, "the request id was not used up")

	// The same store continues: the pool replaces the dead connection.
	res, err := storetest.AppendAll(ctx, st, o, storetest.Started("k1"))
	require.NoError(t, err)
	require.False(t, res.Replayed)
	require.EqualValues(t, 2, res.Revision)
	requireSound(t, st)
}

// TestStore_SameAsSQLite writes the same events with the same clock and
// entropy to a PostgreSQL store and a SQLite store: both logs hold the
// same events, byte for byte, with the same head hash.
func TestStore_SameAsSQLite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pg := open(t, newDatabase(t), "same")
	lite, err := events.Open(ctx, filepath.Join(t.TempDir(), ".awr", "awr.db"), events.Options{Create: true})
	require.NoError(t, err)
	t.Cleanup(func() { lite.Close() })

	checkpoint := events.CheckpointRecorded{CheckpointID: "cp-1", SessionID: "s1", Work: "W-1", Agent: "a",
		Digest: "did é \"things\" <&> \u2028", NextAction: "next", OpenLoops: []string{"one", "two"}}
	writes := []struct {
		clock time.Duration
		req   string
		evs   []events.NewEvent
	}{
		{0, "req-1", []events.NewEvent{storetest.Started("s1"), {Stream: "session/s1", Payload: checkpoint, ID: "01JCHECKPOINT0000000000000"}}},
		{-time.Second, "", []events.NewEvent{{Stream: "work/W-1", Payload: &events.ClaimAcquired{ClaimID: "c1", Work: "W-1", SessionID: "s1", Agent: "a", ExpiresAt: 1 << 50, FencingToken: 3}}}},
		{2 * time.Second, "req-2", []events.NewEvent{storetest.Started("s2"), storetest.Started("s1")}},
		{3 * time.Second, "", []events.NewEvent{{Stream: "work/W-1", Payload: events.ClaimReleased{ClaimID: "c1", Work: "W-1", Reason: events.ReleaseExplicit}}}},
	}
	for _, log := range []events.Log{pg, lite} {
		for i, w := range writes {
			o := writeOpts(int64(100+i), t0.Add(w.clock))
			if w.req != "" {
				o.RequestID, o.Fingerprint = w.req, "fp-"+w.req
			}
			_, err := storetest.AppendAll(ctx, log, o, w.evs...)
			require.NoError(t, err)
		}
	}
	fromPG, fromSQLite := storetest.All(t, pg), storetest.All(t, lite)
	require.Len(t, fromPG, 6)
	require.Equal(t, fromSQLite, fromPG, "the same events, envelope and bytes")
	for i := range fromPG {
		require.Equal(t, fromSQLite[i].ToEnvelope(), fromPG[i].ToEnvelope())
	}
	hp, hs := storetest.Head(t, pg), storetest.Head(t, lite)
	require.Equal(t, hs, hp, "the same head: revision, hash and time")
	requireChain(t, fromPG, hp)
	raw, err := json.Marshal(fromPG[0].ToEnvelope())
	require.NoError(t, err)
	require.Contains(t, string(raw), `"request_id":"req-1"`)
}

// TestStore_Projects keeps two projects' logs in one database apart: each
// has its own seqs, chain and head.
func TestStore_Projects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := newDatabase(t)
	a, b := open(t, dbURL, "alpha"), open(t, dbURL, "beta")
	for i := range 3 {
		_, err := storetest.AppendAll(ctx, a, writeOpts(int64(i), t0), storetest.Started(fmt.Sprintf("a%d", i)))
		require.NoError(t, err)
	}
	require.Equal(t, events.Head{Hash: make([]byte, events.HashSize)}, storetest.Head(t, b), "another project's events are not this one's")
	res, err := storetest.AppendAll(ctx, b, writeOpts(9, t0), storetest.Started("a0"))
	require.NoError(t, err)
	require.EqualValues(t, 1, res.Revision)
	require.EqualValues(t, 1, res.Events[0].StreamVersion, "stream versions are per project")
	requireSound(t, a)
	requireSound(t, b)
	require.EqualValues(t, 3, storetest.Head(t, a).Revision)
}

// TestOpen_NoLockWhenCurrent: opening a project whose database is at this
// awr's schema and holds its head takes no lock (one query), so a
// migration held open elsewhere never stalls ordinary commands; a new
// project (no head yet) still goes through the migration lock.
func TestOpen_NoLockWhenCurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := newDatabase(t)
	open(t, dbURL, "known").Close()
	admin := ownerConn(t, dbURL)
	const migrateLock = 0x6177722e7067 // "awr.pg", the store's migration lock
	_, err := admin.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(migrateLock))
	require.NoError(t, err)
	quick, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	s, err := pgstore.Open(quick, dbURL, pgstore.Options{Project: "known"})
	require.NoError(t, err, "a current database opens while the migration lock is held")
	s.Close()
	short, cancel2 := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel2()
	_, err = pgstore.Open(short, dbURL, pgstore.Options{Project: "new"})
	require.True(t, fault.Is(err, fault.Storage), "a new project waits for the lock: got %v", err)
	_, err = admin.Exec(ctx, "SELECT pg_advisory_unlock($1)", int64(migrateLock))
	require.NoError(t, err)
	s, err = pgstore.Open(ctx, dbURL, pgstore.Options{Project: "new"})
	require.NoError(t, err)
	require.Equal(t, events.Head{Hash: make([]byte, events.HashSize)}, storetest.Head(t, s))
	s.Close()
}

// TestOpen_SchemaNewer refuses a database that a newer awr migrated.
func TestOpen_SchemaNewer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := newDatabase(t)
	open(t, dbURL, "p").Close()
	admin := ownerConn(t, dbURL)
	_, err := admin.Exec(ctx, "INSERT INTO awr_schema_migrations (version) VALUES ($1)", pgstore.SchemaVersion()+1)
	require.NoError(t, err)
	_, err = pgstore.Open(ctx, dbURL, pgstore.Options{Project: "p"})
	require.True(t, fault.Is(err, fault.Storage), "got %v", err)
	require.Empty(t, fault.As(err).Hint)
	require.Contains(t, fault.As(err).Message, "upgrade awr")
}

// TestOpen_Unreachable needs no server: a server that is not there, or
// one that accepts connections and never answers, gives Storage with a
// pg_isready hint within the connect timeout, and no message shows the
// password.
func TestOpen_Unreachable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const password = "s3cret-Pw"
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer silent.Close()
	go func() { // accepts and holds connections, never speaks
		var held []net.Conn
		for {
			c, err := silent.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	port := silent.Addr().(*net.TCPAddr).Port
	for name, u := range map[string]string{
		"NoServer": fmt.Sprintf("postgres://awr:%s@/awr?host=%s&port=5999&sslmode=disable", password, t.TempDir()),
		"Silent":   fmt.Sprintf("postgres://awr:%s@127.0.0.1:%d/awr?sslmode=disable", password, port),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := pgstore.Open(ctx, u, pgstore.Options{Project: "p", ConnectTimeout: 300 * time.Millisecond})
			fe := fault.As(err)
			require.NotNil(t, fe, "want a coded error, got %v", err)
			require.Equal(t, fault.Storage, fe.Code)
			require.Contains(t, fe.Details["check"], "pg_isready -h ")
			obj, jerr := json.Marshal(fault.ObjectOf(err))
			require.NoError(t, jerr)
			for _, s := range []string{err.Error(), fmt.Sprint(fe.Details["check"]), string(obj), fmt.Sprintf("%+v", err)} {
				require.NotContains(t, s, password)
			}
		})
	}
	if serverURL := os.Getenv(pgtest.EnvURL); serverURL != "" {
		// A server that answers and refuses: the hint is not pg_isready.
		u, err := url.Parse(serverURL)
		require.NoError(t, err)
		u.Path = "/awr_no_such_database"
		_, err = pgstore.Open(ctx, u.String(), pgstore.Options{Project: "p"})
		require.True(t, fault.Is(err, fault.Storage), "got %v", err)
		require.Contains(t, fault.As(err).Details["check"], "createdb -h ")
	}
	_, err = pgstore.Open(ctx, "postgres://%zz", pgstore.Options{Project: "p"})
	require.True(t, fault.Is(err, fault.InvalidInput), "got %v", err)
	_, err = pgstore.Open(ctx, "postgres:///x", pgstore.Options{})
	require.True(t, fault.Is(err, fault.InvalidInput), "got %v", err)
}

// TestStore_AppendOnly refuses, in the database itself, an event that
// would leave a gap and any UPDATE or DELETE of an event.
func TestStore_AppendOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := newDatabase(t)
	st := open(t, dbURL, "p")
	_, err := storetest.AppendAll(ctx, st, writeOpts(1, t0), storetest.Started("s"))
	require.NoError(t, err)
	admin := ownerConn(t, dbURL)
	for _, stmt := range []string{
		"UPDATE awr_events SET actor = 'mallory'",
		"DELETE FROM awr_events",
		`INSERT INTO awr_events (project, seq, id, kind, stream, stream_version, occurred_at, actor, payload, prev_hash, hash)
		 SELECT project, 3, 'gap', kind, stream, 2, occurred_at, actor, payload, hash, hash FROM awr_events`,
	} {
		_, err := admin.Exec(ctx, stmt)
		require.Error(t, err, stmt)
	}
	requireSound(t, st)
	require.EqualValues(t, 1, storetest.Head(t, st).Revision)
}

// TestStore_LockWaitBoundedByCtx holds a project's head row from another
// connection: an append waits for it no longer than its ctx allows, then
// fails with Storage and writes nothing; once the row is free it goes
// through.
func TestStore_LockWaitBoundedByCtx(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := newDatabase(t)
	st := open(t, dbURL, "p")
	holder := ownerConn(t, dbURL)
	lock, err := holder.Begin(ctx)
	require.NoError(t, err)
	_, err = lock.Exec(ctx, "SELECT seq FROM awr_heads WHERE project = 'p' FOR UPDATE")
	require.NoError(t, err)

	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err = storetest.AppendAll(short, st, writeOpts(1, t0), storetest.Started("waits"))
	require.True(t, fault.Is(err, fault.Storage), "want Storage, got %v", err)
	require.Contains(t, err.Error(), "gave up waiting")
	require.NoError(t, lock.Rollback(ctx))

	res, err := storetest.AppendAll(ctx, st, writeOpts(2, t0), storetest.Started("after"))
	require.NoError(t, err)
	require.EqualValues(t, 1, res.Revision)
}

// TestStore_Notify wakes a listener on channel awr_events with
// "PROJECT:SEQ" when an append commits.
func TestStore_Notify(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := newDatabase(t)
	st := open(t, dbURL, "p")
	listener := ownerConn(t, dbURL)
	_, err := listener.Exec(ctx, "LISTEN awr_events")
	require.NoError(t, err)
	_, err = storetest.AppendAll(ctx, st, writeOpts(1, t0), storetest.Started("a"), storetest.Started("b"))
	require.NoError(t, err)
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	n, err := listener.WaitForNotification(wait)
	require.NoError(t, err)
	require.Equal(t, "awr_events", n.Channel)
	require.Equal(t, "p:2", n.Payload)
}

// TestOpen_Concurrent opens several stores at once on a new database: the
// schema is migrated once, and every store works.
func TestOpen_Concurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := newDatabase(t)
	const n = 6
	stores := make([]*pgstore.Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			stores[i], errs[i] = pgstore.Open(ctx, dbURL, pgstore.Options{Project: "p"})
		})
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		t.Cleanup(func() { stores[i].Close() })
	}
	admin := ownerConn(t, dbURL)
	var versions, heads int
	require.NoError(t, admin.QueryRow(ctx, "SELECT count(*) FROM awr_schema_migrations").Scan(&versions))
	require.Equal(t, pgstore.SchemaVersion(), versions, "each migration is applied once")
	require.NoError(t, admin.QueryRow(ctx, "SELECT count(*) FROM awr_heads").Scan(&heads))
	require.Equal(t, 1, heads)
	for i, st := range stores {
		res, err := storetest.AppendAll(ctx, st, writeOpts(int64(i), t0), storetest.Started(fmt.Sprintf("s%d", i)))
		require.NoError(t, err)
		require.EqualValues(t, i+1, res.Revision)
	}
}

const envKillURL = "AWR_PGSTORE_KILL_URL"

// TestStore_WriterKilled SIGKILLs a process in the middle of an append,
// after its events are inserted: the server rolls the transaction back,
// nothing of it is in the log, and the next writer takes the head lock and
// continues the chain.
func TestStore_WriterKilled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := newDatabase(t)
	st := open(t, dbURL, "p")
	_, err := storetest.AppendAll(ctx, st, writeOpts(1, t0), storetest.Started("before"))
	require.NoError(t, err)

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess_KilledMidAppend$", "-test.count=1")
	cmd.Env = append(os.Environ(), envKillURL+"="+dbURL)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stdout)
	inside := false
	for sc.Scan() {
		if sc.Text() == "inside the append" {
			inside = true
			break
		}
	}
	require.True(t, inside, "the child reached the middle of its append")
	require.NoError(t, cmd.Process.Kill())
	require.Error(t, cmd.Wait())

	res, err := storetest.AppendAll(ctx, st, writeOpts(2, t0.Add(time.Second)), storetest.Started("after"))
	require.NoError(t, err)
	require.EqualValues(t, 2, res.Revision, "the killed write left nothing behind")
	got := storetest.All(t, st)
	requireChain(t, got, storetest.Head(t, st))
	require.Equal(t, "session/after", got[1].Stream)
}

// TestHelperProcess_KilledMidAppend is the child of TestStore_WriterKilled;
// run alone it does nothing. It inserts two events, says so, and waits
// inside the append to be killed.
func TestHelperProcess_KilledMidAppend(t *testing.T) {
	dbURL := os.Getenv(envKillURL)
	if dbURL == "" {
		return
	}
	ctx := context.Background()
	st, err := pgstore.Open(ctx, dbURL, pgstore.Options{Project: "p"})
	require.NoError(t, err)
	_, err = st.Append(ctx, writeOpts(3, t0), func(tx events.Appender) (any, error) {
		for _, id := range []string{"k1", "k2"} {
			if _, err := tx.Append(storetest.Started(id)); err != nil {
				return nil, err
			}
		}
		fmt.Println("inside the append")
		select {} // until killed
	})
	t.Fatalf("the append returned: %v", err)
}

// TestStore_IdleLimit (issue #40): a write whose client stops talking
// while it holds the head row's lock (its machine froze, or lost its
// link with no word reaching the server) holds the other writers at most
// IdleLimit: the server ends that transaction, another machine's write
// goes through, and the stalled write, when its client comes back, fails
// with nothing written. A write made with WithoutIdleLimit sets no limit.
func TestStore_IdleLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := newDatabase(t)
	st, err := pgstore.Open(ctx, dbURL, pgstore.Options{Project: "p", IdleLimit: 300 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	other := open(t, dbURL, "p")
	_, err = storetest.AppendAll(ctx, st, writeOpts(1, t0), storetest.Started("before"))
	require.NoError(t, err)
	setting := func(tx events.Appender) (string, error) {
		var v string
		err := tx.(*pgstore.Tx).Tx.QueryRow(ctx, "SELECT current_setting('idle_in_transaction_session_timeout')").Scan(&v)
		return v, err
	}

	// Marked, the write keeps the server's setting (none here).
	var unmarked string
	_, err = st.Append(pgstore.WithoutIdleLimit(ctx), writeOpts(2, t0), func(tx events.Appender) (any, error) {
		unmarked, err = setting(tx)
		return nil, err
	})
	require.NoError(t, err)
	require.Equal(t, "0", unmarked)

	stalled, resume, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		_, err := st.Append(ctx, writeOpts(3, t0.Add(time.Second)), func(tx events.Appender) (any, error) {
			if v, err := setting(tx); err != nil || v != "300ms" {
				return nil, fmt.Errorf("idle_in_transaction_session_timeout is %q (%v)", v, err)
			}
			if _, err := tx.Append(storetest.Started("stalled")); err != nil {
				return nil, err
			}
			close(stalled)
			<-resume // silent, holding the lock
			return nil, nil
		})
		done <- err
	}()
	select {
	case <-stalled:
	case err := <-done:
		t.Fatalf("the stalled write ended early: %v", err)
	}
	// Another machine's write waits for the lock, which the server frees
	// once the stalled write has been idle for the limit.
	wait, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	res, err := storetest.AppendAll(wait, other, writeOpts(4, t0.Add(2*time.Second)), storetest.Started("after"))
	require.NoError(t, err, "the stalled write's lock was released")
	require.EqualValues(t, 2, res.Revision)
	close(resume)
	err = <-done
	require.True(t, fault.Is(err, fault.Storage), "want Storage, got %v", err)
	admin := ownerConn(t, dbURL)
	var stored int64
	require.NoError(t, admin.QueryRow(ctx, "SELECT count(*) FROM awr_events WHERE project = 'p'").Scan(&stored))
	require.EqualValues(t, 2, stored, "nothing of the stalled write is stored")
	requireSound(t, other)
}
