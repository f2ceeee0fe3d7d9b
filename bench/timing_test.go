package bench_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/awr-dev/awr/bench"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
)

func BenchmarkScratchRebuild(b *testing.B) {
	ctx := context.Background()
	path, err := bench.CachedLog(ctx, os.TempDir(), 1_000_000, nil)
	if err != nil {
		b.Fatal(err)
	}
	st, err := events.Open(ctx, path, events.Options{Projectors: projections.Projectors()})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	_ = filepath.Join
	for b.Loop() {
		t0 := time.Now()
		if err := st.Rebuild(ctx, nil); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(1_000_000/time.Since(t0).Seconds(), "events/s")
	}
}
