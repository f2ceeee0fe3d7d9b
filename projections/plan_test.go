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
// with the log (no "SCAN p_..." line in its plan, but for the walk of a
// partial index of current rows by a caller that stops early).
func TestPlans_SeekAnIndex(t *testing.T) {
	st, err := events.Open(context.Background(), events.DBPath(t.TempDir()), events.Options{Create: true, Projectors: Projectors()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	for name, index := range map[string]string{
		"session_latest_start_by_work_at": "p_sessions_work",
		"claim_live_head":                 "p_claims_held (expires_at>?)",
		"claim_live_by_work_head":         "p_claims_held_work (work=? AND expires_at>?)", // one item's unexpired claims
		"claim_held_by_work_at":           "p_claims_token (work=?)",                      // one item's claims at a past revision, by the index of its tokens
		"session_active_head_desc":        "p_sessions_active",                            // walked newest first, stopped early
		"session_active_open_desc":        "p_sessions_active (valid_from<?)",
		"session_active_closed_at":        "p_sessions_active_right",
		"item_list_current":               "p_work_items_current", // every current item, none of the register's history
		"queue_page":                      "p_work_queue_order",   // a page of one queue in ready's order, from a place
		"queue_goal_page":                 "p_work_queue_goal",    // a page of a goal's work
	} {
		t.Run(name, func(t *testing.T) {
			err := st.Read(context.Background(), func(r *events.Reader) error {
				plan, err := events.QueryPlan(r.Conn, mustStatement(t, name))
				require.NoError(t, err)
				joined := strings.Join(plan, "\n")
				require.Contains(t, joined, "INDEX "+index, "%s", joined)
				for _, line := range plan {
					// A walk of the partial index of current active rows
					// (a caller that stops early) is the one scan allowed.
					scan := strings.HasPrefix(strings.TrimSpace(line), "SCAN p_")
					require.False(t, scan && !strings.Contains(line, "INDEX "+index), "%s", joined)
				}
				return nil
			})
			require.NoError(t, err)
		})
	}
}

func mustStatement(t *testing.T, name string) string {
	t.Helper()
	q, ok := statements.Get(name)
	require.True(t, ok, "no statement %q", name)
	return q
}

// TestStatements_Prepare prepares every embedded statement of the
// projections against a store holding all of them, and finds every
// projection's schema: the sets are read on first use.
func TestStatements_Prepare(t *testing.T) {
	st, err := events.Open(context.Background(), events.DBPath(t.TempDir()), events.Options{Create: true, Projectors: Projectors()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	require.NotEmpty(t, statements.Names())
	require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error { return statements.PrepareAll(r.Conn) }))
	for _, name := range schemas.Names() {
		q, ok := schemas.Get(name)
		require.True(t, ok, name)
		require.NotEmpty(t, q, name)
	}
}
