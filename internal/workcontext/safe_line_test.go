package workcontext_test

import (
	"testing"

	"github.com/awr-dev/awr/internal/workcontext"
	"github.com/stretchr/testify/require"
)

func TestSafeLine(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain name.md":            "plain name.md",
		"a\nb":                     `a\x0ab`,
		"a\tb\r\x1b[2J":            `a\x09b\x0d\x1b[2J`,
		"rtl\u202eevil\u2028x":     `rtl\u202eevil\u2028x`,
		"café ✓":                   "café ✓",
		"\x1b]0;title\x07rest\x7f": `\x1b]0;title\x07rest\x7f`,
	} {
		require.Equal(t, want, workcontext.SafeLine(in), "%q", in)
	}
}

func TestInert(t *testing.T) {
	t.Parallel()
	require.Equal(t, "a\tb\nc", workcontext.Inert("a\tb\nc"))
	require.Equal(t, "row\\x1b[2J\n\\x0dfake\n", workcontext.Inert("row\x1b[2J\n\rfake\n"))
	// SafeText is unchanged: further lines behind "  > ".
	require.Equal(t, "a\n  > b\\x1b", workcontext.SafeText("a\nb\x1b"))
}
