package demo_test

import (
	"bytes"
	"context"
	"flag"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/fixtures/testkit"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/lab/demo"
	"github.com/awr-dev/awr/projections"
	"github.com/awr-dev/awr/replay"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite fixtures/logs/handoff.jsonl")

var recorded = testkit.Path("fixtures", "logs", "handoff.jsonl")

func record(t *testing.T) *demo.Report {
	t.Helper()
	clock := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	var out bytes.Buffer
	rep, err := demo.Run(context.Background(), demo.Options{Dir: t.TempDir(), Out: &out, Now: func() time.Time {
		clock = clock.Add(1500 * time.Millisecond)
		return clock
	}, Entropy: ulid.Monotonic(rand.New(rand.NewSource(42)), 0)})
	require.NoError(t, err)
	return rep
}

// TestDemo runs the scripted handoff and checks what it proves.
func TestDemo(t *testing.T) {
	t.Parallel()
	rep := record(t)
	require.True(t, rep.Verified)
	require.True(t, rep.ImportMatches)
	require.EqualValues(t, 13, rep.ProjectRevision)
	var cmds []string
	for _, s := range rep.Steps {
		cmds = append(cmds, s.Command)
	}
	joined := strings.Join(cmds, "\n")
	for _, want := range []string{"awr init --accept", "awr session start", "awr session checkpoint", "awr session resume", "awr client bind", "awr verify", "awr export"} {
		require.Contains(t, joined, want)
	}
	var resume demo.Step
	for _, s := range rep.Steps {
		if strings.HasPrefix(s.Command, "awr session resume") {
			resume = s
		}
	}
	require.Equal(t, "Run the cart store tests, then wire Save into the cart handler", resume.Fields["next_action"])
	require.Len(t, resume.Fields["open_loops"], 2)
}

// TestDemo_RecordedLog pins the canonical encoding and hash chain: the demo
// run with a fixed clock and entropy must export exactly the recorded log,
// and the recorded log must import and verify. Run with -update after a
// deliberate change of the demo script (never of the encoding).
func TestDemo_RecordedLog(t *testing.T) {
	t.Parallel()
	rep := record(t)
	if *update {
		require.NoError(t, os.WriteFile(recorded, rep.Export, 0o644))
	}
	want, err := os.ReadFile(recorded)
	require.NoError(t, err)
	require.Equal(t, string(want), string(rep.Export), "the demo's log differs from %s", recorded)

	ctx := context.Background()
	st, err := events.Open(ctx, events.DBPath(t.TempDir()), events.Options{Create: true, Projectors: projections.Projectors()})
	require.NoError(t, err)
	defer st.Close()
	_, err = replay.Import(ctx, st, bytes.NewReader(want), recorded)
	require.NoError(t, err)
	res, err := replay.Verify(ctx, st, nil)
	require.NoError(t, err)
	require.Equal(t, rep.HeadHash, res.HeadHash)
}
