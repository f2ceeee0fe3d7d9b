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
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awr-dev/awr/events/pgstore/pgtest"
	"github.com/awr-dev/awr/fixtures"
	"github.com/awr-dev/awr/internal/serve/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// machine is a checkout of the shared fixture project as another machine
// holds it: the team's files and .awr/project.toml, nothing else.
func machine(t *testing.T, bin, manifest string) (string, func(args ...string) *exec.Cmd) {
	t.Helper()
	dir, err := fixtures.CopyProject("checkout", t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".awr"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".awr", "project.toml"), []byte(manifest), 0o644))
	return dir, awrIn(bin, dir)
}

// runJSON runs cmd, which must succeed, and decodes its stdout into v.
func runJSON(t *testing.T, cmd *exec.Cmd, v any) {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s: %s", strings.Join(cmd.Args, " "), stderr.String())
	require.NoError(t, json.Unmarshal(out, v), "%s", out)
}

type sharedStatus struct {
	ProjectRevision int64  `json:"project_revision"`
	HeadHash        string `json:"head_hash"`
	ProjectID       string `json:"project_id"`
	Store           *struct {
		Kind, Shared, Path string
	} `json:"store"`
}

// TestShared_Machines: a project whose log is in PostgreSQL, seen from
// several machines (each a checkout with its own cache, holding only the
// manifest): the second checkout's first command joins with no set-up
// command and shows the same head; 16 machines racing for one claim
// (each joining as it races) give exactly one winner and 15 clean
// ClaimConflict; every machine then shows the same head, the chain
// verifies, and an export imports into an embedded SQLite project with
// the same head hash.
func TestShared_Machines(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	t.Parallel()
	bin := buildAWR(t)

	first, awrA := checkout(t, bin)
	var initRes struct {
		Status    string `json:"status"`
		ProjectID string `json:"project_id"`
		Store     struct{ URL, Project string }
	}
	runJSON(t, awrA("init", "--store", dbURL, "--accept", "--json"), &initRes)
	require.Equal(t, "initialized", initRes.Status)
	require.Equal(t, dbURL, initRes.Store.URL)
	manifest := manifestOf(t, first)
	require.Contains(t, manifest, "[store]")
	require.Contains(t, manifest, fmt.Sprintf("url = %q", dbURL))

	var a sharedStatus
	runJSON(t, awrA("status", "--json"), &a)
	require.Equal(t, initRes.ProjectID, a.ProjectID)
	require.NotNil(t, a.Store)
	require.Equal(t, "postgres", a.Store.Kind)
	require.NotContains(t, a.Store.Shared, "password")

	// Another machine: the manifest only. Its first command joins.
	_, awrB := machine(t, bin, manifest)
	var b sharedStatus
	runJSON(t, awrB("status", "--json"), &b)
	require.Equal(t, a.ProjectRevision, b.ProjectRevision)
	require.Equal(t, a.HeadHash, b.HeadHash)
	require.Equal(t, a.ProjectID, b.ProjectID)

	// Machine B follows the log while the others write.
	sinceRace := b.ProjectRevision
	follower, followLines, followWG := startFollower(t, awrB, "--since", fmt.Sprint(sinceRace))

	const racers = 16
	cmds := make([]*exec.Cmd, racers)
	for i := range cmds {
		_, awrI := machine(t, bin, manifest)
		cmds[i] = awrI("session", "start", "--work", "CART-1", "--agent", fmt.Sprintf("m%d", i), "--claim", "--json")
	}
	results := race(t, cmds)
	winners, conflicts := 0, 0
	for i, r := range results {
		switch r.code {
		case 0:
			winners++
		case 1:
			var fe struct{ Code string }
			require.NoError(t, json.Unmarshal(r.stderr.Bytes(), &fe), "machine %d: %s", i, r.stderr.String())
			require.Equal(t, "ClaimConflict", fe.Code, "machine %d: %s", i, r.stderr.String())
			conflicts++
		default:
			t.Fatalf("machine %d exited %d: %s", i, r.code, r.stderr.String())
		}
	}
	require.Equal(t, 1, winners)
	require.Equal(t, racers-1, conflicts)

	// Machine A has not run since init: it catches up, as B does.
	runJSON(t, awrA("status", "--json"), &a)
	runJSON(t, awrB("status", "--json"), &b)
	require.Equal(t, a.ProjectRevision, b.ProjectRevision)
	require.Equal(t, a.HeadHash, b.HeadHash)
	// The follower on B printed every event the other machines wrote,
	// once each, in order.
	want := logSeqs(t, awrB, "--since", fmt.Sprint(sinceRace))
	require.NotEmpty(t, want)
	got := collect(t, followLines, want[len(want)-1])
	require.NoError(t, follower.Process.Signal(syscall.SIGINT))
	followWG.Wait()
	require.NoError(t, follower.Wait())
	for f := range followLines {
		got = append(got, f.Seq)
	}
	require.Equal(t, want, got)
	var claims struct {
		Events []json.RawMessage `json:"events"`
	}
	runJSON(t, awrB("log", "--kind", "claim_acquired", "--json"), &claims)
	require.Len(t, claims.Events, 1)
	var verify struct {
		OK bool `json:"ok"`
	}
	runJSON(t, awrA("verify", "--json"), &verify)
	require.True(t, verify.OK)

	// The shared log exported imports into an embedded SQLite project
	// with the same head hash.
	export := filepath.Join(t.TempDir(), "shared.jsonl")
	out, err := awrB("export", "--output", export).CombinedOutput()
	require.NoError(t, err, "%s", out)
	local := t.TempDir()
	var imported struct {
		HeadHash string `json:"head_hash"`
	}
	runJSON(t, awrIn(bin, local)("import", export, "--project", local, "--json"), &imported)
	require.Equal(t, a.HeadHash, imported.HeadHash)
}

