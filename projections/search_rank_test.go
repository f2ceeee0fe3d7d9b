package projections_test

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// rankLog is a register of items with texts drawn from a few words
// (seeded), indexed three times: the second changes a third of the items
// and drops a tenth, the third changes some again; then checkpoints on
// some of them. Many documents hold each word, in title and body, with
// lengths that differ: ranks tie and cross.
func rankLog(items int) []events.Payload {
	words := []string{"alpha", "beta", "gamma", "delta", "parser", "lexer", "cache", "token"}
	fill := []string{"the", "of", "a", "to", "in", "and", "with", "for"}
	r := rand.New(rand.NewSource(7))
	text := func(n int) string {
		var out []string
		for range n {
			if r.Intn(3) == 0 {
				out = append(out, words[r.Intn(len(words))])
			} else {
				out = append(out, fill[r.Intn(len(fill))])
			}
		}
		return strings.Join(out, " ")
	}
	gen := func(keep func(i int) bool, change func(i int) bool, prev []events.WorkItem) []events.WorkItem {
		var out []events.WorkItem
		for i := range items {
			if !keep(i) {
				continue
			}
			if prev != nil && !change(i) {
				out = append(out, prev[i])
				continue
			}
			out = append(out, events.WorkItem{Key: fmt.Sprintf("W-%03d", i), Title: text(1 + r.Intn(4)), Status: "todo",
				NextAction: text(r.Intn(12)), Summary: text(r.Intn(30))})
		}
		return out
	}
	first := gen(func(int) bool { return true }, nil, nil)
	second := gen(func(i int) bool { return i%10 != 3 }, func(i int) bool { return i%3 == 0 }, first)
	byKey := map[string]events.WorkItem{}
	for _, it := range second {
		byKey[it.Key] = it
	}
	full := make([]events.WorkItem, items)
	for i := range items {
		full[i] = byKey[fmt.Sprintf("W-%03d", i)]
	}
	var third []events.WorkItem
	for i, it := range gen(func(i int) bool { return i%10 != 3 }, func(i int) bool { return i%7 == 0 }, full) {
		_ = i
		third = append(third, it)
	}
	log := []events.Payload{index("tasks.md", "h1", first...), index("tasks.md", "h2", second...), index("tasks.md", "h3", third...),
		start("s1", "W-001")}
	for i := range 12 {
		log = append(log, checkpoint("s1", "W-001", text(3+r.Intn(6)), opens(fmt.Sprintf("L-%d", i+1), events.KnowledgeLoop, text(2+r.Intn(5)))))
	}
	return log
}

// rankQueries are the queries the rank tests try: one word, two, three,
// a word twice, a word no document holds.
var rankQueries = []string{"alpha", "parser", "the", "alpha beta", "cache token lexer", "gamma gamma", "delta the", "missing", "alpha missing"}

// TestSearch_RankKeptAhead: at the head, a search of plain words reads
// the open work items from the rank kept ahead and stops early, and
// scores the rest (checkpoints, loops) as it runs (SearchHead); it finds
// exactly what scoring every match finds (SearchAt at the head
// revision), page by page, of every kind and of one, and its hits are
// the documents FTS5 matches (every word required); after a rebuild too,
// whose words and counts are incremental apply's.
func TestSearch_RankKeptAhead(t *testing.T) {
	t.Parallel()
	st := openLog(t)
	for i, p := range rankLog(160) {
		_, err := appendOne(st, int64(i+1), p)
		require.NoError(t, err)
	}
	check := func(stage string) {
		err := st.Read(context.Background(), func(r *events.Reader) error {
			for _, words := range rankQueries {
				q := projections.FTSQuery(words)
				for _, kind := range []string{"", projections.SearchWork, projections.SearchLoop, projections.SearchCheckpoint} {
					all, err := projections.SearchAt(r.Conn, r.Head, q, kind, 200)
					require.NoError(t, err)
					require.Equal(t, matchCount(t, r.Conn, r.Head, q, kind), len(all), "%s: %q %q: every match, every word required", stage, words, kind)
					for _, limit := range []int{1, 2, 5, 17, 200} {
						head, err := projections.SearchHead(r.Conn, r.Head, q, kind, limit)
						require.NoError(t, err)
						require.Equal(t, all[:min(limit, len(all))], head, "%s: %q kind %q limit %d", stage, words, kind, limit)
					}
				}
			}
			return nil
		})
		require.NoError(t, err)
	}
	check("incremental")
	words := func() []string {
		var out []string
		read(t, st, func(conn *sqlite.Conn) {
			out = append(dump(t, conn, "SELECT * FROM p_search_term ORDER BY id, term"), dump(t, conn, "SELECT * FROM p_search_term_doc ORDER BY id")...)
			out = append(out, dump(t, conn, "SELECT * FROM p_search_df ORDER BY term")...)
			for _, fts := range []string{"p_search_fts", "p_search_head_fts"} {
				// Each index holds what its view of p_search holds, no more.
				require.NoError(t, sqlitex.ExecuteTransient(conn, "INSERT INTO "+fts+" ("+fts+") VALUES ('integrity-check')", nil), fts)
				out = append(out, dump(t, conn, "SELECT count(*) FROM "+fts+"_docsize")...)
			}
		})
		return out
	}
	incremental := words()
	require.Greater(t, len(incremental), 1000)
	require.NoError(t, st.Rebuild(context.Background(), nil))
	check("rebuilt")
	require.Equal(t, incremental, words(), "a rebuild writes the words and counts incremental apply wrote")
}

