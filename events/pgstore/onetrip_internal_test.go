package pgstore

import (
	"context"
	"crypto/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/events/pgstore/pgtest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// TestOneTrip_SharedClock (issue #44, item 6): a write sealed before the
// lock takes the shared clock as last read, carried forward by this
// machine's. When that estimate is ahead of the shared clock (this
// machine's clock jumped forward), the shared log refuses the write as
// sealed: a lease is never judged at a time the shared clock has not
// reached, and no event is timed in its future. When it is behind by
// more than the bound (this machine's clock jumped back), the write is
// refused too. Either way the write is decided again under the lock,
// timed by the shared clock there.
func TestOneTrip_SharedClock(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	t.Parallel()
	ctx := context.Background()
	up, err := Open(ctx, dbURL, Options{Project: "p", ServerClock: true})
	require.NoError(t, err)
	st, err := events.Open(ctx, filepath.Join(t.TempDir(), "c.db"), events.Options{Create: true, Upstream: up})
	if err != nil {
		up.Close()
	}
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	admin, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close(ctx) })
	serverNow := func() int64 {
		var ms int64
		require.NoError(t, admin.QueryRow(ctx, "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint").Scan(&ms))
		return ms
	}
	n := 0
	write := func() (*events.WriteResult, int64) {
		t.Helper()
		n++
		before := up.Traffic().RoundTrips
		// The caller's clock, a day off, is never the write's: the
		// shared clock is.
		o := events.WriteOptions{Now: time.Now().Add(24 * time.Hour), Entropy: rand.Reader, Actor: "clock-test"}
		res, err := st.Write(ctx, o, func(tx *events.Tx) (any, error) {
			id := "S-" + string(rune('a'+n))
			_, err := tx.Append(events.NewEvent{Stream: "session/" + id, Payload: events.SessionStarted{SessionID: id, Work: "W-1", Agent: "a"}})
			return nil, err
		})
		require.NoError(t, err)
		require.Len(t, res.Events, 1)
		return res, up.Traffic().RoundTrips - before
	}
	write() // under the lock: it reads the shared clock
	write() // sealed before the lock
	from := serverNow()
	res, trips := write()
	require.EqualValues(t, 1, trips, "a warm store's write in one round trip")
	require.GreaterOrEqual(t, res.Events[0].OccurredAt, from-oneSecond, "timed by the shared clock")
	require.LessOrEqual(t, res.Events[0].OccurredAt, serverNow(), "timed by the shared clock")

	// This machine's clock jumps forward an hour: the write's estimate
	// of the shared clock is ahead of it.
	up.seen.offset.Add(3_600_000)
	from = serverNow()
	res, trips = write()
	to := serverNow()
	require.Greater(t, trips, int64(1), "refused as sealed, decided again under the lock")
	at := res.Events[0].OccurredAt
	require.LessOrEqual(t, at, to, "no event timed where the shared clock has not been")
	require.GreaterOrEqual(t, at, from, "timed by the shared clock at the lock")
	_, trips = write()
	require.EqualValues(t, 1, trips, "the lock read the shared clock again")

	// The check itself, on a write sealed on the head: refused when the
	// shared clock at the lock is before its time or past its time by
	// more than the bound, nothing written; committed within.
	for _, c := range []struct {
		name   string
		at     int64 // from the shared clock now, ms
		commit bool
	}{
		{"an hour ahead", 3_600_000, false},
		{"a minute past", -60_000, false},
		{"just past", -100, true},
		// A log whose last event is ahead of the shared clock (a write
		// of a store not on the server's clock): a write under the lock
		// takes that event's time, and so may one sealed before it.
		{"the head's time, an hour ahead", 0, true},
		{"past the head's time", 1, false},
	} {
		h, err := up.Head(ctx)
		require.NoError(t, err)
		if c.name == "the head's time, an hour ahead" {
			h = commitAhead(t, up, h)
		}
		at := time.UnixMilli(serverNow() + c.at).UTC()
		if h.OccurredAt > serverNow() {
			at = time.UnixMilli(h.OccurredAt + c.at).UTC()
		}
		o := events.WriteOptions{Now: at, Entropy: rand.Reader, Actor: "clock-test"}
		id := strings.ReplaceAll(c.name, " ", "-")
		e, err := events.Seal(events.NewEvent{Stream: "session/" + id, Payload: events.SessionStarted{SessionID: id, Work: "W-1", Agent: "a"}}, o, h, true,
			func(string) (int64, error) { return 0, nil })
		require.NoError(t, err)
		ok, err := commitSealed(t, up, ctx, events.SealedWrite{On: h, Clocked: true, At: at, Within: time.Second, Events: []*events.Event{e}})
		require.NoError(t, err, c.name)
		require.Equal(t, c.commit, ok, c.name)
		after, err := up.Head(ctx)
		require.NoError(t, err)
		if c.commit {
			require.Equal(t, e.Hash, after.Hash, c.name)
		} else {
			require.Equal(t, h, after, "%s: nothing written", c.name)
		}
	}
}

