package commands_test

import (
	"context"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/fault"
	"github.com/stretchr/testify/require"
)

// TestLease_Default: a claim taken without --ttl-ms gets the policy's
// lease (one hour unless the manifest says otherwise), recorded with the
// claim; a renewal without --ttl-ms renews by it.
func TestLease_Default(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("DefaultPolicy", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		a := te.start(t, "a1", 0)
		require.Equal(t, te.now.UnixMilli()+commands.DefaultClaimTTLms, a.Claim.ExpiresAt)
		require.Equal(t, commands.DefaultClaimTTLms, a.Claim.TTLms)
		live := te.liveClaim(t)
		require.Equal(t, commands.DefaultClaimTTLms, live.TTLms, "the length is recorded")

		te.advance(time.Minute)
		res, err := commands.RenewClaim(ctx, te.Env, commands.RenewRequest{SessionID: a.Session.ID})
		require.NoError(t, err)
		require.Equal(t, te.now.UnixMilli()+commands.DefaultClaimTTLms, res.Claim.ExpiresAt)
	})
	t.Run("ManifestPolicy", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		te.Policy = commands.Policy{ClaimTTLms: 600000, OpenLoopCap: 5}
		a := te.start(t, "a1", 0)
		require.Equal(t, te.now.UnixMilli()+600000, a.Claim.ExpiresAt)
		require.EqualValues(t, 600000, a.Claim.TTLms)

		// An explicit lease wins over the policy.
		_, err := commands.EndSession(ctx, te.Env, commands.EndRequest{SessionID: a.Session.ID, Outcome: "incomplete"})
		require.NoError(t, err)
		b := te.start(t, "a2", 5000)
		require.Equal(t, te.now.UnixMilli()+5000, b.Claim.ExpiresAt)
		require.EqualValues(t, 5000, b.Claim.TTLms)
	})
	t.Run("Resume", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		s, err := commands.StartSession(ctx, te.Env, commands.StartRequest{Work: "T-1", Agent: "a1"})
		require.NoError(t, err)
		res, err := commands.ResumeSession(ctx, te.Env, commands.ResumeRequest{FromSession: s.Session.ID, Agent: "a2", Claim: new(true)})
		require.NoError(t, err)
		require.NotNil(t, res.Claim)
		require.Equal(t, te.now.UnixMilli()+commands.DefaultClaimTTLms, res.Claim.ExpiresAt)
		require.Equal(t, commands.DefaultClaimTTLms, res.Claim.TTLms)
	})
	t.Run("MovedKeepsItsLease", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		a := te.start(t, "a1", 90000)
		te.advance(10 * time.Second)
		res, err := commands.ResumeSession(ctx, te.Env, commands.ResumeRequest{FromSession: a.Session.ID, Agent: "a2"})
		require.NoError(t, err)
		require.Equal(t, a.Claim.ExpiresAt, res.Claim.ExpiresAt, "moving never extends a lease by itself")
		require.EqualValues(t, 90000, res.Claim.TTLms, "and keeps its length")
	})
	t.Run("SeatLaunch", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		_, err := commands.DeclareSeat(ctx, te.Env, commands.SeatRequest{Address: "dev@r", Runtime: "generic", Command: "agent {context_file}", Work: "T-1"})
		require.NoError(t, err)
		l, err := commands.LaunchSeat(ctx, te.Env, commands.LaunchRequest{Address: "dev@r", Mode: "fresh", Conversation: "c-1", TmuxSession: "t", ContextFile: "f"})
		require.NoError(t, err)
		live := te.liveClaim(t)
		require.Equal(t, l.ClaimID, live.ID)
		require.Equal(t, te.now.UnixMilli()+commands.DefaultClaimTTLms, live.ExpiresAt, "a seat's claim gets the policy's lease")
	})
}

// TestLease_ErrNoExpiry: --ttl-ms 0 asks for a claim that never expires,
// which only the manifest (claim_ttl_ms = 0) allows: refused otherwise on
// start, resume, renew and acquire, with nothing written.
func TestLease_ErrNoExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	zero := new(int64(0))
	refused := func(t *testing.T, te *testEnv, err error, head int64) {
		t.Helper()
		require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
		fe := fault.As(err)
		require.Equal(t, "ttl_ms", fe.Details["field"])
		require.Contains(t, fe.Message, "--ttl-ms 0")
		require.Contains(t, fe.Hint, "claim_ttl_ms = 0")
		require.Equal(t, head, te.head(t), "a refused request appends nothing")
	}
	te := newTestEnv(t)
	head := te.head(t)
	_, err := commands.StartSession(ctx, te.Env, commands.StartRequest{Work: "T-1", Agent: "a1", Claim: true, TTLms: zero})
	refused(t, te, err, head)

	a := te.start(t, "a1", 1000)
	head = te.head(t)
	_, err = commands.RenewClaim(ctx, te.Env, commands.RenewRequest{SessionID: a.Session.ID, TTLms: zero})
	refused(t, te, err, head)
	_, err = commands.ResumeSession(ctx, te.Env, commands.ResumeRequest{FromSession: a.Session.ID, Agent: "a2", TTLms: zero})
	refused(t, te, err, head)
	_, err = commands.ResumeWithContext(ctx, te.Env, commands.ResumeRequest{FromSession: a.Session.ID, Agent: "a2", TTLms: zero}, nil)
	refused(t, te, err, head)

	t.Run("AllowedByTheManifest", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		te.Policy = commands.Policy{ClaimTTLms: 0, OpenLoopCap: commands.DefaultOpenLoopCap}
		res, err := commands.StartSession(ctx, te.Env, commands.StartRequest{Work: "T-1", Agent: "a1", Claim: true, TTLms: zero})
		require.NoError(t, err)
		require.Zero(t, res.Claim.ExpiresAt)
		require.Zero(t, res.Claim.TTLms)
		// Without --ttl-ms the policy says no expiry too.
		_, err = commands.EndSession(ctx, te.Env, commands.EndRequest{SessionID: res.Session.ID, Outcome: "incomplete"})
		require.NoError(t, err)
		b := te.start(t, "a2", 0)
		require.Zero(t, b.Claim.ExpiresAt)
	})
}
