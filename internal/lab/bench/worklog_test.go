package bench_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/awr-dev/awr/internal/lab/bench"
	"github.com/awr-dev/awr/internal/project"
	"github.com/awr-dev/awr/projections"
	"github.com/awr-dev/awr/replay"
	"github.com/stretchr/testify/require"
)

// TestLogByWork checks `awr log --work` (served by the worklog projection)
// against its definition, computed from the raw log: the events of the
// item's stream, of the session streams of every session on the item, and
// the bindings of host conversations on the item, and the source_indexed
// events that changed the item (its parsed form differs from the one the
// previous index of its source recorded); at the head and at
// revisions in the past, with --since and --kind.
func TestLogByWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n := testkit.Size(3000, 1000)
	st := history(t, 20, 5, bench.GenerateOptions{Events: int64(n), Seed: 5, Batch: 100})

	var all []*events.Event
	sessionWork := map[string]string{}
	works := map[string]bool{}
	// itemChanged[seq][key]: the source_indexed event at seq changed key.
	itemChanged := map[int64]map[string]bool{}
	indexed := map[string]map[string]string{}
	require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
		return events.ScanEvents(r.Conn, 1, r.Head, func(e *events.Event) error {
			all = append(all, e)
			if e.Kind == events.KindSourceIndexed {
				v, err := events.Decode(e)
				if err != nil {
					return err
				}
				s := v.(*events.SourceIndexed)
				now := map[string]string{}
				for _, it := range s.Items {
					b, err := json.Marshal(it)
					if err != nil {
						return err
					}
					now[it.Key] = string(b)
				}
				changed := map[string]bool{}
				for k, j := range now {
					changed[k] = indexed[s.Path][k] != j
				}
				for k := range indexed[s.Path] {
					if _, ok := now[k]; !ok {
						changed[k] = true
					}
				}
				indexed[s.Path], itemChanged[e.Seq] = now, changed
			}
			if e.Kind == events.KindSessionStarted {
				v, err := events.Decode(e)
				if err != nil {
					return err
				}
				s := v.(*events.SessionStarted)
				sessionWork[s.SessionID] = s.Work
				works[s.Work] = true
			}
			return nil
		})
	}))
	want := func(work string, since, until int64, kind string) []int64 {
		var out []int64
		for _, e := range all {
			if e.Seq <= since || e.Seq > until || (kind != "" && string(e.Kind) != kind) {
				continue
			}
			on := e.Stream == "work/"+work
			if id, ok := strings.CutPrefix(e.Stream, "session/"); ok && sessionWork[id] == work {
				on = true
			}
			if e.Kind == events.KindClientBound {
				v, _ := events.Decode(e)
				on = v.(*events.ClientBound).Work == work
			}
			if e.Kind == events.KindSourceIndexed {
				on = itemChanged[e.Seq][work]
			}
			if on {
				out = append(out, e.Seq)
			}
		}
		return out
	}
	head := all[len(all)-1].Seq
	compared := 0
	require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
		for work := range works {
			for _, c := range []struct {
				since, until int64
				kind         string
			}{{0, head, ""}, {0, head / 2, ""}, {head / 3, head, ""}, {0, head, "checkpoint_recorded"}, {100, head / 2, "claim_acquired"}} {
				got, err := project.LogOn(r, c.until, project.LogFilter{Work: work, Since: c.since, Kind: c.kind, Limit: -1})
				require.NoError(t, err)
				var seqs []int64
				for _, e := range got {
					seqs = append(seqs, e.Seq)
				}
				require.Equal(t, want(work, c.since, c.until, c.kind), seqs, "work %s %+v", work, c)
				compared += len(seqs)
			}
		}
		return nil
	}))
	require.Greater(t, compared, n, "too few events compared: fewer than the history holds")
}

// A store with a pool of one connection (as bench generate opens one)
// generates and rebuilds: with no spare connection to read the log on, a
// rebuild folds it on the writing connection instead of waiting for one
// forever.
func TestPoolOfOne_GenerateAndRebuild(t *testing.T) {
	t.Parallel()
	// A wait that never ends is caught by go test's own -timeout, which
	// prints every goroutine's stack: a deadline of the test's own would
	// race the machine (under -race at load 25 the work took 8 minutes).
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "awr.db")
	st, err := bench.NewProject(ctx, path, 10, 2)
	require.NoError(t, err)
	require.NoError(t, st.Close())
	st, err = events.Open(ctx, path, events.Options{PoolSize: 1, Projectors: projections.Projectors()})
	require.NoError(t, err)
	defer st.Close()
	_, err = bench.Generate(ctx, st, bench.GenerateOptions{Events: int64(testkit.Size(500, 200)), Seed: 2})
	require.NoError(t, err)
	_, err = bench.Generate(ctx, st, bench.GenerateOptions{Events: int64(testkit.Size(1000, 300)), Seed: 3})
	require.NoError(t, err)
	_, err = replay.Rebuild(ctx, st, nil)
	require.NoError(t, err)
	requireVerifies(t, st)
}
