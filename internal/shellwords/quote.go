package shellwords

import (
	"runtime"
	"strings"
)

// Quote returns s as one word for the shell a command line is run with
// (a hint a person copies, a hook command a host runs): as is when it
// holds only characters the shell leaves alone, else in single quotes, a
// single quote inside closed, escaped and reopened (in double quotes on
// Windows, where a backslash is also left alone). Command reads the word
// back as s (on Windows, unless s holds a double quote).
func Quote(s string) string {
	return quote(s, runtime.GOOS == "windows")
}

func quote(s string, windows bool) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./:@%+=,", r) ||
			windows && r == '\\') {
			safe = false
			break
		}
	}
	switch {
	case safe:
		return s
	case windows:
		return `"` + s + `"`
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
