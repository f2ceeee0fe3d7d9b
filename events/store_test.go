package events_test

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func openStore(t *testing.T) (*events.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), ".awr", "awr.db")
	st, err := events.Open(context.Background(), path, events.Options{Create: true})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st, path
}

// requireStorage requires err to be a Storage fault whose message holds
// want.
func requireStorage(t *testing.T, err error, want string) {
	t.Helper()
	require.True(t, fault.Is(err, fault.Storage), "%v", err)
	require.Contains(t, err.Error(), want)
}

func opts(rng *rand.Rand) events.WriteOptions {
	return events.WriteOptions{Now: t0, Entropy: rng, Actor: "tester"}
}

func appendSession(t *testing.T, st *events.Store, o events.WriteOptions, id string) (*events.WriteResult, error) {
	t.Helper()
	return st.Write(context.Background(), o, func(tx *events.Tx) (any, error) {
		_, err := tx.Append(events.NewEvent{Stream: "session/" + id, Payload: events.SessionStarted{SessionID: id, Work: "W-1", Agent: "a"}})
		return map[string]string{"id": id}, err
	})
}

// initialize appends project P's project_initialized, which must be
// written.
func initialize(t *testing.T, st *events.Store, o events.WriteOptions) {
	t.Helper()
	_, err := st.Write(context.Background(), o, func(tx *events.Tx) (any, error) {
		_, err := tx.Append(events.NewEvent{Stream: "project", Payload: events.ProjectInitialized{ProjectID: "P", Name: "p"}})
		return nil, err
	})
	require.NoError(t, err)
}

func TestStore_Append(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rng := rand.New(rand.NewSource(1))
	t.Run("OK", func(t *testing.T) {
		st, _ := openStore(t)
		res, err := st.Write(ctx, opts(rng), func(tx *events.Tx) (any, error) {
			for i, id := range []string{"s1", "s2", "s1"} {
				e, err := tx.Append(events.NewEvent{Stream: "session/" + id, Payload: &events.CheckpointRecorded{SessionID: id, Digest: "d", NextAction: "n"}})
				require.NoError(t, err)
				require.EqualValues(t, i+1, e.Seq)
			}
			return nil, nil
		})
		require.NoError(t, err)
		require.EqualValues(t, 3, res.Revision)
		require.Len(t, res.Events, 3)
		require.EqualValues(t, []int64{1, 1, 2}, []int64{res.Events[0].StreamVersion, res.Events[1].StreamVersion, res.Events[2].StreamVersion})
		require.Equal(t, make([]byte, 32), res.Events[0].PrevHash)
		for i, e := range res.Events {
			require.Equal(t, events.ComputeHash(e.PrevHash, e), e.Hash)
			if i > 0 {
				require.Equal(t, res.Events[i-1].Hash, e.PrevHash)
			}
			require.Equal(t, t0.UnixMilli(), e.OccurredAt)
			require.Equal(t, "tester", e.Actor)
		}
	})
	t.Run("ErrRollsBackEverything", func(t *testing.T) {
		st, _ := openStore(t)
		_, err := st.Write(ctx, opts(rng), func(tx *events.Tx) (any, error) {
			_, err := tx.Append(events.NewEvent{Stream: "session/x", Payload: events.SessionStarted{SessionID: "x"}})
			require.NoError(t, err)
			return nil, fault.New(fault.InvalidInput, "changed my mind")
		})
		require.True(t, fault.Is(err, fault.InvalidInput))
		require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
			require.Zero(t, r.Head)
			return nil
		}))
	})
	t.Run("ErrNoPayload", func(t *testing.T) {
		st, _ := openStore(t)
		for _, p := range []events.Payload{nil, (*events.SessionStarted)(nil)} {
			_, err := st.Write(ctx, opts(rng), func(tx *events.Tx) (any, error) {
				return tx.Append(events.NewEvent{Stream: "session/x", Payload: p})
			})
			require.True(t, fault.Is(err, fault.Internal), "%v", err)
		}
	})
	t.Run("KindFromPayload", func(t *testing.T) {
		st, _ := openStore(t)
		res, err := appendSession(t, st, opts(rng), "k")
		require.NoError(t, err)
		require.Equal(t, events.KindSessionStarted, res.Events[0].Kind)
	})
}

