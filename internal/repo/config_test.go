package repo

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCapture_RepositoryConfigRunsNothing: a repository whose own config
// names a program for git to run on status (core.fsmonitor, which git
// runs on every status and refresh) gets its state read without that
// program running: awr reads a repository on an agent's word (a
// checkpoint over MCP), so a repository's config must not make it run a
// command.
func TestCapture_RepositoryConfigRunsNothing(t *testing.T) {
	t.Parallel()
	f := newCommitted(t, map[string]string{"a.txt": "one\n"})
	marker := filepath.Join(t.TempDir(), "ran")
	hook := filepath.Join(t.TempDir(), "fsmonitor.sh")
	require.NoError(t, os.WriteFile(hook, []byte("#!/bin/sh\ntouch '"+marker+"'\nexit 1\n"), 0o755))
	f.git("config", "core.fsmonitor", hook)
	f.write("a.txt", "two\n")
	requireReadRunsNothing(t, f, marker, "core.fsmonitor program")
}

// TestCapture_FilterDriverRunsNothing: a clean filter the repository's
// config and .gitattributes name (git runs it to hash a changed file, and
// on status to compare one) does not run when awr reads the repository.
func TestCapture_FilterDriverRunsNothing(t *testing.T) {
	t.Parallel()
	f := newCommitted(t, map[string]string{"a.txt": "one\n", ".gitattributes": "*.txt filter=evil\n"})
	marker := filepath.Join(t.TempDir(), "ran")
	hook := filepath.Join(t.TempDir(), "clean.sh")
	require.NoError(t, os.WriteFile(hook, []byte("#!/bin/sh\ntouch '"+marker+"'\ncat\n"), 0o755))
	f.git("config", "filter.evil.clean", hook)
	f.git("config", "filter.evil.process", hook)
	f.write("a.txt", "two\n")
	f.write("b.txt", "new\n")
	requireReadRunsNothing(t, f, marker, "clean filter")
}

// requireReadRunsNothing captures f's dirty state and compares with it,
// then requires that marker (the file the repository's program would
// make) does not exist: git did not run the repository's program (what).
func requireReadRunsNothing(t *testing.T, f *fixture, marker, what string) {
	t.Helper()
	st, err := Capture(context.Background(), f.dir)
	require.NoError(t, err)
	require.True(t, st.Dirty)
	Compare(context.Background(), f.dir, st)
	_, statErr := os.Stat(marker)
	require.True(t, os.IsNotExist(statErr), "git ran the repository's "+what)
}
