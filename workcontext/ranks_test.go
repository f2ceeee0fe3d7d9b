package workcontext

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlclark/regexp2/v2"
	"github.com/stretchr/testify/require"
	"github.com/tiktoken-go/tokenizer"
	"pgregory.net/rapid"
)

func libraryAndTable(t require.TestingT) (tokenizer.Codec, *rankTable) {
	codec, err := tokenizer.Get(tokenizer.O200kBase)
	require.NoError(t, err)
	tab, err := buildTable(codec)
	require.NoError(t, err)
	raw := tab.encode()
	back, err := decodeTable(raw)
	require.NoError(t, err)
	back.split = regexp2.MustCompile(splitPattern, regexp2.None)
	return codec, back
}

// TestRankTable_MatchesLibrary: the cached table counts exactly as the
// tokenizer library does, on real packets and on arbitrary text.
func TestRankTable_MatchesLibrary(t *testing.T) {
	codec, tab := libraryAndTable(t)
	require.Greater(t, len(tab.ranks), 199000, "the whole vocabulary")
	n, err := tab.count("hello world")
	require.NoError(t, err)
	require.Equal(t, 2, n)
	var corpus []string
	_ = filepath.Walk("../fixtures", func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && fi.Size() < 1<<20 {
			b, _ := os.ReadFile(p)
			corpus = append(corpus, string(b))
		}
		return nil
	})
	corpus = append(corpus, "hello world", "", "  \n\n\t x", "日本語のテキスト and émojis 🎉🎉", "can't won't I'll they've", "12345678901 3.14159",
		strings.Repeat("a", 5000), "<|endoftext|> stays text", "\r\n\r\n  \n", "ÀÉÎÕÜ àéîõü ßẞ")
	p, _, err := Compile(input())
	require.NoError(t, err)
	corpus = append(corpus, p.RenderedContext)
	total := 0
	for _, text := range corpus {
		want, err := codec.Count(text)
		total += want
		require.NoError(t, err)
		got, err := tab.count(text)
		require.NoError(t, err)
		require.Equal(t, want, got, "%.60q", text)
	}
	t.Logf("%d texts, %d tokens, counted alike", len(corpus), total)
	rapid.Check(t, func(rt *rapid.T) {
		text := rapid.StringOf(rapid.OneOf(rapid.RuneFrom([]rune("ab Z9\n\t'.,-_/é日🎉")), rapid.Rune())).Draw(rt, "text")
		want, err := codec.Count(text)
		require.NoError(rt, err)
		got, err := tab.count(text)
		require.NoError(rt, err)
		require.Equal(rt, want, got, "%q", text)
	})
}

func TestDecodeTable_Refuses(t *testing.T) {
	t.Parallel()
	_, err := decodeTable([]byte("garbage"))
	require.Error(t, err)
	_, err = decodeTable([]byte(tableMagic + "\x01\x00"))
	require.Error(t, err)
}
