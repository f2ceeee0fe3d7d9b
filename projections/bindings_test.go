package projections_test

import (
	"fmt"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
)

const bindingRows = `SELECT external_session, client, session_id, work, checkpoint_id, bound_at, valid_from, valid_to
	FROM p_bindings ORDER BY external_session, valid_from`

// readBindings renders BindingsAt(rev) as "external>session @revision",
// then the bindings of s2.
func readBindings(t *testing.T, conn *sqlite.Conn, rev int64) string {
	t.Helper()
	all, err := projections.BindingsAt(conn, rev)
	bound := joinRows(t, all, err, func(b projections.Binding) string {
		return fmt.Sprintf("%s>%s @%d", b.ExternalSession, b.SessionID, b.Revision)
	})
	s2, err := projections.SessionBindingsAt(conn, "s2", rev)
	require.NoError(t, err)
	return fmt.Sprintf("%s | s2 has %d", bound, len(s2))
}

func bind(external, session, work, checkpoint string) *events.ClientBound {
	return &events.ClientBound{Client: "claude", ExternalSession: external, SessionID: session, Work: work, CheckpointID: checkpoint}
}

// TestBindings_Apply: client_bound makes the binding of its external
// session; a later bind of the same conversation replaces it.
func TestBindings_Apply(t *testing.T) {
	t.Parallel()
	two := []events.Payload{declare("W-1", "W-2"), start("s1", "W-1"), start("s2", "W-2")}
	applyTable(t, bindingRows, readBindings, []applyCase{
		{
			name: "Bound",
			log:  append(two[:3:3], bind("claude:abc", "s1", "W-1", "")),
			rows: []string{
				"claude:abc claude s1 W-1 '' t+4 4 -",
			},
			at: map[int64]string{
				3: " | s2 has 0",
				4: "claude:abc>s1 @4 | s2 has 0",
			},
		},
		{
			name: "ReboundToAnotherSession",
			log:  append(two[:3:3], bind("claude:abc", "s1", "W-1", ""), bind("claude:abc", "s2", "W-2", "cp-9")),
			rows: []string{
				"claude:abc claude s1 W-1 '' t+4 4 5",
				"claude:abc claude s2 W-2 cp-9 t+5 5 -",
			},
			at: map[int64]string{
				4: "claude:abc>s1 @4 | s2 has 0",
				5: "claude:abc>s2 @5 | s2 has 1",
			},
		},
		{
			name: "TwoConversations",
			log:  append(two[:3:3], bind("claude:abc", "s1", "W-1", ""), bind("codex:xyz", "s2", "W-2", ""), bind("claude:abc", "s1", "W-1", "")),
			rows: []string{
				"claude:abc claude s1 W-1 '' t+4 4 6",
				"claude:abc claude s1 W-1 '' t+6 6 -",
				"codex:xyz claude s2 W-2 '' t+5 5 -",
			},
			at: map[int64]string{
				4: "claude:abc>s1 @4 | s2 has 0",
				5: "claude:abc>s1 @4; codex:xyz>s2 @5 | s2 has 1",
				6: "claude:abc>s1 @6; codex:xyz>s2 @5 | s2 has 1",
			},
		},
		{
			name: "OtherKindsIgnored",
			log:  append(two[:3:3], end("s1", "W-1", events.OutcomeCompleted)),
		},
	})
}

// TestBindings_Reads: BindingAt finds the version of one conversation's
// binding current at each revision.
func TestBindings_Reads(t *testing.T) {
	t.Parallel()
	st := logOf(t, declare("W-1", "W-2"), start("s1", "W-1"), start("s2", "W-2"),
		bind("claude:abc", "s1", "W-1", ""), bind("claude:abc", "s2", "W-2", "cp-9"))
	read(t, st, func(conn *sqlite.Conn) {
		for rev, want := range map[int64]*projections.Binding{
			3: nil,
			4: {Client: "claude", ExternalSession: "claude:abc", SessionID: "s1", Work: "W-1", BoundAt: ms(4), Revision: 4},
			5: {Client: "claude", ExternalSession: "claude:abc", SessionID: "s2", Work: "W-2", CheckpointID: "cp-9", BoundAt: ms(5), Revision: 5},
		} {
			b, err := projections.BindingAt(conn, "claude:abc", rev)
			require.NoError(t, err)
			require.Equal(t, want, b, "at %d", rev)
		}
		b, err := projections.BindingAt(conn, "claude:other", 5)
		require.NoError(t, err)
		require.Nil(t, b)
	})
}
