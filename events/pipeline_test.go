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

// counter is a projector that records the seqs it is given.
type counter struct{ seqs []int64 }

func (c *counter) Name() string                  { return "counter" }
func (c *counter) Version() int                  { return 1 }
func (c *counter) Reset(conn *sqlite.Conn) error { c.seqs = nil; return nil }
func (c *counter) Apply(conn *sqlite.Conn, e *events.Event, v events.Payload) error {
	if _, ok := v.(*events.SourceIndexed); !ok {
		return fmt.Errorf("seq %d: payload %T", e.Seq, v)
	}
	c.seqs = append(c.seqs, e.Seq)
	return nil
}

// TestRebuild_Pipeline folds a log of several read batches through the
// two-connection pipeline (rows read and linked on one goroutine, hashed
// and decoded by workers, applied in order): every event is applied once,
// in seq order, and on a tampered log the first bad seq is named, as a
// sequential check would, whichever stage finds it and whichever batch it
// is in.
func TestRebuild_Pipeline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const n = 1800 // four batches of 512 and a partial one
	dir := t.TempDir()
	path := filepath.Join(dir, ".awr", "awr.db")
	c := &counter{}
	st, err := events.Open(ctx, path, events.Options{Create: true, Projectors: []events.Projector{c}})
	require.NoError(t, err)
	_, err = st.Write(ctx, opts(rand.New(rand.NewSource(1))), func(tx *events.Tx) (any, error) {
		for i := 1; i <= n; i++ {
			p := fmt.Sprintf("doc%d.md", i)
			if _, err := tx.Append(events.NewEvent{Stream: "source/" + p, Payload: &events.SourceIndexed{Path: p, Adapter: "markdown", ContentHash: "h"}}); err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	orig := readFile(t, path)

	t.Run("OK", func(t *testing.T) {
		p := copyTo(t, orig)
		c := &counter{}
		st, err := events.Open(ctx, p, events.Options{Projectors: []events.Projector{c}})
		require.NoError(t, err)
		defer st.Close()
		require.NoError(t, st.Rebuild(ctx, nil))
		require.Len(t, c.seqs, n)
		for i, s := range c.seqs {
			require.EqualValues(t, i+1, s)
		}
	})
	edit := func(seq int) string {
		return fmt.Sprintf("UPDATE events SET payload = replace(payload, 'doc', 'DOC') WHERE seq = %d", seq)
	}
	del := func(seq int) string { return fmt.Sprintf("DELETE FROM events WHERE seq = %d", seq) }
	for _, tc := range []struct {
		name  string
		stmts []string
		want  int64
	}{
		{"EditedThenDeletedSameBatch", []string{edit(100), del(200)}, 100},
		{"DeletedThenEditedSameBatch", []string{del(100), edit(200)}, 100},
		{"EditedThenDeletedLaterBatch", []string{edit(1000), del(1500)}, 1000},
		{"DeletedThenEditedLaterBatch", []string{del(700), edit(1300)}, 700},
		{"EditedLastPartialBatch", []string{edit(1790)}, 1790},
		{"DeletedLast", []string{del(n)}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := copyTo(t, orig)
			conn, err := events.OpenConn(p, sqlite.OpenReadWrite)
			require.NoError(t, err)
			require.NoError(t, sqlitex.ExecuteTransient(conn, "DROP TRIGGER IF EXISTS events_no_update", nil))
			require.NoError(t, sqlitex.ExecuteTransient(conn, "DROP TRIGGER IF EXISTS events_no_delete", nil))
			for _, s := range tc.stmts {
				require.NoError(t, sqlitex.ExecuteTransient(conn, s, nil), s)
			}
			require.NoError(t, conn.Close())
			c := &counter{}
			st, err := events.Open(ctx, p, events.Options{Projectors: []events.Projector{c}})
			require.NoError(t, err)
			defer st.Close()
			err = st.Rebuild(ctx, nil)
			if tc.want < 0 {
				require.NoError(t, err, "a log cut at its end still chains")
				return
			}
			fe := fault.As(err)
			require.NotNil(t, fe, "%v", err)
			require.Equal(t, fault.VerifyFailed, fe.Code, "%v", err)
			require.EqualValues(t, tc.want, fe.Details["first_bad_seq"], "%v", err)
			require.Contains(t, fe.Message, "nothing was rebuilt")
		})
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// copyTo writes b as the database of a new project and returns its path.
func copyTo(t *testing.T, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), ".awr", "awr.db")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
	require.NoError(t, os.WriteFile(p, b, 0o600))
	return p
}
