package commands_test

import (
	"context"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// testEnv opens a fresh project with a fixed, steppable clock and seeded
// entropy.
type testEnv struct {
	*commands.Env
	now time.Time
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	ctx := context.Background()
	st, err := events.Open(ctx, filepath.Join(t.TempDir(), ".awr", "awr.db"), events.Options{Create: true, Projectors: projections.Projectors()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	te := &testEnv{now: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)}
	te.Env = &commands.Env{Store: st, Now: func() time.Time { return te.now }, Entropy: rand.New(rand.NewSource(1))}
	_, err = commands.Init(ctx, te.Env, commands.InitRequest{Name: "demo"})
	require.NoError(t, err)
	_, err = commands.IndexSource(ctx, te.Env, commands.IndexRequest{Source: sampleSource()}, false)
	require.NoError(t, err)
	return te
}

func (te *testEnv) advance(d time.Duration) { te.now = te.now.Add(d) }

// head returns the store's project_revision.
func (te *testEnv) head(t *testing.T) int64 {
	t.Helper()
	var head int64
	require.NoError(t, te.Store.Read(context.Background(), func(r *events.Reader) error { head = r.Head; return nil }))
	return head
}

func sampleSource() events.SourceIndexed {
	return events.SourceIndexed{
		Path: "ledger.yaml", Adapter: "yaml_ledger", Role: "tasks", ContentHash: "h1",
		Items: []events.WorkItem{
			{Key: "T-1", Title: "first", Status: "planned", Priority: "p1", Goal: "G-1", NextAction: "write it", Acceptance: []string{"works"}},
			{Key: "T-2", Title: "second", Status: "planned", Priority: "p0", DependsOn: []events.Dependency{{Key: "T-1", Required: true}}},
			{Key: "T-3", Title: "third", Status: "completed"},
		},
	}
}

func rev(n int64) *int64 { return &n }

func TestStartSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		te := newTestEnv(t)
		res := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a1", Provider: "p", Model: "m", Claim: true, TTLms: new(int64(60000))})
		require.Equal(t, "T-1", res.Session.Work)
		require.NotNil(t, res.Claim)
		require.EqualValues(t, 1, res.Claim.FencingToken)
		require.Equal(t, te.now.UnixMilli()+60000, res.Claim.ExpiresAt)
		require.EqualValues(t, 4, res.ProjectRevision)
	})
	t.Run("ErrClaimConflict", func(t *testing.T) {
		te := newTestEnv(t)
		first := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a1", Claim: true, TTLms: new(int64(1000))})
		_, err := commands.StartSession(ctx, te.Env, commands.StartRequest{Work: "T-1", Agent: "a2", Claim: true})
		require.True(t, fault.Is(err, fault.ClaimConflict), "%v", err)
		require.Equal(t, first.Session.ID, fault.As(err).Details["holder_session"])
		// The lease lapses with no write; the next claimant wins with a higher fencing token.
		te.advance(1001 * time.Millisecond)
		second := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a2", Claim: true})
		require.EqualValues(t, 2, second.Claim.FencingToken)
		// The late writer holding the old lease is fenced off.
		_, err = commands.RecordCheckpoint(ctx, te.Env, commands.CheckpointRequest{SessionID: first.Session.ID, Agent: "a1", Digest: "d", NextAction: "n"})
		require.True(t, fault.Is(err, fault.ClaimConflict), "%v", err)
	})
	t.Run("ErrDependencyBlocked", func(t *testing.T) {
		te := newTestEnv(t)
		_, err := commands.StartSession(ctx, te.Env, commands.StartRequest{Work: "T-2", Agent: "a1", Claim: true})
		require.True(t, fault.Is(err, fault.DependencyBlocked), "%v", err)
	})
	t.Run("ErrInvalidTransition", func(t *testing.T) {
		te := newTestEnv(t)
		_, err := commands.StartSession(ctx, te.Env, commands.StartRequest{Work: "T-3", Agent: "a1", Claim: true})
		require.True(t, fault.Is(err, fault.InvalidTransition), "%v", err)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		te := newTestEnv(t)
		_, err := commands.StartSession(ctx, te.Env, commands.StartRequest{Work: "NOPE", Agent: "a1"})
		require.True(t, fault.Is(err, fault.NotFound), "%v", err)
	})
}

