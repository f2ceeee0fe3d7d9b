package buildinfo

import (
	"regexp"
	"testing"
)

// TestVersion: a linked version wins; a test binary has no VCS revision
// and a development module version, so it reports Semver, a semantic
// version.
func TestVersion(t *testing.T) {
	if got := Version("1.2.3"); got != "1.2.3" {
		t.Fatalf("linked: got %q", got)
	}
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(Semver) {
		t.Fatalf("Semver %q is not MAJOR.MINOR.PATCH", Semver)
	}
	if got := Version(""); got != Semver && !regexp.MustCompile(`^`+regexp.QuoteMeta(Semver)+`\+[0-9a-f]{12}(-dirty)?$`).MatchString(got) {
		t.Fatalf("unlinked: got %q", got)
	}
	for _, v := range []string{"v0.0.0-20261201160337-5d12a71a1a5a+dirty", "v0.6.1-0.20261201160337-5d12a71a1a5a"} {
		if !pseudo.MatchString(v) {
			t.Fatalf("%s is a pseudo-version", v)
		}
	}
	if pseudo.MatchString("v0.6.0") {
		t.Fatal("v0.6.0 is a release")
	}
}
