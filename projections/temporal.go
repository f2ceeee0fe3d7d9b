package projections

import (
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"strings"

	"github.com/awr-dev/awr/events"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// versions manages one revision-stamped table. Applied incrementally, the
// current version of a row lives in SQLite: a change closes it (valid_to =
// seq) and inserts the new version. During a bulk rebuild the current
// versions live in memory instead: a replaced version is written once,
// already closed, and the survivors are written open at the end. Both paths
// produce the same rows.
type versions[T any] struct {
	bulk bool
	// heldMax, when not 0, replaces bulkHeldMax (the tests' spilling
	// projectors hold one version).
	heldMax int
	// spilling is set while spill ends the bulk mode early, spilled once
	// it has: the projection's indexes that its fold does not read
	// (base.fold) then wait for the EndBulk that ends the rebuild.
	spilling, spilled bool
	current           map[string]*T
	from              map[string]int64
	// insert writes one version; to == 0 leaves it open (valid_to NULL).
	insert func(conn *sqlite.Conn, row *T, from, to int64) error
	// close marks the open version of key replaced at seq.
	close func(conn *sqlite.Conn, key string, seq int64) error
	// load reads the open version of key (nil when none).
	load func(conn *sqlite.Conn, key string, seq int64) (*T, error)
}

// bulkHeldMax bounds the open versions a bulk rebuild holds in memory for
// one table. Past it the projection ends its bulk mode where the fold
// stands (spill): its EndBulk writes what it holds and builds its indexes,
// which leaves its tables as the incremental path has them at that seq,
// and it folds the rest of the log incrementally. A rebuild's memory then
// stays bounded however long the log; a log whose open versions fit is
// rebuilt in bulk throughout.
const bulkHeldMax = 1 << 14

// spill calls endBulk, the projection's EndBulk, when v holds more than
// bulkHeldMax open versions in a bulk rebuild.
func (v *versions[T]) spill(conn *sqlite.Conn, endBulk func(conn *sqlite.Conn) error) error {
	limit := bulkHeldMax
	if v.heldMax > 0 {
		limit = v.heldMax
	}
	if !v.bulk || len(v.current) <= limit {
		return nil
	}
	v.spilling = true
	defer func() { v.spilling = false }()
	return endBulk(conn)
}

func (v *versions[T]) beginBulk() {
	v.bulk = true
	v.current = map[string]*T{}
	v.from = map[string]int64{}
}

// get returns a copy of key's open version, or nil.
func (v *versions[T]) get(conn *sqlite.Conn, key string, seq int64) (*T, error) {
	if !v.bulk {
		return v.load(conn, key, seq)
	}
	cur, ok := v.current[key]
	if !ok {
		return nil, nil
	}
	cp := *cur
	return &cp, nil
}

// put makes row the open version of key from seq on.
func (v *versions[T]) put(conn *sqlite.Conn, key string, seq int64, row *T) error {
	if !v.bulk {
		if err := v.close(conn, key, seq); err != nil {
			return err
		}
		return v.insert(conn, row, seq, 0)
	}
	if old, ok := v.current[key]; ok {
		if err := v.insert(conn, old, v.from[key], seq); err != nil {
			return err
		}
	}
	v.current[key], v.from[key] = row, seq
	return nil
}

// drop closes key's open version at seq without a successor.
func (v *versions[T]) drop(conn *sqlite.Conn, key string, seq int64) error {
	if !v.bulk {
		return v.close(conn, key, seq)
	}
	if old, ok := v.current[key]; ok {
		if err := v.insert(conn, old, v.from[key], seq); err != nil {
			return err
		}
		delete(v.current, key)
		delete(v.from, key)
	}
	return nil
}

// abortBulk drops the in-memory state of a failed bulk build.
func (v *versions[T]) abortBulk() {
	v.bulk, v.current, v.from, v.spilling, v.spilled = false, nil, nil, false, false
}

// finishBulk is the EndBulk of a projection over v: it writes the open
// versions, then the projection's indexes (b.EndBulk). A spill (the
// same call from spill) builds only the indexes the projection's fold
// reads (base.fold): the rest of the log is folded through those alone,
// and the EndBulk that ends the rebuild builds the others.
func (v *versions[T]) finishBulk(conn *sqlite.Conn, b base) error {
	if !v.bulk {
		if !v.spilled {
			return nil
		}
		v.spilled = false
		return b.createIndexesOf(conn, false)
	}
	if err := v.endBulk(conn); err != nil {
		return err
	}
	if v.spilling && b.fold != nil {
		v.spilled = true
		return b.createIndexesOf(conn, true)
	}
	return b.EndBulk(conn)
}

// endBulk writes the open versions, in key order, and leaves bulk mode.
func (v *versions[T]) endBulk(conn *sqlite.Conn) error {
	keys := make([]string, 0, len(v.current))
	for k := range v.current {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := v.insert(conn, v.current[k], v.from[k], 0); err != nil {
			return err
		}
	}
	v.bulk, v.current, v.from = false, nil, nil
	return nil
}

func setValidTo(st *sqlite.Stmt, to int64) {
	if to == 0 {
		st.SetNull(":valid_to")
	} else {
		st.SetInt64(":valid_to", to)
	}
}

// interval places the closed version [from, to) in the dyadic interval
// index: lvl is the bit length of from XOR (to-1), node is from >> lvl. All
// versions of one (lvl, node) with lvl > 0 contain the node's midpoint, so a
// stabbing query at rev needs one index range per level: valid_from <= rev
// when rev lies left of the midpoint, valid_to > rev when it lies right.
// The cost of a read at any revision is then about 63 index seeks plus the
// rows returned, however far back the revision lies.
func interval(from, to int64) (lvl, node int64) {
	lvl = int64(bits.Len64(uint64(from ^ (to - 1))))
	return lvl, from >> lvl
}

// setInterval binds :lvl and :node for a version closed at to (NULL while
// open).
func setInterval(st *sqlite.Stmt, from, to int64) {
	if to == 0 {
		st.SetNull(":lvl")
		st.SetNull(":node")
		return
	}
	lvl, node := interval(from, to)
	st.SetInt64(":lvl", lvl)
	st.SetInt64(":node", node)
}

// closeOpen is the close of a revision-stamped table without an interval
// index: statement name stamps valid_to = :seq on the open version of
// the key bound to param.
func closeOpen(name, param string) func(conn *sqlite.Conn, key string, seq int64) error {
	return func(conn *sqlite.Conn, key string, seq int64) error {
		return exec(conn, name, func(st *sqlite.Stmt) {
			st.SetInt64(":seq", seq)
			st.SetText(param, key)
		})
	}
}

// closeInterval closes the open version of a revision-stamped table with an
// interval index: it reads the version's valid_from (openFrom), then stamps
// valid_to, lvl and node (close).
func closeInterval(conn *sqlite.Conn, openFrom, close, keyParam, key string, seq int64) error {
	var from int64 = -1
	if err := query(conn, openFrom, func(st *sqlite.Stmt) { st.SetText(keyParam, key) }, func(st *sqlite.Stmt) error {
		from = st.GetInt64("valid_from")
		return nil
	}); err != nil || from < 0 {
		return err
	}
	return exec(conn, close, func(st *sqlite.Stmt) {
		st.SetInt64(":seq", seq)
		st.SetText(keyParam, key)
		setInterval(st, from, seq)
	})
}

// BeginBulk creates the projection's tables without their secondary
// indexes, for a rebuild.
func (b base) BeginBulk(conn *sqlite.Conn) error {
	script, ok := schemas.Get(b.schema)
	if !ok {
		return fmt.Errorf("projection %s: no schema %q", b.name, b.schema)
	}
	return sqlitex.ExecuteScript(conn, script, nil)
}

// createIndexes adds the secondary indexes after a bulk rebuild.
func (b base) createIndexes(conn *sqlite.Conn) error {
	return b.createIndexesWhere(conn, func(string) bool { return true })
}

// createIndexesOf adds the secondary indexes the projection's fold reads
// (base.fold; fold true) or the others (fold false).
func (b base) createIndexesOf(conn *sqlite.Conn, fold bool) error {
	return b.createIndexesWhere(conn, func(name string) bool { return slices.Contains(b.fold, name) == fold })
}

// createIndexesWhere adds the secondary indexes of the projection's
// indexes script (CREATE INDEX statements, each ended by a semicolon;
// whole-line "--" comments between them) that want names. A
// scratch build (base.scratch) leaves out those that are neither unique
// nor read by the fold: what it builds is checksummed and thrown away.
func (b base) createIndexesWhere(conn *sqlite.Conn, want func(name string) bool) error {
	script, ok := schemas.Get(b.schema + "_indexes")
	if !ok {
		return nil
	}
	for _, stmt := range strings.Split(withoutComments(script), ";") {
		if stmt = strings.TrimSpace(stmt); stmt == "" {
			continue
		}
		name, unique, ok := indexName(stmt)
		if !ok {
			return fmt.Errorf("projection %s: %q is not a CREATE INDEX statement", b.name, stmt)
		}
		if !want(name) || (b.scratch && !unique && !slices.Contains(b.fold, name)) {
			continue
		}
		if err := sqlitex.ExecuteTransient(conn, stmt, nil); err != nil {
			return err
		}
	}
	return nil
}

// withoutComments is script without its whole-line "--" comments.
func withoutComments(script string) string {
	lines := strings.Split(script, "\n")
	kept := lines[:0]
	for _, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), "--") {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

// indexName is the name a CREATE [UNIQUE] INDEX statement creates, and
// whether the index is unique.
func indexName(stmt string) (name string, unique, ok bool) {
	f := strings.Fields(stmt)
	if len(f) > 1 && f[0] == "CREATE" && f[1] == "UNIQUE" {
		f, unique = append(f[:1:1], f[2:]...), true
	}
	if len(f) < 3 || f[0] != "CREATE" || f[1] != "INDEX" {
		return "", false, false
	}
	return f[2], unique, true
}

// versioned is a projection over one revision-stamped table (versions):
// it gives the projection its bulk rebuild (BeginBulk, AbortBulk,
// EndBulk) and an Apply that folds one event (step) and then spills
// when the rebuild holds too much. A projection with in-memory state of
// its own besides rows sets enter (made at BeginBulk) and leave (dropped
// at AbortBulk and at EndBulk, a spill's included).
type versioned[T any] struct {
	base
	rows  versions[T]
	step  func(conn *sqlite.Conn, e *events.Event, v events.Payload) error
	enter func()
	leave func()
}

// BeginBulk starts a rebuild with the open versions held in memory.
func (p *versioned[T]) BeginBulk(conn *sqlite.Conn) error {
	p.rows.beginBulk()
	if p.enter != nil {
		p.enter()
	}
	return p.base.BeginBulk(conn)
}

// AbortBulk drops the in-memory state of a failed bulk build.
func (p *versioned[T]) AbortBulk(conn *sqlite.Conn) {
	p.rows.abortBulk()
	if p.leave != nil {
		p.leave()
	}
}

// EndBulk writes the open versions and creates the indexes.
func (p *versioned[T]) EndBulk(conn *sqlite.Conn) error {
	if p.leave != nil {
		p.leave()
	}
	return p.rows.finishBulk(conn, p.base)
}

// Apply folds e (step), then spills if a bulk rebuild holds more open
// versions than it may.
func (p *versioned[T]) Apply(conn *sqlite.Conn, e *events.Event, v events.Payload) error {
	if err := p.step(conn, e, v); err != nil {
		return err
	}
	return p.rows.spill(conn, p.EndBulk)
}