func TestHandoff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	te := newTestEnv(t)
	start := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a1", Claim: true, TTLms: new(int64(600000))})
	sid := start.Session.ID
	_, err := commands.RecordContext(ctx, te.Env, commands.ContextRecordRequest{SessionID: sid, ContextHash: "sha256:" + strings.Repeat("c1", 32), TokenEstimate: 10, TokenBudget: 5000, Complete: true})
	require.NoError(t, err)
	cp, err := commands.RecordCheckpoint(ctx, te.Env, commands.CheckpointRequest{SessionID: sid, Agent: "a1", ContextHash: "sha256:" + strings.Repeat("c1", 32), Digest: "did x", NextAction: "do y", KnowledgeFlags: commands.KnowledgeFlags{OpenLoops: []string{"loop"}}})
	require.NoError(t, err)
	require.True(t, cp.Checkpoint.ContextHashVerified)
	bind, err := commands.BindClient(ctx, te.Env, commands.BindRequest{Client: "claude", ExternalSession: "abc", Work: "T-1", SessionID: sid})
	require.NoError(t, err)
	require.True(t, bind.Changed)
	require.Equal(t, "do y", bind.Binding.NextAction)

	res, err := commands.ResumeSession(ctx, te.Env, commands.ResumeRequest{FromSession: sid, Agent: "a2", Client: "claude", ExternalSession: "abc"})
	require.NoError(t, err)
	require.NotEqual(t, sid, res.Session.ID)
	require.NotNil(t, res.Claim)
	require.EqualValues(t, 2, res.Claim.FencingToken)
	require.Equal(t, start.Claim.ExpiresAt, res.Claim.ExpiresAt, "a moved claim keeps its lease")
	require.Equal(t, cp.Checkpoint.ID, res.Checkpoint.ID)

	_, err = commands.ResumeSession(ctx, te.Env, commands.ResumeRequest{FromSession: sid, Agent: "a3"})
	require.True(t, fault.Is(err, fault.InvalidTransition), "%v", err)
	require.Equal(t, res.Session.ID, fault.As(err).Details["successor_id"])

	// Rebinding follows the resume made for this conversation.
	again, err := commands.BindClient(ctx, te.Env, commands.BindRequest{Client: "claude", ExternalSession: "abc", Work: "T-1"})
	require.NoError(t, err)
	require.Equal(t, res.Session.ID, again.Binding.SessionID)
	require.Equal(t, "do y", again.Binding.NextAction)
	same, err := commands.BindClient(ctx, te.Env, commands.BindRequest{Client: "claude", ExternalSession: "abc", Work: "T-1"})
	require.NoError(t, err)
	require.False(t, same.Changed)

	end, err := commands.EndSession(ctx, te.Env, commands.EndRequest{SessionID: res.Session.ID, Outcome: "completed"})
	require.NoError(t, err)
	require.NotNil(t, end.ReleasedClaim)
	require.Equal(t, "ended", end.Session.Status)
}

func TestScopedConcurrency(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	te := newTestEnv(t)
	a := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a1", Claim: true})
	seen := a.ProjectRevision
	// Another agent works on another item after we read the state.
	te.session(t, commands.StartRequest{Work: "T-3", Agent: "a2"})
	_, err := commands.RecordCheckpoint(ctx, te.Env, commands.CheckpointRequest{SessionID: a.Session.ID, Agent: "a1", Digest: "d", NextAction: "n", WriteMeta: commands.WriteMeta{ExpectedRevision: rev(seen)}})
	require.NoError(t, err, "unrelated work must not conflict")
	// A write on our own session stream after `seen` does conflict.
	_, err = commands.RecordCheckpoint(ctx, te.Env, commands.CheckpointRequest{SessionID: a.Session.ID, Agent: "a1", Digest: "d2", NextAction: "n2", WriteMeta: commands.WriteMeta{ExpectedRevision: rev(seen)}})
	require.True(t, fault.Is(err, fault.RevisionConflict), "%v", err)
	fe := fault.As(err)
	require.EqualValues(t, seen, fe.Details["expected"])
	require.Len(t, fe.Details["conflicts"], 1)
}

