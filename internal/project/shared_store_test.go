package project_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awr-dev/awr/events"
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

// TestShared_WarmWriteRoundTrips (issue #44, item 6): a warm server's
// write on a shared project costs one round trip, counted on its
// connections (pgstore.Traffic): sealed on the cache's head, its events
// go with the lock, a check that the head did not move and the commit
// (events.OneTrip). The door's reads before a write (a checkpoint's
// session directory, a claim's source check) take the cache as it is:
// the write checks them (TestShared_WarmWriteDecidesOnTheLockedLog).
// Before, each read caught the cache up first, and every write took 3;
// then the lock and the commit, 2.
func TestShared_WarmWriteRoundTrips(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	t.Parallel()
	ctx := context.Background()
	dir := teamProject(t, dbURL, "# TODO\n\n- [ ] W-1: One\n- [ ] W-2: Two\n- [ ] W-3: Three\n")
	p := opened(t, dir, project.Options{})
	st, err := p.EventLog(ctx)
	require.NoError(t, err)
	up, ok := st.Upstream().(*pgstore.Store)
	require.True(t, ok, "the project's log is shared")

	started, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: "rt"})
	require.NoError(t, err)
	session := started.Session.ID
	checkpoint := func(digest string) error {
		_, err := p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: session, Agent: "rt", Digest: digest, NextAction: "step again"})
		return err
	}
	require.NoError(t, checkpoint("warm-up"))
	other, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-3", Agent: "rt"})
	require.NoError(t, err)
	ttl := int64(3_600_000)
	for _, c := range []struct {
		name string
		op   func() error
	}{
		{"session checkpoint", func() error { return checkpoint("stepped") }},
		{"session start --claim", func() error {
			_, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-2", Agent: "rt", Claim: true})
			return err
		}},
		{"claim acquire", func() error {
			_, err := p.ClaimAcquire(ctx, project.ClaimAcquireRequest{SessionID: other.Session.ID, TTLms: &ttl})
			return err
		}},
	} {
		before := up.Traffic()
		require.NoError(t, c.op(), c.name)
		after := up.Traffic()
		trips := after.RoundTrips - before.RoundTrips
		t.Logf("%-24s %d round trips", c.name, trips)
		require.EqualValues(t, 0, after.Connections-before.Connections, "%s: no new connection", c.name)
		require.EqualValues(t, 1, trips, "%s: the lock, the check and the commit together", c.name)
	}
}

// TestShared_WarmReadRoundTrips (issue #44 item 6): through a warm
// server, every read an agent makes is one round trip to the shared log
// (its head), however many times the command reads the cache: a packet
// reads its sources' freshness, its repository and the packet (compiled,
// or read by a host's hook); recovery inspect the report, the freshness
// and the session's repository.
func TestShared_WarmReadRoundTrips(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	t.Parallel()
	ctx := context.Background()
	dir := teamProject(t, dbURL, "# TODO\n\n- [ ] W-1: One\n- [ ] W-2: Two\n")
	p := opened(t, dir, project.Options{})
	st, err := p.EventLog(ctx)
	require.NoError(t, err)
	up, ok := st.Upstream().(*pgstore.Store)
	require.True(t, ok, "the project's log is shared")
	started, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: "rt"})
	require.NoError(t, err)
	session := started.Session.ID
	_, err = p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: session, Agent: "rt", Digest: "d", NextAction: "step again"})
	require.NoError(t, err)
	for _, c := range []struct {
		name string
		op   func() error
	}{
		{"status", func() error { _, err := p.Status(ctx, project.StatusRequest{}); return err }},
		{"ready", func() error { _, err := p.Ready(ctx, project.ReadyRequest{}); return err }},
		{"work show", func() error { _, err := p.WorkShow(ctx, project.WorkShowRequest{Key: "W-1"}); return err }},
		{"work history", func() error { _, err := p.WorkHistory(ctx, project.WorkHistoryRequest{Key: "W-1"}); return err }},
		{"search", func() error { _, err := p.Search(ctx, project.SearchRequest{Query: "One"}); return err }},
		{"context compile", func() error {
			// The TODO names no goal: the packet is incomplete, and
			// compiled.
			_, err := p.ContextCompile(ctx, project.ContextCompileRequest{Work: "W-1"})
			if fe := fault.As(err); fe != nil && fe.Code == fault.ContextIncomplete {
				return nil
			}
			return err
		}},
		{"context packet", func() error { _, err := p.ContextPacket(ctx, project.ContextPacketRequest{Work: "W-1"}); return err }},
		{"session show", func() error { _, err := p.SessionShow(ctx, project.SessionShowRequest{Session: session}); return err }},
		{"session list", func() error { _, err := p.SessionList(ctx, project.SessionListRequest{}); return err }},
		{"recovery inspect", func() error {
			_, err := p.RecoveryInspect(ctx, project.RecoveryInspectRequest{Session: session})
			return err
		}},
		{"log", func() error { _, err := p.Log(ctx, project.LogRequest{}); return err }},
		{"source list", func() error { _, err := p.SourceList(ctx, project.SourceListRequest{}); return err }},
		{"diff", func() error { _, err := p.Diff(ctx, project.DiffRequest{From: 1}); return err }},
	} {
		require.NoError(t, c.op(), "%s: the warm-up call", c.name)
		before := up.Traffic()
		require.NoError(t, c.op(), c.name)
		after := up.Traffic()
		require.EqualValues(t, 0, after.Connections-before.Connections, "%s: no new connection", c.name)
		require.EqualValues(t, 1, after.RoundTrips-before.RoundTrips, "%s: the head, once", c.name)
	}
}

