package replay_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/lab/demo"
	"github.com/awr-dev/awr/projections"
	"github.com/awr-dev/awr/replay"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// demoProject records the demo handoff into a fresh directory with a fixed
// clock and entropy and returns the directory and its export.
func demoProject(t *testing.T) (string, []byte) {
	return recordDemo(t, time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC), 1500*time.Millisecond, 1)
}

// recordDemo records the demo handoff into a fresh directory, with a
// clock that starts at start and moves on by step at each reading and
// entropy seeded with seed, and returns the directory and its export.
func recordDemo(t *testing.T, start time.Time, step time.Duration, seed int64) (string, []byte) {
	t.Helper()
	dir := t.TempDir()
	clock := start
	rep, err := demo.Run(context.Background(), demo.Options{Dir: dir, Now: func() time.Time {
		clock = clock.Add(step)
		return clock
	}, Entropy: ulid.Monotonic(rand.New(rand.NewSource(seed)), 0)})
	require.NoError(t, err)
	require.True(t, rep.Verified)
	return dir, rep.Export
}

// tamper runs SQL on the project database as an attacker would, after
// dropping the append-only triggers.
func tamper(t *testing.T, dir string, stmts ...string) {
	t.Helper()
	conn, err := events.OpenConn(events.DBPath(dir), sqlite.OpenReadWrite)
	require.NoError(t, err)
	defer conn.Close()
	for _, q := range append([]string{"DROP TRIGGER events_no_update", "DROP TRIGGER events_no_delete", "DROP TRIGGER events_seq_gapless"}, stmts...) {
		require.NoError(t, sqlitex.ExecuteTransient(conn, q, nil), q)
	}
}

func verifyFails(t *testing.T, dir string) *fault.Error {
	t.Helper()
	st := openProject(t, dir)
	defer st.Close()
	res, err := replay.Verify(context.Background(), st, nil)
	require.Error(t, err)
	require.False(t, res.OK)
	fe := fault.As(err)
	require.Equal(t, fault.VerifyFailed, fe.Code)
	return fe
}

