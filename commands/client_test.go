package commands_test

import (
	"context"
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

func TestConversationKey(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ client, id, key string }{
		{"claude", "0f3c-uuid", "claude:0f3c-uuid"},
		{"codex", "0f3c-uuid", "codex:0f3c-uuid"},
		{"gemini", "g:1", "gemini:g:1"},
		{"generic", "myhost:42", "myhost:42"},
		{"claude-code", "claude-code:conv-7f3a", "claude-code:conv-7f3a"},
	} {
		key, err := commands.ConversationKey("bind client", c.client, c.id)
		require.NoError(t, err, "%s %s", c.client, c.id)
		require.Equal(t, c.key, key)
	}
	for _, c := range []struct{ client, id, field string }{
		{"claude", "", "external_session"},
		{"claude", "claude:abc", "external_session"}, // the host reports no prefix
		{"generic", "nohost", "external_session"},
		{"generic", ":id", "external_session"},
		{"claude-code", "claude:abc", "client"}, // would collide with --client claude
		{"generic", "codex:abc", "client"},
	} {
		_, err := commands.ConversationKey("bind client", c.client, c.id)
		require.True(t, fault.Is(err, fault.InvalidInput), "%s %s: %v", c.client, c.id, err)
		require.Equal(t, c.field, fault.As(err).Details["field"])
	}
}

func bindingOf(t *testing.T, te *testEnv, key string) *projections.Binding {
	t.Helper()
	var b *projections.Binding
	require.NoError(t, te.Store.Read(context.Background(), func(r *events.Reader) (err error) {
		b, err = projections.BindingAt(r.Conn, key, r.Head)
		return err
	}))
	return b
}

// TestBindClient_Keys: the same id reported by two hosts is two
// conversations, each on its own stream.
func TestBindClient_Keys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	te := newTestEnv(t)
	start := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a1"})
	other := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a2"})
	a, err := commands.BindClient(ctx, te.Env, commands.BindRequest{Client: "claude", ExternalSession: "same-id", Work: "T-1", SessionID: start.Session.ID})
	require.NoError(t, err)
	require.Equal(t, "claude:same-id", a.Binding.ExternalSession)
	b, err := commands.BindClient(ctx, te.Env, commands.BindRequest{Client: "codex", ExternalSession: "same-id", Work: "T-1", SessionID: other.Session.ID})
	require.NoError(t, err)
	require.True(t, b.Changed)
	require.Equal(t, start.Session.ID, bindingOf(t, te, "claude:same-id").SessionID)
	require.Equal(t, other.Session.ID, bindingOf(t, te, "codex:same-id").SessionID)
	// A generic client may not spell a host client's key itself.
	_, err = commands.BindClient(ctx, te.Env, commands.BindRequest{Client: "generic", ExternalSession: "claude:same-id", Work: "T-1", SessionID: other.Session.ID})
	require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
	require.Equal(t, other.Session.ID, bindingOf(t, te, "codex:same-id").SessionID)
	require.Equal(t, start.Session.ID, bindingOf(t, te, "claude:same-id").SessionID)
}

// fenceEnv is a session S on T-1 bound to two claude conversations, "old"
// and "new", resumed by agent a2 with forKey (the conversation the resume
// is made for, "" for none).
func fenceEnv(t *testing.T, forKey string) (te *testEnv, s, succ string) {
	t.Helper()
	ctx := context.Background()
	te = newTestEnv(t)
	start := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a1", Claim: true})
	s = start.Session.ID
	_, err := commands.RecordCheckpoint(ctx, te.Env, commands.CheckpointRequest{SessionID: s, Agent: "a1", Digest: "did x", NextAction: "do y"})
	require.NoError(t, err)
	for _, id := range []string{"old", "new"} {
		_, err = commands.BindClient(ctx, te.Env, commands.BindRequest{Client: "claude", ExternalSession: id, Work: "T-1", SessionID: s})
		require.NoError(t, err)
	}
	req := commands.ResumeRequest{FromSession: s, Agent: "a2"}
	if forKey != "" {
		req.Client, req.ExternalSession = "claude", forKey
	}
	res, err := commands.ResumeSession(ctx, te.Env, req)
	require.NoError(t, err)
	return te, s, res.Session.ID
}

func requireStale(t *testing.T, err error, s, succ string) {
	t.Helper()
	require.True(t, fault.Is(err, fault.InvalidTransition), "%v", err)
	fe := fault.As(err)
	require.Equal(t, s, fe.Details["session_id"])
	require.Equal(t, succ, fe.Details["successor_id"])
	require.Equal(t, "a2", fe.Details["successor_agent"])
	require.Equal(t, "awr recovery inspect --session "+succ, fe.Hint)
	require.Contains(t, fe.Message, succ)
}

