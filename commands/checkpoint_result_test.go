package commands_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/repo"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// The checkpoint a RecordCheckpoint result carries is built from the
// payload it appended, not read back: it must be the checkpoint a read of
// the log gives, field for field, in every shape a checkpoint takes.
func TestRecordCheckpoint_ResultIsTheStoredCheckpoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	te := newTestEnv(t)
	start := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a1", Claim: true, TTLms: new(int64(3_600_000))})
	reqs := []commands.CheckpointRequest{
		{Digest: "plain", NextAction: "next"},
		{Digest: "loops <&> \u00e9", NextAction: "next", KnowledgeFlags: commands.KnowledgeFlags{OpenLoops: []string{"first loop", "second loop"}}},
		{Digest: "resolve", NextAction: "next", KnowledgeFlags: commands.KnowledgeFlags{ResolveLoops: []string{"L-1=done"}, Decisions: []string{"use SQLite"}}},
		{Digest: "repo", NextAction: "next", Repo: &events.RepoRecord{State: &repo.State{}, FilesChanged: []repo.File{}, FilesSince: events.FilesSinceStart}},
		{Digest: "hash", NextAction: "next", ContextHash: "sha256:" + "ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12"},
		{Digest: "replacement \uFFFD char", NextAction: "next"},
	}
	for _, req := range reqs {
		req.SessionID, req.Agent = start.Session.ID, "a1"
		te.advance(1000)
		res, err := commands.RecordCheckpoint(ctx, te.Env, req)
		require.NoError(t, err, req.Digest)
		var stored *projections.Checkpoint
		require.NoError(t, te.Store.Read(ctx, func(r *events.Reader) error {
			stored, err = projections.CheckpointAt(r.Conn, res.Checkpoint.ID, r.Head)
			return err
		}))
		require.NotNil(t, stored, req.Digest)
		want, err := json.Marshal(stored)
		require.NoError(t, err)
		got, err := json.Marshal(res.Checkpoint)
		require.NoError(t, err)
		require.JSONEq(t, string(want), string(got), req.Digest)
		require.Equal(t, stored.Seq, res.Checkpoint.Seq)
	}
}
