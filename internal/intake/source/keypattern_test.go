package source

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKeyPattern: a source's key_pattern recognizes its own keys
// (spec-kit tasks keyed TASK12) and reports, with the line, a key that
// does not match it (a beads issue outside the project's prefix).
func TestKeyPattern(t *testing.T) {
	t.Run("spec-kit keys of the team's own form", func(t *testing.T) {
		content := "## Phase 1: Setup\n- [ ] TASK12 Create the layout\n- [ ] T001 Not a key of this register\n"
		res := Parse(SpecKitTasks, "tasks.md", []byte(content), Options{KeyPattern: `TASK[0-9]+`})
		require.Len(t, res.Items, 1)
		require.Equal(t, "TASK12", res.Items[0].Key)
		require.Len(t, res.Issues, 1)
		require.Equal(t, IssueMissingKey, res.Issues[0].Code)
		require.Equal(t, 3, res.Issues[0].Line)
	})
	t.Run("beads keys outside the pattern", func(t *testing.T) {
		content := "{\"id\":\"bd-a1b2\",\"title\":\"a\",\"status\":\"open\"}\n{\"id\":\"xx-9\",\"title\":\"b\",\"status\":\"open\"}\n"
		res := Parse(BeadsJSONL, ".beads/issues.jsonl", []byte(content), Options{KeyPattern: `bd-[0-9a-z]+`})
		require.Len(t, res.Items, 2)
		require.Len(t, res.Issues, 1)
		require.Equal(t, IssueMissingKey, res.Issues[0].Code)
		require.Equal(t, "xx-9", res.Issues[0].Key)
		require.Equal(t, 2, res.Issues[0].Line)
	})
	t.Run("no pattern: the format's built-in keys", func(t *testing.T) {
		res := Parse(BeadsJSONL, ".beads/issues.jsonl", []byte("{\"id\":\"xx-9\",\"title\":\"b\",\"status\":\"open\"}\n"), Options{})
		require.Empty(t, res.Issues)
	})
}
