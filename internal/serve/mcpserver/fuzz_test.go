package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// knownCodes are the codes a tool error may carry when its arguments are
// bad; Internal is not among them.
var knownCodes = map[string]bool{}

func init() {
	for _, c := range []fault.Code{fault.RevisionConflict, fault.ClaimConflict, fault.NotFound, fault.InvalidInput, fault.InvalidTransition,
		fault.DependencyBlocked, fault.SourceStale, fault.SourceConflict, fault.BudgetExceeded, fault.ContextIncomplete, fault.VerifyFailed,
		fault.RuleViolation, fault.Usage} {
		knownCodes[string(c)] = true
	}
}

// FuzzToolArguments calls every tool with arbitrary JSON as its arguments,
// against one real project: each call either succeeds or returns a tool
// error whose code is a domain code (never Internal, never a crash): a
// result with the same object as text and as structured content, an error
// as text alone.
func FuzzToolArguments(f *testing.F) {
	for _, seed := range []struct {
		tool uint8
		args string
	}{
		{0, `{}`},
		{1, `{"limit": "three"}`},
		{3, `{"work": "CART-1", "agent": "a", "claim": true, "ttl_ms": 5}`},
		{4, `{"session": "x", "agent": "a", "digest": "d", "next_action": "n", "open_loops": ["a", ""]}`},
		{5, `{"session": null, "outcome": "completed"}`},
		{10, `{"work": "CART-1", "session": "x", "at": 1}`},
		{12, `{"since": -1, "until": 9223372036854775807, "kind": "nope"}`},
		{2, `[1, 2]`},
		{7, `"text"`},
		{8, `{"at": 1e400}`},
		{9, `{"active": true, "work": "\u0000"}`},
	} {
		f.Add(seed.tool, []byte(seed.args))
	}
	cs := connect(f, initProject(f))
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		f.Fatal(err)
	}
	var tools []string
	for _, tl := range list.Tools {
		tools = append(tools, tl.Name)
	}
	f.Fuzz(func(t *testing.T, tool uint8, args []byte) {
		if !json.Valid(args) {
			return // the client cannot send it; the transport's framing is the SDK's
		}
		name := tools[int(tool)%len(tools)]
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("%s %s: protocol error: %v", name, args, err)
		}
		if len(res.Content) != 1 {
			t.Fatalf("%s %s: %d contents", name, args, len(res.Content))
		}
		text := res.Content[0].(*mcp.TextContent).Text
		var a any
		if err := json.Unmarshal([]byte(text), &a); err != nil {
			t.Fatalf("%s %s: text is not JSON: %s", name, args, text)
		}
		if !res.IsError {
			sc, err := json.Marshal(res.StructuredContent)
			if err != nil {
				t.Fatal(err)
			}
			var b any
			if err := json.Unmarshal(sc, &b); err != nil {
				t.Fatal(err)
			}
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if string(ja) != string(jb) {
				t.Fatalf("%s %s: text and structured content differ:\n%s\n%s", name, args, ja, jb)
			}
			return
		}
		if res.StructuredContent != nil {
			t.Fatalf("%s %s: a tool error with structured content", name, args)
		}
		var obj struct {
			Code    string         `json:"code"`
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
		}
		if err := json.Unmarshal([]byte(text), &obj); err != nil {
			t.Fatal(err)
		}
		if !knownCodes[obj.Code] || obj.Message == "" {
			t.Fatalf("%s %s: error %s %q", name, args, obj.Code, obj.Message)
		}
	})
}
