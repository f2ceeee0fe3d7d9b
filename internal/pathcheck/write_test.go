package pathcheck_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/awr-dev/awr/internal/pathcheck"
	"github.com/stretchr/testify/require"
)

// TestWriteWith: the file appears whole with its mode; without replace an
// existing file is refused (RuleExists) and kept; a failed write leaves
// the old file and no temporary file behind.
func TestWriteWith(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	require.NoError(t, pathcheck.WriteFile(path, []byte("one\n"), 0o640, false))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "one\n", string(b))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), fi.Mode().Perm())

	err = pathcheck.WriteFile(path, []byte("two\n"), 0o644, false)
	require.Equal(t, pathcheck.RuleExists, pathcheck.RuleOf(err), "%v", err)

	boom := errors.New("boom")
	err = pathcheck.WriteWith(path, 0o644, true, func(w io.Writer) error {
		w.Write([]byte("half"))
		return boom
	})
	require.ErrorIs(t, err, boom)
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "one\n", string(b), "a failed write changed the file")

	require.NoError(t, pathcheck.WriteFile(path, []byte("three\n"), 0o644, true))
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "three\n", string(b))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "a temporary file was left behind")
}
