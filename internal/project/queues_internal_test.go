package project

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fixtures/logkit"
	"github.com/awr-dev/awr/internal/cursor"
	"github.com/awr-dev/awr/internal/workqueue"
	"github.com/awr-dev/awr/projections"
	"github.com/awr-dev/awr/replay"
	"github.com/stretchr/testify/require"
)

// queuesWorld is a register of 160 items (more than a page in every
// queue status lists) with live claims, a lapsed one, goals, and seats
// that await a person on a ready item and on a draft one.
func queuesWorld(t *testing.T) (*Project, *commands.Env, func(time.Duration)) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { // the writes' clock: a second a write
		now = now.Add(time.Second)
		return now
	}
	statuses := []string{"planned", "ready", "in_progress", "completed", "blocked", "draft", "planned", "planned"}
	prios := []string{"", "p0", "p1", "p2", "high", "low"}
	var items []events.WorkItem
	for i := 0; i < 160; i++ {
		it := events.WorkItem{Key: fmt.Sprintf("W-%03d", i%150), Title: fmt.Sprint("item ", i), Status: statuses[i%len(statuses)],
			Priority: prios[i%len(prios)], Goal: fmt.Sprintf("G-%d", i%3)}
		if i%4 == 0 {
			it.NextAction, it.Acceptance = "do it", []string{"it works"}
		}
		if i%9 == 0 {
			it.DependsOn = []events.Dependency{{Key: fmt.Sprintf("W-%03d", (i*7)%157), Required: true}}
		}
		if i%13 == 0 {
			it.Blocker = "legal"
		}
		items = append(items, it)
	}
	env := logkit.Seeded(t, dir, clock, 1, items...)
	_, err := commands.IndexSource(ctx, env, commands.IndexRequest{Source: events.SourceIndexed{Path: "goals.md", Adapter: "markdown", ContentHash: "g",
		Goals: []events.Goal{{Key: "G-0", Title: "zero"}, {Key: "G-1", Title: "one"}, {Key: "G-0", Title: "zero again"}}}}, false)
	require.NoError(t, err)
	p, err := Open(ctx, dir, Options{Now: func() time.Time { return now }})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p, env, func(d time.Duration) { now = now.Add(d) }
}

// claimReady starts a session that claims each of the first n ready
// items (a lease of ttl).
func claimReady(t *testing.T, p *Project, env *commands.Env, n int, ttl int64) {
	t.Helper()
	ctx := context.Background()
	res, err := p.Ready(ctx, ReadyRequest{Limit: new(n)})
	require.NoError(t, err)
	require.Len(t, res.Ready, n)
	for _, it := range res.Ready {
		_, err := commands.StartSession(ctx, env, commands.StartRequest{Work: it.Key, Agent: "a", Claim: true, TTLms: &ttl})
		require.NoError(t, err)
	}
}

// awaitPerson makes a seat on work await a person.
func awaitPerson(t *testing.T, env *commands.Env, address, work string) {
	t.Helper()
	ctx := context.Background()
	_, err := commands.DeclareSeat(ctx, env, commands.SeatRequest{Address: address, Runtime: "generic", Command: "agent {context_file}", Work: work})
	require.NoError(t, err)
	id := fmt.Sprintf("01RESTORE%018d", len(address))
	l, err := commands.LaunchSeat(ctx, env, commands.LaunchRequest{Address: address, Mode: events.LaunchStart, TmuxSession: "awr-test-none", RestoreID: id})
	require.NoError(t, err)
	_, _, _, err = commands.RecordSeatRestored(ctx, env, events.SeatRestored{RestoreID: id, Address: address, Rig: "portal",
		Outcome: "attention_required", Reason: "the repository moved", SessionID: l.SessionID})
	require.NoError(t, err)
	_, err = commands.EndSession(ctx, env, commands.EndRequest{SessionID: l.SessionID, Outcome: "interrupted"})
	require.NoError(t, err)
}

