package pgstore_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
)

// TestCache_NoFalseDivergence (issue #40, item 2): eight stores on one
// cache file, as eight processes of one checkout are (each its own
// SQLite connections and its own PostgreSQL pool), mix reads and writes:
// a reader that read the shared log's head just before another committed
// a write, to the shared log and then to the cache, must not take the
// cache for one the shared log does not continue. 0 VerifyFailed over
// 2,000 operations (20,000 with AWR_LONG=1). cmd/awr's
// TestShared_NoFalseDivergence runs the same with awr processes.
func TestCache_NoFalseDivergence(t *testing.T) {
	serverURL(t)
	t.Parallel()
	ctx := context.Background()
	dbURL := newDatabase(t)
	path := filepath.Join(t.TempDir(), "cache.db")
	const stores = 8
	ops := 2000
	if os.Getenv("AWR_LONG") == "1" {
		ops = 20000
	}
	sts := make([]*events.Store, stores)
	for i := range sts {
		sts[i] = cacheAt(t, dbURL, "p", path)
	}
	var mu sync.Mutex
	divergent, other := 0, []error{}
	var wg sync.WaitGroup
	for i, st := range sts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := i; n < ops; n += stores {
				var err error
				if n%3 == 0 {
					o := events.WriteOptions{Now: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC), Entropy: rand.New(rand.NewSource(int64(n))), Actor: "w"}
					_, err = cacheWrite(t, st, o, fmt.Sprintf("s%d", n))
				} else {
					err = st.Read(ctx, func(r *events.Reader) error { return nil })
				}
				if err != nil {
					mu.Lock()
					if fault.Is(err, fault.VerifyFailed) {
						divergent++
					}
					other = append(other, err)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d operations by %d stores on one cache: %d VerifyFailed, %d errors", ops, stores, divergent, len(other))
	require.Zero(t, divergent, "%v", other)
	require.Empty(t, other)
	h, err := sts[0].CatchUp(ctx)
	require.NoError(t, err)
	require.EqualValues(t, (ops+2)/3, h)
}
