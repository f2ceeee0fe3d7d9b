package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awr-dev/awr/fixtures"
	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/awr-dev/awr/internal/buildinfo"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// binaries returns awr and awr-mcp, built once per test binary
// (fixtures/testkit).
func binaries(t *testing.T) (awr, awrMCP string) {
	t.Helper()
	return testkit.Program(t, testkit.AWR), testkit.Program(t, testkit.AWRMCP)
}

// TestMain removes the programs the kit built once the tests end.
func TestMain(m *testing.M) { os.Exit(testkit.Run(m)) }

// project copies the checkout fixture and initializes it with the CLI.
func project(t *testing.T, awr string) string {
	t.Helper()
	dir, err := fixtures.CopyProject("checkout", t.TempDir())
	require.NoError(t, err)
	out, err := exec.Command(awr, "--project", dir, "init", "--accept", "--json").CombinedOutput()
	require.NoError(t, err, string(out))
	return dir
}

// serve starts awr-mcp on dir and connects an SDK client over stdio.
func serve(t *testing.T, bin string, args ...string) *mcp.ClientSession {
	t.Helper()
	return serveCmd(t, exec.Command(bin, args...))
}

// serveCmd starts cmd, an awr-mcp command, and connects an SDK client
// over its stdio; the server's stderr is logged if the test fails.
func serveCmd(t *testing.T, cmd *exec.Cmd) *mcp.ClientSession {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "v0"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("server stderr:\n%s", stderr.String())
		}
	})
	return cs
}

// call returns the tool's JSON text, decoded structured content and
// whether it was a tool error.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, map[string]any, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, name)
	text := res.Content[0].(*mcp.TextContent).Text
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(text), &out), text)
	return text, out, res.IsError
}

func ok(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	_, out, isErr := call(t, cs, name, args)
	require.False(t, isErr, "%s: %v", name, out)
	return out
}

// withoutNulls decodes doc with every null field and every empty list
// left out, at any depth: the CLI's JSON and the tool's, compared so, are
// equal when the tool wrote [] or nothing where the CLI wrote null.
func withoutNulls(t *testing.T, doc string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(doc), &v), doc)
	var strip func(v any) any
	strip = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if l, isList := e.([]any); e == nil || (isList && len(l) == 0) {
					delete(v, k)
					continue
				}
				v[k] = strip(e)
			}
		case []any:
			for i, e := range v {
				v[i] = strip(e)
			}
		}
		return v
	}
	return strip(v)
}

func field(m map[string]any, path string) any {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		v = v.(map[string]any)[k]
	}
	return v
}

func TestVersion(t *testing.T) {
	_, bin := binaries(t)
	out, err := exec.Command(bin, "--version").Output()
	require.NoError(t, err)
	// A build in a git checkout carries the revision after the version.
	require.Regexp(t, `^awr-mcp `+regexp.QuoteMeta(buildinfo.Semver)+`(\+[0-9a-f]{12}(-dirty)?)?\n$`, string(out))
}

