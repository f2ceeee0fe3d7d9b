//go:build linux

package storehold

import (
	"context"
	"net"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/awr-dev/awr/events/pgstore/pgtest"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// tcpFront serves the test server's Unix socket (the database at dbURL)
// on a loopback TCP port, as a server across a network, and returns a URL
// of the database through it.
func tcpFront(t *testing.T, dbURL string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	sock := filepath.Join(u.Query().Get("host"), ".s.PGSQL."+u.Query().Get("port"))
	addr := pgtest.Listen(t, func(c net.Conn) { pgtest.Relay(c, sock) })
	return "postgres://" + u.Query().Get("user") + "@" + addr + u.Path + "?sslmode=disable&connect_timeout=3"
}

// TestHolder_SilentLinkBound: a server connection the holder keeps over
// TCP gives up what the server does not acknowledge within the URL's
// connect timeout (TCP_USER_TIMEOUT), and probes the link while it is
// kept idle (keepalive after that long): a kept connection across a link
// that went silent fails its client as soon as a new connection would
// fail to start, instead of after TCP's retransmissions (about 15
// minutes). The connection works as any other.
func TestHolder_SilentLinkBound(t *testing.T) {
	t.Parallel()
	front := tcpFront(t, pgtest.NewDatabase(t))
	cfg, err := pgconn.ParseConfig(front)
	require.NoError(t, err)
	h := newHolder(cfg, Options{})
	ctx := context.Background()
	sc, err := h.dial(ctx)
	require.NoError(t, err)
	defer sc.Close()

	d, err := unackedOf(sc.Conn)
	require.NoError(t, err)
	require.Equal(t, 3*time.Second, d, "TCP_USER_TIMEOUT: the URL's connect_timeout")
	raw, err := sc.Conn.(*net.TCPConn).SyscallConn()
	require.NoError(t, err)
	var alive, idle int
	require.NoError(t, raw.Control(func(fd uintptr) {
		alive, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_KEEPALIVE)
		idle, _ = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_KEEPIDLE)
	}))
	require.Equal(t, 1, alive, "keepalive probes on a kept connection")
	require.Equal(t, 3, idle, "the first probe after the connect timeout idle (s)")

	// It is a started connection like any other: a query answers.
	require.True(t, open(sc.Conn))
	pc, err := pgconn.Construct(&pgconn.HijackedConn{Conn: sc.Conn, PID: sc.pid, SecretKey: sc.key, ParameterStatuses: sc.params, TxStatus: 'I', Config: cfg})
	require.NoError(t, err)
	res := pc.ExecParams(ctx, "SELECT 1", nil, nil, nil, nil).Read()
	require.NoError(t, res.Err)
	require.Equal(t, "1", string(res.Rows[0][0]))

	// Without a connect timeout in the URL: the holder's 10 s.
	cfg, err = pgconn.ParseConfig(front[:len(front)-len("&connect_timeout=3")])
	require.NoError(t, err)
	sc2, err := newHolder(cfg, Options{}).dial(ctx)
	require.NoError(t, err)
	defer sc2.Close()
	d, err = unackedOf(sc2.Conn)
	require.NoError(t, err)
	require.Equal(t, 10*time.Second, d)
}
