package project_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
)

// packetGrowth runs 100 checkpoints on one work item, 10 per session over
// a chain of 10 sessions, where the agent opens a new loop at every
// checkpoint and never resolves one itself. With hygiene, from the third
// session on the agent records one fact that settles the loops of two
// sessions back, naming them, and each successor runs `context hygiene`
// when it resumes and drops the loops it lists (answered by that fact:
// age alone flags nothing). It returns the packet's required tokens and
// open loops after every 10th checkpoint.
// openW1 returns a new project holding one work item, W-1 (no goal), open
// through the door (openW1Dir) and closed when the test is done.
func openW1(tb testing.TB) *project.Project {
	return opened(tb, openW1Dir(tb), project.Options{})
}

func packetGrowth(tb testing.TB, hygiene bool) (required, loops []int) {
	ctx := context.Background()
	p := openW1(tb)
	defer p.Close()
	start, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: "a0", Claim: true})
	require.NoError(tb, err)
	session := start.Session.ID
	n := 0
	for s := 0; s < 10; s++ {
		var drop []string
		if s > 0 {
			res, err := p.SessionResume(ctx, project.SessionResumeRequest{FromSession: session, Agent: fmt.Sprintf("a%d", s), Budget: new(100000)})
			require.NoError(tb, err)
			session = res.Resumed.Session.ID
			if hygiene {
				h, err := p.ContextHygiene(ctx, project.HygieneRequest{Work: "W-1"})
				require.NoError(tb, err)
				for _, f := range h.Findings {
					require.Equal(tb, project.FindingAnswered, f.Kind, "%+v", f)
					drop = append(drop, f.ID+"=settled: "+f.Evidence.Quote[:strings.Index(f.Evidence.Quote, ":")])
				}
			}
		}
		for c := 0; c < 10; c++ {
			n++
			req := project.SessionCheckpointRequest{SessionID: session, Agent: "agent", Digest: fmt.Sprintf("Did step %d of the store", n),
				NextAction: "Write the next part of the store"}
			req.OpenLoops = []string{fmt.Sprintf("Check whether step %d needs a migration before the release", n)}
			if c == 0 {
				req.DropLoops = drop
				if hygiene && s >= 2 {
					var ids []string
					for l := 10*(s-2) + 1; l <= 10*(s-1); l++ {
						ids = append(ids, fmt.Sprintf("L-%d", l))
					}
					req.Facts = []string{fmt.Sprintf("No step of session %d needs a migration: %s checked", s-2, strings.Join(ids, ", "))}
				}
			}
			_, err := p.SessionCheckpoint(ctx, req)
			require.NoError(tb, err)
		}
		c, err := p.ContextCompile(ctx, project.ContextCompileRequest{Work: "W-1", Budget: new(100000)})
		if err != nil && !strings.Contains(err.Error(), "incomplete") {
			require.NoError(tb, err)
		}
		required = append(required, c.WorkContext.RequiredTokens)
		loops = append(loops, len(c.WorkContext.Knowledge.OpenLoops))
	}
	return required, loops
}

// BenchmarkPacketGrowth reports the required tokens of the packet after
// 100 checkpoints that each open a loop, without and with hygiene (see
// packetGrowth); docs/notes/benchmarks.md has the series.
func BenchmarkPacketGrowth(b *testing.B) {
	for _, hygiene := range []bool{false, true} {
		name := "without_hygiene"
		if hygiene {
			name = "with_hygiene"
		}
		b.Run(name, func(b *testing.B) {
			var required, loops []int
			for i := 0; i < b.N; i++ {
				required, loops = packetGrowth(b, hygiene)
			}
			b.ReportMetric(float64(required[len(required)-1]), "required_tokens@100")
			b.ReportMetric(float64(loops[len(loops)-1]), "open_loops@100")
			b.Logf("required tokens after 10..100 checkpoints: %v; open loops: %v", required, loops)
		})
	}
}

// TestPacketGrowth_HygieneBoundsLoops: without hygiene every loop stays
// open (nothing is lost by omission); with it, what a later fact answered
// is retired and the packet stops growing.
func TestPacketGrowth_HygieneBoundsLoops(t *testing.T) {
	t.Parallel()
	reqOff, loopsOff := packetGrowth(t, false)
	reqOn, loopsOn := packetGrowth(t, true)
	require.Equal(t, 100, loopsOff[9], "no loop vanishes by omission")
	require.LessOrEqual(t, loopsOn[9], 30, "hygiene retires the loops a fact answered")
	require.Greater(t, reqOff[9], reqOn[9])
	require.Greater(t, reqOff[9], reqOff[0]*5, "without hygiene the required part grows with every loop")
}
