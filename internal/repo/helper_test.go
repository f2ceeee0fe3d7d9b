package repo

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMain keeps the machine's git configuration out of every git process,
// the package's and the fixtures', before any test runs in parallel.
func TestMain(m *testing.M) {
	os.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	os.Exit(m.Run())
}

// fixture is a real repository in a temporary directory.
type fixture struct {
	tb  testing.TB
	dir string
}

// newFixture makes an empty repository (no commit) on branch main.
func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("git not installed")
	}
	f := &fixture{tb: tb, dir: tb.TempDir()}
	f.git("init", "-q", "-b", "main")
	return f
}

// newCommitted makes a repository with one commit holding the given files.
func newCommitted(tb testing.TB, files map[string]string) *fixture {
	tb.Helper()
	f := newFixture(tb)
	for p, c := range files {
		f.write(p, c)
	}
	f.commit("initial")
	return f
}

// git runs git in the fixture and returns its trimmed output.
func (f *fixture) git(args ...string) string {
	f.tb.Helper()
	cmd := exec.Command("git", append([]string{"-C", f.dir, "-c", "core.quotepath=off", "-c", "protocol.file.allow=always"}, args...)...)
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test",
		"LC_ALL=C")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(f.tb, err, "git %s: %s", strings.Join(args, " "), stderr.String())
	return strings.TrimSpace(string(out))
}

func (f *fixture) path(p string) string { return filepath.Join(f.dir, filepath.FromSlash(p)) }

func (f *fixture) write(p, content string) {
	f.tb.Helper()
	require.NoError(f.tb, os.MkdirAll(filepath.Dir(f.path(p)), 0o755))
	require.NoError(f.tb, os.WriteFile(f.path(p), []byte(content), 0o644))
}

func (f *fixture) remove(p string) {
	f.tb.Helper()
	require.NoError(f.tb, os.Remove(f.path(p)))
}

// commit stages everything and commits it, returning the new head.
func (f *fixture) commit(msg string) string {
	f.tb.Helper()
	f.git("add", "-A")
	f.git("commit", "-q", "--allow-empty", "-m", msg)
	return f.git("rev-parse", "HEAD")
}

func (f *fixture) capture() *State {
	f.tb.Helper()
	st, err := Capture(context.Background(), f.dir)
	require.NoError(f.tb, err)
	return st
}

// file finds path among files.
func file(tb testing.TB, files []File, path string) File {
	tb.Helper()
	for _, fl := range files {
		if fl.Path == path {
			return fl
		}
	}
	require.Failf(tb, "file not listed", "%q not in %v", path, files)
	return File{}
}

func paths(files []File) []string {
	out := []string{}
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}

// missingGit is a runner whose git binary does not exist.
func missingGit(tb testing.TB) runner {
	return runner{bin: filepath.Join(tb.TempDir(), "no-such-git")}
}
