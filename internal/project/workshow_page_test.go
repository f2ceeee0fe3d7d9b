package project_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
)

// TestWorkShow_SessionsPaged: an item with more sessions than a page
// lists the latest commands.DefaultPage of them, oldest first, counts
// them all, and gives the cursor from which `awr session list --work
// --newest` lists the older ones, which are exactly the rest; its current
// session is the one holding the claim even when it started before the
// page, and at a past revision the page is that revision's.
func TestWorkShow_SessionsPaged(t *testing.T) {
	ctx := context.Background()
	p := openW1(t)
	holder, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: "holder", Claim: true})
	require.NoError(t, err)
	ids := []string{holder.Session.ID}
	var pastRev int64
	n := commands.DefaultPage + 12
	for i := 1; i < n; i++ {
		s, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: fmt.Sprintf("a%d", i)})
		require.NoError(t, err)
		_, err = p.SessionEnd(ctx, project.SessionEndRequest{SessionID: s.Session.ID, Agent: fmt.Sprintf("a%d", i), Outcome: events.OutcomeIncomplete})
		require.NoError(t, err)
		ids = append(ids, s.Session.ID)
		if i == 9 {
			st, err := p.Status(ctx, project.StatusRequest{})
			require.NoError(t, err)
			pastRev = st.ProjectRevision
		}
	}

	show, err := p.WorkShow(ctx, project.WorkShowRequest{Key: "W-1"})
	require.NoError(t, err)
	require.Equal(t, n, show.SessionsTotal)
	require.Len(t, show.Sessions, commands.DefaultPage)
	for i, s := range show.Sessions {
		require.Equal(t, ids[n-commands.DefaultPage+i], s.ID, "the latest page, oldest first")
	}
	require.NotEmpty(t, show.SessionsNextCursor)
	require.Equal(t, holder.Session.ID, show.Current, "the claim's holder, older than the page")
	require.NotNil(t, show.CurrentSession())
	require.Equal(t, holder.Session.ID, show.CurrentSession().ID)

	older, err := p.SessionList(ctx, project.SessionListRequest{Work: "W-1", Newest: true, Cursor: show.SessionsNextCursor, All: true})
	require.NoError(t, err)
	require.Len(t, older.Sessions, n-commands.DefaultPage)
	for i, s := range older.Sessions {
		require.Equal(t, ids[n-commands.DefaultPage-1-i], s.ID, "the older ones, newest first")
	}

	past, err := p.WorkShow(ctx, project.WorkShowRequest{Key: "W-1", Read: commands.AtRevision(pastRev)})
	require.NoError(t, err)
	require.Equal(t, 10, past.SessionsTotal)
	require.Len(t, past.Sessions, 10)
	require.Empty(t, past.SessionsNextCursor)
	require.Equal(t, ids[:10], func() (out []string) {
		for _, s := range past.Sessions {
			out = append(out, s.ID)
		}
		return out
	}())
}
