package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/events/pgstore/pgtest"
	"github.com/awr-dev/awr/fixtures"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// cliError is the JSON error a command prints on stderr.
type cliError struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
	Hint    string         `json:"hint"`
}

// runFail runs cmd, which must fail with exit 1, and decodes its error.
func runFail(t *testing.T, cmd *exec.Cmd) cliError {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "%s: want a failure, got %v: %s", strings.Join(cmd.Args, " "), err, stdout.String())
	require.Equal(t, 1, ee.ExitCode(), "%s: %s", strings.Join(cmd.Args, " "), stderr.String())
	var fe cliError
	require.NoError(t, json.Unmarshal(stderr.Bytes(), &fe), "%s", stderr.String())
	return fe
}

// sharedCount is the number of events of project key in the database at
// dbURL, read straight from the table.
func sharedCount(t *testing.T, dbURL, key string) int64 {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var n int64
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM awr_events WHERE project = $1", key).Scan(&n))
	return n
}

// TestShared_MigrateFences (issue #40, item 1): two checkouts share a log
// in PostgreSQL; one moves it back to its own file (awr migrate --to
// sqlite). The shared log is then fenced: the other checkout's claim,
// session start, checkpoint and reindex all fail with InvalidTransition
// naming where the log went and the command that points the checkout at a
// log it may write, and lose nothing (its log verifies, the shared log's
// count and head are unchanged; the database itself refuses a raw
// insert); the migrated checkout writes on alone; following the hint
// makes the other checkout's cache its own log.
func TestShared_MigrateFences(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	t.Parallel()
	bin := buildAWR(t)
	dirA, awrA := initialized(t, bin, "--name", "fenced", "--store", dbURL)
	manifest := manifestOf(t, dirA)
	dirB, awrB := machine(t, bin, manifest)
	var started struct {
		Session struct{ ID string } `json:"session"`
	}
	runJSON(t, awrB("session", "start", "--work", "CART-1", "--agent", "bob", "--claim", "--json"), &started)
	sb := started.Session.ID
	runJSON(t, awrB("claim", "release", "--session", sb, "--json"), &struct{}{})
	var before sharedStatus
	runJSON(t, awrB("status", "--json"), &before)

	// awr doctor on a team checkout (item 6): A has not read since init,
	// so its cache is behind by B's writes; the server answers, with its
	// version, and its clock is this machine's.
	type doctored struct {
		OK       bool `json:"ok"`
		Findings []struct{ Code, Repair string }
		Store    *struct {
			Shared         string `json:"shared"`
			Reachable      bool   `json:"reachable"`
			ServerVersion  string `json:"server_version"`
			SharedRevision int64  `json:"shared_revision"`
			CacheLag       int64  `json:"cache_lag"`
			MovedTo        string `json:"moved_to"`
			ClockOffsetMs  int64  `json:"clock_offset_ms"`
		} `json:"store"`
	}
	var doc doctored
	runJSON(t, awrA("doctor", "--json"), &doc)
	require.NotNil(t, doc.Store)
	require.True(t, doc.Store.Reachable)
	require.NotEmpty(t, doc.Store.ServerVersion)
	require.Equal(t, before.ProjectRevision, doc.Store.SharedRevision)
	require.GreaterOrEqual(t, doc.Store.CacheLag, int64(2), "B's session start and release")
	require.Less(t, max(doc.Store.ClockOffsetMs, -doc.Store.ClockOffsetMs), int64(5000))
	require.Empty(t, doc.Store.MovedTo)

	var down struct {
		Status          string `json:"status"`
		ProjectRevision int64  `json:"project_revision"`
		HeadHash        string `json:"head_hash"`
	}
	runJSON(t, awrA("migrate", "--to", "sqlite", "--json"), &down)
	require.Equal(t, "migrated", down.Status)
	require.Equal(t, before.ProjectRevision, down.ProjectRevision)

	// Every write of the other checkout is refused, naming the new place.
	require.NoError(t, os.WriteFile(filepath.Join(dirB, "ledger", "work-ledger.yaml"),
		append(mustRead(t, filepath.Join(dirB, "ledger", "work-ledger.yaml")), []byte("\n# edited on b\n")...), 0o644))
	writes := [][]string{
		{"claim", "acquire", "--session", sb, "--json"},
		{"session", "start", "--work", "CART-1", "--agent", "carol", "--claim", "--json"},
		{"session", "checkpoint", "--session", sb, "--agent", "bob", "--digest", "after the move", "--next-action", "run the tests", "--json"},
		{"source", "reindex", "--json"},
		{"source", "reindex", "--force", "--json"},
	}
	for _, args := range writes {
		fe := runFail(t, awrB(args...))
		require.Equal(t, "InvalidTransition", fe.Code, "awr %s: %+v", strings.Join(args, " "), fe)
		require.Contains(t, fe.Message, filepath.Join(dirA, ".awr", "awr.db"), "awr %s names where the log went", strings.Join(args, " "))
		require.Contains(t, fe.Message, "nothing was written")
		require.Equal(t, "awr migrate --to sqlite", fe.Hint)
		require.Contains(t, fe.Details["moved_to"], dirA)
		require.EqualValues(t, before.ProjectRevision, fe.Details["moved_at_revision"])
	}
	// B's doctor says where the log went, as an error with its repair.
	cmd := awrB("doctor", "--json")
	var out bytes.Buffer
	cmd.Stdout = &out
	_ = cmd.Run() // exit 1: ok is false
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc), "%s", out.String())
	require.False(t, doc.OK)
	require.Contains(t, doc.Store.MovedTo, dirA)
	require.Equal(t, "store_moved", doc.Findings[0].Code)
	require.Equal(t, "awr migrate --to sqlite", doc.Findings[0].Repair)

	// Nothing was lost or added: B's log verifies at the same head, and
	// the shared log holds what it held.
	var after sharedStatus
	runJSON(t, awrB("status", "--json"), &after)
	require.Equal(t, before.ProjectRevision, after.ProjectRevision)
	require.Equal(t, before.HeadHash, after.HeadHash)
	var verify struct {
		OK bool `json:"ok"`
	}
	runJSON(t, awrB("verify", "--json"), &verify)
	require.True(t, verify.OK)
	require.Equal(t, before.ProjectRevision, sharedCount(t, dbURL, "fenced"))
	// The database refuses an append whoever makes it.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, `INSERT INTO awr_events (project, seq, id, kind, stream, stream_version, occurred_at, actor, payload, prev_hash, hash)
		SELECT project, seq + 1, id || 'x', kind, stream, stream_version + 1000, occurred_at, actor, payload, hash, hash
		FROM awr_events WHERE project = 'fenced' ORDER BY seq DESC LIMIT 1`)
	conn.Close(ctx)
	require.ErrorContains(t, err, "moved to")
	require.Equal(t, before.ProjectRevision, sharedCount(t, dbURL, "fenced"))

	// The migrated checkout writes on alone: the claim the other checkout
	// was refused is its own to win.
	runJSON(t, awrA("session", "start", "--work", "CART-1", "--agent", "alice", "--claim", "--json"), &started)
	runJSON(t, awrA("verify", "--json"), &verify)
	require.True(t, verify.OK)

	// Following the hint, the other checkout's cache becomes its own log
	// (from the log as it was at the move), and it writes again.
	runJSON(t, awrB("migrate", "--to", "sqlite", "--json"), &down)
	require.Equal(t, before.HeadHash, down.HeadHash)
	runJSON(t, awrB("source", "reindex", "--json"), &struct{}{})
	runJSON(t, awrB("claim", "acquire", "--session", sb, "--json"), &struct{}{})
	require.Equal(t, before.ProjectRevision, sharedCount(t, dbURL, "fenced"))

	// A fenced key takes no log again.
	fe := runFail(t, awrA("migrate", "--to", dbURL, "--key", "fenced", "--json"))
	require.Equal(t, "SourceConflict", fe.Code, "%+v", fe)
	require.Contains(t, fe.Message, "fenced")
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// TestShared_BadStores (issue #40, item 7): a password in AWR_STORE is
// refused as AWR_STORE's, not blamed on the manifest; AWR_STORE naming a
// database where the key holds another project's log is refused on
// joining, naming both projects, before anything is cached.
func TestShared_BadStores(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	otherURL := pgtest.NewDatabase(t)
	t.Parallel()
	bin := buildAWR(t)
	dir, awr := initialized(t, bin, "--name", "mine", "--store", dbURL)
	other, err := fixtures.CopyProject("checkout", t.TempDir())
	require.NoError(t, err)
	runJSON(t, awrIn(bin, other)("init", "--name", "mine", "--store", otherURL, "--accept", "--json"), &struct{}{})

	cmd := awr("status", "--json")
	cmd.Env = append(cmd.Env, "AWR_STORE=postgres://alice:hunter2-wrong@127.0.0.1:1/awr")
	fe := runFail(t, cmd)
	require.Equal(t, "InvalidInput", fe.Code, "%+v", fe)
	require.Contains(t, fe.Message, "AWR_STORE")
	require.NotContains(t, fe.Message, "project.toml")
	require.NotContains(t, fe.Message, "hunter2")

	cache := filepath.Join(dir, ".awr", "awr.db")
	require.NoError(t, os.Remove(cache))
	cmd = awr("status", "--json")
	cmd.Env = append(cmd.Env, "AWR_STORE="+otherURL)
	fe = runFail(t, cmd)
	require.Equal(t, "Storage", fe.Code, "%+v", fe)
	require.Contains(t, fe.Message, "another project's database")
	require.Equal(t, "AWR_STORE", fe.Details["from"])
	_, err = os.Stat(cache)
	require.True(t, errors.Is(err, os.ErrNotExist), "nothing was cached")
	var st sharedStatus
	runJSON(t, awr("status", "--json"), &st)
	require.Equal(t, "postgres", st.Store.Kind)
}

// TestShared_LeasesByServerClock (issue #40, item 3's clock fault): a
// machine whose clock runs ten minutes ahead does not take a claim whose
// five-minute lease is live by the server's clock (it would, judging by
// its own), and the lease it takes is timed by the server's clock.
func TestShared_LeasesByServerClock(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	t.Parallel()
	bin := buildAWR(t)
	dir, awrA := initialized(t, bin, "--name", "clocks", "--store", dbURL)
	manifest := manifestOf(t, dir)
	type claimed struct {
		Session struct{ ID string } `json:"session"`
		Claim   *struct {
			ExpiresAt    int64 `json:"expires_at"`
			FencingToken int64 `json:"fencing_token"`
		} `json:"claim"`
	}
	var a claimed
	runJSON(t, awrA("session", "start", "--work", "CART-1", "--agent", "alice", "--claim", "--ttl-ms", "300000", "--json"), &a)
	require.NotNil(t, a.Claim)

	_, awrB := machine(t, bin, manifest)
	ahead := time.Now().Add(10 * time.Minute)
	skewed := func(args ...string) *exec.Cmd {
		cmd := awrB(args...)
		cmd.Env = append(cmd.Env, fmt.Sprintf("AWR_TEST_NOW=%d", ahead.UnixMilli()))
		return cmd
	}
	fe := runFail(t, skewed("session", "start", "--work", "CART-1", "--agent", "bob", "--claim", "--json"))
	require.Equal(t, "ClaimConflict", fe.Code, "%+v", fe)
	runJSON(t, awrA("claim", "release", "--session", a.Session.ID, "--json"), &struct{}{})
	var b claimed
	runJSON(t, skewed("session", "start", "--work", "CART-1", "--agent", "bob", "--claim", "--ttl-ms", "300000", "--json"), &b)
	require.NotNil(t, b.Claim)
	require.Less(t, b.Claim.ExpiresAt, ahead.UnixMilli(), "the lease starts at the server's time, not the skewed machine's")
}
