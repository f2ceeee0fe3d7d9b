package repo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// decoded is s as a record holds it: through JSON, without what only Capture
// knows.
func decoded(tb testing.TB, s *State) *State {
	tb.Helper()
	b, err := json.Marshal(s)
	require.NoError(tb, err)
	var out State
	require.NoError(tb, json.Unmarshal(b, &out))
	return &out
}

func TestCompare(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("Unchanged", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		f.write("a.txt", "dirty\n")
		rec := decoded(t, f.capture())
		c := Compare(ctx, f.dir, rec)
		require.Equal(t, Comparison{Status: CompareUnchanged, RecordedHead: rec.Head, CurrentHead: rec.Head}, c)
	})

	t.Run("SameFilesDifferentEdit", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
		f.write("a.txt", "first edit\n")
		f.write("b.txt", "stays\n")
		rec := decoded(t, f.capture())
		f.write("a.txt", "second edit\n")
		c := Compare(ctx, f.dir, rec)
		require.Equal(t, CompareChanged, c.Status)
		require.True(t, c.WorktreeChanged)
		require.False(t, c.HeadMoved)
		require.Equal(t, []File{{Path: "a.txt", Status: StatusModified, Blob: f.git("hash-object", "a.txt")}}, c.FilesChanged)
	})

	t.Run("CommitAfterCapture", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
		rec := decoded(t, f.capture())
		f.write("b.txt", "b changed\n")
		f.write("c.txt", "c\n")
		head := f.commit("change b, add c")
		c := Compare(ctx, f.dir, rec)
		require.Equal(t, Comparison{
			Status:         CompareChanged,
			RecordedHead:   rec.Head,
			CurrentHead:    head,
			HeadMoved:      true,
			CommitsBetween: 1,
			Commits:        []Commit{{Sha: head[:12], Author: "Test", Subject: "change b, add c"}},
			FilesChanged:   []File{{Path: "b.txt", Status: StatusModified}, {Path: "c.txt", Status: StatusAdded}},
		}, c)
	})

	t.Run("DirtyWorkCommitted", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		f.write("a.txt", "edited\n")
		f.write("new.txt", "new\n")
		rec := decoded(t, f.capture())
		f.commit("commit the work")
		c := Compare(ctx, f.dir, rec)
		require.True(t, c.HeadMoved)
		require.True(t, c.WorktreeChanged, "dirty then, clean now")
		require.Equal(t, []File{{Path: "a.txt", Status: StatusModified}, {Path: "new.txt", Status: StatusAdded}}, c.FilesChanged)
	})

	t.Run("ManyCommits", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		rec := f.capture()
		for i := range 25 {
			f.write("a.txt", fmt.Sprintf("%d\n", i))
			f.commit(fmt.Sprintf("commit %d", i))
		}
		c := Compare(ctx, f.dir, rec)
		require.Equal(t, 25, c.CommitsBetween)
		require.Len(t, c.Commits, MaxCommits)
		require.Equal(t, "commit 24", c.Commits[0].Subject, "newest first")
		require.Equal(t, "commit 5", c.Commits[MaxCommits-1].Subject)
		require.False(t, c.HeadRewritten)
	})

	t.Run("ResetHard", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		first := f.git("rev-parse", "HEAD")
		f.write("a.txt", "two\n")
		f.commit("two")
		rec := decoded(t, f.capture())
		f.git("reset", "-q", "--hard", first)
		c := Compare(ctx, f.dir, rec)
		require.Equal(t, CompareChanged, c.Status)
		require.True(t, c.HeadMoved)
		require.True(t, c.HeadRewritten)
		require.False(t, c.HeadUnknown)
		require.Zero(t, c.CommitsBetween)
		require.Empty(t, c.Commits)
		require.Equal(t, []File{{Path: "a.txt", Status: StatusModified}}, c.FilesChanged)
	})

	t.Run("Rebased", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		f.write("a.txt", "two\n")
		f.commit("two")
		rec := f.capture()
		f.write("a.txt", "amended\n")
		f.git("commit", "-q", "-a", "--amend", "-m", "two amended")
		c := Compare(ctx, f.dir, rec)
		require.True(t, c.HeadRewritten)
		require.Zero(t, c.CommitsBetween)
	})

	t.Run("OrphanBranch", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
		rec := decoded(t, f.capture())
		f.git("checkout", "-q", "--orphan", "fresh")
		c := Compare(ctx, f.dir, rec)
		require.Equal(t, CompareChanged, c.Status)
		require.True(t, c.HeadRewritten, "an unborn orphan branch")
		require.True(t, c.BranchChanged)
		require.Empty(t, c.CurrentHead)
		// The recorded tree is gone from HEAD and its files are staged as
		// new: present in both, so modified.
		require.Equal(t, []string{"a.txt", "b.txt"}, paths(c.FilesChanged))
		require.Equal(t, StatusModified, c.FilesChanged[0].Status)

		f.git("rm", "-q", "-r", "--cached", ".")
		f.remove("a.txt")
		f.write("b.txt", "other history\n")
		f.commit("orphan root")
		c = Compare(ctx, f.dir, rec)
		require.True(t, c.HeadRewritten, "an orphan branch with a commit")
		require.Zero(t, c.CommitsBetween)
		require.Equal(t, []File{{Path: "a.txt", Status: StatusDeleted}, {Path: "b.txt", Status: StatusModified}}, c.FilesChanged)
	})

	t.Run("BranchChanged", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		rec := f.capture()
		f.git("checkout", "-q", "-b", "topic")
		c := Compare(ctx, f.dir, rec)
		require.Equal(t, CompareChanged, c.Status)
		require.True(t, c.BranchChanged)
		require.False(t, c.HeadMoved)
		require.Empty(t, c.FilesChanged)
	})

	t.Run("FromUnborn", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		f.write("a.txt", "a\n")
		rec := decoded(t, f.capture())
		head := f.commit("first")
		c := Compare(ctx, f.dir, rec)
		require.True(t, c.HeadMoved)
		require.False(t, c.HeadRewritten)
		require.Equal(t, 1, c.CommitsBetween)
		require.Equal(t, []Commit{{Sha: head[:12], Author: "Test", Subject: "first"}}, c.Commits)
		require.Equal(t, []File{{Path: "a.txt", Status: StatusAdded}}, c.FilesChanged)
	})

	t.Run("UnknownHead", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		rec := decoded(t, f.capture())
		rec.Head = strings.Repeat("1", 40)
		rec.DirtyFiles = []File{{Path: "gone.txt", Status: StatusUntracked, Blob: strings.Repeat("2", 40)}}
		rec.DirtyFingerprint = fingerprint(rec.DirtyFiles)
		c := Compare(ctx, f.dir, rec)
		require.Equal(t, CompareChanged, c.Status)
		require.True(t, c.HeadMoved)
		require.True(t, c.HeadRewritten)
		require.True(t, c.HeadUnknown)
		require.Zero(t, c.CommitsBetween)
		require.Contains(t, c.Reason, "recorded head 1111111111111111111111111111111111111111 is not in the repository")
		require.Equal(t, []File{{Path: "gone.txt", Status: StatusDeleted}}, c.FilesChanged, "only the dirty side")
	})

	t.Run("InvalidHead", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		c := Compare(ctx, f.dir, &State{Head: "--output=/tmp/x"})
		require.Equal(t, CompareUnverifiable, c.Status)
		require.Contains(t, c.Reason, "repo compare: invalid commit id")
	})

	t.Run("NotRepo", func(t *testing.T) {
		t.Parallel()
		c := Compare(ctx, t.TempDir(), &State{Head: strings.Repeat("a", 40)})
		require.Equal(t, CompareUnverifiable, c.Status)
		require.True(t, strings.HasPrefix(c.Reason, "repo capture: not a git work tree"), c.Reason)
		require.Equal(t, strings.Repeat("a", 40), c.RecordedHead)
	})

	t.Run("NoGit", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		rec := f.capture()
		c := missingGit(t).compare(ctx, f.dir, rec)
		require.Equal(t, CompareUnverifiable, c.Status)
		require.Contains(t, c.Reason, "git not found")

		// A comparison that needs git for the history is unverifiable too.
		f.commit("moved")
		now := f.capture()
		c = missingGit(t).compareWith(ctx, f.dir, rec, now)
		require.Equal(t, CompareUnverifiable, c.Status)
		require.Contains(t, c.Reason, "repo compare: git not found")
	})

	t.Run("NilRecorded", func(t *testing.T) {
		t.Parallel()
		c := Compare(ctx, t.TempDir(), nil)
		require.Equal(t, CompareUnverifiable, c.Status)
		require.NotEmpty(t, c.Reason)
	})

	t.Run("CompareWithOneCapture", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		old := decoded(t, f.capture())
		f.write("a.txt", "b\n")
		mid := decoded(t, f.capture())
		f.commit("b")
		now := f.capture()
		require.Equal(t, 1, CompareWith(ctx, f.dir, old, now).CommitsBetween)
		c := CompareWith(ctx, f.dir, mid, now)
		require.True(t, c.WorktreeChanged)
		require.Equal(t, []File{{Path: "a.txt", Status: StatusModified}}, c.FilesChanged)
		// A decoded current state works too.
		require.Equal(t, c, CompareWith(ctx, f.dir, mid, decoded(t, now)))
	})

	t.Run("JSON", func(t *testing.T) {
		t.Parallel()
		b, err := json.Marshal(Comparison{Status: CompareUnchanged})
		require.NoError(t, err)
		require.JSONEq(t, `{"status":"unchanged","head_moved":false,"head_rewritten":false,"commits_between":0,"branch_changed":false,"worktree_changed":false}`, string(b))
	})
}

func TestChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("CommitsAndDirty", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"keep.txt": "k\n", "edit.txt": "e\n", "drop.txt": "d\n", "move me.txt": "a long enough body to be detected as the same file\n", "dirty.txt": "x\n"})
		f.write("dirty.txt", "dirty then\n")
		f.write("scratch.txt", "scratch\n")
		from := decoded(t, f.capture())

		f.write("edit.txt", "edited\n")
		f.remove("drop.txt")
		f.git("mv", "move me.txt", "moved ü.txt")
		f.git("add", "-A", "edit.txt", "drop.txt")
		f.git("commit", "-q", "-m", "edit, drop, move")
		f.write("dirty.txt", "dirty now\n")
		f.remove("scratch.txt")
		f.write("fresh.txt", "fresh\n")
		to := f.capture()

		files, truncated, err := Changes(ctx, f.dir, from, to)
		require.NoError(t, err)
		require.False(t, truncated)
		require.Equal(t, []File{
			{Path: "dirty.txt", Status: StatusModified, Blob: f.git("hash-object", "dirty.txt")},
			{Path: "drop.txt", Status: StatusDeleted},
			{Path: "edit.txt", Status: StatusModified},
			{Path: "fresh.txt", Status: StatusUntracked, Blob: f.git("hash-object", "fresh.txt")},
			{Path: "moved ü.txt", Status: StatusRenamed, From: "move me.txt"},
			{Path: "scratch.txt", Status: StatusDeleted},
		}, files)
	})

	t.Run("SameDirtyIsNoChange", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		f.write("a.txt", "dirty\n")
		from := decoded(t, f.capture())
		files, truncated, err := Changes(ctx, f.dir, from, f.capture())
		require.NoError(t, err)
		require.False(t, truncated)
		require.Empty(t, files)
	})

	t.Run("Truncated", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		from := f.capture()
		for i := range MaxFiles + 1 {
			f.write(fmt.Sprintf("f%03d.txt", i), "x\n")
		}
		f.commit("many")
		files, truncated, err := Changes(ctx, f.dir, from, f.capture())
		require.NoError(t, err)
		require.True(t, truncated)
		require.Len(t, files, MaxFiles)
		require.Equal(t, "f000.txt", files[0].Path)
	})

	t.Run("RecordedListTruncated", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		for i := range MaxFiles + 1 {
			f.write(fmt.Sprintf("u%03d.txt", i), "x\n")
		}
		from := decoded(t, f.capture())
		require.True(t, from.DirtyTruncated)
		files, truncated, err := Changes(ctx, f.dir, from, f.capture())
		require.NoError(t, err)
		require.True(t, truncated, "the files past the recorded cut are unknown")
		require.Equal(t, []string{"u200.txt"}, paths(files))
	})

	t.Run("UnknownHead", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "a\n"})
		from := &State{Head: strings.Repeat("3", 40)}
		_, _, err := Changes(ctx, f.dir, from, f.capture())
		var u *Unverifiable
		require.ErrorAs(t, err, &u)
		require.True(t, strings.HasPrefix(u.Reason, "repo changes: git diff-tree: "), u.Reason)
	})

	t.Run("NotRepo", func(t *testing.T) {
		t.Parallel()
		_, _, err := Changes(ctx, t.TempDir(), &State{}, &State{})
		require.ErrorIs(t, err, ErrNotRepo)
	})
}

