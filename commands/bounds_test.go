package commands_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/workcontext"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// TestLease_Bounded: a lease near the int64 maximum is refused with the
// bound, on every road that takes one, and writes nothing (issue #13,
// row 4: before the bound, now + ttl overflowed to a negative expiry).
func TestLease_Bounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	te := newTestEnv(t)
	huge := int64(math.MaxInt64)
	before := te.head(t)
	_, err := commands.StartSession(ctx, te.Env, commands.StartRequest{Work: "T-1", Agent: "a", Claim: true, TTLms: &huge})
	require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
	require.Equal(t, "--ttl", fault.As(err).Details["flag"])
	require.Equal(t, commands.MaxTTLms, fault.As(err).Details["max"])
	require.Equal(t, before, te.head(t))

	ok := commands.MaxTTLms
	start := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a", Claim: true, TTLms: &ok})
	require.Greater(t, start.Claim.ExpiresAt, te.Now().UnixMilli())
	before = te.head(t)
	_, err = commands.RenewClaim(ctx, te.Env, commands.RenewRequest{SessionID: start.Session.ID, TTLms: &huge})
	require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
	_, err = commands.ResumeSession(ctx, te.Env, commands.ResumeRequest{FromSession: start.Session.ID, Agent: "b", TTLms: &huge})
	require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
	_, err = commands.AcquireClaim(ctx, te.Env, commands.AcquireRequest{SessionID: start.Session.ID, TTLms: &huge})
	require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
	require.Equal(t, before, te.head(t))
}

// TestFields_Bounded: one bound per field, for every command (issue #13,
// row 15: a 2 MiB agent label, or one with a NUL, was logged through MCP).
func TestFields_Bounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	te := newTestEnv(t)
	start := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a"})
	before := te.head(t)
	big := strings.Repeat("x", 2<<20)
	for name, call := range map[string]func() error{
		"huge agent": func() error {
			_, err := commands.StartSession(ctx, te.Env, commands.StartRequest{Work: "T-1", Agent: big})
			return err
		},
		"agent with NUL": func() error {
			_, err := commands.ResumeSession(ctx, te.Env, commands.ResumeRequest{FromSession: start.Session.ID, Agent: "a\x00b"})
			return err
		},
		"model with ESC": func() error {
			_, err := commands.StartSession(ctx, te.Env, commands.StartRequest{Work: "T-1", Agent: "a", Model: "m\x1b[2J"})
			return err
		},
		"huge digest": func() error {
			_, err := commands.RecordCheckpoint(ctx, te.Env, commands.CheckpointRequest{SessionID: start.Session.ID, Agent: "a", Digest: big, NextAction: "n"})
			return err
		},
		"digest with NUL": func() error {
			_, err := commands.RecordCheckpoint(ctx, te.Env, commands.CheckpointRequest{SessionID: start.Session.ID, Agent: "a", Digest: "d\x00", NextAction: "n"})
			return err
		},
	} {
		err := call()
		require.True(t, fault.Is(err, fault.InvalidInput), "%s: %v", name, err)
		require.NotEmpty(t, fault.As(err).Details["field"], name)
	}
	require.Equal(t, before, te.head(t), "a refused field writes nothing")
}

// TestClaim_NeverDecidedOnATamperedProjection: with the claims projection
// emptied behind awr's back, a rival claim is refused (Storage, hint awr
// replay) instead of getting the holder's fencing token (issue #13,
// row 13).
func TestClaim_NeverDecidedOnATamperedProjection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	te := newTestEnv(t)
	te.session(t, commands.StartRequest{Work: "T-1", Agent: "holder", Claim: true})
	before := te.tamper(t, "DELETE FROM p_claims WHERE work = 'T-1'")
	_, err := commands.StartSession(ctx, te.Env, commands.StartRequest{Work: "T-1", Agent: "rival", Claim: true})
	te.requireNotDecided(t, err, "disagrees with the log", before)
}

// tamper edits the project's projections behind awr's back with sql and
// returns the project_revision then.
func (te *testEnv) tamper(t *testing.T, sql string) int64 {
	t.Helper()
	conn, err := events.OpenConn(te.Store.Path(), sqlite.OpenReadWrite)
	require.NoError(t, err)
	require.NoError(t, sqlitex.ExecuteTransient(conn, sql, nil))
	require.NoError(t, conn.Close())
	return te.head(t)
}

// requireNotDecided checks that a write on a tampered projection was
// refused as Storage, its message holding msg, its hint awr verify, and
// that nothing was written after before.
func (te *testEnv) requireNotDecided(t *testing.T, err error, msg string, before int64) {
	t.Helper()
	require.True(t, fault.Is(err, fault.Storage), "%v", err)
	require.Contains(t, err.Error(), msg)
	require.Equal(t, "awr verify", fault.As(err).Hint)
	require.Equal(t, before, te.head(t), "nothing written")
}

