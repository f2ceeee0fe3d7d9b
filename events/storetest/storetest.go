// Package storetest is the conformance suite every awr event store passes:
// Exercise runs it against an events.Log, so the SQLite store and any
// later store (PostgreSQL) are held to one contract, the design's
// invariants of the log: an envelope that survives the round trip,
// gapless seqs, scoped optimistic concurrency, idempotent request ids,
// concurrent writers, reads at past revisions, the hash chain and time
// that runs forward.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
)

// Exercise runs the conformance suite against the store open returns, one
// subtest per property, in parallel.
//
// open must return a Log on t's database: the first call for a given t
// creates a new, empty database, and later calls with the same t open
// further instances on that same database, as other processes would. It
// registers each Log's Close with t.Cleanup (the suite may close a Log
// first; closing twice must be a no-op).
func Exercise(t *testing.T, open func(t *testing.T) events.Log) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, open func(t *testing.T) events.Log)
	}{
		{"EmptyLog", testEmptyLog},
		{"RoundTrip", testRoundTrip},
		{"GaplessSeq", testGaplessSeq},
		{"Rollback", testRollback},
		{"RevisionConflict", testRevisionConflict},
		{"RequestID", testRequestID},
		{"ConcurrentWriters", testConcurrentWriters},
		{"TimeTravel", testTimeTravel},
		{"HashChain", testHashChain},
		{"Scan", testScan},
		{"Close", testClose},
		{"DuplicateID", testDuplicateID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open)
		})
	}
}

// t0 is the suite's clock origin; writes move it forward explicitly.
var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// seeds gives every write its own entropy source, so concurrent writes
// never share one and ids never repeat.
var seeds atomic.Int64

func opts(now time.Time) events.WriteOptions {
	return events.WriteOptions{Now: now, Entropy: rand.New(rand.NewSource(seeds.Add(1))), Actor: "storetest"}
}

// Started is the session_started event of session id on work item W-1.
func Started(id string) events.NewEvent {
	return events.NewEvent{Stream: "session/" + id, Payload: events.SessionStarted{SessionID: id, Work: "W-1", Agent: "a"}}
}

// AppendAll appends evs to log in one write with options o; its result
// says how many it appended.
func AppendAll(ctx context.Context, log events.Log, o events.WriteOptions, evs ...events.NewEvent) (*events.WriteResult, error) {
	return log.Append(ctx, o, func(tx events.Appender) (any, error) {
		for _, ne := range evs {
			if _, err := tx.Append(ne); err != nil {
				return nil, err
			}
		}
		return map[string]int{"appended": len(evs)}, nil
	})
}

// write appends evs in one write with options o.
func write(t *testing.T, log events.Log, o events.WriteOptions, evs ...events.NewEvent) (*events.WriteResult, error) {
	t.Helper()
	return AppendAll(context.Background(), log, o, evs...)
}

// mustWrite is write that must succeed.
func mustWrite(t *testing.T, log events.Log, o events.WriteOptions, evs ...events.NewEvent) *events.WriteResult {
	t.Helper()
	res, err := write(t, log, o, evs...)
	require.NoError(t, err)
	require.False(t, res.Replayed)
	require.Len(t, res.Events, len(evs))
	return res
}

// All returns every event of log in seq order.
func All(t *testing.T, log events.Log) []*events.Event {
	t.Helper()
	var out []*events.Event
	require.NoError(t, log.Scan(context.Background(), 1, 1<<62, func(e *events.Event) error {
		out = append(out, e)
		return nil
	}))
	return out
}

// Head returns log's head.
func Head(t *testing.T, log events.Log) events.Head {
	t.Helper()
	h, err := log.Head(context.Background())
	require.NoError(t, err)
	return h
}

func zeroHash() []byte { return make([]byte, events.HashSize) }

func requireCode(t *testing.T, err error, code fault.Code) *fault.Error {
	t.Helper()
	require.Error(t, err)
	require.True(t, fault.Is(err, code), "want %s, got %v", code, err)
	return fault.As(err)
}

