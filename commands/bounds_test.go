package commands_test

import (
	"context"
	"math"
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fault"
	"github.com/stretchr/testify/require"
)

// TestLease_Bounded: a lease near the int64 maximum is refused with the
// bound, on every road that takes one, and writes nothing (issue #13,
// row 4: before the bound, now + ttl overflowed to a negative expiry).
func TestLease_Bounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	te := newTestEnv(t)
	huge := int64(math.MaxInt64)
	head := func() int64 {
		var h int64
		require.NoError(t, te.Store.Read(ctx, func(r *events.Reader) error { h = r.Head; return nil }))
		return h
	}
	before := head()
	_, err := commands.StartSession(ctx, te.Env, commands.StartRequest{Work: "T-1", Agent: "a", Claim: true, TTLms: &huge})
	require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
	require.Equal(t, "--ttl-ms", fault.As(err).Details["flag"])
	require.Equal(t, commands.MaxTTLms, fault.As(err).Details["max"])
	require.Equal(t, before, head())

	ok := commands.MaxTTLms
	start, err := commands.StartSession(ctx, te.Env, commands.StartRequest{Work: "T-1", Agent: "a", Claim: true, TTLms: &ok})
	require.NoError(t, err)
	require.Greater(t, start.Claim.ExpiresAt, te.Now().UnixMilli())
	before = head()
	_, err = commands.RenewClaim(ctx, te.Env, commands.RenewRequest{SessionID: start.Session.ID, TTLms: &huge})
	require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
	_, err = commands.ResumeSession(ctx, te.Env, commands.ResumeRequest{FromSession: start.Session.ID, Agent: "b", TTLms: &huge})
	require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
	_, err = commands.AcquireClaim(ctx, te.Env, commands.AcquireRequest{SessionID: start.Session.ID, TTLms: &huge})
	require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
	require.Equal(t, before, head())
}
