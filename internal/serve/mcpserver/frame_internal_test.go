package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestIDKey(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		`1`: "n1", ` 1 `: "n1", `1.0`: "n1", `1e0`: "n1", `-7`: "n-7", `"1"`: "s1", `"a\"b"`: `sa"b`,
		``: "", `null`: "", `1.5`: "", `{"x":1}`: "", `"unterminated`: "",
	} {
		require.Equal(t, want, idKey(json.RawMessage(raw)), "id %s", raw)
	}
}

// TestPending: requests are counted by id (a second request with the id
// of one in flight is refused), answers and cancellations cross them off,
// notifications and the client's own responses are not counted.
func TestPending(t *testing.T) {
	t.Parallel()
	p := newPending()
	for _, l := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":9,"result":{}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`,
	} {
		p.read([]byte(l))
	}
	require.Equal(t, map[string]int{"n1": 1, "sa": 1}, p.ids)
	p.answered([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`))
	p.answered([]byte(`{"jsonrpc":"2.0","id":"a","result":{}}`))
	require.Equal(t, map[string]int{"n1": 1}, p.ids)
	p.answered([]byte(`{"jsonrpc":"2.0","id":1.0,"error":{"code":-1,"message":"x"}}`))
	require.Empty(t, p.ids)
}

// TestFramed_DrainsBeforeEOF: the server reads the end of its input only
// after every request passed to it has been answered, or after the idle
// bound when one never is.
func TestFramed_DrainsBeforeEOF(t *testing.T) {
	t.Parallel()
	p := newPending()
	out := &lockedWriter{w: io.Discard, pending: p}
	r := framed(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"), out, p)
	buf := make([]byte, 1024)
	n, err := r.Read(buf)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(buf[:n], []byte(`{"jsonrpc":"2.0","id":1`)))
	eof := make(chan error, 1)
	go func() { _, err := r.Read(buf); eof <- err }()
	select {
	case err := <-eof:
		t.Fatalf("end of input seen before the answer: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	_, err = out.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"))
	require.NoError(t, err)
	require.ErrorIs(t, <-eof, io.EOF)

	// An answer that never comes: the wait ends after the idle bound.
	q := newPending()
	q.read([]byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`))
	start := time.Now()
	q.wait(50 * time.Millisecond)
	require.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)

	// A failed output ends the wait at once.
	g := newPending()
	g.read([]byte(`{"jsonrpc":"2.0","id":3,"method":"ping"}`))
	done := make(chan struct{})
	go func() { g.wait(time.Hour); close(done) }()
	(&lockedWriter{w: failing{}, pending: g}).Write([]byte("{}\n"))
	<-done
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

// TestCheckFrame: each line either passes (the SDK decodes it to the same
// id and method) or gets the error it is answered with, to the id it is
// answered to.
func TestCheckFrame(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		line string
		code int
		to   string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, 0, ""},
		{`{"jsonrpc":"2.0","id":"a","method":"ping","params":{}}`, 0, ""},
		{`{"jsonrpc":"2.0","id":-9007199254740992,"method":"ping"}`, 0, ""},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, ""},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, 0, ""},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}`, 0, ""},
		{`nope`, rpcParseError, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"`, rpcParseError, ""},
		{`42`, rpcInvalidRequest, ""},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, rpcInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, rpcInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, rpcInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":1.0,"method":"ping"}`, rpcInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":1e0,"method":"ping"}`, rpcInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, rpcInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, rpcInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, rpcInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, rpcInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":7,"method":7}`, rpcInvalidRequest, "7"},
		{`{"jsonrpc":"2.0","id":7,"method":null}`, rpcInvalidRequest, "7"},
		{`{"jsonrpc":"2.0","id":7,"method":{"a":1}}`, rpcInvalidRequest, "7"},
		{`{"jsonrpc":"2.0","method":7}`, rpcInvalidRequest, ""},
		{`{"id":7,"method":"ping"}`, rpcInvalidRequest, "7"},
		{`{"jsonrpc":"1.0","id":"x","method":"ping"}`, rpcInvalidRequest, `"x"`},
		{`{"jsonrpc":"2.0"}`, rpcInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":1}`, rpcInvalidRequest, ""},
		{`{"jsonrpc":"2.0","result":{}}`, rpcInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":1,"error":5}`, rpcInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":1.5}}`, rpcInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":2,"method":"ping","params":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`, rpcInvalidRequest, "2"},
	} {
		to, code, msg := checkFrame([]byte(c.line))
		require.Equal(t, c.code, code, "%.80s: %s", c.line, msg)
		require.Equal(t, c.to, string(to), "%.80s", c.line)
		if code != 0 {
			require.NotEmpty(t, msg)
		}
	}
}

