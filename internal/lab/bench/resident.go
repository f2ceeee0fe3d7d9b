package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/awr-dev/awr/internal/process"
)

// resident is one warm awr-mcp process the benchmarks call tools of, as
// an agent's host does: on stdio (`awr-mcp --project DIR`, one JSON-RPC
// message a line) or as the shared HTTP service (`awr-mcp --listen
// 127.0.0.1:0 --registry FILE`, Streamable HTTP with a bearer token).
// The client is written here, small, against the protocol: the MCP SDK
// is linked into awr-mcp only, never into awr (docs/notes/benchmarks.md, "The
// MCP SDK out of the CLI").
type resident struct {
	// Mode is "stdio" or "http".
	Mode string
	cmd  *exec.Cmd
	// stdio
	in  io.WriteCloser
	out *bufio.Reader
	// http
	url, token, session string
	client              *http.Client
	project             string // the registry's name of the project
	stderr              *process.Output
	id                  int
	tmp                 string
	exited              chan struct{} // closed once the HTTP service's process is waited for
}

// protocolVersion is the MCP revision the client asks for.
const protocolVersion = "2025-06-18"

// startStdio starts `awr-mcp --project dir` and initializes a session.
func startStdio(ctx context.Context, mcpExe, dir string) (*resident, error) {
	r := &resident{Mode: "stdio", stderr: &process.Output{}}
	r.cmd = exec.CommandContext(ctx, mcpExe, "--project", dir, "--log-level", "error")
	r.cmd.Stderr = r.stderr
	var err error
	if r.in, err = r.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := r.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	r.out = bufio.NewReaderSize(stdout, 1<<20)
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", mcpExe, err)
	}
	if err := r.initialize(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// urlLine is the shared service's log line that says where it listens.
var urlLine = regexp.MustCompile(`url=(http://127\.0\.0\.1:[0-9]+/mcp)`)

// startHTTP starts the shared service over dir (its project id id) on a
// loopback port of the system's choosing, with a registry and a token of
// its own in a temporary directory, and initializes a session.
func startHTTP(ctx context.Context, mcpExe, dir, id string) (*resident, error) {
	tmp, err := os.MkdirTemp("", "awr-bench-mcp-")
	if err != nil {
		return nil, err
	}
	r := &resident{Mode: "http", stderr: &process.Output{}, tmp: tmp, project: "bench", client: &http.Client{Timeout: 5 * time.Minute}}
	key := make([]byte, 24)
	if _, err := rand.Read(key); err != nil {
		r.Close()
		return nil, err
	}
	r.token = hex.EncodeToString(key)
	reg := fmt.Sprintf("[projects.bench]\nroot = %q\nid = %q\n\n[clients.bench]\ntoken_env = \"AWR_BENCH_MCP_TOKEN\"\ngrants = { bench = \"write\" }\n", dir, id)
	regPath := filepath.Join(tmp, "registry.toml")
	if err := os.WriteFile(regPath, []byte(reg), 0o600); err != nil {
		r.Close()
		return nil, err
	}
	r.cmd = exec.CommandContext(ctx, mcpExe, "--listen", "127.0.0.1:0", "--registry", regPath, "--log-level", "info")
	r.cmd.Env = append(os.Environ(), "AWR_BENCH_MCP_TOKEN="+r.token)
	r.cmd.Stderr = r.stderr
	if err := r.cmd.Start(); err != nil {
		r.Close()
		return nil, fmt.Errorf("start %s: %w", mcpExe, err)
	}
	r.exited = make(chan struct{})
	go func() { _ = r.cmd.Wait(); close(r.exited) }()
	deadline := time.Now().Add(60 * time.Second)
	for r.url == "" {
		if m := urlLine.FindStringSubmatch(r.stderr.String()); m != nil {
			r.url = m[1]
			break
		}
		select {
		case <-r.exited:
			r.Close()
			return nil, fmt.Errorf("awr-mcp --listen exited: %s", strings.TrimSpace(r.stderr.String()))
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			r.Close()
			return nil, fmt.Errorf("awr-mcp --listen: no address logged within 60 s: %s", strings.TrimSpace(r.stderr.String()))
		}
	}
	if err := r.initialize(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// initialize opens the MCP session: initialize, then the initialized
// notification.
func (r *resident) initialize() error {
	if err := r.rpc("initialize", map[string]any{"protocolVersion": protocolVersion, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "awr-bench", "version": "0"}}, nil); err != nil {
		return fmt.Errorf("awr-mcp (%s): initialize: %w", r.Mode, err)
	}
	return r.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}, false, 0)
}

