package commands_test

import (
	"context"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
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
		s := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a1"})
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
		require.Contains(t, fe.Message, "--ttl 0")
		require.Contains(t, fe.Message, "claim_ttl_ms = 0")
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
		res := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a1", Claim: true, TTLms: zero})
		require.Zero(t, res.Claim.ExpiresAt)
		require.Zero(t, res.Claim.TTLms)
		// Without --ttl-ms the policy says no expiry too.
		_, err = commands.EndSession(ctx, te.Env, commands.EndRequest{SessionID: res.Session.ID, Outcome: "incomplete"})
		require.NoError(t, err)
		b := te.start(t, "a2", 0)
		require.Zero(t, b.Claim.ExpiresAt)
	})
}

// TestRenewHeld: every write by the holder (a checkpoint, a bind, a
// recorded context) renews its lease by the recorded length, past the old
// expiry if no one took the work; a renewal that would move the expiry by
// less than 1% of the length is skipped; a non-holder's write, a
// superseded claim and a claim without expiry are left alone.
func TestRenewHeld(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bind := func(te *testEnv, session string) error {
		_, err := commands.BindClient(ctx, te.Env, commands.BindRequest{Client: "host", ExternalSession: "host:c-1", Work: "T-1", SessionID: session})
		return err
	}
	compile := func(te *testEnv, session string) error {
		_, err := commands.CompileContext(ctx, te.Env, commands.CompileRequest{Work: "T-1", Session: session})
		return err
	}
	for name, write := range map[string]func(te *testEnv, session string) error{
		"Checkpoint": func(te *testEnv, session string) error { return te.checkpoint(session, "a1") },
		"Bind":       bind,
		"Compile":    compile,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			te := withGoal(t, newTestEnv(t))
			a := te.start(t, "a1", 60000)
			te.advance(30 * time.Second)
			from := te.head(t)
			require.NoError(t, write(te, a.Session.ID))
			require.Equal(t, events.KindClaimRenewed, kinds(t, te.Store, from)[0])
			live := te.liveClaim(t)
			require.Equal(t, te.now.UnixMilli()+60000, live.ExpiresAt, "renewed to now + the recorded length")
			require.EqualValues(t, 60000, live.TTLms)
			require.EqualValues(t, 1, live.FencingToken, "a renewal keeps the token")

			// Within 1% of the length (600 ms), nothing is renewed.
			te.advance(500 * time.Millisecond)
			from = te.head(t)
			require.NoError(t, write(te, a.Session.ID))
			require.NotContains(t, kinds(t, te.Store, from), events.KindClaimRenewed)

			// A lapsed lease no one took is the holder's still: renewed.
			te.advance(2 * time.Minute)
			require.Nil(t, te.liveClaim(t))
			require.NoError(t, write(te, a.Session.ID))
			live = te.liveClaim(t)
			require.NotNil(t, live)
			require.Equal(t, a.Session.ID, live.SessionID)
			require.Equal(t, te.now.UnixMilli()+60000, live.ExpiresAt)
		})
	}
	t.Run("NotANonHolder", func(t *testing.T) {
		t.Parallel()
		te := withGoal(t, newTestEnv(t))
		a := te.start(t, "a1", 60000)
		b := te.session(t, commands.StartRequest{Work: "T-1", Agent: "b1"})
		te.advance(30 * time.Second)
		from := te.head(t)
		require.NoError(t, te.checkpoint(b.Session.ID, "b1"))
		require.NoError(t, bind(te, b.Session.ID))
		require.NoError(t, compile(te, b.Session.ID))
		require.NotContains(t, kinds(t, te.Store, from), events.KindClaimRenewed)
		require.Equal(t, a.Claim.ExpiresAt, te.liveClaim(t).ExpiresAt, "the holder's lease did not move")
	})
	t.Run("NotASupersededClaim", func(t *testing.T) {
		t.Parallel()
		te := withGoal(t, newTestEnv(t))
		a := te.start(t, "a1", 1000)
		te.advance(2 * time.Second)
		b := te.start(t, "b1", 60000)
		from := te.head(t)
		// The fenced session's bind and compile still work; they renew
		// nothing (its checkpoint is refused by the fence).
		require.NoError(t, bind(te, a.Session.ID))
		require.NoError(t, compile(te, a.Session.ID))
		require.NotContains(t, kinds(t, te.Store, from), events.KindClaimRenewed)
		require.Equal(t, b.Session.ID, te.liveClaim(t).SessionID)
	})
	t.Run("NotAClaimWithoutExpiry", func(t *testing.T) {
		t.Parallel()
		te := withGoal(t, newTestEnv(t))
		te.Policy = commands.Policy{ClaimTTLms: 0, OpenLoopCap: commands.DefaultOpenLoopCap}
		a := te.start(t, "a1", 0)
		te.advance(time.Hour)
		from := te.head(t)
		require.NoError(t, te.checkpoint(a.Session.ID, "a1"))
		require.NotContains(t, kinds(t, te.Store, from), events.KindClaimRenewed)
		require.Zero(t, te.liveClaim(t).ExpiresAt)
	})
}