// TestShared_Refusals: a password in --store, in the manifest or in
// AWR_STORE is refused as a secret and never repeated; a shared store
// that cannot be reached is Storage with a hint, within the connect
// timeout; an init on a key the store already holds is SourceConflict.
func TestShared_Refusals(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	t.Parallel()
	bin := buildAWR(t)
	dir, awr := checkout(t, bin)

	type fault struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Hint    string         `json:"hint"`
		Details map[string]any `json:"details"`
	}
	refused := func(cmd *exec.Cmd, code string) fault {
		t.Helper()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		require.True(t, errors.As(err, &ee), "%s: want a refusal, got %v", strings.Join(cmd.Args, " "), err)
		require.Equal(t, 1, ee.ExitCode(), "%s", stderr.String())
		var f fault
		require.NoError(t, json.Unmarshal(stderr.Bytes(), &f), "%s", stderr.String())
		require.Equal(t, code, f.Code, "%s", stderr.String())
		require.NotContains(t, stderr.String(), "s3cret")
		return f
	}
	f := refused(awr("init", "--store", "postgres://alice:s3cret@db.example:5432/awr", "--accept", "--json"), "InvalidInput")
	require.Equal(t, "password", f.Details["secret"])
	require.Contains(t, f.Hint, "awr init --store")
	_, err := os.Stat(filepath.Join(dir, ".awr"))
	require.True(t, os.IsNotExist(err), "a refused init writes nothing")
	cmd := awr("init", "--accept", "--json")
	cmd.Env = append(cmd.Env, "AWR_STORE=postgres:///awr?password=s3cret")
	refused(cmd, "InvalidInput")

	// A manifest naming a password is refused on every command.
	bad, awrBad := machine(t, bin, "version = 1\nname = \"checkout\"\n\n[store]\nurl = \"postgres://alice:s3cret@db.example/awr\"\n")
	f = refused(awrBad("status", "--json"), "InvalidInput")
	require.Contains(t, f.Message, filepath.Join(bad, ".awr", "project.toml"))

	// A server that is not there: Storage, with pg_isready to check it
	// (details.check: not an awr command, so not the hint).
	_, awrDown := machine(t, bin, "version = 1\nname = \"checkout\"\n\n[store]\nurl = \"postgres://alice@127.0.0.1:1/awr?connect_timeout=2\"\n")
	f = refused(awrDown("status", "--json"), "Storage")
	require.Contains(t, f.Details["check"], "pg_isready")

	// A joined checkout of a key with no log yet is NotFound, naming init.
	_, awrEmpty := machine(t, bin, fmt.Sprintf("version = 1\nname = \"nobody\"\n\n[store]\nurl = %q\n", dbURL))
	f = refused(awrEmpty("status", "--json"), "NotFound")
	require.Contains(t, f.Hint, "awr init --store")

	// Two inits of one key: the second is refused, and the log keeps the
	// first's project.
	runJSON(t, awr("init", "--store", dbURL, "--name", "team", "--accept", "--json"), &struct{}{})
	manifestPath := filepath.Join(dir, ".awr", "project.toml")
	manifest, err := os.ReadFile(manifestPath)
	require.NoError(t, err)

	// The cache is never taken for a log of its own: not when the
	// manifest loses its [store] table, not when it does not read.
	cut := string(manifest[:strings.Index(string(manifest), "[store]")])
	require.NoError(t, os.WriteFile(manifestPath, []byte(cut), 0o644))
	f = refused(awr("status", "--json"), "InvalidInput")
	require.Contains(t, f.Message, "cache of the shared store")
	refused(awr("session", "start", "--work", "CART-1", "--agent", "x", "--claim", "--json"), "InvalidInput")
	require.NoError(t, os.WriteFile(manifestPath, []byte(cut+"[store\n"), 0o644))
	refused(awr("status", "--json"), "InvalidInput")
	require.NoError(t, os.WriteFile(manifestPath, manifest, 0o644))
	runJSON(t, awr("status", "--json"), &struct{}{})

	// A project's own log under a manifest that gained a [store] table
	// is refused, naming awr migrate, and left as it was.
	own, awrOwn := initialized(t, bin, "--name", "own")
	ownManifest := filepath.Join(own, ".awr", "project.toml")
	m, err := os.ReadFile(ownManifest)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(ownManifest, append(m, fmt.Sprintf("\n[store]\nurl = %q\n", dbURL)...), 0o644))
	f = refused(awrOwn("status", "--json"), "VerifyFailed")
	require.Contains(t, f.Message, "awr migrate --to")
	require.Equal(t, "awr migrate --help", f.Hint)
	require.NoError(t, os.WriteFile(ownManifest, m, 0o644))
	var st sharedStatus
	runJSON(t, awrOwn("status", "--json"), &st)
	require.EqualValues(t, 2, st.ProjectRevision)
	require.Nil(t, st.Store)

	other, err := fixtures.CopyProject("checkout", t.TempDir())
	require.NoError(t, err)
	f = refused(awrIn(bin, other)("init", "--store", dbURL, "--name", "team", "--accept", "--json"), "SourceConflict")
	require.Contains(t, f.Message, "--name OTHER_NAME")
	require.Equal(t, "awr init --help", f.Hint)
	_, err = os.Stat(filepath.Join(other, ".awr", "awr.db"))
	require.True(t, os.IsNotExist(err), "a refused init leaves no cache")
}

