package events_test

import (
	"context"
	"math/rand"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
)

// TestReadInitialized: the project_initialized at seq 1, through a
// connection and through Scan; nothing for an empty log or one whose
// seq 1 is another kind; a seq 1 that does not decode is bad, apart from
// the read's error.
func TestReadInitialized(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rng := rand.New(rand.NewSource(7))
	read := func(st *events.Store) (pi *events.ProjectInitialized, bad error) {
		t.Helper()
		require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
			var err error
			pi, bad, err = events.ReadInitialized(r.Conn)
			return err
		}))
		scanned, scanBad, err := events.ScanInitialized(ctx, st)
		require.NoError(t, err)
		require.Equal(t, pi, scanned)
		require.Equal(t, bad, scanBad)
		return pi, bad
	}

	st, _ := openStore(t)
	pi, bad := read(st)
	require.Nil(t, pi, "empty log")
	require.NoError(t, bad)
	initialize(t, st, opts(rng))
	_, err := appendSession(t, st, opts(rng), "s1")
	require.NoError(t, err)
	pi, bad = read(st)
	require.NoError(t, bad)
	require.Equal(t, &events.ProjectInitialized{ProjectID: "P", Name: "p"}, pi)

	other, _ := openStore(t)
	_, err = appendSession(t, other, opts(rng), "s1")
	require.NoError(t, err)
	pi, bad = read(other)
	require.Nil(t, pi, "seq 1 is a session_started")
	require.NoError(t, bad)

	pi, err = events.InitializedBy(&events.Event{Seq: 1, Kind: events.KindProjectInitialized, Payload: []byte(`{"project_id":`)})
	require.Nil(t, pi)
	require.Equal(t, fault.Storage, fault.As(err).Code, "%v", err)
	pi, err = events.InitializedBy(&events.Event{Seq: 2, Kind: events.KindSessionStarted, Payload: []byte(`{`)})
	require.NoError(t, err, "another kind is not decoded")
	require.Nil(t, pi)
}
