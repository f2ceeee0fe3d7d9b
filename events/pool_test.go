package events

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
)

// TestConnPool_OpensOnDemand: a store opens one connection up front and a
// second only when two are in use at once; a Take beyond the size waits
// for a Put, and Close waits for every connection to come back.
func TestConnPool_OpensOnDemand(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "awr.db")
	st, err := Open(ctx, path, Options{Create: true})
	require.NoError(t, err)
	require.NoError(t, st.Read(ctx, func(r *Reader) error { return nil }))
	require.Equal(t, 1, st.pool.Opened(), "one read needs one connection")

	a, err := st.pool.Take(ctx)
	require.NoError(t, err)
	b, err := st.pool.Take(ctx)
	require.NoError(t, err)
	require.NotSame(t, a, b)
	require.Equal(t, 2, st.pool.Opened())

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = st.pool.Take(short)
	require.Error(t, err, "a third Take waits beyond a pool of two")

	got := make(chan *sqlite.Conn)
	go func() {
		c, _ := st.pool.Take(ctx)
		got <- c
	}()
	st.pool.Put(a)
	c := <-got
	require.Same(t, a, c, "the connection put back is reused, not a new one")
	require.Equal(t, 2, st.pool.Opened())

	closed := make(chan error)
	go func() { closed <- st.Close() }()
	select {
	case <-closed:
		t.Fatal("Close returned while connections were still taken")
	case <-time.After(50 * time.Millisecond):
	}
	st.pool.Put(b)
	st.pool.Put(c)
	require.NoError(t, <-closed)
	_, err = st.pool.Take(ctx)
	require.Error(t, err, "Take after Close")
}
