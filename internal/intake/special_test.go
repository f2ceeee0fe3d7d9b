package intake_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/intake/source"
	"github.com/stretchr/testify/require"
)

// TestRead_FIFOIsRefusedBeforeOpening: a FIFO as a source is reported as
// not a regular file at once; opening it would block until a writer came
// (issue #13, row 8).
func TestRead_FIFOIsRefusedBeforeOpening(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "f.md"), 0o600))
	done := make(chan struct{})
	var issue string
	go func() {
		defer close(done)
		si, missing := intake.Read(dir, intake.ManifestSource{Path: "f.md", Adapter: source.MarkdownChecklist, Role: intake.RoleTasks})
		require.False(t, missing)
		require.Len(t, si.Issues, 1)
		issue = si.Issues[0].Message
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("reading a FIFO source blocked")
	}
	require.Contains(t, issue, "not a regular file")
}

// TestRead_LinkToSecretIsRefused: a source that links to a secret-looking
// file is reported without its content (issue #13, row 6).
func TestRead_LinkToSecretIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".env"), []byte("TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789\n"), 0o600))
	require.NoError(t, os.Symlink(".env", filepath.Join(dir, "todo.md")))
	si, missing := intake.Read(dir, intake.ManifestSource{Path: "todo.md", Adapter: source.MarkdownChecklist, Role: intake.RoleTasks})
	require.False(t, missing)
	require.Len(t, si.Issues, 1)
	require.Contains(t, si.Issues[0].Message, "looks like a secret")
	require.NotContains(t, si.Issues[0].Message, "ghp_")
	require.Empty(t, si.Items)
}

// TestRead_SecretsInSourcesAreWithheld: a token in a task's title or an
// acceptance criterion never enters the log; an issue names where it was
// and its kind (issue #13, row 16).
func TestRead_SecretsInSourcesAreWithheld(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	content := "# TODO\n\n- [ ] W-1: Rotate ghp_abcdefghijklmnopqrstuvwxyz0123456789 today\n- [ ] W-2: Plain work\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "TODO.md"), []byte(content), 0o600))
	si, missing := intake.Read(dir, intake.ManifestSource{Path: "TODO.md", Adapter: source.MarkdownChecklist, Role: intake.RoleTasks})
	require.False(t, missing)
	require.Len(t, si.Items, 2)
	require.NotContains(t, si.Items[0].Title, "ghp_")
	require.Contains(t, si.Items[0].Title, "[withheld: ")
	require.Equal(t, "Plain work", si.Items[1].Title)
	var found bool
	for _, is := range si.Issues {
		require.NotContains(t, is.Message, "ghp_")
		if is.Code == intake.IssueSecretWithheld {
			found = true
			require.Equal(t, "TODO.md", is.Path)
			require.Equal(t, 3, is.Line)
			require.Equal(t, "W-1", is.Key)
		}
	}
	require.True(t, found, "%+v", si.Issues)
}

// TestReadManifest_NewerVersionIsRefused: a manifest of a version this awr
// does not know is refused, not read as if it were its own (issue #13,
// row 15).
func TestReadManifest_NewerVersionIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".awr"), 0o700))
	require.NoError(t, os.WriteFile(intake.ManifestPath(dir), []byte("version = 99\nname = \"x\"\n"), 0o600))
	_, _, err := intake.ReadManifest(dir)
	require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
	require.Equal(t, "version", fault.As(err).Details["key"])
}