func TestVerify_DetectsTampering(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		sql     []string
		wantSeq int64
		wantMsg string
	}{
		{"EditedPayload", []string{"UPDATE events SET payload = replace(payload, 'Run the cart', 'Skip the cart') WHERE seq = 6"}, 6, "hash does not match"},
		{"EditedActor", []string{"UPDATE events SET actor = 'mallory' WHERE seq = 4"}, 4, "hash does not match"},
		{"EditedTime", []string{"UPDATE events SET occurred_at = occurred_at + 1 WHERE seq = 9"}, 9, "hash does not match"},
		{"EditedKind", []string{"UPDATE events SET kind = 'session_ended' WHERE seq = 3"}, 3, "hash does not match"},
		{"DeletedRow", []string{"DELETE FROM events WHERE seq = 7"}, 7, "missing"},
		{"DeletedHead", []string{"DELETE FROM events WHERE seq = 13"}, 13, "removed"},
		{"InsertedRow", []string{"UPDATE events SET seq = seq + 1000 WHERE seq >= 10", "UPDATE events SET seq = seq - 999 WHERE seq >= 1000",
			"INSERT INTO events SELECT 10, id || 'x', kind, stream, stream_version, occurred_at, actor, NULL, payload, prev_hash, hash FROM events WHERE seq = 11"}, 10, "hash does not match"},
		{"SwappedRows", []string{"UPDATE events SET seq = -5 WHERE seq = 5", "UPDATE events SET seq = 5 WHERE seq = 6", "UPDATE events SET seq = 6 WHERE seq = -5"}, 5, "prev_hash"},
		{"RehashedRowOnly", []string{"UPDATE events SET stream_version = stream_version + 1 WHERE seq = 8"}, 8, "hash does not match"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, _ := demoProject(t)
			tamper(t, dir, tc.sql...)
			fe := verifyFails(t, dir)
			require.Contains(t, fe.Message, tc.wantMsg)
			if tc.wantSeq > 0 {
				require.EqualValues(t, tc.wantSeq, fe.Details["first_bad_seq"], fe.Message)
			}
		})
	}
	t.Run("EveryByteOfEveryEvent", func(t *testing.T) {
		t.Parallel()
		dir, _ := demoProject(t)
		st := openProject(t, dir)
		var rows []*events.Event
		require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error {
			return events.ScanEvents(r.Conn, 1, r.Head, func(e *events.Event) error { rows = append(rows, e); return nil })
		}))
		st.Close()
		// Flipping any bit of any hashed field of any event is caught at
		// that event's seq: checked for every payload byte of a sample of
		// events and for each envelope field of every event.
		for _, e := range rows {
			mutations := []func(c *events.Event){
				func(c *events.Event) { c.ID = flip(c.ID, 3) },
				func(c *events.Event) { c.Stream = flip(c.Stream, 0) },
				func(c *events.Event) { c.Actor = flip(c.Actor, 0) },
				func(c *events.Event) { c.OccurredAt ^= 1 },
				func(c *events.Event) { c.Payload = []byte(flip(string(c.Payload), len(c.Payload)/2)) },
			}
			for _, m := range mutations {
				c := *e
				m(&c)
				require.NotEqual(t, e.Hash, events.ComputeHash(c.PrevHash, &c), "seq %d", e.Seq)
			}
		}
		e := rows[5]
		for i := range e.Payload {
			c := *e
			c.Payload = []byte(flip(string(e.Payload), i))
			require.NotEqual(t, e.Hash, events.ComputeHash(c.PrevHash, &c), "payload byte %d", i)
		}
	})
	t.Run("ForgedRowWithValidHash", func(t *testing.T) {
		t.Parallel()
		// The attacker inserts a well-formed event with a correct hash of
		// its own: the next event's prev_hash exposes it.
		dir, _ := demoProject(t)
		st := openProject(t, dir)
		var orig *events.Event
		require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error {
			return events.ScanEvents(r.Conn, 10, 10, func(e *events.Event) error { orig = e; return nil })
		}))
		st.Close()
		forged := *orig
		forged.ID = "01FORGED000000000000000000"
		forged.Hash = events.ComputeHash(forged.PrevHash, &forged)
		tamper(t, dir, "UPDATE events SET seq = seq + 1000 WHERE seq >= 10", "UPDATE events SET seq = seq - 999 WHERE seq >= 1000",
			fmt.Sprintf("INSERT INTO events SELECT 10, '%s', kind, stream, stream_version, occurred_at, actor, NULL, payload, prev_hash, x'%x' FROM events WHERE seq = 11", forged.ID, forged.Hash))
		fe := verifyFails(t, dir)
		require.EqualValues(t, 11, fe.Details["first_bad_seq"], fe.Message)
		require.Contains(t, fe.Message, "prev_hash")
	})
	t.Run("TriggersRemoved", func(t *testing.T) {
		t.Parallel()
		dir, _ := demoProject(t)
		tamper(t, dir)
		fe := verifyFails(t, dir)
		require.Contains(t, fe.Message, "triggers")
	})
	t.Run("ProjectionEdited", func(t *testing.T) {
		t.Parallel()
		dir, _ := demoProject(t)
		conn, err := events.OpenConn(events.DBPath(dir), sqlite.OpenReadWrite)
		require.NoError(t, err)
		require.NoError(t, sqlitex.ExecuteTransient(conn, "UPDATE p_sessions SET agent = 'forged'", nil))
		conn.Close()
		fe := verifyFails(t, dir)
		require.Contains(t, fe.Message, "sessions")
		// A rebuild repairs it.
		st := openProject(t, dir)
		defer st.Close()
		_, err = replay.Rebuild(context.Background(), st, nil)
		require.NoError(t, err)
		res, err := replay.Verify(context.Background(), st, nil)
		require.NoError(t, err)
		require.True(t, res.OK)
	})
}

func flip(s string, i int) string {
	b := []byte(s)
	b[i] ^= 0x01
	return string(b)
}

