package events

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestScriptObjects: the objects each migration leaves, read from the
// scripts, are the log's own schema; 005 redefines a trigger and adds
// nothing.
func TestScriptObjects(t *testing.T) {
	require.Equal(t, map[string]bool{"events": true, "events_stream_seq": true, "events_seq_gapless": true, "events_no_update": true, "events_no_delete": true, "requests": true, "projections": true}, migrationObjects(1))
	five := migrationObjects(5)
	require.Len(t, five, 10)
	require.Equal(t, migrationObjects(4), five)
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
