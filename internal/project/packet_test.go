package project_test

import (
	"context"
	"testing"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
)

func TestContextPacket(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p, a, b, other := history(t)
	before := head(t, p)

	t.Run("OK", func(t *testing.T) {
		res, err := p.ContextPacket(ctx, project.ContextPacketRequest{Session: b})
		require.NoError(t, err)
		require.Equal(t, "W-1", res.WorkContext.Work)
		require.Contains(t, res.WorkContext.RenderedContext, "Session: "+b)
		require.Zero(t, res.RecordedSeq)
		require.Equal(t, before, res.ProjectRevision)

		// An ended session's packet reads too, and the work item's.
		_, err = p.ContextPacket(ctx, project.ContextPacketRequest{Session: a})
		require.NoError(t, err)
		w, err := p.ContextPacket(ctx, project.ContextPacketRequest{Work: "W-2"})
		require.NoError(t, err)
		require.NotContains(t, w.WorkContext.RenderedContext, "Session: ")

		// At a past revision, W-1 had no checkpoint yet.
		past, err := p.ContextPacket(ctx, project.ContextPacketRequest{Session: a, Read: project.Read{At: new(int64(4))}})
		require.NoError(t, err)
		require.Equal(t, int64(4), past.ProjectRevision)
		require.Nil(t, past.WorkContext.Knowledge)
		require.Equal(t, before, head(t, p), "a packet read writes nothing")
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := p.ContextPacket(ctx, project.ContextPacketRequest{Session: "nope"})
		require.Equal(t, fault.NotFound, fault.CodeOf(err))
		_, err = p.ContextPacket(ctx, project.ContextPacketRequest{Work: "W-9"})
		require.Equal(t, fault.NotFound, fault.CodeOf(err))
		require.NotEmpty(t, fault.As(err).Hint)
	})

	t.Run("ErrInvalidInput", func(t *testing.T) {
		_, err := p.ContextPacket(ctx, project.ContextPacketRequest{})
		require.Equal(t, fault.InvalidInput, fault.CodeOf(err))
		_, err = p.ContextPacket(ctx, project.ContextPacketRequest{Session: other, Work: "W-1"})
		require.Equal(t, fault.InvalidInput, fault.CodeOf(err))
		_, err = p.ContextPacket(ctx, project.ContextPacketRequest{Work: "W-1", Budget: new(0)})
		require.Equal(t, fault.InvalidInput, fault.CodeOf(err))
	})
}
