package bench_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/awr-dev/awr/internal/lab/bench"
	"github.com/stretchr/testify/require"
)

// TestContextBench_Fixture: the checked-in project of the context
// benchmark is what the generator writes, byte for byte, so the binary,
// which regenerates it, measures exactly the files in
// fixtures/contextbench/project; every hard fact names one of its tasks.
func TestContextBench_Fixture(t *testing.T) {
	t.Parallel()
	keys := map[string]bool{}
	for _, f := range bench.Project(bench.ContextTasks, bench.ContextSeed) {
		got, err := os.ReadFile(testkit.Path("fixtures", "contextbench", "project", filepath.FromSlash(f.Path)))
		require.NoError(t, err)
		require.Equal(t, string(f.Content), string(got), "%s differs from the generator's", f.Path)
	}
	for i := 1; i <= bench.ContextTasks; i++ {
		keys[fmtKey(i)] = true
	}
	facts := bench.HardFacts()
	require.GreaterOrEqual(t, len(facts), 20)
	for _, f := range facts {
		require.True(t, keys[f.Work], "%s is not a task of the project", f.Work)
		require.NotEmpty(t, f.Text)
	}
}

func fmtKey(i int) string { return fmt.Sprintf("T-%03d", i) }

// TestContextBench: the figures of `awr bench context` that are behaviour
// (token counts and recall; its time is never asserted): every hard fact
// is in its task's packet at the default budget and at least 95% at
// half of it, the L0 bootstrap is at most 800 tokens (AWR: 933), every
// work context at most 4,000 (AWR: 3,250 within 5,000), and successive resumes of one task neither grow its packet's
// required part nor carry a next action it replaced, over the issue's
// 20 resumes (2.5 s).
func TestContextBench(t *testing.T) {
	t.Parallel()
	const resumes = 20
	res, err := bench.Context(context.Background(), bench.ContextOptions{Dir: filepath.Join(t.TempDir(), "p"), Resumes: resumes})
	require.NoError(t, err)
	t.Logf("%+v", res)
	require.Equal(t, 150, res.Packets)
	require.Equal(t, res.HardFacts, res.Recalled, "missing at the default budget: %v", res.Missing)
	require.GreaterOrEqual(t, 100*res.RecalledAtHalf, 95*res.HardFacts, "missing at half the budget: %v", res.MissingAtHalf)
	require.Equal(t, res.HardFacts, res.RecalledAtRequired, "a hard fact is in an optional section, cut before bookkeeping")
	require.LessOrEqual(t, res.Bootstrap, 800)
	require.LessOrEqual(t, res.MaxPacketTokens, 4000)
	// Tokens, not time: the same on every run but for a few tokens of ids.
	require.GreaterOrEqual(t, res.Compression, 50.0, "sources ÷ mean packet")
	require.Len(t, res.ResumeTokens, resumes)
	require.Zero(t, res.StaleNextActions)
	// From the second resume on (the first has nothing closed since its
	// checkpoint to show) the required part does not grow; the optional
	// history and earlier checkpoints fill up to their caps, after which
	// the whole packet does not grow either (by the tenth resume).
	req := res.ResumeRequired
	for i := 2; i < len(req); i++ {
		require.LessOrEqual(t, req[i], req[1]+req[1]/20, "the required part grew over the resumes: %v", req)
	}
	for _, n := range res.ResumeTokens[10:] {
		require.LessOrEqual(t, n, res.ResumeTokens[9]+res.ResumeTokens[9]/20, "the packet grew after the tenth resume: %v", res.ResumeTokens)
	}
}
