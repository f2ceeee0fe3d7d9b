package storehold

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Idle is how long a holder waits without a client before it closes its
// connections and exits.
const Idle = 5 * time.Minute

// spares is how many started server connections the holder keeps ready
// beyond those its clients hold, and maxIdle how many it keeps at most.
const (
	spares  = 1
	maxIdle = 4
)

// Options configures Serve.
type Options struct {
	// Idle is how long to wait without a client before exiting (the
	// package's Idle when zero).
	Idle time.Duration
	// ConnectTimeout bounds each connection to the server when the URL
	// sets none (10 s when zero).
	ConnectTimeout time.Duration
}

// Serve runs the holder of the store at url in dir until it has had no
// client for opts.Idle or ctx ends: it makes dir (the user's alone),
// takes its lock (a holder serving dir already makes Serve return nil at
// once), connects to the server once (an error then is returned, and
// nothing listens), and then answers on dir's socket. Errors: the URL
// does not parse; dir is not the user's alone; the first connection
// fails; the socket cannot be made.
func Serve(ctx context.Context, url, dir string, opts Options) error {
	if opts.Idle <= 0 {
		opts.Idle = Idle
	}
	cfg, err := pgconn.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("hold store: the URL does not parse: %w", err)
	}
	if err := ownDir(filepath.Dir(dir), true); err != nil {
		return err
	}
	if err := ownDir(dir, true); err != nil {
		return err
	}
	unlock, ok, err := lockDir(dir)
	if err != nil || !ok {
		return err
	}
	defer unlock()
	// The pid, for a person who wants the holder gone now: kill $(cat DIR/pid).
	os.WriteFile(filepath.Join(dir, "pid"), []byte(fmt.Sprintf("%d\n", os.Getpid())), 0o600)
	h := newHolder(cfg, opts)
	first, err := h.dial(ctx)
	if err != nil {
		return fmt.Errorf("hold store: %w", err)
	}
	h.put(first)
	sock := Socket(dir)
	os.Remove(sock)
	l, err := net.Listen("unix", sock)
	if err != nil {
		h.closeAll()
		return fmt.Errorf("hold store: %w", err)
	}
	os.Chmod(sock, 0o600)
	defer func() {
		l.Close()
		os.Remove(sock)
		h.closeAll()
	}()
	go h.idleWatch(ctx, l, opts.Idle)
	for {
		c, err := l.Accept()
		if err != nil {
			select {
			case <-h.done:
				return nil
			case <-ctx.Done():
				return nil
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return nil
		}
		uc := c.(*net.UnixConn)
		if !samePeer(uc) {
			c.Close()
			continue
		}
		h.begin()
		go func() {
			defer h.end()
			h.session(ctx, uc)
		}()
	}
}

// ownDir makes dir (mode 0700) when missing and make is set, and checks
// that it is a directory of this user's that no one else may enter.
func ownDir(dir string, make bool) error {
	if make {
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("hold store: %w", err)
		}
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("hold store: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 || !ok || int(st.Uid) != os.Getuid() {
		return fmt.Errorf("hold store: %s is not a directory of this user's alone (mode 0700)", dir)
	}
	return nil
}

// lockDir takes dir's lock, held while this holder lives: false when
// another holder holds it.
func lockDir(dir string) (func(), bool, error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("hold store: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("hold store: lock %s: %w", dir, err)
	}
	return func() { f.Close() }, true, nil
}

// holder is a running holder: its pool of server connections and its
// count of clients.
type holder struct {
	cfg            *pgconn.Config
	user, database string

	mu      sync.Mutex
	idle    []*serverConn
	dialing int
	clients int
	// returning counts the server connections whose client has left and
	// that are on their way back to idle (or to being closed).
	returning int
	last      time.Time // when the last client left
	done      chan struct{}
	closed    bool
}

// newHolder makes the holder of the server cfg names: its connections
// start within the URL's connect_timeout (opts.ConnectTimeout, else 10 s,
// when it sets none), and a link that goes silent under one of them ends
// it within that time too (silentLinkBound).
func newHolder(cfg *pgconn.Config, opts Options) *holder {
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = opts.ConnectTimeout
		if cfg.ConnectTimeout == 0 {
			cfg.ConnectTimeout = 10 * time.Second
		}
	}
	cfg.DialFunc = silentLinkBound(cfg.ConnectTimeout)
	return &holder{cfg: cfg, user: cfg.User, database: cfg.Database, done: make(chan struct{})}
}

func (h *holder) begin() {
	h.mu.Lock()
	h.clients++
	h.mu.Unlock()
}

func (h *holder) end() {
	h.mu.Lock()
	h.clients--
	h.last = time.Now()
	h.mu.Unlock()
}