// TestAcquireClaim: an active session takes the claim on its work item
// with the policy's lease; every refusal writes nothing.
func TestAcquireClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	session := func(t *testing.T, te *testEnv, work, agent string) string {
		t.Helper()
		s := te.session(t, commands.StartRequest{Work: work, Agent: agent})
		return s.Session.ID
	}
	acquire := func(te *testEnv, id string) (*commands.ClaimResult, error) {
		return commands.AcquireClaim(ctx, te.Env, commands.AcquireRequest{SessionID: id})
	}
	refused := func(t *testing.T, te *testEnv, code fault.Code, fn func() error) *fault.Error {
		t.Helper()
		head := te.head(t)
		err := fn()
		require.True(t, fault.Is(err, code), "want %s: %v", code, err)
		require.Equal(t, head, te.head(t), "a refused acquire appends nothing")
		return fault.As(err)
	}
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		id := session(t, te, "T-1", "a1")
		from := te.head(t)
		res, err := acquire(te, id)
		require.NoError(t, err)
		require.Equal(t, []events.Kind{events.KindClaimAcquired}, kinds(t, te.Store, from))
		require.Equal(t, id, res.Claim.SessionID)
		require.Equal(t, "a1", res.Claim.Agent)
		require.Equal(t, "held", res.State)
		require.EqualValues(t, 1, res.Claim.FencingToken)
		require.Equal(t, te.now.UnixMilli()+commands.DefaultClaimTTLms, res.Claim.ExpiresAt)
		require.Equal(t, te.head(t), res.ProjectRevision)
		require.Equal(t, id, te.liveClaim(t).SessionID)

		// Explicit lease, and the same request id answers the same.
		id2 := session(t, te, "T-1", "a2")
		_, err = commands.EndSession(ctx, te.Env, commands.EndRequest{SessionID: id, Outcome: "incomplete"})
		require.NoError(t, err)
		req := commands.AcquireRequest{SessionID: id2, TTLms: new(int64(5000)), WriteMeta: commands.WriteMeta{RequestID: "r-1"}}
		first, err := commands.AcquireClaim(ctx, te.Env, req)
		require.NoError(t, err)
		require.Equal(t, te.now.UnixMilli()+5000, first.Claim.ExpiresAt)
		require.EqualValues(t, 2, first.Claim.FencingToken)
		again, err := commands.AcquireClaim(ctx, te.Env, req)
		require.NoError(t, err)
		require.True(t, again.Replayed)
		require.Equal(t, first.Claim, again.Claim)
	})
	t.Run("ErrClaimConflict", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		a := te.start(t, "a1", 60000)
		id := session(t, te, "T-1", "b1")
		fe := refused(t, te, fault.ClaimConflict, func() error { _, err := acquire(te, id); return err })
		require.Equal(t, a.Session.ID, fe.Details["holder_session"])
		require.Equal(t, "a1", fe.Details["holder_agent"])
		require.EqualValues(t, a.Claim.ExpiresAt, fe.Details["expires_at"])
		// Once the holder's lease lapses, the work is free.
		te.advance(time.Minute + time.Millisecond)
		res, err := acquire(te, id)
		require.NoError(t, err)
		require.EqualValues(t, 2, res.Claim.FencingToken)
		// And the former holder, now fenced, cannot take it back.
		te.advance(2 * time.Hour)
		refused(t, te, fault.ClaimConflict, func() error { _, err := acquire(te, a.Session.ID); return err })
	})
	t.Run("ErrAlreadyHeld", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		a := te.start(t, "a1", 1000)
		fe := refused(t, te, fault.InvalidTransition, func() error { _, err := acquire(te, a.Session.ID); return err })
		require.Equal(t, "awr claim renew --session "+a.Session.ID, fe.Hint)
		require.Equal(t, a.Claim.ID, fe.Details["claim_id"])
		// A lapsed lease no one took is still the session's: renew it.
		te.advance(time.Minute)
		fe = refused(t, te, fault.InvalidTransition, func() error { _, err := acquire(te, a.Session.ID); return err })
		require.Equal(t, "awr claim renew --session "+a.Session.ID, fe.Hint)
	})
	t.Run("ErrSession", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		refused(t, te, fault.NotFound, func() error { _, err := acquire(te, "01NOPE"); return err })
		refused(t, te, fault.InvalidInput, func() error { _, err := acquire(te, ""); return err })
		id := session(t, te, "T-1", "a1")
		_, err := commands.EndSession(ctx, te.Env, commands.EndRequest{SessionID: id, Outcome: "incomplete"})
		require.NoError(t, err)
		fe := refused(t, te, fault.InvalidTransition, func() error { _, err := acquire(te, id); return err })
		require.Contains(t, fe.Hint, "awr session resume --from-session "+id)
	})
	t.Run("ErrReadiness", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		blocked := session(t, te, "T-2", "a1")
		refused(t, te, fault.DependencyBlocked, func() error { _, err := acquire(te, blocked); return err })
		done := session(t, te, "T-3", "a1")
		refused(t, te, fault.InvalidTransition, func() error { _, err := acquire(te, done); return err })
	})
	t.Run("ErrInput", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		id := session(t, te, "T-1", "a1")
		refused(t, te, fault.SourceStale, func() error {
			_, err := commands.AcquireClaim(ctx, te.Env, commands.AcquireRequest{SessionID: id, Stale: []string{"ledger.yaml"}})
			return err
		})
		refused(t, te, fault.InvalidInput, func() error {
			_, err := commands.AcquireClaim(ctx, te.Env, commands.AcquireRequest{SessionID: id, TTLms: new(int64(0))})
			return err
		})
		refused(t, te, fault.InvalidInput, func() error {
			_, err := commands.AcquireClaim(ctx, te.Env, commands.AcquireRequest{SessionID: id, TTLms: new(int64(-5))})
			return err
		})
	})
}

