package commands_test

import (
	"context"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// start opens a session on T-1 with a claim of ttl ms (0: the policy's
// lease, no --ttl-ms).
func (te *testEnv) start(t *testing.T, agent string, ttl int64) *commands.StartResult {
	t.Helper()
	req := commands.StartRequest{Work: "T-1", Agent: agent, Claim: true}
	if ttl != 0 {
		req.TTLms = &ttl
	}
	res := te.session(t, req)
	require.NotNil(t, res.Claim)
	return res
}

// liveClaim returns the claim holding T-1 at the head for a reader on the
// test clock, or nil.
func (te *testEnv) liveClaim(t *testing.T) *projections.Claim {
	t.Helper()
	var c *projections.Claim
	require.NoError(t, te.Store.Read(context.Background(), func(r *events.Reader) error {
		var err error
		c, err = projections.LiveClaimAt(r.Conn, "T-1", r.Head, te.now.UnixMilli(), true)
		return err
	}))
	return c
}

// superseded is where the cases of a superseded holder start: a1 claims
// T-1 with a 1 s lease and lets it lapse, then a2 claims it with a lease
// of ttl ms (fencing token 2).
func superseded(t *testing.T, ttl int64) (te *testEnv, a, b *commands.StartResult) {
	t.Helper()
	te = newTestEnv(t)
	a = te.start(t, "a1", 1000)
	te.advance(1001 * time.Millisecond)
	return te, a, te.start(t, "a2", ttl)
}

func (te *testEnv) checkpoint(session, agent string) error {
	_, err := commands.RecordCheckpoint(context.Background(), te.Env, commands.CheckpointRequest{SessionID: session, Agent: agent, Digest: "did", NextAction: "next"})
	return err
}

func (te *testEnv) renew(session string, ttl int64) (*commands.ClaimResult, error) {
	return commands.RenewClaim(context.Background(), te.Env, commands.RenewRequest{SessionID: session, TTLms: &ttl})
}

func TestRenewClaim(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		a := te.start(t, "a1", 1000)
		te.advance(800 * time.Millisecond)
		res, err := te.renew(a.Session.ID, 5000)
		require.NoError(t, err)
		// The new lease runs from now, not from the old expiry.
		require.Equal(t, te.now.UnixMilli()+5000, res.Claim.ExpiresAt)
		require.Equal(t, a.Claim.ID, res.Claim.ID)
		require.EqualValues(t, 1, res.Claim.FencingToken, "renewing keeps the token")
		require.Equal(t, projections.ClaimHeld, res.State)

		// Past the old expiry the claim still holds the work.
		te.advance(2 * time.Second)
		live := te.liveClaim(t)
		require.NotNil(t, live)
		require.Equal(t, a.Session.ID, live.SessionID)
		require.Equal(t, res.Claim.ExpiresAt, live.ExpiresAt)
		_, err = commands.StartSession(context.Background(), te.Env, commands.StartRequest{Work: "T-1", Agent: "a2", Claim: true})
		require.True(t, fault.Is(err, fault.ClaimConflict), "%v", err)
		require.NoError(t, te.checkpoint(a.Session.ID, "a1"))

		// The holder's checkpoint renewed it by the length the renewal
		// recorded, and it lapses at that expiry.
		live = te.liveClaim(t)
		require.Equal(t, te.now.UnixMilli()+5000, live.ExpiresAt)
		te.advance(5 * time.Second)
		require.Nil(t, te.liveClaim(t))
	})
	t.Run("AfterExpiryWhileFree", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		a := te.start(t, "a1", 1000)
		te.advance(time.Minute)
		require.Nil(t, te.liveClaim(t), "the lease lapsed")
		res, err := te.renew(a.Session.ID, 1000)
		require.NoError(t, err, "nobody took the work, so the holder may renew")
		require.Equal(t, te.now.UnixMilli()+1000, res.Claim.ExpiresAt)
		require.EqualValues(t, 1, res.Claim.FencingToken)
		live := te.liveClaim(t)
		require.NotNil(t, live)
		require.Equal(t, a.Session.ID, live.SessionID)
		_, err = commands.StartSession(context.Background(), te.Env, commands.StartRequest{Work: "T-1", Agent: "a2", Claim: true})
		require.True(t, fault.Is(err, fault.ClaimConflict), "%v", err)
	})
	t.Run("ErrClaimConflict", func(t *testing.T) {
		t.Parallel()
		te, a, b := superseded(t, 60000)
		require.EqualValues(t, 2, b.Claim.FencingToken)
		head := te.head(t)

		_, err := te.renew(a.Session.ID, 60000)
		require.True(t, fault.Is(err, fault.ClaimConflict), "%v", err)
		fe := fault.As(err)
		require.Equal(t, b.Session.ID, fe.Details["holder_session"])
		require.Equal(t, "a2", fe.Details["holder_agent"])
		require.EqualValues(t, b.Claim.ExpiresAt, fe.Details["expires_at"])
		require.Equal(t, head, te.head(t), "a refused renew appends nothing")
		live := te.liveClaim(t)
		require.Equal(t, b.Session.ID, live.SessionID)
	})
	t.Run("ErrClaimConflictAfterSupersederReleased", func(t *testing.T) {
		t.Parallel()
		te, a, b := superseded(t, 60000)
		_, err := commands.ReleaseClaim(context.Background(), te.Env, commands.ReleaseRequest{SessionID: b.Session.ID})
		require.NoError(t, err)
		_, err = te.renew(a.Session.ID, 60000)
		require.True(t, fault.Is(err, fault.ClaimConflict), "token 1 was superseded by token 2: %v", err)
		require.Nil(t, te.liveClaim(t))
	})
	t.Run("ErrClaimConflictAfterSupersederLapsed", func(t *testing.T) {
		t.Parallel()
		te, a, b := superseded(t, 1000)
		te.advance(1001 * time.Millisecond)
		_, err := te.renew(a.Session.ID, 60000)
		require.True(t, fault.Is(err, fault.ClaimConflict), "token 1 was superseded by token 2: %v", err)
		_, err = te.renew(b.Session.ID, 60000)
		require.NoError(t, err, "the latest holder may renew its lapsed lease")
	})
	t.Run("ErrNoClaim", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		s, err := commands.StartSession(context.Background(), te.Env, commands.StartRequest{Work: "T-1", Agent: "a1"})
		require.NoError(t, err)
		_, err = te.renew(s.Session.ID, 1000)
		require.True(t, fault.Is(err, fault.InvalidTransition), "%v", err)
	})
	t.Run("ErrNegativeTTL", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		a := te.start(t, "a1", 1000)
		_, err := te.renew(a.Session.ID, -1)
		require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
	})
}

