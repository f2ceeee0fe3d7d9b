package shellwords

import (
	"runtime"
	"strings"
)

// Command returns the words of the command line s as sh splits them
// (without expanding anything): blanks (space, tab, newline) separate
// words; '...' keeps everything literally; "..." keeps everything but a
// backslash before $ ` " \ or a newline; outside quotes a backslash keeps
// the next character literally (and a backslash-newline joins lines). On
// Windows, where a host's shell does not treat backslashes as escapes
// and paths hold them, a backslash is an ordinary character. The hooks
// awr installs into a host's settings are recognized and checked with it.
func Command(s string) []string {
	return command(s, runtime.GOOS != "windows")
}

func command(s string, escapes bool) []string {
	var words []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				w.WriteByte(c)
			}
		case quote == '"':
			switch {
			case c == '"':
				quote = 0
			case c == '\\' && escapes && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0:
				i++
				if s[i] != '\n' {
					w.WriteByte(s[i])
				}
			default:
				w.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == '\\' && escapes:
			if i+1 < len(s) {
				i++
				if s[i] == '\n' {
					continue
				}
				w.WriteByte(s[i])
			}
			in = true
		case c == ' ' || c == '\t' || c == '\n':
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
