package repo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCapture(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("Clean", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		st := f.capture()
		require.Equal(t, f.git("rev-parse", "HEAD"), st.Head)
		require.Equal(t, "main", st.Branch)
		require.False(t, st.Dirty)
		require.Empty(t, st.DirtyFingerprint)
		require.Empty(t, st.DirtyFiles)
		require.False(t, st.DirtyTruncated)
	})

	t.Run("TrackedEdit", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
		f.write("a.txt", "changed\n")
		st := f.capture()
		require.True(t, st.Dirty)
		require.True(t, strings.HasPrefix(st.DirtyFingerprint, "sha256:"))
		require.Len(t, st.DirtyFingerprint, len("sha256:")+64)
		require.Equal(t, []File{{Path: "a.txt", Status: StatusModified, Blob: f.git("hash-object", "a.txt")}}, st.DirtyFiles)
	})

	t.Run("StagedAdd", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		f.write("new.txt", "new\n")
		f.git("add", "new.txt")
		st := f.capture()
		// The blob is the one git add stored in the index.
		require.Equal(t, []File{{Path: "new.txt", Status: StatusAdded, Blob: f.git("rev-parse", ":new.txt")}}, st.DirtyFiles)
	})

	t.Run("StagedThenEdited", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		f.write("a.txt", "staged\n")
		f.git("add", "a.txt")
		f.write("a.txt", "worktree\n")
		st := f.capture()
		got := file(t, st.DirtyFiles, "a.txt")
		require.Equal(t, StatusModified, got.Status)
		require.Equal(t, f.git("hash-object", "a.txt"), got.Blob, "the working-tree content, not the index")
	})

	t.Run("Untracked", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n", ".gitignore": "*.log\n"})
		f.write("dir/deep/u.txt", "u\n")
		f.write("ignored.log", "noise\n")
		st := f.capture()
		require.Equal(t, []File{{Path: "dir/deep/u.txt", Status: StatusUntracked, Blob: f.git("hash-object", "dir/deep/u.txt")}}, st.DirtyFiles)
	})

	t.Run("Deleted", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
		f.remove("a.txt")
		f.git("rm", "-q", "b.txt")
		st := f.capture()
		require.Equal(t, []File{
			{Path: "a.txt", Status: StatusDeleted},
			{Path: "b.txt", Status: StatusDeleted},
		}, st.DirtyFiles)
	})

	t.Run("RemovedFromIndexKeptInWorktree", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		f.git("rm", "-q", "--cached", "a.txt")
		st := f.capture()
		require.Equal(t, []File{{Path: "a.txt", Status: StatusUntracked, Blob: f.git("hash-object", "a.txt")}}, st.DirtyFiles)
	})

	t.Run("Rename", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"old name.txt": "some content that stays\n"})
		f.git("mv", "old name.txt", "new name.txt")
		st := f.capture()
		require.Equal(t, []File{{Path: "new name.txt", Status: StatusRenamed, From: "old name.txt", Blob: f.git("hash-object", "new name.txt")}}, st.DirtyFiles)
	})

	t.Run("OddPaths", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"keep.txt": "k\n"})
		odd := []string{"with space.txt", "ünïcødé/日本.txt", "new\nline.txt", `"quoted`, "back\\slash", "tab\tin", "cr\r", "-dash"}
		for i, p := range odd {
			f.write(p, fmt.Sprintf("content %d\n", i))
		}
		st := f.capture()
		require.ElementsMatch(t, odd, paths(st.DirtyFiles))
		for i, p := range odd {
			got := file(t, st.DirtyFiles, p)
			require.Equal(t, StatusUntracked, got.Status)
			require.Equal(t, blobID("sha1", fmt.Appendf(nil, "content %d\n", i)), got.Blob, "blob of %q", p)
		}
	})

	t.Run("Symlink", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		require.NoError(t, os.Symlink("nowhere/at/all", f.path("link")))
		st := f.capture()
		f.git("add", "link")
		require.Equal(t, []File{{Path: "link", Status: StatusUntracked, Blob: f.git("rev-parse", ":link")}}, st.DirtyFiles)
	})

	t.Run("Typechange", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
		f.remove("a.txt")
		require.NoError(t, os.Symlink("b.txt", f.path("a.txt")))
		st := f.capture()
		require.Equal(t, []File{{Path: "a.txt", Status: StatusTypechange, Blob: blobID("sha1", []byte("b.txt"))}}, st.DirtyFiles)
	})

	t.Run("Conflicted", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "base\n"})
		f.git("checkout", "-q", "-b", "other")
		f.write("a.txt", "other\n")
		f.commit("other")
		f.git("checkout", "-q", "main")
		f.write("a.txt", "main\n")
		f.commit("main")
		_, err := defaultRunner.run(ctx, f.dir, nil, "-c", "user.name=T", "-c", "user.email=t", "merge", "-q", "other")
		require.Error(t, err, "the merge conflicts")
		st := f.capture()
		got := file(t, st.DirtyFiles, "a.txt")
		require.Equal(t, StatusConflicted, got.Status)
		require.Equal(t, f.git("hash-object", "a.txt"), got.Blob)
	})

	t.Run("Detached", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		head := f.git("rev-parse", "HEAD")
		f.git("checkout", "-q", "--detach")
		st := f.capture()
		require.Equal(t, head, st.Head)
		require.Empty(t, st.Branch)
	})

	t.Run("Unborn", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		st := f.capture()
		require.Empty(t, st.Head)
		require.Equal(t, "main", st.Branch)
		require.False(t, st.Dirty)
		require.Nil(t, st.DirtyFiles)
		f.write("first.txt", "1\n")
		st = f.capture()
		require.Empty(t, st.Head)
		require.Equal(t, []File{{Path: "first.txt", Status: StatusUntracked, Blob: f.git("hash-object", "first.txt")}}, st.DirtyFiles)
	})

	t.Run("SHA256", func(t *testing.T) {
		t.Parallel()
		f := &fixture{tb: t, dir: t.TempDir()}
		f.git("init", "-q", "-b", "main", "--object-format=sha256")
		f.write("a.txt", "a\n")
		head := f.commit("first")
		require.NoError(t, os.Symlink("a.txt", f.path("link")))
		f.write("a.txt", "b\n")
		st := f.capture()
		require.Equal(t, head, st.Head)
		require.Len(t, st.Head, 64)
		f.git("add", "link")
		require.Equal(t, []File{
			{Path: "a.txt", Status: StatusModified, Blob: f.git("hash-object", "a.txt")},
			{Path: "link", Status: StatusUntracked, Blob: f.git("rev-parse", ":link")},
		}, st.DirtyFiles)
		f.commit("second")
		c := Compare(ctx, f.dir, st)
		require.Equal(t, 1, c.CommitsBetween)
		require.Equal(t, []File{{Path: "a.txt", Status: StatusModified}, {Path: "link", Status: StatusAdded}}, c.FilesChanged)
	})

	t.Run("Subdirectory", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"sub/dir/a.txt": "a\n", "top.txt": "t\n"})
		f.write("top.txt", "changed\n")
		st, err := Capture(ctx, f.path("sub/dir"))
		require.NoError(t, err)
		require.Equal(t, []string{"top.txt"}, paths(st.DirtyFiles), "paths are relative to the work tree root")
	})

	t.Run("Submodule", func(t *testing.T) {
		t.Parallel()
		inner := newCommitted(t, map[string]string{"in.txt": "in\n"})
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		f.git("submodule", "-q", "add", inner.dir, "sub")
		f.commit("add submodule")
		sub := &fixture{tb: t, dir: f.path("sub")}
		sub.write("in.txt", "edited\n")
		nested := &fixture{tb: t, dir: f.path("nested")}
		require.NoError(t, os.MkdirAll(nested.dir, 0o755))
		nested.git("init", "-q", "-b", "main")
		nested.write("n.txt", "n\n")
		st := f.capture()
		got := file(t, st.DirtyFiles, "sub")
		require.Equal(t, StatusModified, got.Status)
		require.Empty(t, got.Blob, "a submodule has no blob")
		require.True(t, st.Dirty)
	})

	t.Run("MaxFiles", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		for i := range MaxFiles + 5 {
			f.write(fmt.Sprintf("u/%04d.txt", i), "x\n")
		}
		st := f.capture()
		require.Len(t, st.DirtyFiles, MaxFiles)
		require.True(t, st.DirtyTruncated)
		require.Equal(t, "u/0000.txt", st.DirtyFiles[0].Path)
		// The fingerprint covers a file past the cut.
		f.write(fmt.Sprintf("u/%04d.txt", MaxFiles+4), "y\n")
		again := f.capture()
		require.Equal(t, st.DirtyFiles, again.DirtyFiles)
		require.NotEqual(t, st.DirtyFingerprint, again.DirtyFingerprint)
	})

	t.Run("SecondEditChangesFingerprint", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		f.write("a.txt", "first edit\n")
		one := f.capture()
		require.Equal(t, one.DirtyFingerprint, f.capture().DirtyFingerprint, "capture is repeatable")
		f.write("a.txt", "second edit\n")
		two := f.capture()
		require.Equal(t, paths(one.DirtyFiles), paths(two.DirtyFiles))
		require.NotEqual(t, one.DirtyFingerprint, two.DirtyFingerprint)
	})

	t.Run("LeavesIndexAlone", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		index := filepath.Join(f.dir, ".git", "index")
		before, err := os.ReadFile(index)
		require.NoError(t, err)
		beforeInfo, err := os.Stat(index)
		require.NoError(t, err)
		// Rewrite a.txt with the same content: the index entry goes stale,
		// which a plain git status would refresh and write back.
		f.write("a.txt", "a\n")
		f.write("u.txt", "u\n")
		f.capture()
		after, err := os.ReadFile(index)
		require.NoError(t, err)
		afterInfo, err := os.Stat(index)
		require.NoError(t, err)
		require.Equal(t, before, after)
		require.Equal(t, beforeInfo.ModTime(), afterInfo.ModTime())
		require.NoFileExists(t, index+".lock")
	})

	t.Run("ErrNotRepo", func(t *testing.T) {
		t.Parallel()
		for _, dir := range []string{t.TempDir(), filepath.Join(t.TempDir(), "missing")} {
			_, err := Capture(ctx, dir)
			var u *Unverifiable
			require.ErrorAs(t, err, &u)
			require.ErrorIs(t, err, ErrNotRepo)
			require.True(t, strings.HasPrefix(err.Error(), "repo capture: "), err.Error())
		}
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		_, err := Capture(ctx, filepath.Join(f.dir, ".git"))
		require.ErrorIs(t, err, ErrNotRepo, "inside the git directory is not a work tree")
	})

	t.Run("ErrNoGit", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		_, err := missingGit(t).capture(ctx, f.dir, false)
		var u *Unverifiable
		require.ErrorAs(t, err, &u)
		require.ErrorIs(t, err, ErrNoGit)
		require.True(t, strings.HasPrefix(u.Reason, "repo capture: git not found"), u.Reason)
	})

	t.Run("GitFails", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		f.write("a.txt", "dirty\n")
		require.NoError(t, os.WriteFile(filepath.Join(f.dir, ".git", "index"), []byte("garbage"), 0o644))
		_, err := Capture(ctx, f.dir)
		var u *Unverifiable
		require.ErrorAs(t, err, &u)
		require.Nil(t, u.Err)
		require.Contains(t, u.Reason, "repo capture: git status: exit status 128: ")
		require.Contains(t, u.Reason, "index")
	})

	t.Run("Cancelled", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err := Capture(cctx, f.dir)
		require.ErrorIs(t, err, context.Canceled)
		var u *Unverifiable
		require.ErrorAs(t, err, &u)
	})
}

