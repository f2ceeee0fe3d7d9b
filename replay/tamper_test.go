package replay_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/replay"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// storedColumns are the events table's columns as stored, with their
// SQLite storage class.
var storedColumns = []struct{ name, class string }{
	{"id", "text"}, {"kind", "text"}, {"stream", "text"}, {"stream_version", "integer"}, {"occurred_at", "integer"},
	{"actor", "text"}, {"request_id", "text"}, {"payload", "text"}, {"prev_hash", "blob"}, {"hash", "blob"},
}

// TestVerify_EveryStoredByte edits the stored log of the demo project in
// place, one change at a time, each rolled back before the next: every
// byte of every text and blob column of every event flipped, every bit of
// every integer column flipped, and a request id set where there was none.
// The chain check awr verify runs names that event's seq every time.
func TestVerify_EveryStoredByte(t *testing.T) {
	t.Parallel()
	dir, _ := demoProject(t)
	tamper(t, dir) // drop the append-only triggers, as an attacker would
	conn, err := events.OpenConn(events.DBPath(dir), sqlite.OpenReadWrite)
	require.NoError(t, err)
	defer conn.Close()
	_, _, bad, err := replay.VerifyChain(conn)
	require.NoError(t, err)
	require.Nil(t, bad, "the untouched log verifies")

	var head int64
	require.NoError(t, sqlitex.ExecuteTransient(conn, "SELECT max(seq) FROM events", &sqlitex.ExecOptions{ResultFunc: func(s *sqlite.Stmt) error {
		head = s.ColumnInt64(0)
		return nil
	}}))
	require.EqualValues(t, 13, head)

	edits := 0
	// detected runs stmt (with :seq bound) in a transaction, requires the
	// chain check to name seq, and rolls back.
	detected := func(seq int64, what, stmt string, args map[string]any) {
		t.Helper()
		require.NoError(t, sqlitex.ExecuteTransient(conn, "BEGIN", nil))
		defer func() { require.NoError(t, sqlitex.ExecuteTransient(conn, "ROLLBACK", nil)) }()
		named := map[string]any{":seq": seq}
		for k, v := range args {
			named[k] = v
		}
		require.NoError(t, sqlitex.ExecuteTransient(conn, stmt, &sqlitex.ExecOptions{Named: named}), what)
		require.EqualValues(t, 1, conn.Changes(), what)
		_, _, bad, err := replay.VerifyChain(conn)
		require.NoError(t, err, what)
		require.NotNil(t, bad, "seq %d: %s went unnoticed", seq, what)
		require.Equal(t, seq, bad.Seq, "seq %d: %s: %s", seq, what, bad.Problem)
		edits++
	}
	for seq := int64(1); seq <= head; seq++ {
		for _, col := range storedColumns {
			var raw []byte
			isNull := false
			require.NoError(t, sqlitex.ExecuteTransient(conn, fmt.Sprintf("SELECT CAST(%s AS BLOB) AS v, %s IS NULL AS n FROM events WHERE seq = %d", col.name, col.name, seq),
				&sqlitex.ExecOptions{ResultFunc: func(s *sqlite.Stmt) error {
					raw = make([]byte, s.GetLen("v"))
					s.GetBytes("v", raw)
					isNull = s.GetInt64("n") == 1
					return nil
				}}))
			switch {
			case isNull:
				detected(seq, col.name+" set", fmt.Sprintf("UPDATE events SET %s = 'r-1' WHERE seq = :seq", col.name), nil)
			case col.class == "integer":
				for bit := 0; bit < 64; bit++ {
					detected(seq, fmt.Sprintf("%s bit %d", col.name, bit),
						fmt.Sprintf("UPDATE events SET %[1]s = (%[1]s | :mask) - (%[1]s & :mask) WHERE seq = :seq", col.name), map[string]any{":mask": int64(1) << bit})
				}
			default:
				for i := range raw {
					flipped := append([]byte(nil), raw...)
					flipped[i] ^= 0x01
					cast := "CAST(:v AS TEXT)"
					if col.class == "blob" {
						cast = ":v"
					}
					detected(seq, fmt.Sprintf("%s byte %d", col.name, i),
						fmt.Sprintf("UPDATE events SET %s = %s WHERE seq = :seq", col.name, cast), map[string]any{":v": flipped})
				}
			}
		}
	}
	t.Logf("%d single-byte and single-bit edits, each named at its seq", edits)
}

// TestVerify_EveryRowChange deletes each row, swaps each adjacent pair,
// and inserts a copy of a neighbour at each position, in a fresh copy of
// the demo project each time: `awr verify` (replay.Verify) fails with
// VerifyFailed naming the first changed seq.
func TestVerify_EveryRowChange(t *testing.T) {
	t.Parallel()
	dir, _ := demoProject(t)
	orig, err := os.ReadFile(events.DBPath(dir))
	require.NoError(t, err)
	const head = 13
	check := func(t *testing.T, wantSeq int64, stmts ...string) {
		t.Helper()
		cp := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(cp, ".awr"), 0o700))
		require.NoError(t, os.WriteFile(events.DBPath(cp), orig, 0o600))
		tamper(t, cp, stmts...)
		fe := verifyFails(t, cp)
		require.EqualValues(t, wantSeq, fe.Details["first_bad_seq"], "%v: %s", stmts, fe.Message)
	}
	t.Run("Deleted", func(t *testing.T) {
		t.Parallel()
		for seq := 1; seq <= head; seq++ {
			check(t, int64(seq), fmt.Sprintf("DELETE FROM events WHERE seq = %d", seq))
		}
	})
	t.Run("Swapped", func(t *testing.T) {
		t.Parallel()
		for seq := 1; seq < head; seq++ {
			check(t, int64(seq), fmt.Sprintf("UPDATE events SET seq = -1 WHERE seq = %d", seq),
				fmt.Sprintf("UPDATE events SET seq = %d WHERE seq = %d", seq, seq+1),
				fmt.Sprintf("UPDATE events SET seq = %d WHERE seq = -1", seq+1))
		}
	})
	t.Run("Inserted", func(t *testing.T) {
		t.Parallel()
		// A copy of the event at seq, under another id, put before it;
		// it and every later event shift up by one.
		for seq := 1; seq <= head; seq++ {
			check(t, int64(seq), "UPDATE events SET seq = seq + 1000",
				fmt.Sprintf("UPDATE events SET seq = seq - 1000 WHERE seq < %d", 1000+seq),
				fmt.Sprintf("UPDATE events SET seq = seq - 999 WHERE seq >= %d", 1000+seq),
				fmt.Sprintf("INSERT INTO events SELECT %d, id || 'x', kind, stream, stream_version, occurred_at, actor, NULL, payload, prev_hash, hash FROM events WHERE seq = %d", seq, seq+1))
		}
	})
}
