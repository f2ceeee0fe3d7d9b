package shellwords

import (
	"reflect"
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"":                     "''",
		"W-1":                  "W-1",
		"build@portal":         "build@portal",
		"/opt/awr/bin/awr":     "/opt/awr/bin/awr",
		"a=b,c%d+e:f":          "a=b,c%d+e:f",
		"two words":            "'two words'",
		"it's":                 `'it'\''s'`,
		"$USER":                "'$USER'",
		`C:\tools\awr.exe`:     `'C:\tools\awr.exe'`,
		"line\nbreak":          "'line\nbreak'",
		"#12":                  "'#12'",
		"agent {context_file}": "'agent {context_file}'",
	} {
		if got := quote(in, false); got != want {
			t.Errorf("quote(%q) = %s, want %s", in, got, want)
		}
	}
	// Windows: a backslash is safe, and the word is double-quoted.
	for in, want := range map[string]string{
		`C:\tools\awr.exe`:    `C:\tools\awr.exe`,
		`C:\my tools\awr.exe`: `"C:\my tools\awr.exe"`,
		"it's":                `"it's"`,
	} {
		if got := quote(in, true); got != want {
			t.Errorf("quote(%q, windows) = %s, want %s", in, got, want)
		}
	}
}

// TestQuote_RoundTrip: the splitter reads every quoted word back whole,
// beside other words.
func TestQuote_RoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", "two words", "it's", `a "b" \c $d`, "tab\there", "new\nline", "'''", `\`, "{x} [y] *z?"} {
		line := "awr x " + quote(s, false) + " y"
		if got, want := command(line, true), []string{"awr", "x", s, "y"}; !reflect.DeepEqual(got, want) {
			t.Errorf("command(%q) = %q, want %q", line, got, want)
		}
		if strings.Contains(s, `"`) {
			continue // a Windows word cannot hold a double quote
		}
		line = "awr x " + quote(s, true) + " y"
		if got, want := command(line, false), []string{"awr", "x", s, "y"}; !reflect.DeepEqual(got, want) {
			t.Errorf("command(%q, windows) = %q, want %q", line, got, want)
		}
	}
}
