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

// searchRows shows each document version with its row id (a rebuild
// writes the same ids), its doc key (parts separated by NUL) and the
// newlines of its body as "/".
const searchRows = `SELECT id, doc, kind, ref, work, session_id, source, state, seq, title,
	replace(body, char(10), '/'), valid_from, valid_to FROM p_search ORDER BY doc, valid_from`

// readSearch renders SearchAt(rev, "alpha") as "kind ref state [snippet]"
// separated by "; ".
func readSearch(t *testing.T, conn *sqlite.Conn, rev int64) string {
	t.Helper()
	hits, err := projections.SearchAt(conn, rev, "alpha", "", 20)
	require.NoError(t, err)
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s %s %s %s", h.Kind, h.Ref, h.State, h.Snippet))
	}
	return strings.Join(out, "; ")
}

// TestSearch_Apply: work items, checkpoints, knowledge items and
// executions are indexed as documents, a new version only when what is
// searched or shown changed, closed when their source drops them.
func TestSearch_Apply(t *testing.T) {
	t.Parallel()
	alpha := events.WorkItem{Key: "A", Title: "Alpha parser", Status: "todo", NextAction: "write the lexer", Summary: "parse alpha files",
		Acceptance: []string{"reads alpha", "  "}}
	applyTable(t, searchRows, readSearch, []applyCase{
		{
			name: "WorkItemsIndexed",
			log:  []events.Payload{index("tasks.md", "h1", alpha, item("B", "Beta", "doing"))},
			rows: []string{
				"1 w\x00tasks.md\x00A work A A '' tasks.md todo 1 Alpha parser write the lexer/parse alpha files/reads alpha 1 -",
				"2 w\x00tasks.md\x00B work B B '' tasks.md doing 1 Beta '' 1 -",
			},
			at: map[int64]string{
				0: "",
				1: "work A todo write the lexer\nparse [alpha] files\nreads [alpha]",
			},
		},
		{
			// Only A's status changed: A gets a version, B keeps its own;
			// C, gone from the source, is closed.
			name: "ReindexedChangedAndDropped",
			log: []events.Payload{
				index("tasks.md", "h1", alpha, item("B", "Beta", "doing"), item("C", "Gamma alpha", "todo")),
				index("tasks.md", "h2", events.WorkItem{Key: "A", Title: "Alpha parser", Status: "done", NextAction: "write the lexer",
					Summary: "parse alpha files", Acceptance: []string{"reads alpha", "  "}}, item("B", "Beta", "doing")),
			},
			rows: []string{
				"1 w\x00tasks.md\x00A work A A '' tasks.md todo 1 Alpha parser write the lexer/parse alpha files/reads alpha 1 2",
				"4 w\x00tasks.md\x00A work A A '' tasks.md done 2 Alpha parser write the lexer/parse alpha files/reads alpha 2 -",
				"2 w\x00tasks.md\x00B work B B '' tasks.md doing 1 Beta '' 1 -",
				"3 w\x00tasks.md\x00C work C C '' tasks.md todo 1 Gamma alpha '' 1 2",
			},
			at: map[int64]string{
				1: "work C todo Gamma [alpha]; work A todo write the lexer\nparse [alpha] files\nreads [alpha]",
				2: "work A done write the lexer\nparse [alpha] files\nreads [alpha]",
			},
		},
		{
			name: "SourceRemoved",
			log:  []events.Payload{index("tasks.md", "h1", alpha), index("other.md", "o1", item("Z", "Zeta alpha", "todo")), &events.SourceIndexed{Path: "tasks.md", Removed: true}},
			rows: []string{
				"2 w\x00other.md\x00Z work Z Z '' other.md todo 2 Zeta alpha '' 2 -",
				"1 w\x00tasks.md\x00A work A A '' tasks.md todo 1 Alpha parser write the lexer/parse alpha files/reads alpha 1 3",
			},
			at: map[int64]string{
				2: "work A todo write the lexer\nparse [alpha] files\nreads [alpha]; work Z todo Zeta [alpha]",
				3: "work Z todo Zeta [alpha]",
			},
		},
		{
			name: "RepeatedKeyFirstDeclarationWins",
			log:  []events.Payload{index("tasks.md", "h1", item("A", "Alpha one", "todo"), item("A", "Alpha two", "done"))},
			rows: []string{
				"1 w\x00tasks.md\x00A work A A '' tasks.md todo 1 Alpha one '' 1 -",
			},
			at: map[int64]string{
				1: "work A todo [Alpha] one",
			},
		},
		{
			name: "CheckpointAndKnowledge",
			log: onW1(
				checkpoint("s1", "W-1", "alpha digest", opens("L-1", events.KnowledgeLoop, "Alpha loop?"), opens("H-1", events.KnowledgeHypothesis, "Alpha is slow")),
				checkpoint("s1", "W-1", "second", closes(events.ChangeResolve, "L-1", "found it"), closes(events.ChangeConfirm, "H-1", "measured"))),
			rows: []string{
				"3 c\x0001M6BFP8DRGQXYEAV0CGM90155 checkpoint 01M6BFP8DRGQXYEAV0CGM90155 W-1 s1 '' '' 3 alpha digest next after alpha digest 3 -",
				"6 c\x0001M6BFP9D0WA07V70XSRKAY06A checkpoint 01M6BFP9D0WA07V70XSRKAY06A W-1 s1 '' '' 4 second next after second 4 -",
				"5 k\x00W-1\x00H-1 hypothesis H-1 W-1 s1 '' active 3 Alpha is slow '' 3 4",
				"8 k\x00W-1\x00H-1 fact H-1 W-1 s1 '' active 3 Alpha is slow measured 4 -",
				"4 k\x00W-1\x00L-1 loop L-1 W-1 s1 '' open 3 Alpha loop? '' 3 4",
				"7 k\x00W-1\x00L-1 loop L-1 W-1 s1 '' resolved 3 Alpha loop? found it 4 -",
				"1 w\x00tasks.md\x00W-1 work W-1 W-1 '' tasks.md todo 1 Do W-1 '' 1 -",
				"2 w\x00tasks.md\x00W-2 work W-2 W-2 '' tasks.md todo 1 Do W-2 '' 1 -",
			},
			at: map[int64]string{
				3: "loop L-1 open [Alpha] loop?; hypothesis H-1 active [Alpha] is slow; checkpoint 01M6BFP8DRGQXYEAV0CGM90155  [alpha] digest",
				4: "checkpoint 01M6BFP8DRGQXYEAV0CGM90155  [alpha] digest; fact H-1 active [Alpha] is slow; loop L-1 resolved [Alpha] loop?",
			},
		},
		{
			// Bare loop texts are indexed under their checkpoint, one
			// document per text.
			name: "BareLoopTexts",
			log: onW1(&events.CheckpointRecorded{SessionID: "s1", Work: "W-1", Agent: "a", Digest: "d", NextAction: "n",
				OpenLoops: []string{"Alpha one?", "Alpha two?"}}),
			rows: []string{
				"3 c\x0001M6BFP8DRGQXYEAV0CGM90155 checkpoint 01M6BFP8DRGQXYEAV0CGM90155 W-1 s1 '' '' 3 d n 3 -",
				"4 k\x00W-1\x0001M6BFP8DRGQXYEAV0CGM90155#0 loop '' W-1 s1 '' open 3 Alpha one? '' 3 -",
				"5 k\x00W-1\x0001M6BFP8DRGQXYEAV0CGM90155#1 loop '' W-1 s1 '' open 3 Alpha two? '' 3 -",
				"1 w\x00tasks.md\x00W-1 work W-1 W-1 '' tasks.md todo 1 Do W-1 '' 1 -",
				"2 w\x00tasks.md\x00W-2 work W-2 W-2 '' tasks.md todo 1 Do W-2 '' 1 -",
			},
			at: map[int64]string{
				3: "loop  open [Alpha] one?; loop  open [Alpha] two?",
			},
		},
		{
			// An execution is found by its key, purpose and command line.
			name: "Execution",
			log:  holding(run("x1", "alpha-test", ""), finish("x1", "alpha-test", 1)),
			rows: []string{
				"1 w\x00tasks.md\x00W-1 work W-1 W-1 '' tasks.md todo 1 Do W-1 '' 1 -",
				"2 x\x00x1 execution x1 W-1 s1 '' started 4 alpha-test check alpha-test/go test ./... 4 -",
			},
			at: map[int64]string{
				5: "execution x1 started [alpha]-test",
			},
		},
		{
			// A checkpoint named by its own event is a new document, not
			// read back first; one that an earlier checkpoint of a forged
			// log already named still closes that open version.
			name: "CheckpointIDNamedBefore",
			log: onW1(
				&events.CheckpointRecorded{CheckpointID: "01M6BFP9D0WA07V70XSRKAY06A", SessionID: "s1", Work: "W-1", Agent: "a", Digest: "alpha", NextAction: "n"},
				&events.CheckpointRecorded{SessionID: "s1", Work: "W-1", Agent: "a", Digest: "alpha", NextAction: "n"}),
			rows: []string{
				"3 c\x0001M6BFP9D0WA07V70XSRKAY06A checkpoint 01M6BFP9D0WA07V70XSRKAY06A W-1 s1 '' '' 3 alpha n 3 4",
				"4 c\x0001M6BFP9D0WA07V70XSRKAY06A checkpoint 01M6BFP9D0WA07V70XSRKAY06A W-1 s1 '' '' 4 alpha n 4 -",
				"1 w\x00tasks.md\x00W-1 work W-1 W-1 '' tasks.md todo 1 Do W-1 '' 1 -",
				"2 w\x00tasks.md\x00W-2 work W-2 W-2 '' tasks.md todo 1 Do W-2 '' 1 -",
			},
			at: map[int64]string{
				3: "checkpoint 01M6BFP9D0WA07V70XSRKAY06A  [alpha]",
				4: "checkpoint 01M6BFP9D0WA07V70XSRKAY06A  [alpha]",
			},
		},
		{
			// A change to an item search never indexed (a loop opened by
			// bare text is indexed under its checkpoint, not its id) is
			// skipped; the changes after it in the same checkpoint are
			// still indexed.
			name: "ChangeOfUnindexedItemSkipped",
			log: onW1(
				&events.CheckpointRecorded{SessionID: "s1", Work: "W-1", Agent: "a", Digest: "d", NextAction: "n", OpenLoops: []string{"Old loop"}},
				checkpoint("s1", "W-1", "second", closes(events.ChangeResolve, "L-1", "done"), opens("D-1", events.KnowledgeDecision, "Alpha decision"))),
			rows: []string{
				"3 c\x0001M6BFP8DRGQXYEAV0CGM90155 checkpoint 01M6BFP8DRGQXYEAV0CGM90155 W-1 s1 '' '' 3 d n 3 -",
				"5 c\x0001M6BFP9D0WA07V70XSRKAY06A checkpoint 01M6BFP9D0WA07V70XSRKAY06A W-1 s1 '' '' 4 second next after second 4 -",
				"4 k\x00W-1\x0001M6BFP8DRGQXYEAV0CGM90155#0 loop '' W-1 s1 '' open 3 Old loop '' 3 -",
				"6 k\x00W-1\x00D-1 decision D-1 W-1 s1 '' active 4 Alpha decision '' 4 -",
				"1 w\x00tasks.md\x00W-1 work W-1 W-1 '' tasks.md todo 1 Do W-1 '' 1 -",
				"2 w\x00tasks.md\x00W-2 work W-2 W-2 '' tasks.md todo 1 Do W-2 '' 1 -",
			},
			at: map[int64]string{
				4: "decision D-1 active [Alpha] decision",
			},
		},
	})
}