// commitSealed commits w on a connection reserved for it, as a warm
// cache's write does, and settles a lost answer.
func commitSealed(t *testing.T, up *Store, ctx context.Context, w events.SealedWrite) (bool, error) {
	t.Helper()
	r, err := up.Reserve(ctx)
	require.NoError(t, err)
	ok, err := r.CommitSealed(ctx, w)
	r.Release()
	if err != nil {
		return r.Settle(ctx)
	}
	return ok, nil
}

// commitAhead appends to up, after h, an event an hour ahead of the
// shared clock, unchecked by it, and returns the new head.
func commitAhead(t *testing.T, up *Store, h events.Head) events.Head {
	t.Helper()
	at := time.Now().Add(time.Hour).UTC()
	o := events.WriteOptions{Now: at, Entropy: rand.Reader, Actor: "clock-test"}
	e, err := events.Seal(events.NewEvent{Stream: "session/ahead", Payload: events.SessionStarted{SessionID: "ahead", Work: "W-1", Agent: "a"}}, o, h, true,
		func(string) (int64, error) { return 0, nil })
	require.NoError(t, err)
	ok, err := commitSealed(t, up, context.Background(), events.SealedWrite{On: h, At: at, Events: []*events.Event{e}})
	require.NoError(t, err)
	require.True(t, ok, "a write not on the shared clock is not checked against it")
	return events.Head{Revision: e.Seq, Hash: e.Hash, OccurredAt: e.OccurredAt}
}

// oneSecond is a second in milliseconds: the slack of a clock read
// before a write against the write's own reading.
const oneSecond = 1000

// TestOneTrip_LateFailureWritesNothing: a batch whose last statement
// fails (the request record, its id taken already) after its inserts and
// the head's advance ran writes nothing: the implicit transaction is
// rolled back whole.
func TestOneTrip_LateFailureWritesNothing(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	t.Parallel()
	ctx := context.Background()
	up, err := Open(ctx, dbURL, Options{Project: "p"})
	require.NoError(t, err)
	t.Cleanup(func() { up.Close() })
	commit := func(id string) (bool, events.Head, *events.Event) {
		t.Helper()
		h, err := up.Head(ctx)
		require.NoError(t, err)
		o := events.WriteOptions{Now: time.Now().UTC(), Entropy: rand.Reader, Actor: "late", RequestID: "req-dup", Fingerprint: id}
		e, err := events.Seal(events.NewEvent{Stream: "session/" + id, Payload: events.SessionStarted{SessionID: id, Work: "W-1", Agent: "a"}}, o, h, true,
			func(string) (int64, error) { return 0, nil })
		require.NoError(t, err)
		e.RequestID = "" // the record alone carries the id: its insert comes last
		ok, err := commitSealed(t, up, ctx, events.SealedWrite{On: h, At: o.Now, Events: []*events.Event{e},
			Request: &events.RequestRecord{ID: "req-dup", Fingerprint: id, FirstSeq: e.Seq, LastSeq: e.Seq, Result: []byte(`{}`)}})
		require.NoError(t, err)
		return ok, h, e
	}
	ok, _, _ := commit("first")
	require.True(t, ok)
	ok, h, e := commit("second")
	require.False(t, ok, "the request id is taken: refused")
	after, err := up.Head(ctx)
	require.NoError(t, err)
	require.Equal(t, h, after, "the head's advance rolled back")
	var n int
	require.NoError(t, up.pool.QueryRow(ctx, "SELECT count(*) FROM awr_events WHERE project = 'p' AND id = $1", e.ID).Scan(&n))
	require.Zero(t, n, "the insert rolled back")
}

