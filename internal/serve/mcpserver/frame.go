package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/awr-dev/awr/internal/secret"
)

// JSON-RPC 2.0 error codes of messages that never reach the protocol.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
)

// MaxLine bounds one inbound message: a line longer than this many bytes
// (its newline aside) is never held whole; it is answered with an
// Invalid Request error as soon as it crosses the bound and its bytes
// are discarded up to the next newline, so the session goes on.
const MaxLine = 4 << 20

// maxID is the largest integer id answered by its own value: the SDK
// decodes a numeric id as a float64, which holds every integer up to
// 2^53 exactly and no longer all of those beyond.
const maxID = 1 << 53

// lockedWriter serializes whole writes: the SDK writes each message in
// one call, and so do the error answers of framed. Each response is
// crossed off pending (when set) before it is written, so a client that
// reuses an id once it has its answer is never told the id is taken.
type lockedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	pending *pending
}

// Write writes p whole. A JSON-RPC error answer is written with every
// credential in it withheld (secret.Redact): the SDK's own errors quote
// what they refused (an unknown tool's name, a params value), and a
// secret given there must not come back.
func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending != nil {
		l.pending.answered(p)
	}
	out := p
	if bytes.Contains(p, []byte(`"error":`)) {
		if r := secret.Redact(string(p)); r != string(p) {
			out = []byte(r)
		}
	}
	n, err := l.w.Write(out)
	if err != nil && l.pending != nil {
		l.pending.abandon()
	}
	if err == nil && n == len(out) {
		n = len(p)
	}
	return n, err
}

// flush returns once no write is in flight.
func (l *lockedWriter) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
}

// Close does nothing: stdout stays open for the process.
func (l *lockedWriter) Close() error { return nil }

// framed reads newline-delimited messages from in and passes on only those
// the SDK can decode as one JSON-RPC 2.0 message; every other line is
// answered on out with a JSON-RPC error and dropped, so a malformed
// message never stops the server and a truncated one never swallows the
// next:
//
//   - not JSON: -32700 Parse error;
//   - longer than MaxLine bytes: -32600, dropped unread (see lineReader);
//   - a number, a string, a batch array, no "jsonrpc": "2.0", an id that
//     is not a string or an integer of at most 2^53 in magnitude written
//     as one (null, 1.5, 1e400, 1.0, {}), a method that is not a string,
//     neither a request nor a response, or an id still in use by a
//     request not answered yet: -32600 Invalid Request.
//
// Each line gets at most one answer from framed, and none when it is
// passed on. An answer carries the message's id when that id is valid,
// the message is a request and no request of that id is in flight, null
// otherwise (as JSON-RPC 2.0 says for an id that cannot be read).
//
// When in ends, the server sees the end only once every request it was
// passed has been answered (p, when not nil, counts them): a host that
// closes the server's input to shut it down, or a script that pipes its
// requests in, gets every answer, and a write in flight finishes first.
func framed(in io.Reader, out io.Writer, p *pending) io.ReadCloser {
	return framedMax(in, out, p, MaxLine)
}

// framedMax is framed with lines bounded to max bytes.
func framedMax(in io.Reader, out io.Writer, p *pending, max int) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		lr := newLineReader(in, max)
		for {
			line, long, err := lr.next()
			if err != nil {
				break
			}
			if long {
				answer(out, nil, rpcInvalidRequest, fmt.Sprintf("Invalid Request: a message is at most %d bytes; this line is longer and was dropped", max))
				continue
			}
			line = bytes.TrimSpace(line)
			if len(line) == 0 {
				continue
			}
			if id, code, msg := checkFrame(line); code != 0 {
				if p != nil && p.busy(id) {
					id = nil // the answer would seem to be that request's
				}
				answer(out, id, code, msg)
				continue
			}
			if p != nil && !p.read(line) {
				answer(out, nil, rpcInvalidRequest, "Invalid Request: this id belongs to a request not answered yet; use another")
				continue
			}
			if _, err := pw.Write(append(append([]byte{}, line...), '\n')); err != nil {
				return
			}
		}
		if p != nil {
			p.wait(drainIdle)
		}
		pw.Close()
	}()
	return pr
}

