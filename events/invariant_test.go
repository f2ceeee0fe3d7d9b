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

// The fold keeps an id awr writes (a ULID in canonical form) by its 16
// bytes and any other id as itself: ids that differ only in case, or a
// ULID and the same letters in lower case, are different sessions and
// claims, and a message names the holder by its own id.
func TestInvariants_IDsKeptCompactly(t *testing.T) {
	t.Parallel()
	const (
		upper = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
		lower = "01arz3ndektsv4rrffq69g5fav"
		other = "01ARZ3NDEKTSV4RRFFQ69G5FAW"
		claim = "01BX5ZZKBKACTAV9WEVGEMMVRZ"
	)
	base := []events.Payload{
		&events.SourceIndexed{Path: "ledger.yaml", Items: []events.WorkItem{{Key: "T-1"}, {Key: "T-2"}}},
		&events.SessionStarted{SessionID: upper, Work: "T-1"},
		&events.SessionStarted{SessionID: lower, Work: "T-2"},
		&events.SessionStarted{SessionID: other, Work: "T-1"},
		&events.ClaimAcquired{ClaimID: claim, Work: "T-1", SessionID: upper, FencingToken: 1},
	}
	streams := []string{"source/ledger.yaml", "session/" + upper, "session/" + lower, "session/" + other, "work/T-1"}
	then := func(pl events.Payload, stream string) string {
		return fold(t, append(append([]events.Payload{}, base...), pl), append(append([]string{}, streams...), stream))
	}
	require.Empty(t, fold(t, base, streams))
	require.Contains(t, then(&events.CheckpointRecorded{SessionID: lower, Work: "T-1"}, "session/"+lower), "but session "+lower+" works on T-2")
	require.Empty(t, then(&events.CheckpointRecorded{SessionID: upper, Work: "T-1"}, "session/"+upper))
	require.Contains(t, then(&events.ClaimReleased{ClaimID: claim, Work: "T-1", SessionID: other}, "work/T-1"),
		"released by session "+other+", but session "+upper+" holds it")
	require.Contains(t, then(&events.ClaimReleased{ClaimID: strings.ToLower(claim), Work: "T-1", SessionID: upper}, "work/T-1"), "never acquired there")
	require.Empty(t, then(&events.ClaimReleased{ClaimID: claim, Work: "T-1", SessionID: upper}, "work/T-1"))
	// A session's stream version is kept with the session: its next
	// event is version 2, and a gap is named.
	gap := &events.Event{Seq: 6, Kind: events.KindCheckpointRecorded, Stream: "session/" + upper, StreamVersion: 3, OccurredAt: 1_700_000_000_010}
	c := events.NewInvariants(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	versions := map[string]int64{}
	for i, pl := range base {
		versions[streams[i]]++
		require.Empty(t, c.Check(&events.Event{Seq: int64(i + 1), Kind: pl.Kind(), Stream: streams[i], StreamVersion: versions[streams[i]], OccurredAt: int64(1_700_000_000_000 + i)}, pl))
	}
	require.Contains(t, c.Check(gap, &events.CheckpointRecorded{SessionID: upper, Work: "T-1"}), "stream session/"+upper+" version 3 does not follow 1")
}
