package commands_test

import (
	"context"
	"errors"
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
)

func TestBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		te := newTestEnv(t)
		start := te.head(t)
		_, outside := te.Env.Head()
		require.False(t, outside, "an Env outside a batch has no batch head")
		rev, err := commands.Batch(ctx, te.Env, "bench", func(b *commands.Env) error {
			res, err := commands.StartSession(ctx, b, commands.StartRequest{Work: "T-1", Agent: "a", Claim: true})
			if err != nil {
				return err
			}
			h, ok := b.Head()
			require.True(t, ok)
			require.Greater(t, h, start)
			require.Equal(t, start, te.head(t), "nothing is visible outside the batch before it commits")
			_, err = commands.RecordCheckpoint(ctx, b, commands.CheckpointRequest{SessionID: res.Session.ID, Agent: "a", Digest: "did", NextAction: "next"})
			return err
		})
		require.NoError(t, err)
		require.Equal(t, rev, te.head(t))
		require.Greater(t, rev, start+1)
	})
	t.Run("ErrRollsBack", func(t *testing.T) {
		te := newTestEnv(t)
		start := te.head(t)
		boom := errors.New("boom")
		_, err := commands.Batch(ctx, te.Env, "bench", func(b *commands.Env) error {
			if _, err := commands.StartSession(ctx, b, commands.StartRequest{Work: "T-1", Agent: "a", Claim: true}); err != nil {
				return err
			}
			return boom
		})
		require.ErrorIs(t, err, boom)
		require.Equal(t, start, te.head(t), "a failed batch commits nothing")
	})
	t.Run("ErrNested", func(t *testing.T) {
		te := newTestEnv(t)
		_, err := commands.Batch(ctx, te.Env, "bench", func(b *commands.Env) error {
			_, err := commands.Batch(ctx, b, "bench", func(*commands.Env) error { return nil })
			return err
		})
		require.Equal(t, fault.Internal, fault.CodeOf(err))
	})
	t.Run("ErrEnded", func(t *testing.T) {
		te := newTestEnv(t)
		var kept *commands.Env
		_, err := commands.Batch(ctx, te.Env, "bench", func(b *commands.Env) error { kept = b; return nil })
		require.NoError(t, err)
		_, ok := kept.Head()
		require.False(t, ok)
		_, err = commands.StartSession(ctx, kept, commands.StartRequest{Work: "T-1", Agent: "a", Claim: true})
		require.Equal(t, fault.Internal, fault.CodeOf(err), "a batch Env after its batch")
	})
}