// TestResume_TakesTheClaim: without --claim or --no-claim a resume takes
// the claim: it moves a live one, acquires free work, and fails with
// ClaimConflict, creating nothing, when another session holds the work;
// --no-claim resumes without one and releases the predecessor's.
func TestResume_TakesTheClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	resume := func(te *testEnv, from, agent string, claim *bool) (*commands.ResumeResult, error) {
		return commands.ResumeSession(ctx, te.Env, commands.ResumeRequest{FromSession: from, Agent: agent, Claim: claim})
	}
	t.Run("MovesALiveClaim", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		a := te.start(t, "a1", 60000)
		res, err := resume(te, a.Session.ID, "a2", nil)
		require.NoError(t, err)
		require.Equal(t, a.Session.ID, res.FromSession)
		require.Equal(t, res.Session.ID, te.liveClaim(t).SessionID)
		require.EqualValues(t, 2, res.Claim.FencingToken)
	})
	t.Run("AcquiresFreeWork", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		s := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a1"})
		_, err := commands.EndSession(ctx, te.Env, commands.EndRequest{SessionID: s.Session.ID, Outcome: "interrupted"})
		require.NoError(t, err)
		res, err := resume(te, s.Session.ID, "a2", nil)
		require.NoError(t, err)
		require.NotNil(t, res.Claim, "the default takes the free work")
		require.Equal(t, res.Session.ID, res.Claim.SessionID)
		require.Equal(t, te.now.UnixMilli()+commands.DefaultClaimTTLms, res.Claim.ExpiresAt)
		require.Equal(t, res.Session.ID, te.liveClaim(t).SessionID)

		// --claim is the same as the default.
		te2 := newTestEnv(t)
		s2, err := commands.StartSession(ctx, te2.Env, commands.StartRequest{Work: "T-1", Agent: "a1"})
		require.NoError(t, err)
		res2, err := resume(te2, s2.Session.ID, "a2", new(true))
		require.NoError(t, err)
		require.NotNil(t, res2.Claim)
	})
	t.Run("ErrClaimConflict", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		a := te.start(t, "a1", 1000)
		te.advance(2 * time.Second)
		b := te.start(t, "b1", 60000)
		head := te.head(t)
		_, err := resume(te, a.Session.ID, "a2", nil)
		require.True(t, fault.Is(err, fault.ClaimConflict), "%v", err)
		fe := fault.As(err)
		require.Equal(t, b.Session.ID, fe.Details["holder_session"])
		require.Equal(t, "awr session resume --from-session "+a.Session.ID+" --agent a2 --no-claim", fe.Hint)
		require.Equal(t, head, te.head(t), "a refused resume creates nothing")

		// The handoff with context refuses alike.
		_, err = commands.ResumeWithContext(ctx, te.Env, commands.ResumeRequest{FromSession: a.Session.ID, Agent: "a2"}, nil)
		require.True(t, fault.Is(err, fault.ClaimConflict), "%v", err)
		require.Equal(t, head, te.head(t))

		// --no-claim resumes beside the holder.
		res, err := resume(te, a.Session.ID, "a2", new(false))
		require.NoError(t, err)
		require.Nil(t, res.Claim)
		require.Equal(t, b.Session.ID, te.liveClaim(t).SessionID)
	})
	t.Run("NoClaimReleasesThePredecessors", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		a := te.start(t, "a1", 60000)
		from := te.head(t)
		res, err := resume(te, a.Session.ID, "a2", new(false))
		require.NoError(t, err)
		require.Nil(t, res.Claim)
		require.Nil(t, te.liveClaim(t), "the predecessor's claim was released as it ended")
		require.Contains(t, kinds(t, te.Store, from), events.KindClaimReleased)

		h, err := commands.ResumeWithContext(ctx, te.Env, commands.ResumeRequest{FromSession: res.Session.ID, Agent: "a3", Claim: new(false)}, nil)
		require.NoError(t, err)
		require.Contains(t, h.RecoveryGaps, "the successor holds no claim on T-1 (resumed with --no-claim); take it with: awr claim acquire --session "+h.Resumed.Session.ID)
	})
}
