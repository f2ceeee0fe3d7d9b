package project_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
)

// sessionWithCheckpoints returns a project whose one session on W-1 has
// recorded n checkpoints, and the session's id.
func sessionWithCheckpoints(tb testing.TB, n int) (*project.Project, string) {
	ctx := context.Background()
	p := openW1(tb)
	start, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: "a0", Claim: true})
	require.NoError(tb, err)
	for i := range n {
		_, err := p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: start.Session.ID, Agent: "a0",
			Digest: fmt.Sprintf("Did step %d of the store", i), NextAction: "Write the next part of the store"})
		require.NoError(tb, err)
	}
	return p, start.Session.ID
}

// BenchmarkHistory_Checkpoints: compiling the packet and inspecting the
// recovery of a session cost the same with 5 and with 5,000 checkpoints
// (issue #17's target: the second within 1.2x the first), since a packet
// shows the latest checkpoint and 8 earlier ones and reads no others; so
// does recording one more checkpoint (its checks against the log seek
// events_stream_kind instead of walking the session's stream).
func BenchmarkHistory_Checkpoints(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{5, 5000} {
		p, session := sessionWithCheckpoints(b, n)
		b.Run(fmt.Sprintf("compile/checkpoints=%d", n), func(b *testing.B) {
			for b.Loop() {
				// W-1 has no goal: the packet is complete but for it.
				_, err := p.ContextCompile(ctx, project.ContextCompileRequest{Work: "W-1", Budget: new(100000)})
				if err != nil && fault.As(err).Code != fault.ContextIncomplete {
					require.NoError(b, err)
				}
			}
		})
		b.Run(fmt.Sprintf("recovery/checkpoints=%d", n), func(b *testing.B) {
			for b.Loop() {
				_, err := p.RecoveryInspect(ctx, project.RecoveryInspectRequest{Session: session})
				require.NoError(b, err)
			}
		})
		b.Run(fmt.Sprintf("checkpoint/checkpoints=%d", n), func(b *testing.B) {
			for b.Loop() {
				_, err := p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: session, Agent: "a0",
					Digest: "Did one more step of the store", NextAction: "Write the next part of the store"})
				require.NoError(b, err)
			}
		})
	}
}
