package projections

import (
	"embed"
	"encoding/json"
	"fmt"

	"github.com/awr-dev/awr/events"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

//go:embed sql/*.sql
var sqlFiles embed.FS

//go:embed schema/*.sql
var schemaFiles embed.FS

var statements = events.NewSQLSet(sqlFiles, "sql")

var schemas = events.NewSQLSet(schemaFiles, "schema")

func prep(conn *sqlite.Conn, name string) *sqlite.Stmt {
	return events.PrepNamed(conn, statements, name)
}

// exec runs a named statement with bind applied, discarding rows.
func exec(conn *sqlite.Conn, name string, bind func(st *sqlite.Stmt)) error {
	st := prep(conn, name)
	bind(st)
	_, err := st.Step()
	if rerr := st.Reset(); err == nil && rerr != nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// query runs a named statement with bind applied and calls row for each
// result row.
func query(conn *sqlite.Conn, name string, bind func(st *sqlite.Stmt), row func(st *sqlite.Stmt) error) error {
	st := prep(conn, name)
	bind(st)
	defer st.Reset()
	return stepRows(st, name, row)
}

// stepRows steps st to its end, calling row for each result row, and
// stops at row's first error; an error of st's own is prefixed with
// what (the statement's name, or what it reads).
func stepRows(st *sqlite.Stmt, what string, row func(st *sqlite.Stmt) error) error {
	for {
		ok, err := st.Step()
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if !ok {
			return nil
		}
		if err := row(st); err != nil {
			return err
		}
	}
}

// queryRows runs a named statement with bind applied and returns what
// scan makes of each result row, in order (nil when there is none).
func queryRows[T any](conn *sqlite.Conn, name string, bind func(st *sqlite.Stmt), scan func(st *sqlite.Stmt) (T, error)) ([]T, error) {
	var out []T
	err := query(conn, name, bind, func(st *sqlite.Stmt) error {
		v, err := scan(st)
		if err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

// keyAt binds param to key and :rev to rev: the look-up of a row by its
// key as of a revision that most reads make.
func keyAt(param, key string, rev int64) func(st *sqlite.Stmt) {
	return func(st *sqlite.Stmt) {
		st.SetText(param, key)
		st.SetInt64(":rev", rev)
	}
}

// always adapts a scan that cannot fail to queryRows.
func always[T any](scan func(st *sqlite.Stmt) T) func(st *sqlite.Stmt) (T, error) {
	return func(st *sqlite.Stmt) (T, error) { return scan(st), nil }
}

// deref adapts a scan that makes a *T to queryRows's T.
func deref[T any](scan func(st *sqlite.Stmt) *T) func(st *sqlite.Stmt) (T, error) {
	return func(st *sqlite.Stmt) (T, error) { return *scan(st), nil }
}

// jsonColumn adapts queryRows to rows whose column col holds a T as JSON.
func jsonColumn[T any](col string) func(st *sqlite.Stmt) (T, error) {
	return func(st *sqlite.Stmt) (T, error) {
		var v T
		err := json.Unmarshal([]byte(st.GetText(col)), &v)
		return v, err
	}
}

// firstRow is the first of rows, or nil when there is none (or err).
func firstRow[T any](rows []T, err error) (*T, error) {
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return &rows[0], nil
}

// queryInt64 runs a named statement with bind applied and returns column
// col of its last result row, 0 when it has none.
func queryInt64(conn *sqlite.Conn, name, col string, bind func(st *sqlite.Stmt)) (int64, error) {
	var n int64
	err := query(conn, name, bind, func(st *sqlite.Stmt) error {
		n = st.GetInt64(col)
		return nil
	})
	return n, err
}

// Table describes one projection table for checksums: its name, the columns
// that identify a row version (canonical order) and whether it is
// revision-stamped, or holds the head's state alone (HeadOnly: a read
// at a past revision derives it from the revision-stamped tables, and
// StateChecksumAt leaves it out).
type Table struct {
	Name     string
	Key      []string
	Temporal bool
	HeadOnly bool
}

// Projection is a named, versioned read model.
type Projection interface {
	events.Projector
	// Tables lists the projection's tables.
	Tables() []Table
}

// base carries a projection's name, version, schema script and tables.
type base struct {
	name    string
	version int
	schema  string
	tables  []Table
	// fold names the indexes the projection's own fold reads, or that
	// hold a constraint its writes must meet: a bulk rebuild that ends
	// its bulk mode early (versions.spill) folds the rest of the log
	// through these alone and builds the others at its end. Nil builds
	// every index at the spill.
	fold []string
	// scratch marks a build whose tables are only checksummed, then
	// thrown away (ScratchProjectors): it builds the unique indexes (a
	// constraint, and the checksums' order) and those of fold, not the
	// indexes only reads use, nor the full-text index.
	scratch bool
}

// markScratch makes the projection's bulk builds scratch builds.
func (b *base) markScratch() { b.scratch = true }

// Name returns the projection's name.
func (b base) Name() string { return b.name }

// Version returns the projection's version.
func (b base) Version() int { return b.version }

// Tables returns the projection's tables.
func (b base) Tables() []Table { return b.tables }

// Reset drops and recreates the projection's tables and indexes.
func (b base) Reset(conn *sqlite.Conn) error {
	script, ok := schemas.Get(b.schema)
	if !ok {
		return fmt.Errorf("projection %s: no schema %q", b.name, b.schema)
	}
	if err := sqlitex.ExecuteScript(conn, script, nil); err != nil {
		return err
	}
	return b.createIndexes(conn)
}

// EndBulk for projections without in-memory state: add the indexes.
func (b base) EndBulk(conn *sqlite.Conn) error { return b.createIndexes(conn) }

// All returns every projection, in the order they are applied.
func All() []Projection {
	return []Projection{
		newSessions(), newClaims(), newCheckpoints(), newBindings(), newWork(), newSeats(), newWorklog(), newKnowledge(), newExecutions(), newSearch(),
	}
}

// Projectors returns All as events.Projector values for events.Open.
func Projectors() []events.Projector {
	all := All()
	out := make([]events.Projector, len(all))
	for i, p := range all {
		out[i] = p
	}
	return out
}

// ScratchProjectors returns Projectors for a rebuild into a throwaway
// database that is checksummed and removed (replay --verify, verify,
// migrate's check): each builds only the indexes its fold reads and its
// unique ones, which order the checksums, and the search projection no
// full-text index. The rows, and so the checksums, are those Projectors
// build.
func ScratchProjectors() []events.Projector {
	out := Projectors()
	for _, p := range out {
		p.(interface{ markScratch() }).markScratch()
	}
	return out
}

// decode decodes e's payload to *T.
func decode[T any](e *events.Event) (*T, error) {
	v, err := events.Decode(e)
	if err != nil {
		return nil, err
	}
	return payload[T](e, v)
}

// payload returns v, the decoded payload of e, as *T.
func payload[T any](e *events.Event, v events.Payload) (*T, error) {
	p, ok := any(v).(*T)
	if !ok {
		return nil, fmt.Errorf("event %d: payload is %T", e.Seq, v)
	}
	return p, nil
}

// fold decodes e's payload as a T and hands it to fn.
func fold[T any](e *events.Event, v events.Payload, fn func(*T) error) error {
	pl, err := payload[T](e, v)
	if err != nil {
		return err
	}
	return fn(pl)
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Objects returns the names of the tables, indexes and triggers the
// projection's schema scripts create (events.SchemaProjector), from
// schemaObjects: Open rebuilds a projection that misses one.
func (b base) Objects() []string { return append([]string(nil), schemaObjects[b.schema]...) }
