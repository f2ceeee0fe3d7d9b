package projections_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
)

const queueRows = `SELECT 'queue', key || '@' || source_path || '#' || ordinal, rank, queue, reason, organized, goal FROM p_work_queue
	UNION ALL SELECT 'count', name, n, '', '', '', '' FROM p_work_counts
	ORDER BY 1, 2`

// readQueues renders, at the head, each queue as QueuePage reads it, in
// order (rev is the head in these cases).
func readQueues(t *testing.T, conn *sqlite.Conn, _ int64) string {
	t.Helper()
	var out []string
	for _, q := range []string{projections.QueueReady, projections.QueueCurrent, projections.QueueWaiting, projections.QueueBlocked, projections.QueueClosed, projections.QueueOther} {
		var keys []string
		require.NoError(t, projections.QueuePage(conn, q, nil, func(x projections.Queued) (bool, error) {
			keys = append(keys, x.Item.Key)
			return true, nil
		}))
		out = append(out, q+": "+strings.Join(keys, " "))
	}
	return strings.Join(out, "; ")
}

// register is a register that files an item in every queue: ready (A,
// F after its completed dependency), current (B), closed (C), blocked
// (D by status, E by a blocker), waiting (G on an open dependency, H on
// a missing one, I and J on a cycle) and other (K declared twice, L a
// draft). A is organized: a declared goal, acceptance, a next action.
func register() *events.SourceIndexed {
	dep := func(k string) []events.Dependency { return []events.Dependency{{Key: k, Required: true}} }
	return &events.SourceIndexed{Path: "todo.md", Adapter: "markdown", ContentHash: "h1",
		Items: []events.WorkItem{
			{Key: "A", Title: "a", Status: "planned", Priority: "p1", Goal: "G1", NextAction: "do a", Acceptance: []string{"a works"}},
			{Key: "B", Title: "b", Status: "in_progress", Goal: "G1"},
			{Key: "C", Title: "c", Status: "completed"},
			{Key: "D", Title: "d", Status: "blocked"},
			{Key: "E", Title: "e", Status: "planned", Blocker: "legal"},
			{Key: "F", Title: "f", Status: "ready", Priority: "p0", DependsOn: dep("C")},
			{Key: "G", Title: "g", Status: "planned", DependsOn: dep("E")},
			{Key: "H", Title: "h", Status: "planned", DependsOn: dep("Z")},
			{Key: "I", Title: "i", Status: "planned", DependsOn: dep("J")},
			{Key: "J", Title: "j", Status: "planned", DependsOn: dep("I")},
			{Key: "K", Title: "k1", Status: "planned"},
			{Key: "K", Title: "k2", Status: "planned"},
			{Key: "L", Title: "l", Status: "draft"},
		},
		Goals: []events.Goal{{Key: "G1", Title: "one", Status: "active"}},
	}
}

