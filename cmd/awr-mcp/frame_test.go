package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/awr-dev/awr/internal/serve/mcpserver"
	"github.com/stretchr/testify/require"
)

// TestHostileFrames drives the built awr-mcp with the frames that used to
// end it (issue #47): an id of 1e400, a numeric method, an id of 1.5
// (never answered), a 50 MiB line and a long run of bytes without a
// newline (200 MiB with AWR_LONG set, 20 MiB otherwise). Each gets its
// JSON-RPC error, the session goes on (initialize, tools/list, a
// resources/read of a URI of control characters and a tool call are
// answered after them), the over-long lines are never held
// whole, and the server exits cleanly when its input ends.
func TestHostileFrames(t *testing.T) {
	awr, bin := binaries(t)
	dir := project(t, awr)
	stdin, stdout, cmd := rawServer(t, bin, dir)

	noNewline := 20 << 20
	if os.Getenv("AWR_LONG") != "" {
		noNewline = 200 << 20
	}
	bad := []struct {
		name  string
		frame func(w io.Writer) error
		code  float64
		id    any
	}{
		{"id 1e400", line(`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`), -32600, nil},
		{"numeric method", line(`{"jsonrpc":"2.0","id":7,"method":7}`), -32600, 7.0},
		{"id 1.5", line(`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`), -32600, nil},
		{"null method", line(`{"jsonrpc":"2.0","id":"m","method":null}`), -32600, "m"},
		{"id beyond 2^53", line(`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`), -32600, nil},
		{"error not an object", line(`{"jsonrpc":"2.0","id":3,"error":5}`), -32600, nil},
		{"deep params", line(`{"jsonrpc":"2.0","id":4,"method":"ping","params":` + strings.Repeat("[", 1500) + strings.Repeat("]", 1500) + `}`), -32600, 4.0},
		{"50 MiB line", func(w io.Writer) error {
			return long(w, `{"jsonrpc":"2.0","id":8,"method":"ping","params":{"x":"`, 50<<20, "\"}}\n")
		}, -32600, nil},
		{"no newline", func(w io.Writer) error { return long(w, "", noNewline, "\n") }, -32600, nil},
	}
	valid := []string{
		`{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":11,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"res","method":"resources/read","params":{"uri":"\u0000\u0007"}}`,
		`{"jsonrpc":"2.0","id":"status","method":"tools/call","params":{"name":"awr_status","arguments":{}}}`,
	}
	written := make(chan error, 1)
	go func() {
		for _, b := range bad {
			if err := b.frame(stdin); err != nil {
				written <- fmt.Errorf("%s: %w", b.name, err)
				return
			}
		}
		for _, l := range valid {
			if _, err := io.WriteString(stdin, l+"\n"); err != nil {
				written <- err
				return
			}
		}
		written <- nil
	}()

	got := answers(t, stdout, len(bad)+4, 4<<20)
	require.NoError(t, <-written)
	require.Len(t, got, len(bad)+4, "one answer per bad frame and per request")
	for i, b := range bad {
		e, ok := got[i]["error"].(map[string]any)
		require.True(t, ok, "%s: %v", b.name, got[i])
		require.Equal(t, b.code, e["code"], "%s: %v", b.name, got[i])
		require.Equal(t, b.id, got[i]["id"], "%s: %v", b.name, got[i])
	}
	require.Contains(t, got[len(bad)-1]["error"].(map[string]any)["message"], strconv.Itoa(mcpserver.MaxLine))
	byID := map[string]map[string]any{}
	for _, m := range got[len(bad):] {
		byID[fmt.Sprint(m["id"])] = m
	}
	require.NotNil(t, byID["10"]["result"], "initialize answered: %v", byID)
	tools := byID["11"]["result"].(map[string]any)["tools"].([]any)
	require.NotEmpty(t, tools)
	// The SDK's resource-not-found error quoted this URI as Go, not JSON,
	// and its answer failed to encode, ending the session.
	require.NotNil(t, byID["res"]["error"], "%v", byID["res"])
	require.Nil(t, byID["status"]["result"].(map[string]any)["isError"], "%v", byID["status"])

	// Neither long line was held whole: the peak resident size stays far
	// below either.
	peak := peakRSS(t, cmd.Process.Pid)
	t.Logf("awr-mcp peak resident size after %d MiB of over-long lines: %d KiB", (50<<20+noNewline)>>20, peak>>10)
	require.Less(t, peak, int64(64<<20))

	require.NoError(t, stdin.Close())
	require.NoError(t, cmd.Wait(), "the server ends cleanly with its input")
}

// TestLineWithoutNewlineAtEnd: input that ends inside an over-long line
// gets its one answer and the server exits cleanly.
func TestLineWithoutNewlineAtEnd(t *testing.T) {
	awr, bin := binaries(t)
	dir := project(t, awr)
	var in bytes.Buffer
	in.WriteString(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	in.Write(bytes.Repeat([]byte("x"), mcpserver.MaxLine+1))
	cmd := exec.Command(bin, "--project", dir)
	cmd.Stdin = &in
	out, err := cmd.Output()
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, 2, "%s", out)
	for _, l := range lines {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		if m["id"] == nil {
			require.EqualValues(t, -32600, m["error"].(map[string]any)["code"])
		} else {
			require.EqualValues(t, 1, m["id"])
		}
	}
}

// line writes s and a newline.
func line(s string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, s+"\n")
		return err
	}
}

// long writes head, n bytes of 'A' in 1 MiB writes, then tail.
func long(w io.Writer, head string, n int, tail string) error {
	if _, err := io.WriteString(w, head); err != nil {
		return err
	}
	chunk := bytes.Repeat([]byte("A"), 1<<20)
	for n > 0 {
		c := chunk[:min(n, len(chunk))]
		if _, err := w.Write(c); err != nil {
			return err
		}
		n -= len(c)
	}
	_, err := io.WriteString(w, tail)
	return err
}

// peakRSS is the process's peak resident set size (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc on this system: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			require.NoError(t, err, l)
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}
