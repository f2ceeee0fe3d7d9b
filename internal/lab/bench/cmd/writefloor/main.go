// Command writefloor measures what writing a rebuilt project's projections
// costs through the SQLite awr runs on (zombiezen.com/go/sqlite over
// modernc.org/sqlite, with awr's allocator in front), with nothing read
// from the log, decoded, hashed or folded. On a copy of the database
// (VACUUM INTO a temporary directory), after dropping every projection
// index, one transaction with synchronous=OFF (its commit is not timed,
// so the floor errs low):
//
//   - rows: every projection table's rows copied into a new table
//     without indexes (CREATE TABLE ... AS SELECT);
//   - indexes: every projection index built again, as awr defines it;
//   - search: the full-text index rebuilt (FTS5 'rebuild');
//   - log: the events table's rows copied into a new table with its
//     indexes (what appending the log writes, without hashing).
//
// It prints the seconds of each phase, on the clock and in CPU (user +
// system, the process's own: on a shared machine the clock also counts
// the time other processes held the cores, and only CPU seconds compare
// with the CPU seconds of a replay or a generation measured beside it),
// and the events per second that a replay (rows, indexes, search) could
// reach if reading, decoding and folding cost nothing, and that a writer
// of the log with its projections (all four: bench generate) could reach
// if deciding cost nothing. bench/write-floor.sh runs the first three in the native
// sqlite3 shell.
//
//	go run ./internal/lab/bench/cmd/writefloor PROJECT/.awr/awr.db
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/awr-dev/awr/events"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: writefloor PROJECT/.awr/awr.db (a rebuilt project database)")
		os.Exit(2)
	}
	f, err := measure(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "writefloor:", err)
		os.Exit(1)
	}
	f.print(os.Stdout)
}

// phase is one part of the floor: its statements and how long they took,
// on the clock and in the process's CPU.
type phase struct {
	name  string
	stmts []string
	took  time.Duration
	cpu   time.Duration
}

// floor is what measure found.
type floor struct {
	events int64
	phases []*phase
}

func (f *floor) print(w io.Writer) {
	var replay, total, replayCPU, totalCPU time.Duration
	for _, p := range f.phases {
		fmt.Fprintf(w, "%s %.3f s (CPU %.3f s)\n", p.name, p.took.Seconds(), p.cpu.Seconds())
		total += p.took
		totalCPU += p.cpu
		if p.name != "log" {
			replay += p.took
			replayCPU += p.cpu
		}
	}
	fmt.Fprintf(w, "events %d\n", f.events)
	fmt.Fprintf(w, "replay floor (rows, indexes, search) %.3f s: at most %.0f events/s (CPU %.3f s: %.0f events per CPU second)\n",
		replay.Seconds(), float64(f.events)/replay.Seconds(), replayCPU.Seconds(), float64(f.events)/replayCPU.Seconds())
	fmt.Fprintf(w, "write floor (and the log) %.3f s: at most %.0f events/s (CPU %.3f s: %.0f events per CPU second)\n",
		total.Seconds(), float64(f.events)/total.Seconds(), totalCPU.Seconds(), float64(f.events)/totalCPU.Seconds())
}

