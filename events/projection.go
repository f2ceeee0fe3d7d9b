package events

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/awr-dev/awr/internal/fault"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// Projector is a read model folded from events. The store applies every
// registered projector to every appended event inside the append's
// transaction, records the last seq each one applied, and rebuilds a
// projector from the log when its Version changes.
type Projector interface {
	// Name identifies the projection; it is stored in the projections table.
	Name() string
	// Version changes whenever the projection's tables or folding change.
	Version() int
	// Reset drops the projection's tables and creates them empty.
	Reset(conn *sqlite.Conn) error
	// Apply folds one event, given with its payload as Decode returns it
	// (decoded once by the store for every projector). It must be
	// deterministic: it may read only the event, its payload and the
	// projection's own tables, never the clock.
	Apply(conn *sqlite.Conn, e *Event, payload Payload) error
}

// BulkProjector is a Projector that rebuilds faster from scratch: between
// BeginBulk and EndBulk it may hold state in memory and defer its secondary
// indexes. The tables it leaves must equal those incremental Apply builds.
type BulkProjector interface {
	Projector
	// BeginBulk drops and recreates the tables (indexes may wait).
	BeginBulk(conn *sqlite.Conn) error
	// EndBulk writes what is held in memory and creates the indexes.
	EndBulk(conn *sqlite.Conn) error
}

// syncProjections rebuilds every projector whose stored version differs or
// that lags the head. A projection ahead of the head (events were cut from
// the log behind awr's back) is left alone as evidence for `awr verify`.
func (s *Store) syncProjections(ctx context.Context, progress func(done, total int64)) error {
	if len(s.projectors) == 0 {
		return nil
	}
	var retired []string
	var stale []Projector
	if err := s.Read(ctx, func(r *Reader) (err error) {
		retired, stale, err = projectionWork(r.Conn, s.projectors, r.Head, s.rebuildMissing)
		return err
	}); err != nil {
		return err
	}
	if err := s.forgetRetired(ctx, retired); err != nil {
		return err
	}
	if len(stale) == 0 {
		return nil
	}
	return s.rebuild(ctx, stale, progress, true)
}

// projectionWork reads the projections' bookkeeping on conn, at head, once:
// retired names the projections with bookkeeping that are not among ps,
// stale the projectors of ps that are missing, of another version, behind
// head, or among damaged (missing a schema object).
func projectionWork(conn *sqlite.Conn, ps []Projector, head int64, damaged []Projector) (retired []string, stale []Projector, err error) {
	states, err := ProjectionStates(conn)
	if err != nil {
		return nil, nil, err
	}
	byName := make(map[string]ProjectionState, len(states))
	for _, st := range states {
		byName[st.Name] = st
	}
	for _, p := range ps {
		st, ok := byName[p.Name()]
		if !ok || st.Version != p.Version() || st.LastSeq < head || damagedProjector(p, damaged) {
			stale = append(stale, p)
		}
		delete(byName, p.Name())
	}
	for _, st := range states {
		if _, left := byName[st.Name]; left {
			retired = append(retired, st.Name)
		}
	}
	return retired, stale, nil
}

// damagedProjector reports whether p is among damaged.
func damagedProjector(p Projector, damaged []Projector) bool {
	for _, d := range damaged {
		if d.Name() == p.Name() {
			return true
		}
	}
	return false
}

// forgetRetired removes the bookkeeping of projections this awr no longer
// has, so they are not reported as stale.
func (s *Store) forgetRetired(ctx context.Context, retired []string) error {
	if len(retired) == 0 {
		return nil
	}
	// Bookkeeping of this file, never the shared log's.
	_, err := s.writeLocal(ctx, WriteOptions{Now: time.Unix(0, 0), Entropy: strings.NewReader(""), Actor: "awr"}, func(tx *Tx) (any, error) {
		for _, name := range retired {
			st := prep(tx.Conn, "projection_delete")
			st.SetText(":name", name)
			_, err := st.Step()
			st.Reset()
			if err != nil {
				return nil, err
			}
		}
		return nil, nil
	}, nil)
	return err
}

func projectionState(conn *sqlite.Conn, name string) (version int, last int64, ok bool, err error) {
	st := prep(conn, "projection_get")
	st.SetText(":name", name)
	defer st.Reset()
	row, err := st.Step()
	if err != nil {
		return 0, 0, false, mapErr("read projection state", err)
	}
	if !row {
		return 0, 0, false, nil
	}
	return int(st.GetInt64("version")), st.GetInt64("last_seq"), true, nil
}