func testEmptyLog(t *testing.T, open func(t *testing.T) events.Log) {
	ctx := context.Background()
	log := open(t)
	require.Equal(t, events.Head{Revision: 0, Hash: zeroHash(), OccurredAt: 0}, Head(t, log))
	require.Empty(t, All(t, log))
	for _, rev := range []int64{0, -1} {
		require.NoError(t, log.ReadAt(ctx, rev, func(s events.Snapshot) error {
			require.Equal(t, events.Head{Revision: 0, Hash: zeroHash(), OccurredAt: 0}, s.Head())
			return s.Scan(1, 10, func(e *events.Event) error { return fmt.Errorf("event %d in an empty log", e.Seq) })
		}))
	}
	err := log.ReadAt(ctx, 1, func(s events.Snapshot) error { return nil })
	requireCode(t, err, fault.InvalidInput)

	// A write that appends nothing leaves the log empty.
	res, err := write(t, log, opts(t0))
	require.NoError(t, err)
	require.Zero(t, res.Revision)
	require.Empty(t, res.Events)
	require.Equal(t, int64(0), Head(t, log).Revision)
}

func testRoundTrip(t *testing.T, open func(t *testing.T) events.Log) {
	ctx := context.Background()
	log := open(t)
	o := opts(t0.Add(1500 * time.Millisecond))
	o.Actor, o.RequestID, o.Fingerprint = "agent-7", "req-round-trip", "fp"
	checkpoint := events.CheckpointRecorded{CheckpointID: "cp-1", SessionID: "s1", Work: "W-1", Agent: "a",
		Digest: "did é \"things\" <&>", NextAction: "next", OpenLoops: []string{"one", "two"}}
	claim := &events.ClaimAcquired{ClaimID: "c1", Work: "W-1", SessionID: "s1", Agent: "a", ExpiresAt: 1 << 50, FencingToken: 3}
	var ids []string
	res, err := log.Append(ctx, o, func(tx events.Appender) (any, error) {
		require.Equal(t, o.Now.UnixMilli(), tx.Now().UnixMilli())
		ids = append(ids, tx.NewID(), tx.NewID())
		require.NotEqual(t, ids[0], ids[1])
		for _, ne := range []events.NewEvent{
			Started("s1"),
			{Stream: "session/s1", Payload: checkpoint, ID: ids[0]},
			{Stream: "work/W-1", Payload: claim},
		} {
			if _, err := tx.Append(ne); err != nil {
				return nil, err
			}
		}
		require.EqualValues(t, 0, tx.StartRevision())
		require.EqualValues(t, 3, tx.Head())
		return map[string]string{"checkpoint": ids[0]}, nil
	})
	require.NoError(t, err)
	require.JSONEq(t, fmt.Sprintf(`{"checkpoint":%q}`, ids[0]), string(res.Result))
	require.EqualValues(t, 3, res.Revision)
	require.Len(t, res.Events, 3)

	want := []struct {
		kind    events.Kind
		stream  string
		version int64
		payload events.Payload
	}{
		{events.KindSessionStarted, "session/s1", 1, &events.SessionStarted{SessionID: "s1", Work: "W-1", Agent: "a"}},
		{events.KindCheckpointRecorded, "session/s1", 2, &checkpoint},
		{events.KindClaimAcquired, "work/W-1", 1, claim},
	}
	for i, e := range res.Events {
		w := want[i]
		require.EqualValues(t, i+1, e.Seq)
		require.NotEmpty(t, e.ID)
		require.Equal(t, w.kind, e.Kind)
		require.Equal(t, w.stream, e.Stream)
		require.Equal(t, w.version, e.StreamVersion)
		require.Equal(t, o.Now.UnixMilli(), e.OccurredAt)
		require.Equal(t, "agent-7", e.Actor)
		if i == 0 {
			require.Equal(t, "req-round-trip", e.RequestID, "the first event carries the request id")
		} else {
			require.Empty(t, e.RequestID, "only the first event carries the request id")
		}
		canonical, err := events.MarshalPayload(w.payload)
		require.NoError(t, err)
		require.Equal(t, string(canonical), string(e.Payload), "payloads are stored in canonical JSON")
		p, err := events.Decode(e)
		require.NoError(t, err)
		require.Equal(t, w.payload, p)
		require.Len(t, e.Hash, events.HashSize)
	}
	require.Equal(t, ids[0], res.Events[1].ID, "a given id is kept")
	require.NotEqual(t, res.Events[0].ID, res.Events[2].ID)

	// Every envelope field survives the store: a scan and a snapshot give
	// back exactly the events the write reported.
	require.Equal(t, res.Events, All(t, log))
	require.NoError(t, log.ReadAt(ctx, 3, func(s events.Snapshot) error {
		var got []*events.Event
		err := s.Scan(1, 3, func(e *events.Event) error { got = append(got, e); return nil })
		require.Equal(t, res.Events, got)
		return err
	}))
	require.Equal(t, events.Head{Revision: 3, Hash: res.Events[2].Hash, OccurredAt: o.Now.UnixMilli()}, Head(t, log))
}

