package replay_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/replay"
	"github.com/stretchr/testify/require"
)

// backwards forges the demo log: seq 9 takes a time 1 s before seq 8's,
// and every hash from seq 9 on is recomputed, so the chain itself holds.
func backwards(t *testing.T, export []byte) []*events.Event {
	t.Helper()
	return forgeEvents(t, export, func(evs []*events.Event) int {
		evs[8].OccurredAt = evs[7].OccurredAt - 1000
		return 8
	})
}

// TestTime_RunsBackwards: a re-hashed log whose time runs backwards is
// refused by import and fails verify, naming the seq (issue #13, row 2).
func TestTime_RunsBackwards(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("ImportRefuses", func(t *testing.T) {
		t.Parallel()
		_, export := demoProject(t)
		var b strings.Builder
		for _, e := range backwards(t, export) {
			line, err := events.EncodeJSON(e.ToEnvelope())
			require.NoError(t, err)
			b.Write(line)
			b.WriteString("\n")
		}
		st := openProject(t, t.TempDir())
		defer st.Close()
		_, err := replay.Import(ctx, st, strings.NewReader(b.String()), "log.jsonl")
		require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
		require.Contains(t, err.Error(), "log.jsonl:9: seq 9: time runs backwards")
		require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
			require.Zero(t, r.Head, "a refused import appends nothing")
			return nil
		}))
	})
	t.Run("VerifyFails", func(t *testing.T) {
		t.Parallel()
		dir, export := demoProject(t)
		var stmts []string
		for _, e := range backwards(t, export)[8:] {
			stmts = append(stmts, fmt.Sprintf("UPDATE events SET occurred_at = %d, prev_hash = X'%s', hash = X'%s' WHERE seq = %d",
				e.OccurredAt, hex.EncodeToString(e.PrevHash), hex.EncodeToString(e.Hash), e.Seq))
		}
		tamper(t, dir, stmts...)
		fe := verifyFails(t, dir)
		require.Contains(t, fe.Message, "time runs backwards")
		require.EqualValues(t, 9, fe.Details["first_bad_seq"], fe.Message)
	})
}
