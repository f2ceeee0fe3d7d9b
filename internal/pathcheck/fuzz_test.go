package pathcheck

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// seeds are paths that tried to get past a rule once, or might.
var seeds = []string{
	".awr/awr.db", ".awr", ".awr/", "./.awr/project.toml", "state/awr.db", "db", "sub/state/x", "sub/up/.awr/awr.db",
	"sub/../.awr/x", "out/../p/.awr/awr.db", "out/link-db", "../p/.awr/awr.db", "../x", "../../../../etc/passwd",
	"/etc/passwd", "/dev/zero", "etc/passwd", "loop", "loop/x", "fifo", "hard", "dangling", "notes.md", "new.md",
	"sub/new.md", "out/new.md", "sub//up//.awr", ".awr/../new.md", "sub/up/sub/up/.awr/hooks.log", "", ".", "..", "/",
	"a\x00b", ".AWR/awr.db", "sub/./state/../state/awr.db",
}

// seededTree adds every seed path to f's corpus and makes the tree the
// paths are tried in.
func seededTree(f *testing.F) *tree {
	f.Helper()
	for _, s := range seeds {
		f.Add(s)
	}
	return newTree(f, f.TempDir())
}

// FuzzOutput: an output Output accepts never lies in .awr (its directory,
// as the kernel resolves it, is not .awr nor under it), and is missing or
// a regular file (existing only with force).
func FuzzOutput(f *testing.F) {
	for _, s := range seeds {
		f.Add(s, false)
		f.Add(s, true)
	}
	dir := f.TempDir()
	tr := newTree(f, dir)
	f.Fuzz(func(t *testing.T, path string, force bool) {
		raw := rawJoin(tr.root, path)
		if Output(raw, force) != nil {
			return
		}
		require.False(t, underKernel(rawDir(raw), tr.state), "accepted %q: its directory is in .awr", path)
		fi, err := os.Lstat(raw)
		if err == nil {
			require.True(t, fi.Mode().IsRegular(), "accepted %q: %s", path, fi.Mode())
			// (A hard link to the log may be replaced: the rename
			// replaces the name, never the log's content.)
			require.True(t, force, "accepted %q: exists without force", path)
		}
	})
}

// FuzzAppend: a file Append opens is a regular file with one link, not
// awr's log or manifest, and not in .awr; it never follows a symbolic
// link at its last component. Paths stay in the test's directories (no
// absolute path, no ".."), since an accepted one is created.
func FuzzAppend(f *testing.F) {
	tr := seededTree(f)
	f.Fuzz(func(t *testing.T, path string) {
		if filepath.IsAbs(path) || strings.Contains(path, "..") {
			return
		}
		raw := rawJoin(tr.root, path)
		lfi, lerr := os.Lstat(raw)
		file, err := Append(raw, 0o644, false)
		if err != nil {
			return
		}
		defer file.Close()
		fi, err := file.Stat()
		require.NoError(t, err)
		require.True(t, fi.Mode().IsRegular())
		require.False(t, os.SameFile(fi, tr.db) || os.SameFile(fi, tr.manifest), "accepted %q: awr's own file", path)
		require.False(t, underKernel(rawDir(raw), tr.state), "accepted %q: in .awr", path)
		if lerr == nil {
			require.Zero(t, lfi.Mode()&os.ModeSymlink, "accepted %q: a symbolic link", path)
		}
	})
}

// FuzzInside: a path Inside accepts lies, as the kernel resolves its
// longest existing prefix, in the project.
func FuzzInside(f *testing.F) {
	tr := seededTree(f)
	realRoot, err := filepath.EvalSymlinks(tr.root)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, path string) {
		if _, err := Inside(tr.root, path); err != nil {
			return
		}
		for p := rawJoin(tr.root, path); p != "/" && p != "."; p = rawDir(p) {
			if where, ok := kernelPath(p); ok {
				require.True(t, within(realRoot, where), "accepted %q: %s is %s, outside the project", path, p, where)
				return
			}
		}
	})
}

// kernelPath is where the kernel resolves path to (through an O_PATH
// descriptor and /proc/self/fd), false when it does not exist.
func kernelPath(path string) (string, bool) {
	fd, err := syscall.Open(path, oPath|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "", false
	}
	defer syscall.Close(fd)
	where, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	return where, err == nil
}

// FuzzWorkDir: the working directory WorkDir returns for a path it
// accepts (the project is in no git repository here) is a directory in
// the project.
func FuzzWorkDir(f *testing.F) {
	tr := seededTree(f)
	rootInfo, err := os.Stat(tr.root)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, path string) {
		raw, err := WorkDir(tr.root, path, true)
		if err != nil {
			return
		}
		fi, err := os.Stat(raw)
		require.NoError(t, err, "accepted %q", path)
		require.True(t, fi.IsDir())
		require.True(t, underKernel(raw, rootInfo), "accepted %q: outside the project", path)
	})
}

// FuzzShown: a hint shows a path only when it is inside the project and
// outside .awr.
func FuzzShown(f *testing.F) {
	tr := seededTree(f)
	f.Fuzz(func(t *testing.T, path string) {
		got := Shown(tr.root, path, "FILE")
		if got == "FILE" {
			return
		}
		_, err := Inside(tr.root, got)
		require.NoError(t, err, "shown %q for %q", got, path)
		require.False(t, InState(rawJoin(tr.root, got)), "shown %q for %q", got, path)
	})
}

// FuzzReader: a bounded read returns at most max bytes, all of the input
// when it fits, and RuleTooLarge exactly when it does not.
func FuzzReader(f *testing.F) {
	f.Add([]byte("abc"), int64(3))
	f.Add([]byte("abcd"), int64(3))
	f.Add([]byte{}, int64(0))
	f.Fuzz(func(t *testing.T, data []byte, max int64) {
		if max < 0 {
			max = -max
		}
		max %= 1 << 16
		b, err := ReadAll(context.Background(), &slowReader{data}, max, "x")
		require.LessOrEqual(t, int64(len(b)), max)
		if int64(len(data)) > max {
			require.Equal(t, RuleTooLarge, RuleOf(err))
			return
		}
		require.NoError(t, err)
		require.True(t, bytes.Equal(b, data))
	})
}

// slowReader returns its data a few bytes at a time.
type slowReader struct{ data []byte }

func (r *slowReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 7)], r.data)
	r.data = r.data[n:]
	return n, nil
}

// oPath is Linux's O_PATH (a descriptor that only names a file), which
// package syscall does not export.
const oPath = 0x200000
