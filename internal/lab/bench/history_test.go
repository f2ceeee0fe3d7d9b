package bench_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/lab/bench"
	"github.com/awr-dev/awr/projections"
	"github.com/awr-dev/awr/replay"
	"github.com/stretchr/testify/require"
)

// history is a new project in the test's temporary directory: a register
// of tasks work items (seeded by seed) and the history opts generates (none
// for opts.Events 0). The store is closed when the test ends.
func history(t testing.TB, tasks int, seed int64, opts bench.GenerateOptions) *events.Store {
	t.Helper()
	ctx := context.Background()
	st, err := bench.NewProject(ctx, filepath.Join(t.TempDir(), "awr.db"), tasks, seed)
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	if opts.Events > 0 {
		_, err = bench.Generate(ctx, st, opts)
		require.NoError(t, err)
	}
	return st
}

// emptyStore is a new, empty log in the test's temporary directory,
// closed when the test ends.
func emptyStore(t testing.TB) *events.Store {
	t.Helper()
	st, err := events.Open(context.Background(), filepath.Join(t.TempDir(), "awr.db"), events.Options{Create: true, Projectors: projections.Projectors()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

// requireVerifies requires that st's log verifies: its hash chain, and
// every projection against a rebuild (replay.Verify).
func requireVerifies(t testing.TB, st *events.Store) {
	t.Helper()
	res, err := replay.Verify(context.Background(), st, nil)
	require.NoError(t, err)
	require.True(t, res.OK)
}
