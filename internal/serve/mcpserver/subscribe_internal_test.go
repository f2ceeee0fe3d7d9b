package mcpserver

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// TestOnSubscribe_RefusesForeignURIs: a subscription to a URI that names
// no awr resource is refused with invalid params, and starts no watch.
func TestOnSubscribe_RefusesForeignURIs(t *testing.T) {
	t.Parallel()
	s, err := New(Options{Project: t.TempDir(), Version: "test"})
	require.NoError(t, err)
	defer s.Close()
	for _, uri := range []string{"awr://nothing/here", "https://example.test/status", "awr://work//context"} {
		err := s.onSubscribe(context.Background(), &mcp.SubscribeRequest{Params: &mcp.SubscribeParams{URI: uri}})
		var rpc *jsonrpc.Error
		require.ErrorAs(t, err, &rpc, uri)
		require.Equal(t, int64(mcp.CodeResourceNotFound), rpc.Code, uri)
	}
	require.Nil(t, s.watch.stop, "no watch without a subscription")
	require.NoError(t, s.onSubscribe(context.Background(), &mcp.SubscribeRequest{Params: &mcp.SubscribeParams{URI: StatusURI}}))
	require.NotNil(t, s.watch.stop)
	require.NoError(t, s.onUnsubscribe(context.Background(), &mcp.UnsubscribeRequest{Params: &mcp.UnsubscribeParams{URI: StatusURI}}))
	require.Nil(t, s.watch.stop, "the watch stops with the last subscription")
}