// requireQueuesAgree: status's counts, queues and goals read from the
// work queues at the head equal those of the whole readiness list, and
// ready's pages, cursor after cursor, list what a read of everything
// lists, with the same totals.
func requireQueuesAgree(t *testing.T, p *Project) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, p.read(ctx, Read{}, func(r *events.Reader, rev, now int64) error {
		live, err := projections.LiveClaimsAt(r.Conn, rev, now, true)
		require.NoError(t, err)
		goals, err := projections.GoalsAt(r.Conn, rev)
		require.NoError(t, err)
		rs, err := projections.ReadinessFrom(r.Conn, rev, true, live)
		require.NoError(t, err)
		require.NoError(t, workqueue.HoldBack(r, rev, rs))
		whole := &StatusResult{}
		whole.File(workqueue.Of(rs, goals))
		atHead, err := workqueue.AtHead(r, live, goals)
		require.NoError(t, err)
		head := &StatusResult{}
		head.File(atHead)
		require.Equal(t, whole.Queues, head.Queues)
		require.Equal(t, whole.Counts, head.Counts)
		require.Equal(t, whole.WorkItems, head.WorkItems)
		require.Equal(t, whole.ReadyCount, head.ReadyCount)
		require.Equal(t, whole.NextAction, head.NextAction)
		require.Equal(t, whole.Goals, head.Goals)
		return nil
	}))
	for _, executable := range []bool{false, true} {
		all, err := p.Ready(ctx, ReadyRequest{All: true, Executable: executable})
		require.NoError(t, err)
		var paged []ReadyItem
		cursor := ""
		for {
			res, err := p.Ready(ctx, ReadyRequest{Limit: new(7), Cursor: cursor, Executable: executable})
			require.NoError(t, err)
			require.Equal(t, all.ReadyTotal, res.ReadyTotal)
			require.Equal(t, all.ExecutableTotal, res.ExecutableTotal)
			paged = append(paged, res.Ready...)
			if cursor = res.NextCursor; cursor == "" {
				break
			}
			require.Len(t, res.Ready, 7)
		}
		require.Equal(t, all.Ready, paged, "executable %v", executable)
		def, err := p.Ready(ctx, ReadyRequest{Executable: executable})
		require.NoError(t, err)
		require.Equal(t, all.Ready[:min(len(all.Ready), commands.DefaultPage)], def.Ready)
		require.Equal(t, len(all.Ready) > commands.DefaultPage, def.NextCursor != "")
	}
}

// TestQueuesAtHead: status and ready at the head, read from the work
// queues the projections keep, answer as the evaluation of every item
// does, through claims (live and lapsed), seats awaiting a person, a
// reindex that moves items between queues and a rebuild; status lists a
// page of each queue and counts the rest.
func TestQueuesAtHead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p, env, advance := queuesWorld(t)
	requireQueuesAgree(t, p)

	claimReady(t, p, env, 3, 60_000) // lapsed below
	advance(5 * time.Minute)
	claimReady(t, p, env, 4, 3_600_000)
	ready, err := p.Ready(ctx, ReadyRequest{Limit: new(2)}) // the lapsed ones are ready again
	require.NoError(t, err)
	awaitPerson(t, env, "build@portal", ready.Ready[1].Key)
	awaitPerson(t, env, "review@portal", ready.Ready[0].Key) // made a draft below
	requireQueuesAgree(t, p)

	st, err := p.Status(ctx, StatusRequest{})
	require.NoError(t, err)
	require.Equal(t, 4, st.LiveClaims)
	require.Equal(t, 160, st.WorkItems)
	require.Len(t, st.Queues.Ready, commands.DefaultPage)
	require.Greater(t, st.Queues.ReadyTotal, commands.DefaultPage)
	require.Equal(t, st.ReadyCount, st.Queues.ReadyTotal)
	require.Len(t, st.Goals, 2) // a source keeps the first of a repeated goal key
	require.Len(t, st.Goals[0].Work, commands.DefaultPage)
	require.Greater(t, st.Goals[0].WorkTotal, commands.DefaultPage)

	// A reindex completes the planned p1 items (their dependents move)
	// and makes a draft of the work a seat holds back.
	var items []events.WorkItem
	require.NoError(t, p.read(ctx, Read{}, func(r *events.Reader, rev, _ int64) error {
		all, err := projections.WorkItemsAt(r.Conn, rev, true)
		for _, it := range all {
			if it.SourcePath == "todo.md" {
				if it.Status == projections.StatusPlanned && it.Priority == "p1" {
					it.Status = projections.StatusCompleted
				}
				if it.Key == ready.Ready[0].Key {
					it.Status = projections.StatusDraft
				}
				items = append(items, it.WorkItem)
			}
		}
		return err
	}))
	_, err = commands.IndexSource(ctx, env, commands.IndexRequest{Source: events.SourceIndexed{Path: "todo.md", Adapter: "markdown_checklist", ContentHash: "h2", Items: items}}, false)
	require.NoError(t, err)
	requireQueuesAgree(t, p)

	st2, err := p.EventLog(ctx)
	require.NoError(t, err)
	_, _, mismatches, err := replay.CompareWithRebuild(ctx, st2, nil)
	require.NoError(t, err)
	require.Empty(t, mismatches, "incremental projections differ from a rebuild")

	_, err = p.Ready(ctx, ReadyRequest{Cursor: "not-a-cursor"})
	require.ErrorContains(t, err, "--cursor")
}