func TestChanges_Statuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		from, to string
		want     string
	}{
		{StatusModified, StatusModified, StatusModified},
		{StatusModified, StatusDeleted, StatusDeleted},
		{StatusDeleted, StatusUntracked, StatusAdded},
		{StatusUntracked, StatusConflicted, StatusConflicted},
		{StatusAdded, StatusModified, StatusModified},
	} {
		require.Equal(t, tc.want, dirtyBothStatus(tc.from, tc.to), "%s then %s", tc.from, tc.to)
	}
	for from, want := range map[string]string{
		StatusUntracked: StatusDeleted, StatusAdded: StatusDeleted, StatusRenamed: StatusDeleted,
		StatusDeleted: StatusAdded, StatusModified: StatusModified, StatusConflicted: StatusModified,
	} {
		require.Equal(t, want, dirtyGoneStatus(from), from)
	}
	for _, tc := range []struct {
		commit, dirty string
		want          string
	}{
		{StatusAdded, StatusModified, StatusAdded},
		{StatusRenamed, StatusModified, StatusRenamed},
		{StatusModified, StatusDeleted, StatusDeleted},
		{StatusDeleted, StatusUntracked, StatusModified},
		{StatusModified, StatusModified, StatusModified},
	} {
		byPath := map[string]File{"p": {Path: "p", Status: tc.commit}}
		merge(byPath, File{Path: "p", Status: tc.dirty, Blob: "b"}, true)
		require.Equal(t, File{Path: "p", Status: tc.want, Blob: "b"}, byPath["p"], "%s then %s", tc.commit, tc.dirty)
	}
}