// TestHandoff runs the whole handoff through MCP alone: one agent starts
// with a claim, compiles its context, checkpoints and is interrupted; a
// second server process (a new host) resumes and finishes.
func TestHandoff(t *testing.T) {
	awr, bin := binaries(t)
	dir := project(t, awr)

	first := serve(t, bin, "--project", dir)
	tools, err := first.ListTools(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, tools.Tools, 55)

	ready := ok(t, first, "awr_ready", map[string]any{})
	require.Equal(t, "CART-1", field(ready, "ready").([]any)[0].(map[string]any)["key"])
	rev := field(ready, "project_revision")

	start := ok(t, first, "awr_session_start", map[string]any{"work": "CART-1", "agent": "builder", "claim": true, "ttl_ms": 600000,
		"expected_revision": rev, "request_id": "start-1"})
	sid := field(start, "session.id").(string)

	comp := ok(t, first, "awr_context_compile", map[string]any{"work": "CART-1", "session": sid})
	hash := field(comp, "work_context.context_hash").(string)

	cp := ok(t, first, "awr_session_checkpoint", map[string]any{"session": sid, "agent": "builder", "context_hash": hash,
		"digest": "added the carts table", "next_action": "write the cart on every change", "open_loops": []any{"idempotency of writes"}})
	require.Equal(t, true, field(cp, "checkpoint.context_hash_verified"))

	end := ok(t, first, "awr_session_end", map[string]any{"session": sid, "outcome": "interrupted", "agent": "builder"})
	require.Equal(t, "interrupted", field(end, "session.outcome"))
	first.Close()

	// A new host, a new server process: only the session id carries over.
	second := serve(t, bin, "--project", dir)
	rec := ok(t, second, "awr_recovery_inspect", map[string]any{"session": sid})
	require.Equal(t, "write the cart on every change", field(rec, "checkpoint.next_action"))

	res := ok(t, second, "awr_session_resume", map[string]any{"from_session": sid, "agent": "successor", "claim": true})
	succ := field(res, "resumed.session.id").(string)
	require.Equal(t, sid, field(res, "resumed.from_session"))
	require.Equal(t, "write the cart on every change", field(res, "checkpoint.next_action"))
	loops := field(res, "knowledge.open_loops").([]any)
	require.Len(t, loops, 1)
	require.Equal(t, "L-1", loops[0].(map[string]any)["id"])
	require.Equal(t, "idempotency of writes", loops[0].(map[string]any)["text"])
	require.Equal(t, true, res["context_ready"])

	ok(t, second, "awr_context_compile", map[string]any{"work": "CART-1", "session": succ})
	ok(t, second, "awr_session_end", map[string]any{"session": succ, "outcome": "completed", "agent": "successor"})

	// The MCP answer is the CLI's --json answer, shaped to the tool's
	// outputSchema: where the CLI prints null, a list is [] and any other
	// field is left out; everything else is the same.
	for _, c := range []struct {
		tool string
		args map[string]any
		cli  []string
	}{
		{"awr_status", map[string]any{}, []string{"status"}},
		{"awr_session_show", map[string]any{"session": sid}, []string{"session", "show", sid}},
		{"awr_log", map[string]any{"work": "CART-1"}, []string{"log", "--work", "CART-1"}},
		{"awr_diff", map[string]any{"from": 2, "work": "CART-1"}, []string{"diff", "--from", "2", "--work", "CART-1"}},
		{"awr_session_list", map[string]any{"at": 5}, []string{"session", "list", "--at", "5"}},
	} {
		text, _, isErr := call(t, second, c.tool, c.args)
		require.False(t, isErr, text)
		require.Equal(t, withoutNulls(t, cli(t, awr, dir, c.cli...)), withoutNulls(t, text), c.tool)
	}

	// awr_audit is `awr audit --json` plus the rendering, which is the
	// CLI's report byte for byte.
	for _, format := range []string{"md", "html"} {
		_, got, isErr := call(t, second, "awr_audit", map[string]any{"work": "CART-1", "format": format})
		require.False(t, isErr, got)
		cmd := exec.Command(awr, "audit", "--work", "CART-1", "--format", format)
		cmd.Dir = dir
		page, err := cmd.Output()
		require.NoError(t, err)
		require.Equal(t, string(page), got["text"], format)
		delete(got, "text")
		var want map[string]any
		require.NoError(t, json.Unmarshal([]byte(cli(t, awr, dir, "audit", "--work", "CART-1", "--format", format)), &want))
		require.Equal(t, want, got, format)
	}

	// A domain error carries the CLI's error object.
	text, _, isErr := call(t, second, "awr_session_start", map[string]any{"work": "NOPE-1", "agent": "x", "claim": true})
	require.True(t, isErr)
	cmd := exec.Command(awr, "--json", "session", "start", "--work", "NOPE-1", "--agent", "x", "--claim")
	cmd.Dir = dir // found as an agent in it finds it: no --project in the hint
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.Error(t, cmd.Run())
	require.Equal(t, strings.TrimSuffix(stderr.String(), "\n"), text)
}

