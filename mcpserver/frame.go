package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"time"
)

// JSON-RPC 2.0 error codes of messages that never reach the protocol.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
)

// maxFrame bounds one inbound message (the SDK's own default).
const maxFrame = 16 << 20

// lockedWriter serializes whole writes: the SDK writes each message in
// one call, and so do the error answers of framed. Each response written
// is crossed off pending (when set).
type lockedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	pending *pending
}

// Write writes p whole.
func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	n, err := l.w.Write(p)
	l.mu.Unlock()
	if l.pending != nil {
		if err != nil {
			l.pending.abandon()
		} else {
			l.pending.answered(p)
		}
	}
	return n, err
}

// Close does nothing: stdout stays open for the process.
func (l *lockedWriter) Close() error { return nil }

// framed reads newline-delimited messages from in and passes on only those
// that are one JSON-RPC 2.0 object; every other line (not JSON, a number,
// a batch array, no "jsonrpc": "2.0", an id that is neither a string nor a
// number) is answered on out with a JSON-RPC error (-32700 or -32600) and
// dropped, so a malformed message never stops the server and a truncated
// one never swallows the next.
//
// When in ends, the server sees the end only once every request it was
// passed has been answered (p, when not nil, counts them): a host that
// closes the server's input to shut it down, or a script that pipes its
// requests in, gets every answer, and a write in flight finishes first.
func framed(in io.Reader, out io.Writer, p *pending) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 0, 64<<10), maxFrame)
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			if id, code, msg := checkFrame(line); code != 0 {
				answer(out, id, code, msg)
				continue
			}
			if p != nil {
				p.read(line)
			}
			if _, err := pw.Write(append(append([]byte{}, line...), '\n')); err != nil {
				return
			}
		}
		if err := sc.Err(); err != nil {
			answer(out, nil, rpcParseError, "Parse error: "+err.Error())
		}
		if p != nil {
			p.wait(drainIdle)
		}
		pw.Close()
	}()
	return pr
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
// the request it cancels, which gets no answer.
func (p *pending) read(line []byte) {
	var m message
	if json.Unmarshal(line, &m) != nil || m.Method == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if *m.Method == "notifications/cancelled" {
		p.cross(idKey(m.Params.RequestID))
		return
	}
	if k := idKey(m.ID); k != "" {
		p.ids[k]++
	}
}

// answered crosses off the request a response written answers.
func (p *pending) answered(b []byte) {
	var m message
	if json.Unmarshal(b, &m) != nil || m.Method != nil || (m.Result == nil && m.Error == nil) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = time.Now()
	p.cross(idKey(m.ID))
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

// checkFrame returns 0 for a line that is one JSON-RPC 2.0 message, else
// the error code and message to answer with, and the id to answer to.
func checkFrame(line []byte) (json.RawMessage, int, string) {
	if !json.Valid(line) {
		return nil, rpcParseError, "Parse error: the message is not JSON"
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		return nil, rpcInvalidRequest, "Invalid Request: a message is one JSON object (batches are not supported)"
	}
	id, hasID := obj["id"]
	if hasID {
		if t := bytes.TrimSpace(id); len(t) == 0 || !(t[0] == '"' || t[0] == '-' || (t[0] >= '0' && t[0] <= '9') || string(t) == "null") {
			return nil, rpcInvalidRequest, "Invalid Request: id must be a string or a number"
		}
	}
	var version string
	if err := json.Unmarshal(obj["jsonrpc"], &version); err != nil || version != "2.0" {
		return id, rpcInvalidRequest, `Invalid Request: "jsonrpc" must be "2.0"`
	}
	_, hasMethod := obj["method"]
	_, hasResult := obj["result"]
	_, hasError := obj["error"]
	if !hasMethod && !(hasID && (hasResult || hasError)) {
		return id, rpcInvalidRequest, "Invalid Request: neither a request, a notification nor a response"
	}
	return nil, 0, ""
}

// answer writes one JSON-RPC error response.
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
	out.Write(append(b, '\n'))
}
