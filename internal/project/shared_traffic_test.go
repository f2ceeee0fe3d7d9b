package project_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/awr-dev/awr/events/pgstore"
	"github.com/awr-dev/awr/events/pgstore/pgtest"
	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
)

// TestShared_RoundTrips (issue #40, item 4): what one command costs the
// network on a shared project, as the CLI runs it (a project opened for
// one command, OneCommand): one connection, and a bounded number of
// round trips, counted on the connection itself (pgstore.Traffic). Before
// the statements were sent whole and batched, a read took 6 round trips,
// session start 15, a checkpoint 16 and one with a request id 20.
func TestShared_RoundTrips(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "team")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "TODO.md"), []byte("# TODO\n\n- [ ] W-1: One\n- [ ] W-2: Two\n- [ ] W-3: Three\n"), 0o644))
	p, err := project.Open(ctx, dir, project.Options{})
	require.NoError(t, err)
	_, err = p.Init(ctx, project.InitRequest{Accept: true, Name: "team", Store: dbURL})
	require.NoError(t, err)
	require.NoError(t, p.Close())

	// command runs op on the project opened for it alone, as a CLI
	// process does, and returns what its store cost.
	command := func(name string, op func(p *project.Project) error) pgstore.Traffic {
		t.Helper()
		p, err := project.Open(ctx, dir, project.Options{OneCommand: true})
		require.NoError(t, err)
		defer p.Close()
		require.NoError(t, op(p), name)
		st, err := p.EventLog(ctx)
		require.NoError(t, err)
		up, ok := st.Upstream().(*pgstore.Store)
		require.True(t, ok, "the project's log is shared")
		tr := up.Traffic()
		t.Logf("%-34s %d connection(s), %d round trips", name, tr.Connections, tr.RoundTrips)
		return tr
	}
	var session string
	ttl := int64(3_600_000)
	for _, c := range []struct {
		name string
		max  int64
		op   func(p *project.Project) error
	}{
		{"status", 3, func(p *project.Project) error { _, err := p.Status(ctx, project.StatusRequest{}); return err }},
		{"ready", 3, func(p *project.Project) error { _, err := p.Ready(ctx, project.ReadyRequest{}); return err }},
		{"work show", 3, func(p *project.Project) error {
			_, err := p.WorkShow(ctx, project.WorkShowRequest{Key: "W-1"})
			return err
		}},
		{"session start", 5, func(p *project.Project) error {
			res, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: "rt"})
			if err == nil {
				session = res.Session.ID
			}
			return err
		}},
		{"claim acquire", 6, func(p *project.Project) error {
			_, err := p.ClaimAcquire(ctx, project.ClaimAcquireRequest{SessionID: session, TTLms: &ttl})
			return err
		}},
		{"session checkpoint", 6, func(p *project.Project) error {
			_, err := p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: session, Agent: "rt", Digest: "stepped", NextAction: "step again"})
			return err
		}},
		{"session checkpoint --request-id", 7, func(p *project.Project) error {
			req := project.SessionCheckpointRequest{SessionID: session, Agent: "rt", Digest: "stepped twice", NextAction: "step again"}
			req.RequestID = "rt-1"
			_, err := p.SessionCheckpoint(ctx, req)
			return err
		}},
	} {
		tr := command(c.name, c.op)
		require.EqualValues(t, 1, tr.Connections, "%s: one connection", c.name)
		require.LessOrEqual(t, tr.RoundTrips, c.max, "%s: round trips", c.name)
	}
}
