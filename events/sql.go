package events

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/awr-dev/awr/sqlmem"
	"zombiezen.com/go/sqlite"
)

//go:embed sql/*.sql
var sqlFiles embed.FS

//go:embed schema/*.sql
var schemaFiles embed.FS

// statements holds every embedded statement, keyed by file name without
// extension; each file holds exactly one statement.
var statements = loadSQL(sqlFiles, "sql")

// LoadSQL reads every *.sql file in dir of fsys into a map keyed by file name
// without the extension. Packages that keep their SQL in embedded files
// (projections) use it too.
func LoadSQL(fsys fs.FS, dir string) map[string]string { return loadSQL(fsys, dir) }

func loadSQL(fsys fs.FS, dir string) map[string]string {
	out := map[string]string{}
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		b, err := fs.ReadFile(fsys, dir+"/"+e.Name())
		if err != nil {
			panic(err)
		}
		out[strings.TrimSuffix(e.Name(), ".sql")] = strings.TrimSpace(string(b))
	}
	return out
}

// prep returns the cached prepared statement for the named embedded query,
// with its bindings cleared.
func prep(conn *sqlite.Conn, name string) *sqlite.Stmt {
	return PrepNamed(conn, statements, name)
}

// PrepNamed returns conn's cached statement for set[name] with bindings
// cleared. It panics on an unknown name: the statement sets are embedded and
// checked by tests.
func PrepNamed(conn *sqlite.Conn, set map[string]string, name string) *sqlite.Stmt {
	q, ok := set[name]
	if !ok {
		panic(fmt.Sprintf("sql: no statement %q", name))
	}
	stmt := conn.Prep(q)
	_ = stmt.ClearBindings()
	return stmt
}

// migration is one numbered forward-only schema step.
type migration struct {
	version int
	script  string
}

// migrations returns the embedded schema steps in order. Files are named
// NNN.sql and are never edited once released.
func migrations() []migration {
	set := loadSQL(schemaFiles, "schema")
	var out []migration
	for name, script := range set {
		v, err := strconv.Atoi(name)
		if err != nil {
			panic(fmt.Sprintf("schema: bad migration name %q", name))
		}
		out = append(out, migration{version: v, script: script})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			panic(fmt.Sprintf("schema: migration %d missing", i+1))
		}
	}
	return out
}

// SchemaVersion is the newest schema this build of awr knows.
func SchemaVersion() int { return len(migrations()) }

// OpenConn opens an SQLite connection, with awr's allocator put in front
// of SQLite's default one first (sqlmem: it must be in place before the
// first connection of the process). The flags are sqlite.OpenConn's.
func OpenConn(uri string, flags ...sqlite.OpenFlags) (*sqlite.Conn, error) {
	sqlmem.Install()
	return sqlite.OpenConn(uri, flags...)
}
