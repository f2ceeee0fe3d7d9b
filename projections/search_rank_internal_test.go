package projections

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
)

// TestPlans_SearchHeadInRankOrder: the head's walk of a word reads the
// index of open versions in rank order (no sort of every match), so it
// can stop after a page.
func TestPlans_SearchHeadInRankOrder(t *testing.T) {
	st, err := events.Open(context.Background(), events.DBPath(t.TempDir()), events.Options{Create: true, Projectors: Projectors()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error {
		plan, err := events.QueryPlan(r.Conn, mustStatement(t, "search_term_rank"))
		require.NoError(t, err)
		joined := strings.Join(plan, "\n")
		require.Contains(t, joined, "PRIMARY KEY (term=?)", joined)
		require.NotContains(t, joined, "TEMP B-TREE", joined)
		return nil
	}))
}

// TestSearchWords_AsFTS5: the words read in Go from ASCII text are the
// words FTS5's tokenizer reads (through the tokenizer table), with the
// same counts; text beyond ASCII goes through the table.
func TestSearchWords_AsFTS5(t *testing.T) {
	t.Parallel()
	conn, err := events.OpenConn(filepath.Join(t.TempDir(), "words.db"), sqlite.OpenReadWrite|sqlite.OpenCreate)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	require.NoError(t, newSearch().Reset(conn))
	for _, text := range [][2]string{
		{"Alpha parser", "write the lexer\nparse alpha files"},
		{"", ""},
		{"don't STOP", "a_b c-d e.f g/h 42x x42 $100 #7 @me ~tilde `tick` [x] {y} (z) <w> a+b=c|d^e"},
		{"  lead and trail  ", "\ttabs\tand\r\nnewlines\n"},
		{"MixedCase mixedcase MIXEDCASE", "mixedCase"},
		{"café naïve", "Ærø straße"},
	} {
		f, n, err := searchWords(conn, text[0], text[1])
		require.NoError(t, err)
		tf, tn, err := tokenizedWords(conn, text[0], text[1])
		require.NoError(t, err)
		require.Equal(t, tf, f, "%q", text)
		require.Equal(t, tn, n, "%q", text)
	}
}