func TestIsAncestor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newCommitted(t, map[string]string{"a.txt": "a\n"})
	first := f.git("rev-parse", "HEAD")
	f.write("a.txt", "b\n")
	second := f.commit("second")

	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{first, second, true},
		{second, first, false},
		{second, second, true},
		{first, "HEAD", true},
	} {
		got, err := IsAncestor(ctx, f.dir, tc.a, tc.b)
		require.NoError(t, err)
		require.Equal(t, tc.want, got, "%s %s", tc.a, tc.b)
	}

	t.Run("Unknown", func(t *testing.T) {
		t.Parallel()
		_, err := IsAncestor(ctx, f.dir, strings.Repeat("4", 40), second)
		var u *Unverifiable
		require.ErrorAs(t, err, &u)
		require.True(t, strings.HasPrefix(u.Reason, "repo is-ancestor: git merge-base: exit status 128: "), u.Reason)
	})

	t.Run("Invalid", func(t *testing.T) {
		t.Parallel()
		for _, bad := range []string{"", "--help"} {
			_, err := IsAncestor(ctx, f.dir, bad, second)
			var u *Unverifiable
			require.ErrorAs(t, err, &u)
		}
	})

	t.Run("NoGit", func(t *testing.T) {
		t.Parallel()
		_, err := missingGit(t).isAncestor(ctx, f.dir, first, second)
		require.ErrorIs(t, err, ErrNoGit)
	})

	t.Run("NotRepo", func(t *testing.T) {
		t.Parallel()
		_, err := IsAncestor(ctx, t.TempDir(), first, second)
		require.ErrorIs(t, err, ErrNotRepo)
	})
}