// ProjectionState is one projection's bookkeeping row.
type ProjectionState struct {
	Name    string `json:"name"`
	Version int    `json:"version"`
	LastSeq int64  `json:"last_seq"`
}

// ProjectionStates lists the stored projection bookkeeping rows.
func ProjectionStates(conn *sqlite.Conn) ([]ProjectionState, error) {
	var out []ProjectionState
	st := prep(conn, "projection_list")
	if err := eachRow(st, func() bool {
		out = append(out, ProjectionState{Name: st.GetText("name"), Version: int(st.GetInt64("version")), LastSeq: st.GetInt64("last_seq")})
		return true
	}); err != nil {
		return nil, mapErr("list projections", err)
	}
	return out, nil
}

// Rebuild drops every projection and replays the whole log into it, in one
// IMMEDIATE transaction. progress, if set, is called as events are applied.
func (s *Store) Rebuild(ctx context.Context, progress func(done, total int64)) error {
	return s.rebuild(ctx, s.projectors, progress, false)
}

func (s *Store) rebuild(ctx context.Context, ps []Projector, progress func(done, total int64), onlyIfStale bool) (err error) {
	defer s.catchFault("rebuild projections", &err, armFault())
	if s.ro != nil {
		return s.readOnlyError("rebuild projections")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	conn, err := s.take(ctx)
	if err != nil {
		return err
	}
	defer s.pool.Put(conn)
	defer func() {
		err = mapErr("rebuild projections", err)
		s.noteFault(err) // the reader's connection stopped in the middle of a call
	}()
	leave, err := s.enterBulk(conn, false)
	if err != nil {
		return err
	}
	defer leave()
	endFn, err := s.beginImmediate(ctx, conn)
	if err != nil {
		return err
	}
	defer endFn(&err)
	head, _, _, err := headOf(conn)
	if err != nil {
		return err
	}
	if onlyIfStale {
		// Another process may have rebuilt while we waited for the lock.
		var still []Projector
		for _, p := range ps {
			v, last, ok, err := projectionState(conn, p.Name())
			if err != nil {
				return err
			}
			if !ok || v != p.Version() || last < head || damagedProjector(p, s.rebuildMissing) {
				still = append(still, p)
			}
		}
		ps = still
		if len(ps) == 0 {
			return nil
		}
	}
	if s.oneConn {
		return RebuildOn(conn, ps, head, progress)
	}
	// A second connection reads the log while this one writes projections,
	// when the pool has one to spare.
	rconn, err := s.spare(ctx)
	if err != nil {
		return err
	}
	if rconn == nil {
		return RebuildOn(conn, ps, head, progress)
	}
	defer s.pool.Put(rconn)
	rleave, err := s.enterBulk(rconn, true)
	if err != nil {
		return err
	}
	defer rleave()
	rend := sqlitex.Transaction(rconn)
	var readEnd error
	defer rend(&readEnd)
	return RebuildFrom(rconn, conn, ps, head, progress)
}

// RebuildOn resets ps on conn and applies events 1..head read from conn, then
// records each projection's version and last seq. The caller owns the
// transaction.
func RebuildOn(conn *sqlite.Conn, ps []Projector, head int64, progress func(done, total int64)) error {
	return RebuildFrom(conn, conn, ps, head, progress)
}

// RebuildFrom resets ps on dst and applies events 1..head read from src
// (which may be dst itself), then records each projection's state on dst.
// It checks the hash chain as it reads and fails with VerifyFailed, naming
// the seq, rather than derive state from a log that was altered.
func RebuildFrom(src, dst *sqlite.Conn, ps []Projector, head int64, progress func(done, total int64)) (err error) {
	if err := bulkPragmas(dst); err != nil {
		return err
	}
	// The abort is armed before the projectors enter bulk mode: one that
	// entered before another failed to must not stay there.
	defer func() {
		if err != nil {
			abortBulk(dst, ps)
		}
	}()
	if err = beginBulk(dst, ps); err != nil {
		return err
	}
	if err := fold(src, dst, ps, head, progress); err != nil {
		return err
	}
	if err := endBulk(dst, ps); err != nil {
		return err
	}
	if progress != nil && head == 0 {
		progress(0, 0)
	}
	return markProjections(dst, ps, head)
}

// bulkPragmas lets index builds at the end of a bulk rebuild sort on
// both cores. A bulk connection (enterBulk, BulkConn) spills their sorted
// runs to temporary files.
func bulkPragmas(dst *sqlite.Conn) error {
	for _, pragma := range []string{"PRAGMA threads=2"} {
		if err := sqlitex.ExecuteTransient(dst, pragma, nil); err != nil {
			return err
		}
	}
	return nil
}

// beginBulk resets ps on dst: bulk projectors enter bulk mode, the others
// are reset to empty tables.
func beginBulk(dst *sqlite.Conn, ps []Projector) error {
	for _, p := range ps {
		var err error
		if bp, ok := p.(BulkProjector); ok {
			err = bp.BeginBulk(dst)
		} else {
			err = p.Reset(dst)
		}
		if err != nil {
			return fmt.Errorf("reset projection %s: %w", p.Name(), err)
		}
	}
	return nil
}

// bulkAborter is a BulkProjector that can drop its in-memory state when a
// bulk rebuild or append fails (its tables roll back with the transaction).
type bulkAborter interface {
	AbortBulk(conn *sqlite.Conn)
}

func abortBulk(dst *sqlite.Conn, ps []Projector) {
	for _, p := range ps {
		if a, ok := p.(bulkAborter); ok {
			a.AbortBulk(dst)
		}
	}
}

// endBulk writes what bulk projectors hold in memory and builds their
// indexes.
func endBulk(dst *sqlite.Conn, ps []Projector) error {
	for _, p := range ps {
		if bp, ok := p.(BulkProjector); ok {
			if err := bp.EndBulk(dst); err != nil {
				return fmt.Errorf("finish projection %s: %w", p.Name(), err)
			}
		}
	}
	return nil
}

// fold applies events 1..head read from src to ps on dst, checking the
// hash chain as it reads.
func fold(src, dst *sqlite.Conn, ps []Projector, head int64, progress func(done, total int64)) error {
	var done int64
	var chain ChainCheck
	broken := func(seq int64, problem string) error {
		return fault.New(fault.VerifyFailed, "replay: seq %d: %s; nothing was rebuilt", seq, problem).
			With("first_bad_seq", seq).WithHint("awr verify")
	}
	// A break in the chain is named at e, or at the seq expected when e
	// skips past it.
	chainBroken := func(e *Event, problem string) error { return broken(min(e.Seq, chain.Expected()), problem) }
	check := func(e *Event) error {
		if problem := chain.Check(e); problem != "" {
			return chainBroken(e, problem)
		}
		return nil
	}
	// The log's own rules are folded on the applying side: a forged log
	// that keeps its hash chain (every event re-hashed) is refused here
	// too, so a rebuild never blesses it.
	rules := NewInvariants(time.Now())
	apply := func(e *Event, payload Payload) error {
		if problem := rules.Check(e, payload); problem != "" {
			return broken(e.Seq, problem)
		}
		for _, p := range ps {
			if err := p.Apply(dst, e, payload); err != nil {
				return fmt.Errorf("apply seq %d to projection %s: %w", e.Seq, p.Name(), err)
			}
		}
		done++
		if progress != nil && (done%4096 == 0 || done == head) {
			progress(done, head)
		}
		return nil
	}
	if src == dst {
		// One connection: read a batch, let its statement go, then apply
		// it (a projector may read events on the same connection).
		const batch = 512
		for from := int64(1); from <= head; from += batch {
			var evs []*Event
			if err := ScanEvents(src, from, min(from+batch-1, head), func(e *Event) error {
				evs = append(evs, e)
				return nil
			}); err != nil {
				return err
			}
			for _, e := range evs {
				if err := check(e); err != nil {
					return err
				}
				payload, err := Decode(e)
				if err != nil {
					return err
				}
				if err := apply(e, payload); err != nil {
					return err
				}
			}
		}
		return nil
	}
	link := func(e *Event) error {
		if problem := chain.link(e); problem != "" {
			return chainBroken(e, problem)
		}
		chain.advance(e)
		return nil
	}
	inspect := func(e *Event) (Payload, error) {
		if problem := hashProblem(e); problem != "" {
			return nil, broken(e.Seq, problem)
		}
		return Decode(e)
	}
	return pipeline(src, 1, head, link, inspect, apply)
}

// LogFault is the first problem a verifying fold found in the log: the
// seq named and what is wrong there.
type LogFault struct {
	Seq     int64
	Problem string
	head    []byte // the hash of the last event whose own hash checked
}

func (f *LogFault) Error() string { return fmt.Sprintf("seq %d: %s", f.Seq, f.Problem) }

// VerifyFold is the walk of `awr verify` and a scratch rebuild in one
// pass over the log. It reads every row of src in rowid order, whatever
// its seq, so rows inserted, deleted or reordered behind the triggers'
// back are caught; checks each event's place in the chain, its hash, its
// kind, its payload and the log's rules (Invariants at now); and folds ps
// into dst, which must hold no projections yet (the caller owns its
// transaction). checked counts the events found sound before the first
// fault, head is the hash of the last event whose hash recomputed (32
// zero bytes before any) and bad is the first fault, nil for a sound log,
// whose projections dst then holds, recorded at seq checked. It reads on
// one goroutine, hashes and decodes on workers and folds on the caller's,
// like a rebuild.
func VerifyFold(src, dst *sqlite.Conn, ps []Projector, now time.Time, progress func(done, total int64)) (checked int64, head []byte, bad *LogFault, err error) {
	var total int64
	if total, _, _, err = headOf(src); err != nil {
		return 0, nil, nil, err
	}
	if err := bulkPragmas(dst); err != nil {
		return 0, nil, nil, err
	}
	defer func() {
		if err != nil || bad != nil {
			abortBulk(dst, ps)
		}
	}()
	if err = beginBulk(dst, ps); err != nil {
		return 0, nil, nil, err
	}
	var chain ChainCheck
	head = make([]byte, HashSize)
	link := func(e *Event) error {
		want := chain.Expected()
		if problem := chain.link(e); problem != "" {
			seq := e.Seq
			if e.Seq > want {
				seq = want
			}
			return &LogFault{Seq: seq, Problem: problem}
		}
		chain.advance(e)
		return nil
	}
	inspect := func(e *Event) (Payload, error) {
		if problem := hashProblem(e); problem != "" {
			return nil, &LogFault{Seq: e.Seq, Problem: problem}
		}
		if !Known(e.Kind) {
			return nil, &LogFault{Seq: e.Seq, Problem: fmt.Sprintf("unknown event kind %q", e.Kind), head: e.Hash}
		}
		v, err := Decode(e)
		if err != nil {
			return nil, &LogFault{Seq: e.Seq, Problem: fmt.Sprintf("payload does not decode: %v", err), head: e.Hash}
		}
		return v, nil
	}
	rules := NewInvariants(now)
	apply := func(e *Event, payload Payload) error {
		if problem := rules.Check(e, payload); problem != "" {
			return &LogFault{Seq: e.Seq, Problem: problem, head: e.Hash}
		}
		for _, p := range ps {
			if err := p.Apply(dst, e, payload); err != nil {
				return fmt.Errorf("apply seq %d to projection %s: %w", e.Seq, p.Name(), err)
			}
		}
		checked++
		head = e.Hash
		if progress != nil && (checked%4096 == 0 || checked == total) {
			progress(checked, total)
		}
		return nil
	}
	err = pipeline(src, math.MinInt64, math.MaxInt64, link, inspect, apply)
	var lf *LogFault
	if errors.As(err, &lf) {
		if lf.head != nil {
			head = lf.head
		}
		return checked, head, lf, nil
	}
	if err != nil {
		return checked, head, nil, err
	}
	if err := endBulk(dst, ps); err != nil {
		return checked, head, nil, err
	}
	if progress != nil && total == 0 {
		progress(0, 0)
	}
	return checked, head, nil, markProjections(dst, ps, checked)
}

// decodedEvent is an event read for folding, with its payload decoded.
type decodedEvent struct {
	e       *Event
	payload Payload
}

// foldBatch is a run of events on its way to the fold: read and linked in
// order by the reader, then hashed and decoded by a worker, which closes
// done when the batch is ready.
type foldBatch struct {
	events  []decodedEvent
	stopErr error // what stopped the reader after these events, if anything
	ok      int   // how many events, from the first, were inspected sound
	err     error // the problem after those ok events, if any
	done    chan struct{}
}

// pipeline folds events 1..head from src in three stages, so a rebuild
// uses every core of a small machine: one goroutine reads the rows and
// checks that each links to the one before (seq and prev_hash); workers
// recompute the hashes and decode the payloads of whole batches in
// parallel; apply folds the batches, in seq order, on the caller's
// goroutine. The first problem in seq order wins, as in a sequential
// check: the events before a problem are applied (and may fail there),
// the rest are not. src must not be used by anyone else meanwhile.
func pipeline(src *sqlite.Conn, from, to int64, link func(e *Event) error, inspect func(e *Event) (Payload, error), apply func(e *Event, payload Payload) error) error {
	const batch = 512
	workers := min(max(runtime.GOMAXPROCS(0), 1), 4)
	ordered := make(chan *foldBatch, 4*workers)
	work := make(chan *foldBatch, 4*workers)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				b.ok, b.err = inspectAll(b.events, inspect)
				if b.err == nil {
					b.err = b.stopErr
				}
				close(b.done)
			}
		}()
	}
	go func() {
		defer close(ordered)
		defer close(work)
		send := func(b *foldBatch) bool {
			select {
			case ordered <- b:
			case <-stop:
				return false
			}
			select {
			case work <- b:
				return true
			case <-stop:
				close(b.done)
				return false
			}
		}
		buf := make([]decodedEvent, 0, batch)
		err := scanGuarded(src, from, to, func(e *Event) error {
			if err := link(e); err != nil {
				return err
			}
			buf = append(buf, decodedEvent{e: e})
			if len(buf) == batch {
				if !send(&foldBatch{events: buf, done: make(chan struct{})}) {
					return errStopped
				}
				buf = make([]decodedEvent, 0, batch)
			}
			return nil
		})
		if err == errStopped {
			return
		}
		if err != nil || len(buf) > 0 {
			send(&foldBatch{events: buf, stopErr: err, done: make(chan struct{})})
		}
	}()
	var foldErr error
	for b := range ordered {
		if foldErr != nil {
			continue
		}
		<-b.done
		for _, d := range b.events[:b.ok] {
			if foldErr = apply(d.e, d.payload); foldErr != nil {
				break
			}
		}
		if foldErr == nil {
			foldErr = b.err
		}
		if foldErr != nil {
			close(stop)
		}
	}
	wg.Wait()
	return foldErr
}

