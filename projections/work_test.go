package projections_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
)

const workRows = `SELECT 'source', path, adapter, content_hash, item_count || ' ' || issues, valid_from, valid_to FROM p_sources
	UNION ALL SELECT 'item', source_path || ':' || key || '#' || ordinal, title, status, priority || ' ' || goal, valid_from, valid_to FROM p_work_items
	UNION ALL SELECT 'goal', source_path || ':' || key, title, status, '', valid_from, valid_to FROM p_goals
	UNION ALL SELECT 'rule', source_path || ':' || key, strength, json_extract(rule, '$.text'), '', valid_from, valid_to FROM p_rules
	ORDER BY 1, 2, 6`

// readWork renders, at rev, the sources, the items (key/status@source),
// the goals and the rules visible then.
func readWork(t *testing.T, conn *sqlite.Conn, rev int64) string {
	t.Helper()
	sources, err := projections.SourcesAt(conn, rev, false)
	require.NoError(t, err)
	items, err := projections.WorkItemsAt(conn, rev, false)
	require.NoError(t, err)
	goals, err := projections.GoalsAt(conn, rev)
	require.NoError(t, err)
	rules, err := projections.RulesAt(conn, rev)
	require.NoError(t, err)
	var out []string
	for _, s := range sources {
		out = append(out, fmt.Sprintf("src %s(%d)@%d", s.Path, s.ItemCount, s.Revision))
	}
	for _, it := range items {
		out = append(out, fmt.Sprintf("%s/%s@%s", it.Key, it.Status, it.SourcePath))
	}
	for _, g := range goals {
		out = append(out, "goal "+g.Key)
	}
	for _, r := range rules {
		out = append(out, "rule "+r.Key)
	}
	return strings.Join(out, "; ")
}

func item(key, title, status string) events.WorkItem {
	return events.WorkItem{Key: key, Title: title, Status: status}
}

// index is an index of path with the given items.
func index(path, hash string, items ...events.WorkItem) *events.SourceIndexed {
	return &events.SourceIndexed{Path: path, Adapter: "markdown", ContentHash: hash, Items: items}
}

