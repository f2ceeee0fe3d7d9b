package project_test

import (
	"context"
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fault"
	"github.com/awr-dev/awr/project"
	"github.com/stretchr/testify/require"
)

// TestCompile_LatestSession: without --session a packet follows the
// chain of the session that started last on the item at the revision
// read (read from the sessions projection since issue #17), at the head
// and at a revision before that session started.
func TestCompile_LatestSession(t *testing.T) {
	ctx := context.Background()
	p := openW1(t)
	t.Cleanup(func() { p.Close() })
	checkpoint := func(session, digest string) {
		_, err := p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: session, Agent: "a0", Digest: digest, NextAction: "Go on"})
		require.NoError(t, err)
	}
	first, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: "a0", Claim: true})
	require.NoError(t, err)
	for range 3 {
		checkpoint(first.Session.ID, "Did a step in the first session")
	}
	_, err = p.SessionEnd(ctx, project.SessionEndRequest{SessionID: first.Session.ID, Agent: "a0", Outcome: events.OutcomeIncomplete})
	require.NoError(t, err)
	second, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: "a1"})
	require.NoError(t, err)
	before := second.ProjectRevision - 1
	checkpoint(second.Session.ID, "Did a step in the second session")

	compile := func(at *int64) string {
		res, err := p.ContextCompile(ctx, project.ContextCompileRequest{Work: "W-1", Budget: new(100000), Read: commands.Read{At: at}})
		if err != nil {
			require.Equal(t, fault.ContextIncomplete, fault.As(err).Code, "%v", err)
		}
		return res.WorkContext.RenderedContext
	}
	head := compile(nil)
	require.Contains(t, head, "session "+second.Session.ID)
	require.Contains(t, head, "Did a step in the second session")
	past := compile(&before)
	require.Contains(t, past, "session "+first.Session.ID)
	require.NotContains(t, past, second.Session.ID)
}
