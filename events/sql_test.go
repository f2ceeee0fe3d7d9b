package events

import (
	"context"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

func TestSQLSet(t *testing.T) {
	set := NewSQLSet(sqlFiles, "sql")
	raw, err := fs.ReadFile(sqlFiles, "sql/head.sql")
	require.NoError(t, err)
	q, ok := set.Get("head")
	require.True(t, ok)
	require.Equal(t, strings.TrimSpace(string(raw)), q)
	require.NotEqual(t, string(raw), q, "the file ends in a newline; the statement is trimmed")

	for _, name := range []string{"", "no_such_statement", "../sql/head", "sql/head", "head.sql"} {
		_, ok := set.Get(name)
		require.False(t, ok, "%q", name)
	}

	names := set.Names()
	entries, err := fs.ReadDir(sqlFiles, "sql")
	require.NoError(t, err)
	require.Len(t, names, len(entries))
	require.True(t, sort.StringsAreSorted(names))
	require.Contains(t, names, "head")

	// Many goroutines asking at once for statements not yet read get the
	// same text.
	fresh := NewSQLSet(sqlFiles, "sql")
	var wg sync.WaitGroup
	got := make([][]string, 8)
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, n := range names {
				q, ok := fresh.Get(n)
				if !ok {
					q = "missing"
				}
				got[g] = append(got[g], q)
			}
		}()
	}
	wg.Wait()
	for g := range got {
		require.Equal(t, got[0], got[g])
	}
	require.NotContains(t, got[0], "missing")

	panicked := func() (msg any) {
		defer func() { msg = recover() }()
		PrepNamed(nil, set, "no_such_statement")
		return nil
	}()
	require.Equal(t, `sql: no statement "no_such_statement" in sql`, panicked)
}

// TestStatements_Prepare prepares every embedded statement of the log
// and every schema step's script is there: the sets are read on first
// use, so a broken file would otherwise show only when its command runs.
func TestStatements_Prepare(t *testing.T) {
	st, err := Open(context.Background(), DBPath(t.TempDir()), Options{Create: true})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	require.NoError(t, st.Read(context.Background(), func(r *Reader) error { return statements.PrepareAll(r.Conn) }))
	broken := NewSQLSet(fstest.MapFS{"q/ok.sql": {Data: []byte("SELECT 1")}, "q/bad.sql": {Data: []byte("SELEC nothing")}}, "q")
	err = st.Read(context.Background(), func(r *Reader) error { return broken.PrepareAll(r.Conn) })
	require.ErrorContains(t, err, "q/bad.sql: ")
	// A bare LIMIT or OFFSET parameter makes SQLite compile the
	// statement again at every binding: refused, and its expression form
	// taken.
	for _, q := range []string{"SELECT seq FROM events LIMIT :limit", "SELECT seq FROM events ORDER BY seq LIMIT :limit;", "SELECT seq FROM events LIMIT 5 OFFSET :skip", "SELECT seq FROM events LIMIT :n OFFSET 2"} {
		bare := NewSQLSet(fstest.MapFS{"q/bare.sql": {Data: []byte(q)}}, "q")
		err = st.Read(context.Background(), func(r *Reader) error { return bare.PrepareAll(r.Conn) })
		require.ErrorContains(t, err, "q/bare.sql: ", q)
		require.ErrorContains(t, err, "+ 0", q)
	}
	expr := NewSQLSet(fstest.MapFS{"q/expr.sql": {Data: []byte("SELECT seq FROM events ORDER BY seq LIMIT :limit + 0 OFFSET :skip + 0;")}}, "q")
	require.NoError(t, st.Read(context.Background(), func(r *Reader) error { return expr.PrepareAll(r.Conn) }))
	steps := migrations()
	require.Equal(t, SchemaVersion(), len(steps))
	for i, m := range steps {
		require.Equal(t, i+1, m.version)
		require.NotEmpty(t, m.script(), m.name)
	}
}