// TestConcurrentServers races two server processes and a CLI process for
// one claim: exactly one wins, the others get ClaimConflict.
func TestConcurrentServers(t *testing.T) {
	awr, bin := binaries(t)
	dir := project(t, awr)
	a, b := serve(t, bin, "--project", dir), serve(t, bin, "--project", dir)
	var wg sync.WaitGroup
	codes := make([]string, 3)
	for i, cs := range []*mcp.ClientSession{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "awr_session_start",
				Arguments: map[string]any{"work": "CART-1", "agent": "agent", "claim": true}})
			if err != nil {
				codes[i] = "protocol: " + err.Error()
				return
			}
			var out map[string]any
			_ = json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out)
			if res.IsError {
				codes[i], _ = out["code"].(string)
			} else {
				codes[i] = "ok"
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		cmd := exec.Command(awr, "--project", dir, "--json", "session", "start", "--work", "CART-1", "--agent", "cli", "--claim")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			var out map[string]any
			_ = json.Unmarshal(stderr.Bytes(), &out)
			codes[2], _ = out["code"].(string)
			return
		}
		codes[2] = "ok"
	}()
	wg.Wait()
	var wins, conflicts int
	for _, c := range codes {
		switch c {
		case "ok":
			wins++
		case "ClaimConflict":
			conflicts++
		}
	}
	require.Equal(t, 1, wins, "%v", codes)
	require.Equal(t, 2, conflicts, "%v", codes)

	// The log stays verifiable after the race.
	out, err := exec.Command(awr, "--project", dir, "--json", "verify").CombinedOutput()
	require.NoError(t, err, string(out))
}

// TestAwrMCP checks that `awr mcp` serves the same tools on stdio.
func TestAwrMCP(t *testing.T) {
	awr, _ := binaries(t)
	dir := project(t, awr)
	cs := serve(t, awr, "--project", dir, "mcp", "--log-level", "debug")
	text, _, isErr := call(t, cs, "awr_status", map[string]any{})
	require.False(t, isErr, text)
	require.Equal(t, cli(t, awr, dir, "status"), text)
}

// TestMalformedMessages: a malformed JSON-RPC message gets a JSON-RPC
// error and the server keeps serving (issue #13, row 10: before, awr-mcp
// exited on the first one and a truncated object swallowed the next).
func TestMalformedMessages(t *testing.T) {
	awr, bin := binaries(t)
	dir := project(t, awr)
	stdin, stdout, _ := rawServer(t, bin, dir)
	lines := []string{
		`garbage`,
		`42`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`,
		`{"id":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}`,
		`{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
	}
	for _, l := range lines {
		_, err := io.WriteString(stdin, l+"\n")
		require.NoError(t, err)
	}
	got := answers(t, stdout, len(lines), 1<<20)
	require.Len(t, got, len(lines))
	codes := []float64{-32700, -32600, -32600, -32600, -32600, -32700}
	for i, want := range codes {
		e, ok := got[i]["error"].(map[string]any)
		require.True(t, ok, "answer %d: %v", i, got[i])
		require.Equal(t, want, e["code"], "answer %d: %v", i, got[i])
	}
	require.EqualValues(t, 2, got[4]["id"], "an answer keeps a valid id")
	require.EqualValues(t, 4, got[6]["id"])
	require.NotNil(t, got[6]["result"], "the server still answers after malformed messages: %v", got[6])
}

// rawServer starts awr-mcp (bin) on the project in dir with pipes, for a
// test that writes frames by hand: its input, its output and the
// process. A cleanup closes its input and ends it, and logs what it
// wrote on stderr when the test failed.
func rawServer(t *testing.T, bin, dir string) (io.WriteCloser, io.Reader, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(bin, "--project", dir)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("server stderr:\n%s", stderr.String())
		}
	})
	return stdin, stdout, cmd
}

// answers reads up to n JSON-RPC messages from r, one a line of at most
// most bytes, each of which must decode; it stops early where r ends.
func answers(t *testing.T, r io.Reader, n, most int) []map[string]any {
	t.Helper()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), most)
	var got []map[string]any
	for len(got) < n && sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), sc.Text())
		got = append(got, m)
	}
	return got
}

