// Package buildinfo says which version of awr is running, the same way for
// every binary built from this module (awr, awr-mcp).
package buildinfo

import "runtime/debug"

// Version returns linked (set with -ldflags "-X main.version=..." by
// release builds) when it is not empty, else the module version from the
// build info, else "dev".
func Version(linked string) string {
	if linked != "" {
		return linked
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
