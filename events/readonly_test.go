package events_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// kindCount is a projection counting events by kind in its table (named
// kind_count unless table says otherwise); each row records the version
// that folded it, so a rebuild by another version shows.
type kindCount struct {
	version int
	table   string
}

func (p kindCount) Name() string {
	if p.table == "" {
		return "kind_count"
	}
	return p.table
}
func (p kindCount) Version() int { return p.version }
func (p kindCount) Reset(conn *sqlite.Conn) error {
	return sqlitex.ExecuteScript(conn, fmt.Sprintf("DROP TABLE IF EXISTS %[1]s; CREATE TABLE %[1]s (kind TEXT PRIMARY KEY, n INTEGER NOT NULL, folded_by INTEGER NOT NULL);", p.Name()), nil)
}
func (p kindCount) Apply(conn *sqlite.Conn, e *events.Event, _ events.Payload) error {
	return sqlitex.Execute(conn, fmt.Sprintf("INSERT INTO %s (kind, n, folded_by) VALUES (?, 1, ?) ON CONFLICT (kind) DO UPDATE SET n = n + 1", p.Name()), &sqlitex.ExecOptions{Args: []any{string(e.Kind), p.version}})
}

// foldedBy reads the versions the kind_count rows were folded by and the
// count they hold.
func foldedBy(t *testing.T, st *events.Store) (versions []int, n int) {
	t.Helper()
	require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error {
		return sqlitex.Execute(r.Conn, "SELECT folded_by, n FROM kind_count ORDER BY kind", &sqlitex.ExecOptions{ResultFunc: func(s *sqlite.Stmt) error {
			versions = append(versions, s.ColumnInt(0))
			n += s.ColumnInt(1)
			return nil
		}})
	}))
	return versions, n
}

// snapshotFiles returns every file beside the database (the database, its
// write-ahead log and index) with its bytes.
func snapshotFiles(t *testing.T, path string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(path), e.Name()))
		require.NoError(t, err)
		out[e.Name()] = string(b)
	}
	return out
}

func head(t *testing.T, st *events.Store) int64 {
	t.Helper()
	h, err := st.Head(context.Background())
	require.NoError(t, err)
	return h.Revision
}

// writeN appends n sessions to st, named from first.
func writeN(t *testing.T, st *events.Store, rng *rand.Rand, first, n int) {
	t.Helper()
	// Bindings: a kind the log's rules let stand alone, so a rebuild
	// (events.Invariants) folds these logs too.
	for i := first; i < first+n; i++ {
		_, err := st.Write(context.Background(), opts(rng), func(tx *events.Tx) (any, error) {
			id := fmt.Sprintf("host:c%d", i)
			return tx.Append(events.NewEvent{Stream: "client/" + id, Payload: events.ClientBound{Client: "host", ExternalSession: id, SessionID: "s", Work: "W-1"}})
		})
		require.NoError(t, err)
	}
}

