package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/lab/bench"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// schemaOf lists the database's indexes and tables with their SQL.
func schemaOf(t *testing.T, path string) map[string]string {
	t.Helper()
	conn, err := events.OpenConn(path, sqlite.OpenReadOnly)
	require.NoError(t, err)
	defer conn.Close()
	out := map[string]string{}
	require.NoError(t, sqlitex.ExecuteTransient(conn, "SELECT name, coalesce(sql, '') FROM sqlite_schema", &sqlitex.ExecOptions{ResultFunc: func(st *sqlite.Stmt) error {
		out[st.ColumnText(0)] = st.ColumnText(1)
		return nil
	}}))
	return out
}

// generated is a small generated project's database and its head.
func generated(t *testing.T) (string, int64) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "awr.db")
	st, err := bench.NewProject(ctx, path, 20, 1)
	require.NoError(t, err)
	res, err := bench.Generate(ctx, st, bench.GenerateOptions{Events: 600, Seed: 3, Batch: 100})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	return path, res.Head
}

func TestMeasure(t *testing.T) {
	path, head := generated(t)
	before := schemaOf(t, path)

	f, err := measure(path)
	require.NoError(t, err)
	require.Equal(t, head, f.events)
	byName := map[string]*phase{}
	for _, p := range f.phases {
		byName[p.name] = p
	}
	// Every projection index is built again, and only those.
	projectionIndexes := 0
	for name, sql := range before {
		if strings.HasPrefix(name, "p_") && (strings.HasPrefix(sql, "CREATE INDEX ") || strings.HasPrefix(sql, "CREATE UNIQUE INDEX ")) {
			projectionIndexes++
			require.Contains(t, byName["indexes"].stmts, sql)
		}
	}
	require.Greater(t, projectionIndexes, 40)
	require.Len(t, byName["indexes"].stmts, projectionIndexes)
	require.NotEmpty(t, byName["rows"].stmts)
	require.Contains(t, byName["rows"].stmts, "CREATE TABLE floor_p_work_log AS SELECT * FROM p_work_log")
	// The log's copy has the log's named indexes.
	require.Contains(t, byName["log"].stmts, "CREATE INDEX floor_events_stream_seq ON floor_events (stream, seq)")
	require.Equal(t, before, schemaOf(t, path), "the source database is only read")

	var out bytes.Buffer
	f.print(&out)
	require.Contains(t, out.String(), "replay floor (rows, indexes, search)")
	require.Contains(t, out.String(), "write floor (and the log)")
	for _, p := range f.phases {
		require.Positive(t, p.cpu, "phase %s: its CPU time", p.name)
		require.Regexp(t, `(?m)^`+p.name+` [0-9]+\.[0-9]{3} s \(CPU [0-9]+\.[0-9]{3} s\)$`, out.String())
	}
	require.Regexp(t, `replay floor \(rows, indexes, search\) [0-9.]+ s: at most [0-9]+ events/s \(CPU [0-9.]+ s: [0-9]+ events per CPU second\)`, out.String())

	// The statement floors wrote every row (measure fails otherwise), and
	// each took CPU.
	s := f.statements
	require.NotNil(t, s)
	for name, cpu := range map[string]time.Duration{"rows one by one": s.oneByOne, "indexes after": s.indexesAfter, "rows through indexes": s.throughIndexes, "log through indexes": s.log} {
		require.Positive(t, cpu, name)
		require.Regexp(t, `(?m)^`+name+` CPU [0-9]+\.[0-9]{3} s$`, out.String())
	}
	require.Regexp(t, `(?m)^replay floor by statements \(rows one by one, indexes after, search\) CPU [0-9.]+ s: [0-9]+ events per CPU second, [0-9.]+ of the replay floor's$`, out.String())
	require.Regexp(t, `(?m)^write floor by statements \(rows and the log through their indexes, no full-text index\) CPU [0-9.]+ s: [0-9]+ events per CPU second, [0-9.]+ of the write floor's$`, out.String())
}

// TestCopyNamed renames a table's declaration and its indexes onto a
// copy, and leaves alone a table whose name only begins with the name.
func TestCopyNamed(t *testing.T) {
	tb := &table{name: "p_search"}
	for stmt, want := range map[string]string{
		"CREATE TABLE p_search (doc TEXT)":                         "CREATE TABLE kept_p_search (doc TEXT)",
		"CREATE TABLE p_search(doc TEXT)":                          "CREATE TABLE kept_p_search(doc TEXT)",
		"CREATE INDEX p_search_open ON p_search (doc)":             "CREATE INDEX kept_p_search_open ON kept_p_search (doc)",
		"CREATE UNIQUE INDEX p_search_version ON p_search(doc, a)": "CREATE UNIQUE INDEX kept_p_search_version ON kept_p_search(doc, a)",
		"CREATE INDEX p_search_term_w ON p_search_term (w)":        "CREATE INDEX kept_p_search_term_w ON p_search_term (w)",
	} {
		require.Equal(t, want, tb.copyNamed("kept_", stmt), stmt)
	}
}

// TestWriteFloorScript runs bench/write-floor.sh, the same floor in the
// native sqlite3 shell (skipped on a machine without it, failing in CI,
// where .ci/run installs Debian's sqlite3 package).
func TestWriteFloorScript(t *testing.T) {
	if _, err := exec.LookPath("sqlite3"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("sqlite3 is not installed, and CI=%s: .ci/run installs Debian's sqlite3 package", os.Getenv("CI"))
		}
		t.Skip("sqlite3 is not installed (apt-get install sqlite3); CI runs this test")
	}
	path, head := generated(t)
	before := schemaOf(t, path)
	out, err := exec.Command("sh", "../../write-floor.sh", path).CombinedOutput()
	require.NoError(t, err, "%s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, 5, "%s", out)
	require.Equal(t, fmt.Sprintf("events %d", head), lines[0])
	for i, name := range []string{"rows", "indexes", "search"} {
		require.Regexp(t, `^`+name+` [0-9]+\.[0-9]{3} s$`, lines[i+1])
	}
	require.Regexp(t, `^total [0-9]+\.[0-9]{3} s \(at most [0-9]+ events/s\)$`, lines[4])
	require.Equal(t, before, schemaOf(t, path), "the source database is only read")

	// A usage error is exit 2.
	err = exec.Command("sh", "../../write-floor.sh").Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	require.Equal(t, 2, exit.ExitCode())
}