// TestWork_Queues: the work projection files every current item in its
// queue at the head, with its rank, its first reason, whether it is
// organized and its goal, and keeps the counts; a reindex, a delta, a
// split index and a removal refile what they change (G follows E), and a
// rebuild gives the same rows.
func TestWork_Queues(t *testing.T) {
	t.Parallel()
	full := register()
	eDone := *full
	eDone.ContentHash, eDone.Items = "h2", append([]events.WorkItem(nil), full.Items...)
	eDone.Items[4] = events.WorkItem{Key: "E", Title: "e", Status: "completed"}
	filed := []string{
		"count goal:G1 2 '' '' '' ''",
		"count items 13 '' '' '' ''",
		"count organized:ready 1 '' '' '' ''",
		"count queue:blocked 2 '' '' '' ''",
		"count queue:closed 1 '' '' '' ''",
		"count queue:current 1 '' '' '' ''",
		"count queue:other 3 '' '' '' ''",
		"count queue:ready 2 '' '' '' ''",
		"count queue:waiting 4 '' '' '' ''",
		"count status:blocked 1 '' '' '' ''",
		"count status:completed 1 '' '' '' ''",
		"count status:draft 1 '' '' '' ''",
		"count status:in_progress 1 '' '' '' ''",
		"count status:planned 8 '' '' '' ''",
		"count status:ready 1 '' '' '' ''",
		"queue A@todo.md#0 1 ready '' 1 G1",
		"queue B@todo.md#0 100 current status is in_progress 0 G1",
		"queue C@todo.md#0 100 closed status is completed 0 ''",
		"queue D@todo.md#0 100 blocked status is blocked 0 ''",
		"queue E@todo.md#0 100 blocked legal 0 ''",
		"queue F@todo.md#0 0 ready '' 0 ''",
		"queue G@todo.md#0 100 waiting E is planned 0 ''",
		"queue H@todo.md#0 100 waiting depends on unknown Z 0 ''",
		"queue I@todo.md#0 100 waiting part of a dependency cycle 0 ''",
		"queue J@todo.md#0 100 waiting part of a dependency cycle 0 ''",
		"queue K@todo.md#0 100 other key declared more than once 0 ''",
		"queue K@todo.md#1 100 other key declared more than once 0 ''",
		"queue L@todo.md#0 100 other status is draft 0 ''",
	}
	filedRead := "ready: F A; current: B; waiting: G H I J; blocked: D E; closed: C; other: K K L"
	// E completed, by a whole index or a delta: G, which waited on it,
	// is ready.
	eDoneRead := "ready: F A G; current: B; waiting: H I J; blocked: D; closed: C E; other: K K L"
	eDoneRows := replaced(filed, map[string]string{
		"count queue:blocked 2 '' '' '' ''":               "count queue:blocked 1 '' '' '' ''",
		"count queue:closed 1 '' '' '' ''":                "count queue:closed 2 '' '' '' ''",
		"count queue:ready 2 '' '' '' ''":                 "count queue:ready 3 '' '' '' ''",
		"count queue:waiting 4 '' '' '' ''":               "count queue:waiting 3 '' '' '' ''",
		"count status:completed 1 '' '' '' ''":            "count status:completed 2 '' '' '' ''",
		"count status:planned 8 '' '' '' ''":              "count status:planned 7 '' '' '' ''",
		"queue E@todo.md#0 100 blocked legal 0 ''":        "queue E@todo.md#0 100 closed status is completed 0 ''",
		"queue G@todo.md#0 100 waiting E is planned 0 ''": "queue G@todo.md#0 100 ready '' 0 ''",
	})
	applyTable(t, queueRows, readQueues, []applyCase{
		{name: "Filed", log: []events.Payload{full}, rows: filed, at: map[int64]string{1: filedRead}},
		{
			// E completed: G, which waited on it, is ready now.
			name: "ReindexMovesDependents",
			log:  []events.Payload{full, &eDone},
			at:   map[int64]string{2: eDoneRead},
			rows: eDoneRows,
		},
		{
			// A delta that completes E moves G as the whole index does.
			name: "Delta",
			log: []events.Payload{full, &events.SourceIndexed{Path: "todo.md", Adapter: "markdown", ContentHash: "h2", Delta: true,
				Items: []events.WorkItem{{Key: "E", Title: "e", Status: "completed"}}, ItemRepeats: []int{0}}},
			at:   map[int64]string{2: eDoneRead},
			rows: eDoneRows,
		},
		{
			// A split index is filed once whole, at its last part (the
			// later parts are deltas that add).
			name: "Split",
			log: []events.Payload{
				&events.SourceIndexed{Path: "todo.md", Adapter: "markdown", ContentHash: "h1", Part: 1, Parts: 2, Items: full.Items[:6], Goals: full.Goals},
				&events.SourceIndexed{Path: "todo.md", Adapter: "markdown", ContentHash: "h1", Part: 2, Parts: 2, Delta: true, Items: full.Items[6:], ItemRepeats: []int{0, 0, 0, 0, 0, 1, 0}},
			},
			rows: filed,
			at:   map[int64]string{2: filedRead},
		},
		{
			name: "Removed",
			log:  []events.Payload{full, &events.SourceIndexed{Path: "todo.md", Removed: true}},
			rows: []string{"count items 0 '' '' '' ''"},
			at:   map[int64]string{2: "ready: ; current: ; waiting: ; blocked: ; closed: ; other: "},
		},
	})
}