// lineReader reads lines of at most max bytes through a fixed buffer: a
// longer line is reported as soon as it crosses max, and its remaining
// bytes are read and thrown away up to the next newline, never held, so
// memory stays bounded whatever the input.
type lineReader struct {
	r    *bufio.Reader
	max  int
	buf  []byte
	skip bool  // the line being read was reported too long: discard to its end
	err  error // the error to return once the line before it was returned
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its newline (the last line need not
// end with one), or long true (and no line) for a line longer than max.
// The line is valid until the next call. The error is the input's: io.EOF
// at its end.
func (l *lineReader) next() (line []byte, long bool, err error) {
	for l.skip && l.err == nil {
		_, err := l.r.ReadSlice('\n')
		switch err {
		case nil:
			l.skip = false
		case bufio.ErrBufferFull:
		default:
			l.err = err
		}
	}
	if l.err != nil {
		return nil, false, l.err
	}
	l.buf = l.buf[:0]
	for {
		chunk, err := l.r.ReadSlice('\n')
		body := chunk
		if err == nil {
			body = chunk[:len(chunk)-1]
		}
		if len(l.buf)+len(body) > l.max {
			switch err {
			case nil:
			case bufio.ErrBufferFull:
				l.skip = true
			default:
				l.err = err
			}
			return nil, true, nil
		}
		l.buf = append(l.buf, body...)
		switch err {
		case nil:
			return l.buf, false, nil
		case bufio.ErrBufferFull:
			continue
		}
		if len(l.buf) == 0 {
			return nil, false, err
		}
		l.err = err
		return l.buf, false, nil
	}
}

// drainIdle bounds the wait for answers after the input ends: the server
// stops once this long has passed without one being written.
const drainIdle = time.Minute

// pending counts the requests passed to the server that it has not
// answered yet, by id.
type pending struct {
	mu   sync.Mutex
	ids  map[string]int
	gone bool // the output failed: no answer can arrive any more
	cond *sync.Cond
	last time.Time // when the latest answer was written
}

func newPending() *pending {
	p := &pending{ids: map[string]int{}}
	p.cond = sync.NewCond(&p.mu)
	return p
}

// message is what pending reads of a JSON-RPC message.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method *string         `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

// read counts a request passed to the server; a cancellation crosses off
// the request it cancels, which gets no answer. It reports false, and
// counts nothing, for a request whose id is that of a request not
// answered yet: the SDK would drop it without an answer.
func (p *pending) read(line []byte) bool {
	var m message
	if json.Unmarshal(line, &m) != nil || m.Method == nil {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if *m.Method == "notifications/cancelled" {
		p.cross(idKey(m.Params.RequestID))
		return true
	}
	k := idKey(m.ID)
	if k == "" {
		return true
	}
	if p.ids[k] > 0 {
		return false
	}
	p.ids[k]++
	return true
}

// busy reports whether a request with id is passed on and not answered.
func (p *pending) busy(id json.RawMessage) bool {
	k := idKey(id)
	p.mu.Lock()
	defer p.mu.Unlock()
	return k != "" && p.ids[k] > 0
}

// answered crosses off the request a response written answers.
func (p *pending) answered(b []byte) {
	id, ok := responseID(b)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = time.Now()
	p.cross(idKey(id))
}

// responseID returns the id of b when b is a JSON-RPC response (a result
// or an error, no method), reading no further than it must: the SDK and
// lineConn write the id before the result, so a tool's answer of 80 KB
// is read up to its "result" key only. A message that is not one JSON
// object, or has a method, is no response.
func responseID(b []byte) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var id json.RawMessage
	answer := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var v json.RawMessage
		switch t {
		case "method":
			return nil, false
		case "result", "error":
			if id != nil {
				return id, true
			}
			answer = true
		}
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		if t == "id" {
			id = v
		}
	}
	if !answer || id == nil {
		return nil, false
	}
	return id, true
}

// cross removes one request of id k; the caller holds p.mu.
func (p *pending) cross(k string) {
	if k == "" || p.ids[k] == 0 {
		return
	}
	if p.ids[k]--; p.ids[k] == 0 {
		delete(p.ids, k)
	}
	p.cond.Broadcast()
}

// abandon stops every wait: the output is gone.
func (p *pending) abandon() {
	p.mu.Lock()
	p.gone = true
	p.mu.Unlock()
	p.cond.Broadcast()
}

// wait returns once every request counted has been answered, the output
// failed, or idle has passed since the latest answer (or since the wait
// began).
func (p *pending) wait(idle time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = time.Now()
	// The timer takes the lock before it wakes the wait, so its wake-up
	// cannot fall between the check below and the Wait.
	stop := time.AfterFunc(idle, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.cond.Broadcast()
	})
	defer stop.Stop()
	for len(p.ids) > 0 && !p.gone {
		since := time.Since(p.last)
		if since >= idle {
			return
		}
		stop.Reset(idle - since)
		p.cond.Wait()
	}
}

