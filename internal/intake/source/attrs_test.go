package source

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHeadingAttrs reads AWR's (and Pandoc's) heading attribute blocks:
// #id, key=value, key="two words", .class dropped; anything else is not a
// block and the heading is left as it is.
func TestHeadingAttrs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text, rest, id string
		attrs          [][2]string
		ok             bool
	}{
		{"Rotate keys {#AUTH-3 status=ready priority=P1}", "Rotate keys", "AUTH-3", [][2]string{{"status", "ready"}, {"priority", "P1"}}, true},
		{"Audit {#A-4 .wip owner=\"Dana Q\" depends=\"A-3\"}", "Audit", "A-4", [][2]string{{"owner", "Dana Q"}, {"depends", "A-3"}}, true},
		{"No id {status=ready}", "No id", "", [][2]string{{"status", "ready"}}, true},
		{"Spaces {  #X-1   }  ", "Spaces", "X-1", nil, true},
		{"Plain title", "Plain title", "", nil, false},
		{"Braces in {the middle} of it", "Braces in {the middle} of it", "", nil, false},
		{"Prose {not an attribute}", "Prose {not an attribute}", "", nil, false},
		{"Unclosed {#X-1 owner=\"Dana}", "Unclosed {#X-1 owner=\"Dana}", "", nil, false},
		{"Empty key {=x}", "Empty key {=x}", "", nil, false},
	} {
		rest, id, attrs, ok := headingAttrs(tc.text)
		require.Equal(t, tc.ok, ok, tc.text)
		if !ok {
			require.Equal(t, tc.text, rest, tc.text)
			continue
		}
		require.Equal(t, tc.rest, rest, tc.text)
		require.Equal(t, tc.id, id, tc.text)
		require.Equal(t, tc.attrs, attrs, tc.text)
	}
	res := parseHeadings("b.md", []byte("## T-1 — Title {#T-1 status=ready}\n\n## Other {#T-2}\nStatus: done\n"), Options{})
	require.Len(t, res.Items, 2)
	require.Equal(t, "T-1", res.Items[0].Key)
	require.Equal(t, "Title", res.Items[0].Title)
	require.Equal(t, "ready", res.Items[0].Status)
	require.Equal(t, "Other", res.Items[1].Title)
	require.Equal(t, "completed", res.Items[1].Status)
}
