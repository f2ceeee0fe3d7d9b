package events_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// requireDamaged asserts err is Storage "damaged" with the restore hint,
// its message holding each of words.
func requireDamaged(t *testing.T, err error, words ...string) {
	t.Helper()
	requireStorage(t, err, "database is damaged")
	require.Equal(t, events.RestoreHint, fault.As(err).Hint)
	for _, w := range words {
		require.Contains(t, err.Error(), w)
	}
}

// newLog makes a log with one event at a path of its own and closes it.
func newLog(t *testing.T) string {
	t.Helper()
	path := events.DBPath(t.TempDir())
	st, err := events.Open(context.Background(), path, events.Options{Create: true})
	require.NoError(t, err)
	_, err = st.Write(context.Background(), events.WriteOptions{Now: time.UnixMilli(1), Entropy: bytes.NewReader(make([]byte, 64)), Actor: "t"}, func(tx *events.Tx) (any, error) {
		_, err := tx.Append(events.NewEvent{Stream: "project", Payload: &events.ProjectInitialized{Name: "p", ProjectID: "01J00000000000000000000000"}})
		return nil, err
	})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	return path
}

// execOn runs statements on the database at path behind awr's back.
func execOn(t *testing.T, path string, stmts ...string) {
	t.Helper()
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadWrite)
	require.NoError(t, err)
	defer conn.Close()
	for _, q := range stmts {
		require.NoError(t, sqlitex.ExecuteTransient(conn, q, nil), q)
	}
}

// TestOpen_WrongFileType: a directory, a FIFO, /dev/null through a
// symbolic link, a text file and a file cut short in place of the
// database are each Storage "damaged" with the restore hint, at once (a
// FIFO never blocks the open), read-only or not.
func TestOpen_WrongFileType(t *testing.T) {
	t.Parallel()
	good, err := os.ReadFile(newLog(t))
	require.NoError(t, err)
	for name, make := range map[string]func(path string) error{
		"Directory": func(path string) error { return os.Mkdir(path, 0o700) },
		"FIFO":      func(path string) error { return syscall.Mkfifo(path, 0o600) },
		"DevNull":   func(path string) error { return os.Symlink("/dev/null", path) },
		"Text":      func(path string) error { return os.WriteFile(path, []byte("not a database\n"), 0o600) },
		"Truncated": func(path string) error { return os.WriteFile(path, good[:len(good)/3], 0o600) },
		"Header":    func(path string) error { return os.WriteFile(path, good[:100], 0o600) },
	} {
		for _, ro := range []bool{false, true} {
			t.Run(name, func(t *testing.T) {
				path := events.DBPath(t.TempDir())
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
				require.NoError(t, make(path))
				_, err := events.Open(context.Background(), path, events.Options{ReadOnly: ro})
				requireStorage(t, err, "damaged")
				require.Equal(t, events.RestoreHint, fault.As(err).Hint)
			})
		}
	}
}

// TestOpen_MissingObject: a table or index of the log's own schema gone
// is Storage "damaged" naming it, read-only or not.
func TestOpen_MissingObject(t *testing.T) {
	t.Parallel()
	for _, drop := range []string{"DROP TABLE requests", "DROP INDEX events_stream_kind", "DROP TABLE origin"} {
		for _, ro := range []bool{false, true} {
			path := newLog(t)
			execOn(t, path, drop)
			_, err := events.Open(context.Background(), path, events.Options{ReadOnly: ro})
			requireDamaged(t, err, strings.Fields(drop)[2], "missing")
		}
	}
}

// TestOpen_LoweredVersion: a database holding objects of a later schema
// version than it records is Storage "damaged"; lowered to 4 (005 only
// redefines a trigger) it is migrated forward again, whole.
func TestOpen_LoweredVersion(t *testing.T) {
	t.Parallel()
	for _, v := range []int{0, 1, 2, 3} {
		path := newLog(t)
		execOn(t, path, "PRAGMA user_version="+string(rune('0'+v)))
		_, err := events.Open(context.Background(), path, events.Options{})
		requireDamaged(t, err, "lowered")
	}
	path := newLog(t)
	execOn(t, path, "PRAGMA user_version=4")
	st, err := events.Open(context.Background(), path, events.Options{})
	require.NoError(t, err)
	require.NoError(t, st.Close())
}

// TestOpen_TriggerMissing: a log without an append-only trigger opens
// (verify reports it) but refuses every write, naming the trigger, with
// the hint awr verify.
func TestOpen_TriggerMissing(t *testing.T) {
	t.Parallel()
	path := newLog(t)
	execOn(t, path, "DROP TRIGGER events_no_update")
	st, err := events.Open(context.Background(), path, events.Options{})
	require.NoError(t, err)
	defer st.Close()
	require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error {
		require.EqualValues(t, 1, r.Head)
		return nil
	}))
	_, err = st.Write(context.Background(), events.WriteOptions{Now: time.UnixMilli(2), Entropy: bytes.NewReader(make([]byte, 64)), Actor: "t"}, func(tx *events.Tx) (any, error) {
		_, err := tx.Append(events.NewEvent{Stream: "project", Payload: &events.ProjectInitialized{Name: "p", ProjectID: "01J00000000000000000000000"}})
		return nil, err
	})
	requireStorage(t, err, "events_no_update")
	require.Equal(t, "awr verify", fault.As(err).Hint)
}

// TestRead_StatementThatDoesNotPrepare: a table dropped under an open
// store makes a statement that names it fail to prepare; the read returns
// Storage "damaged" with the restore hint instead of panicking.
func TestRead_StatementThatDoesNotPrepare(t *testing.T) {
	t.Parallel()
	path := newLog(t)
	st, err := events.Open(context.Background(), path, events.Options{})
	require.NoError(t, err)
	defer st.Close()
	execOn(t, path, "DROP TABLE origin")
	err = st.Read(context.Background(), func(r *events.Reader) error {
		_, err := events.ReadOrigin(r.Conn)
		return err
	})
	requireDamaged(t, err, "does not prepare", "origin")
}
