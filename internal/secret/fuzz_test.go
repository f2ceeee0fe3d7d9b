package secret

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// kinds are the names Find may return.
func kinds() map[string]bool {
	out := map[string]bool{}
	for _, d := range detectors() {
		out[d.kind] = true
	}
	return out
}

// FuzzFind: for any text, no detector's prefilter hides a match of its
// regexp; Find answers one of the fixed detector kinds or
// nothing (so it can never echo the text); the answer does not change when the text
// is padded with whitespace (a secret is found wherever a field puts it);
// and a known secret placed anywhere in the text, between spaces, is
// always found.
func FuzzFind(f *testing.F) {
	f.Add("Added carts table migration; tests written, not yet run.", uint(3))
	f.Add("export PASSWORD=correcthorse", uint(0))
	f.Add("postgres://app:s3cretpw@db.internal/app", uint(100))
	f.Add("-----BEGIN OPENSSH PRIVATE KEY-----", uint(7))
	f.Add("\xff\xfe AKIA", uint(1))
	f.Add("", uint(0))
	known := []string{
		"ghp_abcdefghijklmnopqrstuvwxyz0123456789",
		"AKIAIOSFODNN7EXAMPLE",
		"-----BEGIN RSA PRIVATE KEY-----",
		"glpat-abcdefghij0123456789xyz",
		"sk-ant-abcdefghijklmnopqrstuvwxyz",
		"password=hunter2hunter",
		"https://user:pass1234@example.com/",
	}
	all := kinds()
	f.Fuzz(func(t *testing.T, text string, at uint) {
		lower := strings.Map(fold, text)
		for _, d := range detectors() {
			if d.re.MatchString(text) && !d.may(text, lower) {
				t.Fatalf("%s: the prefilter hides a match in %q", d.kind, text)
			}
		}
		got, found := Find(text)
		if found {
			if !all[got.Kind] {
				t.Fatalf("Find returned kind %q, which no detector has", got.Kind)
			}
		} else if got != (Finding{}) {
			t.Fatalf("nothing found but a finding %+v", got)
		}
		padded, paddedFound := Find(" \t" + text + "\n ")
		if paddedFound != found || padded != got {
			t.Fatalf("padding changed the answer for %q: %+v %v, then %+v %v", text, got, found, padded, paddedFound)
		}
		// Put a known secret at a rune boundary near at.
		pos := int(at % uint(len(text)+1))
		for pos > 0 && pos < len(text) && !utf8.RuneStart(text[pos]) {
			pos--
		}
		secret := known[int(at)%len(known)]
		with := text[:pos] + " " + secret + " " + text[pos:]
		if _, ok := Find(with); !ok {
			t.Fatalf("the %q placed in %q was not found", secret, with)
		}
	})
}