func TestImport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, export := demoProject(t)
	lines := strings.SplitAfter(strings.TrimSuffix(string(export), "\n"), "\n")
	require.Len(t, lines, 13)

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		st := openProject(t, t.TempDir())
		defer st.Close()
		res, err := replay.Import(ctx, st, bytes.NewReader(export), "log.jsonl")
		require.NoError(t, err)
		require.EqualValues(t, 13, res.Events)
		var again bytes.Buffer
		_, err = replay.Export(ctx, st, &again, -1)
		require.NoError(t, err)
		require.Equal(t, string(export), again.String(), "export → import → export is the identity")
		v, err := replay.Verify(ctx, st, nil)
		require.NoError(t, err)
		require.True(t, v.OK)
	})
	bad := func(t *testing.T, content, wantMsg string) {
		t.Helper()
		st := openProject(t, t.TempDir())
		defer st.Close()
		_, err := replay.Import(ctx, st, strings.NewReader(content), "log.jsonl")
		require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
		require.Contains(t, err.Error(), wantMsg)
		require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
			require.Zero(t, r.Head, "a refused import appends nothing")
			return nil
		}))
	}
	t.Run("ErrEditedLine", func(t *testing.T) {
		t.Parallel()
		edited := append([]string{}, lines...)
		edited[5] = strings.Replace(edited[5], "Run the cart", "Skip the cart", 1)
		require.NotEqual(t, lines[5], edited[5])
		bad(t, strings.Join(edited, ""), "log.jsonl:6: seq 6: hash does not match")
	})
	t.Run("ErrMissingLine", func(t *testing.T) {
		t.Parallel()
		bad(t, strings.Join(append(append([]string{}, lines[:4]...), lines[5:]...), ""), "log.jsonl:5: seq 6 does not follow project_revision 4")
	})
	t.Run("ErrReordered", func(t *testing.T) {
		t.Parallel()
		swapped := append([]string{}, lines...)
		swapped[2], swapped[3] = swapped[3], swapped[2]
		bad(t, strings.Join(swapped, ""), "log.jsonl:3: seq 4 does not follow project_revision 2")
	})
	t.Run("ErrGarbage", func(t *testing.T) {
		t.Parallel()
		bad(t, lines[0]+"{not json\n", "log.jsonl:2: not a valid envelope")
	})
	t.Run("ErrUnknownField", func(t *testing.T) {
		t.Parallel()
		bad(t, strings.Replace(lines[0], `"seq":1,`, `"seq":1,"extra":true,`, 1), "log.jsonl:1: not a valid envelope: json: unknown field \"extra\"")
	})
	t.Run("ErrEmpty", func(t *testing.T) {
		t.Parallel()
		bad(t, "\n\n", "holds no events")
	})
	t.Run("ErrMixedProjects", func(t *testing.T) {
		t.Parallel()
		_, other := demoProject(t)
		otherLines := strings.SplitAfter(strings.TrimSuffix(string(other), "\n"), "\n")
		mixed := append(append([]string{}, lines[:8]...), otherLines[8:]...)
		// The two demo runs use the same clock, so only their chains differ
		// from seq 9 on if their history differs; make it differ.
		mixed[8] = strings.Replace(mixed[8], `"occurred_at":`, `"occurred_at":1`, 1)
		bad(t, strings.Join(mixed, ""), "log.jsonl:9: seq 9: hash does not match")
	})
	t.Run("ErrNotEmpty", func(t *testing.T) {
		t.Parallel()
		dir, _ := demoProject(t)
		st := openProject(t, dir)
		defer st.Close()
		_, err := replay.Import(ctx, st, bytes.NewReader(export), "log.jsonl")
		require.True(t, fault.Is(err, fault.InvalidTransition), "%v", err)
	})
}

// TestOpen_RebuildsChangedProjection: a projection whose stored version
// differs from the code's (a new awr changed its read model) is rebuilt
// from the log when the project is opened, and the result equals the log.
func TestOpen_RebuildsChangedProjection(t *testing.T) {
	t.Parallel()
	dir, _ := demoProject(t)
	conn, err := events.OpenConn(events.DBPath(dir), sqlite.OpenReadWrite)
	require.NoError(t, err)
	require.NoError(t, sqlitex.ExecuteTransient(conn, "UPDATE projections SET version = 0 WHERE name = 'sessions'", nil))
	require.NoError(t, sqlitex.ExecuteTransient(conn, "DELETE FROM p_sessions", nil))
	conn.Close()

	st := openProject(t, dir)
	defer st.Close()
	require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error {
		states, err := events.ProjectionStates(r.Conn)
		require.NoError(t, err)
		want := map[string]int{}
		for _, p := range projections.All() {
			want[p.Name()] = p.Version()
		}
		require.Len(t, states, len(want))
		for _, s := range states {
			require.Equal(t, want[s.Name], s.Version, s.Name)
			require.Equal(t, r.Head, s.LastSeq, s.Name)
		}
		return nil
	}))
	res, err := replay.Verify(context.Background(), st, nil)
	require.NoError(t, err)
	require.True(t, res.OK)
}
