package pgstore

import (
	"net"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// slowConn is a connection whose every write lasts until the answer was
// read: as pgx does when a write takes long (its background reader reads
// while the write is under way), Write reads through read before it
// returns.
type slowConn struct {
	net.Conn
	read func([]byte) (int, error)
}

func (c *slowConn) Write(b []byte) (int, error) {
	if _, err := c.read(make([]byte, 16)); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (c *slowConn) Read(b []byte) (int, error) { return copy(b, "answer"), nil }

// TestCountingConn_SlowWrite: a round trip whose answer is read while the
// write is still under way counts once, and a write answered after it
// returned counts once too.
func TestCountingConn_SlowWrite(t *testing.T) {
	var trips atomic.Int64
	slow := &slowConn{}
	c := &countingConn{Conn: slow, trips: &trips}
	slow.read = c.Read
	_, err := c.Write([]byte("query"))
	require.NoError(t, err)
	require.EqualValues(t, 1, trips.Load(), "the answer read during the write")

	// A fast write, its answer read after it.
	fast := &countingConn{Conn: &slowConn{read: func([]byte) (int, error) { return 0, nil }}, trips: &trips}
	_, err = fast.Write([]byte("query"))
	require.NoError(t, err)
	_, err = fast.Read(make([]byte, 16))
	require.NoError(t, err)
	require.EqualValues(t, 2, trips.Load())
	_, err = fast.Read(make([]byte, 16))
	require.NoError(t, err)
	require.EqualValues(t, 2, trips.Load(), "more of the same answer is the same round trip")
}

// earlyConn is a connection whose answer is read by a read that began
// before the write did (the driver's background reader, started while
// the write waited to run): Read waits for the write, then answers.
type earlyConn struct {
	net.Conn
	reading, written chan struct{}
}

func (c *earlyConn) Write(b []byte) (int, error) { close(c.written); return len(b), nil }

func (c *earlyConn) Read(b []byte) (int, error) {
	close(c.reading)
	<-c.written
	return copy(b, "answer"), nil
}

// TestCountingConn_ReadBeforeWrite: an answer read by a read that began
// before its write counts as that write's round trip.
func TestCountingConn_ReadBeforeWrite(t *testing.T) {
	var trips atomic.Int64
	conn := &earlyConn{reading: make(chan struct{}), written: make(chan struct{})}
	c := &countingConn{Conn: conn, trips: &trips}
	read := make(chan error)
	go func() { _, err := c.Read(make([]byte, 16)); read <- err }()
	<-conn.reading
	_, err := c.Write([]byte("query"))
	require.NoError(t, err)
	require.NoError(t, <-read)
	require.EqualValues(t, 1, trips.Load())
}