// The rig tools drive real agents: up launches the fake agent in tmux,
// send types into its pane (it checkpoints when asked), capture reads the
// pane, snapshot leaves the rig running, down stops it; send to a stopped
// seat is refused.
func TestRigTools(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	awr, awrMCP := binaries(t)
	binDir := testkit.Programs(t, testkit.FakeAgent)
	dir := project(t, awr)
	out, err := exec.Command(awr, "--project", dir, "seat", "add", "build@portal", "--runtime", "generic", "--work", "CART-1",
		"--command", "fakeagent --conversation {conversation}", "--resume-command", "fakeagent --resume --conversation {conversation}").CombinedOutput()
	require.NoError(t, err, string(out))
	socket := "awr-mcp-e2e-" + filepath.Base(dir)
	t.Cleanup(func() { exec.Command("tmux", "-L", socket, "kill-server").Run() })
	cmd := exec.Command(awrMCP, "--project", dir)
	cmd.Env = append(os.Environ(), "AWR_TMUX_SOCKET="+socket, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "v0"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })

	up := ok(t, cs, "awr_rig_up", map[string]any{"rig": "portal", "verify_timeout": int64(15e9)})
	require.Equal(t, "fully_restored", up["result"], "%v", up)
	sent := ok(t, cs, "awr_rig_send", map[string]any{"seat": "build@portal", "text": "please checkpoint now", "agent": "e2e"})
	require.Equal(t, float64(len("please checkpoint now")), sent["bytes"])
	var lines []any
	require.Eventually(t, func() bool {
		capt := ok(t, cs, "awr_rig_capture", map[string]any{"seat": "build@portal", "lines": 20})
		lines = capt["lines"].([]any)
		return strings.Contains(fmt.Sprint(lines), "checkpoint 1 recorded")
	}, time.Minute, 50*time.Millisecond, "pane: %v", lines)
	snap := ok(t, cs, "awr_rig_snapshot", map[string]any{"rig": "portal"})
	require.Equal(t, true, field(snap, "seats").([]any)[0].(map[string]any)["running"])
	ps := ok(t, cs, "awr_rig_ps", map[string]any{"rig": "portal"})
	require.Equal(t, "running", ps["seats"].([]any)[0].(map[string]any)["state"])
	require.Equal(t, snap["snapshot"], ps["snapshot"])
	down := ok(t, cs, "awr_rig_down", map[string]any{"rig": "portal", "snapshot": true, "grace": int64(10e9)})
	require.Equal(t, true, down["seats"].([]any)[0].(map[string]any)["checkpointed"], "%v", down)
	_, res, isErr := call(t, cs, "awr_rig_send", map[string]any{"seat": "build@portal", "text": "hello"})
	require.True(t, isErr)
	require.Equal(t, "InvalidTransition", res["code"])
}

// TestFlags: awr-mcp's command line reads like awr's: --help on stdout
// with exit 0, a bad flag or value a usage error with exit 2 naming the
// help.
func TestFlags(t *testing.T) {
	_, bin := binaries(t)
	out, err := exec.Command(bin, "--help").Output()
	require.NoError(t, err)
	require.Contains(t, string(out), "Usage: awr-mcp [flags]")
	require.Contains(t, string(out), "--log-level")
	for _, args := range [][]string{{"--nope"}, {"extra"}, {"--log-level", "loud"}} {
		cmd := exec.Command(bin, args...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%v", args)
		require.Equal(t, 2, ee.ExitCode(), "%v", args)
		require.Contains(t, stderr.String(), "next: awr-mcp --help", "%v", args)
	}
}

// TestAnswersAfterInputEnds: requests piped in and the input closed (a
// script, or a host shutting the server down by closing its stdin) each
// get their answer before the server exits, through awr mcp as well; a
// write in flight completes.
func TestAnswersAfterInputEnds(t *testing.T) {
	awr, bin := binaries(t)
	dir := project(t, awr)
	requests := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":"status","method":"tools/call","params":{"name":"awr_status","arguments":{}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"awr_session_start","arguments":{"work":"CART-1","agent":"piped"}}}
`
	for i, argv := range [][]string{{bin, "--project", dir}, {awr, "--project", dir, "mcp"}} {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdin = strings.NewReader(requests)
		out, err := cmd.Output()
		require.NoError(t, err, "%v", argv)
		ids := map[string]bool{}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(l), &m), l)
			require.NotNil(t, m["result"], "%v: %s", argv, l)
			ids[fmt.Sprint(m["id"])] = true
		}
		require.Equal(t, map[string]bool{"1": true, "status": true, "3": true}, ids, "%v: %s", argv, out)
		var sessions struct {
			Sessions []any `json:"sessions"`
		}
		require.NoError(t, json.Unmarshal([]byte(cli(t, awr, dir, "session", "list")), &sessions))
		require.Len(t, sessions.Sessions, i+1, "the session start each run was sent is recorded")
	}
}
