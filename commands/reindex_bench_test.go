package commands_test

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/lab/bench"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// BenchmarkReindexOneEdit measures what a reindex stores after one task of
// a 100,000-task register is edited: log-bytes/op is the source_indexed
// events appended (their export lines), db-bytes/op the growth of the
// database (the log and the projections' new versions), and
// whole-event-bytes the export line of the whole index, which is what every
// reindex stored before deltas. Each element's reference carries the
// register's content hash, as the parsers write it, so the projection
// restamps every item a delta leaves as it was.
//
//	go test ./commands -run '^$' -bench BenchmarkReindexOneEdit -benchtime 3x
func BenchmarkReindexOneEdit(b *testing.B) {
	const n = 100_000
	ctx := context.Background()
	st, err := events.Open(ctx, filepath.Join(b.TempDir(), ".awr", "awr.db"), events.Options{Create: true, Projectors: projections.Projectors()})
	require.NoError(b, err)
	defer st.Close()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	env := &commands.Env{Store: st, Now: func() time.Time { now = now.Add(time.Second); return now }, Entropy: rand.New(rand.NewSource(1))}
	_, err = commands.Init(ctx, env, commands.InitRequest{Name: "bench"})
	require.NoError(b, err)
	src := bench.Source(n, 1)
	stamp := func(hash string) {
		src.ContentHash = hash
		for i := range src.Items {
			src.Items[i].Source.ContentHash = hash
		}
		for i := range src.Goals {
			src.Goals[i].Source.ContentHash = hash
		}
		for i := range src.Rules {
			src.Rules[i].Source.ContentHash = hash
		}
	}
	stamp("sha256:v0")
	_, err = commands.IndexSources(ctx, env, commands.IndexSourcesRequest{Sources: []events.SourceIndexed{src}})
	require.NoError(b, err)
	whole, err := events.MarshalPayload(src)
	require.NoError(b, err)
	var logBytes, dbBytes int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		it := &src.Items[(i*7919)%n]
		it.Title += " (edited)"
		stamp(fmt.Sprintf("sha256:v%d", i+1))
		head, size := logHead(b, st)
		b.StartTimer()
		_, err := commands.IndexSources(ctx, env, commands.IndexSourcesRequest{Sources: []events.SourceIndexed{src}})
		b.StopTimer()
		require.NoError(b, err)
		require.NoError(b, st.Read(ctx, func(r *events.Reader) error {
			return events.ScanEvents(r.Conn, head+1, r.Head, func(e *events.Event) error {
				logBytes += int64(events.LineSize(e))
				return nil
			})
		}))
		_, after := logHead(b, st)
		dbBytes += after - size
		b.StartTimer()
	}
	b.ReportMetric(float64(logBytes)/float64(b.N), "log-bytes/op")
	b.ReportMetric(float64(dbBytes)/float64(b.N), "db-bytes/op")
	b.ReportMetric(float64(len(whole)), "whole-event-bytes")
}

// logHead returns the log's head and the database's size in bytes (pages
// in use times page size).
func logHead(b *testing.B, st *events.Store) (head, size int64) {
	require.NoError(b, st.Read(context.Background(), func(r *events.Reader) error {
		head = r.Head
		return sqlitex.ExecuteTransient(r.Conn, "SELECT (SELECT page_count FROM pragma_page_count()) - (SELECT freelist_count FROM pragma_freelist_count()), (SELECT page_size FROM pragma_page_size())", &sqlitex.ExecOptions{
			ResultFunc: func(stmt *sqlite.Stmt) error {
				size = stmt.ColumnInt64(0) * stmt.ColumnInt64(1)
				return nil
			},
		})
	}))
	return head, size
}
