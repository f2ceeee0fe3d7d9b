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

	cmd := exec.Command(awrMCP, "--listen", "127.0.0.1:0", "--registry", registry)
	cmd.Env = append(os.Environ(), "AWR_MCP_TOKEN_CI="+token)
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
	var url string
	select {
	case url = <-urls:
	case <-time.After(2 * time.Minute):
		t.Fatal("awr-mcp printed no URL")
	}
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport{token}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "v0"}, nil).Connect(context.Background(), tr, nil)
	require.NoError(t, err)
	_, list, isErr := call(t, cs, "awr_projects_list", nil)
	require.False(t, isErr)
	require.Equal(t, "shop", list["projects"].([]any)[0].(map[string]any)["name"])
	_, status, isErr := call(t, cs, "awr_status", map[string]any{"project": "shop"})
	require.False(t, isErr, "%v", status)
	require.Equal(t, st.ProjectID, status["project_id"])
	cs.Close()

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	<-logged
	require.NoError(t, cmd.Wait(), "exit 0 after SIGTERM:\n%s", log.String())
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
