package events_test

import (
	"context"
	"encoding/hex"
	"math/rand"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
)

// TestStore_Replica: a log with an origin refuses every appended event
// with ReadOnlyReplica (rolled back whole, also in a write that appended
// before), accepts a write that appends nothing, lets the fork's own write
// through, and accepts writes once a project_forked after the origin's
// head is in the log; the origin survives a rebuild.
func TestStore_Replica(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rng := rand.New(rand.NewSource(7))
	st, _ := openStore(t)
	initialize(t, st, opts(rng))
	head, err := st.Head(ctx)
	require.NoError(t, err)
	origin := events.Origin{ProjectID: "P", HeadSeq: 1, HeadHash: hex.EncodeToString(head.Hash), ImportedAt: t0.UnixMilli()}

	t.Run("NoOriginWrites", func(t *testing.T) {
		require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
			o, err := events.ReadOrigin(r.Conn)
			require.Nil(t, o)
			return err
		}))
	})
	_, err = st.Write(ctx, opts(rng), func(tx *events.Tx) (any, error) { return nil, tx.RecordOrigin(origin) })
	require.NoError(t, err)

	t.Run("ErrReadOnlyReplica", func(t *testing.T) {
		_, err := appendSession(t, st, opts(rng), "s1")
		require.Equal(t, fault.ReadOnlyReplica, fault.As(err).Code, "%v", err)
		require.Equal(t, "awr fork --accept", fault.As(err).Hint)
		require.Equal(t, origin, fault.As(err).Details["origin"])
		h, err := st.Head(ctx)
		require.NoError(t, err)
		require.EqualValues(t, 1, h.Revision, "nothing was written")
	})
	t.Run("ErrTwice", func(t *testing.T) {
		_, err := st.Write(ctx, opts(rng), func(tx *events.Tx) (any, error) { return nil, tx.RecordOrigin(origin) })
		require.Equal(t, fault.InvalidInput, fault.As(err).Code)
	})
	t.Run("NothingAppendedIsAccepted", func(t *testing.T) {
		_, err := st.Write(ctx, opts(rng), func(tx *events.Tx) (any, error) { return "read only", nil })
		require.NoError(t, err)
	})
	t.Run("OriginSurvivesRebuild", func(t *testing.T) {
		require.NoError(t, st.Rebuild(ctx, nil))
		require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
			o, err := events.ReadOrigin(r.Conn)
			require.Equal(t, &origin, o)
			return err
		}))
	})
	t.Run("ForkOfOwnIdForksNothing", func(t *testing.T) {
		// A project_forked of the project's own id (a forger's, or an
		// older awr's) is no fork: the replica still refuses writes.
		o := opts(rng)
		o.Fork = true
		_, err := st.Write(ctx, o, func(tx *events.Tx) (any, error) {
			_, err := tx.Append(events.NewEvent{Stream: "project", Payload: events.ProjectForked{ProjectID: "P", OriginProjectID: "P", OriginHeadSeq: 1, OriginHeadHash: origin.HeadHash, By: "forger"}})
			return nil, err
		})
		require.NoError(t, err)
		_, err = appendSession(t, st, opts(rng), "s0")
		require.Equal(t, fault.ReadOnlyReplica, fault.As(err).Code, "%v", err)
		require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
			ev, err := events.ForkOf(r.Conn, &origin)
			require.Nil(t, ev)
			l, lerr := events.ReadLineage(r.Conn)
			require.NoError(t, lerr)
			require.Equal(t, []events.Line{{ProjectID: "P", From: 1}}, l.Lines)
			return err
		}))
	})
	t.Run("ForkThenWrites", func(t *testing.T) {
		// A valid fork follows the replica's head; the forged one above
		// sits between, so this fork names seq 2 as the head it follows.
		var prev string
		require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
			var err error
			prev, err = hashAt(r, r.Head)
			return err
		}))
		o := opts(rng)
		o.Fork = true
		_, err := st.Write(ctx, o, func(tx *events.Tx) (any, error) {
			_, err := tx.Append(events.NewEvent{Stream: "project", Payload: events.ProjectForked{ProjectID: "Q", OriginProjectID: "P", OriginHeadSeq: 2, OriginHeadHash: prev, By: "tester"}})
			return nil, err
		})
		require.NoError(t, err)
		_, err = appendSession(t, st, opts(rng), "s2")
		require.NoError(t, err)
		require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
			ev, err := events.ForkOf(r.Conn, &origin)
			require.NotNil(t, ev)
			require.EqualValues(t, 3, ev.Seq)
			l, lerr := events.ReadLineage(r.Conn)
			require.NoError(t, lerr)
			require.Equal(t, "Q", l.Current())
			from, to, ok := l.Span("P")
			require.True(t, ok)
			require.EqualValues(t, [2]int64{1, 2}, [2]int64{from, to})
			return err
		}))
	})
}

// hashAt returns the hex hash of the event at seq.
func hashAt(r *events.Reader, seq int64) (string, error) {
	var h string
	err := events.ScanEvents(r.Conn, seq, seq, func(e *events.Event) error {
		h = hex.EncodeToString(e.Hash)
		return nil
	})
	return h, err
}
