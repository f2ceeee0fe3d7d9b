package pgstore

import (
	"context"
	"net"
	"sync/atomic"
)

// Traffic is what a store has cost the network since it opened: the
// connections it made and the round trips it waited for.
type Traffic struct {
	// Connections is the number of connections dialled (each one costs
	// the server a backend and a few round trips of its own, counted in
	// RoundTrips).
	Connections int64 `json:"connections"`
	// RoundTrips is the number of times the store sent something and then
	// waited for the server's answer: a query with its answer is one, a
	// pipelined batch is one, a connection's start-up and authentication
	// are one or more.
	RoundTrips int64 `json:"round_trips"`
}

// Traffic returns the connections and round trips of the store so far,
// over every connection it made (the pool's and the listener's).
func (s *Store) Traffic() Traffic {
	return Traffic{Connections: s.traffic.conns.Load(), RoundTrips: s.traffic.trips.Load()}
}

// trafficCounter counts a store's connections and round trips.
type trafficCounter struct {
	conns atomic.Int64
	trips atomic.Int64
}

// dialer wraps dial so that every connection it makes counts its round
// trips into c.
func (c *trafficCounter) dialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		c.conns.Add(1)
		return &countingConn{Conn: conn, trips: &c.trips}, nil
	}
}

// countingConn is a connection that counts a round trip each time an
// answer comes after a write: the client sent, and waited for the
// server. (The driver writes a message, or a pipeline of them, before it
// reads.) A write is marked before it is made and the answer counted when
// it arrives, not when the read began: when a write is slow (a loaded
// machine), the driver reads in the background while it lasts, and that
// read may even begin before the write does; it still returns the answer
// to this write.
type countingConn struct {
	net.Conn
	trips *atomic.Int64
	wrote atomic.Bool
}

func (c *countingConn) Write(b []byte) (int, error) {
	if len(b) > 0 {
		c.wrote.Store(true)
	}
	return c.Conn.Write(b)
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && c.wrote.Swap(false) {
		c.trips.Add(1)
	}
	return n, err
}
