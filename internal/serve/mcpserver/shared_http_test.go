package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// httpAnswer is what one HTTP request to the shared service got.
type httpAnswer struct {
	status int
	header http.Header
	body   []byte
}

// post sends body to url with the given headers with the real curl
// when it is installed (net/http otherwise), as a person checking the
// service by hand would.
func post(t *testing.T, url string, headers map[string]string, body string) httpAnswer {
	t.Helper()
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	for k, v := range headers {
		h[k] = v
	}
	if curl, err := exec.LookPath("curl"); err == nil {
		dir := t.TempDir()
		bodyFile, headFile := filepath.Join(dir, "body"), filepath.Join(dir, "head")
		args := []string{"-sS", "--max-time", "60", "-o", bodyFile, "-D", headFile, "-w", "%{http_code}", "-X", "POST", "--data-binary", "@-"}
		for k, v := range h {
			args = append(args, "-H", k+": "+v)
		}
		cmd := exec.Command(curl, append(args, url)...)
		cmd.Stdin = strings.NewReader(body)
		out, err := cmd.Output()
		require.NoError(t, err, "curl %v", args)
		status, err := strconv.Atoi(strings.TrimSpace(string(out)))
		require.NoError(t, err, "curl's status: %q", out)
		b, err := os.ReadFile(bodyFile)
		require.NoError(t, err)
		raw, err := os.ReadFile(headFile)
		require.NoError(t, err)
		header := http.Header{}
		for _, ln := range strings.Split(string(raw), "\n") {
			if k, v, ok := strings.Cut(ln, ":"); ok {
				header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
			}
		}
		return httpAnswer{status: status, header: header, body: b}
	}
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	for k, v := range h {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return httpAnswer{status: resp.StatusCode, header: resp.Header, body: b}
}

// rpcError decodes the JSON-RPC error of a refusal: its id and awr's
// error object (error.data).
func rpcError(t *testing.T, a httpAnswer) (id any, code, message string) {
	t.Helper()
	var resp struct {
		ID    any `json:"id"`
		Error struct {
			Message string `json:"message"`
			Data    struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"data"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(a.body, &resp), "%s", a.body)
	require.Equal(t, resp.Error.Message, resp.Error.Data.Message, "%s", a.body)
	return resp.ID, resp.Error.Data.Code, resp.Error.Data.Message
}

func toolCall(id int, tool string, args map[string]any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	return string(b)
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`

func TestShared_HTTP(t *testing.T) {
	t.Parallel()
	svc, _ := twoProjects(t)
	auth := func(env string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + svc.tokens[env]}
	}

	t.Run("401", func(t *testing.T) {
		none := post(t, svc.url, nil, initialize)
		require.Equal(t, http.StatusUnauthorized, none.status, "%s", none.body)
		require.Equal(t, `Bearer realm="awr-mcp"`, none.header.Get("WWW-Authenticate"))
		_, code, msg := rpcError(t, none)
		require.Equal(t, "InvalidInput", code)
		require.Contains(t, msg, "bearer token")
		for _, h := range []map[string]string{
			{"Authorization": "Bearer " + strings.Repeat("x", 48)},
			{"Authorization": "Bearer " + svc.tokens["TOKEN_ALICE"][:40]},  // a prefix of a token
			{"Authorization": "Bearer " + svc.tokens["TOKEN_ALICE"] + "0"}, // a token and more
			{"Authorization": "Basic " + svc.tokens["TOKEN_ALICE"]},        // another scheme
			{"Authorization": svc.tokens["TOKEN_ALICE"]},                   // no scheme
			{"X-Token": svc.tokens["TOKEN_ALICE"]},                         // another header
		} {
			bad := post(t, svc.url, h, toolCall(2, "awr_status", map[string]any{"project": "shop"}))
			require.Equal(t, http.StatusUnauthorized, bad.status, "%v: %s", h, bad.body)
			require.Equal(t, string(none.body), string(bad.body), "every unauthenticated request gets one answer")
		}
	})

	t.Run("Initialize", func(t *testing.T) {
		a := post(t, svc.url, map[string]string{"Authorization": "bearer " + svc.tokens["TOKEN_ALICE"]}, initialize)
		require.Equal(t, http.StatusOK, a.status, "%s", a.body)
		require.NotEmpty(t, a.header.Get("Mcp-Session-Id"))
		require.Contains(t, string(a.body), `"serverInfo"`)
	})

	t.Run("403NoLeak", func(t *testing.T) {
		// carol may read docs only: shop exists, nosuch does not; both
		// get the same answer but for the name.
		granted := post(t, svc.url, auth("TOKEN_CAROL"), toolCall(7, "awr_status", map[string]any{"project": "shop"}))
		require.Equal(t, http.StatusForbidden, granted.status, "%s", granted.body)
		unknown := post(t, svc.url, auth("TOKEN_CAROL"), toolCall(7, "awr_status", map[string]any{"project": "nosuch"}))
		require.Equal(t, http.StatusForbidden, unknown.status, "%s", unknown.body)
		require.Equal(t, string(bytes.ReplaceAll(granted.body, []byte("shop"), []byte("P"))), string(bytes.ReplaceAll(unknown.body, []byte("nosuch"), []byte("P"))))
		id, code, msg := rpcError(t, granted)
		require.Equal(t, float64(7), id, "the refusal answers the call's id")
		require.Equal(t, "NotFound", code)
		require.Contains(t, msg, `no project "shop" is served to client carol`)
	})

	t.Run("403AnotherClientsProject", func(t *testing.T) {
		// bob's token on docs, which only alice and carol are granted.
		a := post(t, svc.url, auth("TOKEN_BOB"), toolCall(3, "awr_work_show", map[string]any{"project": "docs", "key": "CART-1"}))
		require.Equal(t, http.StatusForbidden, a.status, "%s", a.body)
		_, code, msg := rpcError(t, a)
		require.Equal(t, "NotFound", code)
		require.NotContains(t, msg, "alice")
		// alice may read docs, not write it.
		w := post(t, svc.url, auth("TOKEN_ALICE"), toolCall(4, "awr_session_start", map[string]any{"project": "docs", "work": "CART-1", "agent": "a"}))
		require.Equal(t, http.StatusForbidden, w.status, "%s", w.body)
		_, code, msg = rpcError(t, w)
		require.Equal(t, "InvalidInput", code)
		require.Contains(t, msg, "client alice may only read project docs")
		// A batch hides no call.
		batch := "[" + toolCall(5, "awr_status", map[string]any{"project": "shop"}) + "," + toolCall(6, "awr_status", map[string]any{"project": "docs"}) + "]"
		b := post(t, svc.url, auth("TOKEN_BOB"), batch)
		require.Equal(t, http.StatusForbidden, b.status, "%s", b.body)
	})

	t.Run("SessionOfAnotherClient", func(t *testing.T) {
		a := post(t, svc.url, auth("TOKEN_ALICE"), initialize)
		require.Equal(t, http.StatusOK, a.status, "%s", a.body)
		sid := a.header.Get("Mcp-Session-Id")
		h := auth("TOKEN_BOB")
		h["Mcp-Session-Id"] = sid
		h["MCP-Protocol-Version"] = "2025-06-18"
		b := post(t, svc.url, h, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		require.Equal(t, http.StatusForbidden, b.status, "bob may not use alice's session: %s", b.body)
	})

	t.Run("HostAndOrigin", func(t *testing.T) {
		_, port, _ := strings.Cut(svc.addr, ":")
		h := auth("TOKEN_ALICE")
		h["Host"] = "evil.example:" + port
		a := post(t, svc.url, h, initialize)
		require.Equal(t, http.StatusForbidden, a.status, "a DNS rebinding: %s", a.body)
		_, _, msg := rpcError(t, a)
		require.Contains(t, msg, "Host evil.example:"+port)
		h = auth("TOKEN_ALICE")
		h["Origin"] = "http://evil.example"
		a = post(t, svc.url, h, initialize)
		require.Equal(t, http.StatusForbidden, a.status, "%s", a.body)
		h["Origin"] = "http://localhost:" + port
		h["Host"] = "localhost:" + port
		a = post(t, svc.url, h, initialize)
		require.Equal(t, http.StatusOK, a.status, "the service's own loopback origin: %s", a.body)
	})

	t.Run("Bounds", func(t *testing.T) {
		big := post(t, svc.url, auth("TOKEN_ALICE"), `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"`+strings.Repeat("a", 5<<20)+`"}}`)
		require.Equal(t, http.StatusRequestEntityTooLarge, big.status, "a body over 4 MiB")
		h := auth("TOKEN_ALICE")
		h["X-Padding"] = strings.Repeat("b", 100<<10)
		huge := post(t, svc.url, h, initialize)
		require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, huge.status, "headers over 64 KiB")
	})

	t.Run("404", func(t *testing.T) {
		a := post(t, strings.TrimSuffix(svc.url, "/mcp")+"/other", auth("TOKEN_ALICE"), initialize)
		require.Equal(t, http.StatusNotFound, a.status, "%s", a.body)
	})
}
