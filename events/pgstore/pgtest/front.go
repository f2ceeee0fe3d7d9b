package pgtest

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
)

// Listen accepts connections on a loopback TCP port until t ends, hands
// each to serve on a goroutine of its own, and returns the port's address
// (host:port): the front of a server the tests shape, one that refuses or
// one that relays.
func Listen(t testing.TB, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on loopback: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return ln.Addr().String()
}

// Refuse reads the startup message on c and answers it as a server that
// refuses the connection: an ErrorResponse, FATAL, with SQLSTATE code and
// message. It closes c.
func Refuse(c net.Conn, code, message string) {
	defer c.Close()
	var n [4]byte
	if _, err := io.ReadFull(c, n[:]); err != nil {
		return
	}
	io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(n[:]))-4)
	var body []byte
	for _, f := range [][2]string{{"S", "FATAL"}, {"V", "FATAL"}, {"C", code}, {"M", message}} {
		body = append(append(append(body, f[0]...), f[1]...), 0)
	}
	body = append(body, 0)
	msg := []byte{'E', 0, 0, 0, 0}
	binary.BigEndian.PutUint32(msg[1:], uint32(len(body)+4))
	c.Write(append(msg, body...))
}

// Relay pipes c to the server's Unix socket sock until either side ends,
// then closes both.
func Relay(c net.Conn, sock string) { RelayTo(c, "unix", sock) }

// RelayTo pipes c to the server at addr on network ("unix" or "tcp")
// until either side ends, then closes both.
func RelayTo(c net.Conn, network, addr string) {
	defer c.Close()
	s, err := net.Dial(network, addr)
	if err != nil {
		return
	}
	defer s.Close()
	ended := make(chan struct{}, 2)
	go func() { io.Copy(s, c); ended <- struct{}{} }()
	go func() { io.Copy(c, s); ended <- struct{}{} }()
	<-ended
}
