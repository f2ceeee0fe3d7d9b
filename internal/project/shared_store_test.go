package project_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awr-dev/awr/events/pgstore"
	"github.com/awr-dev/awr/events/pgstore/pgtest"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
)

// TestShared_RoundTrips (issue #40, item 4): what one command costs the
// network on a shared project, as the CLI runs it (a project opened for
// one command, OneCommand): one connection, and a bounded number of
// round trips, counted on the connection itself (pgstore.Traffic): a
// read is the connection's start and one query (the schema's version and
// the head); a write adds the lock (BEGIN with it) and the commit (the
// inserts, the head's advance and COMMIT together), its request id looked
// up with the lock. Before the statements were sent whole and batched, a read took
// 6 round trips, session start 15, a checkpoint 16 and one with a request
// id 20.
func TestShared_RoundTrips(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	t.Parallel()
	ctx := context.Background()
	dir := teamProject(t, dbURL, "# TODO\n\n- [ ] W-1: One\n- [ ] W-2: Two\n- [ ] W-3: Three\n")

	// command runs op on the project opened for it alone, as a CLI
	// process does, and returns what its store cost.
	command := func(name string, op func(p *project.Project) error) pgstore.Traffic {
		t.Helper()
		p := opened(t, dir, project.Options{OneCommand: true})
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
	var first int64 // the revision of the checkpoint with a request id
	ttl := int64(3_600_000)
	for _, c := range []struct {
		name string
		max  int64
		op   func(p *project.Project) error
	}{
		{"status", 2, func(p *project.Project) error { _, err := p.Status(ctx, project.StatusRequest{}); return err }},
		{"ready", 2, func(p *project.Project) error { _, err := p.Ready(ctx, project.ReadyRequest{}); return err }},
		{"work show", 2, func(p *project.Project) error {
			_, err := p.WorkShow(ctx, project.WorkShowRequest{Key: "W-1"})
			return err
		}},
		{"session start", 4, func(p *project.Project) error {
			res, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: "rt"})
			if err == nil {
				session = res.Session.ID
			}
			return err
		}},
		{"claim acquire", 4, func(p *project.Project) error {
			_, err := p.ClaimAcquire(ctx, project.ClaimAcquireRequest{SessionID: session, TTLms: &ttl})
			return err
		}},
		{"session checkpoint", 4, func(p *project.Project) error {
			_, err := p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: session, Agent: "rt", Digest: "stepped", NextAction: "step again"})
			return err
		}},
		{"session checkpoint --request-id", 4, func(p *project.Project) error {
			req := project.SessionCheckpointRequest{SessionID: session, Agent: "rt", Digest: "stepped twice", NextAction: "step again"}
			req.RequestID = "rt-1"
			res, err := p.SessionCheckpoint(ctx, req)
			if err == nil {
				first = res.ProjectRevision
			}
			return err
		}},
		{"the same, retried; then status", 5, func(p *project.Project) error {
			req := project.SessionCheckpointRequest{SessionID: session, Agent: "rt", Digest: "stepped twice", NextAction: "step again"}
			req.RequestID = "rt-1"
			res, err := p.SessionCheckpoint(ctx, req)
			if err != nil {
				return err
			}
			st, err := p.Status(ctx, project.StatusRequest{})
			require.NoError(t, err)
			require.Equal(t, first, res.ProjectRevision, "the first answer")
			require.Equal(t, first, st.ProjectRevision, "nothing appended")
			return nil
		}},
	} {
		tr := command(c.name, c.op)
		require.EqualValues(t, 1, tr.Connections, "%s: one connection", c.name)
		require.LessOrEqual(t, tr.RoundTrips, c.max, "%s: round trips", c.name)
	}
}

// refusingServer listens on loopback and answers every connection's
// startup message as a server that refuses the password does (FATAL
// 28P01), then closes it. It returns a URL that reaches it.
func refusingServer(t *testing.T) string {
	t.Helper()
	addr := pgtest.Listen(t, func(c net.Conn) {
		pgtest.Refuse(c, "28P01", `password authentication failed for user "alice"`)
	})
	return "postgres://alice@" + addr + "/awr?sslmode=disable&connect_timeout=5"
}

