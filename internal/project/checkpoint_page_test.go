package project_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/internal/project"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// TestSessionCheckpoint_AnswerPaged: a checkpoint's answer holds what the
// checkpoint changed whole (every item it opened in checkpoint.changes,
// every item it closed in knowledge.closed_since_checkpoint) and the
// first page of the items in force (50), with knowledge_total and the
// command of session show that lists the next page; following it lists
// the rest, so nothing in force is lost or repeated. A checkpoint on a
// work item with fewer items in force than a page lists them all, with
// no cursor.
func TestSessionCheckpoint_AnswerPaged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := openW1(t)
	s, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: "a0", Claim: true})
	require.NoError(t, err)
	id := s.Session.ID
	texts := func(what string, n int) (out []string) {
		for i := 1; i <= n; i++ {
			out = append(out, fmt.Sprintf("%s %d", what, i))
		}
		return out
	}
	small, err := p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: id, Agent: "a0", Digest: "Began", NextAction: "Go on",
		KnowledgeFlags: commands.KnowledgeFlags{OpenLoops: texts("Early question", 3)}})
	require.NoError(t, err)
	require.Equal(t, []string{"L-1", "L-2", "L-3"}, inForce(small.Knowledge))
	require.Equal(t, 3, small.KnowledgeTotal)
	require.Empty(t, small.KnowledgeNextCursor)
	require.Empty(t, small.KnowledgeNextCommand)

	res, err := p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: id, Agent: "a0", Digest: "Went on", NextAction: "Go on",
		KnowledgeFlags: commands.KnowledgeFlags{OpenLoops: texts("Open question", 60), Decisions: texts("Decided", 5), ResolveLoops: []string{"L-2=answered"}, DropLoops: []string{"L-3=moot"}}})
	require.NoError(t, err)
	var opened, closed []string
	for _, c := range res.Checkpoint.Changes {
		if c.Op == "open" {
			opened = append(opened, c.ID)
		}
	}
	require.Equal(t, append(ids("L", 4, 63), ids("D", 1, 5)...), opened, "every item the checkpoint opened, whole")
	for _, c := range res.Knowledge.Closed {
		closed = append(closed, c.ID+" "+c.State)
	}
	require.Equal(t, []string{"L-2 resolved", "L-3 dropped"}, closed, "every item the checkpoint closed, whole")

	all := append(append([]string{"L-1"}, ids("L", 4, 63)...), ids("D", 1, 5)...)
	require.Equal(t, len(all), res.KnowledgeTotal)
	require.Equal(t, all[:commands.DefaultPage], inForce(res.Knowledge), "the first page of the items in force")
	require.Equal(t, "awr session show "+id+" --knowledge-cursor "+res.KnowledgeNextCursor, res.KnowledgeNextCommand)

	// The next command's cursor lists the rest.
	fields := strings.Fields(res.KnowledgeNextCommand)
	require.Equal(t, []string{"awr", "session", "show", id, "--knowledge-cursor"}, fields[:5])
	next, err := p.SessionShow(ctx, project.SessionShowRequest{Session: fields[3], KnowledgeCursor: fields[5]})
	require.NoError(t, err)
	require.Equal(t, all[commands.DefaultPage:], inForce(next.Knowledge), "the rest, once")
	require.Empty(t, next.KnowledgeNextCursor)
}

// TestClientShow_OpenLoopsPaged: what a host conversation is bound to
// names the first page of its work item's open loops (50), with
// open_loops_total and the command of session show that lists the next;
// following it lists the rest, once. client bind answers the same; at a
// past revision the command reads at that revision too. A work item with
// fewer loops than a page lists them all, with no cursor.
func TestClientShow_OpenLoopsPaged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := openW1(t)
	s, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: "a0", Claim: true})
	require.NoError(t, err)
	id := s.Session.ID
	var texts []string
	for i := 1; i <= 70; i++ {
		texts = append(texts, fmt.Sprintf("Open question %d", i))
	}
	_, err = p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: id, Agent: "a0", Digest: "Began", NextAction: "Go on",
		KnowledgeFlags: commands.KnowledgeFlags{OpenLoops: texts[:3]}})
	require.NoError(t, err)
	bind := project.ClientBindRequest{Client: "host", ExternalSession: "host:1", Work: "W-1", SessionID: id}
	small, err := p.ClientBind(ctx, bind)
	require.NoError(t, err)
	require.Len(t, small.Binding.OpenLoops, 3)
	require.Equal(t, 3, small.Binding.OpenLoopsTotal)
	require.Empty(t, small.Binding.OpenLoopsNextCursor)
	require.Empty(t, small.Binding.OpenLoopsNextCommand)

	_, err = p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: id, Agent: "a0", Digest: "Went on", NextAction: "Go on",
		KnowledgeFlags: commands.KnowledgeFlags{OpenLoops: texts[3:], Decisions: []string{"Decided"}}})
	require.NoError(t, err)
	bound, err := p.ClientBind(ctx, bind)
	require.NoError(t, err)
	v, err := p.ClientShow(ctx, project.ClientShowRequest{ExternalSession: "host:1"})
	require.NoError(t, err)
	for _, b := range []*project.BindingView{&bound.Binding, v.Summary} {
		require.Equal(t, 70, b.OpenLoopsTotal)
		require.Equal(t, ids("L", 1, commands.DefaultPage), inForce(&projections.KnowledgeState{OpenLoops: b.OpenLoops}), "the first page")
		require.Equal(t, "awr session show "+id+" --knowledge-cursor "+b.OpenLoopsNextCursor, b.OpenLoopsNextCommand)
	}
	fields := strings.Fields(v.Summary.OpenLoopsNextCommand)
	next, err := p.SessionShow(ctx, project.SessionShowRequest{Session: fields[3], KnowledgeCursor: fields[5]})
	require.NoError(t, err)
	require.Equal(t, append(ids("L", commands.DefaultPage+1, 70), "D-1"), inForce(next.Knowledge), "the rest of the loops, once, then the other items")

	// Read at a revision (here the latest), the next page's command reads
	// there too.
	at := v.ProjectRevision
	atHead, err := p.ClientShow(ctx, project.ClientShowRequest{ExternalSession: "host:1", Read: commands.Read{At: &at}})
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("awr session show %s --knowledge-cursor %s --at %d", id, atHead.Summary.OpenLoopsNextCursor, at), atHead.Summary.OpenLoopsNextCommand)
}
