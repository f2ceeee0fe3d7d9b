package mcpserver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awr-dev/awr/internal/project"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// ledgerProject writes a YAML ledger of n work items (a goal, priorities,
// acceptance criteria, a dependency every fifth item) and initializes
// the project.
func ledgerProject(t testing.TB, n int) (dir, id string) {
	t.Helper()
	dir = t.TempDir()
	var b strings.Builder
	b.WriteString("goals:\n  - id: G-1\n    title: Ship the shop\n    status: active\nitems:\n")
	statuses := []string{"planned", "planned", "in_progress", "done", "planned"}
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  - id: T-%03d\n    title: Task %d of the shop\n    status: %s\n    priority: p%d\n    goal: G-1\n    next_action: Do step %d\n    acceptance:\n      - Criterion A of %d\n      - Criterion B of %d\n",
			i, i, statuses[i%len(statuses)], 1+i%3, i, i, i)
		if i%5 == 0 {
			fmt.Fprintf(&b, "    depends_on: [T-%03d]\n", i-1)
		}
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "ledger"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ledger", "work-ledger.yaml"), []byte(b.String()), 0o644))
	return dir, initSeeded(t, dir, 7)
}

// BenchmarkShared_Reads measures what one read costs a client of the
// shared service over loopback HTTP on a 150-item project (the SDK's
// client, a session kept open, the project's store kept open by the
// service): status, ready and work show, each reporting its p50 and p90
// in ms beside the mean.
//
//	go test ./internal/serve/mcpserver -run '^$' -bench BenchmarkShared_Reads -benchtime 300x
func BenchmarkShared_Reads(b *testing.B) {
	dir, id := ledgerProject(b, 150)
	token := newToken(b)
	svc := startShared(b, fmt.Sprintf("[projects.shop]\nroot = %q\nid = %q\n\n[clients.bench]\ntoken_env = \"T\"\ngrants = { shop = \"read\" }\n", dir, id), map[string]string{"T": token})
	cs := connectHTTP(b, svc.url, token)
	ctx := context.Background()
	st, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "awr_status", Arguments: map[string]any{"project": "shop"}})
	require.NoError(b, err)
	require.EqualValues(b, 150, st.StructuredContent.(map[string]any)["work_items"])
	// The same reads through the door in this process, for the cost of
	// the work alone.
	p, err := project.Open(ctx, dir, project.Options{Now: func() time.Time { return now }})
	require.NoError(b, err)
	b.Cleanup(func() { p.Close() })
	door := map[string]func() error{
		"awr_status":    func() error { _, err := p.Status(ctx, project.StatusRequest{}); return err },
		"awr_ready":     func() error { _, err := p.Ready(ctx, project.ReadyRequest{}); return err },
		"awr_work_show": func() error { _, err := p.WorkShow(ctx, project.WorkShowRequest{Key: "T-042"}); return err },
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"awr_status", map[string]any{"project": "shop"}},
		{"awr_ready", map[string]any{"project": "shop"}},
		{"awr_work_show", map[string]any{"project": "shop", "key": "T-042"}},
	} {
		b.Run(c.tool+"/http", func(b *testing.B) {
			// One call first: the caches warm, the answer is checked.
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
			require.NoError(b, err)
			require.False(b, res.IsError, "%v", res.Content)
			timed(b, func() error {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
				return err
			})
		})
		b.Run(c.tool+"/door", func(b *testing.B) {
			require.NoError(b, door[c.tool]())
			timed(b, door[c.tool])
		})
	}
}

// timed runs f b.N times and reports the p50 and p90 of its calls in
// ms, and the CPU time the process spent per call (client and service
// together over HTTP), which a busy machine stretches less than the wall
// clock.
func timed(b *testing.B, f func() error) {
	took := make([]time.Duration, 0, b.N)
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	slices.Sort(took)
	ms := func(q float64) float64 { return float64(took[int(q*float64(len(took)-1))]) / float64(time.Millisecond) }
	b.ReportMetric(ms(0.5), "p50-ms")
	b.ReportMetric(ms(0.9), "p90-ms")
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