// TestShared_WrongPasswordBlamesTheURL (issue #40, items 4 and 7): a
// server that refuses the password is Storage naming the user and the
// SQLSTATE, and says where the URL came from: AWR_STORE when it is set
// (never the manifest), the manifest's [store] url otherwise; nothing is
// written to the cache.
func TestShared_WrongPasswordBlamesTheURL(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	ctx := context.Background()
	dir := teamProject(t, dbURL, "# TODO\n\n- [ ] W-1: One\n")
	cache := filepath.Join(dir, ".awr", "awr.db")
	before := mustReadFile(t, cache)
	refusing := refusingServer(t)

	status := func() *fault.Error {
		t.Helper()
		p := opened(t, dir, project.Options{OneCommand: true})
		_, err := p.Status(ctx, project.StatusRequest{})
		fe := fault.As(err)
		require.NotNil(t, fe, "a coded error, got %v", err)
		require.Equal(t, fault.Storage, fe.Code, "%v", err)
		require.Equal(t, "28P01", fe.Details["sqlstate"])
		require.Contains(t, fe.Message, "refused the connection")
		require.Contains(t, fe.Details["check"], "the user alice and its password")
		return fe
	}
	t.Setenv(project.EnvStore, refusing)
	fe := status()
	require.Equal(t, project.EnvStore, fe.Details["from"])
	require.Contains(t, fe.Message, "the URL came from AWR_STORE")
	require.NotContains(t, fe.Message, "project.toml")
	require.NotContains(t, fe.Message, "manifest")

	// The same URL in the manifest is blamed on the manifest.
	t.Setenv(project.EnvStore, "")
	manifest := filepath.Join(dir, ".awr", "project.toml")
	m := mustReadFile(t, manifest)
	require.Contains(t, string(m), dbURL)
	require.NoError(t, os.WriteFile(manifest, []byte(strings.Replace(string(m), dbURL, refusing, 1)), 0o644))
	fe = status()
	require.Equal(t, "the manifest's [store] url", fe.Details["from"])
	require.Contains(t, fe.Message, "the URL came from the manifest's [store] url")

	after := mustReadFile(t, cache)
	require.Equal(t, before, after, "nothing was written to the cache")
}

// teamProject initializes a project on the shared store at dbURL, its
// register a TODO.md of todo, and returns its directory.
func teamProject(t *testing.T, dbURL, todo string) string {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "team")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "TODO.md"), []byte(todo), 0o644))
	p, err := project.Open(ctx, dir, project.Options{})
	require.NoError(t, err)
	_, err = p.Init(ctx, project.InitRequest{Accept: true, Name: "team", Store: dbURL})
	require.NoError(t, err)
	require.NoError(t, p.Close())
	return dir
}

// TestInit_RefusedStoreBlamesItsFlag: an init whose store refuses the
// connection says where the URL came from, the --store flag or
// AWR_STORE, never an empty name. It needs no PostgreSQL: the refusing
// server is a loopback listener.
func TestInit_RefusedStoreBlamesItsFlag(t *testing.T) {
	ctx := context.Background()
	refusing := refusingServer(t)
	for _, c := range []struct {
		name, flag, env, from string
	}{
		{"flag", refusing, "", "--store"},
		{"env", "", refusing, project.EnvStore},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(project.EnvStore, c.env)
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "TODO.md"), []byte("# TODO\n\n- [ ] W-1: One\n"), 0o644))
			p := opened(t, dir, project.Options{})
			_, err := p.Init(ctx, project.InitRequest{Store: c.flag, Accept: true})
			fe := fault.As(err)
			require.NotNil(t, fe, "a coded error, got %v", err)
			require.Equal(t, fault.Storage, fe.Code, "%v", err)
			require.Equal(t, c.from, fe.Details["from"])
			require.Contains(t, fe.Message, "(the URL came from "+c.from+")")
			_, err = os.Stat(filepath.Join(dir, ".awr", "awr.db"))
			require.ErrorIs(t, err, os.ErrNotExist, "no log was written")
		})
	}
}
