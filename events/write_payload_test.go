package events_test

import (
	"context"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
)

// seen records the payloads it is given.
type seen struct{ payloads []events.Payload }

func (*seen) Name() string                  { return "seen" }
func (*seen) Version() int                  { return 1 }
func (*seen) Reset(conn *sqlite.Conn) error { return nil }
func (s *seen) Apply(_ *sqlite.Conn, _ *events.Event, p events.Payload) error {
	s.payloads = append(s.payloads, p)
	return nil
}

func openSeen(t *testing.T) (*events.Store, *seen) {
	t.Helper()
	p := &seen{}
	st, err := events.Open(context.Background(), filepath.Join(t.TempDir(), ".awr", "awr.db"), events.Options{Create: true, Projectors: []events.Projector{p}})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st, p
}

// payloadRNG feeds the ids of appendOne (the subtests do not run in
// parallel).
var payloadRNG = rand.New(rand.NewSource(7))

func appendOne(st *events.Store, pl events.Payload) error {
	_, err := st.Write(context.Background(), opts(payloadRNG), func(tx *events.Tx) (any, error) {
		_, err := tx.Append(events.NewEvent{Stream: "session/s1", Payload: pl})
		return nil, err
	})
	return err
}

// Append hands projectors the payload struct it was given, not a decode
// of the bytes it just encoded, when the two are the same value; a value
// is handed over as the pointer Decode would return.
func TestAppend_PayloadGivenToProjectors(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		st, p := openSeen(t)
		given := &events.CheckpointRecorded{CheckpointID: "c1", SessionID: "s1", Work: "T-1", Agent: "a", Digest: "did <it> & more", NextAction: "next",
			Changes: []events.KnowledgeChange{{Op: "open", ID: "L-1", Kind: "loop", Text: "why"}}}
		require.NoError(t, appendOne(st, given))
		require.NoError(t, appendOne(st, events.SessionEnded{SessionID: "s1", Outcome: events.OutcomeCompleted}))
		require.Len(t, p.payloads, 2)
		require.Same(t, given, p.payloads[0], "the caller's struct, not a decode")
		require.Equal(t, &events.SessionEnded{SessionID: "s1", Outcome: events.OutcomeCompleted}, p.payloads[1])
	})
	t.Run("InvalidUTF8IsDecoded", func(t *testing.T) {
		// encoding/json writes U+FFFD for invalid UTF-8: the projectors
		// get what a replay will read, not the caller's bytes.
		st, p := openSeen(t)
		require.NoError(t, appendOne(st, &events.CheckpointRecorded{CheckpointID: "c1", SessionID: "s1", Work: "T-1", Agent: "a", Digest: "bad \xff byte", NextAction: "n"}))
		require.Len(t, p.payloads, 1)
		require.Equal(t, "bad \uFFFD byte", p.payloads[0].(*events.CheckpointRecorded).Digest)
	})
	t.Run("ErrVerifyMismatch", func(t *testing.T) {
		// With the check on every append decodes too and refuses a
		// struct that does not decode to itself (an empty slice the
		// encoding omits decodes as nil).
		defer events.SetVerifyPayloads(events.SetVerifyPayloads(true))
		st, p := openSeen(t)
		require.NoError(t, appendOne(st, &events.CheckpointRecorded{CheckpointID: "c1", SessionID: "s1", Work: "T-1", Agent: "a", Digest: "d", NextAction: "n"}))
		err := appendOne(st, &events.CheckpointRecorded{CheckpointID: "c2", SessionID: "s1", Work: "T-1", Agent: "a", Digest: "d", NextAction: "n", Changes: []events.KnowledgeChange{}})
		require.True(t, fault.Is(err, fault.Internal), "%v", err)
		require.Contains(t, err.Error(), "checkpoint_recorded payload given and its stored encoding decode to different values")
		require.Len(t, p.payloads, 1, "nothing applied from the refused write")
	})
}