func TestStore_AppendOnly(t *testing.T) {
	t.Parallel()
	st, path := openStore(t)
	_, err := appendSession(t, st, opts(rand.New(rand.NewSource(2))), "s1")
	require.NoError(t, err)
	conn, err := events.OpenConn(path, sqlite.OpenReadWrite)
	require.NoError(t, err)
	defer conn.Close()
	for _, q := range []string{
		"UPDATE events SET actor = 'mallory'",
		"DELETE FROM events",
		"INSERT INTO events (seq, id, kind, stream, stream_version, occurred_at, actor, payload, prev_hash, hash) VALUES (5, 'x', 'k', 's', 1, 0, 'a', '{}', x'00', x'00')",
	} {
		err := sqlitex.ExecuteTransient(conn, q, nil)
		require.Error(t, err, q)
		require.Contains(t, err.Error(), "events:", q)
	}
}

func TestStore_RevisionConflict(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rng := rand.New(rand.NewSource(3))
	st, _ := openStore(t)
	_, err := appendSession(t, st, opts(rng), "mine")
	require.NoError(t, err)
	seen := int64(1)
	_, err = appendSession(t, st, opts(rng), "theirs") // unrelated stream, seq 2
	require.NoError(t, err)

	o := opts(rng)
	o.ExpectedRevision, o.Streams = &seen, []string{"session/mine"}
	_, err = st.Write(ctx, o, func(tx *events.Tx) (any, error) {
		_, err := tx.Append(events.NewEvent{Stream: "session/mine", Payload: events.SessionEnded{SessionID: "mine", Outcome: "completed"}})
		return nil, err
	})
	require.NoError(t, err, "a write on another stream after R must not conflict")

	// Now session/mine has seq 3 > 1.
	_, err = st.Write(ctx, o, func(tx *events.Tx) (any, error) { return nil, nil })
	require.True(t, fault.Is(err, fault.RevisionConflict), "%v", err)
	fe := fault.As(err)
	require.EqualValues(t, 1, fe.Details["expected"])
	require.EqualValues(t, 3, fe.Details["actual"])
	require.Equal(t, []events.Conflict{{Seq: 3, Kind: events.KindSessionEnded, Stream: "session/mine"}}, fe.Details["conflicts"])

	future := int64(99)
	o.ExpectedRevision = &future
	_, err = st.Write(ctx, o, func(tx *events.Tx) (any, error) { return nil, nil })
	require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
}

func TestStore_RequestID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rng := rand.New(rand.NewSource(4))
	st, _ := openStore(t)
	o := opts(rng)
	o.RequestID, o.Fingerprint = "req-1", "fp-a"
	first, err := appendSession(t, st, o, "s1")
	require.NoError(t, err)
	require.False(t, first.Replayed)
	again, err := appendSession(t, st, o, "s-other")
	require.NoError(t, err)
	require.True(t, again.Replayed)
	require.JSONEq(t, `{"id":"s1"}`, string(again.Result))
	require.Empty(t, again.Events)
	require.EqualValues(t, 1, again.Revision)

	o.Fingerprint = "fp-b"
	_, err = appendSession(t, st, o, "s1")
	require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
	require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
		require.EqualValues(t, 1, r.Head)
		return nil
	}))
}

func TestOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("ErrNotFound", func(t *testing.T) {
		dir := t.TempDir()
		_, err := events.Open(ctx, events.DBPath(dir), events.Options{})
		require.True(t, fault.Is(err, fault.NotFound), "%v", err)
		require.Equal(t, "awr init", fault.As(err).Hint)
		_, statErr := os.Stat(filepath.Join(dir, ".awr"))
		require.True(t, os.IsNotExist(statErr), "a failed open creates nothing")
	})
	t.Run("Permissions", func(t *testing.T) {
		dir := t.TempDir()
		st, err := events.Open(ctx, events.DBPath(dir), events.Options{Create: true})
		require.NoError(t, err)
		st.Close()
		fi, err := os.Stat(filepath.Join(dir, ".awr"))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
		fi, err = os.Stat(events.DBPath(dir))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	})
	t.Run("ErrNewerSchema", func(t *testing.T) {
		st, path := openStore(t)
		st.Close()
		conn, err := events.OpenConn(path, sqlite.OpenReadWrite)
		require.NoError(t, err)
		require.NoError(t, sqlitex.ExecuteTransient(conn, "PRAGMA user_version = 999", nil))
		conn.Close()
		_, err = events.Open(ctx, path, events.Options{})
		requireStorage(t, err, "newer")
	})
	t.Run("ErrNotAnAWRDatabase", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "other.db")
		conn, err := events.OpenConn(path)
		require.NoError(t, err)
		require.NoError(t, sqlitex.ExecuteTransient(conn, "CREATE TABLE t (x)", nil))
		conn.Close()
		_, err = events.Open(ctx, path, events.Options{})
		requireStorage(t, err, "not an awr database")
	})
	t.Run("Reopen", func(t *testing.T) {
		st, path := openStore(t)
		_, err := appendSession(t, st, opts(rand.New(rand.NewSource(5))), "s1")
		require.NoError(t, err)
		st.Close()
		st2, err := events.Open(ctx, path, events.Options{})
		require.NoError(t, err)
		defer st2.Close()
		require.NoError(t, st2.Read(ctx, func(r *events.Reader) error {
			require.EqualValues(t, 1, r.Head)
			return nil
		}))
	})
}

func TestStore_Busy(t *testing.T) {
	t.Parallel()
	st, path := openStore(t)
	// Another connection (as another process would) holds the write lock.
	conn, err := events.OpenConn(path, sqlite.OpenReadWrite)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, sqlitex.ExecuteTransient(conn, "BEGIN IMMEDIATE", nil))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = st.Write(ctx, opts(rand.New(rand.NewSource(6))), func(tx *events.Tx) (any, error) { return nil, nil })
	requireStorage(t, err, "database is busy")
	require.NoError(t, sqlitex.ExecuteTransient(conn, "ROLLBACK", nil))
	_, err = appendSession(t, st, opts(rand.New(rand.NewSource(7))), "after")
	require.NoError(t, err, "the store recovers once the lock is released")
}

func TestStore_LockTimeout(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), ".awr", "awr.db")
	st, err := events.Open(context.Background(), path, events.Options{Create: true, LockTimeout: 150 * time.Millisecond})
	require.NoError(t, err)
	defer st.Close()
	conn, err := events.OpenConn(path, sqlite.OpenReadWrite)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, sqlitex.ExecuteTransient(conn, "BEGIN IMMEDIATE", nil))
	// No deadline on the context: the store's lock timeout bounds the wait.
	_, err = st.Write(context.Background(), opts(rand.New(rand.NewSource(8))), func(tx *events.Tx) (any, error) { return nil, nil })
	requireStorage(t, err, "database is busy")
	require.NoError(t, sqlitex.ExecuteTransient(conn, "ROLLBACK", nil))
	// Once the lock is held, work is not cut short by the lock timeout.
	_, err = st.Write(context.Background(), opts(rand.New(rand.NewSource(9))), func(tx *events.Tx) (any, error) {
		time.Sleep(300 * time.Millisecond)
		_, err := tx.Append(events.NewEvent{Stream: "session/slow", Payload: events.SessionStarted{SessionID: "slow"}})
		return nil, err
	})
	require.NoError(t, err)
}
