package hosts

import (
	"testing"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
)

// TestHookCommand: the default hook command names the awr binary as one
// word, and ProgramWords, which decides whether a hook is awr's, reads
// that word back whole.
func TestHookCommand(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"/usr/local/bin/awr", "/opt/my tools/awr", "/home/o'brien/awr"} {
		line := HookCommand(bin, Claude)
		require.Equal(t, []string{bin, "client", "hook", "--client", "claude"}, ProgramWords(line), line)
	}
}

// TestTarget: a host and a scope as a person names them give the
// settings file SettingsPath gives; an unknown host or scope is
// InvalidInput.
func TestTarget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h, sc, path, err := Target(" Claude ", "", dir)
	require.NoError(t, err)
	require.Equal(t, Claude, h)
	require.Equal(t, Project, sc)
	want, err := SettingsPath(Claude, Project, dir, "", nil)
	require.NoError(t, err)
	require.Equal(t, want, path)
	for _, bad := range [][2]string{{"vim", "project"}, {"claude", "galaxy"}} {
		_, _, _, err := Target(bad[0], bad[1], dir)
		require.True(t, fault.Is(err, fault.InvalidInput), "%q: %v", bad, err)
	}
}
