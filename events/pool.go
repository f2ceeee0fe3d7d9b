package events

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"zombiezen.com/go/sqlite"
)

// connPool is the store's set of connections to one database. It opens a
// connection only when a caller needs one and none is free, up to size:
// opening one costs a parse of the whole schema (80 tables, indexes and
// triggers), and most commands are one read on one connection, so an
// eager pool paid for a second connection nearly every process never
// used.
type connPool struct {
	uri     string
	flags   sqlite.OpenFlags
	prepare func(*sqlite.Conn) error
	// check, when set, runs before every connection after the first is
	// opened: a later connection opens the file by path, so a database
	// removed or replaced since the first would put it on another file.
	check func() error

	slots  chan struct{} // one token per connection that may be taken
	closed chan struct{}

	mu     sync.Mutex
	free   []*sqlite.Conn
	taken  map[*sqlite.Conn]context.CancelFunc
	opened int
	isShut bool
}

var errPoolClosed = errors.New("get sqlite connection: pool closed")

// newConnPool returns a pool of at most size connections to uri and opens
// the first one, so that a database that cannot be opened fails here, as
// an eager pool would.
func newConnPool(uri string, flags sqlite.OpenFlags, size int, prepare func(*sqlite.Conn) error) (*connPool, error) {
	if size < 1 {
		size = 1
	}
	p := &connPool{uri: uri, flags: flags, prepare: prepare,
		slots: make(chan struct{}, size), closed: make(chan struct{}), taken: map[*sqlite.Conn]context.CancelFunc{}}
	for range size {
		p.slots <- struct{}{}
	}
	conn, err := p.open()
	if err != nil {
		return nil, err
	}
	p.free = append(p.free, conn)
	return p, nil
}

func (p *connPool) open() (*sqlite.Conn, error) {
	p.mu.Lock()
	later := p.opened > 0
	p.mu.Unlock()
	if later && p.check != nil {
		if err := p.check(); err != nil {
			return nil, err
		}
	}
	conn, err := OpenConn(p.uri, p.flags)
	if err != nil {
		return nil, err
	}
	if p.prepare != nil {
		if err := p.prepare(conn); err != nil {
			conn.Close()
			return nil, fmt.Errorf("get sqlite connection: %w", err)
		}
	}
	p.mu.Lock()
	p.opened++
	p.mu.Unlock()
	return conn, nil
}

// Take returns a connection, opening one when none is free and fewer than
// size are open, or waits for one to be put back, until ctx ends or the
// pool closes. The connection's interrupt is tied to ctx until Put.
func (p *connPool) Take(ctx context.Context) (*sqlite.Conn, error) {
	select {
	case <-p.slots:
	case <-ctx.Done():
		return nil, fmt.Errorf("get sqlite connection: %w", ctx.Err())
	case <-p.closed:
		return nil, errPoolClosed
	}
	p.mu.Lock()
	if p.isShut {
		p.mu.Unlock()
		p.slots <- struct{}{}
		return nil, errPoolClosed
	}
	var conn *sqlite.Conn
	if n := len(p.free); n > 0 {
		conn, p.free = p.free[n-1], p.free[:n-1]
	}
	p.mu.Unlock()
	if conn == nil {
		var err error
		if conn, err = p.open(); err != nil {
			p.slots <- struct{}{}
			return nil, err
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	conn.SetInterrupt(cctx.Done())
	p.mu.Lock()
	if p.isShut {
		// Close ran while this connection was being opened or handed
		// over: it cannot see the connection, so close it here.
		p.mu.Unlock()
		conn.SetInterrupt(nil)
		cancel()
		conn.Close()
		p.slots <- struct{}{}
		return nil, errPoolClosed
	}
	p.taken[conn] = cancel
	p.mu.Unlock()
	return conn, nil
}

// Put returns a connection Take gave. Put(nil) is a no-op; a connection
// with a statement still running is a bug of the caller, and panics.
func (p *connPool) Put(conn *sqlite.Conn) {
	if conn == nil {
		return
	}
	if query := conn.CheckReset(); query != "" {
		panic(fmt.Sprintf("connection returned to pool has active statement: %q", query))
	}
	p.mu.Lock()
	cancel, ok := p.taken[conn]
	if !ok {
		p.mu.Unlock()
		panic("connPool.Put: connection not taken from this pool")
	}
	delete(p.taken, conn)
	conn.SetInterrupt(nil)
	cancel()
	shut := p.isShut
	if !shut {
		p.free = append(p.free, conn)
	}
	p.mu.Unlock()
	if shut {
		conn.Close()
	}
	p.slots <- struct{}{}
}

// Close interrupts the connections in use, closes the free ones, and waits
// for the others to be put back, closing each as it is.
func (p *connPool) Close() error {
	p.mu.Lock()
	if p.isShut {
		p.mu.Unlock()
		return nil
	}
	p.isShut = true
	close(p.closed)
	free := p.free
	p.free = nil
	for _, cancel := range p.taken {
		cancel()
	}
	size := cap(p.slots)
	p.mu.Unlock()
	var err error
	for _, c := range free {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	// Every slot comes back once the taken connections are put back.
	for range size {
		<-p.slots
	}
	return err
}

// Opened returns how many connections the pool has opened so far.
func (p *connPool) Opened() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.opened
}
