package main

import (
	"context"
	"os/exec"
	"sort"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/awr-dev/awr/internal/lab/bench"
)

// BenchmarkProcess_ContextCompile runs the built awr binary as an agent
// would: `awr context compile --work T-075 --json` on a 150-task project,
// against the process floor `awr version`. It reports the p95 of each and
// their ratio; speed is measured here, never asserted.
func BenchmarkProcess_ContextCompile(b *testing.B) {
	bin := testkit.Program(b, testkit.AWR)
	dir := b.TempDir()
	st, err := bench.NewProject(context.Background(), events.DBPath(dir), 150, 1)
	if err != nil {
		b.Fatal(err)
	}
	st.Close()
	p95 := func(args ...string) time.Duration {
		var ds []time.Duration
		for i := 0; i < 60; i++ {
			t0 := time.Now()
			if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
				b.Fatalf("%v: %v\n%s", args, err, out)
			}
			ds = append(ds, time.Since(t0))
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[len(ds)*95/100]
	}
	var compile, version time.Duration
	for b.Loop() {
		version = p95("version")
		compile = p95("context", "compile", "--work", "T-075", "--project", dir, "--json")
	}
	b.ReportMetric(float64(version.Microseconds())/1000, "version-p95-ms")
	b.ReportMetric(float64(compile.Microseconds())/1000, "compile-p95-ms")
	b.ReportMetric(float64(compile)/float64(version), "ratio")
}