// rpcAnswer is a JSON-RPC response; Result points at what its result
// is decoded into, so a response is decoded once, as a host's client
// does.
type rpcAnswer struct {
	ID     *int `json:"id"`
	Result any  `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// toolAnswer is the result of tools/call.
type toolAnswer struct {
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Content           []struct {
		Text string `json:"text"`
	} `json:"content"`
}

// Call calls tool with args and returns its structured answer; a tool
// error is an error, with its text.
func (r *resident) Call(tool string, args map[string]any) (json.RawMessage, error) {
	if r.Mode == "http" {
		a := map[string]any{"project": r.project}
		for k, v := range args {
			a[k] = v
		}
		args = a
	}
	var ans toolAnswer
	if err := r.rpc("tools/call", map[string]any{"name": tool, "arguments": args}, &ans); err != nil {
		return nil, fmt.Errorf("awr-mcp (%s): %s: %w", r.Mode, tool, err)
	}
	if ans.IsError {
		text := ""
		if len(ans.Content) > 0 {
			text = ans.Content[0].Text
		}
		return nil, fmt.Errorf("awr-mcp (%s): %s: %s", r.Mode, tool, text)
	}
	return ans.StructuredContent, nil
}

// rpc sends one request and decodes its result into into (nil: the
// result is read and dropped).
func (r *resident) rpc(method string, params, into any) error {
	r.id++
	id := r.id
	if into == nil {
		into = new(json.RawMessage)
	}
	if r.Mode == "http" {
		return r.post(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}, id, into)
	}
	if err := r.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}, true, id); err != nil {
		return err
	}
	for {
		line, err := r.out.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("read: %w: %s", err, strings.TrimSpace(r.stderr.String()))
		}
		if ours, err := answerOf(line, id, into); ours {
			return err
		}
		// a notification, or not ours
	}
}

// answerOf decodes data, one JSON-RPC message, and reports whether it
// is the response to request id; its result is decoded into into, its
// error returned.
func answerOf(data []byte, id int, into any) (bool, error) {
	a := rpcAnswer{Result: into}
	if json.Unmarshal(data, &a) != nil || a.ID == nil || *a.ID != id {
		return false, nil
	}
	if a.Error != nil {
		return true, fmt.Errorf("error %d: %s", a.Error.Code, a.Error.Message)
	}
	return true, nil
}

// send writes one message; on HTTP, a notification is posted and its
// 202 awaited.
func (r *resident) send(msg map[string]any, request bool, id int) error {
	if r.Mode == "http" {
		return r.post(msg, 0, nil)
	}
	raw, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = r.in.Write(append(raw, '\n'))
	return err
}

// post sends one message over Streamable HTTP and, for a request (id >
// 0), decodes its answer's result into into from a JSON body or an event
// stream.
func (r *resident) post(msg map[string]any, id int, into any) error {
	raw, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPost, r.url, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+r.token)
	if r.session != "" {
		req.Header.Set("Mcp-Session-Id", r.session)
		req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return err
	}
	defer func() {
		// Read to the end, so the connection is kept for the next call.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<20))
		resp.Body.Close()
	}()
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		r.session = s
	}
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	if id == 0 {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		if err != nil {
			return err
		}
		if ours, err := answerOf(body, id, into); ours {
			return err
		}
		return fmt.Errorf("the answer to request %d is not a JSON-RPC response to it", id)
	}
	// An event stream: the answer is the data of the event that carries
	// our id.
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var data bytes.Buffer
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case bytes.HasPrefix(line, []byte("data:")):
			data.Write(bytes.TrimSpace(line[len("data:"):]))
		case len(line) == 0 && data.Len() > 0:
			if ours, err := answerOf(data.Bytes(), id, into); ours {
				return err
			}
			data.Reset()
		}
	}
	if data.Len() > 0 {
		if ours, err := answerOf(data.Bytes(), id, into); ours {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return fmt.Errorf("no answer to request %d in the event stream", id)
}

// Close ends the session and the process: stdin closed (stdio) or an
// interrupt (HTTP), then a kill if it has not exited within 10 s.
func (r *resident) Close() {
	if r.cmd != nil && r.cmd.Process != nil {
		if r.in != nil {
			_ = r.in.Close()
		} else {
			_ = r.cmd.Process.Signal(os.Interrupt)
		}
		done := r.exited
		if done == nil {
			done = make(chan struct{})
			go func() { _ = r.cmd.Wait(); close(done) }()
		}
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = r.cmd.Process.Kill()
			<-done
		}
	}
	if r.tmp != "" {
		_ = os.RemoveAll(r.tmp)
	}
}

// residentCall is one tool call the resident measurements time.
type residentCall struct {
	name string // as the CLI names it
	tool string
	args map[string]any
	// bound is issue #44's p50 bound on it, in ms.
	bound float64
}

// residentCalls are the reads an agent makes through a warm awr-mcp on
// work (query: a word of its title), with issue #44's bounds.
func residentCalls(work, query string, budget int) []residentCall {
	return []residentCall{
		{"status", "awr_status", map[string]any{}, 2},
		{"ready", "awr_ready", map[string]any{}, 2},
		{"work show", "awr_work_show", map[string]any{"key": work}, 2},
		{"search", "awr_search", map[string]any{"query": query}, 2},
		{"context compile", "awr_context_compile", map[string]any{"work": work, "budget": budget}, 5},
	}
}

// residentSamples times count calls of each of calls through r (one
// untimed call of each first: the caches warm, the answer is checked),
// interleaved: every round calls each tool once. cpu is the server's CPU
// time per call of each, in ms (the mean over its calls, read from
// /proc: a busy machine stretches it far less than the wall clock); nil
// where the system does not say.
func residentSamples(r *resident, calls []residentCall, count int) (wall [][]float64, cpu []float64, err error) {
	wall = make([][]float64, len(calls))
	for i, c := range calls {
		if _, err := r.Call(c.tool, c.args); err != nil {
			return nil, nil, err
		}
		wall[i] = make([]float64, 0, count)
	}
	ticks := make([]int64, len(calls))
	_, measured := r.cpuTicks()
	for range count {
		for i, c := range calls {
			before, _ := r.cpuTicks()
			t0 := time.Now()
			if _, err := r.Call(c.tool, c.args); err != nil {
				return nil, nil, err
			}
			wall[i] = append(wall[i], float64(time.Since(t0).Microseconds())/1000)
			after, _ := r.cpuTicks()
			ticks[i] += after - before
		}
	}
	if measured {
		cpu = make([]float64, len(calls))
		for i := range calls {
			// /proc counts in USER_HZ, 100 a second on Linux.
			cpu[i] = round2(float64(ticks[i]) * 10 / float64(count))
		}
	}
	return wall, cpu, nil
}

// cpuTicks is the server process's user and system time so far, in
// clock ticks, from /proc/PID/stat; false where there is none.
func (r *resident) cpuTicks() (int64, bool) {
	if r.cmd == nil || r.cmd.Process == nil {
		return 0, false
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", r.cmd.Process.Pid))
	if err != nil {
		return 0, false
	}
	// The fields after the command name (which may hold spaces), from
	// the third: utime and stime are the 14th and 15th.
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(raw[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return u + st, true
}

// titleWord is a word of title to search for: its longest, lower-cased.
func titleWord(title string) string {
	best := ""
	for _, w := range strings.FieldsFunc(title, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		if len(w) > len(best) {
			best = w
		}
	}
	return strings.ToLower(best)
}
