package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awr-dev/awr/events/pgstore/pgtest"
	"github.com/awr-dev/awr/fixtures"
	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// bearerTransport adds a bearer token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestShared_Process runs the shared service as a process: awr-mcp
// --listen 127.0.0.1:0 --registry FILE, the token in the environment;
// the SDK's client reaches the project over HTTP, and SIGTERM stops it
// with exit 0.
func TestShared_Process(t *testing.T) {
	t.Parallel()
	awr, awrMCP := binaries(t)
	dir := project(t, awr)
	out, err := exec.Command(awr, "--project", dir, "status", "--json").Output()
	require.NoError(t, err)
	var st struct {
		ProjectID string `json:"project_id"`
	}
	require.NoError(t, json.Unmarshal(out, &st))
	token := strings.Repeat("k3y", 12)
	registry := filepath.Join(t.TempDir(), "registry.toml")
	require.NoError(t, os.WriteFile(registry, []byte(fmt.Sprintf("[projects.shop]\nroot = %q\nid = %q\n\n[clients.ci]\ntoken_env = \"AWR_MCP_TOKEN_CI\"\ngrants = { shop = \"write\" }\n", dir, st.ProjectID)), 0o600))

	url, stop := startService(t, awrMCP, registry, "AWR_MCP_TOKEN_CI="+token)
	cs := connectService(t, url, token)
	_, list, isErr := call(t, cs, "awr_projects_list", nil)
	require.False(t, isErr)
	require.Equal(t, "shop", list["projects"].([]any)[0].(map[string]any)["name"])
	_, status, isErr := call(t, cs, "awr_status", map[string]any{"project": "shop"})
	require.False(t, isErr, "%v", status)
	require.Equal(t, st.ProjectID, status["project_id"])
	cs.Close()
	require.NoError(t, stop(), "exit 0 after SIGTERM")
}