// TestWork_Apply: each source_indexed replaces its source's row and
// exactly the items, goals and rules that changed; a removal closes them
// all; other sources are untouched.
func TestWork_Apply(t *testing.T) {
	t.Parallel()
	full := &events.SourceIndexed{Path: "tasks.md", Adapter: "markdown", ContentHash: "h1", Size: 120, ModTimeMS: 5,
		Items: []events.WorkItem{
			item("A", "Write the parser", "todo"),
			{Key: "B", Title: "Ship it", Status: "doing", Priority: "P1", Goal: "G1"},
		},
		Goals:  []events.Goal{{Key: "G1", Title: "Release 1", Status: "active"}},
		Rules:  []events.Rule{{Key: "R1", Text: "Never push to main", Strength: "hard"}},
		Issues: []events.SourceIssue{{Code: "bad_status", Path: "tasks.md", Line: 9, Message: "unknown status"}},
	}
	applyTable(t, workRows, readWork, []applyCase{
		{
			name: "Indexed",
			log:  []events.Payload{full},
			rows: []string{
				"goal tasks.md:G1 Release 1 active '' 1 -",
				"item tasks.md:A#0 Write the parser todo   1 -",
				"item tasks.md:B#0 Ship it doing P1 G1 1 -",
				"rule tasks.md:R1 hard Never push to main '' 1 -",
				"source tasks.md markdown h1 2 [{\"code\":\"bad_status\",\"message\":\"unknown status\",\"path\":\"tasks.md\",\"line\":9}] 1 -",
			},
			at: map[int64]string{
				0: "",
				1: "src tasks.md(2)@1; A/todo@tasks.md; B/doing@tasks.md; goal G1; rule R1",
			},
		},
		{
			// Only A changed: B, the goal and the rule keep their
			// versions; the source row is new.
			name: "ReindexedOneItemChanged",
			log: []events.Payload{full, &events.SourceIndexed{Path: "tasks.md", Adapter: "markdown", ContentHash: "h2",
				Items: []events.WorkItem{item("A", "Write the parser", "done"), full.Items[1]}, Goals: full.Goals, Rules: full.Rules}},
			rows: []string{
				"goal tasks.md:G1 Release 1 active '' 1 -",
				"item tasks.md:A#0 Write the parser todo   1 2",
				"item tasks.md:A#0 Write the parser done   2 -",
				"item tasks.md:B#0 Ship it doing P1 G1 1 -",
				"rule tasks.md:R1 hard Never push to main '' 1 -",
				"source tasks.md markdown h1 2 [{\"code\":\"bad_status\",\"message\":\"unknown status\",\"path\":\"tasks.md\",\"line\":9}] 1 2",
				"source tasks.md markdown h2 2 [] 2 -",
			},
			at: map[int64]string{
				1: "src tasks.md(2)@1; A/todo@tasks.md; B/doing@tasks.md; goal G1; rule R1",
				2: "src tasks.md(2)@2; A/done@tasks.md; B/doing@tasks.md; goal G1; rule R1",
			},
		},
		{
			name: "ItemGoalAndRuleDropped",
			log:  []events.Payload{full, index("tasks.md", "h2", full.Items[0])},
			rows: []string{
				"goal tasks.md:G1 Release 1 active '' 1 2",
				"item tasks.md:A#0 Write the parser todo   1 -",
				"item tasks.md:B#0 Ship it doing P1 G1 1 2",
				"rule tasks.md:R1 hard Never push to main '' 1 2",
				"source tasks.md markdown h1 2 [{\"code\":\"bad_status\",\"message\":\"unknown status\",\"path\":\"tasks.md\",\"line\":9}] 1 2",
				"source tasks.md markdown h2 1 [] 2 -",
			},
			at: map[int64]string{
				1: "src tasks.md(2)@1; A/todo@tasks.md; B/doing@tasks.md; goal G1; rule R1",
				2: "src tasks.md(1)@2; A/todo@tasks.md",
			},
		},
		{
			name: "SourceRemoved",
			log:  []events.Payload{full, index("other.md", "o1", item("C", "Other", "todo")), &events.SourceIndexed{Path: "tasks.md", Removed: true}},
			rows: []string{
				"goal tasks.md:G1 Release 1 active '' 1 3",
				"item other.md:C#0 Other todo   2 -",
				"item tasks.md:A#0 Write the parser todo   1 3",
				"item tasks.md:B#0 Ship it doing P1 G1 1 3",
				"rule tasks.md:R1 hard Never push to main '' 1 3",
				"source other.md markdown o1 1 [] 2 -",
				"source tasks.md markdown h1 2 [{\"code\":\"bad_status\",\"message\":\"unknown status\",\"path\":\"tasks.md\",\"line\":9}] 1 3",
			},
			at: map[int64]string{
				2: "src other.md(1)@2; src tasks.md(2)@1; A/todo@tasks.md; B/doing@tasks.md; C/todo@other.md; goal G1; rule R1",
				3: "src other.md(1)@2; C/todo@other.md",
			},
		},
		{
			// Two sources may declare one key: both are kept, each under
			// its source.
			name: "OneKeyInTwoSources",
			log:  []events.Payload{index("tasks.md", "h1", item("A", "Here", "todo")), index("other.md", "o1", item("A", "There", "doing"))},
			rows: []string{
				"item other.md:A#0 There doing   2 -",
				"item tasks.md:A#0 Here todo   1 -",
				"source other.md markdown o1 1 [] 2 -",
				"source tasks.md markdown h1 1 [] 1 -",
			},
			at: map[int64]string{
				1: "src tasks.md(1)@1; A/todo@tasks.md",
				2: "src other.md(1)@2; src tasks.md(1)@1; A/doing@other.md; A/todo@tasks.md",
			},
		},
		{
			// A key repeated in one source is kept twice (reported, never
			// resolved); a repeated goal keeps its first declaration.
			name: "RepeatedKeyInOneSource",
			log: []events.Payload{&events.SourceIndexed{Path: "tasks.md", Adapter: "markdown", ContentHash: "h1",
				Items: []events.WorkItem{item("A", "First", "todo"), item("A", "Second", "done")},
				Goals: []events.Goal{{Key: "G1", Title: "First goal"}, {Key: "G1", Title: "Second goal"}}}},
			rows: []string{
				"goal tasks.md:G1 First goal '' '' 1 -",
				"item tasks.md:A#0 First todo   1 -",
				"item tasks.md:A#1 Second done   1 -",
				"source tasks.md markdown h1 2 [] 1 -",
			},
			at: map[int64]string{
				1: "src tasks.md(2)@1; A/todo@tasks.md; A/done@tasks.md; goal G1",
			},
		},
		{
			name: "ReindexedUnchanged",
			log:  []events.Payload{index("tasks.md", "h1", item("A", "Same", "todo")), index("tasks.md", "h1", item("A", "Same", "todo"))},
			rows: []string{
				"item tasks.md:A#0 Same todo   1 -",
				"source tasks.md markdown h1 1 [] 1 2",
				"source tasks.md markdown h1 1 [] 2 -",
			},
			at: map[int64]string{
				2: "src tasks.md(1)@2; A/todo@tasks.md",
			},
		},
		{
			name: "RemovedSourceNeverIndexed",
			log:  []events.Payload{index("tasks.md", "h1", item("A", "Here", "todo")), &events.SourceIndexed{Path: "gone.md", Removed: true}},
			rows: []string{
				"item tasks.md:A#0 Here todo   1 -",
				"source tasks.md markdown h1 1 [] 1 -",
			},
			at: map[int64]string{
				2: "src tasks.md(1)@1; A/todo@tasks.md",
			},
		},
		{
			name: "OtherKindsIgnored",
			log:  []events.Payload{index("tasks.md", "h1", item("A", "Here", "todo")), start("s1", "A"), end("s1", "A", events.OutcomeCompleted)},
			rows: []string{
				"item tasks.md:A#0 Here todo   1 -",
				"source tasks.md markdown h1 1 [] 1 -",
			},
		},
	})
}