// idKey is a request id as the server answers it: a string, or an integer
// (the SDK's two kinds of id), in one spelling; "" for none (a
// notification, null, or an id the server does not answer by).
func idKey(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return ""
		}
		return "s" + s
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		// 1.0 and 1e0 are the integer 1 to a JSON decoder.
		f, ferr := strconv.ParseFloat(string(raw), 64)
		if ferr != nil || f != float64(int64(f)) {
			return ""
		}
		n = int64(f)
	}
	return "n" + strconv.FormatInt(n, 10)
}

// checkFrame returns 0 for a line the SDK decodes as one JSON-RPC 2.0
// message with the id and method it was sent with, else the error code
// and message to answer with, and the id to answer to (nil for null).
func checkFrame(line []byte) (json.RawMessage, int, string) {
	if !json.Valid(line) {
		return nil, rpcParseError, "Parse error: the message is not JSON"
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		return nil, rpcInvalidRequest, "Invalid Request: a message is one JSON object (batches are not supported)"
	}
	rawID, hasID := obj["id"]
	id, ok := parseID(rawID)
	if hasID && !ok {
		return nil, rpcInvalidRequest, "Invalid Request: id must be a string or an integer from -2^53 to 2^53 written without fraction or exponent"
	}
	rawMethod, hasMethod := obj["method"]
	var to json.RawMessage
	if hasID && hasMethod {
		to = rawID // a request: its error answers its id
	}
	var version string
	if err := json.Unmarshal(obj["jsonrpc"], &version); err != nil || version != "2.0" {
		return to, rpcInvalidRequest, `Invalid Request: "jsonrpc" must be "2.0"`
	}
	var method string
	if hasMethod && (bytes.Equal(bytes.TrimSpace(rawMethod), []byte("null")) || json.Unmarshal(rawMethod, &method) != nil) {
		return to, rpcInvalidRequest, "Invalid Request: method must be a string"
	}
	_, hasResult := obj["result"]
	_, hasError := obj["error"]
	if !hasMethod && !(hasID && (hasResult || hasError)) {
		return nil, rpcInvalidRequest, "Invalid Request: neither a request, a notification nor a response"
	}
	// The SDK's own decoder has the last word: whatever it would fail on
	// (and stop the session for) is answered here instead, and so is a
	// message it reads differently from the checks above.
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return to, rpcInvalidRequest, "Invalid Request: " + err.Error()
	}
	var got jsonrpc.ID
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if !hasMethod || m.Method != method {
			return to, rpcInvalidRequest, "Invalid Request: the method is ambiguous"
		}
		got = m.ID
	case *jsonrpc.Response:
		if hasMethod {
			return to, rpcInvalidRequest, "Invalid Request: the method is ambiguous"
		}
		got = m.ID
	}
	if got.Raw() != id {
		return nil, rpcInvalidRequest, "Invalid Request: the id is ambiguous"
	}
	return nil, 0, ""
}

// parseID returns the value of a JSON-RPC id as the SDK holds it (a
// string, or an int64 for a number), and false for any id the SDK would
// answer by another value or not at all: null, a fraction, an exponent,
// an integer beyond 2^53, anything but a string or a number. A missing id
// is (nil, false).
func parseID(raw json.RawMessage) (any, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		return s, true
	}
	if bytes.ContainsAny(raw, ".eE") {
		return nil, false
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n > maxID || n < -maxID {
		return nil, false
	}
	return n, true
}

// answer writes one JSON-RPC error response of framed's own: through a
// lockedWriter it crosses off no request passed on.
func answer(out io.Writer, id json.RawMessage, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	if err != nil {
		return
	}
	b = append(b, '\n')
	if l, ok := out.(*lockedWriter); ok {
		l.mu.Lock()
		defer l.mu.Unlock()
		if _, err := l.w.Write(b); err != nil && l.pending != nil {
			l.pending.abandon()
		}
		return
	}
	out.Write(b)
}