// cpuTime returns the CPU time (user + system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// copyOf copies the database at src to dst (VACUUM INTO, src only read)
// and opens the copy with durability off: the floor times the writes'
// work, not the disk's.
func copyOf(src, dst string) (*sqlite.Conn, error) {
	in, err := events.OpenConn(src, sqlite.OpenReadOnly)
	if err != nil {
		return nil, err
	}
	err = sqlitex.ExecuteTransient(in, "VACUUM INTO :dst", &sqlitex.ExecOptions{Named: map[string]any{":dst": dst}})
	in.Close()
	if err != nil {
		return nil, fmt.Errorf("copy %s: %w", src, err)
	}
	conn, err := events.OpenConn(dst, sqlite.OpenReadWrite)
	if err != nil {
		return nil, err
	}
	for _, p := range []string{"PRAGMA synchronous=OFF", "PRAGMA temp_store=MEMORY", "PRAGMA cache_size=-262144", "PRAGMA threads=2"} {
		if err := sqlitex.ExecuteTransient(conn, p, nil); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return conn, nil
}

// projection selects the schema rows of the projections' tables.
const projection = `tbl_name LIKE 'p\_%' ESCAPE '\'`

// column returns the first column of query's rows.
func column(conn *sqlite.Conn, query string) ([]string, error) {
	var out []string
	err := sqlitex.ExecuteTransient(conn, query, &sqlitex.ExecOptions{ResultFunc: func(st *sqlite.Stmt) error {
		out = append(out, st.ColumnText(0))
		return nil
	}})
	return out, err
}

// projectionTables returns the projections' tables the rows phase copies,
// and the full-text indexes the search phase rebuilds. The full-text
// indexes (virtual tables, and the shadow tables that hold them) are not
// copied: those whose content is another table are rebuilt; a
// contentless one is scratch.
func projectionTables(conn *sqlite.Conn) (tables, rebuilt []string, err error) {
	virtual, err := column(conn, "SELECT name FROM sqlite_schema WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%' AND "+projection)
	if err != nil {
		return nil, nil, err
	}
	if rebuilt, err = column(conn, "SELECT name FROM sqlite_schema WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE % USING fts5(%content=''p_%' AND "+projection); err != nil {
		return nil, nil, err
	}
	all, err := column(conn, "SELECT name FROM sqlite_schema WHERE type = 'table' AND "+projection)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range all {
		if !slices.ContainsFunc(virtual, func(v string) bool { return t == v || strings.HasPrefix(t, v+"_") }) {
			tables = append(tables, t)
		}
	}
	return tables, rebuilt, nil
}

// measure copies the database at src and times the four phases on the
// copy; src is only read. It fails when a copied table does not hold its
// source's rows (the floor would have measured less than the writes).
func measure(src string) (*floor, error) {
	if _, err := os.Stat(src); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "awr-writefloor-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	conn, err := copyOf(src, filepath.Join(dir, "floor.db"))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	col := func(query string) ([]string, error) { return column(conn, query) }
	count := func(table string) (n int64, err error) {
		err = sqlitex.ExecuteTransient(conn, "SELECT count(*) FROM "+table, &sqlitex.ExecOptions{ResultFunc: func(st *sqlite.Stmt) error {
			n = st.ColumnInt64(0)
			return nil
		}})
		return n, err
	}
	indexes, err := col("SELECT name FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL AND " + projection)
	if err != nil {
		return nil, err
	}
	indexSQL, err := col("SELECT sql FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL AND " + projection)
	if err != nil {
		return nil, err
	}
	tables, rebuilt, err := projectionTables(conn)
	if err != nil {
		return nil, err
	}
	logIndexes, err := col("SELECT sql FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL AND tbl_name = 'events'")
	if err != nil {
		return nil, err
	}
	f := &floor{}
	if f.events, err = count("events"); err != nil {
		return nil, err
	}
	for _, name := range indexes {
		if err := sqlitex.ExecuteTransient(conn, "DROP INDEX "+name, nil); err != nil {
			return nil, err
		}
	}
	rows := &phase{name: "rows"}
	for _, t := range tables {
		rows.stmts = append(rows.stmts, "CREATE TABLE floor_"+t+" AS SELECT * FROM "+t)
	}
	// The log's copy is declared as the log is (its columns, and the two
	// UNIQUE constraints with their automatic indexes) and gets the log's
	// named indexes (renamed: index names are unique in a schema) before
	// its rows, so that they are maintained row by row as an append
	// maintains them.
	logTable, err := col("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'events'")
	if err != nil || len(logTable) != 1 || !strings.HasPrefix(logTable[0], "CREATE TABLE events (") {
		return nil, fmt.Errorf("read the declaration of the events table: %v (%q)", err, logTable)
	}
	log := &phase{name: "log", stmts: []string{strings.Replace(logTable[0], "CREATE TABLE events (", "CREATE TABLE floor_events (", 1)}}
	for _, q := range logIndexes {
		q = strings.Replace(q, " ON events ", " ON floor_events ", 1)
		log.stmts = append(log.stmts, strings.Replace(q, "CREATE INDEX ", "CREATE INDEX floor_", 1))
	}
	log.stmts = append(log.stmts, "INSERT INTO floor_events SELECT * FROM events ORDER BY seq")
	search := &phase{name: "search"}
	for _, t := range rebuilt {
		search.stmts = append(search.stmts, "INSERT INTO "+t+"("+t+") VALUES('rebuild')")
	}
	f.phases = []*phase{
		rows,
		{name: "indexes", stmts: indexSQL},
		search,
		log,
	}
	if err := sqlitex.ExecuteTransient(conn, "BEGIN", nil); err != nil {
		return nil, err
	}
	for _, p := range f.phases {
		start, startCPU := time.Now(), cpuTime()
		for _, q := range p.stmts {
			if err := sqlitex.ExecuteTransient(conn, q, nil); err != nil {
				return nil, fmt.Errorf("%s: %w", q, err)
			}
		}
		p.took, p.cpu = time.Since(start), cpuTime()-startCPU
	}
	if err := sqlitex.ExecuteTransient(conn, "COMMIT", nil); err != nil {
		return nil, err
	}
	return f, sameRows(count, append(tables, "events"))
}

// sameRows checks that each of tables' floor_ copy holds its rows.
func sameRows(count func(table string) (int64, error), tables []string) error {
	for _, t := range tables {
		want, err := count(t)
		if err != nil {
			return err
		}
		if got, err := count("floor_" + t); err != nil || got != want {
			return fmt.Errorf("the copy of %s holds %d rows, not %d (%v)", t, got, want, err)
		}
	}
	return nil
}