// replaced is rows with each of swap's keys replaced by its value, sorted.
func replaced(rows []string, swap map[string]string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r
		if w, ok := swap[r]; ok {
			out[i] = w
		}
	}
	sort.Strings(out)
	return out
}

// TestWork_QueuesAgreeWithReadiness: over registers of every shape, at
// the head, the queues and counts the projection keeps are those of
// ReadinessAt with no claim (QueueOf), in its order, and QueuePage from
// any place resumes where the order says.
func TestWork_QueuesAgreeWithReadiness(t *testing.T) {
	t.Parallel()
	st := openLog(t)
	statuses := []string{"planned", "ready", "in_progress", "completed", "blocked", "draft", "cancelled", "odd"}
	prios := []string{"", "p0", "p1", "p2", "high", "low", "p12"}
	var items []events.WorkItem
	for i := 0; i < 120; i++ {
		it := events.WorkItem{Key: fmt.Sprintf("W-%02d", i%97), Title: fmt.Sprint(i), Status: statuses[i%len(statuses)], Priority: prios[i%len(prios)]}
		if i%5 == 0 {
			it.DependsOn = []events.Dependency{{Key: fmt.Sprintf("W-%02d", (i*7)%101), Required: i%10 == 0}}
		}
		if i%11 == 0 {
			it.Blocker = "wait"
		}
		items = append(items, it)
	}
	seq := int64(0)
	for round, cut := range []int{120, 80, 120} {
		seq++
		_, err := appendOne(st, seq, &events.SourceIndexed{Path: fmt.Sprintf("s%d.md", round%2), Adapter: "markdown", ContentHash: fmt.Sprint(round), Items: items[:cut]})
		require.NoError(t, err)
		require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error {
			all, err := projections.WorkItemsAt(r.Conn, r.Head, true)
			require.NoError(t, err)
			rs := projections.Evaluate(all, nil)
			counts, err := projections.QueueCounts(r.Conn)
			require.NoError(t, err)
			want := map[string][]string{}
			wantCounts := map[string]int{"items": len(rs)}
			var places []projections.Place
			for _, x := range rs {
				q, _ := projections.QueueOf(x)
				want[q] = append(want[q], fmt.Sprintf("%s@%s#%d", x.Item.Key, x.Item.SourcePath, x.Item.Ordinal))
				wantCounts["queue:"+q]++
				wantCounts["status:"+x.Item.Status]++
				if q == projections.QueueWaiting {
					places = append(places, projections.PlaceOf(x.Item))
				}
			}
			for name, n := range wantCounts {
				require.Equal(t, n, counts[name], "round %d: count %s", round, name)
			}
			for q, keys := range want {
				var got []string
				require.NoError(t, projections.QueuePage(r.Conn, q, nil, func(x projections.Queued) (bool, error) {
					got = append(got, fmt.Sprintf("%s@%s#%d", x.Item.Key, x.Item.SourcePath, x.Item.Ordinal))
					return true, nil
				}))
				require.Equal(t, keys, got, "round %d: queue %s", round, q)
			}
			for i, p := range places {
				var next []projections.Place
				require.NoError(t, projections.QueuePage(r.Conn, projections.QueueWaiting, &p, func(x projections.Queued) (bool, error) {
					next = append(next, x.Place())
					return true, nil
				}))
				require.Equal(t, len(places)-i-1, len(next), "round %d: after place %d", round, i)
				if len(next) > 0 {
					require.Equal(t, places[i+1], next[0])
				}
			}
			return nil
		}))
	}
}
