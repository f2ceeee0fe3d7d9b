package bench_test

import (
	"bytes"
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/intake/source"
	"github.com/awr-dev/awr/internal/lab/bench"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

func TestProject_Deterministic(t *testing.T) {
	t.Parallel()
	a, b := bench.Project(150, 7), bench.Project(150, 7)
	require.Equal(t, a, b)
	c := bench.Project(150, 8)
	require.NotEqual(t, a[3].Content, c[3].Content, "another seed, another ledger")
}

// TestProject_Indexes: every file parses without an issue, init proposes
// each file for one role without ambiguity, the organization has no gap,
// and accepting it indexes every task.
func TestProject_Indexes(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 7, 20, 150, 1000} {
		dir := t.TempDir()
		files, err := bench.WriteProject(dir, n, 1)
		require.NoError(t, err)
		p, err := intake.Plan(dir, intake.InitOptions{})
		require.NoError(t, err)
		require.Empty(t, p.Ambiguous, "n=%d", n)
		require.Len(t, p.Mapping, len(files), "n=%d", n)
		for _, m := range p.Mapping {
			content, err := os.ReadFile(filepath.Join(dir, m.Path))
			require.NoError(t, err)
			res := source.Parse(m.Adapter, m.Path, content, m.Options)
			require.Empty(t, res.Issues, "n=%d %s", n, m.Path)
		}
		require.Empty(t, p.Organization.Gaps, "n=%d", n)
		require.Equal(t, intake.StateReady, p.Organization.State, "n=%d", n)

		ctx := context.Background()
		var st *events.Store
		res, err := intake.Accept(ctx, p, func(create bool) (*events.Store, error) {
			if st == nil {
				st, err = events.Open(ctx, events.DBPath(dir), events.Options{Create: create, Projectors: projections.Projectors()})
			}
			return st, err
		}, func(st *events.Store) *commands.Env {
			return &commands.Env{Store: st, Now: func() time.Time { return time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC) }, Entropy: rand.New(rand.NewSource(1))}
		})
		require.NoError(t, err)
		require.Empty(t, res.Organization.Gaps)
		var items []projections.WorkItem
		require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
			items, err = projections.WorkItemsAt(r.Conn, r.Head, true)
			return err
		}))
		require.Len(t, items, n)
		active := 0
		for _, it := range items {
			if it.Status == projections.StatusInProgress {
				active++
			}
		}
		if n >= 150 {
			require.InDelta(t, 0.25, float64(active)/float64(n), 0.06, "about a quarter in progress")
		}
		require.NoError(t, st.Close())
	}
}

func TestWriteProject_Errors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x"), []byte("x"), 0o644))
	_, err := bench.WriteProject(dir, 10, 1)
	require.ErrorContains(t, err, "not empty")
	_, err = bench.WriteProject(filepath.Join(dir, "y"), 0, 1)
	require.ErrorContains(t, err, "--tasks 0")
	_, err = bench.WriteProject(filepath.Join(dir, "x"), 10, 1)
	require.ErrorContains(t, err, "not a directory")
	_ = bytes.Equal
}
