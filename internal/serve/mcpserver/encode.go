package mcpserver

import (
	"context"
	"encoding/json"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tool's answer is its result as JSON twice: as structured content and,
// escaped, as text (a status of 150 items is 36 KB, 81 KB on the wire).
// The SDK encodes it in layers, and encoding/json validates and compacts
// again what each layer's MarshalJSON returns: the structured content and
// the text inside CallToolResult.MarshalJSON, the whole result when the
// response is made, and once more when the message is written. Through a
// warm server that was most of a status call's time
// (docs/notes/benchmarks.md, "The resident path: each answer encoded
// once"). Here a tool's result reaches the SDK as a plain struct
// (toolAnswer), which encoding/json writes in one pass (the text
// escaped, the structured content compacted once), and on stdio the
// response is written around the result's bytes as they are.

// toolAnswer is a tool's result as the SDK's CallToolResult encodes it,
// with no MarshalJSON of its own: the same JSON value, written in one
// pass. (The text's <, > and & are written as they are, where the SDK's
// TextContent writes them \u003c, \u003e and \u0026: the same string.)
type toolAnswer struct {
	mcp.ResultBase
	Content           []textAnswer    `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

// textAnswer is a text content as the SDK writes one.
type textAnswer struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// encodeResults is a receiving middleware that hands the SDK each tool
// result as a toolAnswer (answerOf), leaving to it any result it would
// encode otherwise: one with _meta or input requests, a call that
// carries _meta (the newer protocol annotates its answer), content other
// than plain text.
func encodeResults(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "tools/call" {
			return res, err
		}
		r, ok := res.(*mcp.CallToolResult)
		if !ok {
			return res, err
		}
		if call, ok := req.(*mcp.CallToolRequest); !ok || call.Params == nil || call.Params.Meta != nil {
			return res, err
		}
		if a := answerOf(r); a != nil {
			return a, nil
		}
		return res, err
	}
}

// answerOf returns r as a toolAnswer when r is what the tools answer:
// text contents and structured content encoded already (or none),
// nothing else; nil for any other result.
func answerOf(r *mcp.CallToolResult) *toolAnswer {
	if r.Meta != nil || r.InputRequests != nil || r.RequestState != "" {
		return nil
	}
	a := &toolAnswer{Content: make([]textAnswer, 0, len(r.Content)), IsError: r.IsError}
	for _, c := range r.Content {
		text, ok := c.(*mcp.TextContent)
		if !ok || text.Meta != nil || text.Annotations != nil {
			return nil
		}
		a.Content = append(a.Content, textAnswer{Type: "text", Text: text.Text})
	}
	switch s := r.StructuredContent.(type) {
	case nil:
	case json.RawMessage:
		if len(s) == 0 {
			return nil
		}
		a.StructuredContent = s
	default:
		return nil
	}
	return a
}

// lineTransport is the SDK's newline-delimited transport on stdio
// (mcp.IOTransport) whose connection writes a successful response
// itself, around its result's bytes as the SDK made them (compact JSON,
// from its own encoder): the SDK would validate and compact them once
// more. Every other message is the SDK's to write. Batches, the one
// thing the SDK's writer does besides, never reach the server here:
// framed answers a batch with an error.
type lineTransport struct {
	io *mcp.IOTransport
	w  io.Writer // the transport's writer, which writes each message whole
}

// Connect connects the SDK's transport and wraps its connection.
func (t *lineTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.io.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &lineConn{Connection: c, w: t.w}, nil
}

// lineConn is lineTransport's connection.
type lineConn struct {
	mcp.Connection
	w io.Writer
}

// Write writes msg: a successful response as its bytes, the rest through
// the SDK's connection.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error != nil || len(resp.Result) == 0 || !resp.ID.IsValid() {
		return c.Connection.Write(ctx, msg)
	}
	// As the SDK's: no write once the call's context is done.
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	id, err := marshal(resp.ID.Raw())
	if err != nil {
		return c.Connection.Write(ctx, msg)
	}
	b := make([]byte, 0, len(resp.Result)+len(id)+40)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, resp.Result...)
	b = append(b, "}\n"...)
	_, err = c.w.Write(b)
	return err
}