// TestShared_Migrate: a project's own SQLite log moves into PostgreSQL
// (verified equal: the same head hash, the same projection checksums),
// another machine then joins it, and the log moves back into the
// embedded file with every write the machines made.
func TestShared_Migrate(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	t.Parallel()
	bin := buildAWR(t)
	dir, awr := initialized(t, bin, "--name", "moving")
	var started struct {
		Session struct{ ID string } `json:"session"`
	}
	runJSON(t, awr("session", "start", "--work", "CART-1", "--agent", "alice", "--claim", "--json"), &started)
	// A write with a request id before the move: its retry after it, on
	// another machine, is answered with the first result.
	type answer struct {
		ProjectRevision int64 `json:"project_revision"`
		Replayed        bool  `json:"replayed"`
	}
	retryBefore := []string{"session", "checkpoint", "--session", started.Session.ID, "--agent", "alice", "--digest", "before the move",
		"--next-action", "run the tests", "--request-id", "ckpt-before-move", "--json"}
	var first answer
	runJSON(t, awr(retryBefore...), &first)
	require.False(t, first.Replayed)
	var before sharedStatus
	runJSON(t, awr("status", "--json"), &before)

	type migrated struct {
		Status          string `json:"status"`
		From, To        string
		ProjectRevision int64  `json:"project_revision"`
		HeadHash        string `json:"head_hash"`
		Copied          int64  `json:"copied"`
		Requests        int64  `json:"requests"`
		Projections     []struct{ Name, Checksum string }
		Store           struct{ Kind, Shared, Path string }
	}
	var up migrated
	runJSON(t, awr("migrate", "--to", dbURL, "--json"), &up)
	require.Equal(t, "migrated", up.Status)
	require.Equal(t, before.ProjectRevision, up.ProjectRevision)
	require.Equal(t, before.HeadHash, up.HeadHash)
	require.Equal(t, up.ProjectRevision, up.Copied)
	require.GreaterOrEqual(t, up.Requests, int64(1))
	require.NotEmpty(t, up.Projections)
	require.Equal(t, "postgres", up.Store.Kind)
	var again migrated
	runJSON(t, awr("migrate", "--to", dbURL, "--json"), &again)
	require.Equal(t, "unchanged", again.Status)

	manifest := manifestOf(t, dir)
	require.Contains(t, manifest, "[store]")
	_, awrB := machine(t, bin, manifest)
	var b sharedStatus
	runJSON(t, awrB("status", "--json"), &b)
	require.Equal(t, before.HeadHash, b.HeadHash)
	var retried answer
	runJSON(t, awrB(retryBefore...), &retried)
	require.True(t, retried.Replayed, "a request made before the move is idempotent after it, on any machine")
	require.Equal(t, first.ProjectRevision, retried.ProjectRevision)
	// Machine B writes; A sees it.
	var ckpt struct {
		ProjectRevision int64 `json:"project_revision"`
	}
	retryB := []string{"session", "checkpoint", "--session", started.Session.ID, "--agent", "alice", "--digest", "from machine b",
		"--next-action", "run the tests", "--request-id", "ckpt-on-b", "--json"}
	runJSON(t, awrB(retryB...), &ckpt)
	var a sharedStatus
	runJSON(t, awr("status", "--json"), &a)
	require.Equal(t, ckpt.ProjectRevision, a.ProjectRevision)

	var down migrated
	runJSON(t, awr("migrate", "--to", "sqlite", "--json"), &down)
	require.Equal(t, "migrated", down.Status)
	require.Equal(t, "sqlite", down.Store.Kind)
	require.Equal(t, a.ProjectRevision, down.ProjectRevision)
	require.GreaterOrEqual(t, down.Requests, int64(2))
	require.NotEmpty(t, down.Projections)
	var own sharedStatus
	runJSON(t, awr("status", "--json"), &own)
	require.Nil(t, own.Store)
	require.Equal(t, down.HeadHash, own.HeadHash)
	var verify struct {
		OK bool `json:"ok"`
	}
	runJSON(t, awr("verify", "--json"), &verify)
	require.True(t, verify.OK)
	// B's write, retried here after the move back, is answered, not
	// refused.
	runJSON(t, awr(retryB...), &retried)
	require.True(t, retried.Replayed, "a request made on another machine is idempotent after the move back")
	require.Equal(t, ckpt.ProjectRevision, retried.ProjectRevision)
	// The checkout is a project of its own again: its writes stay here.
	runJSON(t, awr("session", "checkpoint", "--session", started.Session.ID, "--agent", "alice", "--digest", "back on sqlite", "--next-action", "run the tests", "--json"), &ckpt)
	runJSON(t, awrB("status", "--json"), &b)
	require.Equal(t, down.ProjectRevision, b.ProjectRevision, "the shared log is left as it was")

	// Its key now holds an older copy of the log: refused, and another
	// key takes it.
	var stderr bytes.Buffer
	cmd := awr("migrate", "--to", dbURL, "--json")
	cmd.Stderr = &stderr
	require.Error(t, cmd.Run())
	require.Contains(t, stderr.String(), `"code":"SourceConflict"`)
	runJSON(t, awr("migrate", "--to", dbURL, "--key", "moving-2", "--json"), &up)
	require.Equal(t, ckpt.ProjectRevision, up.Copied)
}

