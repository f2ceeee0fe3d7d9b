package workcontext

import (
	"fmt"
	"strings"
	"unicode"
)

// SafeText renders a recorded value (a digest, a next action, a loop, a
// title: text that agents and sources wrote) so that it can never read as
// structure of the packet or reach a terminal raw. Control characters,
// escape sequences and the Unicode line and paragraph separators are
// escaped (\x1b, \r, \u2028); a value of several lines keeps its first
// line in place and puts each further line behind "  > ", so no line of
// it can start a section ("## Hard rules") or a list item of the packet.
func SafeText(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	lines := strings.Split(s, "\n")
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteString("\n  > ")
		}
		for _, r := range l {
			switch {
			case r == '\t':
				b.WriteRune(r)
			case r < 0x20 || r == 0x7f:
				fmt.Fprintf(&b, "\\x%02x", r)
			case r == '\u2028' || r == '\u2029' || r == '\u0085' || (unicode.Is(unicode.Cc, r)) || unicode.Is(unicode.Cf, r) && isBidi(r):
				fmt.Fprintf(&b, "\\u%04x", r)
			default:
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

// isBidi reports the bidirectional controls that can make text display
// in another order than it is stored.
func isBidi(r rune) bool {
	return (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') || r == '\u200e' || r == '\u200f'
}
