package mcpserver_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTools_KnowledgePaged: awr_work_show, awr_session_show and
// awr_recovery_inspect take the CLI's page arguments (limit,
// knowledge_cursor, checkpoints_cursor, evidence_cursor): paging with
// the cursors they give lists every item in force once, in order, and a
// cursor awr did not give is InvalidInput naming its flag.
func TestTools_KnowledgePaged(t *testing.T) {
	t.Parallel()
	cs := connect(t, initProject(t))
	start := ok(t, cs, "awr_session_start", map[string]any{"work": "CART-1", "agent": "builder", "claim": true})
	sid := get(start, "session.id").(string)
	var loops []any
	for i := 1; i <= 5; i++ {
		loops = append(loops, fmt.Sprintf("Open question %d", i))
	}
	for i, args := range []map[string]any{
		{"open_loops": loops, "decisions": []any{"Store carts in Postgres", "Keep carts a day"}},
		{"facts": []any{"Save takes 4 ms"}},
	} {
		args["session"], args["agent"], args["digest"], args["next_action"] = sid, "builder", fmt.Sprintf("step %d", i), "go on"
		ok(t, cs, "awr_session_checkpoint", args)
	}
	want := []any{"L-1", "L-2", "L-3", "L-4", "L-5", "D-1", "D-2", "F-1"}
	items := func(m map[string]any) (out []any) {
		for _, list := range []string{"open_loops", "decisions", "facts", "hypotheses"} {
			for _, it := range get(m, "knowledge."+list).([]any) {
				out = append(out, it.(map[string]any)["id"])
			}
		}
		return out
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"awr_work_show", map[string]any{"key": "CART-1"}},
		{"awr_session_show", map[string]any{"session": sid}},
		{"awr_recovery_inspect", map[string]any{"session": sid}},
	} {
		t.Run(c.tool, func(t *testing.T) {
			var got []any
			cursor := ""
			for {
				args := map[string]any{"limit": 3}
				for k, v := range c.args {
					args[k] = v
				}
				if cursor != "" {
					args["knowledge_cursor"] = cursor
				}
				page := ok(t, cs, c.tool, args)
				require.EqualValues(t, len(want), page["knowledge_total"])
				got = append(got, items(page)...)
				next, _ := page["knowledge_next_cursor"].(string)
				if next == "" {
					break
				}
				cursor = next
			}
			require.Equal(t, want, got)
			bad := map[string]any{"knowledge_cursor": "L-1"}
			for k, v := range c.args {
				bad[k] = v
			}
			e := fails(t, cs, c.tool, bad, "InvalidInput")
			require.Equal(t, "--knowledge-cursor", get(e, "details.flag"))
		})
	}
	t.Run("checkpoints", func(t *testing.T) {
		first := ok(t, cs, "awr_session_show", map[string]any{"session": sid, "limit": 1})
		require.EqualValues(t, 2, first["checkpoints_total"])
		require.Equal(t, "step 1", get(first, "checkpoints").([]any)[0].(map[string]any)["digest"])
		older := ok(t, cs, "awr_session_show", map[string]any{"session": sid, "limit": 1, "checkpoints_cursor": first["checkpoints_next_cursor"]})
		require.Equal(t, "step 0", get(older, "checkpoints").([]any)[0].(map[string]any)["digest"])
		require.Nil(t, older["checkpoints_next_cursor"])
	})
}