func TestIdempotentRequest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	te := newTestEnv(t)
	req := commands.StartRequest{Work: "T-1", Agent: "a1", Claim: true, WriteMeta: commands.WriteMeta{RequestID: "r-1"}}
	first, err := commands.StartSession(ctx, te.Env, req)
	require.NoError(t, err)
	te.advance(time.Second)
	again, err := commands.StartSession(ctx, te.Env, req)
	require.NoError(t, err)
	require.True(t, again.Replayed)
	require.Equal(t, first.Session.ID, again.Session.ID)
	require.Equal(t, first.ProjectRevision, again.ProjectRevision)
	head := te.head(t)
	require.Equal(t, first.ProjectRevision, head, "a repeat appends nothing")

	req.Agent = "someone-else"
	_, err = commands.StartSession(ctx, te.Env, req)
	require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
}

// TestResume_SecondGeneration: a successor of a successor inherits the
// checkpoint recorded two sessions back.
func TestResume_SecondGeneration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	te := newTestEnv(t)
	a := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a", Claim: true})
	cp, err := commands.RecordCheckpoint(ctx, te.Env, commands.CheckpointRequest{SessionID: a.Session.ID, Agent: "a", Digest: "did", NextAction: "next"})
	require.NoError(t, err)
	b, err := commands.ResumeSession(ctx, te.Env, commands.ResumeRequest{FromSession: a.Session.ID, Agent: "b"})
	require.NoError(t, err)
	c, err := commands.ResumeSession(ctx, te.Env, commands.ResumeRequest{FromSession: b.Session.ID, Agent: "c"})
	require.NoError(t, err)
	require.NotNil(t, c.Checkpoint)
	require.Equal(t, cp.Checkpoint.ID, c.Checkpoint.ID)
	require.EqualValues(t, 3, c.Claim.FencingToken)
}

// TestSecretsNeverEnterTheLog: credential-like strings in any free-text
// field are refused with RuleViolation, naming the field and the kind, never
// echoing the secret, and nothing is appended.
func TestSecretsNeverEnterTheLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	te := newTestEnv(t)
	start := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a", Claim: true})
	const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	cases := []struct {
		field string
		call  func() error
	}{
		{"digest", func() error {
			_, err := commands.RecordCheckpoint(ctx, te.Env, commands.CheckpointRequest{SessionID: start.Session.ID, Agent: "a", Digest: "pushed with " + token, NextAction: "n"})
			return err
		}},
		{"next_action", func() error {
			_, err := commands.RecordCheckpoint(ctx, te.Env, commands.CheckpointRequest{SessionID: start.Session.ID, Agent: "a", Digest: "d", NextAction: "export PASSWORD=correcthorse"})
			return err
		}},
		{"open_loops[1]", func() error {
			_, err := commands.RecordCheckpoint(ctx, te.Env, commands.CheckpointRequest{SessionID: start.Session.ID, Agent: "a", Digest: "d", NextAction: "n", KnowledgeFlags: commands.KnowledgeFlags{OpenLoops: []string{"fine", "-----BEGIN PRIVATE KEY-----"}}})
			return err
		}},
		{"agent", func() error {
			_, err := commands.StartSession(ctx, te.Env, commands.StartRequest{Work: "T-3", Agent: "AKIAIOSFODNN7EXAMPLE"})
			return err
		}},
		{"external_session", func() error {
			_, err := commands.BindClient(ctx, te.Env, commands.BindRequest{Client: "c", ExternalSession: "host:" + token, Work: "T-1", SessionID: start.Session.ID})
			return err
		}},
	}
	head := te.head(t)
	for _, tc := range cases {
		err := tc.call()
		require.True(t, fault.Is(err, fault.RuleViolation), "%s: %v", tc.field, err)
		fe := fault.As(err)
		require.Equal(t, tc.field, fe.Details["field"])
		require.NotContains(t, fe.Message, token)
		require.NotContains(t, fe.Message, "correcthorse")
	}
	require.Equal(t, head, te.head(t), "nothing was appended")
}

// session starts a session with req, which must succeed.
func (te *testEnv) session(t *testing.T, req commands.StartRequest) *commands.StartResult {
	t.Helper()
	res, err := commands.StartSession(context.Background(), te.Env, req)
	require.NoError(t, err)
	return res
}
