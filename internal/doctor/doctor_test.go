package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRank(t *testing.T) {
	fs := []Finding{
		{Code: "a", Severity: SeverityInfo},
		{Code: "b", Severity: SeverityWarning},
		{Code: "c", Severity: SeverityError},
		{Code: "d", Severity: SeverityWarning},
	}
	ok, counts := Rank(fs)
	require.False(t, ok)
	require.Equal(t, map[string]int{SeverityError: 1, SeverityWarning: 2, SeverityInfo: 1}, counts)
	var codes []string
	for _, f := range fs {
		codes = append(codes, f.Code)
	}
	require.Equal(t, []string{"c", "b", "d", "a"}, codes, "worst first, stable within a severity")

	ok, counts = Rank([]Finding{{Severity: SeverityInfo}})
	require.True(t, ok, "notes alone leave the project ok")
	require.Equal(t, map[string]int{SeverityInfo: 1}, counts)
	ok, counts = Rank(nil)
	require.True(t, ok)
	require.Empty(t, counts)
}

func TestHooksRan(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hooks.log.ran")
	require.Empty(t, HooksRan(context.Background(), path, 1<<20), "no log: nothing ran")

	var b strings.Builder
	b.WriteString("2026-01-01T00:00:00Z claude session_start\n")
	// Older lines beyond the tail the doctor reads are not seen.
	for b.Len() < ranTail {
		b.WriteString("not a line of the log\n")
	}
	b.WriteString("2026-01-02T00:00:00Z codex session_start\n")
	b.WriteString("garbage codex stop\n")
	b.WriteString("2026-01-03T00:00:00Z codex pre_compact\n")
	b.WriteString("2026-01-04T00:00:00Z gemini\n")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))

	last := HooksRan(context.Background(), path, 1<<20)
	require.Equal(t, map[string]*Hook{
		"codex": {Client: "codex", LastRanAt: "2026-01-03T00:00:00Z", LastEvent: "pre_compact"},
	}, last)
}

// TestPermissions: a project directory others may write is an error
// whose repair names it as one shell word (the project's path here holds
// a space).
func TestPermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my project")
	awr := filepath.Join(dir, ".awr")
	require.NoError(t, os.MkdirAll(awr, 0o700))
	var got []Finding
	add := func(f Finding) { got = append(got, f) }
	Permissions(dir, add)
	require.Empty(t, got, "a private directory")

	require.NoError(t, os.Chmod(awr, 0o777))
	Permissions(dir, add)
	require.Len(t, got, 1)
	require.Equal(t, FindingPermissions, got[0].Code)
	require.Equal(t, SeverityError, got[0].Severity)
	require.Equal(t, awr, got[0].Subject)
	require.Equal(t, "chmod o-w '"+awr+"'", got[0].Repair)
}
