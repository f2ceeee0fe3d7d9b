package events

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/awr-dev/awr/events/internal/sqlmem"
	"github.com/awr-dev/awr/internal/fault"
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

// TestConnPool_LaterConnectionRefusesReplacedFile: the pool opens its
// second connection by path; once the database file was replaced by
// another, that connection would read and write a different file, so the
// pool refuses to open it (Storage) and keeps the first.
func TestConnPool_LaterConnectionRefusesReplacedFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "awr.db")
	st, err := Open(ctx, path, Options{Create: true})
	require.NoError(t, err)
	defer st.Close()
	other, err := Open(ctx, filepath.Join(dir, "other.db"), Options{Create: true})
	require.NoError(t, err)
	require.NoError(t, other.Close())
	require.NoError(t, os.Rename(filepath.Join(dir, "other.db"), path))

	a, err := st.pool.Take(ctx)
	require.NoError(t, err, "the connection already open stays usable")
	_, err = st.pool.Take(ctx)
	require.Error(t, err)
	require.True(t, fault.Is(err, fault.Storage), "%v", err)
	require.Contains(t, err.Error(), "removed or replaced while open")
	require.Equal(t, 1, st.pool.Opened(), "no connection was opened on the other file")
	st.pool.Put(a)
}

// TestConnPool_CloseWhileOpening: a Take that is opening a connection when
// Close runs gets errPoolClosed and closes that connection itself (Close
// cannot see it to interrupt it), and Close returns without a Put.
func TestConnPool_CloseWhileOpening(t *testing.T) {
	ctx := context.Background()
	path := createdLog(t)

	entered, release := make(chan struct{}), make(chan struct{})
	var opens int
	p, err := newConnPool(path, sqlite.OpenReadWrite|sqlite.OpenNoMutex, 2, func(*sqlite.Conn) error {
		opens++
		if opens == 2 {
			close(entered)
			<-release
		}
		return nil
	})
	require.NoError(t, err)
	hold, err := p.Take(ctx) // the one open connection: the next Take opens another
	require.NoError(t, err)

	took := make(chan error, 1)
	go func() {
		c, err := p.Take(ctx)
		if c != nil {
			p.Put(c)
		}
		took <- err
	}()
	<-entered
	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	require.Eventually(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.isShut
	}, time.Minute, time.Millisecond)
	close(release)
	require.ErrorIs(t, <-took, errPoolClosed)
	p.Put(hold)
	require.NoError(t, <-closed)
}

// TestStore_Leave: a store this process only read is left open for the
// exit to release (its pool is not shut); one it wrote to is closed, so
// that its close checkpoints the WAL and removes it as Close does.
func TestStore_Leave(t *testing.T) {
	ctx := context.Background()
	path := createdLog(t)

	reader, err := Open(ctx, path, Options{})
	require.NoError(t, err)
	require.NoError(t, reader.Read(ctx, func(r *Reader) error { return nil }))
	require.NoError(t, reader.Leave())
	reader.pool.mu.Lock()
	shut := reader.pool.isShut
	reader.pool.mu.Unlock()
	require.False(t, shut, "a store that only read is left to the exit")
	require.NoError(t, reader.pool.Close()) // what the exit would release

	writer, err := Open(ctx, path, Options{})
	require.NoError(t, err)
	_, err = writer.Append(ctx, WriteOptions{Now: time.Now(), Entropy: rand.New(rand.NewSource(1)), Actor: "tester"}, func(tx Appender) (any, error) {
		return tx.Append(NewEvent{Stream: "project", Payload: ProjectInitialized{ProjectID: "P", Name: "p"}})
	})
	require.NoError(t, err)
	require.NoError(t, writer.Leave())
	_, err = writer.pool.Take(ctx)
	require.ErrorIs(t, err, errPoolClosed, "a store that wrote is closed")
	_, err = os.Stat(path + "-wal")
	require.True(t, os.IsNotExist(err), "its close checkpointed and removed the WAL")
}

// TestOpen_InstallsAllocator: every connection awr opens goes through
// OpenConn, which puts sqlmem's allocator in place first, so in a process
// that only opens stores the way awr does it is always in place.
func TestOpen_InstallsAllocator(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, filepath.Join(t.TempDir(), "awr.db"), Options{Create: true})
	require.NoError(t, err)
	defer st.Close()
	require.True(t, sqlmem.Installed(), "the allocator is in front of SQLite's default one")
}

// createdLog creates a new log in t.TempDir() and closes it, returning its
// path.
func createdLog(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "awr.db")
	st, err := Open(context.Background(), path, Options{Create: true})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	return path
}
