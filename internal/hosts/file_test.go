package hosts

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
)

func TestWriteAtomic(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		path := filepath.Join(dir, ".codex", "hooks.json")
		require.NoError(t, WriteAtomic(path, []byte("{}\n")), "missing directories are created")
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, "{}\n", string(b))
		fi, err := os.Stat(path)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o644), fi.Mode().Perm())

		require.NoError(t, os.Chmod(path, 0o600))
		require.NoError(t, WriteAtomic(path, []byte(`{"hooks":{}}`)))
		fi, err = os.Stat(path)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "an existing file keeps its permissions")
		entries, err := os.ReadDir(filepath.Dir(path))
		require.NoError(t, err)
		require.Len(t, entries, 1, "no temporary file is left behind")
	})
	t.Run("Symlink", func(t *testing.T) {
		t.Parallel()
		if runtime.GOOS == "windows" {
			t.Skip("symbolic links need privileges on Windows")
		}
		dir := t.TempDir()
		real := filepath.Join(dir, "dotfiles", "settings.json")
		require.NoError(t, os.MkdirAll(filepath.Dir(real), 0o755))
		require.NoError(t, os.WriteFile(real, []byte("{}"), 0o644))
		link := filepath.Join(dir, "settings.json")
		require.NoError(t, os.Symlink(real, link))
		require.NoError(t, WriteAtomic(link, []byte("new")))
		fi, err := os.Lstat(link)
		require.NoError(t, err)
		require.NotZero(t, fi.Mode()&os.ModeSymlink, "the link is kept")
		b, err := os.ReadFile(real)
		require.NoError(t, err)
		require.Equal(t, "new", string(b))
	})
	t.Run("ErrNotRegular", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		err := WriteAtomic(dir, []byte("x"))
		require.Equal(t, fault.InvalidInput, fault.CodeOf(err))
	})
}

func TestReadSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	b, fp, err := ReadSettings(path)
	require.NoError(t, err)
	require.Nil(t, b)
	require.Equal(t, Absent, fp)

	require.NoError(t, os.WriteFile(path, []byte("{}"), 0o644))
	b, fp, err = ReadSettings(path)
	require.NoError(t, err)
	require.Equal(t, "{}", string(b))
	require.Equal(t, Fingerprint([]byte("{}"), true), fp)
	require.NotEqual(t, Fingerprint(nil, true), Fingerprint(nil, false), "an empty file is not an absent one")

	_, _, err = ReadSettings(dir)
	require.Equal(t, fault.InvalidInput, fault.CodeOf(err))

	big := filepath.Join(dir, "big.json")
	require.NoError(t, os.WriteFile(big, make([]byte, MaxSettings+1), 0o644))
	_, _, err = ReadSettings(big)
	require.Equal(t, fault.InvalidInput, fault.CodeOf(err))
}

// TestUnchanged: a write after a preview is refused when the file moved in
// between, created, edited or removed.
func TestUnchanged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "hooks.json")
	_, seen, err := ReadSettings(path)
	require.NoError(t, err)
	require.NoError(t, Unchanged(path, seen))

	require.NoError(t, os.WriteFile(path, []byte("{}"), 0o644))
	err = Unchanged(path, seen)
	require.Equal(t, fault.SourceStale, fault.CodeOf(err))
	fe := fault.As(err)
	require.Equal(t, Absent, fe.Details["expected"])
	require.Empty(t, fe.Hint, "the caller's preview is the hint (project.ClientInstall)")

	_, seen, err = ReadSettings(path)
	require.NoError(t, err)
	require.NoError(t, Unchanged(path, seen))
	require.NoError(t, os.WriteFile(path, []byte(`{"a":1}`), 0o644))
	require.Equal(t, fault.SourceStale, fault.CodeOf(Unchanged(path, seen)))
	require.NoError(t, os.Remove(path))
	require.Equal(t, fault.SourceStale, fault.CodeOf(Unchanged(path, seen)))
}
