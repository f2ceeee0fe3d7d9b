package mcpserver

import (
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

// TestPending: requests are counted by id, answers and cancellations
// cross them off, notifications and the client's own responses are not
// counted.
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
	require.Equal(t, map[string]int{"n1": 1, "sa": 2}, p.ids)
	p.answered([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`))
	p.answered([]byte(`{"jsonrpc":"2.0","id":"a","result":{}}`))
	p.answered([]byte(`{"jsonrpc":"2.0","id":1.0,"error":{"code":-1,"message":"x"}}`))
	require.Equal(t, map[string]int{"sa": 1}, p.ids)
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
