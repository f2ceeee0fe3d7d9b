package events_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
)

// TestMapped_FileCutUnderTheStore reads a checkpointed log through the
// file's mapping and cuts the file to a tenth in the middle of the read:
// the read touches pages no longer in the file and gets a Storage error
// (not a SIGBUS crash of the process), the store refuses every operation
// after it, and closing it returns.
func TestMapped_FileCutUnderTheStore(t *testing.T) {
	ctx := context.Background()
	st, path := openStore(t)
	rng := rand.New(rand.NewSource(7))
	for i := range 400 {
		_, err := appendSession(t, st, opts(rng), fmt.Sprintf("S-%03d", i))
		require.NoError(t, err)
	}
	require.NoError(t, st.Close()) // checkpoints the write-ahead log into the file

	st, err := events.Open(ctx, path, events.Options{})
	require.NoError(t, err)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	n := 0
	err = st.Scan(ctx, 1, 400, func(e *events.Event) error {
		if n++; n == 10 {
			return os.Truncate(path, fi.Size()/10)
		}
		return nil
	})
	require.Error(t, err, "a read of the cut pages succeeded (%d events)", n)
	require.Equal(t, fault.Storage, fault.CodeOf(err), "%v", err)
	require.Contains(t, err.Error(), "mapped pages")
	t.Logf("read across the cut: %v", err)
	_, err = appendSession(t, st, opts(rng), "S-after")
	require.Error(t, err)
	require.Equal(t, fault.Storage, fault.CodeOf(err), "%v", err)
	require.NotEmpty(t, fault.As(err).Hint)
	require.NoError(t, st.Close())
}
