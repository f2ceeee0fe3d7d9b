package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// TestAnswerOf_SameJSONAsTheSDK: a tool's result handed to the SDK as a
// toolAnswer encodes to the same JSON value as the SDK's own encoding of
// it (CallToolResult.MarshalJSON), answers and errors alike, with text
// that encoding/json escapes; a result the tools never make is left to
// the SDK.
func TestAnswerOf_SameJSONAsTheSDK(t *testing.T) {
	t.Parallel()
	type answer struct {
		Text string            `json:"text"`
		N    int               `json:"n"`
		Map  map[string]string `json:"map"`
		Nil  []string          `json:"nil"`
	}
	ok, err := okResult(&answer{Text: "<b> & \"quoted\" \\ \u2028 é\n\t\x01", N: 7, Map: map[string]string{"z": "1", "a": "<"}}, nil)
	require.NoError(t, err)
	partial := errorResult(fault.New(fault.BudgetExceeded, "context compile: over budget <%d>", 5).WithHint("awr context compile --budget 9000"), &answer{N: 1})
	for name, r := range map[string]*mcp.CallToolResult{
		"ok":          ok,
		"error":       errorResult(errors.New("boom & <bust>"), nil),
		"partial":     partial,
		"no content":  {Content: []mcp.Content{}, StructuredContent: json.RawMessage(`{"a":1}`)},
		"two texts":   {Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}}},
		"empty text":  {Content: []mcp.Content{&mcp.TextContent{}}},
		"is error, 0": {Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, IsError: true},
	} {
		a := answerOf(r)
		require.NotNil(t, a, name)
		got, err := json.Marshal(a)
		require.NoError(t, err, name)
		want, err := json.Marshal(r)
		require.NoError(t, err, name)
		var g, w any
		require.NoError(t, json.Unmarshal(got, &g), name)
		require.NoError(t, json.Unmarshal(want, &w), name)
		require.Equal(t, w, g, name)
		// The SDK's client reads it back as the same result.
		var back mcp.CallToolResult
		require.NoError(t, json.Unmarshal(got, &back), name)
		require.Equal(t, r.IsError, back.IsError, name)
		require.Len(t, back.Content, len(r.Content), name)
	}
	for name, r := range map[string]*mcp.CallToolResult{
		"meta":             {Meta: mcp.Meta{"k": "v"}, Content: []mcp.Content{&mcp.TextContent{Text: "a"}}},
		"text meta":        {Content: []mcp.Content{&mcp.TextContent{Text: "a", Meta: mcp.Meta{"k": "v"}}}},
		"image":            {Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1}, MIMEType: "image/png"}}},
		"structured value": {Content: []mcp.Content{&mcp.TextContent{Text: "a"}}, StructuredContent: map[string]any{"a": 1}},
		"request state":    {Content: []mcp.Content{&mcp.TextContent{Text: "a"}}, RequestState: "s"},
	} {
		require.Nil(t, answerOf(r), name)
	}
}

// TestEncodeResults: the middleware hands over a tool's result as a
// toolAnswer, and leaves the SDK's own a call that carries _meta (the
// newer protocol annotates its answer) and every other method's result.
func TestEncodeResults(t *testing.T) {
	t.Parallel()
	res, err := okResult(map[string]int{"a": 1}, nil)
	require.NoError(t, err)
	h := encodeResults(func(context.Context, string, mcp.Request) (mcp.Result, error) { return res, nil })
	ctx := context.Background()
	got, err := h(ctx, "tools/call", &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "awr_status"}})
	require.NoError(t, err)
	require.IsType(t, &toolAnswer{}, got)
	got, err = h(ctx, "tools/call", &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "awr_status", Meta: mcp.Meta{"progressToken": 1}}})
	require.NoError(t, err)
	require.Same(t, res, got)
	got, err = h(ctx, "resources/read", &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: StatusURI}})
	require.NoError(t, err)
	require.Same(t, res, got)
}

// TestLineConn_WritesAsTheSDK: a successful response is written with the
// same bytes the SDK's encoder writes (the id a number or a string that
// encoding/json escapes), one line; an error response goes through the
// SDK's connection.
func TestLineConn_WritesAsTheSDK(t *testing.T) {
	t.Parallel()
	var sdk, ours bytes.Buffer
	ctx := context.Background()
	sdkConn, err := (&mcp.IOTransport{Reader: eofReader{}, Writer: nopCloser{&sdk}}).Connect(ctx)
	require.NoError(t, err)
	conn, err := (&lineTransport{io: &mcp.IOTransport{Reader: eofReader{}, Writer: nopCloser{&ours}}, w: &ours}).Connect(ctx)
	require.NoError(t, err)
	for _, v := range []any{float64(7), "a<b>&\"c\"", float64(-1)} {
		id, err := jsonrpc.MakeID(v)
		require.NoError(t, err)
		result, err := json.Marshal(map[string]any{"content": []any{map[string]string{"type": "text", "text": "<{\"x\":1}>"}}})
		require.NoError(t, err)
		for _, msg := range []jsonrpc.Message{
			&jsonrpc.Response{ID: id, Result: result},
			&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: -32602, Message: "bad <params>"}},
		} {
			sdk.Reset()
			ours.Reset()
			require.NoError(t, sdkConn.Write(ctx, msg))
			require.NoError(t, conn.Write(ctx, msg))
			require.Equal(t, sdk.String(), ours.String())
		}
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	id, _ := jsonrpc.MakeID(float64(1))
	require.ErrorIs(t, conn.Write(done, &jsonrpc.Response{ID: id, Result: json.RawMessage(`{}`)}), context.Canceled)
}

// TestResponseID: a response's id is found whatever its size, from the
// message's head; requests, notifications and what is not one object are
// no response.
func TestResponseID(t *testing.T) {
	t.Parallel()
	big := `{"jsonrpc":"2.0","id":12,"result":{"text":"` + string(bytes.Repeat([]byte("x"), 1<<20)) + `"}}`
	for msg, want := range map[string]string{
		big: "12",
		`{"jsonrpc":"2.0","id":"a","error":{"code":1,"message":"m"}}`: `"a"`,
		`{"result":{},"jsonrpc":"2.0","id":3}`:                        "3",
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`:                    "",
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`:      "",
		`{"jsonrpc":"2.0","id":3}`:                                    "",
		`[{"jsonrpc":"2.0","id":3,"result":{}}]`:                      "",
		`not json`:                                                    "",
	} {
		id, ok := responseID([]byte(msg))
		require.Equal(t, want != "", ok, msg[:min(len(msg), 60)])
		require.Equal(t, want, string(id), msg[:min(len(msg), 60)])
	}
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, errors.New("closed") }

type nopCloser struct{ *bytes.Buffer }

func (nopCloser) Close() error { return nil }

func (eofReader) Close() error { return nil }
