package mcpserver_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// TestServer_HostileParams: requests whose parameters hold control
// characters are answered with errors and the session goes on. The SDK's
// own resource-not-found error quoted the URI with Go's %q, which is not
// JSON, so its answer failed to encode and ended the session.
func TestServer_HostileParams(t *testing.T) {
	t.Parallel()
	cs := connect(t, initProject(t))
	ctx := context.Background()
	for _, uri := range []string{"\x00", "\a\v", "awr://work/\x00/context", "awr://session/%00/context", "\U000E0001"} {
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		require.Error(t, err, "%q", uri)
		require.NotErrorIs(t, err, mcp.ErrConnectionClosed, "%q", uri)
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			require.NotErrorIs(t, err, mcp.ErrConnectionClosed, "%q", uri)
		}
		_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: uri, Arguments: map[string]string{uri: uri}})
		require.Error(t, err, "%q", uri)
		_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "resume_work", Arguments: map[string]string{"work": uri}})
		require.Error(t, err, "%q", uri)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "awr_status", Arguments: map[string]any{}})
		require.NoError(t, err, "after %q the session still serves", uri)
		require.False(t, res.IsError)
	}
}
