package project_test

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/awr-dev/awr/internal/cursor"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
)

// TestExecList_Paged: `awr exec list` answers a page, counts every
// execution and gives the cursor of the next; the pages put together are
// the whole list in order, --all is that list at once, a past revision
// pages its own executions, and a cursor awr did not give is refused.
func TestExecList_Paged(t *testing.T) {
	ctx := context.Background()
	p := openW1(t)
	start, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: "a0", Claim: true})
	require.NoError(t, err)
	var ids []string
	var third int64
	for i := range 7 {
		res, err := p.ExecRun(ctx, project.ExecRunRequest{SessionID: start.Session.ID, Key: fmt.Sprintf("step-%d", i), Argv: []string{"true"}}, nil, io.Discard, io.Discard)
		require.NoError(t, err)
		ids = append(ids, res.Execution.ID)
		if i == 2 {
			third = res.ProjectRevision
		}
	}

	three := 3
	var paged []string
	cur := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 4, "the pages do not end")
		page, err := p.ExecList(ctx, project.ExecListRequest{Limit: &three, Cursor: cur})
		require.NoError(t, err)
		require.Equal(t, 7, page.ExecutionsTotal)
		require.LessOrEqual(t, len(page.Executions), 3)
		for _, x := range page.Executions {
			paged = append(paged, x.ID)
		}
		if page.NextCursor == "" {
			break
		}
		cur = page.NextCursor
	}
	require.Equal(t, ids, paged)

	all, err := p.ExecList(ctx, project.ExecListRequest{All: true})
	require.NoError(t, err)
	require.Len(t, all.Executions, 7)
	require.Empty(t, all.NextCursor)

	first, err := p.ExecList(ctx, project.ExecListRequest{Work: "W-1"})
	require.NoError(t, err)
	require.Len(t, first.Executions, 7, "the default page holds 50")

	past, err := p.ExecList(ctx, project.ExecListRequest{Limit: &three, Read: project.Read{At: &third}})
	require.NoError(t, err)
	require.Equal(t, 3, past.ExecutionsTotal)
	require.Len(t, past.Executions, 3)
	require.Empty(t, past.NextCursor, "three executions at that revision fill the page")

	_, err = p.ExecList(ctx, project.ExecListRequest{Cursor: "not-a-cursor"})
	require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
	_, err = p.ExecList(ctx, project.ExecListRequest{Cursor: cursor.EncodeID("01NOEXECUTION0000000000000")})
	require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
	zero := 0
	_, err = p.ExecList(ctx, project.ExecListRequest{Limit: &zero})
	require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
}