func testGaplessSeq(t *testing.T, open func(t *testing.T) events.Log) {
	log := open(t)
	var appended []*events.Event
	for i := range 12 {
		var evs []events.NewEvent
		for j := range i % 4 { // 0 to 3 events per write
			evs = append(evs, Started(fmt.Sprintf("s%d", (i+j)%3)))
		}
		res := mustWrite(t, log, opts(t0.Add(time.Duration(i)*time.Second)), evs...)
		appended = append(appended, res.Events...)
		require.EqualValues(t, len(appended), res.Revision, "project_revision is the seq of the latest event")
		require.EqualValues(t, len(appended), Head(t, log).Revision)
		if n := len(res.Events); n > 0 {
			require.Equal(t, res.Revision, res.Events[n-1].Seq)
		}
	}
	got := All(t, log)
	require.Len(t, got, len(appended))
	versions := map[string]int64{}
	for i, e := range got {
		require.EqualValues(t, i+1, e.Seq, "seqs start at 1 and have no gaps")
		require.Equal(t, appended[i].ID, e.ID)
		versions[e.Stream]++
		require.Equal(t, versions[e.Stream], e.StreamVersion, "stream versions start at 1 and have no gaps")
	}
}

func testRollback(t *testing.T, open func(t *testing.T) events.Log) {
	ctx := context.Background()
	log := open(t)
	mustWrite(t, log, opts(t0), Started("s0"))
	before := Head(t, log)

	errChanged := errors.New("changed my mind")
	o := opts(t0.Add(time.Second))
	o.RequestID, o.Fingerprint = "req-rollback", "fp"
	for _, fnErr := range []error{errChanged, fault.New(fault.InvalidTransition, "refused")} {
		_, err := log.Append(ctx, o, func(tx events.Appender) (any, error) {
			for _, ne := range []events.NewEvent{Started("s1"), Started("s2")} {
				if _, err := tx.Append(ne); err != nil {
					return nil, err
				}
			}
			return nil, fnErr
		})
		require.ErrorIs(t, err, fnErr, "the error fn returned comes back")
		if coded := (*fault.Error)(nil); errors.As(fnErr, &coded) {
			require.Same(t, coded, fault.As(err), "a coded error comes back as is")
		}
		require.Equal(t, before, Head(t, log), "a failed write appends nothing")
	}
	_, err := write(t, log, o, events.NewEvent{Stream: "", Payload: events.SessionStarted{SessionID: "x"}})
	requireCode(t, err, fault.Internal)
	require.Equal(t, before, Head(t, log))

	// The failed writes did not use up the request id.
	res := mustWrite(t, log, o, Started("s1"))
	require.Equal(t, before.Revision+1, res.Revision)
}

func testRevisionConflict(t *testing.T, open func(t *testing.T) events.Log) {
	ctx := context.Background()
	log := open(t)
	a, b := Started("a"), Started("b")
	mustWrite(t, log, opts(t0), a) // seq 1 on session/a
	mustWrite(t, log, opts(t0), b) // seq 2 on session/b
	expect := func(rev int64, streams ...string) events.WriteOptions {
		o := opts(t0)
		o.ExpectedRevision, o.Streams = &rev, streams
		return o
	}

	// Events on another stream after R never conflict.
	res, err := write(t, log, expect(1, "session/a"), a) // seq 3 on session/a
	require.NoError(t, err, "an event on an unrelated stream after R must not conflict")
	require.EqualValues(t, 3, res.Revision)
	_, err = write(t, log, expect(0, "session/never-written"))
	require.NoError(t, err)
	_, err = write(t, log, expect(3, "session/a", "session/b"))
	require.NoError(t, err, "no stream has an event after the head")

	// A stream with an event after R conflicts, naming expected, actual
	// and every newer event; nothing is appended.
	for _, tc := range []struct {
		rev       int64
		streams   []string
		conflicts []events.Conflict
	}{
		{1, []string{"session/a"}, []events.Conflict{{Seq: 3, Kind: events.KindSessionStarted, Stream: "session/a"}}},
		{1, []string{"session/b", "session/c"}, []events.Conflict{{Seq: 2, Kind: events.KindSessionStarted, Stream: "session/b"}}},
		{0, []string{"session/a"}, []events.Conflict{
			{Seq: 1, Kind: events.KindSessionStarted, Stream: "session/a"},
			{Seq: 3, Kind: events.KindSessionStarted, Stream: "session/a"}}},
	} {
		_, err := write(t, log, expect(tc.rev, tc.streams...), Started("x"))
		fe := requireCode(t, err, fault.RevisionConflict)
		require.EqualValues(t, tc.rev, fe.Details["expected"])
		require.EqualValues(t, 3, fe.Details["actual"])
		require.Equal(t, tc.conflicts, fe.Details["conflicts"])
		require.EqualValues(t, 3, Head(t, log).Revision, "a conflicting write appends nothing")
	}

	// Guard checks streams learned while deciding, against the same R.
	_, err = log.Append(ctx, expect(2, "session/b"), func(tx events.Appender) (any, error) {
		if _, err := tx.Append(Started("c")); err != nil {
			return nil, err
		}
		require.NoError(t, tx.Guard("session/b", "session/c"), "the write's own events do not conflict")
		return nil, tx.Guard("session/a")
	})
	fe := requireCode(t, err, fault.RevisionConflict)
	require.Equal(t, []events.Conflict{{Seq: 3, Kind: events.KindSessionStarted, Stream: "session/a"}}, fe.Details["conflicts"])
	require.EqualValues(t, 3, Head(t, log).Revision)

	// An expected revision the log has not reached, or a negative one, is
	// invalid input.
	for _, rev := range []int64{4, -1} {
		_, err = write(t, log, expect(rev, "session/a"))
		requireCode(t, err, fault.InvalidInput)
	}
}