// TestWork_Reads: the head read of the items merges the sources in key
// order and equals the read at the head revision in content; an item's
// versions since a revision list what changed.
func TestWork_Reads(t *testing.T) {
	t.Parallel()
	st := logOf(t,
		index("tasks.md", "h1", item("B", "Bee", "todo"), item("D", "Dee", "todo")),  // 1
		index("other.md", "o1", item("A", "Ay", "todo"), item("C", "See", "todo")),   // 2
		index("tasks.md", "h2", item("B", "Bee", "doing"), item("D", "Dee", "todo")), // 3
		index("tasks.md", "h3", item("B", "Bee", "done"), item("D", "Dee", "todo")),  // 4
	)
	read(t, st, func(conn *sqlite.Conn) {
		keys := func(items []projections.WorkItem) []string {
			var out []string
			for _, it := range items {
				out = append(out, it.Key+"/"+it.Status+"@"+it.SourcePath)
			}
			return out
		}
		head, err := projections.WorkItemsAt(conn, 4, true)
		require.NoError(t, err)
		require.Equal(t, []string{"A/todo@other.md", "B/done@tasks.md", "C/todo@other.md", "D/todo@tasks.md"}, keys(head))
		past, err := projections.WorkItemsAt(conn, 4, false)
		require.NoError(t, err)
		require.ElementsMatch(t, keys(head), keys(past))

		b, err := projections.WorkItemAt(conn, "B", 3)
		require.NoError(t, err)
		require.Equal(t, []string{"B/doing@tasks.md"}, keys(b))

		changed, err := projections.ItemChangedAfter(conn, "B", 1, 4)
		require.NoError(t, err)
		require.EqualValues(t, 3, changed, "B first changed after 1 at 3")
		changed, err = projections.ItemChangedAfter(conn, "B", 3, 4)
		require.NoError(t, err)
		require.EqualValues(t, 4, changed)
		changed, err = projections.ItemChangedAfter(conn, "D", 1, 4)
		require.NoError(t, err)
		require.Zero(t, changed, "D never changed after 1")

		versions, err := projections.ItemVersionsSince(conn, "B", 1, 4)
		require.NoError(t, err)
		var got []string
		for _, v := range versions {
			got = append(got, fmt.Sprintf("%s@%d", v.Status, v.From))
		}
		require.Equal(t, []string{"doing@3", "done@4"}, got)

		sources, err := projections.SourcesAt(conn, 4, true)
		require.NoError(t, err)
		require.Len(t, sources, 2)
		past2, err := projections.SourcesAt(conn, 1, false)
		require.NoError(t, err)
		require.Len(t, past2, 1)
		require.Equal(t, "h1", past2[0].ContentHash)
		require.Equal(t, []events.SourceIssue{}, past2[0].Issues, "no issues reads as an empty list")
	})
}
