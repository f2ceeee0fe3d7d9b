// Package buildinfo says which version of awr is running, the same way for
// every binary built from this module (awr, awr-mcp).
package buildinfo

import (
	"github.com/awr-dev/awr/internal/lazyre"
	"runtime/debug"
	"strings"
)

// pseudo matches the pseudo-version Go gives a build from a checkout
// (v0.0.0-20261201160337-5d12a71a1a5a+dirty): not a release.
var pseudo = lazyre.New(`\d{14}-[0-9a-f]{12}`)

// Semver is awr's version, kept in the code and raised with every release
// (see CHANGELOG.md).
const Semver = "0.6.0"

// Version returns linked (set with -ldflags "-X main.version=..." by
// release builds) when it is not empty; else the module version when the
// binary was installed from a published module; else Semver, followed by
// the VCS revision it was built from when the build recorded one
// ("0.6.0+1a2b3c4d5e6f", "+…-dirty" for uncommitted changes).
func Version(linked string) string {
	if linked != "" {
		return linked
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Semver
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" && !pseudo.MatchString(v) {
		return strings.TrimPrefix(v, "v")
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return Semver
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return Semver + "+" + rev
}