// TestSearch_Reads: a search reads the documents of its revision, of
// one kind when asked, at most limit, best first.
func TestSearch_Reads(t *testing.T) {
	t.Parallel()
	st := openLog(t)
	for i, p := range onW1(
		checkpoint("s1", "W-1", "alpha alpha digest", opens("D-1", events.KnowledgeDecision, "alpha decision")), // 3
		index("tasks.md", "h2", item("W-1", "Alpha", "doing"), item("W-2", "Do W-2", "todo")),                   // 4
	) {
		_, err := appendOne(st, int64(i+1), p)
		require.NoError(t, err)
	}
	read(t, st, func(conn *sqlite.Conn) {
		hits, err := projections.SearchAt(conn, 4, "alpha", "", 10)
		require.NoError(t, err)
		require.Len(t, hits, 3)
		for i := 1; i < len(hits); i++ {
			require.GreaterOrEqual(t, hits[i-1].Score, hits[i].Score, "best first")
		}
		hits, err = projections.SearchAt(conn, 4, "alpha", projections.SearchDecision, 10)
		require.NoError(t, err)
		require.Len(t, hits, 1)
		require.Equal(t, projections.SearchHit{Kind: "decision", Ref: "D-1", Work: "W-1", SessionID: "s1", State: "active", Seq: 3,
			Title: "alpha decision", Snippet: "[alpha] decision", Score: hits[0].Score}, hits[0])
		hits, err = projections.SearchAt(conn, 3, "alpha", projections.SearchWork, 10)
		require.NoError(t, err)
		require.Empty(t, hits, "W-1's title had no alpha at 3")
		hits, err = projections.SearchAt(conn, 4, "alpha", "", 1)
		require.NoError(t, err)
		require.Len(t, hits, 1)
		hits, err = projections.SearchAt(conn, 4, "álpha", "", 10)
		require.NoError(t, err)
		require.Len(t, hits, 3, "diacritics removed")
	})
	require.Equal(t, []string{"work", "checkpoint", "loop", "decision", "fact", "hypothesis", "execution"}, projections.SearchKinds)
}

// TestFTSQuery: every word quoted, FTS5's operators and quotes disarmed,
// a trailing * kept as a prefix.
func TestFTSQuery(t *testing.T) {
	t.Parallel()
	for q, want := range map[string]string{
		"login form":        `"login" "form"`,
		"  log*  ":          `"log"*`,
		`NOT "x" OR y AND`:  `"NOT" "x" "OR" "y" "AND"`,
		`a"b *c* ** "" *`:   `"ab" "c"*`,
		"":                  "",
		"col:val NEAR(a b)": `"col:val" "NEAR(a" "b)"`,
	} {
		require.Equal(t, want, projections.FTSQuery(q), "%q", q)
	}
}
