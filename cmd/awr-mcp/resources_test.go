package main

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// rpcFault decodes the awr error object a JSON-RPC error carries.
func rpcFault(t *testing.T, err error) (int64, map[string]any) {
	t.Helper()
	require.Error(t, err)
	var we *jsonrpc.Error
	require.True(t, errors.As(err, &we), "%T: %v", err, err)
	var data map[string]any
	require.NoError(t, json.Unmarshal(we.Data, &data), string(we.Data))
	return we.Code, data
}

// cli runs awr with --json on dir and returns stdout.
// cli runs awr --json in dir, finding the project there as an agent in it
// does: with --project its hints would name the directory, which the MCP
// server's do not.
func cli(t *testing.T, awr, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(awr, append([]string{"--json"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	require.NoError(t, err, strings.Join(args, " "))
	return strings.TrimSuffix(string(out), "\n")
}

// TestResources lists and reads awr's resources over stdio: the status,
// the packets of the active session and of ready work, the templates; a
// read writes nothing, and an unknown id is resource-not-found with awr's
// NotFound.
func TestResources(t *testing.T) {
	awr, bin := binaries(t)
	dir := project(t, awr)
	cs := serve(t, bin, "--project", dir)
	ctx := context.Background()
	uris := func() []string {
		t.Helper()
		res, err := cs.ListResources(ctx, nil)
		require.NoError(t, err)
		var out []string
		for _, r := range res.Resources {
			out = append(out, r.URI)
			require.NotEmpty(t, r.MIMEType, r.URI)
		}
		return out
	}
	// Before any session: the status and the ready work.
	require.Equal(t, []string{"awr://status", "awr://work/CART-1/context"}, uris())

	start := ok(t, cs, "awr_session_start", map[string]any{"work": "CART-1", "agent": "builder", "claim": true})
	sid := field(start, "session.id").(string)
	ok(t, cs, "awr_session_checkpoint", map[string]any{"session": sid, "agent": "builder",
		"digest": "added the carts table", "next_action": "write the cart on every change", "open_loops": []any{"idempotency of writes"}})
	status := cli(t, awr, dir, "status")

	t.Run("Templates", func(t *testing.T) {
		res, err := cs.ListResourceTemplates(ctx, nil)
		require.NoError(t, err)
		got := map[string]string{}
		for _, rt := range res.ResourceTemplates {
			got[rt.URITemplate] = rt.MIMEType
			require.NotEmpty(t, rt.Description, rt.URITemplate)
		}
		require.Equal(t, map[string]string{"awr://session/{id}/context": "text/markdown", "awr://work/{key}/context": "text/markdown"}, got)
	})

	t.Run("List", func(t *testing.T) {
		// The active session's packet; CART-1, claimed, is no longer ready.
		require.Equal(t, []string{"awr://status", "awr://session/" + sid + "/context"}, uris())
	})

	t.Run("ReadStatus", func(t *testing.T) {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "awr://status"})
		require.NoError(t, err)
		require.Len(t, res.Contents, 1)
		require.Equal(t, "application/json", res.Contents[0].MIMEType)
		require.Equal(t, status, res.Contents[0].Text, "awr status --json, byte for byte")
	})

	t.Run("ReadPackets", func(t *testing.T) {
		work, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "awr://work/CART-1/context"})
		require.NoError(t, err)
		require.Equal(t, "text/markdown", work.Contents[0].MIMEType)
		require.Equal(t, "awr://work/CART-1/context", work.Contents[0].URI)
		var compiled struct {
			WorkContext struct {
				RenderedContext string `json:"rendered_context"`
			} `json:"work_context"`
		}
		require.NoError(t, json.Unmarshal([]byte(cli(t, awr, dir, "context", "compile", "--work", "CART-1")), &compiled))
		require.Equal(t, compiled.WorkContext.RenderedContext, work.Contents[0].Text, "the packet `context compile` renders")

		sess, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "awr://session/" + sid + "/context"})
		require.NoError(t, err)
		text := sess.Contents[0].Text
		require.Equal(t, "text/markdown", sess.Contents[0].MIMEType)
		require.Contains(t, text, "# Work context: CART-1\nSession: "+sid+"\n")
		require.Contains(t, text, "write the cart on every change")
		require.Contains(t, text, "idempotency of writes")

		require.Equal(t, status, cli(t, awr, dir, "status"), "reading resources writes nothing")
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		for _, uri := range []string{"awr://session/01NOPE/context", "awr://work/NOPE-9/context"} {
			_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			code, data := rpcFault(t, err)
			require.Equal(t, mcp.CodeResourceNotFound, code, uri)
			require.Equal(t, "NotFound", data["code"], uri)
			require.Equal(t, uri, data["uri"])
			require.NotEmpty(t, data["hint"], uri)
			require.NotEmpty(t, data["message"], uri)
		}
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "awr://nothing"})
		var we *jsonrpc.Error
		require.True(t, errors.As(err, &we), "%v", err)
		require.Equal(t, mcp.CodeResourceNotFound, we.Code)
	})
}

