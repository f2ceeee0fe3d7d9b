package bench_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/lab/bench"
	"github.com/awr-dev/awr/internal/project"
	"github.com/awr-dev/awr/projections"
)

// Logs of 1,000,000 events are generated once (about ten minutes) and kept
// in AWR_BENCH_DIR (default the system temporary directory) for later runs.
func benchDir() string {
	if d := os.Getenv("AWR_BENCH_DIR"); d != "" {
		return d
	}
	return os.TempDir()
}

func cachedLog(b *testing.B, n int64) string {
	b.Helper()
	path, err := bench.CachedLog(context.Background(), benchDir(), n, nil)
	if err != nil {
		b.Fatal(err)
	}
	return path
}

// copyLog copies a cached log so a benchmark may write to it.
func copyLog(b *testing.B, src string) string {
	b.Helper()
	dst := filepath.Join(b.TempDir(), "awr.db")
	in, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
	return dst
}

func open(b *testing.B, path string) *events.Store {
	b.Helper()
	st, err := events.Open(context.Background(), path, events.Options{Projectors: projections.Projectors()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

// benchmarkAppend measures one checkpoint command (one IMMEDIATE
// transaction, synchronous=FULL) on a log of n events.
func benchmarkAppend(b *testing.B, n int64) {
	st := open(b, copyLog(b, cachedLog(b, n)))
	ctx := context.Background()
	env := commands.NewEnv(st)
	start, err := commands.StartSession(ctx, env, commands.StartRequest{Work: "T-001", Agent: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	// Warm the page cache first: the figure is the steady-state latency of
	// an agent appending to an open project, not the first read of a cold
	// file.
	checkpoint := func(i int) error {
		_, err := commands.RecordCheckpoint(ctx, env, commands.CheckpointRequest{SessionID: start.Session.ID, Agent: "bench",
			Digest: fmt.Sprintf("step %d", i), NextAction: "continue", KnowledgeFlags: commands.KnowledgeFlags{OpenLoops: []string{"one"}}})
		return err
	}
	for i := 0; i < 200; i++ {
		if err := checkpoint(i); err != nil {
			b.Fatal(err)
		}
	}
	i := 0
	for b.Loop() {
		i++
		if err := checkpoint(i); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppend_1k(b *testing.B) { benchmarkAppend(b, 1_000) }
func BenchmarkAppend_1M(b *testing.B) { benchmarkAppend(b, 1_000_000) }

// BenchmarkReplay_1M drops and rebuilds every projection from a
// 1,000,000-event log, reporting events per second.
func BenchmarkReplay_1M(b *testing.B) {
	st := open(b, copyLog(b, cachedLog(b, 1_000_000)))
	ctx := context.Background()
	var head int64
	if err := st.Read(ctx, func(r *events.Reader) error { head = r.Head; return nil }); err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := st.Rebuild(ctx, nil); err != nil {
			b.Fatal(err)
		}
		total += time.Since(t0)
	}
	b.ReportMetric(float64(head)*float64(b.N)/total.Seconds(), "events/s")
}

// benchmarkStatusAt measures `awr status` (sessions, claims, readiness of
// 150 work items, projection states) at a revision of a 1M-event log; rev
// < 0 is the head.
func benchmarkStatusAt(b *testing.B, rev int64) {
	benchmarkReadAt(b, rev, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), func(ctx context.Context, p *project.Project, at *int64) error {
		_, err := p.Status(ctx, project.StatusRequest{Read: project.Read{At: at}})
		return err
	})
}

func BenchmarkStatus_1M_Head(b *testing.B)   { benchmarkStatusAt(b, -1) }
func BenchmarkStatus_1M_At1000(b *testing.B) { benchmarkStatusAt(b, 1_000) }

// A revision in the middle shows the cost of list reads between the two
// ends (see docs/architecture.md, time travel).
func BenchmarkStatus_1M_At500k(b *testing.B) { benchmarkStatusAt(b, 500_000) }
func BenchmarkStatus_1M_At999k(b *testing.B) { benchmarkStatusAt(b, 999_000) }

// benchmarkLogAt measures `awr log --work KEY --limit 50` at a revision.
func benchmarkLogAt(b *testing.B, rev int64) {
	benchmarkReadAt(b, rev, time.Now(), func(ctx context.Context, p *project.Project, at *int64) error {
		_, err := p.Log(ctx, project.LogRequest{Read: project.Read{At: at}, Work: "T-001", Limit: new(50)})
		return err
	})
}

// benchmarkReadAt measures read on the door of a 1M-event log at clock
// now, at revision rev (rev < 0: at the head, At nil).
func benchmarkReadAt(b *testing.B, rev int64, now time.Time, read func(ctx context.Context, p *project.Project, at *int64) error) {
	st := open(b, cachedLog(b, 1_000_000))
	ctx := context.Background()
	p := door(b, st, now)
	var at *int64
	if rev >= 0 {
		at = &rev
	}
	for b.Loop() {
		if err := read(ctx, p, at); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLog_1M_Head(b *testing.B)   { benchmarkLogAt(b, -1) }
func BenchmarkLog_1M_At1000(b *testing.B) { benchmarkLogAt(b, 1_000) }

// BenchmarkGenerate_100k appends 100,000 events to a fresh 150-task
// project as awr bench generate does (a store from OpenForGenerate, 1,000
// commands per transaction), reporting events per second.
func BenchmarkGenerate_100k(b *testing.B) {
	ctx := context.Background()
	var appended int64
	var total time.Duration
	for b.Loop() {
		b.StopTimer()
		path := filepath.Join(b.TempDir(), "awr.db")
		st, err := bench.NewProject(ctx, path, 150, 1)
		if err != nil {
			b.Fatal(err)
		}
		if err := st.Close(); err != nil {
			b.Fatal(err)
		}
		if st, err = bench.OpenForGenerate(ctx, path, events.Options{}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		res, err := bench.Generate(ctx, st, bench.GenerateOptions{Events: 100_000, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		total += time.Since(t0)
		appended += res.Appended
		b.StopTimer()
		st.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(appended)/total.Seconds(), "events/s")
}

// door opens the project of st through the project door, on clock now.
func door(tb testing.TB, st *events.Store, now time.Time) *project.Project {
	tb.Helper()
	p, err := project.Open(context.Background(), filepath.Dir(filepath.Dir(st.Path())), project.Options{Now: func() time.Time { return now }})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Close() })
	return p
}