// TestShared_MCPWakeUp: an MCP server on machine B, subscribed to the
// status, hears resources/updated when machine A writes to the shared log
// (woken by NOTIFY, read by position), and the status it then reads shows
// A's write.
func TestShared_MCPWakeUp(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	t.Parallel()
	bin := buildAWR(t)
	first, awrA := initialized(t, bin, "--store", dbURL)
	manifest := manifestOf(t, first)
	dirB, awrB := machine(t, bin, manifest)
	runJSON(t, awrB("status", "--json"), &struct{}{})

	ctx := context.Background()
	updated := make(chan string, 16)
	srv, cs := mcpClient(t, dirB, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { updated <- req.Params.URI },
	})
	require.NoError(t, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: mcpserver.StatusURI}))
	// The client's Subscribe returns before the server has the
	// subscription in force (a subscriptions/listen stream under the
	// newest protocol): wait for it, as the acknowledgement would.
	require.Eventually(t, func() bool { return slices.Contains(srv.Subscriptions(), mcpserver.StatusURI) },
		time.Minute, 10*time.Millisecond)

	var started struct {
		ProjectRevision int64 `json:"project_revision"`
	}
	runJSON(t, awrA("session", "start", "--work", "CART-1", "--agent", "alice", "--claim", "--json"), &started)
	select {
	case uri := <-updated:
		require.Equal(t, mcpserver.StatusURI, uri)
	case <-time.After(time.Minute):
		t.Fatal("no resources/updated after another machine's write")
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcpserver.StatusURI})
	require.NoError(t, err)
	var status struct {
		ProjectRevision int64 `json:"project_revision"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Contents[0].Text), &status))
	require.Equal(t, started.ProjectRevision, status.ProjectRevision)
}