// TestResumeWorkPrompt gets resume_work over stdio for a session and for
// work items, and refuses bad arguments with awr's codes.
func TestResumeWorkPrompt(t *testing.T) {
	awr, bin := binaries(t)
	dir := project(t, awr)
	cs := serve(t, bin, "--project", dir)
	ctx := context.Background()

	list, err := cs.ListPrompts(ctx, nil)
	require.NoError(t, err)
	require.Len(t, list.Prompts, 1)
	p := list.Prompts[0]
	require.Equal(t, "resume_work", p.Name)
	require.Len(t, p.Arguments, 2)
	require.Equal(t, "session", p.Arguments[0].Name)
	require.Equal(t, "work", p.Arguments[1].Name)

	start := ok(t, cs, "awr_session_start", map[string]any{"work": "CART-1", "agent": "builder", "claim": true})
	sid := field(start, "session.id").(string)
	ok(t, cs, "awr_session_checkpoint", map[string]any{"session": sid, "agent": "builder",
		"digest": "added the carts table", "next_action": "write the cart on every change"})
	ok(t, cs, "awr_session_end", map[string]any{"session": sid, "outcome": "interrupted", "agent": "builder"})
	status := cli(t, awr, dir, "status")

	texts := func(res *mcp.GetPromptResult) (packet, steps string) {
		require.Len(t, res.Messages, 2)
		for _, m := range res.Messages {
			require.Equal(t, mcp.Role("user"), m.Role)
		}
		return res.Messages[0].Content.(*mcp.TextContent).Text, res.Messages[1].Content.(*mcp.TextContent).Text
	}

	t.Run("Session", func(t *testing.T) {
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "resume_work", Arguments: map[string]string{"session": sid}})
		require.NoError(t, err)
		packet, steps := texts(res)
		require.Contains(t, packet, "awr://session/"+sid+"/context")
		require.Contains(t, packet, "Session: "+sid)
		require.Contains(t, packet, "write the cart on every change")
		require.Contains(t, steps, "awr session resume --from-session "+sid)
		require.Contains(t, steps, "awr session checkpoint --session NEW_ID --agent NAME --digest ")
		require.Contains(t, steps, "--next-action ")
		require.Contains(t, steps, "awr recovery verify --session NEW_ID --input FILE")
	})

	t.Run("Work", func(t *testing.T) {
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "resume_work", Arguments: map[string]string{"work": "CART-1"}})
		require.NoError(t, err)
		packet, steps := texts(res)
		require.Contains(t, packet, "awr://work/CART-1/context")
		require.Contains(t, steps, "latest session "+sid+" ended")

		fresh := "CART-2" // waits on CART-1; no session has worked on it
		res, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "resume_work", Arguments: map[string]string{"work": fresh}})
		require.NoError(t, err)
		_, steps = texts(res)
		require.Contains(t, steps, "awr session start --work "+fresh+" --agent NAME")
		require.Contains(t, steps, "awr session checkpoint --session ID --agent NAME --digest ")
		require.Equal(t, status, cli(t, awr, dir, "status"), "a prompt writes nothing")
	})

	t.Run("ErrBadArguments", func(t *testing.T) {
		for _, c := range []struct {
			args map[string]string
			code string
		}{
			{map[string]string{}, "InvalidInput"},
			{map[string]string{"session": sid, "work": "CART-1"}, "InvalidInput"},
			{map[string]string{"sesion": sid}, "InvalidInput"},
			{map[string]string{"session": "01NOPE"}, "NotFound"},
			{map[string]string{"work": "NOPE-9"}, "NotFound"},
		} {
			_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "resume_work", Arguments: c.args})
			code, data := rpcFault(t, err)
			require.Equal(t, int64(jsonrpc.CodeInvalidParams), code, "%v", c.args)
			require.Equal(t, c.code, data["code"], "%v", c.args)
			require.NotEmpty(t, data["hint"], "%v", c.args)
		}
	})
}
