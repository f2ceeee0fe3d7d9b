package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"time"
)

// FuzzServe feeds any bytes to a running server (the SDK behind the frame
// reader, on a project not initialized yet), each input followed by a
// ping: the server never stops and answers every ping, whatever came
// before it. It found that an error answer could fail to encode and end
// the session (resources/read of a URI with a control character).
func FuzzServe(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"\u0000"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"\u0007"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"\u0000","arguments":{"\u0000":"\u0000"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"awr_status","arguments":{"x":"\u0000"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\u0000"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"\u0000"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"probe"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1e400,"method":7}`,
	} {
		f.Add([]byte(seed))
	}
	in, inW := io.Pipe()
	outR, out := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, Options{Project: f.TempDir(), Version: "fuzz"}, in, out) }()
	f.Cleanup(func() {
		cancel()
		inW.Close()
		outR.Close()
		<-done
	})
	answers := make(chan map[string]json.RawMessage, 64)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				answers <- m
			}
		}
		close(answers)
	}()
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}`)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// The probes' ids hold a nonce, so no input can take one in advance.
	nonce := fmt.Sprintf("%x", rand.Uint64())
	n := 0
	f.Fuzz(func(t *testing.T, data []byte) {
		n++
		probe := fmt.Sprintf(`"probe-%s-%d"`, nonce, n)
		go func() {
			inW.Write(append(data, '\n'))
			fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%s,"method":"ping"}`+"\n", probe)
		}()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case m, ok := <-answers:
				if !ok {
					t.Fatalf("the server stopped after %q: %v", data, <-done)
				}
				if string(m["id"]) == probe {
					return
				}
			case <-timeout:
				t.Fatalf("no answer to the ping after %q", data)
			}
		}
	})
}
