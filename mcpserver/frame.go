package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sync"
)

// JSON-RPC 2.0 error codes of messages that never reach the protocol.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
)

// maxFrame bounds one inbound message (the SDK's own default).
const maxFrame = 16 << 20

// lockedWriter serializes whole writes: the SDK writes each message in
// one call, and so do the error answers of framed.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// Write writes p whole.
func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close does nothing: stdout stays open for the process.
func (l *lockedWriter) Close() error { return nil }

// framed reads newline-delimited messages from in and passes on only those
// that are one JSON-RPC 2.0 object; every other line (not JSON, a number,
// a batch array, no "jsonrpc": "2.0", an id that is neither a string nor a
// number) is answered on out with a JSON-RPC error (-32700 or -32600) and
// dropped, so a malformed message never stops the server and a truncated
// one never swallows the next.
func framed(in io.Reader, out io.Writer) io.ReadCloser {
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
			if _, err := pw.Write(append(append([]byte{}, line...), '\n')); err != nil {
				return
			}
		}
		if err := sc.Err(); err != nil {
			answer(out, nil, rpcParseError, "Parse error: "+err.Error())
		}
		pw.Close()
	}()
	return pr
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