func testRequestID(t *testing.T, open func(t *testing.T) events.Log) {
	ctx := context.Background()
	log := open(t)
	mustWrite(t, log, opts(t0), Started("before"))
	o := opts(t0.Add(time.Second))
	o.RequestID, o.Fingerprint = "req-1", "fp-a"
	calls := 0
	appendOnce := func(o events.WriteOptions, id string) (*events.WriteResult, error) {
		return log.Append(ctx, o, func(tx events.Appender) (any, error) {
			calls++
			if _, err := tx.Append(Started(id)); err != nil {
				return nil, err
			}
			return map[string]any{"id": id, "rev": tx.Head()}, nil
		})
	}
	first, err := appendOnce(o, "s1")
	require.NoError(t, err)
	require.False(t, first.Replayed)
	require.Len(t, first.Events, 1)
	require.Equal(t, "req-1", first.Events[0].RequestID)
	mustWrite(t, log, opts(t0.Add(2*time.Second)), Started("after")) // the log moves on

	// Same id, same fingerprint: the first result, nothing appended.
	for range 2 {
		again, err := appendOnce(o, "s-other")
		require.NoError(t, err)
		require.True(t, again.Replayed)
		require.JSONEq(t, `{"id":"s1","rev":2}`, string(again.Result))
		require.JSONEq(t, string(first.Result), string(again.Result))
		require.Empty(t, again.Events)
		require.EqualValues(t, 3, again.Revision, "a replayed write reports the current revision")
	}
	require.Equal(t, 1, calls, "a repeated request does not run again")
	require.EqualValues(t, 3, Head(t, log).Revision)

	// Same id, another fingerprint: refused, nothing appended.
	o.Fingerprint = "fp-b"
	_, err = appendOnce(o, "s1")
	requireCode(t, err, fault.InvalidInput)
	require.EqualValues(t, 3, Head(t, log).Revision)
	require.Len(t, All(t, log), 3)

	// A request id needs a fingerprint.
	o.Fingerprint = ""
	o.RequestID = "req-2"
	_, err = appendOnce(o, "s2")
	requireCode(t, err, fault.Internal)
}

