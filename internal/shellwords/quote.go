package shellwords

import "strings"

// safe are the characters besides ASCII letters and digits that sh takes
// literally anywhere in a word.
const safe = "_-./:@%+=,"

// Quote returns s as one POSIX shell word that sh and Command read back
// as s: as it is when it holds only letters, digits and the characters sh
// leaves alone (_-./:@%+=,), otherwise between single quotes, a single
// quote inside closed, escaped and reopened. The empty string is a pair
// of single quotes.
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(safe, r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
