package bench_test

import (
	"context"
	"math/rand"
	"path/filepath"
	"testing"
	"time"

	"github.com/awr-dev/awr/bench"
	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
	"github.com/awr-dev/awr/replay"
	"github.com/stretchr/testify/require"
)

func TestGenerate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := events.Open(ctx, filepath.Join(t.TempDir(), "awr.db"), events.Options{Create: true, Projectors: projections.Projectors()})
	require.NoError(t, err)
	defer st.Close()
	env := &commands.Env{Store: st, Now: func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }, Entropy: rand.New(rand.NewSource(1))}
	_, err = commands.Init(ctx, env, commands.InitRequest{Name: "bench"})
	require.NoError(t, err)
	_, err = commands.IndexSource(ctx, env, commands.IndexRequest{Source: bench.Source(150, 1)}, false)
	require.NoError(t, err)
	head, err := bench.Generate(ctx, st, bench.GenerateOptions{Events: 5000, Seed: 7, Batch: 200})
	require.NoError(t, err)
	require.GreaterOrEqual(t, head, int64(5000))

	// Every kind of the handoff shows up, and the result verifies.
	kinds := map[events.Kind]int{}
	require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
		return events.ScanEvents(r.Conn, 1, r.Head, func(e *events.Event) error { kinds[e.Kind]++; return nil })
	}))
	for _, k := range []events.Kind{events.KindSessionStarted, events.KindClaimAcquired, events.KindClaimRenewed, events.KindClaimReleased,
		events.KindContextCompiled, events.KindCheckpointRecorded, events.KindSessionEnded, events.KindSessionResumed, events.KindClientBound} {
		require.Positive(t, kinds[k], "kind %s never generated", k)
	}
	res, err := replay.Verify(ctx, st, nil)
	require.NoError(t, err)
	require.True(t, res.OK)
}