// TestSessionListPages: session list's pages, cursor after cursor, list
// what --all lists, each counting all of them; a cursor that names no
// listed session is refused.
func TestSessionListPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p, env, _ := queuesWorld(t)
	claimReady(t, p, env, 5, 3_600_000)
	all, err := p.SessionList(ctx, SessionListRequest{All: true})
	require.NoError(t, err)
	require.Len(t, all.Sessions, 5)
	require.Equal(t, 5, all.SessionsTotal)
	require.Empty(t, all.NextCursor)
	var paged []SessionEntry
	next, pages := "", 0
	for {
		res, err := p.SessionList(ctx, SessionListRequest{Limit: new(2), Cursor: next})
		require.NoError(t, err)
		require.Equal(t, 5, res.SessionsTotal)
		paged, pages = append(paged, res.Sessions...), pages+1
		if next = res.NextCursor; next == "" {
			break
		}
	}
	require.Equal(t, 3, pages)
	require.Equal(t, all.Sessions, paged)
	_, err = p.SessionList(ctx, SessionListRequest{Cursor: cursor.EncodeID("01NOSUCHSESSION")})
	require.ErrorContains(t, err, "--cursor names no session")

	// --all is the read model's whole list, in its order, each session
	// with its latest checkpoint and context (what SessionsAt reads).
	var whole []projections.Session
	require.NoError(t, p.read(ctx, Read{}, func(r *events.Reader, rev, _ int64) error {
		var err error
		whole, err = projections.SessionsAt(r.Conn, rev, "")
		return err
	}))
	require.Len(t, whole, 5)
	for i, s := range whole {
		require.Equal(t, s, all.Sessions[i].Session)
	}

	// End two: --active pages over the three left, --newest pages
	// newest first, each page counting all of them.
	for _, e := range all.Sessions[1:3] {
		_, err := commands.EndSession(ctx, env, commands.EndRequest{SessionID: e.ID, Outcome: "completed"})
		require.NoError(t, err)
	}
	walk := func(req SessionListRequest, total int) []string {
		t.Helper()
		var ids []string
		for req.Cursor = ""; ; {
			req.Limit = new(2)
			res, err := p.SessionList(ctx, req)
			require.NoError(t, err)
			require.Equal(t, total, res.SessionsTotal)
			require.LessOrEqual(t, len(res.Sessions), 2)
			for _, s := range res.Sessions {
				ids = append(ids, s.ID)
			}
			if req.Cursor = res.NextCursor; req.Cursor == "" {
				return ids
			}
		}
	}
	id := func(i int) string { return all.Sessions[i].ID }
	require.Equal(t, []string{id(0), id(3), id(4)}, walk(SessionListRequest{Active: true}, 3))
	require.Equal(t, []string{id(4), id(3), id(0)}, walk(SessionListRequest{Active: true, Newest: true}, 3))
	require.Equal(t, []string{id(4), id(3), id(2), id(1), id(0)}, walk(SessionListRequest{Newest: true}, 5))
	require.Equal(t, []string{id(0), id(1), id(2), id(3), id(4)}, walk(SessionListRequest{}, 5))
	// A cursor names a place, not a member: the page after an ended
	// session, among the active ones, starts at the next active one.
	res, err := p.SessionList(ctx, SessionListRequest{Active: true, Cursor: cursor.EncodeID(id(1))})
	require.NoError(t, err)
	require.Equal(t, id(3), res.Sessions[0].ID)

	// At every revision and for each work item, the pages (read through
	// the indexes of the sessions' first versions) list what the read
	// model's whole list at that revision lists, in its order, and count
	// as many; newest first is its reverse.
	// Three more on the first one's work item, one of them ended.
	for i := range 3 {
		s, err := commands.StartSession(ctx, env, commands.StartRequest{Work: all.Sessions[0].Work, Agent: fmt.Sprintf("more-%d", i)})
		require.NoError(t, err)
		if i == 1 {
			_, err = commands.EndSession(ctx, env, commands.EndRequest{SessionID: s.Session.ID, Outcome: "completed"})
			require.NoError(t, err)
		}
	}
	head, err := p.Head(ctx)
	require.NoError(t, err)
	for rev := all.Sessions[0].StartRevision - 1; rev <= head.ProjectRevision; rev++ {
		for _, work := range append([]string{""}, all.Sessions[0].Work, all.Sessions[4].Work) {
			var want []string
			require.NoError(t, p.read(ctx, Read{At: &rev}, func(r *events.Reader, at, _ int64) error {
				ss, err := projections.SessionsAt(r.Conn, at, work)
				for _, s := range ss {
					want = append(want, s.ID)
				}
				return err
			}))
			for _, newest := range []bool{false, true} {
				got := walk(SessionListRequest{Read: Read{At: &rev}, Work: work, Newest: newest}, len(want))
				if newest {
					slices.Reverse(got)
				}
				require.Equal(t, want, got, "revision %d, work %q, newest %v", rev, work, newest)
			}
		}
	}
}
