package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// The floors above copy each table with one statement and build each
// index by one sort. A writer cannot: a command appends its event and
// its rows one INSERT at a time, through every index of their tables,
// and a replay's fold writes each row with its own INSERT before it
// builds the indexes. The statement floors time that, with the rows'
// values already in memory (read from the table before the clock
// starts, nothing decoded, hashed, folded or decided) and no full-text
// index written, so they err low:
//
//   - rows one by one: every projection row, one INSERT each, into a copy
//     of its table declared as the table is, without its indexes;
//   - indexes after: those copies' indexes built, as a rebuild's end
//     builds them;
//   - rows through indexes: every projection row, one INSERT each, into a
//     copy that has its table's indexes, as an append maintains them;
//   - log through indexes: the events table's rows the same way.
//
// A replay cannot be cheaper than rows one by one, indexes after and the
// bulk floor's search; a writer of the log cannot be cheaper than rows
// and log through indexes.

// statementChunk is how many rows are read into memory at a time.
const statementChunk = 10_000

// table is one table the statement floors write: its declaration and its
// indexes' statements.
type table struct {
	name    string
	decl    string
	indexes []string
	noRowid bool
}

// copyNamed renames a table's or an index's declaration onto prefix+t.
func (t *table) copyNamed(prefix, stmt string) string {
	for _, from := range []string{"CREATE TABLE " + t.name + " ", "CREATE TABLE " + t.name + "(", " ON " + t.name + " ", " ON " + t.name + "("} {
		to := strings.Replace(from, t.name, prefix+t.name, 1)
		stmt = strings.Replace(stmt, from, to, 1)
	}
	for _, kind := range []string{"CREATE INDEX ", "CREATE UNIQUE INDEX "} {
		if strings.HasPrefix(stmt, kind) {
			stmt = kind + prefix + strings.TrimPrefix(stmt, kind)
		}
	}
	return stmt
}

// tableOf reads name's declaration and its indexes.
func tableOf(conn *sqlite.Conn, name string) (*table, error) {
	decl, err := column(conn, "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = '"+name+"'")
	if err != nil || len(decl) != 1 {
		return nil, fmt.Errorf("read the declaration of %s: %v", name, err)
	}
	indexes, err := column(conn, "SELECT sql FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL AND tbl_name = '"+name+"'")
	if err != nil {
		return nil, err
	}
	return &table{name: name, decl: decl[0], indexes: indexes, noRowid: strings.Contains(decl[0], "WITHOUT ROWID")}, nil
}

// value is one column's value of a row held in memory.
type value struct {
	kind sqlite.ColumnType
	i    int64
	f    float64
	s    string
	b    []byte
}

// chunk reads at most statementChunk rows of t after the first skip, in
// its rowid order (its key's for a table without rowid).
func (t *table) chunk(conn *sqlite.Conn, skip int) ([][]value, error) {
	order := " ORDER BY rowid"
	if t.noRowid {
		order = ""
	}
	var rows [][]value
	err := sqlitex.ExecuteTransient(conn, fmt.Sprintf("SELECT * FROM %s%s LIMIT %d OFFSET %d", t.name, order, statementChunk, skip),
		&sqlitex.ExecOptions{ResultFunc: func(st *sqlite.Stmt) error {
			row := make([]value, st.ColumnCount())
			for i := range row {
				v := &row[i]
				switch v.kind = st.ColumnType(i); v.kind {
				case sqlite.TypeInteger:
					v.i = st.ColumnInt64(i)
				case sqlite.TypeFloat:
					v.f = st.ColumnFloat(i)
				case sqlite.TypeText:
					v.s = st.ColumnText(i)
				case sqlite.TypeBlob:
					v.b = make([]byte, st.ColumnLen(i))
					st.ColumnBytes(i, v.b)
				}
			}
			rows = append(rows, row)
			return nil
		}})
	return rows, err
}

// insertEach writes rows into prefix+t one INSERT each, and returns the
// CPU it took.
func (t *table) insertEach(conn *sqlite.Conn, prefix string, rows [][]value) (time.Duration, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	st, err := conn.Prepare("INSERT INTO " + prefix + t.name + " VALUES (" + strings.TrimSuffix(strings.Repeat("?, ", len(rows[0])), ", ") + ")")
	if err != nil {
		return 0, err
	}
	start := cpuTime()
	for _, row := range rows {
		for i, v := range row {
			switch v.kind {
			case sqlite.TypeInteger:
				st.BindInt64(i+1, v.i)
			case sqlite.TypeFloat:
				st.BindFloat(i+1, v.f)
			case sqlite.TypeText:
				st.BindText(i+1, v.s)
			case sqlite.TypeBlob:
				st.BindBytes(i+1, v.b)
			default:
				st.BindNull(i + 1)
			}
		}
		if _, err := st.Step(); err != nil {
			return 0, fmt.Errorf("insert into %s%s: %w", prefix, t.name, err)
		}
		if err := st.Reset(); err != nil {
			return 0, err
		}
	}
	return cpuTime() - start, nil
}

