package projections

import (
	"context"
	"strings"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/stretchr/testify/require"
)

// TestPlans_PagesReadInSQL: the pages of the inspection reads (the
// knowledge in force, a session's claims and bindings) are cut in SQL:
// each statement seeks its index and ends in LIMIT :limit + 0; the page
// of the items in force at the head walks the partial index of the live
// items in the page's order (a sort, if any, only of the rows of one
// number: "LAST TERM OF ORDER BY"), so it stops after the page; its
// total is counted over that index. A session's claims and bindings are
// sought by the session's index and sorted (no index gives their order:
// the sort keeps the LIMIT's rows, but visits every one of the session's
// versions).
func TestPlans_PagesReadInSQL(t *testing.T) {
	st, err := events.Open(context.Background(), events.DBPath(t.TempDir()), events.Options{Create: true, Projectors: Projectors()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	for name, want := range map[string][]string{
		"knowledge_inforce_page_head":  {"USING INDEX p_knowledge_live (work=? AND kind=? AND num>?)"},
		"knowledge_inforce_page_at":    {"USING INDEX p_knowledge_live (work=? AND kind=? AND num>?)", "USING INDEX p_knowledge_ended (work=? AND valid_to>?)"},
		"knowledge_inforce_count_head": {"USING INDEX p_knowledge_live (work=?)"},
		"knowledge_inforce_count_at":   {"USING INDEX p_knowledge_live (work=?)", "USING INDEX p_knowledge_ended (work=? AND valid_to>?)"},
		"claim_page_by_session_at":     {"USING INDEX p_claims_session (session_id=? AND valid_from<?)"},
		"claim_count_by_session_at":    {"USING INDEX p_claims_session (session_id=? AND valid_from<?)"},
		"binding_page_by_session_at":   {"USING INDEX p_bindings_session (session_id=? AND valid_from<?)"},
		"binding_count_by_session_at":  {"USING INDEX p_bindings_session (session_id=? AND valid_from<?)"},
	} {
		t.Run(name, func(t *testing.T) {
			q := mustStatement(t, name)
			if strings.Contains(name, "_page_") {
				require.True(t, strings.HasSuffix(strings.TrimSpace(q), "LIMIT :limit + 0;"), "a page ends in LIMIT :limit + 0: %s", q)
			}
			err := st.Read(context.Background(), func(r *events.Reader) error {
				plan, err := events.QueryPlan(r.Conn, q)
				require.NoError(t, err)
				joined := strings.Join(plan, "\n")
				for _, w := range want {
					require.Contains(t, joined, w, "%s", joined)
				}
				for _, line := range plan {
					require.False(t, strings.HasPrefix(strings.TrimSpace(line), "SCAN p_"), "%s", joined)
				}
				if name == "knowledge_inforce_page_head" {
					require.NotContains(t, joined, "TEMP B-TREE FOR ORDER BY", "the page is walked in order, not sorted whole: %s", joined)
				}
				return nil
			})
			require.NoError(t, err)
		})
	}
}