// idleWatch closes l once the holder has had no client for idle.
func (h *holder) idleWatch(ctx context.Context, l net.Listener, idle time.Duration) {
	h.mu.Lock()
	h.last = time.Now()
	h.mu.Unlock()
	tick := time.NewTicker(min(idle/4, 5*time.Second))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
		case <-tick.C:
			h.mu.Lock()
			quiet := h.clients == 0 && time.Since(h.last) >= idle
			h.mu.Unlock()
			if !quiet {
				continue
			}
		}
		close(h.done)
		l.Close()
		return
	}
}

// serverConn is a started, authenticated connection to the server, idle
// between clients.
type serverConn struct {
	net.Conn
	pid    uint32
	key    []byte
	params map[string]string
}

// dial starts a new server connection.
func (h *holder) dial(ctx context.Context) (*serverConn, error) {
	pc, err := pgconn.ConnectConfig(ctx, h.cfg)
	if err != nil {
		return nil, err
	}
	hj, err := pc.Hijack()
	if err != nil {
		pc.Close(ctx)
		return nil, err
	}
	return &serverConn{Conn: hj.Conn, pid: hj.PID, key: hj.SecretKey, params: hj.ParameterStatuses}, nil
}

// silentLinkBound returns the dialer of the holder's server connections:
// a kept connection whose link goes silent must fail within d, the time
// a new connection may take to start, since a command that connected
// itself would have failed that soon. What is sent and not acknowledged
// for d ends the connection (unacked), and so do keepalive probes that go
// unanswered on a connection kept idle (one after d idle, then every
// second, three), which the next client is then not handed.
func silentLinkBound(d time.Duration) pgconn.DialFunc {
	dialer := &net.Dialer{KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: d, Interval: time.Second, Count: 3}}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if err := unacked(c, d); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}
}

// leaving notes that a session's client has left (its connection is
// being reset); returned, that the session is over.
func (h *holder) leaving() {
	h.mu.Lock()
	h.returning++
	h.mu.Unlock()
}

func (h *holder) returned() {
	h.mu.Lock()
	if h.returning > 0 {
		h.returning--
	}
	h.mu.Unlock()
}

// returnWait is how long a client waits for a connection on its way back
// (a reset is one local round trip) before one is started for it (a new
// backend, tens of milliseconds).
const returnWait = 5 * time.Millisecond

// get returns an idle server connection that is still open, or a new
// one, and starts a spare in the background when none is left.
func (h *holder) get(ctx context.Context) (*serverConn, error) {
	for wait := time.Now().Add(returnWait); ; time.Sleep(100 * time.Microsecond) {
		h.mu.Lock()
		coming := len(h.idle) == 0 && h.returning > 0
		h.mu.Unlock()
		if !coming || time.Now().After(wait) {
			break
		}
	}
	h.mu.Lock()
	for len(h.idle) > 0 {
		sc := h.idle[len(h.idle)-1]
		h.idle = h.idle[:len(h.idle)-1]
		h.mu.Unlock()
		if open(sc.Conn) {
			h.spare()
			return sc, nil
		}
		sc.Close()
		h.mu.Lock()
	}
	h.mu.Unlock()
	sc, err := h.dial(ctx)
	if err == nil {
		h.spare()
	}
	return sc, err
}

// spare starts a server connection in the background when fewer than
// spares are idle or being started.
func (h *holder) spare() {
	h.mu.Lock()
	if h.closed || len(h.idle)+h.dialing >= spares {
		h.mu.Unlock()
		return
	}
	h.dialing++
	h.mu.Unlock()
	go func() {
		sc, err := h.dial(context.Background())
		h.mu.Lock()
		h.dialing--
		h.mu.Unlock()
		if err == nil {
			h.put(sc)
		}
	}()
}

// put keeps sc for the next client (closing it when enough are kept).
func (h *holder) put(sc *serverConn) {
	h.mu.Lock()
	if h.closed || len(h.idle) >= maxIdle {
		h.mu.Unlock()
		sc.Close()
		return
	}
	h.idle = append(h.idle, sc)
	h.mu.Unlock()
}

func (h *holder) closeAll() {
	h.mu.Lock()
	h.closed = true
	idle := h.idle
	h.idle = nil
	h.mu.Unlock()
	for _, sc := range idle {
		sc.Close()
	}
}

// open reports whether the server has neither closed c nor sent anything
// on it while it was idle (a server ends a connection with an error
// message first): a look at the socket, no round trip.
func open(c net.Conn) bool {
	if nc, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = nc.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := false
	var buf [1]byte
	raw.Read(func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		alive = errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK)
		return true
	})
	return alive
}
