package pathcheck

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// tree is a project directory laid out to tempt every rule: its .awr with
// a log and a manifest, symbolic links into .awr and out of the project,
// a link loop, a FIFO, a hard link to the log and a subdirectory.
type tree struct {
	root, outside string
	state         os.FileInfo
	db, manifest  os.FileInfo
}

func newTree(t testing.TB, dir string) *tree {
	root := filepath.Join(dir, "p")
	outside := filepath.Join(dir, "outside")
	for _, d := range []string{filepath.Join(root, ".awr"), filepath.Join(root, "sub"), outside} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	for _, f := range []string{".awr/awr.db", ".awr/project.toml", "notes.md"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte("x\n"), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("x\n"), 0o644))
	for link, target := range map[string]string{
		"state": ".awr", "db": ".awr/awr.db", "out": outside, "loop": "loop", "sub/up": "..",
		"sub/state": "../.awr", "dangling": "nowhere/x", "etc": "/etc",
	} {
		require.NoError(t, os.Symlink(target, filepath.Join(root, link)))
	}
	require.NoError(t, os.Symlink(filepath.Join(root, ".awr/awr.db"), filepath.Join(outside, "link-db")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644))
	require.NoError(t, os.Link(filepath.Join(root, ".awr/awr.db"), filepath.Join(root, "hard")))
	tr := &tree{root: root, outside: outside}
	var err error
	tr.state, err = os.Stat(filepath.Join(root, ".awr"))
	require.NoError(t, err)
	tr.db, err = os.Stat(filepath.Join(root, ".awr/awr.db"))
	require.NoError(t, err)
	tr.manifest, err = os.Stat(filepath.Join(root, ".awr/project.toml"))
	require.NoError(t, err)
	return tr
}

// rawJoin joins without cleaning, as a shell passes a path to the kernel.
func rawJoin(root, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return root + "/" + path
}

// kernelAncestors lists what the kernel resolves dir, dir/.., dir/../..
// to, up to the file system's root: an oracle of where a path lies that
// shares no code with Resolve.
func kernelAncestors(dir string) []os.FileInfo {
	var out []os.FileInfo
	for i := 0; i < 64; i++ {
		fi, err := os.Stat(dir)
		if err != nil {
			return out
		}
		out = append(out, fi)
		if len(out) > 1 && os.SameFile(fi, out[len(out)-2]) {
			return out // "/" is its own parent
		}
		dir += "/.."
	}
	return out
}

// underKernel reports whether the directory dir (raw) is target or under
// it, as the kernel resolves it.
func underKernel(dir string, target os.FileInfo) bool {
	for _, fi := range kernelAncestors(dir) {
		if os.SameFile(fi, target) {
			return true
		}
	}
	return false
}

// rawDir is path's directory without cleaning ("a/link/../b" gives
// "a/link/..").
func rawDir(path string) string {
	i := strings.LastIndex(path, "/")
	switch {
	case i < 0:
		return "."
	case i == 0:
		return "/"
	}
	return path[:i]
}
