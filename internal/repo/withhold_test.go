package repo_test

import (
	"strings"
	"testing"

	"github.com/awr-dev/awr/internal/repo"
	"github.com/stretchr/testify/require"
)

// A branch or a file named like a credential is recorded withheld; the
// rest of the state is unchanged, and the state given is left as it is.
func TestWithheld(t *testing.T) {
	t.Parallel()
	tok := "ghp_" + strings.Repeat("aB3", 12)
	st := &repo.State{Head: strings.Repeat("a", 40), Branch: tok, Dirty: true, DirtyFingerprint: "sha256:00",
		DirtyFiles: []repo.File{{Path: "ok.go", Status: repo.StatusModified, Blob: "b1"}, {Path: "notes/" + tok + ".txt", Status: repo.StatusRenamed, From: "AKIAABCDEFGHIJKLMNOP.txt", Blob: "b2"}}}
	got, n := repo.Withheld(st)
	require.Equal(t, 3, n)
	require.Equal(t, "[withheld: GitHub token]", got.Branch)
	require.Equal(t, "ok.go", got.DirtyFiles[0].Path)
	require.Equal(t, repo.File{Path: "[withheld: GitHub token]", Status: repo.StatusRenamed, From: "[withheld: AWS access key id]", Blob: "b2"}, got.DirtyFiles[1])
	require.Equal(t, st.Head, got.Head)
	require.Equal(t, st.DirtyFingerprint, got.DirtyFingerprint)
	require.Equal(t, tok, st.Branch, "the state given is unchanged")
	require.Equal(t, "notes/"+tok+".txt", st.DirtyFiles[1].Path)
	clean, n := repo.Withheld(&repo.State{Branch: "main", DirtyFiles: []repo.File{{Path: "a.go"}}})
	require.Zero(t, n)
	require.Equal(t, "main", clean.Branch)
}