func testConcurrentWriters(t *testing.T, open func(t *testing.T) events.Log) {
	logs := []events.Log{open(t), open(t)} // two instances on one database
	const writers, writes = 4, 12
	type written struct {
		res    *events.WriteResult
		stream string
	}
	var (
		mu      sync.Mutex
		results []written
		errs    []error
		wg      sync.WaitGroup
	)
	for li, log := range logs {
		for g := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				stream := fmt.Sprintf("%d-%d", li, g)
				var last int64 // the revision this writer last saw
				for i := range writes {
					o := opts(t0.Add(time.Duration(i) * time.Millisecond))
					// Each writer guards its own stream: other writers'
					// events never conflict with it.
					seen := last
					o.ExpectedRevision, o.Streams = &seen, []string{"session/" + stream}
					evs := []events.NewEvent{Started(stream)}
					if i%3 == 0 {
						evs = append(evs, events.NewEvent{Stream: "work/" + stream, Payload: events.ClaimReleased{ClaimID: "c", Work: stream, Reason: events.ReleaseExplicit}})
					}
					if i == writes/2 {
						// One request id sent by every writer at about
						// the same time: exactly one appends.
						o.RequestID, o.Fingerprint = "req-shared", "fp"
						o.ExpectedRevision, o.Streams = nil, nil
						evs = []events.NewEvent{Started("shared")}
					}
					res, err := write(t, log, o, evs...)
					mu.Lock()
					if err != nil {
						errs = append(errs, fmt.Errorf("store %d writer %d write %d: %w", li, g, i, err))
					} else {
						results = append(results, written{res: res, stream: stream})
						last = res.Revision
					}
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	require.Empty(t, errs, "no write may fail: no busy errors, no conflicts between unrelated streams")

	ids := map[string]bool{}
	replayed := 0
	for _, w := range results {
		if w.res.Replayed {
			replayed++
			require.Empty(t, w.res.Events)
			continue
		}
		for _, e := range w.res.Events {
			require.False(t, ids[e.ID], "event %s reported twice", e.ID)
			ids[e.ID] = true
		}
	}
	require.Equal(t, 2*writers-1, replayed, "one shared request appends, every other send replays it")

	for _, log := range logs {
		got := All(t, log)
		require.Len(t, got, len(ids), "every committed event is in the log, once")
		var chain events.ChainCheck
		versions := map[string]int64{}
		for i, e := range got {
			require.EqualValues(t, i+1, e.Seq, "no gaps")
			require.True(t, ids[e.ID], "seq %d was not reported by any write", e.Seq)
			require.Empty(t, chain.Check(e), "seq %d", e.Seq)
			versions[e.Stream]++
			require.Equal(t, versions[e.Stream], e.StreamVersion, "seq %d", e.Seq)
		}
		require.Equal(t, events.Head{Revision: int64(len(got)), Hash: chain.Head(), OccurredAt: got[len(got)-1].OccurredAt}, Head(t, log))
	}
}

func testTimeTravel(t *testing.T, open func(t *testing.T) events.Log) {
	ctx := context.Background()
	log := open(t)
	heads := []events.Head{{Revision: 0, Hash: zeroHash()}}
	for i := range 8 {
		evs := []events.NewEvent{Started(fmt.Sprintf("s%d", i%3))}
		if i%2 == 1 {
			evs = append(evs, Started("odd"))
		}
		mustWrite(t, log, opts(t0.Add(time.Duration(i)*time.Minute)), evs...)
		heads = append(heads, Head(t, log))
	}
	full := All(t, log)
	for _, h := range heads {
		require.NoError(t, log.ReadAt(ctx, h.Revision, func(s events.Snapshot) error {
			require.Equal(t, h, s.Head(), "the snapshot's head is the log's head as it was at %d", h.Revision)
			var got []*events.Event
			if err := s.Scan(1, 1<<62, func(e *events.Event) error { got = append(got, e); return nil }); err != nil {
				return err
			}
			require.Equal(t, full[:h.Revision], append([]*events.Event{}, got...), "a read at %d sees exactly the log up to it", h.Revision)
			return s.Scan(h.Revision+1, 1<<62, func(e *events.Event) error {
				return fmt.Errorf("seq %d is after the snapshot's revision %d", e.Seq, h.Revision)
			})
		}))
	}
	err := log.ReadAt(ctx, int64(len(full))+1, func(s events.Snapshot) error { return nil })
	fe := requireCode(t, err, fault.InvalidInput)
	require.NotEmpty(t, fe.Message)

	// A snapshot does not see what is appended while it is open.
	last := heads[len(heads)-1]
	require.NoError(t, log.ReadAt(ctx, -1, func(s events.Snapshot) error {
		require.Equal(t, last, s.Head())
		mustWrite(t, log, opts(t0.Add(time.Hour)), Started("meanwhile"))
		n := 0
		err := s.Scan(1, 1<<62, func(e *events.Event) error { n++; return nil })
		require.Equal(t, len(full), n, "an event appended meanwhile is invisible to the snapshot")
		require.Equal(t, last, s.Head())
		return err
	}))
	require.Equal(t, last.Revision+1, Head(t, log).Revision)
}

func testHashChain(t *testing.T, open func(t *testing.T) events.Log) {
	log := open(t)
	// The clock of the third and fifth writes lags behind the log, as
	// the clock of a writer that read it before waiting for the lock does.
	clocks := []time.Duration{0, 5 * time.Second, 2 * time.Second, 9 * time.Second, 0, 9*time.Second + time.Millisecond}
	for i, c := range clocks {
		evs := []events.NewEvent{Started(fmt.Sprintf("s%d", i))}
		if i%2 == 0 {
			evs = append(evs, Started("even"))
		}
		res := mustWrite(t, log, opts(t0.Add(c)), evs...)
		for _, e := range res.Events {
			require.GreaterOrEqual(t, e.OccurredAt, t0.Add(c).UnixMilli())
		}
	}
	got := All(t, log)
	require.Equal(t, zeroHash(), got[0].PrevHash, "the first event chains from 32 zero bytes")
	var chain events.ChainCheck
	for i, e := range got {
		require.Equal(t, events.ComputeHash(e.PrevHash, e), e.Hash, "seq %d: the hash recomputes from the event", e.Seq)
		if i > 0 {
			require.Equal(t, got[i-1].Hash, e.PrevHash, "seq %d: prev_hash is the previous event's hash", e.Seq)
			require.GreaterOrEqual(t, e.OccurredAt, got[i-1].OccurredAt, "seq %d: occurred_at never decreases", e.Seq)
		}
		require.Empty(t, chain.Check(e))
	}
	require.Equal(t, t0.Add(5*time.Second).UnixMilli(), got[4].OccurredAt, "a lagging clock is raised to the head's time")
	require.Equal(t, t0.Add(9*time.Second+time.Millisecond).UnixMilli(), got[len(got)-1].OccurredAt, "a clock ahead of the head is kept")
	require.Equal(t, events.Head{Revision: int64(len(got)), Hash: got[len(got)-1].Hash, OccurredAt: got[len(got)-1].OccurredAt}, Head(t, log))
}

func testScan(t *testing.T, open func(t *testing.T) events.Log) {
	ctx := context.Background()
	log := open(t)
	for i := range 5 {
		mustWrite(t, log, opts(t0), Started(fmt.Sprintf("s%d", i)))
	}
	seqs := func(from, to int64) []int64 {
		out := []int64{}
		require.NoError(t, log.Scan(ctx, from, to, func(e *events.Event) error { out = append(out, e.Seq); return nil }))
		return out
	}
	require.Equal(t, []int64{2, 3, 4}, seqs(2, 4))
	require.Equal(t, []int64{4, 5}, seqs(4, 100), "a range past the head ends at the head")
	require.Equal(t, []int64{1, 2}, seqs(0, 2))
	require.Equal(t, []int64{}, seqs(4, 3), "an empty range yields nothing")
	require.Equal(t, []int64{}, seqs(6, 9))

	errEnough := errors.New("enough")
	n := 0
	err := log.Scan(ctx, 1, 5, func(e *events.Event) error {
		n++
		if e.Seq == 2 {
			return errEnough
		}
		return nil
	})
	require.ErrorIs(t, err, errEnough, "an error fn returns ends the scan and comes back")
	require.Equal(t, 2, n)
}

func testClose(t *testing.T, open func(t *testing.T) events.Log) {
	log := open(t)
	mustWrite(t, log, opts(t0), Started("s"))
	require.NoError(t, log.Close())
	require.NoError(t, log.Close(), "closing twice is a no-op")
	_, err := log.Head(context.Background())
	requireCode(t, err, fault.Storage)
	_, err = write(t, log, opts(t0), Started("late"))
	requireCode(t, err, fault.Storage)

	// The database outlives the instance: another opens it as it was.
	again := open(t)
	require.EqualValues(t, 1, Head(t, again).Revision)
}

func testDuplicateID(t *testing.T, open func(t *testing.T) events.Log) {
	log := open(t)
	first := mustWrite(t, log, opts(t0), Started("s1"))
	id := first.Events[0].ID
	before := Head(t, log)

	// An id already in the log is refused, and the write appends nothing,
	// not even its events before the refused one.
	_, err := write(t, log, opts(t0.Add(time.Second)), Started("s2"), events.NewEvent{Stream: "session/s3", Payload: events.SessionStarted{SessionID: "s3"}, ID: id})
	requireCode(t, err, fault.InvalidInput)
	require.Equal(t, before, Head(t, log))
	require.Len(t, All(t, log), 1)

	// A fresh id in the next write goes through.
	res := mustWrite(t, log, opts(t0.Add(2*time.Second)), Started("s2"))
	require.EqualValues(t, 2, res.Revision)
}