func TestState_JSON(t *testing.T) {
	t.Parallel()
	st := &State{
		Head: strings.Repeat("a", 40), Branch: "main", Dirty: true,
		DirtyFingerprint: "sha256:00", DirtyTruncated: true,
		DirtyFiles: []File{{Path: "n.txt", Status: StatusRenamed, Blob: strings.Repeat("b", 40), From: "o.txt"}, {Path: "d", Status: StatusDeleted}},
	}
	b, err := json.Marshal(st)
	require.NoError(t, err)
	require.JSONEq(t, `{"head":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","branch":"main","dirty":true,
		"dirty_fingerprint":"sha256:00","dirty_truncated":true,
		"dirty_files":[{"path":"n.txt","status":"renamed","blob":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb","from":"o.txt"},{"path":"d","status":"deleted"}]}`, string(b))
	b, err = json.Marshal(&State{})
	require.NoError(t, err)
	require.JSONEq(t, `{"head":"","dirty":false}`, string(b))
}

func TestStdinPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain.txt":     "plain.txt",
		"with space":    "with space",
		`a"b\c`:         `a"b\c`,
		`"lead`:         `"\"lead"`,
		"new\nline":     `"new\012line"`,
		"cr\r":          `"cr\015"`,
		"back\\\nslash": `"back\\\012slash"`,
		"ünï":           "ünï",
	} {
		require.Equal(t, want, stdinPath(in), "%q", in)
	}
}

