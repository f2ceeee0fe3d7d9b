// Package shellwords splits command lines into words as sh would. Split
// reads a command line printed as a hint, for the quoting awr's hints
// use: '...' and "..." without escapes inside; the hint runner of the
// test build (cmd/awr/hintrun_awrtest.go) and the test that parses every
// hint in the code (cmd/awr/hintsource_test.go) read hints with it.
// Command reads any command line a host runs (backslash escapes
// included): internal/hosts decides with it whether a hook in a host's
// settings is awr's, and which binary it runs.
package shellwords

import "strings"

// Split returns the words of s.
func Split(s string) []string {
	var words []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			w.WriteByte(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}
