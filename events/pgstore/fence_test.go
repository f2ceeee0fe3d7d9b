package pgstore_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/events/storetest"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
)

// TestStore_Fenced: once a log is fenced (awr migrate --to sqlite, through
// a cache's Detach), every append is refused, the store's own and every
// other machine's cache's, as InvalidTransition naming where the log
// went, and nothing is written; reads go on; a second fence keeps the
// first record.
func TestStore_Fenced(t *testing.T) {
	serverURL(t)
	t.Parallel()
	ctx := context.Background()
	dbURL := newDatabase(t)
	direct := open(t, dbURL, "p")
	_, err := storetest.AppendAll(ctx, direct, writeOpts(1, t0), storetest.Started("s1"), storetest.Started("s2"))
	require.NoError(t, err)
	other := cacheAt(t, dbURL, "p", filepath.Join(t.TempDir(), "b.db"))
	_, err = other.CatchUp(ctx)
	require.NoError(t, err)
	movedPath := filepath.Join(t.TempDir(), "a.db")
	mover := cacheAt(t, dbURL, "p", movedPath)
	_, err = mover.Detach(ctx, func(*events.Tx, events.Head) error { return nil })
	require.NoError(t, err)

	m, err := direct.MovedTo(ctx)
	require.NoError(t, err)
	require.NotNil(t, m)
	require.Contains(t, m.To, movedPath)
	require.EqualValues(t, 2, m.Revision)

	_, err = storetest.AppendAll(ctx, direct, writeOpts(2, t0.Add(time.Minute)), storetest.Started("s3"))
	require.True(t, fault.Is(err, fault.InvalidTransition), "%v", err)
	require.ErrorContains(t, err, movedPath)
	_, err = cacheWrite(t, other, cacheOpts(3), "s4")
	require.True(t, fault.Is(err, fault.InvalidTransition), "%v", err)
	require.ErrorContains(t, err, "nothing was written")
	var fe *fault.Error
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "awr migrate --to sqlite", fe.Hint)

	h, err := direct.Head(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 2, h.Revision)
	rev, err := other.CatchUp(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 2, rev)

	// Another checkout going back to a file of its own keeps the first
	// record of where the log went.
	_, err = other.Detach(ctx, func(*events.Tx, events.Head) error { return nil })
	require.NoError(t, err)
	m, err = direct.MovedTo(ctx)
	require.NoError(t, err)
	require.Contains(t, m.To, movedPath)
}