func TestFencing(t *testing.T) {
	t.Parallel()
	t.Run("ErrClaimConflict", func(t *testing.T) {
		t.Parallel()
		te, a, b := superseded(t, 60000)
		err := te.checkpoint(a.Session.ID, "a1")
		require.True(t, fault.Is(err, fault.ClaimConflict), "%v", err)
		fe := fault.As(err)
		require.Equal(t, a.Session.ID, fe.Details["session_id"])
		require.EqualValues(t, 1, fe.Details["fencing_token"])
		require.Equal(t, b.Session.ID, fe.Details["holder_session"])
		require.EqualValues(t, 2, fe.Details["holder_fencing_token"])
		require.NoError(t, te.checkpoint(b.Session.ID, "a2"), "the new holder writes")
	})
	t.Run("ExpiredWhileFree", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		a := te.start(t, "a1", 1000)
		te.advance(time.Hour)
		require.NoError(t, te.checkpoint(a.Session.ID, "a1"), "a lapsed lease nobody took is not superseded")
	})
	t.Run("ErrClaimConflictAfterSupersederReleased", func(t *testing.T) {
		t.Parallel()
		te, a, b := superseded(t, 60000)
		_, err := commands.EndSession(context.Background(), te.Env, commands.EndRequest{SessionID: b.Session.ID, Outcome: "incomplete"})
		require.NoError(t, err)
		err = te.checkpoint(a.Session.ID, "a1")
		require.True(t, fault.Is(err, fault.ClaimConflict), "token 1 was superseded by token 2: %v", err)
	})
	// The superseded holder ends after the item changed hands: its
	// session's end releases its lapsed claim (token 1) after token 2's
	// acquire. That release is not token 2's: the next claimant meets the
	// holder, not a projection said to disagree with the log.
	t.Run("SupersededHolderEnds", func(t *testing.T) {
		t.Parallel()
		te, a, b := superseded(t, 60000)
		_, err := commands.EndSession(context.Background(), te.Env, commands.EndRequest{SessionID: a.Session.ID, Outcome: "abandoned"})
		require.NoError(t, err)
		_, err = commands.StartSession(context.Background(), te.Env, commands.StartRequest{Work: "T-1", Agent: "a3", Claim: true})
		require.True(t, fault.Is(err, fault.ClaimConflict), "%v", err)
		require.Equal(t, b.Session.ID, fault.As(err).Details["holder_session"])
		res, err := te.renew(b.Session.ID, 60000)
		require.NoError(t, err, "the holder renews")
		require.Equal(t, b.Claim.ID, res.Claim.ID)
		require.NoError(t, te.checkpoint(b.Session.ID, "a2"))
	})
}

func TestReleaseClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	te := newTestEnv(t)
	a := te.start(t, "a1", 60000)
	res, err := commands.ReleaseClaim(ctx, te.Env, commands.ReleaseRequest{SessionID: a.Session.ID})
	require.NoError(t, err)
	require.Equal(t, projections.ClaimReleased, res.State)
	require.Equal(t, a.Claim.ID, res.Claim.ID)
	require.Nil(t, te.liveClaim(t), "released before its lease ran out")

	// The session stays active, without a claim.
	_, err = te.renew(a.Session.ID, 1000)
	require.True(t, fault.Is(err, fault.InvalidTransition), "%v", err)
	_, err = commands.ReleaseClaim(ctx, te.Env, commands.ReleaseRequest{SessionID: a.Session.ID})
	require.True(t, fault.Is(err, fault.InvalidTransition), "%v", err)

	// Another session claims at once, with the next token.
	b := te.start(t, "a2", 60000)
	require.Equal(t, a.Claim.FencingToken+1, b.Claim.FencingToken)
	require.NotEqual(t, a.Claim.ID, b.Claim.ID)
	live := te.liveClaim(t)
	require.Equal(t, b.Session.ID, live.SessionID)
	_, err = te.renew(a.Session.ID, 1000)
	require.True(t, fault.Is(err, fault.InvalidTransition), "%v", err)

	// Released and claimed again: the token keeps climbing.
	_, err = commands.EndSession(ctx, te.Env, commands.EndRequest{SessionID: b.Session.ID, Outcome: "incomplete"})
	require.NoError(t, err)
	c := te.start(t, "a3", 0)
	require.EqualValues(t, 3, c.Claim.FencingToken)
}

// TestClaimWithoutExpiry: with the manifest's claim_ttl_ms = 0, claims
// never expire and --ttl-ms 0 may say so.
func TestClaimWithoutExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	te := newTestEnv(t)
	te.Policy = commands.Policy{ClaimTTLms: 0, OpenLoopCap: commands.DefaultOpenLoopCap}
	a := te.start(t, "a1", 0)
	require.Zero(t, a.Claim.ExpiresAt, "a lease of 0 has no expiry")

	te.advance(10 * 365 * 24 * time.Hour)
	live := te.liveClaim(t)
	require.NotNil(t, live, "a lease of 0 never expires")
	require.Equal(t, a.Session.ID, live.SessionID)
	_, err := commands.StartSession(ctx, te.Env, commands.StartRequest{Work: "T-1", Agent: "a2", Claim: true})
	require.True(t, fault.Is(err, fault.ClaimConflict), "%v", err)
	require.EqualValues(t, 0, fault.As(err).Details["expires_at"])
	require.NoError(t, te.checkpoint(a.Session.ID, "a1"))

	// Renewing with a lease gives it an expiry; renewing with 0 removes it.
	res, err := te.renew(a.Session.ID, 1000)
	require.NoError(t, err)
	require.Equal(t, te.now.UnixMilli()+1000, res.Claim.ExpiresAt)
	res, err = te.renew(a.Session.ID, 0)
	require.NoError(t, err)
	require.Zero(t, res.Claim.ExpiresAt)
	te.advance(time.Hour)
	live = te.liveClaim(t)
	require.NotNil(t, live)
	require.Zero(t, live.ExpiresAt)
}

// TestLease_Duration: --ttl (a duration) is the lease in milliseconds the
// request and the log carry, the same as --ttl-ms (its former spelling);
// both at once are a usage error, and a duration finer than a millisecond,
// a negative one, 0 (without the manifest's leave) and one past 30 days
// are refused, naming --ttl. Nothing is written on a refusal.
func TestLease_Duration(t *testing.T) {
	t.Parallel()
	te := newTestEnv(t)
	d := 90 * time.Second
	res, err := commands.StartSession(context.Background(), te.Env, commands.StartRequest{Work: "T-1", Agent: "a", Claim: true, TTL: &d})
	require.NoError(t, err)
	require.EqualValues(t, 90_000, res.Claim.TTLms)
	require.Equal(t, te.now.Add(d).UnixMilli(), res.Claim.ExpiresAt)
	ms := int64(60_000)
	for _, c := range []struct {
		ttl  time.Duration
		ms   *int64
		code fault.Code
		msg  string
	}{
		{time.Minute, &ms, fault.Usage, "--ttl and --ttl-ms say the same thing"},
		{1500 * time.Microsecond, nil, fault.InvalidInput, "--ttl 1.5ms is not a whole number of milliseconds"},
		{-time.Minute, nil, fault.InvalidInput, "--ttl -1m0s is negative"},
		{0, nil, fault.InvalidInput, "--ttl 0 asks for a claim that never expires"},
		{721 * time.Hour, nil, fault.InvalidInput, "--ttl 721h0m0s is longer than the longest lease, 720h0m0s"},
	} {
		before := te.head(t)
		ttl := c.ttl
		_, err := commands.RenewClaim(context.Background(), te.Env, commands.RenewRequest{SessionID: res.Session.ID, TTL: &ttl, TTLms: c.ms})
		require.True(t, fault.Is(err, c.code), "%s: %v", c.ttl, err)
		require.ErrorContains(t, err, c.msg)
		require.Equal(t, before, te.head(t), "%s: nothing written", c.ttl)
	}
}
