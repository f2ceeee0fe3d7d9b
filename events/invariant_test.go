package events_test

import (
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/stretchr/testify/require"
)

// fold runs the invariants over payloads appended one per stream version,
// and returns the first broken rule ("" when none).
func fold(t *testing.T, pls []events.Payload, streams []string) string {
	t.Helper()
	c := events.NewInvariants(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	versions := map[string]int64{}
	for i, pl := range pls {
		versions[streams[i]]++
		e := &events.Event{Seq: int64(i + 1), Kind: pl.Kind(), Stream: streams[i], StreamVersion: versions[streams[i]], OccurredAt: int64(1_700_000_000_000 + i)}
		if problem := c.Check(e, pl); problem != "" {
			return problem
		}
	}
	return ""
}

// A seat adopts only a session that continues its own (through resumes),
// recorded as running exactly when it has not ended.
func TestInvariants_SeatReconciled(t *testing.T) {
	t.Parallel()
	base := []events.Payload{
		&events.SourceIndexed{Path: "ledger.yaml", Items: []events.WorkItem{{Key: "T-1"}}},
		&events.SessionStarted{SessionID: "A", Work: "T-1"},
		&events.SessionStarted{SessionID: "B", Work: "T-1", PredecessorID: "A"},
		&events.SessionStarted{SessionID: "C", Work: "T-1", PredecessorID: "B"},
		&events.SessionStarted{SessionID: "X", Work: "T-1"},
	}
	streams := []string{"source/ledger.yaml", "session/A", "session/B", "session/C", "session/X", "seat/a@r"}
	adopt := func(pl events.SeatReconciled) string {
		pl.Address, pl.Rig = "a@r", "r"
		return fold(t, append(append([]events.Payload{}, base...), &pl), streams)
	}
	require.Empty(t, adopt(events.SeatReconciled{FromSession: "A", SessionID: "C", SessionActive: true}))
	require.Empty(t, adopt(events.SeatReconciled{FromSession: "B", SessionID: "C", SessionActive: true}))
	require.Contains(t, adopt(events.SeatReconciled{FromSession: "A", SessionID: "X", SessionActive: true}), "does not continue its session A")
	require.Contains(t, adopt(events.SeatReconciled{FromSession: "C", SessionID: "A", SessionActive: true}), "does not continue its session C")
	require.Contains(t, adopt(events.SeatReconciled{FromSession: "A", SessionID: "C", SessionActive: false}), "as running=false")
	require.Contains(t, adopt(events.SeatReconciled{FromSession: "A", SessionID: "Z", SessionActive: true}), "which never started")
	off := fold(t, append(append([]events.Payload{}, base...), &events.SeatReconciled{Address: "b@r", Rig: "r", FromSession: "A", SessionID: "C", SessionActive: true}), streams)
	require.Contains(t, off, "where its payload names seat/b@r")
}
