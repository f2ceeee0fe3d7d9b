package events_test

import (
	"encoding/hex"
	"strings"
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

// A fork is a project of its own: project_forked names an id of its own
// that the log's history never had (never the origin's: a fork of a
// project's own id is refused), the project the log is as its origin, and
// the event right before it as the origin's head.
func TestInvariants_Fork(t *testing.T) {
	t.Parallel()
	// P, then a valid fork to Q at seq 2; the case under test is seq 3.
	prevOf := func(seq int64) []byte { return []byte(strings.Repeat(string(rune('a'+seq)), 32)) }
	check := func(fork events.ProjectForked) string {
		c := events.NewInvariants(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
		pls := []events.Payload{
			&events.ProjectInitialized{ProjectID: "P", Name: "p"},
			&events.ProjectForked{ProjectID: "Q", OriginProjectID: "P", OriginHeadSeq: 1, OriginHeadHash: hex.EncodeToString(prevOf(2)), By: "b"},
			&fork,
		}
		for i, pl := range pls {
			seq := int64(i + 1)
			e := &events.Event{Seq: seq, Kind: pl.Kind(), Stream: "project", StreamVersion: seq, OccurredAt: 1_700_000_000_000, PrevHash: prevOf(seq)}
			if problem := c.Check(e, pl); problem != "" {
				return problem
			}
		}
		return ""
	}
	head := hex.EncodeToString(prevOf(3))
	require.Empty(t, check(events.ProjectForked{ProjectID: "R", OriginProjectID: "Q", OriginHeadSeq: 2, OriginHeadHash: head, By: "b"}))
	require.Contains(t, check(events.ProjectForked{OriginProjectID: "Q", OriginHeadSeq: 2, OriginHeadHash: head, By: "b"}), "under its own id")
	require.Contains(t, check(events.ProjectForked{ProjectID: "Q", OriginProjectID: "Q", OriginHeadSeq: 2, OriginHeadHash: head, By: "b"}), "under its own id")
	require.Contains(t, check(events.ProjectForked{ProjectID: "P", OriginProjectID: "Q", OriginHeadSeq: 2, OriginHeadHash: head, By: "b"}), "already holds: a fork of a project's own id")
	require.Contains(t, check(events.ProjectForked{ProjectID: "R", OriginProjectID: "P", OriginHeadSeq: 2, OriginHeadHash: head, By: "b"}), "but the log is project Q there")
	require.Contains(t, check(events.ProjectForked{ProjectID: "R", OriginProjectID: "Q", OriginHeadSeq: 1, OriginHeadHash: head, By: "b"}), "but it follows seq 2")
	require.Contains(t, check(events.ProjectForked{ProjectID: "R", OriginProjectID: "Q", OriginHeadSeq: 2, OriginHeadHash: strings.Repeat("0", 64), By: "b"}), "but it follows seq 2")
}
