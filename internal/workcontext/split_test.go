package workcontext

import (
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/awr-dev/awr/fixtures/testkit"

	"github.com/dlclark/regexp2/v2"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// patternPieces cuts text with splitPattern run by regexp2's interpreter
// (Compile: MustCompile would pick up the tokenizer library's generated
// matcher for this pattern, which drops U+007F).
func patternPieces(t require.TestingT, re *regexp2.Regexp, text string) []string {
	var out []string
	m, err := re.FindStringMatch(text)
	require.NoError(t, err)
	for m != nil {
		out = append(out, m.String())
		m, err = re.FindNextMatch(m)
		require.NoError(t, err)
	}
	return out
}

func splitPieces(text string) []string {
	rs := []rune(text)
	var out []string
	split(rs, func(s, e int) { out = append(out, string(rs[s:e])) })
	return out
}

// TestSplit_MatchesPattern: split cuts text exactly as splitPattern does,
// for every rune alone and in the contexts the pattern tells apart, for
// the fixtures, and for arbitrary text.
func TestSplit_MatchesPattern(t *testing.T) {
	t.Parallel()
	re, err := regexp2.Compile(splitPattern, regexp2.None)
	require.NoError(t, err)
	check := func(t require.TestingT, text string) {
		require.Equal(t, patternPieces(t, re, text), splitPieces(text), "%q", text)
	}
	// Every rune below U+3000; above, every rune whose class differs from
	// the one before it, and every 97th.
	prev := uint8(255)
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if r >= 0xD800 && r < 0xE000 {
			continue
		}
		c, changed := string(r), class(r) != prev
		prev = class(r)
		if r < 0x3000 || r%97 == 0 {
			for _, text := range []string{c, "a" + c + "b", c + c + "x", " " + c, "!" + c + "s", "'" + c, "x'" + c + "e", c + "'S", "A" + c + "a", "1" + c + "2"} {
				check(t, text)
			}
		} else if changed {
			check(t, "a"+c+" b")
		}
	}
	_ = filepath.Walk(testkit.Path("fixtures"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && fi.Size() < 1<<20 {
			b, _ := os.ReadFile(p)
			check(t, string(b))
		}
		return nil
	})
	for _, text := range []string{"", "\xff\xfe invalid \xc3 utf-8", "  \n\n  x", "a  \n", "x   ", "x \t y", "\r\n\r\n", "don't WE'LL they'Re I'M ſ'ſ 'ſ x'ſ", "ǅungla ǅ", "١٢٣٤ 12345 ⅷⅸ"} {
		check(t, text)
	}
	alphabet := []rune("aZ ǅʰ\u0301\u0903中ǈ9١Ⅻ½ \t\n\r\u00a0\u2028\u3000\u0085'sStTrReEvVlLmMdDſ/.,!-_\x00\x7f\u200b\ufffd🎉")
	rapid.Check(t, func(rt *rapid.T) {
		text := rapid.StringOf(rapid.OneOf(rapid.SampledFrom(alphabet), rapid.Rune())).Draw(rt, "text")
		check(rt, text)
	})
}
