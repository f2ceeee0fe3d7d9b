package projections_test

import (
	"testing"

	"github.com/awr-dev/awr/projections"
)

// TestMatchText pins the one key loops, decisions, facts and hypotheses
// are matched by: what it folds (case, white space, punctuation at either
// end) and what it keeps apart (words, inner punctuation, texts that are
// only punctuation).
func TestMatchText(t *testing.T) {
	t.Parallel()
	same := [][2]string{
		{"Fix the login", "fix the login"},
		{"Fix the login.", "fix the login"},
		{"  fix   the\tlogin\n", "fix the login"},
		{"FIX THE LOGIN!!", "Fix the login?"},
		{"fix the login …", "fix the login"},
		{"\"Use SQLite\"", "use sqlite"},
		{"Is the cache cold?", "is the cache cold"},
		{"Ünïcode Fold.", "ünïcode fold"},
		{"...", " ... "},
	}
	for _, c := range same {
		if a, b := projections.MatchText(c[0]), projections.MatchText(c[1]); a != b {
			t.Errorf("MatchText(%q) = %q, MatchText(%q) = %q: want equal", c[0], a, c[1], b)
		}
	}
	differ := [][2]string{
		{"fix the login", "fix the logout"},
		{"x=1 holds", "x 1 holds"},
		{"use v1.2", "use v12"},
		{"don't retry", "dont retry"},
		{"...", "!!!"},
		{"...", ""},
		{"fix the login", "fix  login"},
	}
	for _, c := range differ {
		if a, b := projections.MatchText(c[0]), projections.MatchText(c[1]); a == b {
			t.Errorf("MatchText(%q) = MatchText(%q) = %q: want different", c[0], c[1], a)
		}
	}
	keys := map[string]string{
		"  Fix the Login. ": "fix the login",
		"a\u00a0b":          "a b",
		"":                  "",
		"   ":               "",
		"?":                 "?",
	}
	for in, want := range keys {
		if got := projections.MatchText(in); got != want {
			t.Errorf("MatchText(%q) = %q, want %q", in, got, want)
		}
	}
}