// inspectAll runs inspect on each event of a batch in order, keeping the
// payloads, and stops at the first problem: ok events come before it.
func inspectAll(evs []decodedEvent, inspect func(e *Event) (Payload, error)) (ok int, err error) {
	for i := range evs {
		payload, err := inspect(evs[i].e)
		if err != nil {
			return i, err
		}
		evs[i].payload = payload
	}
	return len(evs), nil
}

var errStopped = errors.New("stopped")

// spare takes a second pooled connection for reading the log beside the
// writing one, or returns nil when none frees up within two seconds (a
// pool of one never has one). It fails only when ctx is done.
func (s *Store) spare(ctx context.Context) (*sqlite.Conn, error) {
	takeCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := s.pool.Take(takeCtx)
	if err != nil || conn == nil {
		if ctx.Err() != nil {
			return nil, mapErr("open connection", ctx.Err())
		}
		return nil, nil
	}
	// Take ties the connection's interrupt to takeCtx, which ends when
	// this returns: tie it to the caller's ctx instead.
	conn.SetInterrupt(ctx.Done())
	return conn, nil
}

// EnsureProjectionTable creates the projections bookkeeping table on a
// scratch connection that has no awr schema.
func EnsureProjectionTable(conn *sqlite.Conn) error {
	return sqlitex.ExecuteTransient(conn, "CREATE TABLE IF NOT EXISTS projections (name TEXT PRIMARY KEY, version INTEGER NOT NULL, last_seq INTEGER NOT NULL)", nil)
}

func markProjections(conn *sqlite.Conn, ps []Projector, last int64) error {
	for _, p := range ps {
		st := prep(conn, "projection_put")
		st.SetText(":name", p.Name())
		st.SetInt64(":version", int64(p.Version()))
		st.SetInt64(":last_seq", last)
		_, err := st.Step()
		st.Reset()
		if err != nil {
			return fmt.Errorf("record projection %s: %w", p.Name(), err)
		}
	}
	return nil
}
