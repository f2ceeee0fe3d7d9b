package events

import (
	"context"
	"crypto/rand"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A transaction that appends to more streams than its cache of stream
// versions holds (an import appends a whole log in one) keeps the cache
// bounded, and a stream that left it gets its next version from the
// table.
func TestTx_StreamVersionsBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := Open(ctx, filepath.Join(t.TempDir(), "awr.db"), Options{Create: true})
	require.NoError(t, err)
	defer st.Close()
	opts := WriteOptions{Now: time.Unix(1, 0), Entropy: rand.Reader, Actor: "tester"}
	_, err = st.Write(ctx, opts, func(tx *Tx) (any, error) {
		for i := range txVersionsMax + 10 {
			if _, err := tx.Append(NewEvent{Stream: fmt.Sprintf("seat/s%d@r", i), Payload: &SeatMessageSent{Address: fmt.Sprintf("s%d@r", i), Text: "hi"}}); err != nil {
				return nil, err
			}
			require.LessOrEqual(t, len(tx.versions), txVersionsMax)
		}
		e, err := tx.Append(NewEvent{Stream: "seat/s0@r", Payload: &SeatMessageSent{Address: "s0@r", Text: "again"}})
		if err != nil {
			return nil, err
		}
		require.Equal(t, int64(2), e.StreamVersion)
		return nil, nil
	})
	require.NoError(t, err)
}
