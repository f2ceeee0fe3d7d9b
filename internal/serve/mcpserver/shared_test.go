package mcpserver_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/fixtures"
	"github.com/awr-dev/awr/internal/project"
	"github.com/awr-dev/awr/internal/serve/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// initSeeded accepts the intake plan of the project at dir with its own
// entropy, so that two projects of one test get two project ids, and
// returns the id.
func initSeeded(t testing.TB, dir string, seed int64) string {
	t.Helper()
	acceptIntake(t, dir, seed)
	pr, err := project.Open(context.Background(), dir, project.Options{Now: func() time.Time { return now }})
	require.NoError(t, err)
	defer pr.Close()
	st, err := pr.Status(context.Background(), project.StatusRequest{})
	require.NoError(t, err)
	require.NotEmpty(t, st.ProjectID)
	return st.ProjectID
}

// checkoutProject copies the checkout fixture and initializes it.
func checkoutProject(t testing.TB, seed int64) (dir, id string) {
	t.Helper()
	dir, err := fixtures.CopyProject("checkout", t.TempDir())
	require.NoError(t, err)
	return dir, initSeeded(t, dir, seed)
}

// newToken returns a fresh bearer token of 48 characters.
func newToken(t testing.TB) string {
	t.Helper()
	b := make([]byte, 24)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

// sharedService is a running shared service on a real loopback listener.
type sharedService struct {
	sh     *mcpserver.Shared
	url    string // http://127.0.0.1:PORT/mcp
	addr   string // 127.0.0.1:PORT
	tokens map[string]string
}

// startShared writes registry to a file, reads it with env as the
// environment, and serves it on 127.0.0.1:0 until the test ends.
func startShared(t testing.TB, registry string, env map[string]string) *sharedService {
	t.Helper()
	return startSharedWith(t, registry, env, mcpserver.SharedOptions{})
}

// startSharedWith is startShared with options (the registry, version and
// clock are the test's).
func startSharedWith(t testing.TB, registry string, env map[string]string, opts mcpserver.SharedOptions) *sharedService {
	t.Helper()
	path := filepath.Join(t.TempDir(), "registry.toml")
	require.NoError(t, os.WriteFile(path, []byte(registry), 0o600))
	reg, err := mcpserver.ReadRegistry(path, func(k string) string { return env[k] })
	require.NoError(t, err)
	opts.Registry, opts.Version, opts.Now = reg, "test", func() time.Time { return now }
	sh, err := mcpserver.NewShared(context.Background(), opts)
	require.NoError(t, err)
	ln, err := mcpserver.Listen("127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sh.Serve(ctx, ln, nil) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
		require.NoError(t, sh.Close())
	})
	addr := ln.Addr().String()
	return &sharedService{sh: sh, url: "http://" + addr + mcpserver.SharedPath, addr: addr, tokens: env}
}

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// connectHTTP connects the SDK's client to url over Streamable HTTP with
// token.
func connectHTTP(t testing.TB, url, token string) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(context.Background(), tr, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// twoProjects starts a service over two checkout projects, shop and
// docs, for alice (write on shop, read on docs), bob (write on shop) and
// carol (read on docs).
func twoProjects(t *testing.T) (*sharedService, map[string]string) {
	t.Helper()
	shop, shopID := checkoutProject(t, 1)
	docs, docsID := checkoutProject(t, 2)
	require.NotEqual(t, shopID, docsID)
	env := map[string]string{"TOKEN_ALICE": newToken(t), "TOKEN_BOB": newToken(t), "TOKEN_CAROL": newToken(t)}
	reg := fmt.Sprintf(`[projects.shop]
root = %q
id = %q

[projects.docs]
root = %q
id = %q

[clients.alice]
token_env = "TOKEN_ALICE"
grants = { shop = "write", docs = "read" }

[clients.bob]
token_env = "TOKEN_BOB"
grants = { shop = "write" }

[clients.carol]
token_env = "TOKEN_CAROL"
grants = { docs = "read" }
`, shop, shopID, docs, docsID)
	return startShared(t, reg, env), map[string]string{"shop": shopID, "docs": docsID}
}

func TestShared_SDKClient(t *testing.T) {
	t.Parallel()
	svc, ids := twoProjects(t)
	alice := connectHTTP(t, svc.url, svc.tokens["TOKEN_ALICE"])
	bob := connectHTTP(t, svc.url, svc.tokens["TOKEN_BOB"])
	carol := connectHTTP(t, svc.url, svc.tokens["TOKEN_CAROL"])
	ctx := context.Background()

	t.Run("ToolsTakeProject", func(t *testing.T) {
		res, err := alice.ListTools(ctx, nil)
		require.NoError(t, err)
		require.Greater(t, len(res.Tools), 40)
		for _, tl := range res.Tools {
			schema := tl.InputSchema.(map[string]any)
			props, _ := schema["properties"].(map[string]any)
			if tl.Name == "awr_projects_list" {
				require.NotContains(t, props, "project")
				continue
			}
			require.Contains(t, props, "project", tl.Name)
			require.Contains(t, schema["required"], "project", tl.Name)
			require.NotNil(t, tl.OutputSchema, tl.Name)
		}
	})

	t.Run("ProjectsListOnlyGranted", func(t *testing.T) {
		out, isErr := call(t, alice, "awr_projects_list", nil)
		require.False(t, isErr, "%v", out)
		require.Equal(t, []any{
			map[string]any{"name": "docs", "project_id": ids["docs"], "access": "read", "project_revision": out["projects"].([]any)[0].(map[string]any)["project_revision"]},
			map[string]any{"name": "shop", "project_id": ids["shop"], "access": "write", "project_revision": out["projects"].([]any)[1].(map[string]any)["project_revision"]},
		}, out["projects"])
		out, isErr = call(t, carol, "awr_projects_list", nil)
		require.False(t, isErr, "%v", out)
		require.Len(t, out["projects"], 1)
		require.Equal(t, "docs", out["projects"].([]any)[0].(map[string]any)["name"])
	})

	t.Run("ReadsAndWrites", func(t *testing.T) {
		st := ok(t, alice, "awr_status", map[string]any{"project": "shop"})
		require.Equal(t, ids["shop"], st["project_id"])
		docs := ok(t, alice, "awr_status", map[string]any{"project": "docs"})
		require.Equal(t, ids["docs"], docs["project_id"])
		ok(t, bob, "awr_ready", map[string]any{"project": "shop"})
		ok(t, bob, "awr_work_show", map[string]any{"project": "shop", "key": "CART-1"})
		start := ok(t, bob, "awr_session_start", map[string]any{"project": "shop", "work": "CART-1", "agent": "bob-agent", "claim": true})
		require.NotEmpty(t, get(start, "session.id"))
		// Written to shop only.
		require.Greater(t, rev(t, ok(t, alice, "awr_status", map[string]any{"project": "shop"})), rev(t, st))
		require.Equal(t, rev(t, docs), rev(t, ok(t, carol, "awr_status", map[string]any{"project": "docs"})))
	})

	t.Run("ProjectRequired", func(t *testing.T) {
		out := fails(t, alice, "awr_status", map[string]any{}, "InvalidInput")
		require.Contains(t, out["message"], "project is required")
	})

	t.Run("NotGrantedIsForbidden", func(t *testing.T) {
		// The SDK's client gets the 403's JSON-RPC error as the call's
		// error, and its session stays usable.
		_, err := carol.CallTool(ctx, &mcp.CallToolParams{Name: "awr_status", Arguments: map[string]any{"project": "shop"}})
		require.Error(t, err)
		require.Contains(t, err.Error(), `no project "shop" is served to client carol`)
		_, err2 := carol.CallTool(ctx, &mcp.CallToolParams{Name: "awr_status", Arguments: map[string]any{"project": "nosuch"}})
		require.Error(t, err2)
		require.Equal(t, strings.ReplaceAll(err.Error(), "shop", "P"), strings.ReplaceAll(err2.Error(), "nosuch", "P"),
			"an unknown project and one not granted get the same answer")
		_, err = alice.CallTool(ctx, &mcp.CallToolParams{Name: "awr_session_start", Arguments: map[string]any{"project": "docs", "work": "CART-1", "agent": "a"}})
		require.Error(t, err)
		require.Contains(t, err.Error(), "client alice may only read project docs")
		ok(t, carol, "awr_status", map[string]any{"project": "docs"})
	})

	t.Run("BindingsScopedPerClient", func(t *testing.T) {
		a := ok(t, alice, "awr_session_start", map[string]any{"project": "shop", "work": "CART-2", "agent": "alice-agent"})
		sid := get(a, "session.id").(string)
		bound := ok(t, alice, "awr_client_bind", map[string]any{"project": "shop", "client": "claude", "external_session": "conv-1", "work": "CART-2", "session": sid})
		require.Equal(t, "claude:alice/conv-1", get(bound, "binding.external_session"), "%v", bound)
		show := ok(t, alice, "awr_client_show", map[string]any{"project": "shop", "client": "claude", "external_session": "conv-1"})
		require.Equal(t, sid, get(show, "binding.session_id"))
		// Bob names the same conversation id: it is not alice's.
		fails(t, bob, "awr_client_show", map[string]any{"project": "shop", "client": "claude", "external_session": "conv-1"}, "NotFound")
		// A generic HOST:ID is scoped after the host.
		g := ok(t, alice, "awr_client_bind", map[string]any{"project": "shop", "client": "cursor", "external_session": "cursor:c-9", "work": "CART-2", "session": sid})
		require.Equal(t, "cursor:alice/c-9", get(g, "binding.external_session"), "%v", g)
	})

	t.Run("RequestIDsScopedPerClient", func(t *testing.T) {
		a := ok(t, alice, "awr_session_start", map[string]any{"project": "shop", "work": "OPS-1", "agent": "alice-agent", "request_id": "r-1"})
		b := ok(t, bob, "awr_session_start", map[string]any{"project": "shop", "work": "OPS-1", "agent": "bob-agent", "request_id": "r-1"})
		require.NotEqual(t, get(a, "session.id"), get(b, "session.id"), "bob's r-1 is not alice's")
		again := ok(t, alice, "awr_session_start", map[string]any{"project": "shop", "work": "OPS-1", "agent": "alice-agent", "request_id": "r-1"})
		require.Equal(t, get(a, "session.id"), get(again, "session.id"), "alice's retry gets her first answer")
	})
}

// TestShared_WritesSerialized: while a project's write lock is held, a
// write to it waits and a read of it is answered; the write runs once
// the lock is let go.
func TestShared_WritesSerialized(t *testing.T) {
	t.Parallel()
	svc, _ := twoProjects(t)
	alice := connectHTTP(t, svc.url, svc.tokens["TOKEN_ALICE"])
	bob := connectHTTP(t, svc.url, svc.tokens["TOKEN_BOB"])
	release := mcpserver.HoldWrites(svc.sh, "shop")
	written := make(chan map[string]any, 1)
	go func() {
		res, err := bob.CallTool(context.Background(), &mcp.CallToolParams{Name: "awr_session_start", Arguments: map[string]any{"project": "shop", "work": "CART-1", "agent": "bob-agent"}})
		if err != nil || res.IsError {
			written <- map[string]any{"error": fmt.Sprint(err, res)}
			return
		}
		written <- map[string]any{"ok": true}
	}()
	before := ok(t, alice, "awr_status", map[string]any{"project": "shop"})
	ok(t, alice, "awr_session_list", map[string]any{"project": "shop"})
	select {
	case w := <-written:
		t.Fatalf("a write ran while the project's write lock was held: %v", w)
	default:
	}
	require.Equal(t, rev(t, before), rev(t, ok(t, alice, "awr_status", map[string]any{"project": "shop"})), "nothing written yet")
	release()
	select {
	case w := <-written:
		require.Equal(t, map[string]any{"ok": true}, w)
	case <-time.After(time.Minute):
		t.Fatal("the write did not run after the lock was let go")
	}
	require.Greater(t, rev(t, ok(t, alice, "awr_status", map[string]any{"project": "shop"})), rev(t, before))
}

// TestShared_WriteWaitBounded: a write that waits for its project's other
// write longer than the service's timeout fails with Storage, nothing
// written.
func TestShared_WriteWaitBounded(t *testing.T) {
	t.Parallel()
	dir, id := checkoutProject(t, 5)
	token := newToken(t)
	svc := startSharedWith(t, fmt.Sprintf("[projects.shop]\nroot = %q\nid = %q\n\n[clients.a]\ntoken_env = \"T\"\ngrants = { shop = \"write\" }\n", dir, id),
		map[string]string{"T": token}, mcpserver.SharedOptions{Timeout: 200 * time.Millisecond})
	cs := connectHTTP(t, svc.url, token)
	before := ok(t, cs, "awr_status", map[string]any{"project": "shop"})
	release := mcpserver.HoldWrites(svc.sh, "shop")
	out := fails(t, cs, "awr_session_start", map[string]any{"project": "shop", "work": "CART-1", "agent": "a"}, "Storage")
	require.Contains(t, out["message"], "another write held the project for 200ms; nothing was written")
	release()
	require.Equal(t, rev(t, before), rev(t, ok(t, cs, "awr_status", map[string]any{"project": "shop"})))
	ok(t, cs, "awr_session_start", map[string]any{"project": "shop", "work": "CART-1", "agent": "a"})
}
