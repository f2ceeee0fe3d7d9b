package events

import (
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/awr-dev/awr/events/internal/sqlmem"
	"zombiezen.com/go/sqlite"
)

//go:embed sql/*.sql
var sqlFiles embed.FS

//go:embed schema/*.sql
var schemaFiles embed.FS

// statements holds every embedded statement, keyed by file name without
// extension; each file holds exactly one statement.
var statements = NewSQLSet(sqlFiles, "sql")

// SQLSet is a directory of embedded statements, one per *.sql file, keyed
// by the file name without its extension. A statement is read from the
// embedded files the first time it is asked for, not when the process
// starts: a command reads the few it runs instead of copying every file of
// every package into the heap (60 page faults of `awr status`, about 0.5
// ms on the project box). Packages that keep their SQL in embedded files
// (projections, project, pgstore) use it too. It is safe for concurrent
// use.
type SQLSet struct {
	fsys fs.FS
	dir  string
	m    sync.Map // name -> trimmed statement text
}

// NewSQLSet returns the set of the *.sql files in dir of fsys.
func NewSQLSet(fsys fs.FS, dir string) *SQLSet { return &SQLSet{fsys: fsys, dir: dir} }

// Get returns the statement of dir/name.sql with surrounding white space
// trimmed; ok is false when there is no such file.
func (s *SQLSet) Get(name string) (string, bool) {
	if q, ok := s.m.Load(name); ok {
		return q.(string), true
	}
	if name == "" || strings.ContainsAny(name, "/\\") {
		return "", false
	}
	b, err := fs.ReadFile(s.fsys, s.dir+"/"+name+".sql")
	if err != nil {
		return "", false
	}
	q, _ := s.m.LoadOrStore(name, strings.TrimSpace(string(b)))
	return q.(string), true
}

// Names returns the names of every statement of the set, sorted.
func (s *SQLSet) Names() []string {
	entries, err := fs.ReadDir(s.fsys, s.dir)
	if err != nil {
		panic(err)
	}
	var out []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".sql"); ok && !e.IsDir() {
			out = append(out, n)
		}
	}
	return out
}

// PrepareAll prepares every statement of the set on conn and finalizes
// it, and returns the first that does not prepare, by name: the set is
// read on first use, so tests call this to find a broken file before a
// command does. A statement whose LIMIT or OFFSET is a bare parameter
// (bareLimit) is refused too.
func (s *SQLSet) PrepareAll(conn *sqlite.Conn) error {
	for _, name := range s.Names() {
		q, ok := s.Get(name)
		if !ok {
			return fmt.Errorf("%s/%s.sql: unreadable", s.dir, name)
		}
		if m := bareLimit.FindStringSubmatch(q); m != nil {
			return fmt.Errorf("%s/%s.sql: %q: SQLite prepares a statement again each time a bare LIMIT or OFFSET parameter is bound (0.1 to 0.2 ms a call); write it as an expression, %s + 0", s.dir, name, m[1], m[1])
		}
		st, _, err := conn.PrepareTransient(q)
		if err != nil {
			return fmt.Errorf("%s/%s.sql: %w", s.dir, name, err)
		}
		if err := st.Finalize(); err != nil {
			return fmt.Errorf("%s/%s.sql: %w", s.dir, name, err)
		}
	}
	return nil
}

// bareLimit finds a LIMIT or OFFSET whose value is a bare parameter
// (LIMIT :limit). SQLite reads such a parameter's value when it plans the
// statement and marks the statement to be prepared again whenever that
// parameter is bound anew, so a cached statement run with it is compiled
// at every call (on the project box 110 to 200 µs, where the same read
// written LIMIT :limit + 0 takes 4 to 14 µs). The expression is
// evaluated when the statement runs, with the same result.
var bareLimit = regexp.MustCompile(`(?i)\b((?:LIMIT|OFFSET)\s+[:@$?][A-Za-z0-9_]*)(?:\s*[;)]|\s*$|\s+OFFSET\b)`)

// prep returns the cached prepared statement for the named embedded query,
// with its bindings cleared.
func prep(conn *sqlite.Conn, name string) *sqlite.Stmt {
	return PrepNamed(conn, statements, name)
}

// eachRow steps the bound statement st, calling row at each result row
// until row returns false, and resets st; the error is st's, as SQLite
// gives it.
func eachRow(st *sqlite.Stmt, row func() bool) error {
	defer st.Reset()
	for {
		ok, err := st.Step()
		if err != nil || !ok {
			return err
		}
		if !row() {
			return nil
		}
	}
}

// PrepNamed returns conn's cached statement for set's name with bindings
// cleared. It panics on an unknown name: the statement sets are embedded and
// checked by tests.
func PrepNamed(conn *sqlite.Conn, set *SQLSet, name string) *sqlite.Stmt {
	q, ok := set.Get(name)
	if !ok {
		panic(fmt.Sprintf("sql: no statement %q in %s", name, set.dir))
	}
	stmt := conn.Prep(q)
	_ = stmt.ClearBindings()
	return stmt
}

// migration is one numbered forward-only schema step.
type migration struct {
	version int
	name    string // its file in schema/, without the extension
}

// script returns the step's SQL, read from the embedded files.
func (m migration) script() string {
	q, ok := schemaSteps.Get(m.name)
	if !ok {
		panic(fmt.Sprintf("schema: migration %s vanished", m.name))
	}
	return q
}

// schemaSteps holds the schema's migrations, read only when one is run.
var schemaSteps = NewSQLSet(schemaFiles, "schema")

// migrations returns the embedded schema steps in order, from the file
// names alone. Files are named NNN.sql and are never edited once released.
var migrations = sync.OnceValue(func() []migration {
	var out []migration
	for _, name := range schemaSteps.Names() {
		v, err := strconv.Atoi(name)
		if err != nil {
			panic(fmt.Sprintf("schema: bad migration name %q", name))
		}
		out = append(out, migration{version: v, name: name})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			panic(fmt.Sprintf("schema: migration %d missing", i+1))
		}
	}
	return out
})

// SchemaVersion is the newest schema this build of awr knows.
func SchemaVersion() int { return len(migrations()) }

// OpenConn opens an SQLite connection, with awr's allocator put in front
// of SQLite's default one first (sqlmem: it must be in place before the
// first connection of the process). The flags are sqlite.OpenConn's.
func OpenConn(uri string, flags ...sqlite.OpenFlags) (*sqlite.Conn, error) {
	sqlmem.Install()
	return sqlite.OpenConn(uri, flags...)
}
