package project_test

import (
	"context"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fixtures/logkit"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
)

// history: two sessions on W-1 (the second resumes the first, moving its
// claim, and a host binds to it), one session on W-2.
func history(t *testing.T) (*project.Project, string, string, string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	env := logkit.Seeded(t, dir, logkit.Ticking(time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)), 1, // 1 init, 2 index
		events.WorkItem{Key: "W-1", Title: "one", Status: "planned"}, events.WorkItem{Key: "W-2", Title: "two", Status: "planned"})
	p := opened(t, dir, project.Options{})
	a, err := commands.StartSession(ctx, env, commands.StartRequest{Work: "W-1", Agent: "a", Claim: true}) // 3,4
	require.NoError(t, err)
	other, err := commands.StartSession(ctx, env, commands.StartRequest{Work: "W-2", Agent: "c", Claim: true}) // 5,6
	require.NoError(t, err)
	_, err = commands.RecordCheckpoint(ctx, env, commands.CheckpointRequest{SessionID: a.Session.ID, Agent: "a", Digest: "d", NextAction: "n"}) // 7
	require.NoError(t, err)
	b, err := commands.ResumeSession(ctx, env, commands.ResumeRequest{FromSession: a.Session.ID, Agent: "b"}) // 8 start, 9 release, 10 acquire, 11 end a, 12 resumed
	require.NoError(t, err)
	_, err = commands.BindClient(ctx, env, commands.BindRequest{Client: "host", ExternalSession: "host:1", Work: "W-1", SessionID: b.Session.ID}) // 13
	require.NoError(t, err)
	return p, a.Session.ID, b.Session.ID, other.Session.ID
}

// logReq is the request of a filter as the old queries.Log took it (a
// negative limit: all).
func logReq(f project.LogFilter, at *int64) project.LogRequest {
	r := project.LogRequest{Read: project.Read{At: at}, Session: f.Session, Work: f.Work, Kind: f.Kind, Since: f.Since, Until: f.Until}
	switch {
	case f.Limit < 0:
		r.Limit = new(0)
	case f.Limit > 0:
		r.Limit = new(f.Limit)
	}
	return r
}

func seqs(res *project.LogResult) []int64 {
	var out []int64
	for _, e := range res.Events {
		out = append(out, e.Seq)
	}
	return out
}

func TestLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p, a, b, _ := history(t)
	log := func(f project.LogFilter) *project.LogResult {
		res, err := p.Log(ctx, logReq(f, nil))
		require.NoError(t, err)
		return res
	}
	require.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}, seqs(log(project.LogFilter{})))
	// A session's own stream, its claim events on the work stream.
	require.Equal(t, []int64{3, 4, 7, 9, 11}, seqs(log(project.LogFilter{Session: a})))
	// The successor: its stream, the claim it received, the binding to it.
	require.Equal(t, []int64{8, 10, 12, 13}, seqs(log(project.LogFilter{Session: b})))
	// A work item: the source_indexed event that indexed it, its stream
	// and every session working on it, and bindings.
	require.Equal(t, []int64{2, 3, 4, 7, 8, 9, 10, 11, 12, 13}, seqs(log(project.LogFilter{Work: "W-1"})))
	require.Equal(t, []int64{2, 5, 6}, seqs(log(project.LogFilter{Work: "W-2"})))
	require.Equal(t, []int64{4, 10}, seqs(log(project.LogFilter{Work: "W-1", Kind: "claim_acquired"})))
	require.Equal(t, []int64{10}, seqs(log(project.LogFilter{Session: b, Work: "W-1", Kind: "claim_acquired"})))
	// Since is exclusive, until inclusive; the limit pages.
	require.Equal(t, []int64{8, 9, 10}, seqs(log(project.LogFilter{Since: 7, Until: 10})))
	page := log(project.LogFilter{Limit: 5})
	require.Equal(t, []int64{1, 2, 3, 4, 5}, seqs(page))
	require.EqualValues(t, 5, page.NextSince)
	require.Equal(t, []int64{6, 7}, seqs(log(project.LogFilter{Since: page.NextSince, Limit: 2})))
	// A page is at most MaxLogLimit; LogEach streams every event.
	_, err := p.Log(ctx, logReq(project.LogFilter{Limit: -1}, nil))
	require.Equal(t, fault.InvalidInput, fault.CodeOf(err), "limit 0 lists no whole log: %v", err)
	var all []int64
	var head int64
	require.NoError(t, p.LogEach(ctx, logReq(project.LogFilter{Work: "W-1"}, nil), func(rev int64) error {
		head = rev
		return nil
	}, func(e project.LogEvent) error {
		all = append(all, e.Seq)
		return nil
	}))
	require.EqualValues(t, 13, head)
	require.Equal(t, []int64{2, 3, 4, 7, 8, 9, 10, 11, 12, 13}, all)

	// As of revision 9 the successor's later events do not exist yet.
	at, err := p.Log(ctx, logReq(project.LogFilter{Session: b}, new(int64(9))))
	require.NoError(t, err)
	require.Equal(t, []int64{8}, seqs(at))
	require.EqualValues(t, 9, at.ProjectRevision)

	for _, bad := range []project.LogFilter{{Kind: "nope"}, {Since: -1}, {Since: 5, Until: 5}} {
		_, err := p.Log(ctx, logReq(bad, nil))
		require.True(t, fault.Is(err, fault.InvalidInput), "%+v: %v", bad, err)
	}
	_, err = p.Log(ctx, logReq(project.LogFilter{}, new(int64(14))))
	require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
}

func TestStatusAt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p, _, _, _ := history(t)
	for _, tc := range []struct {
		rev            int64
		active, claims int
		ready          int
	}{
		{2, 0, 0, 2}, {4, 1, 1, 1}, {6, 2, 2, 0}, {8, 3, 2, 0}, {11, 2, 2, 0}, {13, 2, 2, 0},
	} {
		res, err := p.Status(ctx, project.StatusRequest{Read: project.Read{At: new(tc.rev)}})
		require.NoError(t, err)
		require.EqualValues(t, tc.rev, res.ProjectRevision)
		require.Equal(t, tc.active, res.Sessions.Active, "active at %d", tc.rev)
		require.Equal(t, tc.claims, res.LiveClaims, "live claims at %d", tc.rev)
		require.Equal(t, tc.ready, res.ReadyCount, "ready at %d", tc.rev)
		require.Equal(t, 2, res.WorkItems)
	}
}
