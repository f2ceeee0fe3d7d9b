package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzFrame feeds any bytes to the frame reader, followed by one valid
// request: it never panics, answers or passes on each line at most once
// (an over-long line too: the bound is 64 bytes here), passes on only
// what the SDK decodes, answers with a JSON-RPC error each time, and
// still passes on the valid request at the end.
func FuzzFrame(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":7,"method":7}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}`,
		`{"jsonrpc":"2.0","id":"a","method":"x","params":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
		"garbage\n42\n[]\n{}\r\n\n",
		`{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"}",
		`{"jsonrpc":"2.0","id":1,"method":"ping","id":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","ID":2,"Method":"x"}`,
	} {
		f.Add([]byte(seed))
	}
	const max = 64
	final := []byte(`{"jsonrpc":"2.0","id":"last","method":"ping"}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := append(append(append([]byte{}, data...), '\n'), final...)
		lines := bytes.Count(in, []byte("\n")) + 1
		var out bytes.Buffer
		r := framedMax(bytes.NewReader(in), &out, nil, max)
		passed, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		var got [][]byte
		for _, l := range bytes.Split(passed, []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			if _, err := jsonrpc.DecodeMessage(l); err != nil {
				t.Fatalf("passed on a line the SDK cannot decode: %q: %v", l, err)
			}
			got = append(got, l)
		}
		if len(got) == 0 || !bytes.Equal(got[len(got)-1], final) {
			t.Fatalf("the valid request at the end was not passed on last: %q", passed)
		}
		answers := bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n"))
		if out.Len() == 0 {
			answers = nil
		}
		if len(got)+len(answers) > lines {
			t.Fatalf("%d lines, %d passed on and %d answered", lines, len(got), len(answers))
		}
		for _, a := range answers {
			var m struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(a, &m); err != nil || m.JSONRPC != "2.0" || m.Error == nil || m.Error.Message == "" ||
				(m.Error.Code != rpcParseError && m.Error.Code != rpcInvalidRequest) {
				t.Fatalf("not a JSON-RPC error answer: %q", a)
			}
			if _, ok := parseID(m.ID); !ok && string(m.ID) != "null" {
				t.Fatalf("answered to an invalid id: %q", a)
			}
		}
	})
}