// statementFloor is what the statement floors measured, in CPU.
type statementFloor struct {
	oneByOne, indexesAfter, throughIndexes, log time.Duration
}

// measureStatements times the statement floors of the projection tables
// named and of the log, on conn (the copy measure made), in one
// transaction it does not time the commit of.
func measureStatements(conn *sqlite.Conn, projection []string) (*statementFloor, error) {
	if err := sqlitex.ExecuteTransient(conn, "BEGIN", nil); err != nil {
		return nil, err
	}
	s := &statementFloor{}
	for _, name := range append(projection, "events") {
		t, err := tableOf(conn, name)
		if err != nil {
			return nil, err
		}
		if err := s.write(conn, t, name == "events"); err != nil {
			return nil, err
		}
	}
	if err := sqlitex.ExecuteTransient(conn, "COMMIT", nil); err != nil {
		return nil, err
	}
	return s, nil
}

// write times t's rows written one by one: into a copy through its
// indexes, and (not for the log) into a copy without them whose indexes
// are built after. It fails when a copy does not hold t's rows.
func (s *statementFloor) write(conn *sqlite.Conn, t *table, log bool) error {
	prefixes := []string{"kept_"}
	if !log {
		prefixes = append(prefixes, "one_")
	}
	for _, p := range prefixes {
		if err := sqlitex.ExecuteTransient(conn, t.copyNamed(p, t.decl), nil); err != nil {
			return err
		}
	}
	for _, q := range t.indexes {
		if err := sqlitex.ExecuteTransient(conn, t.copyNamed("kept_", q), nil); err != nil {
			return err
		}
	}
	n := 0
	for {
		rows, err := t.chunk(conn, n)
		if err != nil || len(rows) == 0 {
			if err != nil {
				return err
			}
			break
		}
		n += len(rows)
		kept, err := t.insertEach(conn, "kept_", rows)
		if err != nil {
			return err
		}
		if log {
			s.log += kept
			continue
		}
		s.throughIndexes += kept
		one, err := t.insertEach(conn, "one_", rows)
		if err != nil {
			return err
		}
		s.oneByOne += one
	}
	if !log {
		start := cpuTime()
		for _, q := range t.indexes {
			if err := sqlitex.ExecuteTransient(conn, t.copyNamed("one_", q), nil); err != nil {
				return err
			}
		}
		s.indexesAfter += cpuTime() - start
	}
	return sameCount(conn, t.name, n, prefixes)
}

// sameCount checks that each prefixed copy of name holds n rows.
func sameCount(conn *sqlite.Conn, name string, n int, prefixes []string) error {
	for _, p := range prefixes {
		got, err := column(conn, "SELECT count(*) FROM "+p+name)
		if err != nil {
			return err
		}
		if len(got) != 1 || got[0] != fmt.Sprint(n) {
			return fmt.Errorf("the copy %s%s holds %v rows, not %d", p, name, got, n)
		}
	}
	return nil
}

// print writes the statement floors, each beside the bulk floor it
// bounds (replayCPU and writeCPU: the replay and write floors' CPU, and
// searchCPU the full-text phase's).
func (s *statementFloor) print(w io.Writer, events int64, replayCPU, writeCPU, searchCPU time.Duration) {
	for _, p := range []struct {
		name string
		cpu  time.Duration
	}{{"rows one by one", s.oneByOne}, {"indexes after", s.indexesAfter}, {"rows through indexes", s.throughIndexes}, {"log through indexes", s.log}} {
		fmt.Fprintf(w, "%s CPU %.3f s\n", p.name, p.cpu.Seconds())
	}
	replay := s.oneByOne + s.indexesAfter + searchCPU
	write := s.throughIndexes + s.log
	fmt.Fprintf(w, "replay floor by statements (rows one by one, indexes after, search) CPU %.3f s: %.0f events per CPU second, %.2f of the replay floor's\n",
		replay.Seconds(), float64(events)/replay.Seconds(), replayCPU.Seconds()/replay.Seconds())
	fmt.Fprintf(w, "write floor by statements (rows and the log through their indexes, no full-text index) CPU %.3f s: %.0f events per CPU second, %.2f of the write floor's\n",
		write.Seconds(), float64(events)/write.Seconds(), writeCPU.Seconds()/write.Seconds())
}
