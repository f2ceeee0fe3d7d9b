package storehold

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// The codes of the messages a client starts with.
const (
	protocol30    = 196608
	sslRequest    = 80877103
	gssencRequest = 80877104
	cancelRequest = 80877102
)

// startupTimeout bounds a client's start-up and a connection's reset.
const startupTimeout = 10 * time.Second

// session serves one client: its start-up is answered as the server
// answered the holder's (authentication done, the server's parameters,
// the backend's key), and then its messages and the server's answers are
// relayed until it leaves; the server connection goes back to the pool
// when the client left it idle, and is closed otherwise.
func (h *holder) session(ctx context.Context, c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(startupTimeout))
	cr := bufio.NewReaderSize(c, 32<<10)
	params, ok := h.startup(cr, c)
	if !ok || !h.accepts(params) {
		return
	}
	sc, err := h.get(ctx)
	if err != nil {
		return // the client falls back to a direct connection
	}
	if _, err := c.Write(welcome(sc)); err != nil {
		h.put(sc)
		return
	}
	c.SetDeadline(time.Time{})
	defer h.returned()
	if h.relay(cr, c, sc) && reset(sc) {
		h.put(sc)
		return
	}
	sc.Close()
}

// startup reads the client's start-up message, answering the requests
// for TLS or GSS encryption with "no" (the socket is local) and
// forwarding a cancel request to the server; it returns the start-up's
// parameters, or false when the client asked for something else.
func (h *holder) startup(cr *bufio.Reader, c net.Conn) (map[string]string, bool) {
	for {
		var hdr [8]byte
		if _, err := io.ReadFull(cr, hdr[:]); err != nil {
			return nil, false
		}
		n := int(binary.BigEndian.Uint32(hdr[:4]))
		if n < 8 || n > 10000 {
			return nil, false
		}
		body := make([]byte, n-8)
		if _, err := io.ReadFull(cr, body); err != nil {
			return nil, false
		}
		switch binary.BigEndian.Uint32(hdr[4:]) {
		case sslRequest, gssencRequest:
			if _, err := c.Write([]byte{'N'}); err != nil {
				return nil, false
			}
		case cancelRequest:
			h.cancel(append(hdr[:], body...))
			return nil, false
		case protocol30:
			params := map[string]string{}
			for len(body) > 1 {
				k, rest, ok := cutZero(body)
				if !ok {
					return nil, false
				}
				v, rest, ok := cutZero(rest)
				if !ok {
					return nil, false
				}
				params[k] = v
				body = rest
			}
			return params, true
		default:
			return nil, false
		}
	}
}

func cutZero(b []byte) (string, []byte, bool) {
	for i, x := range b {
		if x == 0 {
			return string(b[:i]), b[i+1:], true
		}
	}
	return "", nil, false
}

// accepts reports whether a client's start-up asks for the user and
// database the holder connects as.
func (h *holder) accepts(params map[string]string) bool {
	want, got := h.database, params["database"]
	if want == "" {
		want = h.user
	}
	if got == "" {
		got = params["user"]
	}
	return params["user"] == h.user && got == want
}

// cancel forwards a cancel request (which names the backend and carries
// its key, as the holder gave them) to the server.
func (h *holder) cancel(msg []byte) {
	network, addr := pgconn.NetworkAddress(h.cfg.Host, h.cfg.Port)
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.Dial(network, addr)
	if err != nil {
		return
	}
	defer conn.Close()
	conn.Write(msg)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	io.Copy(io.Discard, conn) // the server closes it when done
}

// welcome is what the server said after authenticating the holder's
// connection, as the client's start-up's answer: AuthenticationOk, the
// server's parameters, the backend's key and ReadyForQuery (idle).
func welcome(sc *serverConn) []byte {
	var b []byte
	msg := func(t byte, body []byte) {
		b = append(b, t)
		b = binary.BigEndian.AppendUint32(b, uint32(4+len(body)))
		b = append(b, body...)
	}
	msg('R', []byte{0, 0, 0, 0})
	for k, v := range sc.params {
		msg('S', append(append(append([]byte(k), 0), v...), 0))
	}
	msg('K', append(binary.BigEndian.AppendUint32(nil, sc.pid), sc.key...))
	msg('Z', []byte{'I'})
	return b
}

// relayState is what the relay knows of the session: whether the server
// owes answers, and the transaction status of its last ReadyForQuery.
type relayState struct {
	mu sync.Mutex
	// pending counts the Query and Sync messages whose ReadyForQuery has
	// not come back.
	pending int
	// unsynced: the client sent an extended-protocol message after its
	// last Sync.
	unsynced bool
	status   byte
}

