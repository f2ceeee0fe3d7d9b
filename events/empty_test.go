package events_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
)

// TestOpen_EmptyFileIsDamaged: a zero-byte database is not an empty
// project. Opening it for a read fails with Storage and writes nothing
// (issue #13, row 5: before, status wrote a schema into it and verify
// passed).
func TestOpen_EmptyFileIsDamaged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := events.DBPath(dir)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	_, err := events.Open(context.Background(), path, events.Options{})
	requireStorage(t, err, "empty (0 bytes)")
	require.Contains(t, fault.As(err).Hint, "awr import")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Zero(t, fi.Size(), "a refused open writes no schema")
	_, err = os.Stat(path + "-wal")
	require.True(t, os.IsNotExist(err), "no write-ahead log was created")
}
