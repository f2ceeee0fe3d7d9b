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
			escapeRune(&b, r, true)
		}
	}
	return b.String()
}

// SafeLine renders a recorded name or value as one line of a table or a
// list (a file name, a key, a branch, an agent label, a title): every
// character SafeText escapes, and the newline and the tab too (\x0a,
// \x09), so that a name can never start a row of its own or shift the
// columns of the one it is in.
func SafeLine(s string) string {
	return escaped(s, false)
}

// Inert makes a whole text view safe for a terminal: every character
// SafeText escapes is escaped, but its newlines and tabs, which are the
// view's own layout, stay. It is the last step of every text output, after
// the names in it went through SafeLine or SafeText.
func Inert(s string) string {
	return escaped(s, true)
}

// escaped is s with every character escapeRune escapes escaped; with
// layout, newlines and tabs stay as they are.
func escaped(s string, layout bool) string {
	if plain(s, layout) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if layout && r == '\n' {
			b.WriteRune(r)
			continue
		}
		escapeRune(&b, r, layout)
	}
	return b.String()
}

// plain reports whether s holds nothing escapeRune would change (tabs and
// newlines allowed when layout is set): the common case, answered without
// copying s.
func plain(s string, layout bool) bool {
	for _, r := range s {
		if r < 0x80 {
			if r >= 0x20 && r != 0x7f || layout && (r == '\n' || r == '\t') {
				continue
			}
			return false
		}
		if needsEscape(r) {
			return false
		}
	}
	return true
}

// escapeRune writes r to b, escaped when it is a control character, a
// line or paragraph separator or a bidirectional control (\x1b, \u2028);
// a tab is written as it is when keepTab is set.
func escapeRune(b *strings.Builder, r rune, keepTab bool) {
	switch {
	case r == '\t' && keepTab:
		b.WriteRune(r)
	case r < 0x20 || r == 0x7f:
		fmt.Fprintf(b, "\\x%02x", r)
	case needsEscape(r):
		fmt.Fprintf(b, "\\u%04x", r)
	default:
		b.WriteRune(r)
	}
}

// needsEscape reports the characters outside ASCII that escapeRune
// escapes.
func needsEscape(r rune) bool {
	return r == '\u2028' || r == '\u2029' || r == '\u0085' || unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) && isBidi(r)
}

// isBidi reports the bidirectional controls that can make text display
// in another order than it is stored.
func isBidi(r rune) bool {
	return (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') || r == '\u200e' || r == '\u200f'
}
