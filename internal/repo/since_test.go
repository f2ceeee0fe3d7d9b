package repo

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// WorkSince is Changes without the files own claims, with a credential-like
// name withheld.
func TestWorkSince(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newCommitted(t, map[string]string{"work.go": "a\n", ".claude/settings.json": "{}\n"})
	from := f.capture()
	tok := "ghp_" + strings.Repeat("aB3", 12)
	f.write("work.go", "b\n")
	f.write(".claude/settings.json", "{\"hooks\":{}}\n")
	f.write(tok+".txt", "x\n")
	to := f.capture()

	own := func(path string) bool { return path == ".claude/settings.json" }
	files, truncated, err := WorkSince(ctx, f.dir, from, to, own)
	require.NoError(t, err)
	require.False(t, truncated)
	require.Equal(t, []string{"[withheld: GitHub token]", "work.go"}, paths(files))

	all, _, err := Changes(ctx, f.dir, from, to)
	require.NoError(t, err)
	require.Len(t, all, 3, "Changes itself keeps awr's file")
}
