package mcpserver_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/awr-dev/awr/internal/serve/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// subscriber starts a server on dir whose client sends every
// resources/updated URI it receives to the returned channel.
func subscriber(t *testing.T, dir string) (*mcpserver.Server, *mcp.ClientSession, <-chan string) {
	t.Helper()
	updated := make(chan string, 64)
	srv, cs := connectWith(t, dir, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { updated <- req.Params.URI },
	})
	return srv, cs, updated
}

// subscribe subscribes cs to uris and waits until srv has them in force.
// Under the protocol of 2026-07-28 the client's Subscribe only opens a
// subscriptions/listen stream and returns before the server has handled
// it; the server's acknowledgement, which the SDK does not pass on, is
// the point after which no write goes unannounced.
func subscribe(t *testing.T, srv *mcpserver.Server, cs *mcp.ClientSession, uris ...string) {
	t.Helper()
	for _, uri := range uris {
		require.NoError(t, cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: uri}))
	}
	require.Eventually(t, func() bool {
		got := srv.Subscriptions()
		for _, uri := range uris {
			if !slices.Contains(got, uri) {
				return false
			}
		}
		return true
	}, time.Minute, 10*time.Millisecond, "subscriptions to %v in force", uris)
}

// TestSubscribe_UpdatedWhenTheRevisionMoves: a client subscribed to the
// status and to a work item's packet hears resources/updated for both when
// another process's door writes, and nothing once it has unsubscribed.
func TestSubscribe_UpdatedWhenTheRevisionMoves(t *testing.T) {
	t.Parallel()
	dir := initProject(t)
	ctx := context.Background()
	srv, cs, updated := subscriber(t, dir)
	caps := cs.InitializeResult().Capabilities
	require.NotNil(t, caps.Resources)
	require.True(t, caps.Resources.Subscribe)

	subscribe(t, srv, cs, mcpserver.StatusURI, mcpserver.WorkContextURI("CART-1"))

	other := connect(t, dir) // another door on the same project, as another process
	ok(t, other, "awr_session_start", map[string]any{"work": "CART-1", "agent": "builder", "claim": true, "ttl_ms": 600000})
	got := map[string]bool{}
	deadline := time.After(time.Minute)
	for len(got) < 2 {
		select {
		case uri := <-updated:
			got[uri] = true
		case <-deadline:
			t.Fatalf("resources/updated for %v only", got)
		}
	}
	require.True(t, got[mcpserver.StatusURI])
	require.True(t, got[mcpserver.WorkContextURI("CART-1")])

	require.NoError(t, cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: mcpserver.StatusURI}))
	require.NoError(t, cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: mcpserver.WorkContextURI("CART-1")}))
	require.Eventually(t, func() bool { return len(srv.Subscriptions()) == 0 }, time.Minute, 10*time.Millisecond,
		"unsubscribed on the server")
	// Notifications sent before the unsubscriptions were answered may
	// still be on their way (the first write can move the head in more
	// than one look): drain until a second passes without one.
	for quiet := false; !quiet; {
		select {
		case <-updated:
		case <-time.After(time.Second):
			quiet = true
		}
	}
	ok(t, other, "awr_session_start", map[string]any{"work": "CART-2", "agent": "builder"})
	select {
	case uri := <-updated:
		t.Fatalf("resources/updated for %s after unsubscribing", uri)
	case <-time.After(2 * time.Second):
	}
}
