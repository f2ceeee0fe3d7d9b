package project_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fixtures/logkit"
	"github.com/awr-dev/awr/internal/project"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// Loops, decisions and facts are matched by projections.MatchText
// everywhere: a checkpoint that restates them with another case, spacing
// or end punctuation opens nothing new, and hygiene names the duplicates
// an older log holds (written here as an awr that matched white space
// only would have), each with the command that closes it.
func TestKnowledge_MatchedByNormalisedText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	env := logkit.Seeded(t, dir, logkit.Ticking(time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)), 1,
		events.WorkItem{Key: "W-1", Title: "one", Status: "planned"})
	p := opened(t, dir, project.Options{})
	s, err := commands.StartSession(ctx, env, commands.StartRequest{Work: "W-1", Agent: "a", Claim: true})
	require.NoError(t, err)
	sid := s.Session.ID

	// The older log: each text twice, differing by case and a full stop.
	_, err = env.Store.Write(ctx, events.WriteOptions{Now: env.Now(), Entropy: env.Entropy, Actor: "a"}, func(tx *events.Tx) (any, error) {
		cid := tx.NewID()
		_, err := tx.Append(events.NewEvent{Stream: "session/" + sid, ID: cid, Payload: events.CheckpointRecorded{
			CheckpointID: cid, SessionID: sid, Work: "W-1", Agent: "a", Digest: "d", NextAction: "n", Changes: []events.KnowledgeChange{
				{Op: events.ChangeOpen, ID: "L-1", Kind: events.KnowledgeLoop, Text: "Fix the login"},
				{Op: events.ChangeOpen, ID: "L-2", Kind: events.KnowledgeLoop, Text: "fix the login."},
				{Op: events.ChangeOpen, ID: "L-3", Kind: events.KnowledgeLoop, Text: "Write the docs"},
				{Op: events.ChangeOpen, ID: "D-1", Kind: events.KnowledgeDecision, Text: "Use SQLite"},
				{Op: events.ChangeOpen, ID: "D-2", Kind: events.KnowledgeDecision, Text: "use  sqlite!"},
				{Op: events.ChangeOpen, ID: "F-1", Kind: events.KnowledgeFact, Text: "use sqlite"},
			}}})
		return nil, err
	})
	require.NoError(t, err)

	hy, err := p.ContextHygiene(ctx, project.HygieneRequest{Work: "W-1"})
	require.NoError(t, err)
	dups := map[string]project.Finding{}
	for _, f := range hy.Findings {
		if f.Kind == project.FindingDuplicate {
			dups[f.ID] = f
		}
	}
	// A fact and a decision with one text are not duplicates: kinds differ.
	require.Len(t, dups, 2, "%+v", hy.Findings)
	l2, d2 := dups["L-2"], dups["D-2"]
	require.Contains(t, l2.Reason, "L-1")
	require.True(t, strings.HasSuffix(l2.Command, "--drop-loop 'L-2=duplicate of L-1'"), l2.Command)
	require.True(t, strings.HasPrefix(l2.Command, "awr session checkpoint --session "+sid+" "), l2.Command)
	require.Contains(t, d2.Reason, "D-1")
	require.True(t, strings.HasSuffix(d2.Command, "--retract 'D-2=duplicate of D-1'"), d2.Command)

	live := func() int {
		var n int
		require.NoError(t, env.Store.Read(ctx, func(r *events.Reader) error {
			ks, err := projections.LiveKnowledgeAt(r.Conn, "W-1", r.Head)
			n = len(ks)
			return err
		}))
		return n
	}
	before := live()
	// Restating every text another way opens nothing; the commands
	// hygiene printed close the duplicates.
	_, err = commands.RecordCheckpoint(ctx, env, commands.CheckpointRequest{SessionID: sid, Agent: "a", Digest: "restated", NextAction: "n",
		KnowledgeFlags: commands.KnowledgeFlags{OpenLoops: []string{"FIX THE LOGIN!", "  write the   docs. "}, Decisions: []string{"use sqlite."},
			Facts: []string{"Use SQLite"}, DropLoops: []string{"L-2=duplicate of L-1"}, Retract: []string{"D-2=duplicate of D-1"}}})
	require.NoError(t, err)
	require.Equal(t, before-2, live(), "a restatement opened an item, or a duplicate stayed")
	hy, err = p.ContextHygiene(ctx, project.HygieneRequest{Work: "W-1"})
	require.NoError(t, err)
	for _, f := range hy.Findings {
		require.NotEqual(t, project.FindingDuplicate, f.Kind, "%+v", f)
	}
	// Another text is another item.
	_, err = commands.RecordCheckpoint(ctx, env, commands.CheckpointRequest{SessionID: sid, Agent: "a", Digest: "more", NextAction: "n",
		KnowledgeFlags: commands.KnowledgeFlags{OpenLoops: []string{"Fix the logout."}}})
	require.NoError(t, err)
	require.Equal(t, before-1, live())
}
