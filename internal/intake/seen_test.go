package intake

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/awr-dev/awr/internal/intake/source"
	"github.com/awr-dev/awr/internal/pathcheck"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// TestCompareSeen: on a checkout whose source file has another time than
// the one recorded where it was indexed (a teammate's machine, a fresh
// clone), the first check hashes it and keeps what it found, and the
// next trusts that as it trusts the recorded size and time; a file
// rewritten since is hashed again, a file changed within the racy window
// is hashed and not kept, and a broken cache is an empty one.
func TestCompareSeen(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, pathcheck.StateDir), 0o755))
	path := filepath.Join(dir, "tasks.md")
	content := []byte("- [ ] T-1 Do it\n")
	require.NoError(t, os.WriteFile(path, content, 0o644))
	ms := ManifestSource{Path: "tasks.md", Adapter: "markdown"}
	m := &Manifest{Sources: []ManifestSource{ms}}
	// As indexed on another machine: same content and size, another time.
	indexed := []projections.Source{{Path: "tasks.md", Adapter: "markdown", ContentHash: source.Hash(content), OptionsHash: OptionsHash(ms),
		Size: int64(len(content)), ModTimeMS: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()}}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	require.NoError(t, os.Chtimes(path, old, old))

	seen := LoadSeen(dir)
	require.Empty(t, seen.Sources)
	require.Equal(t, Fresh, CompareSeen(dir, m, indexed, seen)[0].Freshness)
	require.Equal(t, SeenSource{Size: int64(len(content)), ModTimeMS: old.UnixMilli(), ContentHash: source.Hash(content)}, seen.Sources["tasks.md"])
	require.NoError(t, seen.Save(dir))

	// The next check trusts what this checkout found: a file of the same
	// size and time is not read (here it was rewritten behind its time's
	// back, which only the cache can say Fresh of; without it, it is
	// hashed and Stale).
	require.NoError(t, os.WriteFile(path, []byte("- [x] T-1 Do it\n"), 0o644))
	require.NoError(t, os.Chtimes(path, old, old))
	require.Equal(t, Fresh, CompareSeen(dir, m, indexed, LoadSeen(dir))[0].Freshness)
	require.Equal(t, Stale, Compare(dir, m, indexed)[0].Freshness)

	// A new time: hashed again, Stale, nothing kept.
	later := old.Add(time.Minute)
	require.NoError(t, os.Chtimes(path, later, later))
	seen = LoadSeen(dir)
	require.Equal(t, Stale, CompareSeen(dir, m, indexed, seen)[0].Freshness)
	require.Equal(t, old.UnixMilli(), seen.Sources["tasks.md"].ModTimeMS)
	require.False(t, seen.changed)

	// The indexed content written just now: Fresh, but within the racy
	// window it is not kept.
	require.NoError(t, os.WriteFile(path, content, 0o644))
	require.Equal(t, Fresh, CompareSeen(dir, m, indexed, seen)[0].Freshness)
	require.False(t, seen.changed)

	// A broken cache file is an empty cache.
	require.NoError(t, os.WriteFile(filepath.Join(dir, pathcheck.StateDir, SeenFile), []byte("{not json"), 0o644))
	require.Empty(t, LoadSeen(dir).Sources)
}
