package workcontext_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/lab/bench"
	"github.com/awr-dev/awr/internal/project"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// project150 indexes the 150-task register of the benchmarks, with a
// checkpoint on one task, and returns the open project.
func project150(tb testing.TB) *project.Project {
	tb.Helper()
	ctx := context.Background()
	dir := tb.TempDir()
	st, err := bench.NewProject(ctx, events.DBPath(dir), 150, 1)
	require.NoError(tb, err)
	require.NoError(tb, st.Close())
	now := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	p, err := project.Open(ctx, dir, project.Options{Now: func() time.Time { return now }, Entropy: rand.New(rand.NewSource(2))})
	require.NoError(tb, err)
	tb.Cleanup(func() { p.Close() })
	return p
}

// TestCompile_150Tasks: at budget 5000 every task's packet holds every
// required fact: its goal, status, acceptance criteria, next action,
// blocker, unresolved dependencies and the hard rules in scope.
func TestCompile_150Tasks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := project150(t)
	var items []projections.WorkItem
	var goals []events.Goal
	var rules []events.Rule
	st, err := p.EventLog(ctx)
	require.NoError(t, err)
	require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
		var err error
		if items, err = projections.WorkItemsAt(r.Conn, r.Head, true); err != nil {
			return err
		}
		if goals, err = projections.GoalsAt(r.Conn, r.Head); err != nil {
			return err
		}
		rules, err = projections.RulesAt(r.Conn, r.Head)
		return err
	}))
	require.Len(t, items, 150)
	status := map[string]string{}
	for _, it := range items {
		status[it.Key] = it.Status
	}
	facts := 0
	var report strings.Builder
	report.WriteString("| task | status | required facts | present | tokens |\n|------|--------|----------------|---------|--------|\n")
	for _, it := range items {
		res, err := p.ContextCompile(ctx, project.ContextCompileRequest{Work: it.Key, Budget: new(5000)})
		require.NoError(t, err, it.Key)
		text := res.WorkContext.RenderedContext
		require.LessOrEqual(t, res.WorkContext.TokenEstimate, 5000, it.Key)
		want := []string{"Status: " + it.Status, it.NextAction}
		want = append(want, it.Acceptance...)
		for _, g := range goals {
			if g.Key == it.Goal {
				want = append(want, g.Title)
			}
		}
		if it.Blocker != "" {
			want = append(want, it.Blocker)
		}
		for _, d := range it.DependsOn {
			if d.Required && status[d.Key] != projections.StatusCompleted {
				want = append(want, "- "+d.Key+": "+status[d.Key])
			}
		}
		for _, r := range rules {
			if r.Strength == "hard" {
				want = append(want, r.Text)
			}
		}
		present := 0
		for _, f := range want {
			require.True(t, strings.Contains(text, f), "%s: packet lacks %q", it.Key, f)
			present++
		}
		facts += present
		fmt.Fprintf(&report, "| %s | %s | %d | %d | %d |\n", it.Key, it.Status, len(want), present, res.WorkContext.TokenEstimate)
	}
	// AWR_CONTEXT_REPORT=FILE writes the per-task table (docs/context-packets.md).
	if path := os.Getenv("AWR_CONTEXT_REPORT"); path != "" {
		require.NoError(t, os.WriteFile(path, []byte(report.String()), 0o644))
	}
	t.Logf("150 packets at budget 5000 hold all %d required facts", facts)
}

// BenchmarkCompile_150Tasks compiles the packet of one task of a
// 150-task project, in process.
func BenchmarkCompile_150Tasks(b *testing.B) {
	ctx := context.Background()
	p := project150(b)
	for b.Loop() {
		if _, err := p.ContextCompile(ctx, project.ContextCompileRequest{Work: "T-075", Budget: new(5000)}); err != nil {
			b.Fatal(err)
		}
	}
}
