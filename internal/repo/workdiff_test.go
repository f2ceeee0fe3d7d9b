package repo

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWorkDiff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "one\ntwo\nthree\n", "b.txt": "bee\n", "c.txt": "sea\n"})
		// The checkpoint: a.txt edited, new.txt untracked; kept.
		f.write("a.txt", "one\nTWO\nthree\n")
		f.write("new.txt", "fresh\n")
		rec, err := CaptureKept(ctx, f.dir)
		require.NoError(t, err)
		recorded := decoded(t, rec)
		// After it: a.txt edited again, b.txt edited, c.txt committed by
		// someone else (not worktree work), new.txt unchanged.
		f.write("a.txt", "one\nTWO\nthree\nfour\n")
		f.write("b.txt", "bee\nwasp\n")
		f.write("c.txt", "ocean\n")
		f.git("commit", "-q", "-m", "colleague", "--", "c.txt")
		diffs, truncated, err := WorkDiff(ctx, f.dir, recorded, f.capture())
		require.NoError(t, err)
		require.False(t, truncated)
		require.Len(t, diffs, 2, "%+v", diffs)
		a, b := diffs[0], diffs[1]
		require.Equal(t, "a.txt", a.Path)
		require.Equal(t, rec.DirtyFiles[0].Blob, a.Base, "against the content the checkpoint kept")
		require.Equal(t, []string{"@@ -3,1 +3,2 @@", " three", "+four"}, a.Lines)
		require.Equal(t, 1, a.Added)
		require.Equal(t, "b.txt", b.Path)
		require.Equal(t, "HEAD:b.txt", b.Base)
		require.Equal(t, []string{"@@ -1,1 +1,2 @@", " bee", "+wasp"}, b.Lines)
	})
	t.Run("NotKept", func(t *testing.T) {
		t.Parallel()
		// A state captured without keeping its blobs: the recorded
		// content of a new file cannot be read back, and the diff says so.
		f := newCommitted(t, map[string]string{"a.txt": "one\n"})
		f.write("untracked.txt", "draft only in the worktree\n")
		recorded := decoded(t, f.capture())
		f.write("untracked.txt", "draft, rewritten\n")
		diffs, _, err := WorkDiff(ctx, f.dir, recorded, f.capture())
		require.NoError(t, err)
		require.Len(t, diffs, 1)
		require.Contains(t, diffs[0].Note, "the checkpoint did not keep it")
		// CaptureKept writes the object: now git has it.
		kept, err := CaptureKept(ctx, f.dir)
		require.NoError(t, err)
		out, err := exec.Command("git", "-C", f.dir, "cat-file", "-p", kept.DirtyFiles[0].Blob).Output()
		require.NoError(t, err)
		require.Equal(t, "draft, rewritten\n", string(out))
	})
	t.Run("Same", func(t *testing.T) {
		t.Parallel()
		// The recorded dirty content, committed as it was: nothing unrecorded.
		f := newCommitted(t, map[string]string{"a.txt": "one\n"})
		f.write("a.txt", "two\n")
		recorded := decoded(t, f.capture())
		f.commit("as recorded")
		diffs, _, err := WorkDiff(ctx, f.dir, recorded, f.capture())
		require.NoError(t, err)
		require.Empty(t, diffs)
	})
	t.Run("Secret", func(t *testing.T) {
		t.Parallel()
		f := newCommitted(t, map[string]string{"a.txt": "one\n"})
		recorded := decoded(t, f.capture())
		key := "AKIA" + strings.Repeat("Q", 16)
		f.write("a.txt", "one\naws_access_key_id = "+key+"\n")
		diffs, _, err := WorkDiff(ctx, f.dir, recorded, f.capture())
		require.NoError(t, err)
		require.Len(t, diffs, 1)
		require.NotContains(t, strings.Join(diffs[0].Lines, "\n"), key)
	})
}

func TestUnifiedDiff(t *testing.T) {
	t.Parallel()
	lines, added, removed, cut := unifiedDiff([]byte("a\nb\nc\nd\n"), []byte("a\nx\nc\nd\ny\n"), 100)
	require.Equal(t, []string{"@@ -1,4 +1,5 @@", " a", "-b", "+x", " c", " d", "+y"}, lines)
	require.Equal(t, 2, added)
	require.Equal(t, 1, removed)
	require.False(t, cut)
	_, _, _, cut = unifiedDiff(nil, []byte(strings.Repeat("l\n", 50)), 10)
	require.True(t, cut)
}

func TestWorkDiff_StatusOnly(t *testing.T) {
	t.Parallel()
	// A commit undone with reset --soft: the file is staged now, with the
	// content the recorded head had. No work was done on it.
	f := newCommitted(t, map[string]string{"a.txt": "one\n"})
	f.write("b.txt", "bee\n")
	f.commit("b")
	recorded := decoded(t, f.capture())
	f.git("reset", "-q", "--soft", "HEAD~1")
	diffs, _, err := WorkDiff(context.Background(), f.dir, recorded, f.capture())
	require.NoError(t, err)
	require.Empty(t, diffs)
}
