package replay_test

import (
	"strings"
	"testing"

	"github.com/awr-dev/awr/replay"
	"github.com/stretchr/testify/require"
)

// TestLastSeq: the seq of an export's last line, read from its end, is the
// total an import's progress is scaled to; a file that does not end with
// an envelope's line has none.
func TestLastSeq(t *testing.T) {
	t.Parallel()
	long := `{"seq":3,"payload":"` + strings.Repeat("x", 200_000) + `"}`
	for _, c := range []struct {
		name, file string
		want       int64
		ok         bool
	}{
		{"OK", `{"seq":1,"id":"a"}` + "\n" + `{"seq":2,"id":"b"}` + "\n", 2, true},
		{"OKNoNewline", `{"seq":1}` + "\n" + `{"seq":12}`, 12, true},
		{"OKTrailingBlankLines", `{"seq":1}` + "\n" + `{"seq":7}` + "\r\n\n  \n", 7, true},
		{"OKOneLine", `{"seq":5,"id":"a"}`, 5, true},
		{"OKLongLastLine", `{"seq":2}` + "\n" + long + "\n", 3, true},
		{"ErrNotAnEnvelope", `{"seq":1}` + "\n" + `{"id":"a","seq":2}` + "\n", 0, false},
		{"ErrEmpty", "", 0, false},
		{"ErrZero", `{"seq":0}`, 0, false},
		{"ErrBeyondReach", `{"seq":9,"payload":"` + strings.Repeat("x", 1<<21) + `"}`, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := replay.LastSeq(strings.NewReader(c.file), int64(len(c.file)))
			require.Equal(t, c.ok, ok)
			require.Equal(t, c.want, got)
		})
	}
}
