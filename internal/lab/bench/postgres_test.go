package bench

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/awr-dev/awr/events/pgstore"
	"github.com/awr-dev/awr/events/pgstore/pgtest"
	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
)

// TestComparePostgres (issue #44 item 6): the comparison of the stores
// builds a workload and its twin in PostgreSQL under a key of its own,
// times every command on every path of both (each write landing in its
// own twin's log) beside the floor's round trip timed between the calls,
// and counts what each command costs the network: a CLI read is a
// connection and two round trips, a warm server's read one round trip, a
// CLI write four, a warm server's write one. No time is asserted. Slow:
// two awr-mcp per twin and 21 awr processes, on 10 items without a
// history.
func TestComparePostgres(t *testing.T) {
	testkit.PlainOnly(t, "its subject runs in awr and awr-mcp processes")
	dbURL := pgtest.NewDatabase(t)
	t.Parallel()
	ctx := context.Background()
	bin := testkit.Programs(t, testkit.AWR, testkit.AWRMCP)
	c := &pgRun{ctx: ctx, opts: PeerOptions{Exe: filepath.Join(bin, "awr"), MCPExe: filepath.Join(bin, "awr-mcp"), Store: dbURL, Rounds: 1}}
	require.NoError(t, c.hold())
	defer c.held.Close(ctx)
	dir := t.TempDir()
	size, err := c.workload(dir, 10, "bench-twin")
	require.NoError(t, err)
	require.Equal(t, 10, size.Items)
	require.Equal(t, "bench-twin", size.Key)

	ops := []string{"status", "ready", "work show", "search", "context compile", "session checkpoint", "claim (session start --claim)"}
	reads := 5
	paths := []string{PathCLI, PathDirect, PathStdio, PathHTTP}
	require.Len(t, size.Ops, len(ops)*len(paths))
	for i, op := range size.Ops {
		require.Equal(t, ops[i/len(paths)], op.Op)
		require.Equal(t, paths[i%len(paths)], op.Path)
		require.Equal(t, 1, op.File.Count, "%s %s", op.Op, op.Path)
		require.Equal(t, 1, op.Postgres.Count)
		require.Positive(t, op.File.Median)
		require.Positive(t, op.Postgres.Median)
		require.InDelta(t, op.Postgres.Median-op.File.Median, op.Added, 0.01)
		require.Positive(t, op.Trip, "%s %s: the floor timed in the op's rounds", op.Op, op.Path)
		require.InDelta(t, op.Added/op.Trip, op.RoundTrips, 0.01)
		if op.Path == PathStdio || op.Path == PathHTTP {
			require.Equal(t, op.Trip, op.Bound, "a warm server's bound is the round trip between the calls")
		}
		require.Contains(t, op.Commands[0], filepath.Join(dir, "file"))
		require.Contains(t, op.Commands[1], filepath.Join(dir, "postgres"))
		if op.Path == PathDirect {
			require.Nil(t, op.Met, "the CLI connecting anew has no bound")
		} else {
			require.NotNil(t, op.Met)
		}
	}

	// Each twin's checkpoints went to its own log: the file's is not in
	// PostgreSQL, the twin's is, under its key.
	for _, twin := range []string{"file", "postgres"} {
		p, err := project.Open(ctx, filepath.Join(dir, twin), project.Options{})
		require.NoError(t, err)
		st, err := p.EventLog(ctx)
		require.NoError(t, err)
		up, shared := st.Upstream().(*pgstore.Store)
		require.Equal(t, twin == "postgres", shared, twin)
		if shared {
			require.Equal(t, "bench-twin", up.Project())
		}
		list, err := p.SessionList(ctx, project.SessionListRequest{All: true})
		require.NoError(t, err)
		checkpoints := 0
		for _, s := range list.Sessions {
			if s.Agent == "bench-compare" && s.Work == size.Work {
				v, err := p.SessionShow(ctx, project.SessionShowRequest{Session: s.ID})
				require.NoError(t, err)
				checkpoints += len(v.Checkpoints)
			}
		}
		p.Close()
		// One checkpoint a path of its own store in the round (the file's
		// CLI runs once, paired with both of PostgreSQL's), and three in
		// process on the twin in PostgreSQL, for the round trips (as a
		// CLI; a warm server's first call and second).
		want := 3
		if twin == "postgres" {
			want = 4 + 3
		}
		require.Equal(t, want, checkpoints, twin)
	}

	// The floor was timed once a round of every op, between the calls:
	// its round trip in the reads' rounds, its write in the writes'.
	require.Equal(t, reads, size.BetweenCalls.Count)
	require.Positive(t, size.BetweenCalls.Median)
	require.Equal(t, len(ops)-reads, size.WriteBetweenCalls.Count)
	require.Positive(t, size.WriteBetweenCalls.Median)
	var written int64
	require.NoError(t, c.held.QueryRow(ctx, `SELECT count(*) FROM awr_bench_floor_rows WHERE run = $1`, c.run).Scan(&written))
	require.EqualValues(t, len(ops)-reads, written, "the floor's write appends a row each time")
	require.NoError(t, c.held.QueryRow(ctx, `SELECT seq FROM awr_bench_floor_heads WHERE run = $1`, c.run).Scan(&written))
	require.EqualValues(t, len(ops)-reads, written, "and advances its head")

	require.Len(t, size.RoundTrips, len(ops))
	for i, rt := range size.RoundTrips {
		require.Equal(t, ops[i], rt.Op)
		require.EqualValues(t, 1, rt.Connections, rt.Op)
		if i < reads {
			require.EqualValues(t, 2, rt.CLI, "%s: a CLI read is the connection's start and one query", rt.Op)
			require.EqualValues(t, 1, rt.Resident, "%s: a warm server's read is one round trip", rt.Op)
		} else {
			require.EqualValues(t, 4, rt.CLI, "%s: a CLI write is the start, the head, the lock and the commit", rt.Op)
			require.EqualValues(t, 1, rt.Resident, "%s: a warm server's write is sealed on its cache and sent with the lock and the commit", rt.Op)
		}
	}
}

// TestComparePostgres_BadInput: the peer postgres without --store, or
// with a URL that is not PostgreSQL's or holds a password, is
// InvalidInput before anything is built or connected.
func TestComparePostgres_BadInput(t *testing.T) {
	t.Parallel()
	for _, store := range []string{"", "mysql://u@h/db", "postgres://u:secret@127.0.0.1:1/db"} {
		dir := t.TempDir()
		_, err := ComparePeer(context.Background(), PeerOptions{Peer: "postgres", Store: store, Dir: dir})
		fe := fault.As(err)
		require.NotNil(t, fe, "%q: %v", store, err)
		require.Equal(t, fault.InvalidInput, fe.Code, "%q: %v", store, err)
		require.NotContains(t, err.Error(), "secret")
		require.NoDirExists(t, filepath.Join(dir, "150"), "nothing built")
	}
}
