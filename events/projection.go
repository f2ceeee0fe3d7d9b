package events

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/awr-dev/awr/fault"
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
		retired, stale, err = projectionWork(r.Conn, s.projectors, r.Head)
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
// stale the projectors of ps that are missing, of another version, or
// behind head.
func projectionWork(conn *sqlite.Conn, ps []Projector, head int64) (retired []string, stale []Projector, err error) {
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
		if !ok || st.Version != p.Version() || st.LastSeq < head {
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

// forgetRetired removes the bookkeeping of projections this awr no longer
// has, so they are not reported as stale.
func (s *Store) forgetRetired(ctx context.Context, retired []string) error {
	if len(retired) == 0 {
		return nil
	}
	_, err := s.Write(ctx, WriteOptions{Now: time.Unix(0, 0), Entropy: strings.NewReader(""), Actor: "awr"}, func(tx *Tx) (any, error) {
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
	})
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
	defer st.Reset()
	for {
		row, err := st.Step()
		if err != nil {
			return nil, mapErr("list projections", err)
		}
		if !row {
			return out, nil
		}
		out = append(out, ProjectionState{Name: st.GetText("name"), Version: int(st.GetInt64("version")), LastSeq: st.GetInt64("last_seq")})
	}
}

// Rebuild drops every projection and replays the whole log into it, in one
// IMMEDIATE transaction. progress, if set, is called as events are applied.
func (s *Store) Rebuild(ctx context.Context, progress func(done, total int64)) error {
	return s.rebuild(ctx, s.projectors, progress, false)
}

func (s *Store) rebuild(ctx context.Context, ps []Projector, progress func(done, total int64), onlyIfStale bool) (err error) {
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
	defer func() { err = mapErr("rebuild projections", err) }()
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
			if !ok || v != p.Version() || last < head {
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

// bulkPragmas lets index builds at the end of a bulk rebuild sort in
// memory, using both cores, rather than through temporary files. Store
// connections keep temp_store=MEMORY anyway; a scratch connection (a
// rebuild to compare with) gets it here.
func bulkPragmas(dst *sqlite.Conn) error {
	for _, pragma := range []string{"PRAGMA temp_store=MEMORY", "PRAGMA threads=2"} {
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
	check := func(e *Event) error {
		if problem := chain.Check(e); problem != "" {
			seq := e.Seq
			if e.Seq > chain.Expected() {
				seq = chain.Expected()
			}
			return fault.New(fault.VerifyFailed, "replay: seq %d: %s; nothing was rebuilt", seq, problem).
				With("first_bad_seq", seq).WithHint("awr verify")
		}
		return nil
	}
	// The log's own rules are folded on the applying side: a forged log
	// that keeps its hash chain (every event re-hashed) is refused here
	// too, so a rebuild never blesses it.
	rules := NewInvariants(time.Now())
	apply := func(e *Event, payload Payload) error {
		if problem := rules.Check(e, payload); problem != "" {
			return fault.New(fault.VerifyFailed, "replay: seq %d: %s; nothing was rebuilt", e.Seq, problem).
				With("first_bad_seq", e.Seq).WithHint("awr verify")
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
	return pipeline(src, head, check, apply)
}

// decodedEvent is an event read for folding, with its payload decoded.
type decodedEvent struct {
	e       *Event
	payload Payload
}

// pipeline reads, checks (the hash chain) and decodes events 1..head from
// src on one goroutine while apply folds them on the caller's, so a rebuild
// uses both of a small machine's cores. src must not be used by anyone else
// meanwhile.
func pipeline(src *sqlite.Conn, head int64, check func(e *Event) error, apply func(e *Event, payload Payload) error) error {
	const batch = 512
	batches := make(chan []decodedEvent, 8)
	stop := make(chan struct{})
	readErr := make(chan error, 1)
	go func() {
		defer close(batches)
		buf := make([]decodedEvent, 0, batch)
		err := ScanEvents(src, 1, head, func(e *Event) error {
			if err := check(e); err != nil {
				return err
			}
			payload, err := Decode(e)
			if err != nil {
				return err
			}
			buf = append(buf, decodedEvent{e: e, payload: payload})
			if len(buf) == batch {
				select {
				case batches <- buf:
				case <-stop:
					return errStopped
				}
				buf = make([]decodedEvent, 0, batch)
			}
			return nil
		})
		if err == nil && len(buf) > 0 {
			select {
			case batches <- buf:
			case <-stop:
			}
		}
		readErr <- err
	}()
	var applyErr error
	for b := range batches {
		if applyErr != nil {
			continue
		}
		for _, d := range b {
			if applyErr = apply(d.e, d.payload); applyErr != nil {
				close(stop)
				break
			}
		}
	}
	rerr := <-readErr
	if applyErr != nil {
		return applyErr
	}
	if rerr != nil && rerr != errStopped {
		return rerr
	}
	return nil
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
