package project

import (
	"context"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// TestStatements_Prepare prepares every embedded statement of the
// package: the set is read on first use, so a broken file would otherwise
// show only when its command runs.
func TestStatements_Prepare(t *testing.T) {
	st, err := events.Open(context.Background(), events.DBPath(t.TempDir()), events.Options{Create: true, Projectors: projections.Projectors()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	require.NotEmpty(t, statements.Names())
	require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error { return statements.PrepareAll(r.Conn) }))
}