func TestBindClient_Fence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		te, s, succ := fenceEnv(t, "new")
		res, err := commands.BindClient(ctx, te.Env, commands.BindRequest{Client: "claude", ExternalSession: "new", Work: "T-1"})
		require.NoError(t, err)
		require.True(t, res.Changed)
		require.Equal(t, succ, res.Binding.SessionID)
		require.Equal(t, "do y", res.Binding.NextAction)
		// --from-session follows the same way.
		again, err := commands.BindClient(ctx, te.Env, commands.BindRequest{Client: "claude", ExternalSession: "new", Work: "T-1", FromSession: s})
		require.NoError(t, err)
		require.False(t, again.Changed)
		require.Equal(t, succ, again.Binding.SessionID)
	})
	t.Run("ErrStale", func(t *testing.T) {
		t.Parallel()
		te, s, succ := fenceEnv(t, "new")
		_, err := commands.BindClient(ctx, te.Env, commands.BindRequest{Client: "claude", ExternalSession: "old", Work: "T-1"})
		requireStale(t, err, s, succ)
		require.Equal(t, "claude:new", fault.As(err).Details["resumed_for"])
		_, err = commands.BindClient(ctx, te.Env, commands.BindRequest{Client: "claude", ExternalSession: "old", Work: "T-1", FromSession: s})
		requireStale(t, err, s, succ)
		require.Equal(t, s, bindingOf(t, te, "claude:old").SessionID, "a refused bind writes nothing")
		// Handing the conversation over by name stays possible.
		res, err := commands.BindClient(ctx, te.Env, commands.BindRequest{Client: "claude", ExternalSession: "old", Work: "T-1", SessionID: succ})
		require.NoError(t, err)
		require.Equal(t, succ, res.Binding.SessionID)
	})
	t.Run("ErrResumedForNone", func(t *testing.T) {
		t.Parallel()
		te, s, succ := fenceEnv(t, "")
		for _, id := range []string{"old", "new"} {
			_, err := commands.BindClient(ctx, te.Env, commands.BindRequest{Client: "claude", ExternalSession: id, Work: "T-1"})
			requireStale(t, err, s, succ)
			require.Equal(t, "", fault.As(err).Details["resumed_for"])
		}
	})
	t.Run("ChainOK", func(t *testing.T) {
		t.Parallel()
		te, _, succ := fenceEnv(t, "new")
		third, err := commands.ResumeSession(ctx, te.Env, commands.ResumeRequest{FromSession: succ, Agent: "a3", Client: "claude", ExternalSession: "new"})
		require.NoError(t, err)
		res, err := commands.BindClient(ctx, te.Env, commands.BindRequest{Client: "claude", ExternalSession: "new", Work: "T-1"})
		require.NoError(t, err)
		require.Equal(t, third.Session.ID, res.Binding.SessionID)
	})
	t.Run("ErrChainStale", func(t *testing.T) {
		t.Parallel()
		te, _, succ := fenceEnv(t, "new")
		third, err := commands.ResumeSession(ctx, te.Env, commands.ResumeRequest{FromSession: succ, Agent: "a3", Client: "codex", ExternalSession: "new"})
		require.NoError(t, err)
		_, err = commands.BindClient(ctx, te.Env, commands.BindRequest{Client: "claude", ExternalSession: "new", Work: "T-1"})
		require.True(t, fault.Is(err, fault.InvalidTransition), "%v", err)
		require.Equal(t, succ, fault.As(err).Details["session_id"])
		require.Equal(t, third.Session.ID, fault.As(err).Details["successor_id"])
		require.Equal(t, "a3", fault.As(err).Details["successor_agent"])
		require.Equal(t, "codex:new", fault.As(err).Details["resumed_for"])
	})
}

func TestResumeSession_Conversation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		start := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a1"})
		res, err := commands.ResumeSession(ctx, te.Env, commands.ResumeRequest{FromSession: start.Session.ID, Agent: "a2", Client: "gemini", ExternalSession: "g-1"})
		require.NoError(t, err)
		var got string
		require.NoError(t, te.Store.Read(ctx, func(r *events.Reader) error {
			e, err := events.LastOfKind(r.Conn, "session/"+res.Session.ID, events.KindSessionResumed, 0)
			require.NoError(t, err)
			v, err := events.Decode(e)
			got = v.(*events.SessionResumed).ExternalSession
			return err
		}))
		require.Equal(t, "gemini:g-1", got)
	})
	t.Run("ErrInvalidInput", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		start := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a1"})
		for _, req := range []commands.ResumeRequest{
			{Client: "claude"},
			{Client: "claude", ExternalSession: "claude:abc"},
			{ExternalSession: "no-host"},
			{Client: "generic", ExternalSession: "codex:abc"},
		} {
			req.FromSession, req.Agent = start.Session.ID, "a2"
			_, err := commands.ResumeSession(ctx, te.Env, req)
			require.True(t, fault.Is(err, fault.InvalidInput), "%+v: %v", req, err)
		}
		// Nothing was resumed: the session still resumes.
		_, err := commands.ResumeSession(ctx, te.Env, commands.ResumeRequest{FromSession: start.Session.ID, Agent: "a2"})
		require.NoError(t, err)
	})
}