// TestOneTrip_LockOrder (issue #44 item 6): a write sealed before the
// lock never waits, under its cache's write lock, for what a writer of
// the same store holding the shared log's lock may hold. Here a writer
// (first) waits for the head row, held by another connection, holding
// one of the pool's connections; a warm write (second) takes the cache's
// write lock while the rest of the pool is taken (other writers, other
// readers of the same server), and the head row is let go: first holds
// the shared log's lock and waits for the cache's, and the pool's
// connections come back only once first is done. A sealed write that
// took its connection under the cache's lock (pgw44b) waited for one
// there: a deadlock, ended here by the bounded ctx with second's write
// failing. Taken before the cache's lock, the connection is second's
// own: its batch is refused (NOWAIT) or commits, and both writes go
// through.
func TestOneTrip_LockOrder(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	t.Parallel()
	// Bounded: a deadlock fails the test instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	up, err := Open(ctx, dbURL, Options{Project: "p"})
	require.NoError(t, err)
	st, err := events.Open(ctx, filepath.Join(t.TempDir(), "c.db"), events.Options{Create: true, Upstream: up})
	if err != nil {
		up.Close()
	}
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	write := func(id string, inCache func()) error {
		o := events.WriteOptions{Now: time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC), Entropy: rand.Reader, Actor: "order"}
		_, err := st.Write(ctx, o, func(tx *events.Tx) (any, error) {
			if inCache != nil {
				inCache()
			}
			_, err := tx.Append(events.NewEvent{Stream: "session/" + id, Payload: events.SessionStarted{SessionID: id, Work: "W-1", Agent: "a"}})
			return nil, err
		})
		return err
	}
	// Warm: the first write takes the lock and reads the shared clock.
	require.NoError(t, write("warm-1", nil))
	require.NoError(t, write("warm-2", nil))

	holder, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	t.Cleanup(func() { holder.Close(context.Background()) })
	watch, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	t.Cleanup(func() { watch.Close(context.Background()) })
	row, err := holder.Begin(ctx)
	require.NoError(t, err)
	_, err = row.Exec(ctx, "SELECT seq FROM awr_heads WHERE project = 'p' FOR UPDATE")
	require.NoError(t, err)

	firstDone := make(chan error, 1)
	go func() { firstDone <- write("first", nil) }()
	// first's batch was refused (the row is held): it waits for the row
	// under the lock, on a connection of the pool.
	for {
		var waiting int
		require.NoError(t, watch.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'").Scan(&waiting))
		if waiting == 1 {
			break
		}
		select {
		case err := <-firstDone:
			t.Fatalf("first did not wait for the head row: %v", err)
		case <-ctx.Done():
			t.Fatal("first never waited for the head row")
		case <-time.After(10 * time.Millisecond):
		}
	}

	var held []*pgxpool.Conn
	released := make(chan struct{})
	once := false
	err = write("second", func() {
		if once {
			return
		}
		once = true
		// Under the cache's write lock: the pool's other connections
		// taken until first is done, and the head row let go.
		stat := up.pool.Stat()
		for range stat.MaxConns() - stat.AcquiredConns() {
			c, err := up.pool.Acquire(ctx)
			require.NoError(t, err)
			held = append(held, c)
		}
		go func() {
			defer close(released)
			err := <-firstDone
			for _, c := range held {
				c.Release()
			}
			firstDone <- err
		}()
		require.NoError(t, row.Commit(ctx))
	})
	require.NoError(t, err, "second: the sealed write waited, under the cache's lock, for a connection first's write held")
	<-released
	require.NoError(t, <-firstDone, "first")
	h, err := st.CatchUp(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 4, h, "both writes in the log")
}

// TestOneTrip_WaitsForNoLock: under its cache's write lock, a sealed
// write waits only a moment (sealedLockWait) for a table's lock another
// transaction holds or has queued (a migration's, here held outright):
// its batch is refused, nothing written, and the write is decided under
// the lock, where it may wait. Without the bound it waited as long as
// the migration, which may itself wait for a writer of this machine
// waiting for the cache's lock.
func TestOneTrip_WaitsForNoLock(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	t.Parallel()
	// Bounded: a wait without end fails the test instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	up, err := Open(ctx, dbURL, Options{Project: "p"})
	require.NoError(t, err)
	t.Cleanup(func() { up.Close() })
	h, err := up.Head(ctx)
	require.NoError(t, err)
	holder, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	t.Cleanup(func() { holder.Close(context.Background()) })
	migration, err := holder.Begin(ctx)
	require.NoError(t, err)
	_, err = migration.Exec(ctx, "LOCK TABLE awr_requests IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)

	o := events.WriteOptions{Now: time.Now().UTC(), Entropy: rand.Reader, Actor: "locked-out", RequestID: "req-1", Fingerprint: "fp"}
	e, err := events.Seal(events.NewEvent{Stream: "session/S-1", Payload: events.SessionStarted{SessionID: "S-1", Work: "W-1", Agent: "a"}}, o, h, true,
		func(string) (int64, error) { return 0, nil })
	require.NoError(t, err)
	w := events.SealedWrite{On: h, At: o.Now, Events: []*events.Event{e},
		Request: &events.RequestRecord{ID: "req-1", Fingerprint: "fp", FirstSeq: e.Seq, LastSeq: e.Seq, Result: []byte(`{}`)}}
	ok, err := commitSealed(t, up, ctx, w)
	require.NoError(t, ctx.Err(), "the sealed write waited for the table's lock")
	require.NoError(t, err)
	require.False(t, ok, "refused: the request records' table is locked")
	after, err := up.Head(ctx)
	require.NoError(t, err)
	require.Equal(t, h, after, "nothing written")

	require.NoError(t, migration.Rollback(ctx))
	ok, err = commitSealed(t, up, ctx, w)
	require.NoError(t, err)
	require.True(t, ok, "the table free, the same write commits")
}
