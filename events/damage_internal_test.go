package events

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMigrationObjects: migrationCreates, the list the check at open
// reads, leaves after each version what the migrations' scripts do;
// 005 redefines a trigger and adds nothing.
func TestMigrationObjects(t *testing.T) {
	require.Len(t, migrationCreates, len(migrations()))
	parsed := map[string]bool{}
	for i, m := range migrations() {
		ScriptObjects(parsed, m.script())
		require.Equal(t, parsed, migrationObjects(i+1), "after %s.sql", m.name)
	}
	require.Len(t, migrationObjects(5), 10)
	require.Equal(t, migrationObjects(4), migrationObjects(5))
}

// TestScriptObjects: CREATE and DROP statements at the start of a line,
// with their modifiers and guards, whatever the case.
func TestScriptObjects(t *testing.T) {
	got := map[string]bool{}
	ScriptObjects(got, "-- CREATE TABLE commented\nCREATE TABLE IF NOT EXISTS a (x TEXT DEFAULT 'CREATE TABLE b');\n  CREATE UNIQUE INDEX c ON a (x);\nCREATE VIRTUAL TABLE d USING fts5(x);\nDROP INDEX IF EXISTS c;\ncreate trigger e before insert on a begin select 1; end;\nCREATE TABLE f(x);")
	require.Equal(t, map[string]bool{"a": true, "d": true, "e": true, "f": true}, got)
}

// BenchmarkCheckObjects is the schema check every open of a project at
// the newest version runs, without the projectors' part
// (projections.BenchmarkObjects).
func BenchmarkCheckObjects(b *testing.B) {
	ctx := context.Background()
	st, err := Open(ctx, filepath.Join(b.TempDir(), "awr.db"), Options{Create: true})
	require.NoError(b, err)
	defer st.Close()
	conn, err := st.take(ctx)
	require.NoError(b, err)
	defer st.pool.Put(conn)
	for b.Loop() {
		if _, _, err := checkObjects(conn, st.path, SchemaVersion(), nil); err != nil {
			b.Fatal(err)
		}
	}
}
