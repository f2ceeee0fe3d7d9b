package projections

import (
	"context"
	"strings"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/stretchr/testify/require"
)

// TestPlans_SeekAnIndex pins the reads issue #17 made flat in history:
// each is served by the named index, and none scans a table that grows
// with the log (no "SCAN p_..." line in its plan).
func TestPlans_SeekAnIndex(t *testing.T) {
	st, err := events.Open(context.Background(), events.DBPath(t.TempDir()), events.Options{Create: true, Projectors: Projectors()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	for name, index := range map[string]string{
		"session_latest_start_by_work_at": "p_sessions_work",
	} {
		t.Run(name, func(t *testing.T) {
			err := st.Read(context.Background(), func(r *events.Reader) error {
				plan, err := events.QueryPlan(r.Conn, statements()[name])
				require.NoError(t, err)
				joined := strings.Join(plan, "\n")
				require.Contains(t, joined, "INDEX "+index, "%s", joined)
				for _, line := range plan {
					require.False(t, strings.HasPrefix(strings.TrimSpace(line), "SCAN p_"), "%s", joined)
				}
				return nil
			})
			require.NoError(t, err)
		})
	}
}