func TestParseStatus_Unreadable(t *testing.T) {
	t.Parallel()
	for _, out := range []string{"1 M.\x00", "2 R. N... 100644 100644 100644 a b R100 new\x00", "x what\x00"} {
		_, _, err := parseStatus([]byte(out))
		require.Error(t, err, "%q", out)
	}
}

func TestUnverifiable(t *testing.T) {
	t.Parallel()
	var err error = &Unverifiable{Reason: "repo capture: not a git work tree: /x", Err: ErrNotRepo}
	require.EqualError(t, err, "repo capture: not a git work tree: /x")
	require.True(t, errors.Is(err, ErrNotRepo))
	require.False(t, errors.Is(err, ErrNoGit))
}

// TestCapture_OutsideAnyRepo: a directory with no .git (or HEAD) in it or
// above it is ErrNotRepo without running git (a git that cannot be found
// is not reported); a path that reaches a work tree through a symbolic
// link, a .git above, or GIT_DIR in the environment still goes to git.
func TestCapture_OutsideAnyRepo(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	require.True(t, outsideAnyRepo(dir), "the test needs a temporary directory with no .git or HEAD above it")
	_, err := missingGit(t).capture(ctx, dir, false)
	require.ErrorIs(t, err, ErrNotRepo)
	require.NotErrorIs(t, err, ErrNoGit, "no git ran")
	require.Contains(t, err.Error(), "no .git in it or in any parent directory")

	f := newCommitted(t, map[string]string{"a.txt": "a\n"})
	sub := filepath.Join(f.dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	require.False(t, outsideAnyRepo(sub), ".git above")
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(sub, link))
	require.False(t, outsideAnyRepo(link), "a work tree reached through a symbolic link")
	st, err := Capture(ctx, link)
	require.NoError(t, err)
	require.NotEmpty(t, st.Head)

	t.Setenv("GIT_DIR", filepath.Join(f.dir, ".git"))
	require.False(t, outsideAnyRepo(dir), "GIT_DIR names a repository")
	_, err = missingGit(t).capture(ctx, dir, false)
	require.ErrorIs(t, err, ErrNoGit, "with GIT_DIR set, git decides")
}