// startService starts awr-mcp --listen 127.0.0.1:0 --registry registry
// with env added to the environment, and returns the URL it logs; stop
// sends SIGTERM and returns how it exited.
func startService(t *testing.T, awrMCP, registry string, env ...string) (url string, stop func() error) {
	t.Helper()
	cmd := exec.Command(awrMCP, "--listen", "127.0.0.1:0", "--registry", registry)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	urls := make(chan string, 1)
	var log strings.Builder
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if m := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)`).FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	select {
	case url = <-urls:
	case <-logged:
		t.Fatalf("awr-mcp exited without serving:\n%s", log.String())
	case <-time.After(2 * time.Minute):
		t.Fatal("awr-mcp printed no URL")
	}
	return url, func() error {
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			return err
		}
		<-logged
		if err := cmd.Wait(); err != nil {
			return fmt.Errorf("%w:\n%s", err, log.String())
		}
		return nil
	}
}

// connectService connects the SDK's client to the service at url with
// token.
func connectService(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport{token}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "v0"}, nil).Connect(context.Background(), tr, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestShared_PostgresPoolKept serves a team checkout (its log in
// PostgreSQL) through the shared service: reads and writes succeed, and
// no call opens a connection of its own: every server backend of the
// database after 40 calls was there after the first.
func TestShared_PostgresPoolKept(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	t.Parallel()
	awr, awrMCP := binaries(t)
	dir, err := fixtures.CopyProject("checkout", t.TempDir())
	require.NoError(t, err)
	out, err := exec.Command(awr, "--project", dir, "init", "--store", dbURL, "--accept", "--json").Output()
	require.NoError(t, err)
	var ini struct {
		ProjectID string `json:"project_id"`
	}
	require.NoError(t, json.Unmarshal(out, &ini))
	require.NotEmpty(t, ini.ProjectID)
	token := strings.Repeat("p0ol", 10)
	registry := filepath.Join(t.TempDir(), "registry.toml")
	require.NoError(t, os.WriteFile(registry, []byte(fmt.Sprintf("[projects.team]\nroot = %q\nid = %q\n\n[clients.ci]\ntoken_env = \"AWR_MCP_TOKEN_CI\"\ngrants = { team = \"write\" }\n", dir, ini.ProjectID)), 0o600))
	url, stop := startService(t, awrMCP, registry, "AWR_MCP_TOKEN_CI="+token)
	cs := connectService(t, url, token)

	ctx := context.Background()
	admin, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	defer admin.Close(ctx)
	backends := func() []int {
		rows, err := admin.Query(ctx, "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend' ORDER BY pid")
		require.NoError(t, err)
		pids, err := pgx.CollectRows(rows, pgx.RowTo[int])
		require.NoError(t, err)
		return pids
	}
	_, status, isErr := call(t, cs, "awr_status", map[string]any{"project": "team"})
	require.False(t, isErr, "%v", status)
	require.Equal(t, ini.ProjectID, status["project_id"])
	_, res, isErr := call(t, cs, "awr_session_start", map[string]any{"project": "team", "work": "CART-1", "agent": "ci", "claim": true})
	require.False(t, isErr, "%v", res)
	before := backends()
	require.NotEmpty(t, before, "the service holds a connection to the shared log")
	for i := range 10 {
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"awr_status", map[string]any{"project": "team"}},
			{"awr_ready", map[string]any{"project": "team"}},
			{"awr_work_show", map[string]any{"project": "team", "key": "CART-1"}},
			{"awr_claim_renew", map[string]any{"project": "team", "session": res["session"].(map[string]any)["id"]}},
		} {
			_, out, isErr := call(t, cs, c.tool, c.args)
			require.False(t, isErr, "%s #%d: %v", c.tool, i, out)
		}
	}
	after := backends()
	t.Logf("server backends of the database: %v after the first calls, %v after 40 more", before, after)
	for _, pid := range after {
		require.Contains(t, before, pid, "a backend opened after the first calls: %v, then %v", before, after)
	}
	cs.Close()
	require.NoError(t, stop())
}

// TestShared_ProcessRefuses: a registry that is wrong, or flags that do
// not go together, refuse to start: exit 1 naming path:line, exit 2 for
// usage.
func TestShared_ProcessRefuses(t *testing.T) {
	t.Parallel()
	_, awrMCP := binaries(t)
	registry := filepath.Join(t.TempDir(), "registry.toml")
	require.NoError(t, os.WriteFile(registry, []byte("[projects.shop]\nroot = \"/nonexistent/shop\"\nid = \"X\"\n\n[clients.ci]\ntoken_env = \"AWR_MCP_TOKEN_CI\"\ngrants = { shop = \"write\" }\n"), 0o600))
	for _, c := range []struct {
		name string
		args []string
		env  string
		code int
		want string
	}{
		{"ShortToken", []string{"--listen", "127.0.0.1:0", "--registry", registry}, "short", 1, registry + ":6: client ci: the token in AWR_MCP_TOKEN_CI has 5 characters, fewer than 32"},
		{"RootMissing", []string{"--listen", "127.0.0.1:0", "--registry", registry}, strings.Repeat("k", 40), 1, registry + ":1: project shop: root /nonexistent/shop is not a directory (InvalidInput)"},
		{"ListenAlone", []string{"--listen", "127.0.0.1:0"}, "", 2, "--listen and --registry go together"},
		{"RegistryAlone", []string{"--registry", registry}, "", 2, "--listen and --registry go together"},
		{"Wildcard", []string{"--listen", "0.0.0.0:7424", "--registry", registry}, strings.Repeat("k", 40), 1, "--listen 0.0.0.0:7424 would serve on every interface"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(awrMCP, c.args...)
			cmd.Env = append(os.Environ(), "AWR_MCP_TOKEN_CI="+c.env)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "%s", out)
			require.Equal(t, c.code, ee.ExitCode(), "%s", out)
			require.Contains(t, string(out), c.want)
			if c.env != "" {
				require.NotContains(t, string(out), c.env, "a token is never shown")
			}
		})
	}
}