// TestLineReader: lines come back whole up to the bound; a longer one is
// reported once, as soon as it crosses the bound, and skipped to its
// newline; a last line without a newline still counts.
func TestLineReader(t *testing.T) {
	t.Parallel()
	const max = 10
	long := strings.Repeat("y", 1<<20)
	in := "a\n" + strings.Repeat("x", max-1) + "\r\n" + strings.Repeat("w", max) + "\n" + strings.Repeat("z", max+1) + "\n\n" + long + "\nb\n" + long + long + "\nc"
	lr := newLineReader(strings.NewReader(in), max)
	lr.r = bufio.NewReaderSize(strings.NewReader(in), 16) // chunks smaller than a line
	var got []string
	for {
		line, tooLong, err := lr.next()
		if err != nil {
			require.ErrorIs(t, err, io.EOF)
			break
		}
		if tooLong {
			got = append(got, "LONG")
			continue
		}
		got = append(got, string(line))
	}
	require.Equal(t, []string{"a", strings.Repeat("x", max-1) + "\r", strings.Repeat("w", max), "LONG", "", "LONG", "b", "LONG", "c"}, got)

	// Input that ends inside an over-long line: one report, then the end.
	lr = newLineReader(strings.NewReader(long), max)
	_, tooLong, err := lr.next()
	require.NoError(t, err)
	require.True(t, tooLong)
	_, _, err = lr.next()
	require.ErrorIs(t, err, io.EOF)
}

// TestPending_DuplicateID: a request whose id is that of one not answered
// yet is not passed on (the SDK would drop it silently); once answered,
// the id is free again.
func TestPending_DuplicateID(t *testing.T) {
	t.Parallel()
	p := newPending()
	req := []byte(`{"jsonrpc":"2.0","id":"d","method":"ping"}`)
	require.True(t, p.read(req))
	require.False(t, p.read(req))
	require.True(t, p.read([]byte(`{"jsonrpc":"2.0","id":"e","method":"ping"}`)))
	p.answered([]byte(`{"jsonrpc":"2.0","id":"d","result":{}}`))
	require.True(t, p.read(req))

	var out bytes.Buffer
	lw := &lockedWriter{w: &out, pending: newPending()}
	r := framed(strings.NewReader(string(req)+"\n"+string(req)+"\n"), lw, lw.pending)
	buf := make([]byte, 256)
	n, err := r.Read(buf)
	require.NoError(t, err)
	require.Equal(t, string(req)+"\n", string(buf[:n]))
	// The second is answered by framed itself.
	require.Eventually(t, func() bool { return strings.Contains(written(lw, &out), `"code":-32600`) }, time.Minute, time.Millisecond)
	lw.Write([]byte(`{"jsonrpc":"2.0","id":"d","result":{}}` + "\n"))
	_, err = r.Read(buf)
	require.ErrorIs(t, err, io.EOF)
}

// TestFramed_OwnAnswersCrossNothing: framed's error answer to a bad line
// that reuses the id of a request in flight neither carries that id nor
// crosses the request off.
func TestFramed_OwnAnswersCrossNothing(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	lw := &lockedWriter{w: &out, pending: newPending()}
	in := `{"jsonrpc":"2.0","id":7,"method":"ping"}` + "\n" + `{"jsonrpc":"1.0","id":7,"method":"ping"}` + "\n"
	r := framed(strings.NewReader(in), lw, lw.pending)
	buf := make([]byte, 256)
	_, err := r.Read(buf)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return strings.Contains(written(lw, &out), `"code":-32600`) }, time.Minute, time.Millisecond)
	require.Contains(t, written(lw, &out), `"id":null`)
	require.True(t, lw.pending.busy(json.RawMessage("7")), "the request passed on is still waited for")
	lw.Write([]byte(`{"jsonrpc":"2.0","id":7,"result":{}}` + "\n"))
	_, err = r.Read(buf)
	require.ErrorIs(t, err, io.EOF)
}

// written is what lw has written to out so far.
func written(lw *lockedWriter, out *bytes.Buffer) string {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return out.String()
}