func TestOpen_ReadOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ro := func(t *testing.T, path string, ps ...events.Projector) *events.Store {
		t.Helper()
		st, err := events.Open(ctx, path, events.Options{ReadOnly: true, Projectors: ps})
		require.NoError(t, err)
		t.Cleanup(func() { st.Close() })
		return st
	}
	// closedLog makes a log of n events, closed (its write-ahead log
	// folded into the file and removed).
	closedLog := func(t *testing.T, n int, ps ...events.Projector) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), ".awr", "awr.db")
		st, err := events.Open(ctx, path, events.Options{Create: true, Projectors: ps})
		require.NoError(t, err)
		writeN(t, st, rand.New(rand.NewSource(1)), 0, n)
		require.NoError(t, st.Close())
		return path
	}

	t.Run("OK", func(t *testing.T) {
		path := closedLog(t, 3)
		before := snapshotFiles(t, path)
		require.Len(t, before, 1, "a closed log is one file")
		st := ro(t, path)
		require.EqualValues(t, 3, head(t, st))
		var kinds []events.Kind
		require.NoError(t, st.Scan(ctx, 1, 3, func(e *events.Event) error { kinds = append(kinds, e.Kind); return nil }))
		require.Len(t, kinds, 3)
		require.NoError(t, st.Close())
		require.Equal(t, before, snapshotFiles(t, path), "a read-only open changed or created a file")
	})
	t.Run("ErrWrite", func(t *testing.T) {
		path := closedLog(t, 1)
		before := snapshotFiles(t, path)
		st := ro(t, path)
		_, err := appendSession(t, st, opts(rand.New(rand.NewSource(2))), "late")
		fe := fault.As(err)
		require.Equal(t, fault.Storage, fe.Code, "%v", err)
		require.Equal(t, "write: database is read-only; nothing was written; check the permissions of .awr/awr.db and of .awr/ (this process may not write them)", fe.Message)
		require.Empty(t, fe.Hint, "no awr command gives the permission")
		err = st.Rebuild(ctx, nil)
		requireStorage(t, err, "database is read-only; nothing was written")
		require.EqualValues(t, 1, head(t, st))
		require.NoError(t, st.Close())
		require.Equal(t, before, snapshotFiles(t, path))
	})
	t.Run("ErrCreate", func(t *testing.T) {
		_, err := events.Open(ctx, filepath.Join(t.TempDir(), "awr.db"), events.Options{ReadOnly: true, Create: true})
		require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := events.Open(ctx, filepath.Join(t.TempDir(), ".awr", "awr.db"), events.Options{ReadOnly: true})
		require.True(t, fault.Is(err, fault.NotFound), "%v", err)
	})
	t.Run("ErrNewerSchema", func(t *testing.T) {
		path := closedLog(t, 1)
		conn, err := events.OpenConn(path, sqlite.OpenReadWrite)
		require.NoError(t, err)
		require.NoError(t, sqlitex.ExecuteTransient(conn, "PRAGMA user_version = 999", nil))
		require.NoError(t, conn.Close())
		before := snapshotFiles(t, path)
		_, err = events.Open(ctx, path, events.Options{ReadOnly: true})
		require.True(t, fault.Is(err, fault.Storage), "%v", err)
		require.Empty(t, fault.As(err).Hint)
		require.Contains(t, fault.As(err).Message, "upgrade awr")
		require.Equal(t, before, snapshotFiles(t, path))
	})
	t.Run("LiveWriter", func(t *testing.T) {
		// A writer holds the database open: its commits are in the
		// write-ahead log, which the reader reads through the index.
		path := filepath.Join(t.TempDir(), ".awr", "awr.db")
		w, err := events.Open(ctx, path, events.Options{Create: true})
		require.NoError(t, err)
		defer w.Close()
		rng := rand.New(rand.NewSource(3))
		writeN(t, w, rng, 0, 2)
		fi, err := os.Stat(path + "-wal")
		require.NoError(t, err)
		require.NotZero(t, fi.Size())
		st := ro(t, path)
		require.EqualValues(t, 2, head(t, st))
		writeN(t, w, rng, 2, 1)
		require.EqualValues(t, 3, head(t, st), "a read-only store sees the writer's later commits")
	})
	t.Run("WriterAppears", func(t *testing.T) {
		// Opened on a closed log (read without locks), then the owner
		// writes: the next read takes a new view rather than answer from
		// the old one.
		path := closedLog(t, 1)
		st := ro(t, path)
		require.EqualValues(t, 1, head(t, st))
		w, err := events.Open(ctx, path, events.Options{})
		require.NoError(t, err)
		rng := rand.New(rand.NewSource(4))
		writeN(t, w, rng, 10, 1)
		require.EqualValues(t, 2, head(t, st), "commits in the write-ahead log")
		writeN(t, w, rng, 11, 1)
		require.NoError(t, w.Close())
		require.EqualValues(t, 3, head(t, st), "commits folded into the file")
	})
	t.Run("ConcurrentReads", func(t *testing.T) {
		// Readers in several goroutines while the owner writes and closes,
		// which makes them take new views: each read either sees a
		// revision no older than the one before it, or is refused as
		// changed under it.
		path := closedLog(t, 1)
		st, err := events.Open(ctx, path, events.Options{ReadOnly: true, PoolSize: 4})
		require.NoError(t, err)
		defer st.Close()
		done := make(chan struct{})
		errs := make(chan error, 4)
		for range 4 {
			go func() {
				var last int64
				for {
					select {
					case <-done:
						errs <- nil
						return
					default:
					}
					h, err := st.Head(ctx)
					if err != nil && fault.As(err).Details["changed"] != true {
						errs <- err
						return
					}
					if err == nil && h.Revision < last {
						errs <- fmt.Errorf("revision went back from %d to %d", last, h.Revision)
						return
					}
					if err == nil {
						last = h.Revision
					}
				}
			}()
		}
		rng := rand.New(rand.NewSource(9))
		for i := range 3 {
			w, err := events.Open(ctx, path, events.Options{})
			require.NoError(t, err)
			writeN(t, w, rng, 100+10*i, 2)
			require.NoError(t, w.Close())
		}
		close(done)
		for range 4 {
			require.NoError(t, <-errs)
		}
		require.EqualValues(t, 7, head(t, st))
	})
	t.Run("ErrChangedUnderRead", func(t *testing.T) {
		// The file changes in the middle of a read made without locks:
		// the read is refused (it may be torn), the next one sees the
		// change.
		path := closedLog(t, 1)
		st := ro(t, path)
		err := st.Read(ctx, func(r *events.Reader) error {
			w, err := events.Open(ctx, path, events.Options{})
			require.NoError(t, err)
			writeN(t, w, rand.New(rand.NewSource(5)), 20, 1)
			return w.Close()
		})
		fe := fault.As(err)
		require.Equal(t, fault.Storage, fe.Code, "%v", err)
		require.Contains(t, fe.Message, "changed while being read without locks")
		require.Empty(t, fe.Hint)
		require.Equal(t, true, fe.Details["changed"])
		require.EqualValues(t, 2, head(t, st))
	})
	t.Run("ErrLogWithoutIndex", func(t *testing.T) {
		// A write-ahead log with commits but no index (copied without
		// it): reading it would need creating the index; the file alone
		// lacks the commits. Refused, nothing created.
		src := filepath.Join(t.TempDir(), "awr.db")
		w, err := events.Open(ctx, src, events.Options{Create: true})
		require.NoError(t, err)
		defer w.Close()
		writeN(t, w, rand.New(rand.NewSource(6)), 0, 2)
		path := filepath.Join(t.TempDir(), "awr.db")
		for _, suffix := range []string{"", "-wal"} {
			b, err := os.ReadFile(src + suffix)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path+suffix, b, 0o600))
		}
		before := snapshotFiles(t, path)
		_, err = events.Open(ctx, path, events.Options{ReadOnly: true})
		fe := fault.As(err)
		require.Equal(t, fault.Storage, fe.Code, "%v", err)
		require.Contains(t, fe.Message, path+"-wal")
		require.Equal(t, path, fe.Details["path"])
		require.Contains(t, fe.Message, "run any awr command once as a user who can write")
		require.Equal(t, before, snapshotFiles(t, path))
	})
	t.Run("StaleProjection", func(t *testing.T) {
		// A newer projection version: a writable open would rebuild it;
		// the read-only open folds it on an in-memory copy and reads
		// that, leaving the file's projection as it was.
		path := closedLog(t, 3, kindCount{version: 1})
		before := snapshotFiles(t, path)
		st := ro(t, path, kindCount{version: 2})
		versions, n := foldedBy(t, st)
		require.Equal(t, []int{2}, versions, "the reads see the projection folded by the new version")
		require.Equal(t, 3, n)
		require.EqualValues(t, 3, head(t, st))
		_, err := appendSession(t, st, opts(rand.New(rand.NewSource(7))), "late")
		require.True(t, fault.Is(err, fault.Storage), "%v", err)
		require.NoError(t, st.Close())
		require.Equal(t, before, snapshotFiles(t, path))
		old := ro(t, path, kindCount{version: 1})
		versions, _ = foldedBy(t, old)
		require.Equal(t, []int{1}, versions, "the file's projection is untouched")
	})
	t.Run("StaleProjectionLiveWriter", func(t *testing.T) {
		// The copy is taken again when the owner writes.
		path := filepath.Join(t.TempDir(), ".awr", "awr.db")
		w, err := events.Open(ctx, path, events.Options{Create: true, Projectors: []events.Projector{kindCount{version: 1}}})
		require.NoError(t, err)
		defer w.Close()
		rng := rand.New(rand.NewSource(8))
		writeN(t, w, rng, 0, 2)
		st := ro(t, path, kindCount{version: 2})
		_, n := foldedBy(t, st)
		require.Equal(t, 2, n)
		writeN(t, w, rng, 2, 1)
		versions, n := foldedBy(t, st)
		require.Equal(t, []int{2}, versions)
		require.Equal(t, 3, n, "the copy follows the writer")
	})
	t.Run("RetiredProjection", func(t *testing.T) {
		// A projection this awr no longer has: a writable open forgets
		// it, and so do the reads of a read-only one.
		path := closedLog(t, 2, kindCount{version: 1}, kindCount{version: 1, table: "kept"})
		before := snapshotFiles(t, path)
		st := ro(t, path, kindCount{version: 1, table: "kept"})
		require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
			states, err := events.ProjectionStates(r.Conn)
			require.Equal(t, []events.ProjectionState{{Name: "kept", Version: 1, LastSeq: 2}}, states)
			return err
		}))
		require.NoError(t, st.Close())
		require.Equal(t, before, snapshotFiles(t, path))
	})
}

func TestWritable(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "awr.db")
	require.False(t, events.Writable(path), "a missing database")
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	require.True(t, events.Writable(path))
	if os.Geteuid() == 0 {
		t.Skip("root writes whatever the permissions say; internal/lab/soak/readonly_test.go runs as nobody")
	}
	require.NoError(t, os.Chmod(path, 0o400))
	require.False(t, events.Writable(path), "a read-only file")
	require.NoError(t, os.Chmod(path, 0o600))
	require.NoError(t, os.Chmod(filepath.Dir(path), 0o500))
	t.Cleanup(func() { os.Chmod(filepath.Dir(path), 0o700) })
	require.False(t, events.Writable(path), "a read-only directory")
}