// TestShared_WarmWriteDecidesOnTheLockedLog: a warm server's write whose
// door read the cache as it was (its sources' freshness) is decided on
// the shared log as the lock finds it. Another machine reindexes a
// source its own checkout changed; this checkout's file is now stale
// against the shared log, though it matches what this server's cache
// held. The claim is refused (SourceStale), as it would have been with a
// cache caught up before the read; a checkpoint after the other
// machine's checkpoint of the same session counts the files changed
// since that one, which this cache did not hold when the door read.
func TestShared_WarmWriteDecidesOnTheLockedLog(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	t.Parallel()
	ctx := context.Background()
	todo := "# TODO\n\n- [ ] W-1: One\n- [ ] W-2: Two\n- [ ] W-3: Three\n"
	dir := teamProject(t, dbURL, todo)
	// The other machine: a checkout of its own, joined through the
	// manifest alone.
	elsewhere := filepath.Join(t.TempDir(), "elsewhere")
	require.NoError(t, os.MkdirAll(filepath.Join(elsewhere, ".awr"), 0o755))
	manifest, err := os.ReadFile(filepath.Join(dir, ".awr", "project.toml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(elsewhere, ".awr", "project.toml"), manifest, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(elsewhere, "TODO.md"), []byte(todo), 0o644))
	// Each checkout a repository holding the same commit (its dates
	// given), as two clones do, so a checkpoint on one records the files
	// changed since a checkpoint on the other.
	for _, d := range []string{dir, elsewhere} {
		git := func(args ...string) {
			t.Helper()
			cmd := exec.Command("git", args...)
			cmd.Dir = d
			cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=colleague", "GIT_AUTHOR_EMAIL=c@example.invalid",
				"GIT_COMMITTER_NAME=colleague", "GIT_COMMITTER_EMAIL=c@example.invalid", "GIT_CONFIG_GLOBAL=/dev/null",
				"GIT_AUTHOR_DATE=2026-12-07T09:00:00Z", "GIT_COMMITTER_DATE=2026-12-07T09:00:00Z")
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "git %v: %s", args, out)
		}
		git("init", "-q", "-b", "main")
		git("add", "TODO.md")
		git("commit", "-q", "-m", "the register")
	}

	p := opened(t, dir, project.Options{})
	started, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: "here"})
	require.NoError(t, err)
	session := started.Session.ID
	_, err = p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: session, Agent: "here", Digest: "warm", NextAction: "go on"})
	require.NoError(t, err)
	stale, err := p.StaleSources(ctx)
	require.NoError(t, err)
	require.Empty(t, stale, "this checkout's sources are as indexed")

	q := opened(t, elsewhere, project.Options{})
	require.NoError(t, os.WriteFile(filepath.Join(elsewhere, "TODO.md"), []byte(todo+"- [ ] W-4: Four\n"), 0o644))
	_, err = q.SourceReindex(ctx, project.SourceReindexRequest{})
	require.NoError(t, err)
	_, err = p.SessionStart(ctx, project.SessionStartRequest{Work: "W-2", Agent: "here", Claim: true})
	require.Error(t, err, "a claim on sources stale against the shared log")
	require.Equal(t, fault.SourceStale, fault.CodeOf(err), "%v", err)
	require.Contains(t, err.Error(), "TODO.md")

	cp, err := q.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: session, Agent: "elsewhere", Digest: "from elsewhere", NextAction: "go on"})
	require.NoError(t, err)

	res, err := p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: session, Agent: "here", Digest: "after elsewhere", NextAction: "go on"})
	require.NoError(t, err)
	require.NotNil(t, res.Checkpoint.Repo, "the repository recorded")
	require.Empty(t, res.Checkpoint.Repo.Unverifiable)
	require.Equal(t, cp.Checkpoint.ID, res.Checkpoint.Repo.FilesSince,
		"the files changed are counted since the latest checkpoint in the shared log (the other machine's), not the latest this cache held")
}

