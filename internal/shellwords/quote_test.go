package shellwords

import (
	"os/exec"
	"testing"
)

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"":                  "''",
		"T-1":               "T-1",
		"build@portal":      "build@portal",
		"a/b.c:d%e+f=g,h_i": "a/b.c:d%e+f=g,h_i",
		"two words":         "'two words'",
		"it's":              `'it'\''s'`,
		"$HOME":             "'$HOME'",
		"a;b":               "'a;b'",
		"~x":                "'~x'",
		"é":                 "'é'",
		"go test ./...":     "'go test ./...'",
		"*":                 "'*'",
		"a\nb":              "'a\nb'",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestQuote_ReadBack: what Quote writes, Command and sh read back as the
// one word it was.
func TestQuote_ReadBack(t *testing.T) {
	words := []string{"", "plain", "two words", "it's", `a\b`, "$HOME `x` $(y)", "a'\"b", "*?[]~#&|;<>(){}!", "tab\there", "%1"}
	for _, w := range words {
		got := Command("echo " + Quote(w))
		if len(got) != 2 || got[1] != w {
			t.Errorf("Command(echo %s) = %q, want [echo %q]", Quote(w), got, w)
		}
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH")
	}
	for _, w := range words {
		out, err := exec.Command(sh, "-c", "printf '%s' "+Quote(w)).Output()
		if err != nil {
			t.Fatalf("sh -c printf %s: %v", Quote(w), err)
		}
		if string(out) != w {
			t.Errorf("sh read %s as %q, want %q", Quote(w), out, w)
		}
	}
}
