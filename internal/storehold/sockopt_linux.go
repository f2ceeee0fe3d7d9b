package storehold

import (
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// unacked bounds how long what the holder sent on c, a TCP connection to
// the server, may stay unacknowledged before the kernel gives the
// connection up (TCP_USER_TIMEOUT): a kept connection across a link that
// went silent (a partition, a server machine gone without a word) then
// fails its client within d, as a new connection would fail to start,
// instead of leaving it waiting until TCP's retransmissions give up
// (about 15 minutes with Linux's defaults). A connection on a Unix socket
// is left as it is.
func unacked(c net.Conn, d time.Duration) error {
	tc, ok := c.(*net.TCPConn)
	if !ok || d <= 0 {
		return nil
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(d/time.Millisecond))
	}); err != nil {
		return err
	}
	return serr
}

// unackedOf returns c's TCP_USER_TIMEOUT, for tests.
func unackedOf(c net.Conn) (time.Duration, error) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return 0, nil
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var ms int
	var serr error
	if err := raw.Control(func(fd uintptr) {
		ms, serr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT)
	}); err != nil {
		return 0, err
	}
	return time.Duration(ms) * time.Millisecond, serr
}