// errStopped is how the server side of a relay ends when the holder
// stops it between two messages.
var errStopped = errors.New("stopped")

// relay passes messages between the client (cr, c) and sc until the
// client leaves; it reports whether sc is left idle, between messages,
// with no transaction open and no answer owed: fit for another client.
func (h *holder) relay(cr *bufio.Reader, c net.Conn, sc *serverConn) bool {
	st := &relayState{status: 'I'}
	down := make(chan error, 1)
	go func() {
		err := toClient(sc, c, st)
		if !errors.Is(err, errStopped) {
			c.Close() // the client's side stops too
		}
		down <- err
	}()
	left := toServer(cr, sc, st)
	h.leaving()
	st.mu.Lock()
	idle := left && st.pending == 0 && !st.unsynced && st.status == 'I'
	st.mu.Unlock()
	if !idle {
		sc.Close()
		<-down
		return false
	}
	sc.SetReadDeadline(time.Now())
	err := <-down
	sc.SetReadDeadline(time.Time{})
	return errors.Is(err, errStopped)
}

// toClient copies the server's messages to the client, noting each
// ReadyForQuery, until either side fails, or the server's read deadline
// passes between two messages (errStopped).
func toClient(sc *serverConn, c net.Conn, st *relayState) error {
	r := bufio.NewReaderSize(sc, 32<<10)
	w := bufio.NewWriterSize(c, 32<<10)
	var hdr [5]byte
	for {
		if _, err := io.ReadFull(r, hdr[:1]); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return errStopped
			}
			return err
		}
		if _, err := io.ReadFull(r, hdr[1:]); err != nil {
			return err
		}
		n := int64(binary.BigEndian.Uint32(hdr[1:])) - 4
		if n < 0 {
			return errors.New("bad message from the server")
		}
		w.Write(hdr[:])
		if hdr[0] == 'Z' && n == 1 {
			status, err := r.ReadByte()
			if err != nil {
				return err
			}
			w.WriteByte(status)
			st.mu.Lock()
			st.pending--
			st.status = status
			st.mu.Unlock()
		} else if _, err := io.CopyN(w, r, n); err != nil {
			return err
		}
		if r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
}

// toServer copies the client's messages to the server until the client
// leaves; it reports whether it left between two messages (Terminate, or
// its socket closed), not in the middle of one.
func toServer(cr *bufio.Reader, sc *serverConn, st *relayState) bool {
	w := bufio.NewWriterSize(sc, 32<<10)
	var hdr [5]byte
	for {
		if _, err := io.ReadFull(cr, hdr[:1]); err != nil {
			return true
		}
		if _, err := io.ReadFull(cr, hdr[1:]); err != nil {
			return false
		}
		n := int64(binary.BigEndian.Uint32(hdr[1:])) - 4
		if n < 0 {
			return false
		}
		if hdr[0] == 'X' { // Terminate: the client leaves
			return true
		}
		st.mu.Lock()
		switch hdr[0] {
		case 'Q', 'S': // each is answered by one ReadyForQuery
			st.pending++
			st.unsynced = false
		default:
			st.unsynced = true
		}
		st.mu.Unlock()
		w.Write(hdr[:])
		if _, err := io.CopyN(w, cr, n); err != nil {
			return false
		}
		if cr.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return false
			}
		}
	}
}

// reset ends what a client's session left on sc (DISCARD ALL: settings,
// prepared statements, LISTENs, temporary tables) and reports whether sc
// answered, idle.
func reset(sc *serverConn) bool {
	sc.SetDeadline(time.Now().Add(startupTimeout))
	defer sc.SetDeadline(time.Time{})
	q := "DISCARD ALL"
	msg := append([]byte{'Q'}, binary.BigEndian.AppendUint32(nil, uint32(4+len(q)+1))...)
	msg = append(append(msg, q...), 0)
	if _, err := sc.Write(msg); err != nil {
		return false
	}
	r := bufio.NewReader(sc)
	var hdr [5]byte
	failed := false
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return false
		}
		n := int64(binary.BigEndian.Uint32(hdr[1:])) - 4
		if n < 0 {
			return false
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return false
		}
		switch hdr[0] {
		case 'E':
			failed = true
		case 'Z':
			return !failed && n == 1 && body[0] == 'I' && r.Buffered() == 0
		}
	}
}