// TestSession_NeverDecidedOnATamperedProjection: a sessions projection
// edited behind awr's back (an ended session marked active again, a
// running one deleted) decides no write: the session's state is read from
// its stream in the log too (issue #13, row 13).
func TestSession_NeverDecidedOnATamperedProjection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name, sql string
		end       bool
	}{
		{"EndedMarkedActive", "UPDATE p_sessions SET status = 'active', outcome = ''", true},
		{"RunningDeleted", "DELETE FROM p_sessions", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			te := newTestEnv(t)
			st := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a"})
			if tc.end {
				_, err := commands.EndSession(ctx, te.Env, commands.EndRequest{SessionID: st.Session.ID, Outcome: "completed"})
				require.NoError(t, err)
			}
			before := te.tamper(t, tc.sql)
			_, err := commands.RecordCheckpoint(ctx, te.Env, commands.CheckpointRequest{SessionID: st.Session.ID, Agent: "a", Digest: "d", NextAction: "n"})
			te.requireNotDecided(t, err, "the sessions projection disagrees with the log", before)
		})
	}
}

// TestBudget_OneCheck: a token budget is left out (the default) or 1 to
// MaxBudget, for compile and resume alike; 0 is not a silent default and a
// negative budget is never accepted (issue #13, row 15).
func TestBudget_OneCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	te := withGoal(t, newTestEnv(t))
	start := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a"})
	res, err := commands.CompileContext(ctx, te.Env, commands.CompileRequest{Work: "T-1"})
	require.NoError(t, err)
	require.Equal(t, workcontext.DefaultBudget, res.WorkContext.TokenBudget, "no budget given is the default")
	res, err = commands.CompileContext(ctx, te.Env, commands.CompileRequest{Work: "T-1", Budget: new(commands.MaxBudget)})
	require.NoError(t, err)
	require.Equal(t, commands.MaxBudget, res.WorkContext.TokenBudget)
	before := te.head(t)
	for _, b := range []int{0, -1, commands.MaxBudget + 1} {
		_, err := commands.CompileContext(ctx, te.Env, commands.CompileRequest{Work: "T-1", Session: start.Session.ID, Budget: new(b)})
		require.True(t, fault.Is(err, fault.InvalidInput), "compile --budget %d: %v", b, err)
		require.Equal(t, "--budget", fault.As(err).Details["flag"])
		_, err = commands.ResumeWithContext(ctx, te.Env, commands.ResumeRequest{FromSession: start.Session.ID, Agent: "b", Budget: new(b)}, nil)
		require.True(t, fault.Is(err, fault.InvalidInput), "resume --budget %d: %v", b, err)
		require.Equal(t, "--budget", fault.As(err).Details["flag"])
	}
	require.Equal(t, before, te.head(t), "nothing written")
}

// TestCheckpoint_ContextHashIsAHash: a --context-hash that is not
// "sha256:" and 64 hex digits is refused before anything is written.
func TestCheckpoint_ContextHashIsAHash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	te := newTestEnv(t)
	start := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a"})
	for _, h := range []string{"zzz", "sha256:", "sha256:" + strings.Repeat("A", 64), "sha256:" + strings.Repeat("a", 63), "md5:" + strings.Repeat("a", 64)} {
		_, err := commands.RecordCheckpoint(ctx, te.Env, commands.CheckpointRequest{SessionID: start.Session.ID, Agent: "a", Digest: "d", NextAction: "n", ContextHash: h})
		require.True(t, fault.Is(err, fault.InvalidInput), "%q: %v", h, err)
		require.Equal(t, "--context-hash", fault.As(err).Details["flag"])
		require.Equal(t, "awr context compile --work T-1 --session "+start.Session.ID, fault.As(err).Hint)
	}
	cp, err := commands.RecordCheckpoint(ctx, te.Env, commands.CheckpointRequest{SessionID: start.Session.ID, Agent: "a", Digest: "d", NextAction: "n", ContextHash: "sha256:" + strings.Repeat("0a", 32)})
	require.NoError(t, err)
	require.Equal(t, start.ProjectRevision+1, cp.ProjectRevision, "the refused ones wrote nothing")
}

// TestCompile_UnknownWorkIsNotFound: an unknown work key is NotFound in
// context compile, as in session start, with no packet (issue #15, item 9).
func TestCompile_UnknownWorkIsNotFound(t *testing.T) {
	t.Parallel()
	te := newTestEnv(t)
	res, err := commands.CompileContext(context.Background(), te.Env, commands.CompileRequest{Work: "NOPE-1"})
	require.True(t, fault.Is(err, fault.NotFound), "%v", err)
	require.Nil(t, res)
	require.Equal(t, "NOPE-1", fault.As(err).Details["work"])
	require.Equal(t, "awr ready --all", fault.As(err).Hint)
}
