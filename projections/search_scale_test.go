package projections_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// searchWhole is the search as it was before it took two steps: every
// match scored and given a snippet, then cut to the page. The two-step
// query must answer exactly what it answers.
const searchWhole = `SELECT d.kind, d.ref, d.work, d.session_id, d.state, d.seq, d.title,
       snippet(p_search_fts, -1, '[', ']', '…', 12) AS snippet,
       bm25(p_search_fts, 2.0, 1.0) AS bm25
FROM p_search_fts JOIN p_search d ON d.id = p_search_fts.rowid
WHERE p_search_fts MATCH :query
  AND d.valid_from <= :rev AND (d.valid_to IS NULL OR d.valid_to > :rev)
  AND (:kind = '' OR d.kind = :kind)
ORDER BY bm25, d.seq DESC, d.doc
LIMIT :limit`

// searchWholeAt runs searchWhole as SearchAt runs its query.
func searchWholeAt(t *testing.T, conn *sqlite.Conn, rev int64, q, kind string, limit int) []projections.SearchHit {
	t.Helper()
	out := []projections.SearchHit{}
	err := sqlitex.Execute(conn, searchWhole, &sqlitex.ExecOptions{
		Named: map[string]any{":query": q, ":rev": rev, ":kind": kind, ":limit": limit},
		ResultFunc: func(st *sqlite.Stmt) error {
			out = append(out, projections.SearchHit{Kind: st.GetText("kind"), Ref: st.GetText("ref"), Work: st.GetText("work"),
				SessionID: st.GetText("session_id"), State: st.GetText("state"), Seq: st.GetInt64("seq"), Title: st.GetText("title"),
				Snippet: st.GetText("snippet"), Score: -st.GetFloat("bm25")})
			return nil
		}})
	require.NoError(t, err)
	return out
}

// TestSearch_PageAsTheWholeQuery: on a log of several hundred documents
// that match (work items declared alike, so that many tie in rank,
// checkpoints and knowledge items, versions closed by a reindex), the
// two-step search answers what the whole query answered, hit for hit,
// snippet and score included, with limits below, at and above the
// number of matches, of every kind and at past revisions.
func TestSearch_PageAsTheWholeQuery(t *testing.T) {
	t.Parallel()
	st := openLog(t)
	var items []events.WorkItem
	for i := range 300 {
		it := events.WorkItem{Key: fmt.Sprintf("W-%03d", i), Title: "Alpha parser", Status: "todo", NextAction: "write the alpha lexer"}
		switch i % 3 {
		case 1:
			it.Title, it.Summary = fmt.Sprintf("Beta task %d", i), "an alpha note among many words of beta and gamma"
		case 2:
			it.Title = "Gamma alpha alpha"
		}
		items = append(items, it)
	}
	log := []events.Payload{index("tasks.md", "h1", items...)}
	for i := range 40 {
		log = append(log, checkpoint("s1", "W-001", fmt.Sprintf("alpha digest %d", i%4), opens(fmt.Sprintf("D-%d", i+1), events.KnowledgeDecision, "alpha decision")))
	}
	changed := append([]events.WorkItem(nil), items[:150]...)
	for i := range changed {
		changed[i].Status = "doing"
	}
	log = append(log, index("tasks.md", "h2", changed...))
	for i, p := range onW1(log...) {
		_, err := appendOne(st, int64(i+1), p)
		require.NoError(t, err)
	}
	read(t, st, func(conn *sqlite.Conn) {
		head := int64(len(onW1(log...)))
		compared := 0
		for _, rev := range []int64{3, 20, head - 1, head} {
			for _, q := range []string{`"alpha"`, `"alp"*`, `"alpha" "beta"`, `"nothing"`} {
				for _, kind := range []string{"", projections.SearchWork, projections.SearchDecision} {
					for _, limit := range []int{1, 7, 20, 100, 1000} {
						want := searchWholeAt(t, conn, rev, q, kind, limit)
						got, err := projections.SearchAt(conn, rev, q, kind, limit)
						require.NoError(t, err)
						require.Equal(t, want, got, "rev %d, %s, kind %q, limit %d", rev, q, kind, limit)
						compared += len(got)
					}
				}
			}
		}
		all, err := projections.SearchAt(conn, head, `"alpha"`, "", 10000)
		require.NoError(t, err)
		require.Greater(t, len(all), 200, "many matches")
		ties := 0
		for i := 1; i < len(all); i++ {
			if all[i].Score == all[i-1].Score {
				ties++
			}
		}
		require.Greater(t, ties, 100, "many ties in rank, ordered by seq and doc")
		require.Greater(t, compared, 5000)
	})
}

// TestSearch_PagePlan: the search's plan ranks and cuts the page before
// it reads any document's text for a snippet: the page is materialized,
// and the snippet is a subquery run once for each of the page's rows
// (the whole query made one for every match, before its LIMIT).
func TestSearch_PagePlan(t *testing.T) {
	t.Parallel()
	st := openLog(t)
	_, err := appendOne(st, 1, index("tasks.md", "h1", item("A", "Alpha", "todo")))
	require.NoError(t, err)
	text, err := os.ReadFile("sql/search_match_at.sql")
	require.NoError(t, err)
	plan := func(conn *sqlite.Conn, q string) string {
		var rows []string
		require.NoError(t, sqlitex.Execute(conn, "EXPLAIN QUERY PLAN "+q, &sqlitex.ExecOptions{
			Named: map[string]any{":query": `"alpha"`, ":rev": 1, ":kind": "", ":limit": 10},
			ResultFunc: func(st *sqlite.Stmt) error {
				rows = append(rows, fmt.Sprintf("%d %d %s", st.ColumnInt64(0), st.ColumnInt64(1), st.ColumnText(3)))
				return nil
			}}))
		return strings.Join(rows, "\n")
	}
	read(t, st, func(conn *sqlite.Conn) {
		got := plan(conn, strings.TrimSuffix(strings.TrimSpace(string(text)), ";"))
		require.Contains(t, got, "MATERIALIZE page", got)
		require.Contains(t, got, "CORRELATED SCALAR SUBQUERY", got)
		require.Contains(t, got, "SCAN page", got)
		whole := plan(conn, searchWhole)
		require.NotContains(t, whole, "MATERIALIZE", "the whole query, as a check of the check")
	})
}