// TestShared_WarmClaimRacesAReindex: a warm server's claim races another
// machine's reindex of a source that machine changed, round after
// round. Whatever the order, a claim granted is one the locked log
// allowed: its revision comes before the reindex's, since after it this
// checkout's file is stale against the shared log; a claim after it is
// refused (SourceStale), never granted on what this machine's cache held
// when the door read it.
func TestShared_WarmClaimRacesAReindex(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	t.Parallel()
	ctx := context.Background()
	// Each round's file is longer than the last: a claim checks a file
	// against the size and time the log recorded, and the two
	// checkouts' files, written a millisecond apart, can share a time.
	content := func(i int) string {
		return fmt.Sprintf("# TODO\n\n- [ ] W-1: One\n- [ ] W-2: Two%s\n", strings.Repeat(", again", i))
	}
	dir := teamProject(t, dbURL, content(0))
	elsewhere := filepath.Join(t.TempDir(), "elsewhere")
	require.NoError(t, os.MkdirAll(filepath.Join(elsewhere, ".awr"), 0o755))
	manifest, err := os.ReadFile(filepath.Join(dir, ".awr", "project.toml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(elsewhere, ".awr", "project.toml"), manifest, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(elsewhere, "TODO.md"), []byte(content(0)), 0o644))
	p := opened(t, dir, project.Options{})
	q := opened(t, elsewhere, project.Options{})

	granted, refused := 0, 0
	for i := 1; i <= 20; i++ {
		// Both checkouts hold round i-1's file, as the log indexed it;
		// the server's cache is warm.
		_, err := p.Status(ctx, project.StatusRequest{})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(elsewhere, "TODO.md"), []byte(content(i)), 0o644))
		var reindexed int64
		var rerr error
		done := make(chan struct{})
		go func() {
			defer close(done)
			res, err := q.SourceReindex(ctx, project.SourceReindexRequest{})
			if rerr = err; err == nil {
				reindexed = res.ProjectRevision
			}
		}()
		started, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: "here", Claim: true})
		<-done
		require.NoError(t, rerr, "round %d: the reindex", i)
		require.Positive(t, reindexed, "round %d: the reindex appended", i)
		if err != nil {
			require.Equal(t, fault.SourceStale, fault.CodeOf(err), "round %d: %v", i, err)
			refused++
		} else {
			require.Less(t, started.ProjectRevision, reindexed, "round %d: a claim granted after the reindex made this checkout's file stale", i)
			granted++
			_, err := p.SessionEnd(ctx, project.SessionEndRequest{SessionID: started.Session.ID, Outcome: events.OutcomeIncomplete, Agent: "here"})
			require.NoError(t, err)
		}
		// This checkout takes the new file: fresh again.
		require.NoError(t, os.WriteFile(filepath.Join(dir, "TODO.md"), []byte(content(i)), 0o644))
	}
	t.Logf("%d claims granted before the reindex, %d refused after it", granted, refused)
}