// matchCount is how many versions visible at rev FTS5 matches with q,
// in either index.
func matchCount(t *testing.T, conn *sqlite.Conn, rev int64, q, kind string) int {
	t.Helper()
	n := 0
	for _, fts := range []string{"p_search_fts", "p_search_head_fts"} {
		st, _, err := conn.PrepareTransient(`SELECT count(*) FROM ` + fts + ` JOIN p_search d ON d.id = ` + fts + `.rowid
		WHERE ` + fts + ` MATCH $q AND d.valid_from <= $rev AND (d.valid_to IS NULL OR d.valid_to > $rev) AND ($kind = '' OR d.kind = $kind)`)
		require.NoError(t, err)
		st.SetText("$q", q)
		st.SetInt64("$rev", rev)
		st.SetText("$kind", kind)
		ok, err := st.Step()
		require.NoError(t, err)
		require.True(t, ok)
		n += int(st.ColumnInt64(0))
		require.NoError(t, st.Finalize())
	}
	return n
}

// TestSearch_RankDefinition: the rank is the documented BM25 with a fixed
// reference length: a word in a title outranks it in a body, a short
// document outranks a long one holding the word as often, more of a
// word outranks less; plain words rank the same at the head
// and at a past revision, where a version's own words score it.
func TestSearch_RankDefinition(t *testing.T) {
	t.Parallel()
	st := openLog(t)
	long := strings.Repeat("word ", 60)
	for i, p := range []events.Payload{
		index("tasks.md", "h1",
			events.WorkItem{Key: "BODY", Title: "one", Status: "todo", Summary: "cache"},
			events.WorkItem{Key: "TITLE", Title: "cache", Status: "todo"},
			events.WorkItem{Key: "LONG", Title: "two", Status: "todo", Summary: "cache " + long},
			events.WorkItem{Key: "RARE", Title: "three", Status: "todo", Summary: "cache " + long + " zebra"},
			events.WorkItem{Key: "COMMON", Title: "four", Status: "todo", Summary: "cache word " + long}),
		index("tasks.md", "h2",
			events.WorkItem{Key: "CAFE", Title: "Café crème", Status: "todo", Summary: "naïve cache — déjà vu"},
			events.WorkItem{Key: "BODY", Title: "one", Status: "todo", Summary: "cache"},
			events.WorkItem{Key: "TITLE", Title: "now the cache is in a much longer title" + strings.Repeat(" of words", 10), Status: "todo"}),
	} {
		_, err := appendOne(st, int64(i+1), p)
		require.NoError(t, err)
	}
	keys := func(hits []projections.SearchHit) string {
		var out []string
		for _, h := range hits {
			out = append(out, h.Ref)
		}
		return strings.Join(out, " ")
	}
	read(t, st, func(conn *sqlite.Conn) {
		at1, err := projections.SearchAt(conn, 1, `"cache"`, "", 10)
		require.NoError(t, err)
		require.Equal(t, "TITLE BODY LONG COMMON RARE", keys(at1), "title over body, short over long")
		head, err := projections.SearchHead(conn, 2, `"cache"`, "", 10)
		require.NoError(t, err)
		require.Equal(t, "BODY CAFE TITLE", keys(head), "TITLE's title grew longer; the others are gone")
		folded, err := projections.SearchHead(conn, 2, `"cafe" "naive" "deja"`, "", 10)
		require.NoError(t, err)
		require.Equal(t, "CAFE", keys(folded), "words beyond ASCII as FTS5 folds them")
		require.Equal(t, "[naïve] cache — [déjà] vu", folded[0].Snippet)
		at2, err := projections.SearchAt(conn, 2, `"cache"`, "", 10)
		require.NoError(t, err)
		require.Equal(t, head, at2)
		both, err := projections.SearchAt(conn, 1, `"cache" "zebra"`, "", 10)
		require.NoError(t, err)
		require.Equal(t, "RARE", keys(both))
		common, err := projections.SearchAt(conn, 1, `"cache" "word"`, "", 10)
		require.NoError(t, err)
		require.Equal(t, "LONG COMMON RARE", keys(common), "BM25 saturates: a shorter document's cache outweighs one more word")
		for _, h := range at1 {
			require.Positive(t, h.Score)
		}
		require.Contains(t, at1[0].Snippet, "[cache]")
	})
}
