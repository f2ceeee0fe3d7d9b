package rig

import (
	"strings"
	"testing"

	"github.com/awr-dev/awr/projections"
)

// TestContextFile_BindLine: the report command a seat's context file
// gives is one client bind accepts: the bare id for claude, codex and
// gemini, HOST:ID for any other runtime.
func TestContextFile_BindLine(t *testing.T) {
	t.Parallel()
	for runtime, want := range map[string]string{
		"claude":  "--client claude --external-session 0e4c --work",
		"codex":   "--client codex --external-session 0e4c --work",
		"generic": "--client generic --external-session generic:0e4c --work",
	} {
		s := &projections.Seat{}
		s.Address, s.Work = "build@portal", "W-1"
		s.Runtime = runtime
		got := contextFile(s, "S-1", "0e4c", "/p", "", "packet")
		if !strings.Contains(got, want) {
			t.Errorf("%s: the context file says\n%s\nwant %q", runtime, got, want)
		}
	}
}
